"""The bootstrap's resampling machinery: one shared draw of resampled queries, summed exactly.

Every interval, paired test and curve in evalcore resamples the same way, so the machinery lives
here once (`evalcore.stats.intervals`, `evalcore.stats.paired` and `evalcore.analyses.curves` read it):

* **One shared resample stream.** A call draws one matrix of query indices,
  ``rng.integers(0, n, size=(n_resamples, n), dtype=np.int32)``, in chunks of rows so memory
  stays bounded (`resample_sums`; the next chunk is drawn on a worker thread, `prefetched`), and
  reuses it for every column: each row's index counts (`resample_counts`) times the scores.
* **Exact sums.** Scores are first put on a fine binary grid (`on_grid`: steps of about 1e-11 for
  10,000 scores in [0, 1], far below any digit shown), which makes every resampled sum exact in
  float64 whatever the order of the additions (`ExactProducts`). So a column gets *exactly* the
  same resampled means whether it is computed alone, beside 249 others, or from a whole curve at
  once (a curve over k is summed through its sparse increments).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor

import numpy as np

_CHUNK_ELEMENTS = 1 << 22
"""Index draws held in memory at once (4M int32 + 4M float64 counts = 48 MB)."""

GRID_BITS = 50
"""`on_grid` keeps every resampled sum below 2**50 grid steps: exact in float64 (53 bits), with
room for sums of differences of two columns."""

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


def prefetched(draw: Callable[[int], np.ndarray], sizes: list[int]) -> Iterator[np.ndarray]:
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
