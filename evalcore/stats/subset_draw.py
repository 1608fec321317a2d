"""Means over subsets of one set of queries, with intervals, from one draw of resampled queries.

An answers report averages each grade over the queries that have it, and compares two runs over the queries both
graded: many columns, each with its own gaps. Drawing resamples for every distinct set of queries would cost a draw
each; instead one draw serves them all:

* **One draw** over the ``n`` queries, the house's stream (`evalcore.stats.bootstrap`:
  ``rng.integers(0, n, size=(rows, n))`` in blocks, counted by `count_rows`), so the same seed resamples the same
  queries as every other interval in evalcore.
* **A column with a value for every query** gets the house's resampled means exactly (the exact sums of
  `on_grid`'s grid), hence exactly the interval `mean_intervals` (or `bca_intervals`) gives it alone.
* **A column with gaps**: a resample's mean is over the drawn queries that have a value (the sum of count x value
  over the sum of counts, both exact), so the column keeps its own n; a resample that drew none of them has no mean
  and is left out.
* **Intervals** as the house makes them (`evalcore.stats.intervals`): Wilson where every value is 0 or 1 (``wilson``),
  constant where every value is the same, else BCa on the column's own values from its resampled means.
* ``each_block(counts, start)`` lets other statistics read the same counts (rows x n drawn counts of resamples
  ``start`` onwards, whole numbers in float64, counted straight into the product's buffer: read them before the
  call returns): the rank correlations of `evalcore.analyses.answers`.
* **Few products** (`DifferenceProducts`): a paired difference is, on the queries both runs graded, one grade
  minus the other, and a column's mask of queries is all ones but for its gaps. Given those hints (``differences``),
  such a column's resampled sum is the two grades' sums subtracted plus the sum of what differs (the queries one run
  graded and not the other, a gap), gathered from the few queries where anything differs: one matrix product over
  the grades instead of over every column. Every term is on the grid and exact, so the sums are those of the full
  product, to the last bit; a hint that does not hold on few queries is simply not used.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from .bootstrap import count_rows, on_grid, prefetched
from .intervals import Interval, bca_interval_list, constant_interval, wilson_interval

_BLOCK_ELEMENTS = 1 << 22
"""Drawn counts held at once (rows x n), as float64: 32 MB."""
SPARSE_SHARE = 0.15
"""A hinted column is summed through its remainder when that differs from zero on at most this share of queries
(gathering a query's count costs a few times what multiplying it in place does)."""
GATHERED_AT_MOST = 0.25
"""The queries gathered for every remainder together stay below this share of queries, else nothing is hinted."""


def subset_deviations(values: np.ndarray, n_resamples: int, rng: np.random.Generator,
                      each_block: Callable[[np.ndarray, int], None] | None = None,
                      differences: Sequence[tuple[int, int] | None] | None = None) -> np.ndarray:
    """Resampled means minus the point of each column of ``values`` (n, cols; NaN: no value), (n_resamples, cols),
    NaN in a resample that drew no query with a value (module docs). ``differences``: per column, (a, b) when it is
    column b minus column a wherever it has a value (a paired difference), else None; a hint for speed only."""
    values = np.asarray(values, dtype=np.float64)
    n, n_cols = values.shape
    present = ~np.isnan(values)
    full = present.all(axis=0)
    gridded = on_grid(np.where(present, values, 0.0))
    gaps, mask_of = _distinct_columns(present[:, ~full])
    matrix = np.hstack([gridded, gaps.T.astype(np.float64)])
    hints = list(differences) if differences is not None else [None] * n_cols
    hints = [(None, j) if hint is None else hint for j, hint in enumerate(hints)] + [(None, n_cols)] * len(gaps)
    product = DifferenceProducts(matrix, np.hstack([gridded, np.ones((n, 1))]), hints)
    sums = np.empty((n_resamples, matrix.shape[1]))
    rows = max(1, min(n_resamples, _BLOCK_ELEMENTS // max(n, 1)))
    sizes = [min(rows, n_resamples - start) for start in range(0, n_resamples, rows)]
    widened = np.empty((max(sizes, default=0), n))  # one buffer: a fresh one per block costs page faults

    def draw(count: int) -> np.ndarray:
        return rng.integers(0, n, size=(count, n), dtype=np.int32)

    start = 0
    for size, indices in zip(sizes, prefetched(draw, sizes)):
        counts = count_rows(indices, n, out=widened[:size])
        product(counts.T, sums[start:start + size])  # exact: whole counts times values on the grid
        if each_block is not None:
            each_block(counts, start)
        start += size
    deviations = np.empty((n_resamples, n_cols))
    totals = gridded.sum(axis=0)
    deviations[:, full] = (sums[:, :n_cols][:, full] - totals[full]) / n  # the house's `deviations_from_sums`
    gappy = np.flatnonzero(~full)
    if len(gappy):
        drawn = sums[:, n_cols:][:, mask_of.reshape(-1)]
        with np.errstate(invalid="ignore", divide="ignore"):
            means = sums[:, gappy] / drawn
        deviations[:, gappy] = np.where(drawn > 0, means - totals[gappy] / present[:, gappy].sum(axis=0), np.nan)
    return deviations


def _distinct_columns(masks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct columns of a boolean (n, c) array as rows (k, n), in the order first met, and which of them each
    column is: ``np.unique(masks.T, axis=0, return_inverse=True)`` but for the order, without sorting rows of n."""
    first: dict[bytes, int] = {}
    mask_of = np.array([first.setdefault(column.tobytes(), j) for j, column in enumerate(masks.T)], dtype=np.intp)
    picked = np.unique(mask_of)  # the first column of each kind, in the order met
    return masks[:, picked].T, np.searchsorted(picked, mask_of)


class DifferenceProducts:
    """``columns.T @ targets`` exactly, for gridded ``targets`` (n, t) of which most are, but on few queries,
    ``bases[:, b] - bases[:, a]`` (``hints[j]`` = (a, b), either None for nothing; ``bases`` gridded, (n, k)).

    One dense product over the bases a hint uses and the targets without a usable hint, plus, for the hinted ones,
    the product of the few gathered queries with each remainder (target minus its bases). A hint is used when the
    three columns share one grid step (their values are whole multiples of it, every sum exact) and its remainder is
    non-zero on at most `SPARSE_SHARE` of the queries; all of them while the gathered queries stay within
    `GATHERED_AT_MOST`. Called as `evalcore.stats.bootstrap.ExactProducts` is (``columns`` (n, rows), ``out``
    (rows, t)), so `evalcore.stats.paired.flip_sums` takes it as its product."""

    def __init__(self, targets: np.ndarray, bases: np.ndarray, hints: Sequence[tuple[int | None, int | None] | None]):
        n = targets.shape[0]
        scale_t, scale_b = _scales(targets), _scales(bases)
        derived, remainders = [], []
        for j, hint in enumerate(hints):
            if hint is None:
                continue
            a, b = hint
            combined = np.zeros(n) if b is None else bases[:, b].copy()
            if a is not None:
                combined -= bases[:, a]
            same_grid = all(scale_b[i] == scale_t[j] for i in (a, b) if i is not None)
            remainder = targets[:, j] - combined
            if same_grid and np.count_nonzero(remainder) <= SPARSE_SHARE * n:
                derived.append((j, a, b))
                remainders.append(remainder)
        gathered = np.flatnonzero(np.any(np.column_stack(remainders), axis=1)) if remainders else np.empty(0, int)
        if len(gathered) > GATHERED_AT_MOST * n:
            derived, remainders, gathered = [], [], np.empty(0, int)
        hinted = {j for j, _, _ in derived}
        self.dense = [j for j in range(targets.shape[1]) if j not in hinted]
        used = sorted({i for _, a, b in derived for i in (a, b) if i is not None})
        self.base_at = {i: len(self.dense) + k for k, i in enumerate(used)}
        # Kept turned over: ``matrix.T @ columns`` is the product BLAS runs fastest (`ExactProducts.__call__`).
        self.matrix_t = np.ascontiguousarray(np.hstack([targets[:, self.dense], bases[:, used]]).T)
        self.derived, self.gathered = derived, gathered
        self.remainders_t = np.ascontiguousarray(np.column_stack(remainders)[gathered].T) if remainders else \
            np.empty((0, 0))

    def __call__(self, columns: np.ndarray, out: np.ndarray) -> None:
        """Write ``columns.T @ targets`` into ``out`` (rows, t); ``columns`` is (n, rows), any layout."""
        sums = self.matrix_t @ columns  # (dense + bases, rows): exact, so the same numbers either way round
        out[:, self.dense] = sums[:len(self.dense)].T
        if not self.derived:
            return
        extra = self.remainders_t @ columns[self.gathered]
        for k, (j, a, b) in enumerate(self.derived):
            total = extra[k].copy()
            if b is not None:
                total += sums[self.base_at[b]]
            if a is not None:
                total -= sums[self.base_at[a]]
            out[:, j] = total


def _scales(gridded: np.ndarray) -> np.ndarray:
    """Each column's ``ceil(log2(max |x|))``, at least 0: columns alike here lie on one grid of `on_grid`'s."""
    top = np.maximum(np.abs(gridded).max(axis=0) if gridded.size else np.zeros(gridded.shape[1]), 1.0)
    mantissa, power = np.frexp(top)
    return power - (mantissa == 0.5)


def subset_intervals(values: np.ndarray, deviations: np.ndarray | None, level: float, n_resamples: int,
                     seed: int | None, *, wilson: bool = True) -> list[Interval | None]:
    """Each column's interval over its own values (NaN: no value) from `subset_deviations`; None for a column with
    no value at all. ``deviations`` may be None when no column needs the bootstrap."""
    values = np.asarray(values, dtype=np.float64)
    out: list[Interval | None] = []
    for j in range(values.shape[1]):
        own = values[:, j][~np.isnan(values[:, j])]
        if not len(own):
            out.append(None)
        elif wilson and ((own == 0) | (own == 1)).all():
            out.append(wilson_interval(int(own.sum()), len(own), level))
        elif (own == own[0]).all():
            out.append(constant_interval(float(own[0]), len(own), level))
        else:
            drawn = deviations[:, j][np.isfinite(deviations[:, j])]
            out.append(bca_interval_list(own[:, None], drawn[:, None], level, len(drawn), seed)[0])
    return out


def needs_draw(values: np.ndarray, wilson: bool = True) -> bool:
    """Whether any column of ``values`` (NaN: no value) needs resampled means: not 0/1 (with ``wilson``), not
    constant."""
    for column in np.asarray(values, dtype=np.float64).T:
        own = column[~np.isnan(column)]
        if len(own) and not (wilson and ((own == 0) | (own == 1)).all()) and not (own == own[0]).all():
            return True
    return False
