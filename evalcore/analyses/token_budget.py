"""Chunkings compared at the same prompt cost: each run at its largest k whose mean prompt tokens stay within a
budget, and the runs compared on the same queries at those k.

A 200-token and an 800-token chunking cannot be compared at the same k: k = 5 of one costs four times the other.
At a token budget N each run takes the largest k whose mean prompt tokens (`evalcore.analyses.budget`) stay within
N; its recall (or evidence recall) there is compared with the best run's, per query (paired, Holm across the runs).
For the runs behind, `reaches_k` says how many chunks they need to reach the best run's recall, if any k does.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import UsageError, invalid_parameter
from ..metrics.evaluation import Evaluation
from ..stats.paired import Comparison, compare_runs
from .budget_report import BudgetReport

AT_TOKENS_METRICS = ("recall", "evidence_recall")


@dataclass(frozen=True)
class RunAtTokens:
    """One run at the budget: the k it can afford, its metric there (with interval) and its mean prompt tokens."""

    name: str
    model: str
    k: int | None  # None: not even one chunk fits in the budget
    tokens_mean: float | None
    value: float | None
    ci_low: float | None
    ci_high: float | None
    reaches_k: int | None  # for a run behind: the smallest k at which it reaches the best run's value


@dataclass(frozen=True)
class AtTokens:
    """Every run at one prompt-token budget, the best first, each compared with the best on the same queries."""

    tokens: float
    metric: str  # "recall" or "evidence_recall"
    runs: tuple[RunAtTokens, ...]
    comparisons: dict[str, Comparison]  # run -> its comparison with the best run
    n: int

    @property
    def best(self) -> RunAtTokens | None:
        return self.runs[0] if self.runs and self.runs[0].k is not None else None


def at_tokens(report: BudgetReport, evaluation: Evaluation, tokens: float, metric: str = "recall", *,
              level: float | None = None, alpha: float = 0.05) -> AtTokens:
    """Each run of ``report`` at its largest k whose mean prompt tokens stay within ``tokens``, compared per query
    with the run that scores best there (paired, Holm-adjusted across the runs)."""
    if isinstance(tokens, bool) or not isinstance(tokens, (int, float, np.integer, np.floating)) or not tokens > 0:
        raise invalid_parameter("at_tokens", "a number of prompt tokens above 0", tokens)
    if metric not in AT_TOKENS_METRICS:
        raise invalid_parameter("metric", "recall or evidence_recall", metric)
    runs = []
    for budget in report:
        table = budget.table
        if metric not in table.columns:
            raise UsageError(f"{metric} at a token budget needs evidence spans in the labels and chunks placed in "
                             f"their documents; run {budget.name} has none.")
        within = table[table["tokens_mean"] <= float(tokens)]
        if within.empty:
            runs.append(RunAtTokens(budget.name, budget.model, None, None, None, None, None, None))
            continue
        row = within.iloc[-1]
        runs.append(RunAtTokens(budget.name, budget.model, int(row["k"]), float(row["tokens_mean"]),
                                float(row[metric]), float(row[f"{metric}_ci_low"]), float(row[f"{metric}_ci_high"]),
                                None))
    runs.sort(key=lambda r: (r.value is None, -(r.value or 0.0), r.tokens_mean or 0.0))
    best = runs[0] if runs and runs[0].k is not None else None
    comparisons: dict[str, Comparison] = {}
    n = evaluation.results[0].n_queries if evaluation.results else 0
    placed = [r for r in runs if r.k is not None]
    if best is not None and len(placed) == 1:  # the queries behind the one number (evidence: those with spans)
        n = int(np.count_nonzero(~np.isnan(_per_query(evaluation, best.name, metric, best.k))))
    if best is not None and len(placed) > 1:
        scores = {r.name: {metric: _per_query(evaluation, r.name, metric, r.k)} for r in placed}
        keep = ~np.any([np.isnan(s[metric]) for s in scores.values()], axis=0)
        scores = {name: {metric: s[metric][keep]} for name, s in scores.items()}
        n = int(keep.sum())
        found = compare_runs(scores, [metric], baseline=best.name, level=level or evaluation.level, alpha=alpha,
                             n_resamples=evaluation.n_resamples, rng=evaluation.seed)
        comparisons = {c.run: c for c in found}
    if best is not None:
        runs = [runs[0]] + [_with_reach(r, report, metric, best.value) for r in runs[1:]]
    return AtTokens(float(tokens), metric, tuple(runs), comparisons, n)


def _per_query(evaluation: Evaluation, run: str, metric: str, k: int) -> np.ndarray:
    return np.asarray(evaluation[run].score(f"{metric}@{k}"), dtype=np.float64)


def _with_reach(run: RunAtTokens, report: BudgetReport, metric: str, target: float) -> RunAtTokens:
    """``run`` with the smallest k at which it reaches ``target`` (None when no k of the table does)."""
    table = report[run.name].table
    reached = table[table[metric] >= target - 1e-12]
    k = int(reached["k"].iloc[0]) if not reached.empty else None
    return RunAtTokens(run.name, run.model, run.k, run.tokens_mean, run.value, run.ci_low, run.ci_high, k)
