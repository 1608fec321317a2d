"""One decision behind every page: the dashboard builds one `evalcore.analyses.decision.Decision` per data set, runs
shown and k settings, and the Overview's headline and table, Choose k's headline, marks and tables, and the Failures
page's headline and list all say its numbers; so do ``evalcore evaluate``, ``budget`` and ``report`` on the same
files."""

from __future__ import annotations

import json

import pytest

from evalcore.analyses.k_settings import BudgetSettings
from evalcore.metrics.failure import FAILURE_MODE
from evalcore.report.headlines import best_run_line, failures_headline

from cli_runner import run_cli
from dashboard import caching, loading
from dashboard.page_models import choose_k, failures, overview

RUNS = ("base", "tuned", "tuned-256d")
PRICED = BudgetSettings(price_per_mtok=3, requests_per_month=100_000, value_per_point=20)


def sample_files(docs: bool = True) -> list[str]:
    folder = loading.SAMPLE_DIR
    return ["--labels", str(folder / "labels.tsv"), *(a for n in RUNS for a in ("--run", str(folder / f"{n}.trec"))),
            *(["--docs", str(folder / "docs.jsonl")] if docs else [])]


def cli_json(*args: str) -> dict:
    done = run_cli(*args, "--format", "json")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_one_decision_is_shared_by_every_page(sample):
    decision = caching.decision(sample, RUNS)
    assert caching.decision(sample, RUNS, BudgetSettings()) is decision
    assert caching.decision(sample, RUNS, PRICED) is not decision  # other settings: another decision
    assert caching.decision(sample, RUNS[:2]).runs == RUNS[:2]


def test_the_overview_says_the_decisions_best_run_and_its_numbers(sample):
    decision = caching.decision(sample, RUNS)
    said = overview.headline(sample, RUNS)
    assert said.best == best_run_line(decision.best)
    shown = overview.overview(sample, 10, RUNS, more=False)
    assert dict(zip(shown.table["run"], shown.table["hit@1"])) == {r: decision.best.means[r].point for r in RUNS}
    assert failures.ranked_runs(sample, RUNS)[0] == decision.best.best == "tuned"


@pytest.mark.parametrize("settings", [BudgetSettings(), PRICED], ids=["the elbow", "the trade-off"])
def test_choose_k_says_the_decisions_k_everywhere_on_the_page(sample, settings):
    decision = caching.decision(sample, RUNS, settings)
    taken = {r: decision.k_to_take(r) for r in RUNS}
    assert choose_k.headline(sample, settings, RUNS).k == taken["base"].k
    at = choose_k.at_k(sample, settings, RUNS, 10, False, 224, "ref")
    assert dict(zip(at.table["run"], at.table["k to take"])) == {r: d.k for r, d in taken.items()}
    assert set(at.table["rule"]) == {taken["base"].basis}
    chart = choose_k.chart(sample, settings, RUNS, at.context, "tokens", at.k_max)
    marks = [row for data in chart["datasets"].values() for row in data if "kind" in row]
    assert {m["run"]: m["k"] for m in marks} == {r: d.k for r, d in taken.items()}
    lines = choose_k.recommendation(sample, settings, RUNS, 224, "ref").runs
    assert all(f"k = {taken[name].k}" in sentence for name, _, sentence in lines)


def test_the_failures_page_counts_the_decisions_failures(sample):
    decision = caching.decision(sample, RUNS)
    counted = decision.failures_at(10)
    assert counted.mode == FAILURE_MODE
    assert failures.headline(sample, 10, FAILURE_MODE, RUNS) == failures_headline(counted)
    listed = failures.missed_at_k(sample, 10, FAILURE_MODE, RUNS, (), "", "worst").table.per_run()
    assert listed == {r.run: r.failed for r in counted.runs}


def test_the_cli_says_what_the_pages_say(sample):
    decision = caching.decision(sample, RUNS)
    evaluated = cli_json("evaluate", *sample_files(docs=False), "--k", "10")
    assert evaluated["headline"].startswith(best_run_line(decision.best))
    budget = cli_json("budget", *sample_files())
    assert {r["name"]: r["recommended_k"] for r in budget["runs"]} == {r: decision.k_to_take(r).k for r in RUNS}
    report = cli_json("report", *sample_files(), "--k", "10")
    assert report["best_run"] == decision.best.best
    assert {r["name"]: (r["k"], r["failures"]) for r in report["runs"]} == {
        r.run: (decision.k_to_take(r.run).k, r.failed) for r in decision.failures_at(10).runs}
