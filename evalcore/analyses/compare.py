"""Paired comparisons of the runs in an `Evaluation`, with the labelling planner beside them.

The statistics live in `evalcore.stats.paired` and `evalcore.stats.planner`; this module feeds them the
per-query arrays of an evaluation. The answer in words (verdicts, the plan, the CLI's text and JSON) is
`evalcore.report.compare`'s.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from ..errors import UsageError
from ..metrics.evaluation import Evaluation
from ..metrics.measures import Measure
from ..stats.paired import Comparison, compare_runs
from ..stats.planner import Plan, plan

DEFAULT_COMPARE_METRICS = ("recall@1", "recall@5", "mrr")


@dataclass(frozen=True)
class ComparisonReport:
    """Every comparison made in one call (Holm-corrected together) and a labelling plan."""

    evaluation: Evaluation
    comparisons: tuple[Comparison, ...]
    planner: Plan | None
    planner_pair: tuple[str, str] | None

    def to_dict(self) -> dict:
        """The numbers, as plain types (`evalcore.report.compare.comparison_dict` adds the sentences)."""
        labels = self.evaluation.labels
        planner = None
        if self.planner is not None:
            planner = {"baseline": self.planner_pair[0], "run": self.planner_pair[1], **self.planner.to_dict()}
        return {
            "labels": {"name": labels.name, "fingerprint": labels.fingerprint, "n_queries": labels.n_queries},
            "models": {r.name: r.model for r in self.evaluation.results},
            "comparisons": [c.to_dict() for c in self.comparisons],
            "planner": planner,
        }


def compare_evaluation(
    evaluation: Evaluation,
    metrics: Sequence[str] | None = None,
    baseline: str | None = None,
    *,
    alpha: float = 0.05,
    target_diff: float | None = None,
) -> ComparisonReport:
    """Compare every run with ``baseline`` (or all pairs when None) on ``metrics``.

    Uses the evaluation's level, seed and resample count, so the same call gives the same numbers.
    """
    if len(evaluation.results) < 2:
        raise UsageError("Comparing needs at least two runs; pass --run twice or more.")
    if baseline is not None and baseline not in evaluation.run_names:
        raise UsageError(f"No run named {baseline!r} to use as baseline; runs are: "
                         f"{', '.join(evaluation.run_names)}.")
    chosen = [str(Measure.parse(m)) for m in (metrics or DEFAULT_COMPARE_METRICS)]
    scores = {r.name: {m: r.score(m) for m in chosen} for r in evaluation.results}
    comparisons = compare_runs(scores, chosen, baseline=baseline, level=evaluation.level, alpha=alpha,
                               n_resamples=evaluation.n_resamples, rng=evaluation.seed)
    planner, pair = plan_for(evaluation, comparisons, scores, alpha=alpha, target_diff=target_diff)
    return ComparisonReport(evaluation, tuple(comparisons), planner, pair)


def plan_for(evaluation: Evaluation, comparisons: Sequence, scores: dict, *, alpha: float = 0.05,
             target_diff: float | None = None) -> tuple[Plan | None, tuple[str, str] | None]:
    """The labelling plan for the first comparison (its baseline, run and metric), if it can be made."""
    if not comparisons or evaluation.results[0].n_queries < 2:
        return None, None
    first = comparisons[0]
    base_scores = scores[first.baseline][first.metric]
    diffs = scores[first.run][first.metric] - base_scores
    if np.std(diffs) <= 0:
        return None, None
    planner = plan(diffs, metric=first.metric, scores=base_scores, target_diff=target_diff, alpha=alpha,
                   level=evaluation.level)
    return planner, (first.baseline, first.run)
