"""Exact top-N search in blocks: scores of a query block against a doc block, the N best kept, ties broken as runs.

The run rule (docs/metrics.md, `evalcore.readers.runs`) orders a ranking by score descending, ties by doc id
descending; the search keeps exactly the N docs that rule puts first, so a run built from the hits and read back
through `read_run` is in the same order and cut at the same place. Memory is bounded by the blocks: one score
block (at most `BLOCK_BYTES`) and the candidates of one query block are held at a time, never a score matrix of
every query against every doc, and the doc matrix itself is only read.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..errors import invalid_parameter

SIMILARITIES = ("cosine", "dot")
BLOCK_BYTES = 32 << 20
"""Most bytes one block of float32 scores may take (queries x docs x 4)."""
QUERY_BLOCK = 1024
"""Most queries scored at once."""
DOC_BLOCK_BYTES = 16 << 20
"""Most bytes of doc rows read at a time (a block of a memory-mapped matrix is resident while it is used)."""

ScoreBlock = Callable[[int, int, int, int, "np.ndarray | None"], np.ndarray]
"""``scores(q0, q1, d0, d1, out)``: float32 scores of queries q0:q1 against docs d0:d1, shape (q1 - q0, d1 - d0),
written into ``out`` when it is given (a reused buffer of that shape)."""
Progress = Callable[[float], None]
"""Called with the share of the work done (0 to 1)."""


class ScoreOverflow(ArithmeticError):
    """A block of scores held a value past float32's range (or NaN, from an infinity minus another): no order of
    such scores can be trusted, so the search stops at the first one (the caller names the files)."""


@dataclass(frozen=True)
class Hits:
    """The top docs of every query: ``docs[i]`` are row numbers of the doc matrix, best first, with ``scores[i]``."""

    scores: np.ndarray
    docs: np.ndarray

    @property
    def depth(self) -> int:
        return int(self.docs.shape[1])


def check_similarity(similarity: str) -> str:
    if similarity not in SIMILARITIES:
        raise invalid_parameter("similarity", "'cosine' or 'dot'", similarity)
    return similarity


def tie_ranks(doc_ids: np.ndarray) -> np.ndarray:
    """Each doc's place in doc-id-descending order (0 for the largest id): the smaller wins a tie on score.

    Python compares strings by code point, as Arrow compares UTF-8 bytes, so this is the order `read_run` uses.
    """
    order = np.argsort(np.asarray(doc_ids, dtype=object), kind="stable")[::-1]
    ranks = np.empty(len(order), dtype=np.int64)
    ranks[order] = np.arange(len(order), dtype=np.int64)
    return ranks


def doc_rows(matrix) -> int:
    """Rows of ``matrix`` read at a time: `DOC_BLOCK_BYTES` of float32 numbers, at least one row."""
    return max(1, DOC_BLOCK_BYTES // (4 * max(1, int(matrix.shape[1]))))


def normalise_rows(matrix: np.ndarray, *, out: np.ndarray | None = None, rows: int | None = None) -> np.ndarray:
    """Rows scaled to unit length (a zero row stays zero: it scores 0 against every query), in blocks of ``rows``
    (default `doc_rows`); each row's result does not depend on the blocks.

    ``out`` may be ``matrix`` itself (in place) or a new C-contiguous array of its shape.
    """
    rows = rows or doc_rows(matrix)
    target = np.empty(matrix.shape, dtype=np.float32) if out is None else out
    for start in range(0, matrix.shape[0], rows):
        block = np.asarray(matrix[start:start + rows], dtype=np.float32)
        # Lengths in float64: squares of large (or tiny) float32 values overflow (or lose their digits) in float32.
        norms = np.sqrt(np.einsum("ij,ij->i", block, block, dtype=np.float64))
        norms[norms == 0] = 1
        np.divide(block, norms[:, None], out=target[start:start + rows], casting="unsafe")
    return target


def prepared_rows(block: np.ndarray, dims: int, cosine: bool, scale: bool) -> np.ndarray:
    """Doc rows as a variant of ``dims`` reads them: scaled to unit length first when ``scale`` (rows on disk not yet
    unit length, as the matrix held whole would have been), then the first ``dims`` numbers, renormalised for
    cosine when truncated. Row by row the same numbers as the matrix held whole gives."""
    if scale:  # a block read from disk is a copy of its own: scaled in place
        owned = block.flags.owndata and block.flags.writeable and block.dtype == np.float32
        block = normalise_rows(block, out=block if owned else None)
    if dims != block.shape[1]:
        block = normalise_rows(block[:, :dims]) if cosine else block[:, :dims]
    return np.ascontiguousarray(block, dtype=np.float32)


def row_norms(matrix: np.ndarray, rows: int | None = None) -> np.ndarray:
    """The length of every row, in float64 (squares of large or tiny float32 values overflow or vanish in float32),
    a block of ``rows`` (default `doc_rows`) at a time: 0 exactly for a row of zeros."""
    rows = rows or doc_rows(matrix)
    out = np.empty(matrix.shape[0], dtype=np.float64)
    for start in range(0, matrix.shape[0], rows):
        block = matrix[start:start + rows]
        out[start:start + rows] = np.sqrt(np.einsum("ij,ij->i", block, block, dtype=np.float64))
    return out


def unit_rows(matrix: np.ndarray, tolerance: float = 1e-6, rows: int | None = None) -> np.ndarray:
    """``matrix`` itself when every row is already unit length (within ``tolerance``: vectors exported normalised,
    as most are), else a unit-length copy (`normalise_rows`): the one doc matrix copy cosine may need."""
    return matrix if is_unit(matrix, tolerance, rows) else normalise_rows(matrix)


def is_unit(matrix, tolerance: float = 1e-6, rows: int | None = None) -> bool:
    """Whether every row is unit length within ``tolerance``, read a block of ``rows`` at a time."""
    rows = rows or doc_rows(matrix)
    for start in range(0, matrix.shape[0], rows):
        block = matrix[start:start + rows]
        norms = np.sqrt(np.einsum("ij,ij->i", block, block, dtype=np.float64))
        if np.abs(norms - 1).max(initial=0) > tolerance:
            return False
    return True


def top_n(scores: ScoreBlock, n_queries: int, n_docs: int, depth: int, tie_rank: np.ndarray, *,
          progress: Progress | None = None, block_bytes: int | None = None, row_bytes: int | None = None) -> Hits:
    """The ``depth`` best docs of every query by ``scores``, exactly as the run rule orders them.

    Per query block, the first doc block's best are found by partition; every later block only offers the
    scores at or above each query's ``depth``-th best as last merged (a tie may still win on its doc id), which
    after a few blocks are few; they wait and are merged with the best so far once they outnumber them (and at the
    end). One score buffer is reused for every block.
    """
    keep = min(depth, n_docs)
    query_block = max(1, min(n_queries, QUERY_BLOCK))
    doc_block = max(keep * 4, (block_bytes or BLOCK_BYTES) // (4 * query_block), 1)
    if row_bytes:  # doc rows read per block within `DOC_BLOCK_BYTES` (``row_bytes``: one doc row as read)
        doc_block = max(keep * 4, min(doc_block, DOC_BLOCK_BYTES // row_bytes), 1)
    out_scores = np.empty((n_queries, keep), dtype=np.float32)
    out_docs = np.empty((n_queries, keep), dtype=np.int64)
    buffer = np.empty((query_block, min(doc_block, n_docs)), dtype=np.float32)
    total = max(1, -(-n_queries // query_block) * -(-n_docs // doc_block))
    done = 0
    for q0 in range(0, n_queries, query_block):
        q1 = min(n_queries, q0 + query_block)
        rows_here = q1 - q0
        best_scores = best_docs = None
        pending: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
        waiting = 0
        for d0 in range(0, n_docs, doc_block):
            d1 = min(n_docs, d0 + doc_block)
            out = buffer[:rows_here, :d1 - d0] if d1 - d0 == buffer.shape[1] else None
            block = scores(q0, q1, d0, d1, out)
            if not np.isfinite(block).all():
                raise ScoreOverflow(f"queries {q0} to {q1 - 1} against docs {d0} to {d1 - 1}")
            if best_scores is None:
                r, c = _best_in_block(block, keep)
                best_scores, best_docs = select(r, c + d0, block[r, c], rows_here, keep, tie_rank)
            else:
                r, c = _where(block >= best_scores[:, -1:])  # the threshold of the last merge: never too high
                if len(r):
                    pending.append((r, c + d0, block[r, c]))
                    waiting += len(r)
                if waiting > rows_here * keep:  # merge when the candidates waiting outnumber the best kept
                    best_scores, best_docs = _merge(best_scores, best_docs, pending, keep, tie_rank)
                    pending, waiting = [], 0
            del block
            done += 1
            if progress is not None:
                progress(done / total)
        if pending:
            best_scores, best_docs = _merge(best_scores, best_docs, pending, keep, tie_rank)
        out_scores[q0:q1], out_docs[q0:q1] = best_scores, best_docs
    return Hits(out_scores, out_docs)


def _merge(best_scores: np.ndarray, best_docs: np.ndarray, pending: list, keep: int,
           tie_rank: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The best kept so far merged with the candidates waiting, by the run rule."""
    rows_here = best_scores.shape[0]
    rows = np.concatenate([np.repeat(np.arange(rows_here), keep)] + [p[0] for p in pending])
    docs = np.concatenate([best_docs.ravel()] + [p[1] for p in pending])
    values = np.concatenate([best_scores.ravel()] + [p[2] for p in pending])
    return select(rows, docs, values, rows_here, keep, tie_rank)


def _best_in_block(block: np.ndarray, keep: int) -> tuple[np.ndarray, np.ndarray]:
    """(row, column) of every score at least the row's ``keep``-th largest: ``keep`` per row, more on a tie."""
    width = block.shape[1]
    if width <= keep:
        return np.nonzero(np.ones(block.shape, dtype=bool))
    threshold = np.partition(block, width - keep, axis=1)[:, width - keep]
    return _where(block >= threshold[:, None])


def _where(mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(rows, columns) of the True cells of a 2-D mask: one flat scan (a 2-D ``nonzero`` is about ten times
    slower)."""
    flat = np.flatnonzero(mask)
    rows = flat // mask.shape[1]
    return rows, flat - rows * mask.shape[1]


def select(rows: np.ndarray, docs: np.ndarray, values: np.ndarray, n_rows: int, keep: int,
           tie_rank: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Of candidate (row, doc, score) triples, the ``keep`` best of each row: score descending, then doc id
    descending. Every row must have at least ``keep`` candidates."""
    order = _rule_order(rows, docs, values, n_rows, tie_rank)
    rows, docs, values = rows[order], docs[order], values[order]
    starts = np.searchsorted(rows, np.arange(n_rows))
    place = np.arange(len(rows)) - starts[rows]
    chosen = place < keep
    return values[chosen].reshape(n_rows, keep), docs[chosen].reshape(n_rows, keep)


def _rule_order(rows: np.ndarray, docs: np.ndarray, values: np.ndarray, n_rows: int,
                tie_rank: np.ndarray) -> np.ndarray:
    """The permutation putting candidates in (row, score descending, doc id descending) order.

    One sort of a 64-bit key when row, score and tie rank fit in it (the row in the top bits, then the float32
    score's bits made to sort descending, then the tie rank): much cheaper than a sort on three keys. Otherwise
    the three-key sort.
    """
    row_bits = max(1, int(n_rows - 1).bit_length())
    rank_bits = max(1, int(len(tie_rank) - 1).bit_length())
    if row_bits + 32 + rank_bits > 64:
        return np.lexsort((tie_rank[docs], -values, rows))
    signed = np.ascontiguousarray(values, dtype=np.float32) + np.float32(0)  # -0.0 becomes 0.0: they tie
    bits = signed.view(np.uint32).astype(np.uint64)
    negative = (bits >> np.uint64(31)).astype(bool)
    ascending = np.where(negative, ~bits & np.uint64(0xFFFFFFFF), bits | np.uint64(0x80000000))
    descending = np.uint64(0xFFFFFFFF) - ascending  # larger scores first
    key = (rows.astype(np.uint64) << np.uint64(32 + rank_bits)) | (descending << np.uint64(rank_bits)) \
        | tie_rank[docs].astype(np.uint64)
    return np.argsort(key, kind="stable")


def float_scores(queries: np.ndarray, docs, *, prepare: Callable[[np.ndarray], np.ndarray] | None = None
                 ) -> ScoreBlock:
    """Scores as the inner product of float32 rows (cosine when both sides are unit length). With ``prepare`` each
    block of doc rows is made what the variant scores (`prepared_rows`) as it is read: how doc vectors on disk are
    searched without a second copy of them."""
    def scores(q0: int, q1: int, d0: int, d1: int, out: np.ndarray | None = None) -> np.ndarray:
        block = docs[d0:d1] if prepare is None else prepare(docs[d0:d1])
        with np.errstate(over="ignore", invalid="ignore"):  # an overflow is reported once, as an error, by the caller
            return np.matmul(queries[q0:q1], block.T, out=out)
    return scores
