"""The numbers behind the sentence each presented page opens on: which run is best (Overview) and how many queries
each run fails at k, with how many a larger k would rescue (Failures).

The sentences are `evalcore.report.headlines`'; every front end (the CLI, the meeting report, the dashboard) builds
them from these values, so each says the same words from the same numbers.

Decisions a user should know
----------------------------
* **The Overview's question is "which run puts the right answer first?"**, measured by ``hit@1``: the share of
  queries whose first result is a relevant document. It needs no k (every run is scored from rank 1), reads aloud
  without a definition, and is what a person sees first in a search box or in a RAG prompt's first chunk.
* **Best run** = the highest mean hit@1 (ties: the earlier run). It is compared, paired on the same queries, with
  every other run (bootstrap interval of the difference, sign-flip test, Holm across those comparisons, the
  evaluation's level, resamples and seed): the lead is **real** when the test is significant and the interval
  excludes zero, else it "could be chance".
* **A larger k rescues** a failed query when it would not fail at twice the k (capped at the depth scored), by the
  same definition of failure (`evalcore.metrics.failure`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

import numpy as np

from ..errors import UsageError
from ..metrics.evaluation import Evaluation
from ..metrics.failure import FAILURE_MODE, check_mode, failed_at_k
from ..stats.intervals import Interval, mean_interval
from ..stats.paired import Comparison, compare_runs
from .landed import Landed, chosen_results, landed

HEADLINE_METRIC = "hit@1"
"""What the Overview's headline measures: a relevant document first."""


@dataclass(frozen=True)
class BestRun:
    """Each run's ``metric`` with its interval, the best run, and every other run against it (paired: ``baseline`` =
    the best, ``run`` = the other, so ``diff`` is the other minus the best; the closest run comes first)."""

    metric: str
    runs: tuple[str, ...]
    models: dict[str, str]
    means: dict[str, Interval]
    best: str
    comparisons: tuple[Comparison, ...]
    n: int
    labels: str
    fingerprint: str

    @property
    def runner_up(self) -> Comparison | None:
        """The comparison with the next best run (None with one run)."""
        return self.comparisons[0] if self.comparisons else None

    @property
    def clear(self) -> bool:
        """Whether the best run's lead over every other run is real (significant, interval above zero)."""
        return bool(self.comparisons) and all(is_real(c) for c in self.comparisons)

    def to_dict(self) -> dict:
        return {"metric": self.metric, "best": self.best, "clear": self.clear, "n": self.n,
                "labels": {"name": self.labels, "fingerprint": self.fingerprint},
                "means": {run: {"mean": i.point, "ci_low": i.low, "ci_high": i.high} for run, i in self.means.items()},
                "comparisons": [c.to_dict() for c in self.comparisons]}


def lead(c: Comparison) -> tuple[float, float, float]:
    """The best run's lead over the other run of ``c`` (a `BestRun` comparison): the difference and its interval,
    best minus other."""
    return -c.diff, -c.ci_high, -c.ci_low


def is_real(c: Comparison) -> bool:
    """A gap that is real: the paired test is significant (after Holm) and the interval of the difference does not
    reach zero."""
    return bool(c.significant) and (c.ci_low > 0 or c.ci_high < 0)


def headline_means(evaluation: Evaluation, runs: Iterable[str] | None = None, *,
                   metric: str = HEADLINE_METRIC) -> dict[str, Interval]:
    """Each run's mean of ``metric`` with its interval, from the evaluation's own settings: the numbers the headline
    says and the Overview's chart and table draw beside it."""
    return {r.name: mean_interval(r.score(metric), evaluation.level, evaluation.n_resamples, evaluation.seed)
            for r in chosen_results(evaluation, runs)}


def best_run(evaluation: Evaluation, runs: Iterable[str] | None = None, *, metric: str = HEADLINE_METRIC) -> BestRun:
    """The best of ``runs`` (default: every run) on ``metric`` and how clearly, from the evaluation's own settings
    (level, resamples, seed): the same numbers wherever it is asked."""
    chosen = chosen_results(evaluation, runs)
    if not chosen:
        raise UsageError("Naming the best run needs at least one run.")
    scores = {r.name: r.score(metric) for r in chosen}
    means = headline_means(evaluation, [r.name for r in chosen], metric=metric)
    order = sorted(range(len(chosen)), key=lambda i: (-means[chosen[i].name].point, i))
    best = chosen[order[0]].name
    comparisons: tuple[Comparison, ...] = ()
    if len(chosen) > 1:
        # Every other run against the best, closest first; Holm across these comparisons only. Each is "other minus
        # best" (`Comparison.diff` <= 0 for a best run): the sentences turn it round.
        ordered = [chosen[i].name for i in order]
        comparisons = tuple(compare_runs({name: {metric: scores[name]} for name in ordered}, [metric], baseline=best,
                                         level=evaluation.level, n_resamples=evaluation.n_resamples,
                                         rng=evaluation.seed))
    labels = evaluation.labels
    return BestRun(metric, tuple(r.name for r in chosen), {r.name: r.model for r in chosen}, means, best, comparisons,
                   chosen[0].n_queries, labels.name, labels.fingerprint)


@dataclass(frozen=True)
class RunFailures:
    """One run at k: how many queries failed, how many of those a larger k rescues."""

    run: str
    model: str
    failed: int
    n: int
    rescued: int  # failed at k, not at ``larger_k``


@dataclass(frozen=True)
class FailureCounts:
    """Every run's failures at k in one meaning of failure, and the queries every run fails."""

    k: int
    mode: str
    larger_k: int | None  # twice k, capped at the depth scored; None when k is already that depth
    runs: tuple[RunFailures, ...]
    in_every_run: int  # queries every run shown fails (with two runs or more)
    labels: str
    fingerprint: str


def failure_counts(evaluation: Evaluation, k: int, *, mode: str = FAILURE_MODE, runs: Iterable[str] | None = None,
                   where: Landed | None = None) -> FailureCounts:
    """How many queries each run fails at k (``mode`` as `evalcore.metrics.failure`), how many of those it would not
    fail at twice k, and how many fail in every run. Pass ``where`` (`evalcore.analyses.landed.landed`) to reuse it."""
    k = evaluation.check_k(k)
    mode = check_mode(mode)
    chosen = chosen_results(evaluation, runs)
    if where is None:
        where = landed(evaluation, [r.name for r in chosen])
    depth = min(r.depth for r in chosen)
    larger = min(2 * k, depth) if k < depth else None
    rows, every = [], None
    for result in chosen:
        mine = where.run(result.name)

        def failed(at: int) -> np.ndarray:
            evidence = result.score(f"evidence_recall@{at}") if mode == "fragment" else None
            return failed_at_k(mine.found_at(at), mine.n_relevant, mode, evidence)

        now = failed(k)
        rescued = int((now & ~failed(larger)).sum()) if larger is not None else 0
        rows.append(RunFailures(result.name, result.model, int(now.sum()), result.n_queries, rescued))
        every = now if every is None else every & now
    labels = evaluation.labels
    return FailureCounts(k, mode, larger, tuple(rows), int(every.sum()) if len(chosen) > 1 else 0,
                         labels.name, labels.fingerprint)
