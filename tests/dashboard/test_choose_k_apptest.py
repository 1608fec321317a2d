"""Choose k through Streamlit's AppTest: the chart opens on the k range where the choice is, every k is one toggle
away, a click's selection event sets k, and the cost inputs show the defaults they apply."""

from __future__ import annotations

import json

from tests.dashboard.apptest_helpers import app, charts, no_exceptions, texts


def _k_domain(at) -> list[float]:
    spec = json.loads(charts(at)[0].proto.spec)
    return spec["vconcat"][0]["layer"][0]["encoding"]["x"]["scale"]["domain"]


def test_inputs_show_the_defaults_they_apply() -> None:
    at = app("views/choose_k.py")
    assert at.number_input(key="choose_k.price").value == 1.00
    assert at.number_input(key="choose_k.lam").value == 10.0
    assert at.number_input(key="choose_k.rpm").value is None  # not set: no monthly figure
    assert at.number_input(key="choose_k.overhead").value == 0
    assert "placeholder: set your LLM's price below" in texts(at)  # shown as 1.00, still a placeholder
    at.number_input(key="choose_k.price").set_value(3.0).run()
    no_exceptions(at)
    assert at.query_params["price"] == "3.0" and "placeholder" not in texts(at)


def test_the_k_axis_opens_where_the_choice_is_and_every_k_is_a_toggle_away() -> None:
    at = app("views/choose_k.py")
    # The sample's largest recommended k or elbow is 14: the axis opens on 1..28.
    assert _k_domain(at) == [0.5, 28.5]
    assert "**Recommended k**: base 10 · tuned 8 · tuned-256d 9" in texts(at)
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
    assert len(pick["views"]) == 2  # a click in either panel


def test_picked_k_reads_the_selection_event() -> None:
    from dashboard.page_models.choose_k import picked_k

    assert picked_k({"selection": {"pick_k": [{"k": 12}]}}) == 12
    assert picked_k({"selection": {"pick_k": [{"k": 12.0}]}}) == 12
    assert picked_k({"selection": {"pick_k": []}}) is None
    assert picked_k(None) is None and picked_k({"selection": {}}) is None
