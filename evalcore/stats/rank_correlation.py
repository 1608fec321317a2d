"""Spearman's rank correlation between two per-query scores (recall@k and an answer grade), with a bootstrap interval.

* **The point**: Pearson's correlation of the mid-ranks (ties share the mean of the ranks they span), as
  ``scipy.stats.spearmanr`` gives it. Undefined (NaN) when either score is the same for every query.
* **The interval**: the percentile bootstrap over queries, from the house's resample stream
  (`evalcore.stats.bootstrap`: ``rng.integers(0, n, size=(rows, n))`` in blocks, counted by `count_rows`), so
  with the same seed it resamples the same queries as the intervals of the means (`SpearmanDraws` reads the very
  counts `evalcore.stats.subset_draw` draws). A resample is the original queries, each repeated as often as it was
  drawn (a query drawn twice ties with itself); a resample in which one score is constant has no correlation and is
  left out; the interval is of the others. The percentile interval, not BCa: BCa's acceleration for a correlation
  needs a jackknife of n correlations.
* **Every resample at once, exactly, no sorting per resample.** Each score is sorted once; in a resample a value's
  mid-rank is the draws of lower values plus half its own draws plus a half, so every resample's ranks come from
  cumulated counts, all resamples of a block in one array operation. How, by the number of distinct values
  (`FEW`):

  - **both scores few** (recall@k beside a pass/fail or 0-10 grade): the draws of each (x value, y value) cell,
    one matrix product for every such pair at once (`_Cells`); ranks from the values' totals;
  - **one few, one many** (recall@k beside a continuous grade): sparse products of the counts, turned over, give
    the draws of each of the many one's values (split by the few one's), cumulated into its ranks; weighted by the
    draws and summed by the few one's values (`_Sorted`);
  - **both many**: both ranked so, one brought into the other's order (`_Ranked`).

  The sums of squared ranks come from the ties alone, ``sum w (r - (N + 1) / 2)^2 = (N^3 - N - sum(t^3 - t)) / 12``
  (``t``: the draws of one value). Every sum is of whole or half numbers, exact in float64, so each resample's rho is
  the same float whichever way it is computed (tests: against scipy on the resampled queries themselves).
* **Beside the products**: `SpearmanDraws.beside` reads each block on a thread of its own while the caller goes on
  with the block's other sums.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np

from ..errors import invalid_parameter
from .bootstrap import count_rows, prefetched
from .intervals import check_level, check_resamples, resolve_rng

_BLOCK_ELEMENTS = 1 << 21
"""Counts held at once per block (n queries x rows resamples): 16 MB of float64."""
_WAITING_BLOCKS = 2
"""Blocks of copied counts `SpearmanDraws.beside` lets wait for its thread: the caller runs at most this far ahead."""
_CHUNK_ELEMENTS = 1 << 20
"""Resampled counts ranked at once (rows x queries): a few MB per array."""
FEW = 64
"""A score with at most this many distinct values (recall@k, a pass/fail or 0-10 grade) is ranked from its values'
resampled totals, not from cumulated counts over every query."""
CELLS_AT_MOST = 64
"""Two few-valued scores are summed by their (x, y) cells when they have at most this many (each cell is a column
of one matrix product); past that, as one few and one many."""


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
    # Sums of products of half-integers: exact in any order, so plain sums (a threaded BLAS dot waits on a busy CPU)
    sxx, syy = float((rx * rx).sum()), float((ry * ry).sum())
    if sxx <= 0 or syy <= 0:
        return float("nan")
    return float(np.clip(float((rx * ry).sum()) / np.sqrt(sxx * syy), -1.0, 1.0))


# ----------------------------------------------------------------------------- sums shared by every pair


class _Totals:
    """Per resample, the draws of fixed groups of queries (a pair's cells, a score's values): rows of one indicator
    matrix for every pair at once, one product per block with the counts turned over (n, rows). Whole numbers, in
    ``dtype``: float32 while twice n is below 2**24 (exact there, and so are the doubled ranks `_Sorted` makes from
    them), else float64."""

    def __init__(self, n: int) -> None:
        self.n, self.width = n, 0
        self.groups: list[np.ndarray] = []
        self.dtype = np.float32 if 2 * n < 1 << 24 else np.float64

    def add(self, groups: np.ndarray, n_groups: int) -> slice:
        """Columns for ``groups`` (each query's group, -1: none); their slice of `of`'s sums."""
        self.groups.append(np.where(groups >= 0, groups + self.width, -1))
        self.width += n_groups
        return slice(self.width - n_groups, self.width)

    def prepare(self) -> None:
        self.indicator = np.zeros((self.width, self.n), dtype=self.dtype)
        for column in self.groups:
            kept = column >= 0
            self.indicator[column[kept], np.flatnonzero(kept)] = 1

    def of(self, columns: np.ndarray) -> np.ndarray:
        """Each group's draws in each resample of ``columns`` (n, rows: the counts turned over, in ``dtype``):
        (rows, width), float64."""
        return (self.indicator @ columns).T.astype(np.float64)


def _ranks_of_totals(totals: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each value's mid-rank in each resample from the values' draws (rows, groups, in value order), and each
    resample's ``sum(t^3 - t)``."""
    return np.cumsum(totals, axis=1) - (totals - 1) / 2, (totals**3 - totals).sum(axis=1)


def _rho(drawn: np.ndarray, products: np.ndarray, ties_x: np.ndarray, ties_y: np.ndarray) -> np.ndarray:
    """Rho of each resample from its draws ``N``, ``sum(w * rx * ry)`` and the two ties sums: NaN where a score is
    constant."""
    centre = drawn * ((drawn + 1) / 2) ** 2
    sxy = products - centre
    sxx, syy = (drawn**3 - drawn - ties_x) / 12, (drawn**3 - drawn - ties_y) / 12
    with np.errstate(invalid="ignore", divide="ignore"):
        rho = sxy / np.sqrt(sxx * syy)
    rho[(sxx <= 1e-9) | (syy <= 1e-9)] = np.nan
    return np.clip(rho, -1.0, 1.0)


def _one_hot(groups: np.ndarray, n_groups: int) -> np.ndarray:
    return (groups[:, None] == np.arange(n_groups)[None, :]).astype(np.float64)


def _value_groups(values: np.ndarray, used: np.ndarray) -> tuple[np.ndarray, int]:
    """Each query's value group among the used ones, in value order (-1: not used), and how many groups."""
    levels, group = np.unique(values[used], return_inverse=True)
    out = np.full(len(used), -1)
    out[used] = group
    return out, len(levels)


# ----------------------------------------------------------------------------- the three ways


class _Cells:
    """Two few-valued scores: each (x value, y value) cell's draws in each resample (`_Totals`); ranks follow from
    the values' totals."""

    def __init__(self, j: int, x: tuple[np.ndarray, int], y: tuple[np.ndarray, int], totals: _Totals) -> None:
        (gx, nx), (gy, ny) = x, y
        used = gx >= 0
        present, cell = np.unique(gx[used] * ny + gy[used], return_inverse=True)
        groups = np.full(len(used), -1)
        groups[used] = cell
        self.j, self.cells = j, totals.add(groups, len(present))
        self.cx, self.cy = present // ny, present % ny
        self.to_x, self.to_y = _one_hot(self.cx, nx), _one_hot(self.cy, ny)

    def fill(self, counts: np.ndarray, columns: np.ndarray, sums: np.ndarray, out: np.ndarray) -> None:
        cells = sums[:, self.cells]
        rx, ties_x = _ranks_of_totals(cells @ self.to_x)
        ry, ties_y = _ranks_of_totals(cells @ self.to_y)
        products = np.einsum("ij,ij,ij->i", cells, rx[:, self.cx], ry[:, self.cy])
        out[:, self.j] = _rho(cells.sum(axis=1), products, ties_x, ties_y)


class _Sorted:
    """A few-valued score x beside a many-valued y. Each run of queries sharing one (y value, x value) is a row of a
    sparse 0/1 matrix over the queries, and each y value a row of one over the runs, so two sparse products with the
    counts turned over (n, rows) give every run's draws ``d`` and every y value's draws ``t`` in each resample (a
    pass over the queries for all resamples at once, rather than cumulating each resample's counts); the values'
    draws cumulated give each one's doubled mid-rank ``2 * (draws up to its end) - t + 1``. Then ``sum(w * rx * ry)``
    is, per x value, its rank times the sum of its runs' ``d * ry``: one more sparse product, x's first value taking
    the rest of ``N (N + 1)`` (twice the ranks add up to that). x's draws per value come from `_Totals`. Every
    number is whole, exact in float32 below 2**24 and in float64 past that (products)."""

    def __init__(self, j: int, x: tuple[np.ndarray, int], y: np.ndarray, totals: _Totals) -> None:
        import scipy.sparse as sparse  # not at import: the dashboard's cold start reads this module

        (gx, nx), n = x, len(y)
        queries = np.flatnonzero(gx >= 0)
        order = queries[np.lexsort((gx[queries], y[queries]))]
        ys, xs = y[order], gx[order]
        new_value = np.r_[True, ys[1:] != ys[:-1]]
        new_run = new_value | np.r_[True, xs[1:] != xs[:-1]]
        run, value = np.cumsum(new_run) - 1, np.cumsum(new_value) - 1  # each query's, in that order
        n_runs, n_values = int(run[-1]) + 1, int(value[-1]) + 1
        self.to_runs = sparse.csr_matrix((np.ones(len(order), totals.dtype), (run, order)), shape=(n_runs, n))
        run_value = value[new_run]
        self.to_values = sparse.csr_matrix((np.ones(n_runs, totals.dtype), (run_value, np.arange(n_runs))),
                                           shape=(n_values, n_runs))
        group = xs[new_run]
        rest = np.flatnonzero(group > 0)  # runs of x's other values (its first value takes the rest)
        self.rest, self.rest_value = rest, run_value[rest]
        self.to_groups = sparse.csr_matrix((np.ones(len(rest)), (group[rest] - 1, np.arange(len(rest)))),
                                           shape=(nx - 1, len(rest)))
        self.j, self.draws = j, totals.add(gx, nx)

    def fill(self, counts: np.ndarray, columns: np.ndarray, sums: np.ndarray, out: np.ndarray) -> None:
        totals = sums[:, self.draws]
        n_drawn = totals.sum(axis=1)
        runs = self.to_runs @ columns  # (runs, rows): each run's draws
        values = self.to_values @ runs  # (y values, rows): each value's draws
        twice = np.cumsum(values, axis=0)  # draws up to each value's end
        twice *= 2
        twice -= values  # twice each y value's mid-rank, minus 1 (added back below as the draws)
        weighted = np.multiply(np.take(runs, self.rest, axis=0), np.take(twice, self.rest_value, axis=0),
                               dtype=np.float64)  # d * (2 ry - 1) of each run of x's other values
        rest = (self.to_groups @ weighted).T + totals[:, 1:]
        shares = np.column_stack([n_drawn * (n_drawn + 1) - rest.sum(axis=1), rest])
        wide = values.astype(np.float64)
        ties_y = np.einsum("ij,ij,ij->j", wide, wide, wide) - n_drawn
        r_x, ties_x = _ranks_of_totals(totals)
        out[:, self.j] = _rho(n_drawn, np.einsum("ij,ij->i", r_x, shares) / 2, ties_x, ties_y)


class _Ranked:
    """Two many-valued scores: each ranked from cumulated draws in its own order (ties from the values' ends), one
    brought into the other's order, the products summed."""

    def __init__(self, j: int, x: np.ndarray, y: np.ndarray, used: np.ndarray) -> None:
        queries = np.flatnonzero(used)
        self.j, self.x, self.y = j, _Ranking(x, queries), _Ranking(y, queries)
        place = np.empty(len(used), dtype=np.intp)
        place[self.y.order] = np.arange(len(queries))
        self.y_in_x = place[self.x.order]

    def fill(self, counts: np.ndarray, columns: np.ndarray, sums: np.ndarray, out: np.ndarray) -> None:
        drawn, twice_x, ties_x = self.x.doubled_ranks(counts)
        _, twice_y, ties_y = self.y.doubled_ranks(counts)
        products = np.einsum("ij,ij,ij->i", drawn, twice_x, np.take(twice_y, self.y_in_x, axis=1),
                             dtype=np.float64) / 4
        out[:, self.j] = _rho(drawn.sum(axis=1).astype(np.float64), products, ties_x, ties_y)


class _Ranking:
    """One score's queries by value and its value groups, to rank it inside resamples from cumulated draws."""

    def __init__(self, values: np.ndarray, queries: np.ndarray) -> None:
        own = values[queries]
        by_value = np.argsort(own, kind="stable")
        self.order, ordered = queries[by_value], own[by_value]
        starts = np.flatnonzero(np.r_[True, ordered[1:] != ordered[:-1]])
        self.ends = np.r_[starts[1:], len(own)] - 1
        self.tied = len(starts) < len(own)
        self.group = np.repeat(np.arange(len(starts)), np.diff(np.r_[starts, len(own)]))

    def doubled_ranks(self, counts: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The draws in this order (rows, m), twice each query's mid-rank in each resample, and ``sum(t^3 - t)``."""
        drawn = np.take(counts, self.order, axis=1).astype(np.int64)
        through = np.cumsum(drawn, axis=1)
        ties = drawn
        if self.tied:
            at_end = through[:, self.ends]
            ties = np.diff(at_end, axis=1, prepend=0)
            through = np.take(at_end, self.group, axis=1)
            drawn_tied = np.take(ties, self.group, axis=1)
            return drawn, 2 * through - drawn_tied + 1, (ties**3 - ties).sum(axis=1).astype(np.float64)
        return drawn, 2 * through - drawn + 1, (ties**3 - ties).sum(axis=1).astype(np.float64)


# ----------------------------------------------------------------------------- resamples of one draw


class SpearmanDraws:
    """The resampled Spearman's rho of several score pairs, each over its own queries of one set of ``n``, filled
    block by block from the counts of one draw (`evalcore.stats.subset_draw.subset_deviations`' ``each_block``): a
    resample's rho is over the drawn queries the pair uses. ``pairs`` are (x, y, used) over all ``n`` queries; the
    first ``n_resamples`` resamples of the draw are read. Pairs whose point is undefined, or with fewer than 3
    queries, are not resampled (``every_pair``: resample them too)."""

    def __init__(self, pairs: list[tuple[np.ndarray, np.ndarray, np.ndarray]], n_resamples: int,
                 every_pair: bool = False) -> None:
        self.n_resamples = n_resamples
        self.used = [np.asarray(used, dtype=bool) for _, _, used in pairs]
        values = [(np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)) for x, y, _ in pairs]
        self.points = [spearman(x[used], y[used]) for (x, y), used in zip(values, self.used)]
        self.draws = np.full((n_resamples, len(pairs)), np.nan)
        n = len(self.used[0]) if pairs else 0
        self.totals = _Totals(n)
        self.jobs: list[_Cells | _Sorted | _Ranked] = []
        for j, ((x, y), used) in enumerate(zip(values, self.used)):
            if not used.any() or not every_pair and not (np.isfinite(self.points[j]) and used.sum() >= 3):
                continue
            (gx, nx), (gy, ny) = _value_groups(x, used), _value_groups(y, used)
            if max(nx, ny) <= FEW and len(np.unique(gx[used] * ny + gy[used])) <= CELLS_AT_MOST:
                self.jobs.append(_Cells(j, (gx, nx), (gy, ny), self.totals))
            elif nx <= FEW or ny <= FEW:
                self.jobs.append(_Sorted(j, (gx, nx), y, self.totals) if nx <= ny else
                                 _Sorted(j, (gy, ny), x, self.totals))
            else:
                self.jobs.append(_Ranked(j, x, y, used))
        self.totals.prepare()
        self.groups = bool(self.jobs)  # anything to resample

    def add(self, counts: np.ndarray, start: int) -> None:
        """Read the drawn counts (rows, n; whole numbers) of resamples ``start`` onwards."""
        rows = min(len(counts), self.n_resamples - start)
        if rows <= 0 or not self.groups:
            return
        out = self.draws[start:start + rows]
        step = max(1, _CHUNK_ELEMENTS // max(counts.shape[1], 1))
        for first in range(0, rows, step):
            chunk = counts[first:min(first + step, rows)]
            columns = np.ascontiguousarray(chunk.T, dtype=self.totals.dtype)  # turned over, as sparse products read
            sums = self.totals.of(columns)
            for job in self.jobs:
                job.fill(chunk, columns, sums, out[first:first + step])

    @contextmanager
    def beside(self) -> Iterator[Callable[[np.ndarray, int], None]]:
        """`add` on a thread of its own, beside the caller's own work on each block (the house's products): the
        rows it reads are copied first, as small whole numbers (the caller refills its buffer for the next block),
        at most `_WAITING_BLOCKS` of them wait; leaving waits for every block and raises what `add` raised. The
        draws are the same as from `add` called in turn: each block fills its own rows."""
        waiting: deque[Future] = deque()
        small = np.uint16 if self.totals.n < 1 << 16 else np.uint32

        def each_block(counts: np.ndarray, start: int) -> None:
            rows = min(len(counts), self.n_resamples - start)
            if rows <= 0 or not self.groups:
                return
            if len(waiting) >= _WAITING_BLOCKS:
                waiting.popleft().result()
            waiting.append(worker.submit(self.add, counts[:rows].astype(small), start))

        with ThreadPoolExecutor(max_workers=1) as worker:
            yield each_block
            while waiting:
                waiting.popleft().result()

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
