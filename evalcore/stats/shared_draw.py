"""Intervals from resampled means drawn once and shared with other statistics.

`evalcore.stats.intervals.mean_intervals` draws its own resamples. A report that also needs the
resampled means for something else (the stability of a pick, a paired difference, every k of a
curve) draws once (`evalcore.stats.bootstrap`) and hands the deviations here, so every random
number in it comes from the same resampled queries and the intervals equal `mean_intervals` /
`bca_intervals` with that seed. Two shapes of answer: `interval_columns` gives `Interval` objects
(curves, comparisons), `shared_draw_intervals` plain arrays for many columns at once (the k budget).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import invalid_parameter
from .intervals import Interval, bca_bounds, bca_interval_list, constant_interval, wilson_interval


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

    ``deviations`` is (n_resamples, n_cols) as `evalcore.stats.bootstrap.resample_deviations` returns for the same
    seed (columns that are 0/1 or constant are not read; None when there are none to bootstrap).
    """
    n = matrix.shape[0]
    binary, constant = column_kinds(matrix, wilson)
    out: list[Interval | None] = [None] * matrix.shape[1]
    for j in np.flatnonzero(binary):
        out[j] = wilson_interval(int(matrix[:, j].sum()), n, level)
    for j in np.flatnonzero(constant):
        out[j] = constant_interval(float(matrix[0, j]), n, level)
    boot = np.flatnonzero(~binary & ~constant)
    if len(boot):
        if deviations is None:
            raise invalid_parameter("deviations", "resampled means for columns that are not 0/1 or constant", None)
        for j, interval in zip(boot, bca_interval_list(matrix[:, boot], deviations[:, boot], level, n_resamples,
                                                       seed)):
            out[j] = interval
    return out  # type: ignore[return-value]


@dataclass(frozen=True)
class ColumnIntervals:
    """Intervals for several columns at once: arrays of low, high and the method of each."""

    low: np.ndarray
    high: np.ndarray
    method: list[str]


def shared_draw_intervals(scores: np.ndarray, deviations: np.ndarray | None, level: float,
                          wilson: bool = True) -> ColumnIntervals:
    """`evalcore.stats.intervals.mean_intervals` (or, with ``wilson=False``, `bca_intervals`) computed
    from resampled means drawn once and shared with other statistics.

    ``scores`` is (n_queries, n_cols); ``deviations`` is (n_resamples, n_cols) resampled means
    minus the point, as `evalcore.stats.bootstrap.resample_deviations` returns (None is allowed when
    every column is 0/1 and ``wilson`` is True). The conventions are those of
    `evalcore.stats.intervals`: Wilson for 0/1 columns, a constant interval when every query scores
    the same, else BCa via `evalcore.stats.intervals.bca_bounds`. Tests check it against
    `mean_intervals` and `bca_intervals` with the same seed.
    """
    scores = np.asarray(scores, dtype=np.float64)
    n, n_cols = scores.shape
    means = scores.mean(axis=0)
    low, high = means.copy(), means.copy()
    method = ["constant"] * n_cols
    binary = ((scores == 0) | (scores == 1)).all(axis=0) if wilson else np.zeros(n_cols, dtype=bool)
    constant = (scores == scores[0]).all(axis=0)
    successes = scores.sum(axis=0)  # whole numbers for 0/1 columns, however they are added
    for j in np.flatnonzero(binary):
        interval = wilson_interval(int(round(successes[j])), n, level)
        low[j], high[j], method[j] = interval.low, interval.high, "wilson"
    boot = np.flatnonzero(~binary & ~constant)
    if len(boot):
        if deviations is None:
            raise invalid_parameter("deviations", "resampled means for columns that are not 0/1", None)
        lo, hi, defined = bca_bounds(scores[:, boot], np.asarray(deviations)[:, boot], level)
        low[boot], high[boot] = lo, hi
        for j, ok in zip(boot, defined):
            method[j] = "bca" if ok else "percentile"
    return ColumnIntervals(low, high, method)
