"""The bootstrap's resampling machinery: one shared draw of resampled queries, summed exactly.

Every interval, paired test and curve in evalcore resamples the same way, so the machinery lives
here once (`evalcore.stats.intervals`, `evalcore.stats.paired` and `evalcore.analyses.curves` read it):

* **One shared resample stream.** A call draws one matrix of query indices,
  ``rng.integers(0, n, size=(n_resamples, n), dtype=np.int32)``, in blocks of rows so memory
  stays bounded (`resample_sums`; the next block is drawn on a worker thread, `prefetched`), and
  reuses it for every column: each row's index counts (`count_rows`) times the scores.
* **Exact sums.** Scores are first put on a fine binary grid (`on_grid`: steps of about 1e-11 for
  10,000 scores in [0, 1], far below any digit shown), which makes every resampled sum exact in
  float64 whatever the order of the additions (`ExactProducts`). So a column gets *exactly* the
  same resampled means whether it is computed alone, beside 249 others, or from a whole curve at
  once (a curve over k is summed through its sparse increments).
* **Narrow columns in float32.** A column whose values are small multiples of one power of two (a
  0/1 score, the paired difference of two) keeps every resampled sum below 2**24 of that unit, so
  its sums are exact in float32 as well. When every column is narrow they are multiplied in float32
  straight from the small-integer counts (`count_rows`), with no float64 copy of them; when, besides,
  they fit in a few 64-bit words side by side (the paired differences of 0/1 scores that name the
  best run), nothing is counted at all: each resample's sums are one gathered sum of those words over
  its drawn queries (`PackedColumns`). Same numbers either way, a fraction of the memory traffic.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor

import numpy as np

_BLOCK_ELEMENTS = 1 << 22
"""Index draws held in memory at once (4M int32 + 4M float64 counts = 48 MB)."""

_COUNT_BINS = 1 << 15
"""Bins counted by one ``np.bincount`` (256 KB of int64: they stay in the CPU's cache): one resample of 20,000
queries, or several of a few hundred, each shifted to its own bins."""

FLOAT32_EXACT = 1 << 24
"""Integers up to this are exact in float32: so is any sum of them that stays within it."""

_MAX_PACKED_WORDS = 2
"""`PackedColumns` gathers at most this many 64-bit words per drawn query; past that, counting once is cheaper."""

_GATHER_ELEMENTS = 1 << 20
"""Drawn queries gathered at once by `PackedColumns` (8 MB of words): as fast as smaller pieces, and few enough
calls that a thread working beside it seldom waits for the GIL."""

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


def integer_units(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per column, the largest power of two ``u`` that every value is a whole multiple of, and the largest
    ``|value| / u``: ``values = m * u`` with integer ``m`` exactly. A column of zeros gives (1, 0); one whose
    values are not all multiples of its largest value's 53-bit step gives (1, inf), never narrow."""
    values = np.asarray(values, dtype=np.float64)
    if not values.size:
        return np.ones(values.shape[1:]), np.zeros(values.shape[1:])
    largest = np.abs(values).max(axis=0)
    scale = np.exp2(53 - np.frexp(largest)[1].astype(np.float64))  # |values| * scale < 2**53
    with np.errstate(over="ignore", invalid="ignore"):
        scaled = values * scale
        whole = np.rint(scaled)
        exact = (whole == scaled).all(axis=0)
        bits = np.bitwise_or.reduce(np.abs(np.where(exact, whole, 0.0)).astype(np.int64), axis=0)
    lowest = np.frexp((bits & -bits).astype(np.float64))[1] - 1  # the lowest bit any value sets
    unit = np.where(exact & (bits > 0), np.exp2(lowest) / scale, 1.0)
    top = np.where(exact, np.where(bits > 0, largest / unit, 0.0), np.inf)
    return unit, top


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
    bound, so both ways are exact and the split never changes a number. When every column is
    narrow (and none is such a curve), `from_counts` multiplies in float32, exact too.
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
        values = gridded[:, self.dense]
        self.values_t = np.ascontiguousarray(values.T)  # the product's left side: see `__call__`
        # Chains of consecutive curve columns; each hangs from the dense column on its left.
        breaks = np.flatnonzero(np.diff(self.curve) != 1) + 1
        self.chains = [(int(a), int(b)) for a, b in zip(np.r_[0, breaks], np.r_[breaks, len(self.curve)]) if b > a]
        self.anchors = [int(np.searchsorted(self.dense, self.curve[a] - 1)) for a, _ in self.chains]
        if len(self.curve):
            import scipy.sparse as sparse  # only for curve columns: the CLI's few ks rarely have any

            self.steps = sparse.csr_matrix(diffs[:, self.curve - 1].T)
        # Every column narrow: a resample's counts add up to n, so its sums stay within float32's integers.
        self.narrow_values: np.ndarray | None = None
        if not len(self.curve):
            unit, top = integer_units(values)
            if (top * self.n <= FLOAT32_EXACT).all():
                self.narrow_units = unit
                self.narrow_values = (values / unit).astype(np.float32)

    def __call__(self, columns: np.ndarray, out: np.ndarray) -> None:
        """Write ``columns.T @ gridded`` into ``out`` (m, n_cols); ``columns`` is (n, m), C-ordered,
        each column one resample's counts (or flip bits): the transposed layout the sparse product reads.
        Computed as ``gridded.T @ columns``: the same exact sums, and BLAS runs a few wide columns against
        many resamples about twice as fast that way round as many resamples against a few columns."""
        if not len(self.curve):
            out[...] = (self.values_t @ columns).T
            return
        dense = (self.values_t @ columns).T
        stepped = (self.steps @ columns).T
        out[:, self.dense] = dense
        for (a, b), anchor in zip(self.chains, self.anchors):
            # A chain is a stretch of consecutive columns: a slice of ``out``, filled in place.
            target = out[:, self.curve[a]:self.curve[b - 1] + 1]
            np.cumsum(stepped[:, a:b], axis=1, out=target)
            target += dense[:, [anchor]]

    @property
    def needs_float64_counts(self) -> bool:
        """Whether `from_counts` turns the counts over into float64 (some column is not narrow, or a curve)."""
        return self.narrow_values is None

    def from_counts(self, counts: np.ndarray, out: np.ndarray, buffer: BlockBuffer | None = None,
                    narrow_buffer: np.ndarray | None = None) -> None:
        """Write ``counts @ gridded`` into ``out`` (rows, n_cols); ``counts`` is (rows, n) small integers, one
        resample a row, each row adding up to at most n (`count_rows`). With every column narrow they are
        multiplied in float32 as they are (copied into ``narrow_buffer``, float32 of at least (rows, n), when
        given); else turned over into float64 (n, rows) for `__call__`, in ``buffer`` when given (a
        `BlockBuffer` of at least ``rows``). Reused buffers spare a page fault per page and block."""
        rows = counts.shape[0]
        if self.narrow_values is not None:
            as_float = narrow_buffer[:rows] if narrow_buffer is not None else np.empty(counts.shape, np.float32)
            np.copyto(as_float, counts)
            np.multiply(as_float @ self.narrow_values, self.narrow_units, out=out)
            return
        columns = buffer.view(rows) if buffer is not None else np.empty((self.n, rows))
        np.copyto(columns, counts.T)
        self(columns, out)


def count_rows(draw: np.ndarray, n: int, out: np.ndarray | None = None) -> np.ndarray:
    """How often each query appears in each resample: (rows, n) small integers from a (rows, n) index draw.

    Up to `_COUNT_BINS` bins go through one ``np.bincount``: one resample of many queries, or several of few,
    each shifted to its own n bins. A count is at most the resample size ``n``, so 16 bits hold it below 65,536
    queries. ``out``: a (rows, n) array to count into instead (float64 for a matrix product: no small-integer
    copy on the way), returned.
    """
    rows = draw.shape[0]
    counts = np.empty((rows, n), dtype=np.uint16 if n < 1 << 16 else np.uint32) if out is None else out
    step = max(1, min(rows, _COUNT_BINS // max(n, 1)))
    shifts = (np.arange(step, dtype=np.int64) * n)[:, None]
    for start in range(0, rows, step):
        block = draw[start:start + step]
        drawn = block[0] if step == 1 else (block + shifts[:len(block)]).ravel()
        counts[start:start + len(block)] = np.bincount(drawn, minlength=len(block) * n).reshape(-1, n)
    return counts


class BlockBuffer:
    """One float64 allocation reused for every block of rows of a resampling loop.

    Each block's (n, rows) matrix is a C-ordered view of the same memory. Allocating it anew for
    every block touches fresh pages each time; on this project's machines those page faults cost
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

    NumPy releases the GIL while it fills a draw, so the caller's counting and products of block i
    overlap the draw of block i+1. Draws stay in order from the one generator, so the stream, and
    every result, are exactly those of a plain loop. Block i+2 is drawn only once the caller is done
    with block i, so two buffers taking turns can hold what ``draw`` returns.
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


class PackedColumns:
    """Resampled sums of narrow columns without counting: each query's values, shifted to start at 0, sit side by
    side in 64-bit words (each field wide enough for the sum of n of them), so one gathered sum of a word over a
    resample's drawn queries is every field's sum at once. Integer sums: exact, the numbers of `ExactProducts`."""

    def __init__(self, words: np.ndarray, fields: list[tuple[int, int, int, int, float]]) -> None:
        self.words = words  # (n_words, n) uint64
        self.fields = fields  # per column: (word, shift, bits, lowest integer, unit)

    @classmethod
    def of(cls, gridded: np.ndarray) -> PackedColumns | None:
        """The packing of ``gridded``'s columns, or None when one is not narrow or they need too many words."""
        values = np.asarray(gridded, dtype=np.float64)
        n = values.shape[0]
        if not values.size or values.shape[1] > _MAX_PACKED_WORDS * 64 // n.bit_length():
            return None  # a column that varies takes at least bit_length(n) bits: these cannot all fit
        unit, top = integer_units(values)
        if (top * n > FLOAT32_EXACT).any():
            return None
        whole = np.rint(values / unit).astype(np.int64)
        low, high = whole.min(axis=0), whole.max(axis=0)
        fields, used = [], [0]
        for j in range(values.shape[1]):
            bits = int(n * int(high[j] - low[j])).bit_length()
            if used[-1] + bits > 64:
                used.append(0)
            fields.append((len(used) - 1, used[-1], bits, int(low[j]), float(unit[j])))
            used[-1] += bits
        if len(used) > _MAX_PACKED_WORDS:
            return None
        words = np.zeros((len(used), n), dtype=np.uint64)
        for j, (word, shift, _, lowest, _) in enumerate(fields):
            words[word] |= (whole[:, j] - lowest).astype(np.uint64) << np.uint64(shift)
        return cls(words, fields)

    def sums(self, draw: np.ndarray, out: np.ndarray) -> None:
        """Write each resample's column sums into ``out`` (rows, n_cols) from its (rows, n) index ``draw``."""
        rows, n = draw.shape
        step = max(1, _GATHER_ELEMENTS // n)
        totals = np.empty((len(self.words), rows), dtype=np.uint64)
        for start in range(0, rows, step):
            block = draw[start:start + step]
            for w, word in enumerate(self.words):
                word[block].sum(axis=1, out=totals[w, start:start + len(block)])
        for j, (w, shift, bits, lowest, unit) in enumerate(self.fields):
            field = (totals[w] >> np.uint64(shift)) & np.uint64((1 << bits) - 1)
            out[:, j] = (field.astype(np.int64) + n * lowest) * unit


def resample_sums(
    gridded: np.ndarray, n_resamples: int, rng: np.random.Generator, block_rows: int | None = None,
    product: ExactProducts | None = None,
) -> np.ndarray:
    """Resampled sums of each column of ``gridded`` (on `on_grid`'s grid), shape (n_resamples, n_cols).

    Resample ``b`` uses row ``b`` of ``rng.integers(0, n, size=(n_resamples, n), dtype=np.int32)``,
    drawn ``block_rows`` rows at a time (NumPy's stream does not depend on the split). Each
    row's index counts (`count_rows`) times the scores give every column's sum (or, for a few narrow
    columns, gathered sums of their packed values: `PackedColumns`); on the grid these sums are exact, so
    they do not depend on the order of the additions (`ExactProducts`).
    ``product`` is ``ExactProducts(gridded)`` when the caller already has it (to share it with
    `evalcore.stats.paired.flip_sums`).
    """
    n, n_cols = gridded.shape
    if block_rows is None:
        block_rows = max(1, min(n_resamples, _BLOCK_ELEMENTS // n))
    packed = PackedColumns.of(gridded)
    if product is None and packed is None:
        product = ExactProducts(np.asarray(gridded, dtype=np.float64))
    out = np.empty((n_resamples, n_cols), dtype=np.float64)
    starts = list(range(0, n_resamples, block_rows))
    sizes = [min(block_rows, n_resamples - start) for start in starts]

    def draw(rows: int) -> np.ndarray:
        return rng.integers(0, n, size=(rows, n), dtype=np.int32)

    if packed is not None:
        for start, rows, indices in zip(starts, sizes, prefetched(draw, sizes)):
            packed.sums(indices, out[start:start + rows])
        return out
    most = max(sizes, default=0)
    buffer = BlockBuffer(n, most) if product.needs_float64_counts else None
    narrow_buffer = None if product.needs_float64_counts else np.empty((most, n), dtype=np.float32)
    for start, rows, indices in zip(starts, sizes, prefetched(draw, sizes)):
        product.from_counts(count_rows(indices, n), out[start:start + rows], buffer, narrow_buffer)
    return out


def deviations_from_sums(sums: np.ndarray, gridded: np.ndarray) -> np.ndarray:
    """Resampled means minus the point, from `resample_sums` (one rounding, so exact sums give equal results)."""
    n = gridded.shape[0]
    return (sums - gridded.sum(axis=0)) / n


def resample_deviations(
    scores: np.ndarray, n_resamples: int, rng: np.random.Generator, block_rows: int | None = None
) -> np.ndarray:
    """Bootstrap means minus the point, shape (n_resamples, n_columns), float64.

    ``scores`` are per-query scores (or the same minus each column's mean: the deviations
    do not depend on a shift). They are put on `on_grid`'s grid and summed exactly by
    `resample_sums`, so a column's deviations do not depend on its neighbours or on
    ``block_rows``.
    """
    gridded = on_grid(scores)
    return deviations_from_sums(resample_sums(gridded, n_resamples, rng, block_rows), gridded)
