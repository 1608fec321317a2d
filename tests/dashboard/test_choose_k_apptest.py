"""Choose k through Streamlit's AppTest: the chart opens on the k range where the choice is, every k is one toggle
away, a click's selection event sets k, and the cost inputs show the defaults they apply."""

from __future__ import annotations

import json

from tests.dashboard.apptest_helpers import app, charts, no_exceptions, texts


def _k_domain(at) -> list[float]:
    spec = json.loads(charts(at)[0].proto.spec)
    return spec["vconcat"][0]["layer"][0]["encoding"]["x"]["scale"]["domain"]


def test_nothing_is_decided_on_numbers_nobody_set() -> None:
    at = app("views/choose_k.py")
    for name in ("price", "rpm", "vpp", "lam"):  # shown as not set, never as a made-up value
        assert at.number_input(key=f"choose_k.{name}").value is None, name
    assert at.number_input(key="choose_k.overhead").value == 0
    text = texts(at)
    assert "Recall flattens at k = 9 for base" in text and "Say what a recall point is worth" in text
    assert "a placeholder until you set your LLM's price" in text
    at.number_input(key="choose_k.price").set_value(3.0).run()
    at.number_input(key="choose_k.rpm").set_value(1_000_000).run()
    at.number_input(key="choose_k.vpp").set_value(500.0).run()
    no_exceptions(at)
    assert (at.query_params["price"], at.query_params["rpm"], at.query_params["vpp"]) == ("3.0", "1000000", "500.0")
    text = texts(at)
    assert "With your numbers, k = " in text and "per 1,000 requests or $" in text and "placeholder" not in text


def test_the_page_opens_on_the_k_to_take_and_follows_it_until_a_k_is_picked() -> None:
    import re

    at = app("views/choose_k.py")
    # No k asked for: the k control, the "At k" lines and the URL say base's k to take (its elbow, 9), as the headline.
    assert at.number_input(key="choose_k.k").value == 9 and "At k = 9" in texts(at) and at.query_params["k"] == "9"
    at.number_input(key="choose_k.price").set_value(3.0).run()
    at.number_input(key="choose_k.rpm").set_value(1_000_000).run()
    at.number_input(key="choose_k.vpp").set_value(500.0).run()
    no_exceptions(at)
    decided = int(re.search(r"With your numbers, k = (\d+) for base", texts(at)).group(1))
    assert decided != 9 and at.number_input(key="choose_k.k").value == decided and f"At k = {decided}" in texts(at)
    at.number_input(key="choose_k.k").set_value(12).run()  # a k the person picks stays, whatever the price
    at.number_input(key="choose_k.vpp").set_value(50.0).run()
    no_exceptions(at)
    assert at.number_input(key="choose_k.k").value == 12 and "At k = 12" in texts(at)


def test_the_k_axis_opens_where_the_choice_is_and_every_k_is_a_toggle_away() -> None:
    at = app("views/choose_k.py")
    # The sample's largest recommended k or elbow is 14 (tuned's elbow): the axis opens on 1..28.
    assert _k_domain(at) == [0.5, 28.5]
    spec = json.loads(charts(at)[0].proto.spec)
    assert "The k to take (diamond: the trade-off; ring: the elbow):   base: elbow k = 9   tuned: elbow k = 14   " \
           "tuned-256d: elbow k = 12" in spec["vconcat"][0]["title"]["subtitle"][0]
    at.toggle(key="choose_k.every").set_value(True).run()
    no_exceptions(at)
    assert _k_domain(at) == [0.5, 100.5] and at.query_params["every"] == "1"
    at.toggle(key="choose_k.every").set_value(False).run()
    assert _k_domain(at) == [0.5, 28.5] and "every" not in at.query_params


def test_a_k_beyond_the_range_shows_every_k() -> None:
    at = app("views/choose_k.py", k="60")
    assert _k_domain(at) == [0.5, 100.5]
    assert "k = 60 is beyond the range the chart opens on" in texts(at)


def test_the_chart_selects_k_with_a_click() -> None:
    at = app("views/choose_k.py")
    chart = charts(at)[0]
    assert list(chart.proto.selection_mode) == ["pick_k"]
    spec = json.loads(chart.proto.spec)
    pick = next(p for p in spec["params"] if p["name"] == "pick_k")
    assert pick["select"] == {"type": "point", "fields": ["k"], "on": "click", "clear": False, "toggle": False}
    panels = [[layer.get("name") for layer in panel["layer"]] for panel in spec["vconcat"]]
    assert all(set(pick["views"]) & set(names) for names in panels)  # a click in either panel


def test_picked_k_reads_the_selection_event() -> None:
    from dashboard.page_models.choose_k import picked_k

    assert picked_k({"selection": {"pick_k": [{"k": 12}]}}) == 12
    assert picked_k({"selection": {"pick_k": [{"k": 12.0}]}}) == 12
    assert picked_k({"selection": {"pick_k": []}}) is None
    assert picked_k(None) is None and picked_k({"selection": {}}) is None


def test_the_lower_panel_choice_shows_only_where_the_chart_has_a_lower_panel() -> None:
    at = app("views/choose_k.py")
    assert [r.label for r in at.radio] == ["Lower panel"]
    tokens = app("views/choose_k.py", axis="tokens")
    no_exceptions(tokens)
    assert "Lower panel" not in [r.label for r in tokens.radio]
    assert "At about 800 prompt tokens, tuned with k = 8 finds 86% of the relevant documents" in texts(tokens)
