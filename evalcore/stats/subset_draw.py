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
  ``start`` onwards, as float64): the rank correlations of `evalcore.analyses.answers`.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .bootstrap import count_rows, on_grid, prefetched
from .intervals import Interval, bca_interval_list, constant_interval, wilson_interval

_BLOCK_ELEMENTS = 1 << 22
"""Drawn counts held at once (rows x n), as float64: 32 MB."""


def subset_deviations(values: np.ndarray, n_resamples: int, rng: np.random.Generator,
                      each_block: Callable[[np.ndarray, int], None] | None = None) -> np.ndarray:
    """Resampled means minus the point of each column of ``values`` (n, cols; NaN: no value), (n_resamples, cols),
    NaN in a resample that drew no query with a value (module docs)."""
    values = np.asarray(values, dtype=np.float64)
    n, n_cols = values.shape
    present = ~np.isnan(values)
    full = present.all(axis=0)
    gridded = on_grid(np.where(present, values, 0.0))
    gaps, mask_of = np.unique(present[:, ~full].T, axis=0, return_inverse=True) if (~full).any() else \
        (np.empty((0, n), dtype=bool), np.empty(0, dtype=np.intp))
    matrix = np.hstack([gridded, gaps.T.astype(np.float64)])
    sums = np.empty((n_resamples, matrix.shape[1]))
    rows = max(1, min(n_resamples, _BLOCK_ELEMENTS // max(n, 1)))
    sizes = [min(rows, n_resamples - start) for start in range(0, n_resamples, rows)]

    def draw(count: int) -> np.ndarray:
        return rng.integers(0, n, size=(count, n), dtype=np.int32)

    start = 0
    for size, indices in zip(sizes, prefetched(draw, sizes)):
        counts = count_rows(indices, n).astype(np.float64)
        np.matmul(counts, matrix, out=sums[start:start + size])  # exact: whole counts times values on the grid
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
