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
* **One shared resample stream, exact sums.** A call draws one matrix of query indices,
  ``rng.integers(0, n, size=(n_resamples, n), dtype=np.int32)``, in chunks of rows so memory
  stays bounded, and reuses it for every column. Scores are first put on a fine binary grid
  (`on_grid`: steps of about 1e-11 for 10,000 scores in [0, 1], far below any digit shown),
  which makes every resampled sum exact in float64 whatever the order of the additions. So a
  column gets *exactly* the same interval whether it is computed alone, beside 249 others, or
  from a whole curve at once (`evalcore.analyses.curves` sums the k = 1..K columns through their sparse
  increments), and identical columns are resampled once. Points are exact float64 means of
  the scores as given.
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
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from statistics import NormalDist

import numpy as np

from ..errors import UsageError, invalid_parameter

DEFAULT_SEED = 0
"""Seed used when ``rng`` is None, so two runs of the same report print the same numbers."""

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

_CHUNK_ELEMENTS = 1 << 22
"""Index draws held in memory at once (4M int32 + 4M float64 counts = 48 MB)."""

GRID_BITS = 50
"""`on_grid` keeps every resampled sum below 2**50 grid steps: exact in float64 (53 bits), with
room for sums of differences of two columns."""

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


def _constant_interval(value: float, n: int, level: float) -> Interval:
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


def on_grid(scores: np.ndarray, n: int | None = None) -> np.ndarray:
    """Scores rounded to a binary grid on which any sum of ``count * score`` is exact in float64.

    The step of column ``j`` is ``2**(e_j + bit_length(n) - GRID_BITS)`` with ``2**e_j`` the
    smallest power of two >= its largest absolute value (at least 1), so a resampled sum,
    at most ``n * 2**e_j``, fits in the float64 mantissa. For scores in [-1, 1] and 10,000
    queries the step is 2**-36 (about 1.5e-11); every such column shares that grid, so
    differences of columns stay on it.
    """
    values = np.asarray(scores, dtype=np.float64)
    n = values.shape[0] if n is None else n
    step = np.exp2(_grid_exponents(values) + int(n).bit_length() - GRID_BITS)
    return np.round(values / step) * step


SPARSE_SHARE = 0.05
"""A column that differs from the column before it in fewer than this share of queries is summed
through those differences (a curve over k changes only where a relevant doc enters)."""


def _grid_exponents(values: np.ndarray) -> np.ndarray:
    """``ceil(log2(max |x|))`` per column, at least 0: the scale `on_grid` gives each column."""
    top = np.maximum(np.abs(values).max(axis=0) if values.size else np.zeros(values.shape[1:]), 1.0)
    mantissa, power = np.frexp(top)  # top = mantissa * 2**power, mantissa in [0.5, 1)
    return power - (mantissa == 0.5)


class ExactProducts:
    """``rows @ gridded`` for many row blocks, exact on `on_grid`'s grid.

    A column that differs from its left neighbour in few queries (``recall@k`` after
    ``recall@k-1``) is computed as that neighbour plus the product with the few differences;
    the others by a dense matrix product. Every partial sum stays on the grid and within its
    bound, so both ways are exact and the split never changes a number.
    """

    def __init__(self, gridded: np.ndarray) -> None:
        self.n, self.n_cols = gridded.shape
        n_cols = self.n_cols
        curve = np.zeros(n_cols, dtype=bool)
        diffs = None
        if n_cols > 1:
            diffs = np.diff(gridded, axis=1)  # column j + 1 minus column j, computed once
            changes = np.count_nonzero(diffs, axis=0)
            exponents = _grid_exponents(gridded)
            curve[1:] = (changes < SPARSE_SHARE * self.n) & (exponents[1:] == exponents[:-1])
        self.curve = np.flatnonzero(curve)
        self.dense = np.flatnonzero(~curve)
        self.values = np.ascontiguousarray(gridded[:, self.dense])
        # Chains of consecutive curve columns; each hangs from the dense column on its left.
        breaks = np.flatnonzero(np.diff(self.curve) != 1) + 1
        self.chains = [(int(a), int(b)) for a, b in zip(np.r_[0, breaks], np.r_[breaks, len(self.curve)]) if b > a]
        self.anchors = [int(np.searchsorted(self.dense, self.curve[a] - 1)) for a, _ in self.chains]
        if len(self.curve):
            import scipy.sparse as sparse  # only for curve columns: the CLI's few ks rarely have any

            self.steps = sparse.csr_matrix(diffs[:, self.curve - 1].T)

    def __call__(self, columns: np.ndarray, out: np.ndarray) -> None:
        """Write ``columns.T @ gridded`` into ``out`` (m, n_cols); ``columns`` is (n, m), C-ordered,
        each column one resample's counts (or flip bits): the transposed layout the sparse product reads."""
        if not len(self.curve):
            np.matmul(columns.T, self.values, out=out)
            return
        dense = columns.T @ self.values
        stepped = (self.steps @ columns).T
        out[:, self.dense] = dense
        for (a, b), anchor in zip(self.chains, self.anchors):
            # A chain is a run of consecutive columns: a slice of ``out``, filled in place.
            target = out[:, self.curve[a]:self.curve[b - 1] + 1]
            np.cumsum(stepped[:, a:b], axis=1, out=target)
            target += dense[:, [anchor]]


def resample_counts(draw: np.ndarray, n: int, out: np.ndarray | None = None) -> np.ndarray:
    """How often each query appears in each resample: (n, rows) float64 from a (rows, n) index draw.

    Counted row by row into small integers (a count is at most the resample size ``n``), which
    are then turned over and widened in one pass: a quarter of the memory traffic of
    transposing float64 counts. ``out`` is a C-ordered (n, rows) float64 array to fill (see
    `ChunkBuffer`): a fresh one every chunk costs more in page faults than the counting.
    """
    rows = draw.shape[0]
    counts = np.empty((rows, n), dtype=np.uint16 if n < 1 << 16 else np.uint32)
    for r in range(rows):
        counts[r] = np.bincount(draw[r], minlength=n)
    if out is None:
        return counts.T.astype(np.float64, order="C")
    np.copyto(out, counts.T)
    return out


class ChunkBuffer:
    """One float64 allocation reused for every chunk of a resampling loop.

    Each chunk's (n, rows) matrix is a C-ordered view of the same memory. Allocating it anew for
    every chunk touches fresh pages each time; on this project's machines those page faults cost
    several times the arithmetic done in them.
    """

    def __init__(self, n: int, max_rows: int) -> None:
        self.n = n
        self._flat = np.empty(n * max_rows, dtype=np.float64)

    def view(self, rows: int) -> np.ndarray:
        """A C-ordered (n, rows) view of the buffer (``rows`` at most the ``max_rows`` given)."""
        return self._flat[:self.n * rows].reshape(self.n, rows)


def prefetched(draw, sizes: list[int]):
    """``draw(rows)`` for each of ``sizes``, in order, the next one drawn on a worker thread meanwhile.

    NumPy releases the GIL while it fills a draw, so the caller's counting and products of chunk i
    overlap the draw of chunk i+1. Draws stay in order from the one generator, so the stream, and
    every result, are exactly those of a plain loop.
    """
    if len(sizes) < 3:
        for rows in sizes:
            yield draw(rows)
        return
    with ThreadPoolExecutor(max_workers=1) as worker:
        pending = worker.submit(draw, sizes[0])
        for i in range(len(sizes)):
            ready = pending.result()
            if i + 1 < len(sizes):
                pending = worker.submit(draw, sizes[i + 1])
            yield ready


def resample_sums(
    gridded: np.ndarray, n_resamples: int, rng: np.random.Generator, chunk_rows: int | None = None,
    product: ExactProducts | None = None,
) -> np.ndarray:
    """Resampled sums of each column of ``gridded`` (on `on_grid`'s grid), shape (n_resamples, n_cols).

    Resample ``b`` uses row ``b`` of ``rng.integers(0, n, size=(n_resamples, n), dtype=np.int32)``,
    drawn ``chunk_rows`` rows at a time (NumPy's stream does not depend on the split). Each
    row's index counts (``np.bincount``) times the scores give every column's sum; on the grid
    these sums are exact, so they do not depend on the order of the additions (`ExactProducts`).
    ``product`` is ``ExactProducts(gridded)`` when the caller already has it (to share it with
    `evalcore.stats.paired.flip_sums`).
    """
    n, n_cols = gridded.shape
    if chunk_rows is None:
        chunk_rows = max(1, min(n_resamples, _CHUNK_ELEMENTS // n))
    if product is None:
        product = ExactProducts(np.asarray(gridded, dtype=np.float64))
    out = np.empty((n_resamples, n_cols), dtype=np.float64)
    starts = list(range(0, n_resamples, chunk_rows))
    sizes = [min(chunk_rows, n_resamples - start) for start in starts]

    def draw(rows: int) -> np.ndarray:
        return rng.integers(0, n, size=(rows, n), dtype=np.int32)

    buffer = ChunkBuffer(n, max(sizes, default=0))
    for start, rows, indices in zip(starts, sizes, prefetched(draw, sizes)):
        product(resample_counts(indices, n, buffer.view(rows)), out[start:start + rows])
    return out


def deviations_from_sums(sums: np.ndarray, gridded: np.ndarray) -> np.ndarray:
    """Resampled means minus the point, from `resample_sums` (one rounding, so exact sums give equal results)."""
    n = gridded.shape[0]
    return (sums - gridded.sum(axis=0)) / n


def resample_deviations(
    scores: np.ndarray, n_resamples: int, rng: np.random.Generator, chunk_rows: int | None = None
) -> np.ndarray:
    """Bootstrap means minus the point, shape (n_resamples, n_columns), float64.

    ``scores`` are per-query scores (or the same minus each column's mean: the deviations
    do not depend on a shift). They are put on `on_grid`'s grid and summed exactly by
    `resample_sums`, so a column's deviations do not depend on its neighbours or on
    ``chunk_rows``.
    """
    gridded = on_grid(scores)
    return deviations_from_sums(resample_sums(gridded, n_resamples, rng, chunk_rows), gridded)


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


def column_kinds(matrix: np.ndarray, wilson: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """Which columns get a Wilson interval (every score 0 or 1) and which are constant; the rest are bootstrapped."""
    n_cols = matrix.shape[1]
    binary = ((matrix == 0) | (matrix == 1)).all(axis=0) if wilson else np.zeros(n_cols, bool)
    constant = (matrix == matrix[0]).all(axis=0) & ~binary
    return binary, constant


def interval_columns(
    matrix: np.ndarray, deviations: np.ndarray | None, level: float, n_resamples: int, seed: int | None,
    *, wilson: bool = True,
) -> list[Interval]:
    """`mean_intervals` (or with ``wilson=False`` `bca_intervals`) from deviations drawn elsewhere.

    ``deviations`` is (n_resamples, n_cols) as `resample_deviations` returns for the same
    seed (columns that are 0/1 or constant are not read; None when there are none to bootstrap).
    """
    n = matrix.shape[0]
    binary, constant = column_kinds(matrix, wilson)
    out: list[Interval | None] = [None] * matrix.shape[1]
    for j in np.flatnonzero(binary):
        out[j] = wilson_interval(int(matrix[:, j].sum()), n, level)
    for j in np.flatnonzero(constant):
        out[j] = _constant_interval(float(matrix[0, j]), n, level)
    boot = np.flatnonzero(~binary & ~constant)
    if len(boot):
        if deviations is None:
            raise invalid_parameter("deviations", "resampled means for columns that are not 0/1 or constant", None)
        for j, interval in zip(boot, bca_interval_list(matrix[:, boot], deviations[:, boot], level, n_resamples,
                                                       seed)):
            out[j] = interval
    return out  # type: ignore[return-value]


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
            out[j] = _constant_interval(float(matrix[0, j]), n, level)
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
