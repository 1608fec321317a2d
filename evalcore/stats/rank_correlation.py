"""Spearman's rank correlation between two per-query scores (recall@k and an answer grade), with a bootstrap interval.

* **The point**: Pearson's correlation of the mid-ranks (ties share the mean of the ranks they span), as
  ``scipy.stats.spearmanr`` gives it. Undefined (NaN) when either score is the same for every query.
* **The interval**: the percentile bootstrap over queries, from the house's resample stream
  (`evalcore.stats.bootstrap`: ``rng.integers(0, n, size=(rows, n))`` in blocks, counted by `count_rows`), so
  with the same seed it resamples the same queries as the intervals of the means (`SpearmanDraws` reads the very
  counts `evalcore.stats.subset_draw` draws). A resample is the original queries, each repeated as often as it was
  drawn; its Spearman is computed exactly from those counts (ranks from cumulative counts in score order, a query
  drawn twice tying with itself; a score of few values, such as recall@k, ranked from its values' totals), with no
  sorting per resample. A resample in which one score is constant has no correlation and is left out; the interval
  is of the others. The percentile interval, not BCa: BCa's acceleration for a correlation needs a jackknife of n
  correlations.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import invalid_parameter
from .bootstrap import count_rows, prefetched
from .intervals import check_level, check_resamples, resolve_rng

_BLOCK_ELEMENTS = 1 << 21
"""Counts held at once per block (n queries x rows resamples): 16 MB of float64."""


@dataclass(frozen=True)
class RankCorrelation:
    """Spearman's rho with its percentile bootstrap interval over ``n`` queries (NaN where undefined)."""

    rho: float
    low: float
    high: float
    n: int
    level: float
    n_resamples: int
    seed: int | None
    note: str | None = None


def mid_ranks(values: np.ndarray) -> np.ndarray:
    """1-based ranks, ties given the mean of the ranks they span (``scipy.stats.rankdata``'s ``average``)."""
    values = np.asarray(values, dtype=np.float64)
    order = np.argsort(values, kind="stable")
    ordered = values[order]
    starts = np.flatnonzero(np.r_[True, ordered[1:] != ordered[:-1]])
    ends = np.r_[starts[1:], len(values)]
    ranks = np.empty(len(values))
    ranks[order] = np.repeat((starts + ends + 1) / 2.0, ends - starts)
    return ranks


def spearman(x: np.ndarray, y: np.ndarray) -> float:
    """Spearman's rho of two equal-length arrays; NaN when either is constant or there are fewer than 2 values."""
    x, y = _pair(x, y)
    if len(x) < 2:
        return float("nan")
    rx, ry = mid_ranks(x) - (len(x) + 1) / 2, mid_ranks(y) - (len(y) + 1) / 2
    sxx, syy = float(rx @ rx), float(ry @ ry)
    if sxx <= 0 or syy <= 0:
        return float("nan")
    return float(np.clip(float(rx @ ry) / np.sqrt(sxx * syy), -1.0, 1.0))


GROUPED_AT_MOST = 64
"""A score with at most this many distinct values (recall@k, a pass/fail or 0-10 grade) is ranked from its values'
resampled totals (one small matrix product), not from cumulative counts over every query."""


class _Ranker:
    """One score's order and tie groups, to rank it inside resamples from their counts alone."""

    def __init__(self, values: np.ndarray) -> None:
        self.order = np.argsort(values, kind="stable")
        ordered = values[self.order]
        starts = np.flatnonzero(np.r_[True, ordered[1:] != ordered[:-1]])
        self.ends = np.r_[starts[1:], len(values)] - 1
        self.sizes = np.diff(np.r_[starts, len(values)])
        self.position = np.empty_like(self.order)
        self.position[self.order] = np.arange(len(values))
        self.group = np.repeat(np.arange(len(starts)), self.sizes)[self.position]  # each query's tie group
        self.grouped = len(starts) <= GROUPED_AT_MOST
        self.one_hot = (self.group[:, None] == np.arange(len(starts))[None, :]).astype(np.float64) \
            if self.grouped else None
        self._in_order: dict[int, object] = {}

    def one_hot_in(self, other: "_Ranker") -> np.ndarray:
        """This score's one-hot groups in ``other``'s order (kept: a grade is summed by recall@k's groups once a
        block)."""
        key = id(other)
        if key not in self._in_order:
            self._in_order[key] = np.ascontiguousarray(self.one_hot[other.order])
        return self._in_order[key]

    def cells_with(self, other: "_Ranker") -> tuple[np.ndarray, np.ndarray]:
        """The (this group, other group) cells the queries fall in, as ``group * other_groups + other_group``, and
        each query's cell one-hot (kept, as `one_hot_in`)."""
        key = -id(other)
        if key not in self._in_order:
            cells = self.group * len(other.sizes) + other.group
            present, cell = np.unique(cells, return_inverse=True)
            self._in_order[key] = (present, (cell[:, None] == np.arange(len(present))[None, :]).astype(np.float64))
        return self._in_order[key]

    def group_ranks(self, counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Each value's draws and mid-rank in each resample, (rows, groups): the draws of lower values, plus half
        its own draws, plus a half."""
        drawn = counts @ self.one_hot
        return drawn, np.cumsum(drawn, axis=1) - (drawn - 1) / 2

    def sorted_ranks(self, counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The counts (rows, n) in this score's order, and each query's mid-rank in each resample in that order."""
        ordered = np.take(counts, self.order, axis=1)  # np.take: several times faster than fancy indexing here
        cumulative = np.cumsum(ordered, axis=1)
        if len(self.sizes) == len(self.order):  # each query its own group: before + (own + 1) / 2
            cumulative -= (ordered - 1) / 2
            return ordered, cumulative
        through = cumulative[:, self.ends]
        drawn = np.diff(through, axis=1, prepend=0.0)
        return ordered, np.repeat(through - (drawn - 1) / 2, self.sizes, axis=1)


def resampled_spearman(x: np.ndarray, y: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Spearman's rho of each resample given by ``counts`` (rows, n): how often each query was drawn."""
    x, y = _pair(x, y)
    return _resampled(_Ranker(x), _Ranker(y), np.asarray(counts, dtype=np.float64), {})


def _resampled(by_x: _Ranker, by_y: _Ranker, counts: np.ndarray, known: dict) -> np.ndarray:
    """`resampled_spearman` from the two scores' rankers; ``known`` keeps each ranker's ranks of these counts, so a
    score beside several others (recall@k beside each grade) is ranked once."""

    def ranked(ranker: _Ranker) -> tuple[np.ndarray, np.ndarray]:
        if id(ranker) not in known:
            known[id(ranker)] = ranker.group_ranks(counts) if ranker.grouped else ranker.sorted_ranks(counts)
        return known[id(ranker)]

    (wx, rx), (wy, ry) = ranked(by_x), ranked(by_y)
    sxx, syy = np.einsum("ij,ij,ij->i", wx, rx, rx), np.einsum("ij,ij,ij->i", wy, ry, ry)
    if by_x.grouped and by_y.grouped:  # every (x value, y value) cell's draws
        present, one_hot = by_x.cells_with(by_y)
        drawn = counts @ one_hot
        sxy = np.einsum("ij,ij,ij->i", drawn, rx[:, present // len(by_y.sizes)], ry[:, present % len(by_y.sizes)])
    elif by_x.grouped or by_y.grouped:  # the grouped score's rank times the other's weighted ranks, summed by group
        (few, r_few), (many, w_many, r_many) = ((by_x, rx), (by_y, wy, ry)) if by_x.grouped else ((by_y, ry), (by_x, wx, rx))
        sums = (w_many * r_many) @ few.one_hot_in(many)
        sxy = np.einsum("ij,ij->i", sums, r_few)
    else:
        sxy = np.einsum("ij,ij,ij->i", wx, rx, np.take(ry, by_y.position[by_x.order], axis=1))
    n = counts.sum(axis=1)
    centre = n * ((n + 1) / 2) ** 2
    sxy, sxx, syy = sxy - centre, sxx - centre, syy - centre
    with np.errstate(invalid="ignore", divide="ignore"):
        rho = sxy / np.sqrt(sxx * syy)
    rho[(sxx <= 1e-9) | (syy <= 1e-9)] = np.nan
    return np.clip(rho, -1.0, 1.0)


class SpearmanDraws:
    """The resampled Spearman's rho of several score pairs, each over its own queries of one set of ``n``, filled
    block by block from the counts of one draw (`evalcore.stats.subset_draw.subset_deviations`' ``each_block``): a
    resample's rho is over the drawn queries the pair uses. ``pairs`` are (x, y, used) over all ``n`` queries; the
    first ``n_resamples`` resamples of the draw are read."""

    def __init__(self, pairs: list[tuple[np.ndarray, np.ndarray, np.ndarray]], n_resamples: int) -> None:
        self.n_resamples = n_resamples
        self.used = [np.asarray(used, dtype=bool) for _, _, used in pairs]
        self.points = [spearman(np.asarray(x)[used], np.asarray(y)[used]) for (x, y, _), used in zip(pairs, self.used)]
        self.draws = np.full((n_resamples, len(pairs)), np.nan)
        rankers: dict[bytes, _Ranker] = {}

        def ranker(values: np.ndarray, used: np.ndarray) -> _Ranker:
            filled = np.where(used, np.asarray(values, dtype=np.float64), 0.0)  # unused queries weigh nothing
            key = filled.tobytes()
            if key not in rankers:
                rankers[key] = _Ranker(filled)
            return rankers[key]

        self.jobs = [(ranker(x, used), ranker(y, used)) for (x, y, _), used in zip(pairs, self.used)]
        self.groups: dict[bytes, list[int]] = {}
        for j, used in enumerate(self.used):
            if np.isfinite(self.points[j]) and used.sum() >= 3:
                self.groups.setdefault(np.packbits(used).tobytes(), []).append(j)

    def add(self, counts: np.ndarray, start: int) -> None:
        """Read the drawn counts (rows, n) of resamples ``start`` onwards."""
        rows = min(len(counts), self.n_resamples - start)
        if rows <= 0:
            return
        counts = counts[:rows].astype(np.float64, copy=False)
        for members in self.groups.values():
            used = self.used[members[0]]
            weights = counts if used.all() else counts * used
            known: dict = {}
            for j in members:
                self.draws[start:start + rows, j] = _resampled(*self.jobs[j], weights, known)

    def intervals(self, level: float, seed: int | None) -> list[RankCorrelation]:
        """Each pair's rho with its percentile interval over the resamples where it is defined."""
        tail = (1 - level) / 2 * 100
        out = []
        for j, rho in enumerate(self.points):
            n = int(self.used[j].sum())
            kept = self.draws[:, j][np.isfinite(self.draws[:, j])]
            note, low, high = None, float("nan"), float("nan")
            if not np.isfinite(rho):
                note = "undefined: one of the two scores is the same for every query" if n >= 2 else \
                    "fewer than 2 queries"
            elif n < 3 or len(kept) < max(10, self.n_resamples // 2):
                note = "too few queries that differ to resample a correlation"
            else:
                low, high = (float(v) for v in np.percentile(kept, [tail, 100 - tail]))
                if len(kept) < self.n_resamples:
                    note = f"{self.n_resamples - len(kept):,} resamples with a constant score left out"
            out.append(RankCorrelation(rho, low, high, n, level, self.n_resamples, seed, note))
        return out


def spearman_intervals(pairs: list[tuple[np.ndarray, np.ndarray]], level: float = 0.95, n_resamples: int = 2_000,
                       rng: np.random.Generator | int | None = None) -> list[RankCorrelation]:
    """Spearman's rho of each (x, y) pair with its percentile bootstrap interval, every pair over the same ``n``
    queries and from one draw of resampled queries (the house's stream, module docs)."""
    level = check_level(level)
    n_resamples = check_resamples(n_resamples)
    generator, seed = resolve_rng(rng)
    if not pairs:
        return []
    n = len(pairs[0][0])
    if any(len(x) != n or len(y) != n for x, y in pairs):
        raise invalid_parameter("pairs", "arrays over the same queries", [len(x) for x, _ in pairs])
    pairs = [_pair(x, y) for x, y in pairs]
    found = SpearmanDraws([(x, y, np.ones(n, dtype=bool)) for x, y in pairs], n_resamples)
    if found.groups:
        rows = max(1, min(n_resamples, _BLOCK_ELEMENTS // n))
        sizes = [min(rows, n_resamples - start) for start in range(0, n_resamples, rows)]

        def draw(count: int) -> np.ndarray:
            return generator.integers(0, n, size=(count, n), dtype=np.int32)

        start = 0
        for size, indices in zip(sizes, prefetched(draw, sizes)):
            found.add(count_rows(indices, n), start)
            start += size
    return found.intervals(level, seed)


def _pair(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    if x.ndim != 1 or x.shape != y.shape or not (np.isfinite(x).all() and np.isfinite(y).all()):
        raise invalid_parameter("x, y", "two 1-D arrays of finite numbers of the same length", (x.shape, y.shape))
    return x, y
