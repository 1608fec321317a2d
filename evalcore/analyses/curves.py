"""Every k at once: each run's means with 95% intervals for k = 1..K, and paired comparisons at every k.

A page that lets the reader move k (the dashboard) should not redo the bootstrap for each k.
`interval_curves` takes an `Evaluation` scored to depth K and computes, in one pass, what
``evaluate --k 1,k`` (`Evaluation.summary`) and ``compare --metric recall@1 --metric recall@k
--metric mrr`` (`evalcore.analyses.compare.compare_evaluation`) would print for *every* k, then answers
per k by lookup.

The numbers are the same as the per-k commands', to the last digit, not merely close:

* One draw. The same seed gives the same resampled queries (`evalcore.stats.bootstrap`), and the
  sign flips come from the same generator right after them, as in `evalcore.stats.paired`.
* Exact sums. Scores sit on `evalcore.stats.bootstrap.on_grid`'s grid, so a resampled sum is exact
  however it is added up: here a whole curve over k goes through its few changes from one k
  to the next (`evalcore.stats.bootstrap.ExactProducts`), and a paired difference's sums are the
  difference of the two runs' sums; ``evaluate`` sums the same columns directly.
* Same classification and wording: Wilson / constant / BCa per column
  (`evalcore.stats.shared_draw.interval_columns`), the tests, Holm and verdicts of
  `evalcore.stats.paired.build_comparisons`, the planner of `evalcore.analyses.compare.plan_for`.

Cost: one resample draw (10,000 x n query indices) plus products with the curves' changes;
precision@k and judged@k change at most k and are summed densely, so they are only computed
when asked for (``metrics``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ..errors import UsageError
from ..metrics.evaluation import Evaluation, _run_warnings
from ..metrics.measures import CUTOFF_MEASURES, Measure, check_k, default_measures, parse_ks
from ..stats.bootstrap import ExactProducts, deviations_from_sums, on_grid, resample_sums
from ..stats.intervals import Interval
from ..stats.paired import ZERO_TOLERANCE, build_comparisons, closed_form_p_values, flip_p_values, flip_sums, paired_t_p
from ..stats.shared_draw import column_kinds, interval_columns
from ..warning_log import EvalWarning
from .compare import ComparisonReport, plan_for

SUMMARY_COLUMNS = ["run", "model", "metric", "k", "mean", "ci_low", "ci_high", "n", "labels", "fingerprint",
                   "ci_method", "level", "reliable", "note"]


@dataclass(frozen=True)
class _Paired:
    """What paired comparisons of recall@1..K and MRR need, per run: gridded scores and their sums."""

    gridded: np.ndarray  # (n, K + 1): recall@1..K, rr
    sums: np.ndarray  # (n_resamples, K + 1) resampled sums
    flips: np.ndarray  # (n_resamples, K + 1) sign-flip sums


@dataclass(frozen=True)
class _Tested:
    """One run against the baseline on one column, before the Holm correction across the comparisons shown."""

    diff: np.ndarray  # per query, run minus baseline, exact zeros where within ZERO_TOLERANCE
    interval: Interval
    p_value: float
    test: str
    t_test_p: float


@dataclass(frozen=True)
class IntervalCurves:
    """Means and intervals of every run at every k, and paired comparisons on recall and MRR at any k."""

    evaluation: Evaluation
    max_k: int
    metrics: tuple[str, ...]
    table: pd.DataFrame  # one row per run, metric and k (then mrr), columns SUMMARY_COLUMNS
    paired: dict[str, _Paired] = field(repr=False)
    _tests: dict[tuple[str, str, int], _Tested] = field(default_factory=dict, repr=False, compare=False)

    def _position(self, run: int, measure: Measure) -> int:
        block = len(self.metrics) * self.max_k + 1
        if measure.name == "mrr":
            return run * block + block - 1
        return run * block + self.metrics.index(measure.name) * self.max_k + measure.k - 1

    def summary(self, ks: int | tuple[int, ...] | list[int]) -> pd.DataFrame:
        """`Evaluation.summary` of ``evaluate(..., k=ks)``: the same rows, columns and numbers.

        Metrics not computed here (see ``metrics``) are left out, in the same order otherwise.
        """
        ks = parse_ks(ks, self.max_k)
        positions = [self._position(i, m) for i in range(len(self.evaluation.results))
                     for m in default_measures(ks) if m.name == "mrr" or m.name in self.metrics]
        frame = self.table.iloc[positions].reset_index(drop=True)
        frame["k"] = frame["k"].astype("Int64")
        return frame

    def _tested(self, baseline: str, pairs: list[tuple[str, int]]) -> list[_Tested]:
        """Each (run, column) against ``baseline`` before Holm. A column's interval and p-value do not depend on the
        others, and recall@1 and MRR are the same at every k: those are kept (per baseline, a few MB at most), so a
        new k computes its recall@k column alone."""
        found = {pair: self._tests[(baseline, *pair)] for pair in pairs if (baseline, *pair) in self._tests}
        missing = [pair for pair in dict.fromkeys(pairs) if pair not in found]
        if missing:
            ev, base = self.evaluation, self.paired[baseline]
            d = np.column_stack([self.paired[run].gridded[:, col] - base.gridded[:, col] for run, col in missing])
            d[np.abs(d) <= ZERO_TOLERANCE] = 0.0
            sums = np.column_stack([self.paired[run].sums[:, col] - base.sums[:, col] for run, col in missing])
            intervals = interval_columns(d, deviations_from_sums(sums, d), ev.level, ev.n_resamples, ev.seed,
                                         wilson=False)
            p_values, tests, monte_carlo = closed_form_p_values(d)
            if monte_carlo:
                flips = np.column_stack([self.paired[run].flips[:, col] - base.flips[:, col]
                                         for run, col in (missing[j] for j in monte_carlo)])
                p_values[monte_carlo] = flip_p_values(d[:, monte_carlo], flips)
            for j, (run, col) in enumerate(missing):
                tested = _Tested(d[:, j].copy(), intervals[j], float(p_values[j]), tests[j], paired_t_p(d[:, j]))
                found[(run, col)] = tested
                if col in (0, self.max_k):  # recall@1, MRR
                    self._tests[(baseline, run, col)] = tested
        return [found[pair] for pair in pairs]

    def comparison(self, k: int, baseline: str, *, alpha: float = 0.05) -> ComparisonReport:
        """`compare_evaluation(evaluate(..., k=[1, k]), ["recall@1", f"recall@{k}", "mrr"], baseline)`."""
        ev = self.evaluation
        if len(ev.results) < 2:
            raise UsageError("Comparing needs at least two runs; pass --run twice or more.")
        if baseline not in ev.run_names:
            raise UsageError(f"No run named {baseline!r} to use as baseline; runs are: {', '.join(ev.run_names)}.")
        k = check_k(k, self.max_k)
        metrics = list(dict.fromkeys(["recall@1", f"recall@{k}", "mrr"]))
        columns = {"recall@1": 0, f"recall@{k}": k - 1, "mrr": self.max_k}
        jobs = [(baseline, run, m) for run in ev.run_names if run != baseline for m in metrics]
        tested = self._tested(baseline, [(run, columns[m]) for _, run, m in jobs])
        comparisons = build_comparisons(
            jobs, np.column_stack([t.diff for t in tested]), [t.interval for t in tested],
            np.array([t.p_value for t in tested]), [t.test for t in tested], level=ev.level, alpha=alpha,
            n_resamples=ev.n_resamples, seed=ev.seed, t_test_p=[t.t_test_p for t in tested])
        scores = {r.name: {m: r.score(m) for m in metrics} for r in ev.results}
        planner, pair = plan_for(ev, comparisons, scores, alpha=alpha)
        return ComparisonReport(ev, tuple(comparisons), planner, pair)


def warnings_at(evaluation: Evaluation, ks: tuple[int, ...]) -> tuple[EvalWarning, ...]:
    """`Evaluation.all_warnings` of ``evaluate(..., k=ks)``, from an evaluation scored at least that deep."""
    ks = parse_ks(ks, evaluation.depth)
    known = evaluation.split.full_queries if evaluation.split is not None else None  # one side of a tune/holdout split
    per_run = tuple(w for r in evaluation.results for w in (*r.run.warnings, *_run_warnings(r.ranked, ks, known)))
    return tuple(evaluation.warnings) + per_run


def interval_curves(evaluation: Evaluation, metrics: tuple[str, ...] | list[str] = ("recall",),
                    max_k: int | None = None) -> IntervalCurves:
    """Means and intervals for ``metrics`` (cutoff metrics) at k = 1..``max_k`` and MRR, for every run.

    Uses the evaluation's level, seed and resample count, as `Evaluation.summary` does.
    ``max_k`` defaults to the depth the evaluation was scored to.
    """
    results = evaluation.results
    depth = results[0].depth
    max_k = depth if max_k is None else check_k(max_k, depth, name="max_k")
    chosen = tuple(m for m in CUTOFF_MEASURES if m in {Measure.parse(f"{x}@1").name for x in metrics})
    if "recall" not in chosen:
        chosen = ("recall", *chosen)  # comparisons need recall

    blocks = []
    for r in results:
        blocks.extend(getattr(r.scores, name)[:, :max_k] for name in chosen)
        blocks.append(r.scores.rr[:, None])
    matrix = np.asfortranarray(np.column_stack(blocks))
    gridded = on_grid(matrix)
    width = len(chosen) * max_k + 1
    recall_cols = np.concatenate([np.r_[i * width:i * width + max_k, i * width + width - 1]
                                  for i in range(len(results))])
    # Resampled sums for the columns the bootstrap needs and those paired comparisons need.
    binary, constant = column_kinds(matrix)
    needed = ~binary & ~constant
    if len(results) > 1:
        needed[recall_cols] = True
    summed = np.flatnonzero(needed)
    slot = np.full(matrix.shape[1], -1)
    slot[summed] = np.arange(len(summed))
    rng = np.random.default_rng(evaluation.seed)
    # With recall alone (the Overview's first visit) the bootstrap and the sign flips sum the same
    # columns: set up their products once.
    product = ExactProducts(gridded[:, summed])
    sums = resample_sums(gridded[:, summed], evaluation.n_resamples, rng, product=product)
    intervals = []
    for i in range(len(results)):  # one run at a time: the deviations of every column at once would be large
        cols = np.arange(i * width, (i + 1) * width)
        deviations = np.zeros((evaluation.n_resamples, width))
        have = slot[cols] >= 0
        deviations[:, have] = deviations_from_sums(sums[:, slot[cols[have]]], gridded[:, cols[have]])
        intervals.extend(interval_columns(matrix[:, cols], deviations, evaluation.level, evaluation.n_resamples,
                                          evaluation.seed))
        del deviations

    # The sign flips come next from the same generator, as in evalcore.stats.paired.compare_runs.
    same = len(summed) == len(recall_cols) and bool((summed == recall_cols).all())
    flipped = (flip_sums(gridded[:, recall_cols], evaluation.n_resamples, rng, product=product if same else None)
               if len(results) > 1 else None)
    paired = {}
    for i, r in enumerate(results):
        cols = recall_cols[i * (max_k + 1):(i + 1) * (max_k + 1)]
        paired[r.name] = _Paired(gridded[:, cols], sums[:, slot[cols]] if flipped is not None else None,
                                 flipped[:, i * (max_k + 1):(i + 1) * (max_k + 1)] if flipped is not None else None)
    del sums

    labels = evaluation.labels
    records = []
    j = 0
    for r in results:
        for name in chosen:
            for k in range(1, max_k + 1):
                records.append(_record(r, f"{name}@{k}", k, intervals[j], labels, evaluation.level))
                j += 1
        records.append(_record(r, "mrr", None, intervals[j], labels, evaluation.level))
        j += 1
    table = pd.DataFrame.from_records(records, columns=SUMMARY_COLUMNS)
    return IntervalCurves(evaluation, max_k, chosen, table, paired)


def _record(result, metric: str, k: int | None, interval, labels, level: float) -> dict:
    return {"run": result.name, "model": result.model, "metric": metric, "k": k,
            "mean": float(interval.point), "ci_low": float(interval.low), "ci_high": float(interval.high),
            "n": result.n_queries, "labels": labels.name, "fingerprint": labels.fingerprint,
            "ci_method": interval.method, "level": level, "reliable": bool(interval.reliable),
            "note": interval.note or ""}
