"""Confidence intervals on per-query means: Wilson for 0/1 scores, BCa bootstrap otherwise.

Every function here works on per-query score arrays that the core has already computed (one
entry per query, the same query order for every run), so slices, paired comparisons and the
planner all reuse the same numbers.

Which interval a mean gets
--------------------------
* Every per-query score is 0 or 1 (``hit@k``, ``recall@1`` with one relevant doc): the
  **Wilson score interval**, closed form, no randomness.
* Anything else: the **BCa bootstrap** (bias-corrected and accelerated) over queries with
  ``n_resamples`` resamples (10,000 by default).
* Every query has the same non-0/1 score, or there is a single query: a **constant**
  interval ``[v, v]`` marked unreliable, because there is nothing to resample.

Decisions a user should know
----------------------------
* **Reproducible.** Randomness is passed in (``rng``: a ``Generator``, an ``int`` seed or
  ``None`` for seed 0); nothing global is touched. The seed is recorded on every result
  (``None`` when a ready-made ``Generator`` was passed, since its seed is not known).
* **One shared resample stream, exact sums** (`evalcore.stats.bootstrap`): every column is
  resampled from the same draw of queries and its resampled sums are exact, so a column gets
  *exactly* the same interval whether it is computed alone, beside 249 others, or from a whole
  curve at once (`evalcore.analyses.curves`), and identical columns are resampled once. Points are
  exact float64 means of the scores as given. Intervals from a draw shared with other statistics:
  `evalcore.stats.shared_draw`.
* **Ties in the bias correction.** ``z0 = Phi^-1(share of resampled means below the point
  + half the share equal to it)``, as SciPy's ``bootstrap`` does. Resampled means within
  1e-6 of the point (on the metric's 0..1 scale) count as equal, and the bootstrap bounds
  are rounded to 7 decimals (0.25, not 0.2500000000029).
* **Acceleration** comes from the jackknife, in closed form for the mean:
  ``a = sum(d^3) / (6 * sum(d^2)^1.5)`` with ``d = x - mean(x)``.
* **Where BCa is undefined** (every resampled mean lies on one side of the point, or the
  acceleration flips a bound, which only happens with very few queries) the plain
  percentile interval is returned instead,
  ``method="percentile"``, marked unreliable with a note saying so.
* **Reliable** means at least `MIN_RELIABLE_QUERIES` (50) queries and a non-degenerate
  method. Below that the interval is still returned, with ``reliable=False`` and a note
  ("only 12 queries: treat as a rough guide"), never hidden.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import asdict, dataclass
from statistics import NormalDist

import numpy as np

from ..errors import UsageError, invalid_parameter
from .bootstrap import resample_deviations

__all__ = [
    "BOUND_DECIMALS", "DEFAULT_RESAMPLES", "DEFAULT_SEED", "MIN_RELIABLE_QUERIES", "MIN_RESAMPLES", "TIE_TOLERANCE",
    "Interval", "as_score_matrix", "bca_bounds", "bca_interval_list", "bca_intervals", "check_level",
    "check_resamples", "constant_interval", "mean_interval", "mean_intervals", "ndtr", "ndtri", "resolve_rng",
    "wilson_interval",
]

DEFAULT_SEED = 0
"""Seed used when ``rng`` is None, so the same report made twice prints the same numbers."""

DEFAULT_RESAMPLES = 10_000
"""Bootstrap resamples per interval unless told otherwise."""

MIN_RESAMPLES = 100
"""Fewer resamples than this cannot place a 95% bound, so they are refused."""

MIN_RELIABLE_QUERIES = 50
"""Below this many queries an interval is reported but flagged as a rough guide."""

TIE_TOLERANCE = 1e-6
"""Resampled means this close to the point estimate count as ties in the BCa bias correction."""

BOUND_DECIMALS = 7
"""Bootstrap bounds are rounded to this many decimals: the precision of the float32 sums."""

_STANDARD_NORMAL = NormalDist()


def ndtr(x) -> np.ndarray:
    """Standard normal CDF, elementwise (the standard library's erfc; no SciPy import needed)."""
    values = np.asarray(x, dtype=np.float64)
    flat = [0.5 * math.erfc(-v / math.sqrt(2.0)) for v in values.reshape(-1).tolist()]
    return np.asarray(flat, dtype=np.float64).reshape(values.shape)


def ndtri(p) -> np.ndarray:
    """Standard normal quantile, elementwise, for 0 < p < 1 (``statistics.NormalDist.inv_cdf``).

    Agrees with ``scipy.special.ndtri`` to about 1e-15; the few values an interval needs do
    not justify importing SciPy, which costs about 0.3 s at every start of the CLI.
    """
    values = np.asarray(p, dtype=np.float64)
    flat = [_STANDARD_NORMAL.inv_cdf(v) for v in values.reshape(-1).tolist()]
    return np.asarray(flat, dtype=np.float64).reshape(values.shape)


@dataclass(frozen=True)
class Interval:
    """A mean over queries with its confidence interval and how it was obtained.

    ``method`` is ``"wilson"``, ``"bca"``, ``"percentile"`` (BCa undefined, see the module
    docs) or ``"constant"`` (nothing to resample). ``n_resamples`` and ``seed`` are None for
    methods that use no randomness.
    """

    point: float
    low: float
    high: float
    level: float
    method: str
    n: int
    n_resamples: int | None
    seed: int | None
    reliable: bool
    note: str | None = None

    @property
    def halfwidth(self) -> float:
        """Half the interval's width: the "plus or minus" a reader hears."""
        return (self.high - self.low) / 2

    def to_dict(self) -> dict[str, object]:
        """Plain types only, ready for JSON."""
        return asdict(self)


def resolve_rng(rng: np.random.Generator | int | None) -> tuple[np.random.Generator, int | None]:
    """The generator to draw from and the seed to record (None if the caller passed a Generator)."""
    if rng is None:
        return np.random.default_rng(DEFAULT_SEED), DEFAULT_SEED
    if isinstance(rng, np.random.Generator):
        return rng, None
    if isinstance(rng, numbers.Integral) and not isinstance(rng, bool) and int(rng) >= 0:
        return np.random.default_rng(int(rng)), int(rng)
    raise invalid_parameter("rng", "a numpy Generator, an integer seed >= 0 or None", rng)


def check_level(level: float, name: str = "level") -> float:
    """A confidence level strictly between 0 and 1 (0.95, not 95)."""
    if isinstance(level, bool) or not isinstance(level, numbers.Real) or not 0 < level < 1:
        raise invalid_parameter(name, "a number strictly between 0 and 1, such as 0.95", level)
    return float(level)


def check_resamples(n_resamples: int, name: str = "n_resamples") -> int:
    """A resample count: an integer >= `MIN_RESAMPLES`."""
    if (
        isinstance(n_resamples, bool)
        or not isinstance(n_resamples, numbers.Integral)
        or n_resamples < MIN_RESAMPLES
    ):
        raise invalid_parameter(name, f"an integer >= {MIN_RESAMPLES}", n_resamples)
    return int(n_resamples)


def as_score_matrix(scores: object, name: str = "scores") -> np.ndarray:
    """Per-query scores as a float64 (n_queries, n_columns) array; a clear error otherwise."""
    try:
        array = np.asarray(scores, dtype=np.float64)
    except (TypeError, ValueError):
        raise invalid_parameter(name, "numeric per-query scores", type(scores).__name__) from None
    if array.ndim != 2:
        raise invalid_parameter(
            name, "a 2-D array shaped (n_queries, n_columns)", f"shape {array.shape}"
        )
    if array.shape[0] < 1 or array.shape[1] < 1:
        raise invalid_parameter(name, "at least one query and one column", f"shape {array.shape}")
    if not np.isfinite(array).all():
        bad = int((~np.isfinite(array)).sum())
        raise UsageError(
            f"The {name!r} parameter must hold finite numbers only. Got {bad} NaN or infinite "
            "value(s); a query a run missed scores 0, it is not missing."
        )
    return array


def _two_sided_z(level: float) -> float:
    return float(ndtri(0.5 + level / 2))


def _small_note(n: int) -> str | None:
    if n < MIN_RELIABLE_QUERIES:
        noun = "query" if n == 1 else "queries"
        return f"only {n} {noun}: treat as a rough guide"
    return None


def wilson_interval(successes: int, n: int, level: float = 0.95) -> Interval:
    """Wilson score interval for ``successes`` out of ``n`` (no continuity correction).

    8 of 10 at 95% gives 0.4902 to 0.9433. Unlike the normal approximation it never leaves
    [0, 1] and keeps a sensible width at 0 or n successes.
    """
    level = check_level(level)
    if isinstance(n, bool) or not isinstance(n, numbers.Integral) or n < 1:
        raise invalid_parameter("n", "an integer >= 1", n)
    if (
        isinstance(successes, bool)
        or not isinstance(successes, numbers.Integral)
        or not 0 <= successes <= n
    ):
        raise invalid_parameter("successes", f"an integer between 0 and n = {n}", successes)
    n = int(n)
    p = int(successes) / n
    z = _two_sided_z(level)
    z2 = z * z
    denom = 1 + z2 / n
    centre = (p + z2 / (2 * n)) / denom
    half = z * np.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / denom
    # Exact at the edges: rounding must not push 0/n or n/n outside the interval.
    low = 0.0 if successes == 0 else max(0.0, centre - half)
    high = 1.0 if successes == n else min(1.0, centre + half)
    note = _small_note(n)
    return Interval(
        point=p, low=float(low), high=float(high), level=level, method="wilson", n=n,
        n_resamples=None, seed=None, reliable=note is None, note=note,
    )


def constant_interval(value: float, n: int, level: float) -> Interval:
    """``[value, value]``, marked unreliable: every query scores the same (or there is one), nothing to resample."""
    reason = (
        "only 1 query: no interval can be estimated"
        if n == 1
        else "every query has the same score, so resampling cannot show any spread"
    )
    return Interval(
        point=value, low=value, high=value, level=level, method="constant", n=n,
        n_resamples=None, seed=None, reliable=False, note=reason,
    )


def _unique_columns(matrix: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Indices of the first copy of each distinct column, and each column's copy number."""
    first: dict[bytes, int] = {}
    keep: list[int] = []
    inverse = np.empty(matrix.shape[1], dtype=np.intp)
    for j in range(matrix.shape[1]):
        key = np.ascontiguousarray(matrix[:, j]).tobytes()
        slot = first.get(key)
        if slot is None:
            slot = first[key] = len(keep)
            keep.append(j)
        inverse[j] = slot
    return np.asarray(keep, dtype=np.intp), inverse


def _interpolated_quantiles(values: np.ndarray, probs: np.ndarray) -> np.ndarray:
    """Quantiles ``probs[i, j]`` of column ``j`` of ``values`` (NumPy's 'linear' rule), one row per ``i``.

    Only the two order statistics around each quantile are needed, so each column is
    partitioned at those few ranks instead of sorted: the same values, several times faster.
    """
    last = values.shape[0] - 1
    position = np.clip(probs, 0.0, 1.0) * last
    below = np.floor(position).astype(np.intp)
    above = np.minimum(below + 1, last)
    frac = position - below
    lo = np.empty(probs.shape)
    hi = np.empty(probs.shape)
    for j in range(values.shape[1]):
        ranks = np.unique(np.concatenate([below[:, j], above[:, j]]))
        ordered = np.partition(values[:, j], ranks)
        lo[:, j] = ordered[below[:, j]]
        hi[:, j] = ordered[above[:, j]]
    return lo + frac * (hi - lo)


def bca_bounds(
    scores: np.ndarray, deviations: np.ndarray, level: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """BCa bounds of each column's mean from its resampled means: (low, high, defined).

    ``scores`` is (n_queries, n_cols) with columns that vary; ``deviations`` is
    (n_resamples, n_cols) resampled means minus the point, as `resample_deviations` returns,
    so one draw can serve several statistics. Where BCa is undefined (``defined`` False) the
    percentile bounds are returned instead. Bounds keep the digits float32 sums support and
    never leave the data's range (no resampled mean can).
    """
    scores = np.asfortranarray(scores, dtype=np.float64)  # per-column (pairwise) sums: same alone or in company
    means = scores.mean(axis=0)
    centred = scores - means
    n_resamples = deviations.shape[0]
    # Bias correction: share below the point, ties counted half (SciPy's convention).
    below = (deviations < -TIE_TOLERANCE).sum(axis=0)
    equal = (np.abs(deviations) <= TIE_TOLERANCE).sum(axis=0)
    share = (below + 0.5 * equal) / n_resamples
    # Acceleration: the jackknife of a mean in closed form.
    ss = (centred**2).sum(axis=0)
    accel = (centred**3).sum(axis=0) / (6.0 * ss**1.5)

    tail = (1 - level) / 2
    z_tails = ndtri(np.array([tail, 1 - tail]))[:, None]
    defined = (share > 0) & (share < 1)
    z0 = np.where(defined, ndtri(np.clip(share, 1e-12, 1 - 1e-12)), 0.0)
    shifted = z0 + z_tails
    denom = 1 - accel * shifted
    defined &= (denom > 0).all(axis=0)
    bca_probs = ndtr(z0 + shifted / np.where(denom > 0, denom, 1.0))
    probs = np.where(defined, bca_probs, ndtr(z_tails))  # else the percentile interval

    low, high = means + _interpolated_quantiles(np.asarray(deviations, dtype=np.float64), probs)
    low = np.maximum(np.round(low, BOUND_DECIMALS), scores.min(axis=0))
    high = np.minimum(np.round(high, BOUND_DECIMALS), scores.max(axis=0))
    return low, high, defined


def _bca_columns(
    matrix: np.ndarray, level: float, n_resamples: int, rng: np.random.Generator, seed: int | None
) -> list[Interval]:
    """BCa intervals for columns that vary (at least two distinct values, n >= 2)."""
    keep, inverse = _unique_columns(matrix)
    unique = matrix[:, keep]
    results = bca_interval_list(unique, resample_deviations(unique, n_resamples, rng), level, n_resamples, seed)
    return [results[u] for u in inverse]


def bca_interval_list(
    scores: np.ndarray, deviations: np.ndarray, level: float, n_resamples: int, seed: int | None
) -> list[Interval]:
    """`Interval` objects for columns that vary, from their resampled deviations (`resample_deviations`)."""
    n = scores.shape[0]
    means = np.asfortranarray(scores, dtype=np.float64).mean(axis=0)
    low, high, defined = bca_bounds(scores, deviations, level)
    small = _small_note(n)
    results = []
    for u in range(scores.shape[1]):
        if defined[u]:
            method, note = "bca", small
        else:
            method = "percentile"
            note = "BCa undefined here (the resamples are too lopsided); percentile interval shown"
            if small:
                note = f"{small}; {note}"
        results.append(
            Interval(
                point=float(means[u]), low=float(low[u]), high=float(high[u]), level=level,
                method=method, n=n, n_resamples=n_resamples, seed=seed,
                reliable=bool(defined[u]) and small is None, note=note,
            )
        )
    return results


def _intervals(
    scores: object,
    level: float,
    n_resamples: int,
    rng: np.random.Generator | int | None,
    *,
    wilson: bool,
    name: str,
) -> list[Interval]:
    matrix = as_score_matrix(scores, name)
    level = check_level(level)
    n_resamples = check_resamples(n_resamples)
    generator, seed = resolve_rng(rng)
    n, n_cols = matrix.shape
    binary = ((matrix == 0) | (matrix == 1)).all(axis=0) if wilson else np.zeros(n_cols, bool)
    constant = (matrix == matrix[0]).all(axis=0)
    out: list[Interval | None] = [None] * n_cols
    boot = [j for j in range(n_cols) if not binary[j] and not constant[j]]
    for j in range(n_cols):
        if binary[j]:
            out[j] = wilson_interval(int(matrix[:, j].sum()), n, level)
        elif constant[j]:
            out[j] = constant_interval(float(matrix[0, j]), n, level)
    if boot:
        for j, interval in zip(boot, _bca_columns(matrix[:, boot], level, n_resamples, generator, seed)):
            out[j] = interval
    return out  # type: ignore[return-value]


def mean_intervals(
    scores: np.ndarray,
    level: float = 0.95,
    n_resamples: int = DEFAULT_RESAMPLES,
    rng: np.random.Generator | int | None = None,
) -> list[Interval]:
    """One interval per column of ``scores`` (n_queries, n_columns), in column order.

    Wilson where every score in the column is 0 or 1, BCa bootstrap otherwise, all columns
    sharing one draw of resampled queries (see the module docs). Works for any subset of rows
    with at least one query, so slices reuse it directly.
    """
    return _intervals(scores, level, n_resamples, rng, wilson=True, name="scores")


def mean_interval(
    values: np.ndarray,
    level: float = 0.95,
    n_resamples: int = DEFAULT_RESAMPLES,
    rng: np.random.Generator | int | None = None,
) -> Interval:
    """`mean_intervals` for a single 1-D array of per-query scores."""
    array = np.asarray(values, dtype=np.float64)
    if array.ndim != 1:
        raise invalid_parameter("values", "a 1-D array of per-query scores", f"shape {array.shape}")
    return mean_intervals(array[:, None], level, n_resamples, rng)[0]


def bca_intervals(
    scores: np.ndarray,
    level: float = 0.95,
    n_resamples: int = DEFAULT_RESAMPLES,
    rng: np.random.Generator | int | None = None,
) -> list[Interval]:
    """BCa bootstrap interval for every column, never Wilson: for per-query differences.

    Same draw and conventions as `mean_intervals`, so the same seed resamples the same queries.
    """
    return _intervals(scores, level, n_resamples, rng, wilson=False, name="scores")
