"""The Choose k page's model called directly: the k to take the page opens on, recall@k and its interval at the k
shown, the rule; the same as the core's k budget (``evalcore budget``) computed here again."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from evalcore.analyses.budget import k_budget
from evalcore.analyses.decision import Decision
from evalcore.analyses.k_decision import k_decision
from evalcore.analyses.k_settings import BudgetSettings
from evalcore.report.amounts import format_interval
from evalcore.report.choose_k import choose_k_headline

from dashboard import k_charts, loading
from dashboard.page_models import choose_k

RUNS = ("base", "tuned", "tuned-256d")


def core_budget(dataset, settings: BudgetSettings = BudgetSettings()):
    """`evalcore.analyses.budget.k_budget` on the scored evaluation, every k the page can show."""
    evaluation = loading.evaluation(dataset).value
    docs = loading.documents(dataset.documents).value if dataset.documents is not None else None
    return k_budget(evaluation, docs=docs, settings=replace(settings, max_k=loading.DEPTH))


def test_the_page_opens_on_the_first_runs_k_to_take(sample):
    said = choose_k.headline(sample, BudgetSettings(), RUNS)
    core = core_budget(sample)
    assert said.k == k_decision(core["base"]).k == core["base"].recommended_k == 9
    assert said.text == choose_k_headline(Decision(loading.evaluation(sample).value, budget=core, runs=RUNS))
    assert said.text.startswith("Recall flattens at k = 9 for base")


def test_the_numbers_at_k_are_the_budget_tables_row(sample):
    core = core_budget(sample)
    shown = choose_k.at_k(sample, BudgetSettings(), RUNS, 5, False, 224, "labels:tune#x", "tokens")
    widest = max(core[r].recommended_k for r in RUNS)
    assert shown.k == 5 and shown.window == min(loading.DEPTH, max(choose_k.WINDOW_MIN, 2 * widest))
    for line, row in zip(shown.lines, shown.table.to_dict("records")):
        expected = core[line["run"]].row(5)
        assert line["recall"] == pytest.approx(expected["recall"]) == row["recall@5"]
        assert line["interval"] == format_interval(expected["recall_ci_low"], expected["recall_ci_high"])
        assert row["recall@5 95% CI"] == line["interval"]
        assert row["k to take"] == core[line["run"]].recommended_k
        assert row["n"] == 224
    assert shown.lines[0]["cost"].endswith("per 1,000 requests")  # no requests a month: no monthly cost


def test_a_k_beyond_the_opening_window_opens_every_k(sample):
    shown = choose_k.at_k(sample, BudgetSettings(), RUNS, 90, False, 224, "ref", "tokens")
    assert shown.window < 90 and shown.k_max == loading.DEPTH
    spec = json.dumps(choose_k.chart(sample, BudgetSettings(), RUNS, shown.context, "tokens", shown.k_max))
    assert f'"domain": [0.5, {loading.DEPTH + 0.5}]' in spec  # the k axis runs to k = 100


def test_a_price_and_a_recall_points_worth_make_it_a_trade_off(sample):
    asked = {"price": "3", "rpm": "100000", "vpp": "50"}
    settings = choose_k.settings_from(asked.get, choose_k.can_size_chunks(sample))
    assert (settings.price_per_mtok, settings.requests_per_month, settings.value_per_point) == (3.0, 100000.0, 50.0)
    core = core_budget(sample, settings)
    said = choose_k.headline(sample, settings, RUNS)
    assert said.k == k_decision(core["base"]).k
    assert core["base"].basis != "elbow"
    shown = choose_k.at_k(sample, settings, RUNS, said.k, False, 224, "ref", "month")
    assert shown.lines[0]["cost"].endswith("per month")


def test_settings_a_person_cannot_mean_fall_back_to_the_defaults():
    read = {"price": "-2", "rpm": "many", "vpp": "40", "overhead": "120"}.get
    settings = choose_k.settings_from(read, True)
    assert settings.price_per_mtok is None and settings.requests_per_month is None
    assert settings.value_per_point is None  # a point's worth needs the requests a month
    assert settings.overhead_tokens == 120
    assert choose_k.spend_shown("month", settings) == "tokens"
    assert choose_k.picked_k({"selection": {k_charts.PICK: [{"k": 7.0}]}}) == 7
    assert choose_k.picked_k(None) is None


@pytest.mark.parametrize("k", [2, 40])
def test_k_larger_than_the_lists_keeps_their_recall(make_dataset, k):
    relevant = {f"q{i}": [f"d{i}"] for i in range(1, 7)}
    ranked = {q: (["x", docs[0]] if int(q[1:]) % 2 else ["x", "y"]) for q, docs in relevant.items()}
    dataset = make_dataset(relevant, {"short": ranked})
    shown = choose_k.at_k(dataset, BudgetSettings(), ("short",), k, False, 6, "ref", "tokens")
    assert shown.lines[0]["recall"] == pytest.approx(0.5)
    assert shown.table.iloc[0][f"recall@{k}"] == pytest.approx(core_budget(dataset)["short"].row(k)["recall"])


def test_a_run_that_finds_nothing_has_nothing_to_add(make_dataset):
    relevant = {f"q{i}": [f"d{i}"] for i in range(1, 6)}
    dataset = make_dataset(relevant, {"finds": relevant, "nothing": {q: ["x1", "x2", "x3"] for q in relevant}})
    shown = choose_k.at_k(dataset, BudgetSettings(), ("finds", "nothing"), 3, False, 5, "ref", "tokens")
    nothing = next(line for line in shown.lines if line["run"] == "nothing")
    assert nothing["recall"] == 0 and nothing["added"] == 0
    assert nothing["interval"].startswith("0.000 – ")
