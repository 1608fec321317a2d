"""Paired comparison of runs scored on the same queries: which model is better, and by how much.

`compare_runs` takes per-query scores (run name -> metric name -> array, one entry per query,
the same query order everywhere) and, for each pair of runs and each metric, reports the mean
difference ``run - baseline`` with an interval, a p-value and win/tie/loss counts. The sentence a
product manager reads aloud is `evalcore.report.compare.comparison_verdict`'s.

Decisions a user should know
----------------------------
* **Interval**: the paired BCa bootstrap of the per-query differences (each resample picks the
  same queries for both runs), from `evalcore.stats.intervals.bca_intervals`. With the same seed it
  resamples the same queries as `evalcore.stats.intervals.mean_intervals`.
* **p-value**: a two-sided paired randomization (sign-flip) test on the sum of the
  differences, as **mid-p**: ``P(|T| > |t|) + 0.5 * P(|T| = |t|)``. Retrieval metrics take few
  distinct values, so ties are common and the plain exact p would be needlessly conservative.

  - When every non-zero difference has the same size (0/1 metrics: differences in {-1, 0, 1})
    the test is the exact McNemar test on the discordant queries, in closed form at any n.
  - Otherwise, with at most `EXACT_MAX_NONZERO` (20) non-zero differences, all ``2^m`` sign
    patterns are enumerated.
  - Otherwise ``n_resamples`` random sign flips, shared by every comparison in the call, with
    the observed pattern counted as one of them (so p is never 0).
  - When no query differs, p is 1 (the formal mid-p of an empty test would be 0.5).
* The **paired t-test** p-value is reported beside it as a cross-check (``t_test_p``), NaN
  where it is undefined (a single query).
* **Holm's step-down correction** is applied across every comparison made in one call
  (pairs x metrics); ``significant`` is ``p_adjusted < alpha``.
* Fewer than `MIN_RELIABLE_QUERIES` (50) queries, or an interval that fell back to percentiles:
  ``reliable`` is False (and the verdict says so: "only 12 queries: treat as a rough guide", or the
  interval's ``interval_note``).
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from itertools import cycle

import numpy as np
from scipy.special import bdtr, gammaln, stdtr  # not scipy.stats: 0.4 s more to import on a cold dashboard

from ..errors import UsageError, invalid_parameter
from .bootstrap import BlockBuffer, ExactProducts, on_grid, prefetched
from .intervals import (
    DEFAULT_RESAMPLES,
    MIN_RELIABLE_QUERIES,
    Interval,
    bca_intervals,
    check_level,
    check_resamples,
    resolve_rng,
)

EXACT_MAX_NONZERO = 20
"""Up to this many non-zero differences the sign-flip test enumerates all 2^m patterns."""

ZERO_TOLERANCE = 1e-12
"""Per-query differences smaller than this are ties (guards against float noise)."""


@dataclass(frozen=True)
class Comparison:
    """``run`` against ``baseline`` on one metric; ``diff`` and the interval are run - baseline.

    ``wins`` counts queries where ``run`` scores higher, ``losses`` where it scores lower.
    ``test`` names how ``p_value`` was computed; ``p_adjusted`` is after Holm. ``interval_note`` says why the
    interval is only a rough one, when it fell back to percentiles (None otherwise).
    """

    baseline: str
    run: str
    metric: str
    diff: float
    ci_low: float
    ci_high: float
    p_value: float
    p_adjusted: float
    significant: bool
    wins: int
    ties: int
    losses: int
    n: int
    interval_note: str | None
    test: str
    t_test_p: float
    level: float
    alpha: float
    reliable: bool
    n_comparisons: int
    n_resamples: int
    seed: int | None

    def to_dict(self) -> dict[str, object]:
        """Plain types, NaN as None so the result is valid JSON."""
        out = asdict(self)
        return {k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in out.items()}


# ---------------------------------------------------------------------------------- tests


def holm(p_values: Sequence[float] | np.ndarray) -> np.ndarray:
    """Holm step-down adjusted p-values, in the input order, monotone and capped at 1.

    ``[0.01, 0.04, 0.03, 0.005]`` -> ``[0.03, 0.06, 0.06, 0.02]``.
    """
    p = np.asarray(p_values, dtype=np.float64)
    if p.ndim != 1 or ((p < 0) | (p > 1) | np.isnan(p)).any():
        raise invalid_parameter("p_values", "a 1-D list of numbers between 0 and 1", p_values)
    m = p.size
    order = np.argsort(p, kind="stable")
    stepped = np.maximum.accumulate((m - np.arange(m)) * p[order])
    adjusted = np.empty(m)
    adjusted[order] = np.minimum(stepped, 1.0)
    return adjusted


def mcnemar_midp(wins: int, losses: int) -> float:
    """Exact two-sided McNemar mid-p from the discordant counts (binomial, p = 1/2).

    The sign-flip test when every non-zero difference has the same size. With no discordant
    query at all there is no evidence either way and p is 1.
    """
    m = int(wins) + int(losses)
    if m == 0:
        return 1.0
    k = min(int(wins), int(losses))
    if 2 * k == m:  # observed |T| = 0: every other pattern is more extreme
        return float(1.0 - 0.5 * _half_binomial_pmf(k, m))
    below = bdtr(k - 1, m, 0.5) if k > 0 else 0.0  # P(X <= k - 1); bdtr is NaN below 0
    return float(min(1.0, 2 * below + _half_binomial_pmf(k, m)))


def _half_binomial_pmf(k: int, m: int) -> float:
    """P(X = k) for X ~ Binomial(m, 1/2), in logs so that m in the thousands neither overflows nor underflows."""
    return math.exp(gammaln(m + 1) - gammaln(k + 1) - gammaln(m - k + 1) - m * math.log(2.0))


def _exact_sign_flip(nonzero: np.ndarray) -> float:
    """Mid-p over all 2^m sign patterns of the non-zero differences."""
    sums = np.zeros(1)
    for value in np.abs(nonzero):
        sums = np.concatenate([sums + value, sums - value])
    observed = abs(nonzero.sum())
    tol = 1e-9 * max(1.0, float(np.abs(nonzero).sum()))
    gap = np.abs(sums) - observed
    return float(((gap > tol).sum() + 0.5 * (np.abs(gap) <= tol).sum()) / sums.size)


def flip_sums(gridded: np.ndarray, n_flips: int, rng: np.random.Generator,
              product: ExactProducts | None = None) -> np.ndarray:
    """``bits @ gridded`` for ``n_flips`` random sign patterns, shape (n_flips, n_cols), exact.

    Flip ``b`` negates query ``i`` where bit ``i`` of row ``b`` of a random byte matrix is set,
    drawn in blocks of rows, each unpacked into float64 (n, rows) on a worker thread while the
    products of the block before it run (in order, so the stream is that of a plain loop; two buffers
    taking turns, the one read and the one filled). On `on_grid`'s grid the products are exact, so the
    sums of a difference of two columns are the difference of their sums (`evalcore.analyses.curves`
    uses that). ``product`` is ``ExactProducts(gridded)`` when the caller already has it.
    """
    n, n_cols = gridded.shape
    if product is None:
        product = ExactProducts(np.asarray(gridded, dtype=np.float64))
    out = np.empty((n_flips, n_cols))
    block_rows = max(1, min(n_flips, (1 << 22) // n))
    n_bytes = (n + 7) // 8
    starts = list(range(0, n_flips, block_rows))
    sizes = [min(block_rows, n_flips - start) for start in starts]
    buffers = cycle([BlockBuffer(n, max(sizes, default=0)) for _ in range(2)])

    def draw(rows: int) -> np.ndarray:
        packed = rng.integers(0, 256, size=(rows, n_bytes), dtype=np.uint8)
        bits = next(buffers).view(rows)
        # Unpacked along each row, then turned over: the same bits, several times faster than unpacking down
        # the columns of the turned-over bytes.
        np.copyto(bits, np.unpackbits(packed, axis=1, count=n).T)
        return bits

    for start, rows, bits in zip(starts, sizes, prefetched(draw, sizes)):
        product(bits, out[start:start + rows])
    return out


def flip_p_values(diffs: np.ndarray, flipped: np.ndarray) -> np.ndarray:
    """Monte Carlo mid-p per column of gridded ``diffs`` (n, c) from their `flip_sums` (n_flips, c).

    T_b = sum(d) - 2 * (bits_b @ d); the observed pattern counts as one of ``n_flips + 1``.
    """
    total = diffs.sum(axis=0)
    observed = np.abs(total)
    tol = 1e-9 * np.maximum(1.0, np.abs(diffs).sum(axis=0))
    gap = np.abs(total - 2 * flipped) - observed
    greater = (gap > tol).sum(axis=0)
    equal = (np.abs(gap) <= tol).sum(axis=0)
    return (greater + 0.5 * (equal + 1)) / (flipped.shape[0] + 1)


def _random_sign_flips(diffs: np.ndarray, n_flips: int, rng: np.random.Generator) -> np.ndarray:
    """Monte Carlo mid-p for each column of ``diffs`` (n, c), one shared sign draw."""
    gridded = on_grid(diffs)
    return flip_p_values(gridded, flip_sums(gridded, n_flips, rng))


def paired_differences(scores: np.ndarray, baseline: np.ndarray) -> np.ndarray:
    """Per-query ``scores - baseline`` on `evalcore.stats.bootstrap.on_grid`'s grid (exact, columns alike)."""
    a = np.asarray(scores, dtype=np.float64)
    b = np.asarray(baseline, dtype=np.float64)
    shape = a.shape
    a2, b2 = a.reshape(shape[0], -1), b.reshape(shape[0], -1)
    return (on_grid(a2) - on_grid(b2)).reshape(shape)


def _nonzero(diffs: np.ndarray) -> np.ndarray:
    return diffs[np.abs(diffs) > ZERO_TOLERANCE]


def _equal_sizes(nonzero: np.ndarray) -> bool:
    size = np.abs(nonzero)
    return bool(size.size and np.allclose(size, size[0], rtol=1e-9, atol=ZERO_TOLERANCE))


def paired_p_value(
    diffs: np.ndarray,
    n_resamples: int = DEFAULT_RESAMPLES,
    rng: np.random.Generator | int | None = None,
    *,
    exact_max: int = EXACT_MAX_NONZERO,
) -> tuple[float, str]:
    """Two-sided sign-flip mid-p for per-query differences, and the name of the test used.

    The test is ``"none (all ties)"``, ``"mcnemar exact mid-p"``, ``"sign-flip exact mid-p"``
    or ``"sign-flip monte carlo mid-p"``; see the module docs for when each applies.
    """
    d = np.asarray(diffs, dtype=np.float64)
    if d.ndim != 1 or d.size < 1 or not np.isfinite(d).all():
        raise invalid_parameter("diffs", "a 1-D array of finite per-query differences", f"shape {d.shape}")
    nonzero = _nonzero(d)
    if nonzero.size == 0:
        return 1.0, "none (all ties)"
    if _equal_sizes(nonzero):
        return mcnemar_midp(int((nonzero > 0).sum()), int((nonzero < 0).sum())), "mcnemar exact mid-p"
    if nonzero.size <= exact_max:
        return _exact_sign_flip(nonzero), "sign-flip exact mid-p"
    generator, _ = resolve_rng(rng)
    n_flips = check_resamples(n_resamples)
    return float(_random_sign_flips(nonzero[:, None], n_flips, generator)[0]), "sign-flip monte carlo mid-p"


def paired_t_p(diffs: np.ndarray) -> float:
    """Two-sided paired t-test p from per-query differences (``scipy.stats.ttest_rel``).

    NaN for a single query; 1.0 when every difference is 0; 0.0 when they are all the same
    non-zero value (no spread, so the t statistic is infinite).
    """
    d = np.asarray(diffs, dtype=np.float64)
    n = d.size
    if n < 2:
        return float("nan")
    sd = d.std(ddof=1)
    mean = d.mean()
    if sd <= ZERO_TOLERANCE * max(1.0, abs(mean)):
        return 1.0 if abs(mean) <= ZERO_TOLERANCE else 0.0
    t = mean / (sd / math.sqrt(n))
    return float(2 * stdtr(n - 1, -abs(t)))  # Student's t upper tail, as scipy.stats.t.sf


# ---------------------------------------------------------------------------------- API


def _validated(
    scores: Mapping[str, Mapping[str, np.ndarray]], metrics: Sequence[str], baseline: str | None
) -> tuple[list[str], list[str], int, dict[tuple[str, str], np.ndarray]]:
    if not isinstance(scores, Mapping) or len(scores) < 2:
        got = len(scores) if isinstance(scores, Mapping) else type(scores).__name__
        raise invalid_parameter("scores", "a mapping of at least two run names to their per-query scores", got)
    if isinstance(metrics, str):
        metrics = [metrics]
    metrics = list(metrics)
    if not metrics:
        raise invalid_parameter("metrics", "a non-empty list of metric names", metrics)
    runs = [str(name) for name in scores]
    if baseline is not None and baseline not in scores:
        raise invalid_parameter("baseline", f"one of the runs ({', '.join(runs)}) or None", baseline)
    arrays: dict[tuple[str, str], np.ndarray] = {}
    n: int | None = None
    for run, per_metric in scores.items():
        for metric in metrics:
            if not isinstance(per_metric, Mapping) or metric not in per_metric:
                raise UsageError(f"Run {run!r} has no per-query scores for metric {metric!r}.")
            array = np.asarray(per_metric[metric], dtype=np.float64)
            if array.ndim != 1:
                raise UsageError(
                    f"Scores for run {run!r}, metric {metric!r} must be a 1-D array with one "
                    f"entry per query. Got shape {array.shape}."
                )
            if n is None:
                n = array.size
            elif array.size != n:
                raise UsageError(
                    f"Every run must be scored on the same queries in the same order: run "
                    f"{run!r}, metric {metric!r} has {array.size} queries, expected {n}."
                )
            if not np.isfinite(array).all():
                raise UsageError(
                    f"Scores for run {run!r}, metric {metric!r} contain NaN or infinite values; "
                    "a query a run missed scores 0, it is not missing."
                )
            arrays[run, metric] = array
    if not n:
        raise UsageError("There are no queries to compare: the score arrays are empty.")
    return runs, metrics, n, arrays


def compare_runs(
    scores: Mapping[str, Mapping[str, np.ndarray]],
    metrics: Sequence[str],
    baseline: str | None = None,
    level: float = 0.95,
    alpha: float = 0.05,
    n_resamples: int = DEFAULT_RESAMPLES,
    rng: np.random.Generator | int | None = None,
) -> list[Comparison]:
    """Compare runs on the same queries: every run against ``baseline``, or all pairs.

    ``scores`` maps run name -> metric name -> per-query array (same query order for all).
    With ``baseline=None`` every pair is compared, the earlier run in ``scores`` acting as the
    baseline. Results come pair by pair, metrics in the order given; Holm's correction runs
    across all of them. The bootstrap draw comes first from ``rng``, then the sign flips.
    """
    level = check_level(level)
    if isinstance(alpha, bool) or not isinstance(alpha, numbers.Real) or not 0 < alpha < 1:
        raise invalid_parameter("alpha", "a number strictly between 0 and 1, such as 0.05", alpha)
    alpha = float(alpha)
    n_resamples = check_resamples(n_resamples)
    generator, seed = resolve_rng(rng)
    runs, metrics, n, arrays = _validated(scores, metrics, baseline)
    if baseline is None:
        pairs = [(a, b) for i, a in enumerate(runs) for b in runs[i + 1:]]
    else:
        pairs = [(baseline, r) for r in runs if r != baseline]
    jobs = [(base, run, metric) for base, run in pairs for metric in metrics]
    diffs = np.column_stack([paired_differences(arrays[run, m], arrays[base, m]) for base, run, m in jobs])
    diffs[np.abs(diffs) <= ZERO_TOLERANCE] = 0.0

    intervals = bca_intervals(diffs, level, n_resamples, generator)

    p_values, tests, monte_carlo = closed_form_p_values(diffs)
    if monte_carlo:
        p_values[monte_carlo] = _random_sign_flips(diffs[:, monte_carlo], n_resamples, generator)
    return build_comparisons(jobs, diffs, intervals, p_values, tests, level=level, alpha=alpha,
                             n_resamples=n_resamples, seed=seed)


def closed_form_p_values(diffs: np.ndarray) -> tuple[np.ndarray, list[str], list[int]]:
    """p-values of the columns with a closed-form or enumerated test, the test names, and the
    columns left for the Monte Carlo sign flips (their p is filled in by the caller)."""
    n_cols = diffs.shape[1]
    p_values = np.ones(n_cols)
    tests = ["none (all ties)"] * n_cols
    monte_carlo = []
    for j in range(n_cols):
        nonzero = _nonzero(diffs[:, j])
        if nonzero.size == 0:
            continue
        if _equal_sizes(nonzero) or nonzero.size <= EXACT_MAX_NONZERO:
            p_values[j], tests[j] = paired_p_value(diffs[:, j])
        else:
            monte_carlo.append(j)
            tests[j] = "sign-flip monte carlo mid-p"
    return p_values, tests, monte_carlo


def build_comparisons(
    jobs: Sequence[tuple[str, str, str]], diffs: np.ndarray, intervals: Sequence[Interval], p_values: np.ndarray,
    tests: Sequence[str], *, level: float, alpha: float, n_resamples: int, seed: int | None,
    t_test_p: Sequence[float] | None = None,
) -> list[Comparison]:
    """`Comparison` objects from the per-job differences, intervals and raw p-values (Holm applied here).

    ``t_test_p``: each job's paired t-test p-value when already known (else computed from ``diffs``)."""
    n = diffs.shape[0]
    adjusted = holm(p_values) if len(jobs) > 1 else np.asarray(p_values, dtype=np.float64).copy()
    out = []
    for j, (base, run, metric) in enumerate(jobs):
        d = diffs[:, j]
        wins, losses = int((d > 0).sum()), int((d < 0).sum())
        ci = intervals[j]
        significant = bool(adjusted[j] < alpha)
        reliable = n >= MIN_RELIABLE_QUERIES and ci.method in ("bca", "constant")
        out.append(
            Comparison(
                baseline=base, run=run, metric=metric, diff=ci.point, ci_low=ci.low,
                ci_high=ci.high, p_value=float(p_values[j]), p_adjusted=float(adjusted[j]),
                significant=significant, wins=wins, ties=n - wins - losses, losses=losses,
                n=n, interval_note=ci.note if ci.method == "percentile" else None, test=tests[j], level=level,
                t_test_p=paired_t_p(d) if t_test_p is None else t_test_p[j],
                alpha=alpha, reliable=reliable, n_comparisons=len(jobs),
                n_resamples=n_resamples, seed=seed,
            )
        )
    return out
