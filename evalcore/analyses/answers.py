"""Close the loop: answer grades beside retrieval, query by query.

From `evalcore.analyses.answer_join.JoinedGrades` (and, with runs and labels, the `Evaluation` of those runs), one
`AnswerStudy` holds every number `evalcore answers` shows (docs/metrics.md, "Answer grades"):

* **each run's mean of each grade** over the queries it graded, with the house's 95% interval (Wilson for pass/fail
  grades, else BCa, `evalcore.stats.intervals`) and n;
* **paired comparisons** of a grade between two runs over the queries both graded (`evalcore.stats.paired`: the BCa
  interval of the differences, the sign-flip mid-p, wins/ties/losses), Holm across the whole table;
* **retrieval against the answer** (with runs and labels): per run, the queries whose retrieval found something
  (recall@k > 0) against those whose answer is good (grade >= ``good``), four counts; for each pair of runs the
  queries where one retrieves strictly more (recall@k) yet answers strictly worse (the grade), each way; Spearman's
  rank correlation of recall@k and the grade per run with a bootstrap interval (`evalcore.stats.rank_correlation`);
* **judges' agreement**: two grade files of one run sharing a grade, Cohen's kappa (`evalcore.stats.agreement`) and
  the queries they disagree on.

Every interval of a study comes from one draw of resampled queries over the queries any file graded
(`evalcore.stats.subset_draw`): a grade's mean in a resample is over the drawn queries that have it, a paired
difference over those both runs graded, a correlation over those graded and scored. When every run graded every
query, each number is exactly what `mean_intervals` and `compare_runs` give with that seed. Nothing here loops over
queries in Python.
"""

from __future__ import annotations

from contextlib import nullcontext
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd
from threadpoolctl import threadpool_limits

from ..errors import UsageError, invalid_parameter
from ..metrics.evaluation import Evaluation
from ..stats.agreement import Kappa, kappa_interval
from ..stats.bootstrap import on_grid
from ..stats.intervals import DEFAULT_RESAMPLES, Interval, check_level, resolve_rng
from ..stats.paired import (
    ZERO_TOLERANCE,
    Comparison,
    build_comparisons,
    closed_form_p_values,
    flip_p_values,
    flip_sums,
    holm,
    paired_differences,
)
from ..stats.rank_correlation import RankCorrelation, SpearmanDraws
from ..stats.subset_draw import DifferenceProducts, needs_draw, subset_deviations, subset_intervals
from .answer_join import DEFAULT_GOOD, DEFAULT_K, JoinedGrades, judge_labels

CORRELATION_RESAMPLES = 1_000
"""Resamples behind a rank correlation's percentile interval: the first 1,000 of the study's draw (each is a pass
over every graded query; 1,000 place a 95% percentile bound to about a hundredth)."""
ORDINAL_AT_MOST = 11
"""Grades with at most this many distinct values (pass/fail, 1 to 5, 0 to 10) are categories for kappa; a judge pair
with more is compared as good/bad at ``good``."""


@dataclass(frozen=True)
class GradeMean:
    """One run's mean of one grade over the ``n`` queries it graded, with its interval (None when n is 0)."""

    run: str
    metric: str
    interval: Interval | None
    n: int


@dataclass(frozen=True)
class Joint:
    """Per run and grade, over the queries graded and scored: retrieval hit (recall@k > 0) against answer good."""

    run: str
    k: int
    metric: str
    hit_good: int
    hit_bad: int
    miss_good: int
    miss_bad: int


@dataclass(frozen=True)
class Diverging:
    """Two runs on one grade, over the queries both graded: where ``b`` retrieves strictly more than ``a`` (recall@k)
    and answers strictly worse (the grade), and where it retrieves strictly less and answers strictly better."""

    a: str
    b: str
    k: int
    metric: str
    n: int
    b_finds_more: int
    a_finds_more: int
    retrieval_better_answer_worse: tuple[str, ...]
    retrieval_worse_answer_better: tuple[str, ...]


@dataclass(frozen=True)
class Correlation:
    """Spearman's rank correlation of recall@k and a grade over one run's graded, scored queries."""

    run: str
    k: int
    metric: str
    value: RankCorrelation


@dataclass(frozen=True)
class Agreement:
    """Two grade files of one run on one grade: kappa, and the queries they disagree on. ``split_at`` is the good/bad
    threshold when the grades were too fine to be categories (None otherwise)."""

    run: str
    metric: str
    a: str
    b: str
    kappa: Kappa
    split_at: float | None
    disagree: tuple[str, ...]


@dataclass(frozen=True)
class AnswerStudy:
    """Every number of `evalcore answers` (module docs)."""

    joined: JoinedGrades
    means: tuple[GradeMean, ...]
    pairs: tuple[Comparison, ...]
    joint: tuple[Joint, ...]
    diverging: tuple[Diverging, ...]
    correlation: tuple[Correlation, ...]
    agreement: tuple[Agreement, ...]
    k: int | None
    good: float
    level: float
    seed: int
    n_resamples: int

    def run_n(self, run: str) -> int:
        """Queries with at least one grade from ``run``."""
        columns = list(self.joined.grades[run].values())
        return int(np.any(~np.isnan(np.vstack(columns)), axis=0).sum()) if columns else 0


def answer_study(joined: JoinedGrades, evaluation: Evaluation | None = None, *, k: int = DEFAULT_K,
                 good: float = DEFAULT_GOOD, level: float = 0.95, seed: int = 0,
                 n_resamples: int = DEFAULT_RESAMPLES, alpha: float = 0.05) -> AnswerStudy:
    """Every number of the study (module docs); ``evaluation`` scores the runs the grades belong to (at ``k``)."""
    level = check_level(level)
    if isinstance(good, bool) or not isinstance(good, (int, float)) or not 0 <= good <= 1:
        raise invalid_parameter("good", "a grade between 0 and 1", good)
    recall = _recall(joined, evaluation, k) if evaluation is not None else {}
    # One BLAS thread: the draw prepares resamples on a thread of its own, and a second BLAS thread only contends
    # with it for the cores (the numbers are the same either way).
    with threadpool_limits(limits=1, user_api="blas"):
        means, pairs, correlation = _drawn(joined, recall, k, level, seed, n_resamples, alpha)
    joint, diverging = (), ()
    if recall:
        joint = tuple(_joint(joined, recall, k, good))
        diverging = tuple(_diverging(joined, recall, k))
    agreement = tuple(_agreement(joined, good, level, seed, n_resamples))
    return AnswerStudy(joined, tuple(means), tuple(pairs), joint, diverging, tuple(correlation), agreement,
                       k if evaluation is not None else None, float(good), level, seed, n_resamples)


def _recall(joined: JoinedGrades, evaluation: Evaluation, k: int) -> dict[str, np.ndarray]:
    """recall@k of each graded run over the joined queries (NaN where the evaluation did not score the query)."""
    evaluation.check_k(k)
    out = {}
    for run in joined.runs:
        if run not in evaluation.run_names:
            raise UsageError(f"--grades {run}=...: there is no run named {run!r}; the runs loaded are "
                             f"{', '.join(evaluation.run_names)}.")
        result = evaluation[run]
        scores = pd.Series(result.score(f"recall@{k}"), index=pd.Index(result.queries, dtype=object))
        out[run] = scores.reindex(pd.Index(joined.queries, dtype=object)).to_numpy(dtype=np.float64)
    return out


# ----------------------------------------------------------------------------- every interval, from one draw


def _drawn(joined: JoinedGrades, recall: dict[str, np.ndarray], k: int | None, level: float, seed: int,
           n_resamples: int, alpha: float) -> tuple[list[GradeMean], list[Comparison], list[Correlation]]:
    """The means, the paired comparisons and the rank correlations, every interval from one draw of resampled
    queries over the queries any file graded (`evalcore.stats.subset_draw`), then the sign flips of the tests."""
    means = [(run, metric, values) for run in joined.runs for metric, values in joined.grades[run].items()]
    every = np.column_stack([v for _, _, v in means]) if means else np.empty((joined.n_queries, 0))
    universe = np.flatnonzero((~np.isnan(every)).any(axis=1))
    grades = every[universe]
    pairs, diffs = _paired_columns(joined, universe)
    correlations = [(run, metric, recall[run][universe], values[universe]) for run, metric, values in means
                    if run in recall]
    spearman = SpearmanDraws([(np.nan_to_num(x), np.nan_to_num(y), ~np.isnan(x) & ~np.isnan(y))
                              for _, _, x, y in correlations], min(n_resamples, CORRELATION_RESAMPLES)) \
        if correlations else None
    generator, _ = resolve_rng(seed)
    column = {(run, metric): j for j, (run, metric, _) in enumerate(means)}
    hints = [(column[a, metric], column[b, metric]) for a, b, metric in pairs]  # each difference: b's grade - a's
    deviations = None
    if needs_draw(grades) or needs_draw(diffs, wilson=False) or (spearman is not None and spearman.groups):
        with spearman.beside() if spearman is not None else nullcontext() as each_block:
            deviations = subset_deviations(np.hstack([grades, diffs]), n_resamples, generator, each_block,
                                           [None] * grades.shape[1] + hints)
    split = grades.shape[1]
    found = subset_intervals(grades, None if deviations is None else deviations[:, :split], level, n_resamples, seed)
    out_means = [GradeMean(run, metric, interval, int((~np.isnan(values)).sum()))
                 for (run, metric, values), interval in zip(means, found)]
    compared = _compared(pairs, diffs, None if deviations is None else deviations[:, split:], generator, level,
                         alpha, seed, n_resamples, (grades, hints))
    out_correlations = []
    if spearman is not None:
        out_correlations = [Correlation(run, k, metric, value) for (run, metric, _, _), value
                            in zip(correlations, spearman.intervals(level, seed))]
    return out_means, compared, out_correlations


def _paired_columns(joined: JoinedGrades, universe: np.ndarray) -> tuple[list[tuple[str, str, str]], np.ndarray]:
    """Every (a, b, grade) both runs have, and b minus a over the queries both graded (NaN elsewhere), on the grid
    `evalcore.stats.paired.paired_differences` puts them on."""
    jobs, columns = [], []
    for i, a in enumerate(joined.runs):
        for b in joined.runs[i + 1:]:
            for metric in joined.grades[a]:
                if metric not in joined.grades[b]:
                    continue
                va, vb = joined.grades[a][metric][universe], joined.grades[b][metric][universe]
                both = ~np.isnan(va) & ~np.isnan(vb)
                if both.any():
                    column = np.full(len(universe), np.nan)
                    column[both] = paired_differences(vb[both], va[both])
                    column[np.abs(column) <= ZERO_TOLERANCE] = 0.0
                    jobs.append((a, b, metric))
                    columns.append(column)
    return jobs, np.column_stack(columns) if columns else np.empty((len(universe), 0))


def _compared(jobs: list[tuple[str, str, str]], diffs: np.ndarray, deviations: np.ndarray | None,
              generator: np.random.Generator, level: float, alpha: float, seed: int, n_resamples: int,
              grades: tuple[np.ndarray, list[tuple[int, int]]]) -> list[Comparison]:
    """Each pair's comparison over the queries both graded (`evalcore.stats.paired`: BCa interval, sign-flip mid-p,
    wins/ties/losses), the Monte Carlo flips drawn once for all (their sums from the grades' own, ``grades``: the
    grade columns and each difference's pair of them), Holm across the whole table."""
    if not jobs:
        return []
    intervals = subset_intervals(diffs, deviations, level, n_resamples, seed, wilson=False)
    own = [diffs[:, j][~np.isnan(diffs[:, j])] for j in range(len(jobs))]
    p_values, tests, monte_carlo = np.ones(len(jobs)), [""] * len(jobs), []
    for j, values in enumerate(own):
        p, test, flips = closed_form_p_values(values[:, None])
        p_values[j], tests[j] = p[0], test[0]
        if flips:
            monte_carlo.append(j)
    if monte_carlo:  # zeros outside a pair's queries change no sign-flip sum
        gridded = on_grid(np.nan_to_num(diffs[:, monte_carlo]))
        columns, hints = grades
        product = DifferenceProducts(gridded, on_grid(np.nan_to_num(columns)), [hints[j] for j in monte_carlo])
        p_values[monte_carlo] = flip_p_values(gridded, flip_sums(gridded, n_resamples, generator, product))
    made = [build_comparisons([job], values[:, None], [interval], [p], [test], level=level, alpha=alpha,
                              n_resamples=n_resamples, seed=seed)[0]
            for job, values, interval, p, test in zip(jobs, own, intervals, p_values, tests)]
    adjusted = holm([c.p_value for c in made])
    return [replace(c, p_adjusted=float(p), significant=bool(p < alpha), n_comparisons=len(made))
            for c, p in zip(made, adjusted)]


# ----------------------------------------------------------------------------- retrieval against the answer


def _joint(joined: JoinedGrades, recall: dict[str, np.ndarray], k: int, good: float) -> list[Joint]:
    out = []
    for run in joined.runs:
        hit = recall[run] > 0
        for metric, grade in joined.grades[run].items():
            used = ~np.isnan(grade) & ~np.isnan(recall[run])
            ok = grade >= good
            out.append(Joint(run, k, metric, int((used & hit & ok).sum()), int((used & hit & ~ok).sum()),
                             int((used & ~hit & ok).sum()), int((used & ~hit & ~ok).sum())))
    return out


def _diverging(joined: JoinedGrades, recall: dict[str, np.ndarray], k: int) -> list[Diverging]:
    out = []
    for i, a in enumerate(joined.runs):
        for b in joined.runs[i + 1:]:
            ra, rb = recall[a], recall[b]
            for metric in joined.grades[a]:
                if metric not in joined.grades[b]:
                    continue
                ga, gb = joined.grades[a][metric], joined.grades[b][metric]
                used = ~np.isnan(ga) & ~np.isnan(gb) & ~np.isnan(ra) & ~np.isnan(rb)
                b_more, a_more = used & (rb > ra), used & (ra > rb)
                out.append(Diverging(a, b, k, metric, int(used.sum()), int(b_more.sum()), int(a_more.sum()),
                                     tuple(map(str, joined.queries[b_more & (gb < ga)])),
                                     tuple(map(str, joined.queries[a_more & (gb > ga)]))))
    return out


# ----------------------------------------------------------------------------- judges


def _agreement(joined: JoinedGrades, good: float, level: float, seed: int, n_resamples: int) -> list[Agreement]:
    out = []
    for run in joined.runs:
        files = [f for f in joined.files if f.run == run]
        names = judge_labels(files)
        for i in range(len(files)):
            for j in range(i + 1, len(files)):
                for metric in files[i].values:
                    if metric in files[j].values:
                        out.append(_judges(run, metric, names[i], names[j], files[i].values[metric],
                                           files[j].values[metric], joined.queries, good, level, seed, n_resamples))
    return [a for a in out if a is not None]


def _judges(run: str, metric: str, name_a: str, name_b: str, a: np.ndarray, b: np.ndarray, queries: np.ndarray,
            good: float, level: float, seed: int, n_resamples: int) -> Agreement | None:
    both = ~np.isnan(a) & ~np.isnan(b)
    if not both.any():
        return None
    a, b = a[both], b[both]
    distinct = np.unique(np.r_[a, b])
    split_at = None
    if len(distinct) > ORDINAL_AT_MOST:  # too fine to be categories: good or bad
        a, b, split_at = (a >= good).astype(float), (b >= good).astype(float), good
    weights = "linear" if split_at is None and len(distinct) > 2 else "none"
    kappa = kappa_interval(a, b, weights, level=level, n_resamples=n_resamples, rng=seed)
    return Agreement(run, metric, name_a, name_b, kappa, split_at, tuple(map(str, queries[both][a != b])))

