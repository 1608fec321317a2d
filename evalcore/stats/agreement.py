"""Do two judges agree? Cohen's kappa between two graders of the same answers, with a bootstrap interval.

* **Kappa** is ``1 - sum(w * observed) / sum(w * expected)``: ``observed`` the share of answers in each (grade of
  judge A, grade of judge B) cell, ``expected`` what those shares would be if the two judges graded independently
  with their own mix of grades (the product of the two margins), ``w`` the disagreement weight of a cell. 1 is full
  agreement, 0 is what chance gives, below 0 worse than chance.
* **Weights**: ``none`` (Cohen's unweighted kappa: every disagreement counts 1) for two categories; ``linear`` for
  ordered grades of more than two categories: two grades ``i`` and ``j`` steps apart (of ``k`` categories, in order)
  disagree by ``|i - j| / (k - 1)``, so 4 against 5 on a 1-to-5 scale is a small disagreement and 1 against 5 a full
  one (``sklearn.metrics.cohen_kappa_score(weights="linear")``).
* **Undefined** when both judges give one and the same grade to every answer (expected disagreement 0): NaN.
* **The interval**: the percentile bootstrap over answers, from the house's resample stream
  (`evalcore.stats.bootstrap.resample_sums` of each cell's indicator: each resample's table of cells, exact), so with
  the same seed it resamples the same queries as the other intervals. Resamples where kappa is undefined are left out.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import invalid_parameter
from .bootstrap import on_grid, resample_sums
from .intervals import DEFAULT_RESAMPLES, check_level, check_resamples, resolve_rng

WEIGHTS = ("none", "linear")


@dataclass(frozen=True)
class Kappa:
    """Cohen's kappa of two judges over ``n`` answers with its percentile interval (NaN where undefined)."""

    kappa: float
    low: float
    high: float
    n: int
    weights: str
    categories: tuple[float, ...]
    level: float
    n_resamples: int
    seed: int | None
    note: str | None = None


def disagreement_weights(k: int, weights: str) -> np.ndarray:
    """The (k, k) weight of each cell: 0 on the diagonal; 1 off it (``none``) or ``|i - j| / (k - 1)`` (``linear``)."""
    if weights not in WEIGHTS:
        raise invalid_parameter("weights", " or ".join(WEIGHTS), weights)
    steps = np.abs(np.arange(k)[:, None] - np.arange(k)[None, :]).astype(np.float64)
    if weights == "none" or k < 2:
        return (steps > 0).astype(np.float64)
    return steps / (k - 1)


def kappa_from_tables(tables: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Kappa of each (k, k) table of counts in ``tables`` (..., k, k); NaN where the expected disagreement is 0."""
    total = tables.sum(axis=(-2, -1))
    with np.errstate(invalid="ignore", divide="ignore"):
        observed = (tables * weights).sum(axis=(-2, -1)) / total
        rows, cols = tables.sum(axis=-1), tables.sum(axis=-2)
        expected = np.einsum("...i,...j,ij->...", rows, cols, weights) / total**2
        kappa = 1 - observed / expected
    return np.where(expected > 1e-12, kappa, np.nan)



def defined_percentiles(draws: np.ndarray, level: float, what: str, too_few: str) -> tuple[float, float, str | None]:
    """The percentile interval of an agreement statistic over its resamples, leaving out the resamples where it is
    undefined (every mark the same): (low, high, note). Under half defined: no interval, and ``too_few`` says why."""
    kept = draws[np.isfinite(draws)]
    if len(kept) < max(10, len(draws) // 2):
        return float("nan"), float("nan"), too_few
    tail = (1 - level) / 2 * 100
    low, high = (float(v) for v in np.percentile(kept, [tail, 100 - tail]))
    left_out = len(draws) - len(kept)
    return low, high, (f"{left_out:,} resamples where {what} is undefined left out" if left_out else None)


def cohen_kappa(a: np.ndarray, b: np.ndarray, weights: str = "none",
                categories: np.ndarray | None = None) -> float:
    """Kappa of two judges' grades of the same answers (``categories``: every grade in order; default the grades
    either judge gave)."""
    codes_a, codes_b, cats = _codes(a, b, categories)
    table = np.zeros((len(cats), len(cats)))
    np.add.at(table, (codes_a, codes_b), 1)
    return float(kappa_from_tables(table, disagreement_weights(len(cats), weights)))


def kappa_interval(a: np.ndarray, b: np.ndarray, weights: str = "none", categories: np.ndarray | None = None,
                   level: float = 0.95, n_resamples: int = DEFAULT_RESAMPLES,
                   rng: np.random.Generator | int | None = None) -> Kappa:
    """`cohen_kappa` with its percentile bootstrap interval over the answers (module docs)."""
    level = check_level(level)
    n_resamples = check_resamples(n_resamples)
    generator, seed = resolve_rng(rng)
    codes_a, codes_b, cats = _codes(a, b, categories)
    k, n = len(cats), len(codes_a)
    w = disagreement_weights(k, weights)
    cell = codes_a * k + codes_b
    table = np.bincount(cell, minlength=k * k).reshape(k, k).astype(np.float64)
    point = float(kappa_from_tables(table, w))
    note, low, high = None, float("nan"), float("nan")
    if not np.isfinite(point):
        note = "undefined: both judges gave every answer the same grade"
    elif n < 2:
        note = "only 1 answer: no interval can be estimated"
    else:
        present = np.unique(cell)
        indicators = (cell[:, None] == present[None, :]).astype(np.float64)
        sums = resample_sums(on_grid(indicators), n_resamples, generator)
        tables = np.zeros((n_resamples, k * k))
        tables[:, present] = sums
        draws = kappa_from_tables(tables.reshape(n_resamples, k, k), w)
        low, high, note = defined_percentiles(draws, level, "kappa", "too few answers that differ to resample kappa")
    return Kappa(point, low, high, n, weights, tuple(float(c) for c in cats), level, n_resamples, seed, note)


def _codes(a: np.ndarray, b: np.ndarray, categories: np.ndarray | None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if a.ndim != 1 or a.shape != b.shape or not len(a) or not (np.isfinite(a).all() and np.isfinite(b).all()):
        raise invalid_parameter("a, b", "two non-empty 1-D arrays of finite grades of the same answers",
                                (a.shape, b.shape))
    cats = np.unique(np.r_[a, b]) if categories is None else np.asarray(categories, dtype=np.float64)
    codes_a, codes_b = np.searchsorted(cats, a), np.searchsorted(cats, b)
    if (codes_a >= len(cats)).any() or (codes_b >= len(cats)).any() or \
            not (np.array_equal(cats[np.minimum(codes_a, len(cats) - 1)], a)
                 and np.array_equal(cats[np.minimum(codes_b, len(cats) - 1)], b)):
        raise invalid_parameter("categories", "every grade either judge gave, in order", list(cats))
    return codes_a, codes_b, cats
