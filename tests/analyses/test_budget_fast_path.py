"""The k budget and the meeting's decision against slow, obviously-correct references on small random runs.

The fast path takes the k from the point curves, draws the bootstrap once for every run (lazily when asked), sums
it exactly however the columns are split, and applies each rule to every resample at once. The references here do
each step the plain way: Python loops over k and over resamples, one ``np.bincount`` per resample, the interval
module's own draw. Same k, same basis, same intervals, same stability, to the last digit.
"""

from __future__ import annotations

import math
import pickle

import numpy as np
import pandas as pd
import pytest

from evalcore.analyses.budget import k_budget
from evalcore.analyses.decision import decide
from tests.reference import kneedle
from evalcore.analyses.headline import best_run, failure_counts
from evalcore.analyses.k_choice import fit_saturating, pick_stability
from evalcore.analyses.k_decision import k_decision
from evalcore.analyses.k_settings import BudgetSettings
from evalcore.metrics.evaluation import evaluate_runs
from evalcore.readers.runs import read_run
from evalcore.report.budget import budget_dict
from evalcore.stats.bootstrap import on_grid
from evalcore.stats.intervals import bca_intervals, mean_intervals

RESAMPLES = 300
SEED = 7


def random_runs(n_queries: int, n_runs: int, depth: int = 30, seed: int = 0):
    """Labels (1 to 3 relevant docs a query), ``n_runs`` rankings that put relevant docs near the top more often
    than not (or leave them out), and every doc's token count."""
    rng = np.random.default_rng(seed)
    labels: dict[str, list[str]] = {}
    runs: list[dict[str, list[str]]] = [{} for _ in range(n_runs)]
    for q in range(n_queries):
        query = f"q{q:04d}"
        pool = [f"{query}-d{i}" for i in range(depth + 10)]
        relevant = [str(d) for d in rng.choice(pool, size=int(rng.integers(1, 4)), replace=False)]
        labels[query] = relevant
        for run in runs:
            ranking = [d for d in rng.permutation(pool) if d not in relevant][:depth]
            for doc in relevant:
                rank = int(rng.geometric(0.12)) - 1
                if rank < depth:
                    ranking.insert(rank, str(doc))
            run[query] = [str(d) for d in ranking[:depth]]
    every = sorted({d for run in runs for ranking in run.values() for d in ranking})
    tokens = pd.DataFrame({"doc_id": every, "tokens": rng.integers(30, 400, size=len(every))})
    return labels, runs, tokens


def named(runs: list[dict[str, list[str]]]) -> list:
    return [read_run(run, name=f"run{i}") for i, run in enumerate(runs)]


def slow_pick(recall: list[float], tokens: list[float], lam: float) -> int:
    """The smallest k within 1e-6 points of the largest 100 * recall(k) - lam * tokens(k) / 1000."""
    values = [100.0 * r - lam * t / 1000.0 for r, t in zip(recall, tokens)]
    top = max(values)
    return next(k for k, v in enumerate(values, start=1) if v >= top - 1e-6)


def slow_budget(result, tokens_of: dict[str, int], run: dict[str, list[str]], max_k: int, lam: float | None,
                level: float = 0.95) -> dict:
    """One run's k to take, intervals and stability the plain way (``lam`` None: no trade-off given)."""
    n = result.n_queries
    recall = result.scores.recall[:, :max_k]
    tokens = np.array([[float(sum(tokens_of[d] for d in run.get(q, [])[:k])) for k in range(1, max_k + 1)]
                       for q in result.queries])
    recall_mean, tokens_mean = recall.mean(axis=0), tokens.mean(axis=0)
    span = min(max_k, 50)
    fit = n < 300
    curve = fit_saturating(recall_mean[:span]).curves[0] if fit else recall_mean[:span]
    elbow = kneedle(list(recall_mean[:span]))
    trade_off = lam is not None or elbow is None
    lam_used = 10.0 if lam is None else lam
    k = slow_pick(list(curve), list(tokens_mean[:span]), lam_used) if trade_off else elbow

    # The bootstrap: one bincount per resample of the plain draw, each resample's curve, the rule on each.
    draw = np.random.default_rng(SEED).integers(0, n, size=(RESAMPLES, n), dtype=np.int32)
    recall_grid, tokens_grid = on_grid(recall), on_grid(tokens)
    boot_recall, boot_tokens = [], []
    for row in draw:
        counts = np.bincount(row, minlength=n).astype(np.float64)
        boot_recall.append(recall_mean + (counts @ recall_grid - recall_grid.sum(axis=0)) / n)
        boot_tokens.append(tokens_mean + (counts @ tokens_grid - tokens_grid.sum(axis=0)) / n)
    picks = []
    fitted = fit_saturating(np.array(boot_recall)[:, :span]).curves if fit and trade_off else None
    for b in range(RESAMPLES):
        if trade_off:
            shown = fitted[b] if fit else boot_recall[b][:span]
            picks.append(slow_pick(list(shown), list(boot_tokens[b][:span]), lam_used))
        else:
            picks.append(kneedle(list(boot_recall[b][:span])) or span)
    reference = max(min(max_k, 50), k)
    lost = recall[:, reference - 1] - recall[:, k - 1]
    return {"k": k, "basis": "trade-off" if trade_off else "elbow", "elbow": elbow, "tokens_mean": tokens_mean,
            "intervals": mean_intervals(recall, level, RESAMPLES, rng=SEED),
            "stability": pick_stability(np.array(picks), k, n, RESAMPLES, SEED),
            "lost": bca_intervals(lost[:, None], level, RESAMPLES, rng=SEED)[0], "reference": reference}


@pytest.mark.parametrize("n_queries", [120, 400], ids=["fitted curve", "raw curve"])
@pytest.mark.parametrize("lam", [None, 2.0, 40.0], ids=["elbow", "trade-off 2", "trade-off 40"])
def test_the_budget_is_the_slow_reference(n_queries: int, lam: float | None) -> None:
    labels, runs, tokens = random_runs(n_queries, 2, seed=n_queries)
    evaluation = evaluate_runs(named(runs), labels, 30)
    options = {} if lam is None else {"lam": lam}
    report = k_budget(evaluation, docs=tokens, max_k=30, n_resamples=RESAMPLES, rng=SEED, **options)
    tokens_of = dict(zip(tokens["doc_id"], tokens["tokens"].astype(int)))
    for result, run, budget in zip(evaluation.results, runs, report):
        slow = slow_budget(result, tokens_of, run, 30, lam)
        assert (budget.recommended_k, budget.basis, budget.kneedle_k) == (slow["k"], slow["basis"], slow["elbow"])
        assert budget.table["tokens_mean"].tolist() == pytest.approx(slow["tokens_mean"].tolist())
        assert budget.table["recall_ci_low"].tolist() == [i.low for i in slow["intervals"]]
        assert budget.table["recall_ci_high"].tolist() == [i.high for i in slow["intervals"]]
        assert budget.stability == slow["stability"]
        stop = budget.stop_cost
        assert stop["reference_k"] == slow["reference"] == budget.reference_k
        if stop["k"] < stop["reference_k"]:  # the paired difference, gridded as one column: to the 7 digits shown
            assert (stop["ci_low"], stop["ci_high"]) == pytest.approx((slow["lost"].low, slow["lost"].high), abs=1e-6)


def test_a_lazy_budget_draws_when_read_and_gives_the_same_numbers() -> None:
    labels, runs, tokens = random_runs(150, 3, seed=1)
    evaluation = evaluate_runs(named(runs), labels, 30)
    eager = k_budget(evaluation, docs=tokens, max_k=30, n_resamples=RESAMPLES, rng=SEED)
    lazy = k_budget(evaluation, docs=tokens, max_k=30, n_resamples=RESAMPLES, rng=SEED, lazy=True)
    # The k to take and every point number are there without the bootstrap.
    assert [k_decision(r) for r in lazy] == [k_decision(r) for r in eager]
    assert all(not r.resampled.done for r in lazy)
    for a, b in zip(lazy, eager):
        pd.testing.assert_frame_equal(a.points, b.table.drop(columns=["recall_ci_low", "recall_ci_high"]))
    assert not lazy.runs[0].resampled.done
    # One read draws for every run at once; the numbers are the eager ones.
    assert lazy.runs[1].stability == eager.runs[1].stability
    assert all(r.resampled.done for r in lazy)
    assert budget_dict(lazy) == budget_dict(eager)
    # Pickled (a cache, a worker process) with its numbers.
    again = pickle.loads(pickle.dumps(k_budget(evaluation, docs=tokens, max_k=30, n_resamples=RESAMPLES, rng=SEED,
                                               lazy=True)))
    assert budget_dict(again) == budget_dict(eager)


@pytest.mark.parametrize("settings", [BudgetSettings(n_resamples=RESAMPLES),
                                      BudgetSettings(lam=3.0, n_resamples=RESAMPLES)], ids=["elbow", "trade-off"])
def test_the_decision_is_its_parts_computed_one_after_the_other(settings: BudgetSettings) -> None:
    labels, runs, tokens = random_runs(200, 4, seed=3)
    evaluation = evaluate_runs(named(runs), labels, (1, 10, 30), n_resamples=RESAMPLES, seed=SEED)
    decision = decide(evaluation, 10, settings, docs=tokens)
    plain = k_budget(evaluation, docs=tokens, settings=settings, max_k=max(settings.max_k, 10),
                     level=evaluation.level, rng=evaluation.seed)
    assert decision.best == best_run(evaluation)
    assert decision.failures == failure_counts(evaluation, 10)
    assert budget_dict(decision.budget) == budget_dict(plain)
    assert all(math.isfinite(r["k"]) for r in decision.to_dict()["runs"])
