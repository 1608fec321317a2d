"""One answer per question: the decision is built once and every surface (the meeting report, `evalcore report
--format json`, `evalcore budget`) says its k and its failure counts; the k comes from one rule at a time."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import evalcore
from evalcore.analyses.budget import k_budget
from evalcore.analyses.decision import decide
from tests.reference import kneedle
from evalcore.analyses.headline import failure_counts
from evalcore.analyses.k_choice import kneedle_k, kneedle_ks
from evalcore.analyses.k_settings import BudgetSettings
from evalcore.metrics.failure import FAILURE_MODE
from evalcore.report.meeting import build_report
from cli_runner import run_cli

SAMPLE = Path(__file__).resolve().parents[2] / "sample_data"
RUNS = ("base", "tuned", "tuned-256d")
FILES = ["--labels", str(SAMPLE / "labels.tsv"),
         *(a for name in RUNS for a in ("--run", str(SAMPLE / f"{name}.trec"))), "--docs", str(SAMPLE / "docs.jsonl")]
PRICED = ["--price-per-mtok", "3", "--requests-per-month", "100000", "--value-per-point", "20"]


@pytest.fixture(scope="module")
def tune():
    labels = evalcore.scoring_labels(evalcore.read_labels(SAMPLE / "labels.tsv"))
    return labels.evaluate([SAMPLE / f"{name}.trec" for name in RUNS], (1, 10))


def _json(*args: str) -> dict:
    done = run_cli(*args)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@pytest.mark.parametrize("priced", [False, True], ids=["no trade-off", "a recall point's worth"])
def test_every_surface_says_the_decisions_k_and_failures(tune, priced: bool) -> None:
    settings = (BudgetSettings(price_per_mtok=3, requests_per_month=100_000, value_per_point=20) if priced
                else BudgetSettings())
    decision = decide(tune, 10, settings, docs=SAMPLE / "docs.jsonl")
    basis = "trade-off" if priced else "elbow"
    decided = {name: decision.k_to_take(name) for name in RUNS}
    assert {d.basis for d in decided.values()} == {basis}

    extra = PRICED if priced else []
    report = _json("report", *FILES, "--k", "10", "--format", "json", *extra)
    budget = _json("budget", *FILES, "--format", "json", *extra)
    assert report["best_run"] == decision.best.best == "tuned"
    assert report["best_run_metric"] == "hit@1"
    for entry in report["runs"]:
        name = entry["name"]
        assert entry["k"] == decided[name].k and entry["k_basis"] == basis
        assert entry["failures"] == decision.failed(name)
    assert {r["name"]: r["recommended_k"] for r in budget["runs"]} == {n: d.k for n, d in decided.items()}
    assert {r["name"]: r["basis"] for r in budget["runs"]} == dict.fromkeys(RUNS, basis)

    # The failures are the Failures page's count (its default meaning) and the report's sentence and rows.
    counts = failure_counts(tune, 10)
    assert counts.mode == FAILURE_MODE == "none"
    assert {r.run: r.failed for r in counts.runs} == {r["name"]: r["failures"] for r in report["runs"]}
    page = build_report(tune, k=10, docs=SAMPLE / "docs.jsonl", settings=settings)
    text = page.to_markdown().replace("\\", "")
    for name in RUNS:
        assert f"{name}: {decision.failed(name)} of 224 queries found nothing relevant at k = 10" in text
        assert (page.failures["run"] == name).sum() == decision.failed(name)
        why = "trade-off" if priced else "elbow: no trade-off given"
        assert f"{decided[name].k} ({why})" in text
        assert f"k = {decided[name].k} for {name}" in (page.k_headline or "") or name == RUNS[-1]


def test_without_a_trade_off_no_surface_shows_the_placeholder_lambdas_pick(tune) -> None:
    report = k_budget(tune, docs=SAMPLE / "docs.jsonl")
    for run in report:
        assert run.basis == "elbow" and run.recommended_k == run.kneedle_k
        assert run.stop_cost["k"] == run.recommended_k  # what stopping costs is said at the k taken
        assert run.stability["low_k"] <= run.recommended_k <= run.stability["high_k"]
    done = run_cli("budget", *FILES)
    assert done.returncode == 0, done.stderr
    assert "lambda" not in done.stdout and done.stdout.count("<- k to take") == len(RUNS)


def test_a_curve_without_an_elbow_takes_the_trade_off_and_says_so() -> None:
    labels = {f"q{i}": {"d1"} for i in range(12)}
    run = {f"q{i}": ["d1", "x1", "x2", "x3"] for i in range(12)}  # found at rank 1 always: a flat recall curve
    budget = k_budget([run], labels, chunk_tokens=100, max_k=4).runs[0]
    assert budget.kneedle_k is None and budget.basis == "trade-off" and budget.recommended_k == 1


def test_kneedle_of_many_curves_at_once_is_kneedle_of_each() -> None:
    rng = np.random.default_rng(3)
    curves = np.sort(rng.random((300, 12)), axis=1)
    curves[:20] = 0.4  # flat rows: no elbow
    curves[20:40] = np.linspace(0, 1, 12)  # a straight line: no elbow
    many = kneedle_ks(curves)
    assert [int(k) or None for k in many] == [kneedle(list(row)) for row in curves]
    assert [kneedle_k(row) for row in curves[35:60]] == [kneedle(list(row)) for row in curves[35:60]]
    assert kneedle_ks(curves[:, :2]).tolist() == [0] * 300


def test_chunkings_get_one_chunking_and_one_k_on_evidence_at_the_k_to_takes_budget() -> None:
    from evalcore.analyses.decision import default_token_budget
    from tests.dashboard.apptest_helpers import app, texts

    chunking = SAMPLE / "chunking"
    names = ("sent1", "sent3", "char400")
    files = ["--labels", str(chunking / "labels.tsv"), *(a for n in names for a in ("--run", str(chunking / f"{n}.trec"))),
             *(a for n in names for a in ("--chunks", f"{n}={chunking / f'{n}.chunks.csv'}"))]
    said = _json("report", *files, "--format", "json")["chunking"]
    assert said["metric"] == "evidence_recall"  # the labels carry evidence spans: evidence held, not documents found
    labels = evalcore.scoring_labels(evalcore.read_labels(chunking / "labels.tsv"))
    maps = {n: evalcore.read_chunks(chunking / f"{n}.chunks.csv") for n in names}
    evaluation = labels.evaluate([evalcore.read_run(chunking / f"{n}.trec", name=n) for n in names], (1, 10),
                                 chunks=maps)
    decision = decide(evaluation, 10)
    assert said["at_tokens"] == default_token_budget(decision.budget) == decision.chunking.tokens
    assert said["take"] == {"name": decision.chunking.best.name, "k": decision.chunking.best.k}

    data = app("views/data.py")  # the Choose k page opens on the same chunking and k
    next(b for b in data.button if "chunking sample" in (b.label or "")).click().run()
    data.switch_page("views/choose_k.py").run()
    headline = next(m.value for m in data.markdown if m.value.startswith("##### ")).replace("\\", "")
    assert headline.startswith(f"##### Take {said['take']['name']} with k = {said['take']['k']}")
    assert f"At about {said['at_tokens']:,.0f} prompt tokens" in headline and "of the evidence" in headline
    assert "evidence held" in texts(data)  # the evidence numbers are on the first screen, beside recall


def test_each_answer_is_computed_once_and_only_when_read(tune, monkeypatch) -> None:
    """One decision is shared by every page: a page that reads only failures never waits for the paired tests or the
    k budget, and an answer read again is the one kept."""
    import collections

    import evalcore.analyses.decision as decision_module

    calls: collections.Counter = collections.Counter()
    for name in ("best_run", "failure_counts", "k_budget"):
        real = getattr(decision_module, name)
        monkeypatch.setattr(decision_module, name,
                            lambda *a, _real=real, _name=name, **kw: (calls.update([_name]), _real(*a, **kw))[1])
    decision = decision_module.Decision(tune, k=10)
    assert decision.failures_at(10) is decision.failures and decision.failed("base") == decision.failed("base")
    assert calls == {"failure_counts": 1}
    assert decision.k_to_take("base").k == decision.k_to_take("base").k
    assert calls["k_budget"] == 1 and "best_run" not in calls
    assert decision.best is decision.best and calls["best_run"] == 1
    assert decision_module.Decision(tune, runs=["tuned", "base"]).runs == ("base", "tuned")  # evaluation order
