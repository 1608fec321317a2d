"""The indexes an index-size decision weighs: full float32 vectors, the first d dimensions (Matryoshka-style,
renormalised for cosine), scalar int8 and binary sign bits (Hamming distance, optionally rescored), each with its
exact size.

Index size (`index_bytes`), exactly: ``docs x bytes per vector + ids``, where a vector of d kept dimensions takes
``4 d`` bytes in float32, ``d`` in int8 and ``ceil(d / 8)`` in binary (sign bits packed eight to a byte); int8 adds
its quantizer, ``8 d`` bytes (a float32 lower end and step per dimension, once for the whole index); and the ids
take the UTF-8 bytes of every doc id plus 8 bytes per doc (a 64-bit offset locating it). A binary variant rescored
with float vectors reads the float vectors of its candidates from storage: they are not counted in its index.

How each variant scores (the doc matrix is only read; each variant holds only its own representation):

- float32 at d dims: the inner product of the first d numbers of query and doc (with cosine both renormalised
  to unit length first, so a truncated variant holds its own n x d float32 matrix; with dot it reads a view).
- int8: per dimension, the doc vectors' range [lo, hi] split into 255 steps, step = (hi - lo) / 255; a doc
  number x is stored as round((x - lo) / step) - 128 and read back as lo + step * (code + 128). The query stays
  float32 (asymmetric search): score = query . read-back doc.
- binary: one bit per dimension, set when the number is above zero, for query and doc alike; score =
  d - 2 x Hamming distance (the inner product of the +1/-1 vectors), computed exactly. Rescored ("binary-256-
  rescored-400"): the top R docs by Hamming distance are scored again with the float32 vectors of the same dims,
  and the depth best of those R are kept.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..errors import UsageError, invalid_parameter
from .index_spec import IndexSpec
from .search import (BLOCK_BYTES, Hits, Progress, doc_rows, float_scores, normalise_rows, prepared_rows, select,
                     top_n)

PRECISIONS = ("float32", "int8", "binary")
BYTES_PER_ID_OFFSET = 8


@dataclass(frozen=True)
class Variant:
    """One index: ``dims`` kept (of ``full_dims``), a ``precision``, and for binary the candidates ``rescore``d; or
    an approximate ``index`` (`evalcore.vectors.index_spec`) over the float32 vectors of those dims."""

    dims: int
    precision: str
    full_dims: int
    rescore: int = 0
    index: IndexSpec | None = None

    @property
    def is_full(self) -> bool:
        return self.dims == self.full_dims

    @property
    def is_exact(self) -> bool:
        """Searched exactly (every doc scored), not through an approximate index."""
        return self.index is None

    @property
    def is_reference(self) -> bool:
        """The full-precision, full-dimension vectors every other variant is measured against."""
        return self.is_full and self.precision == "float32" and self.is_exact

    @property
    def name(self) -> str:
        """``float32-full``, ``int8-256``, ``binary-256``, ``binary-256-rescored-400``, ``hnsw-m16-ef32``: safe in
        files and URLs."""
        if self.index is not None:
            return self.index.name
        name = f"{self.precision}-{'full' if self.is_full else self.dims}"
        return name + (f"-rescored-{self.rescore}" if self.rescore else "")

    @property
    def words(self) -> str:
        """The name for a sentence: ``binary 256``, ``int8 full``, ``binary 256 rescored (top 400)``,
        ``HNSW m = 16, ef = 32``."""
        if self.index is not None:
            return self.index.words
        name = f"{self.precision} {'full' if self.is_full else self.dims}"
        return name + (f" rescored (top {self.rescore})" if self.rescore else "")

    def vector_bytes(self) -> int:
        """Bytes one doc vector takes in this index."""
        if self.precision == "float32":
            return 4 * self.dims
        if self.precision == "int8":
            return self.dims
        return math.ceil(self.dims / 8)

    def held_bytes(self, n_docs: int) -> int:
        """What searching this variant holds in memory beyond blocks of the doc vectors: its codes, bits or index
        (a float32 variant streams the doc vectors and holds nothing of its own)."""
        if self.index is not None:
            return self.index.memory_bytes(n_docs, self.dims)
        return 0 if self.precision == "float32" else n_docs * self.vector_bytes()

    def index_bytes(self, n_docs: int, ids_bytes: int) -> int:
        """The exact size of this index over ``n_docs`` docs whose ids take ``ids_bytes`` (see `id_bytes`)."""
        quantizer = 8 * self.dims if self.precision == "int8" else 0
        return n_docs * self.vector_bytes() + quantizer + ids_bytes


def id_bytes(doc_ids: np.ndarray) -> int:
    """What the doc ids add to an index: their UTF-8 bytes plus an 8-byte offset per doc."""
    return int(sum(len(str(d).encode("utf-8")) for d in doc_ids)) + BYTES_PER_ID_OFFSET * len(doc_ids)


def parse_dims(text: str | list, full_dims: int) -> list[int]:
    """``"full,512,256"`` as dimension counts (``full`` is ``full_dims``), each between 1 and ``full_dims``."""
    items = text.split(",") if isinstance(text, str) else list(text)
    out: list[int] = []
    for item in items:
        token = str(item).strip().lower()
        if not token:
            continue
        if token == "full":
            value = full_dims
        else:
            try:
                value = int(token)
            except ValueError:
                raise invalid_parameter("dims", "'full' or whole numbers of dimensions, comma separated", item) \
                    from None
            if not 1 <= value <= full_dims:
                raise UsageError(f"The 'dims' parameter must be between 1 and the vectors' {full_dims} dimensions "
                                 f"(or 'full'). Got {value}.")
        if value not in out:
            out.append(value)
    if not out:
        raise invalid_parameter("dims", "at least one of 'full' or a number of dimensions", text)
    return out


def parse_precisions(text: str | list) -> list[str]:
    items = text.split(",") if isinstance(text, str) else list(text)
    out = []
    for item in items:
        token = str(item).strip().lower()
        if not token:
            continue
        if token not in PRECISIONS:
            raise invalid_parameter("precision", "float32, int8 or binary, comma separated", item)
        if token not in out:
            out.append(token)
    if not out:
        raise invalid_parameter("precision", "at least one of float32, int8, binary", text)
    return out


def plan_variants(full_dims: int, dims: str | list = "full", precisions: str | list = "float32", *,
                  rescore: int = 0, depth: int = 100, indexes: Sequence[IndexSpec] = ()) -> list[Variant]:
    """Every (dims, precision) pair asked for, the full float32 reference first; with ``rescore`` each binary
    variant also rescored (the top ``rescore`` candidates, at least ``depth``); then each approximate index of
    ``indexes``, after the exact float32 vectors of its dims (added when not asked for: every index is measured
    against exact search of the same dims)."""
    if rescore and rescore < depth:
        raise UsageError(f"The 'rescore' parameter must be at least the depth ({depth}): the rescored candidates "
                         f"are where the top {depth} come from. Got {rescore}.")
    reference = Variant(full_dims, "float32", full_dims)
    out = [reference]
    for d in parse_dims(dims, full_dims):
        for precision in parse_precisions(precisions):
            variant = Variant(d, precision, full_dims)
            if variant != reference:
                out.append(variant)
            if precision == "binary" and rescore:
                out.append(Variant(d, precision, full_dims, rescore))
    for spec in indexes:
        exact = Variant(spec.dims or full_dims, "float32", full_dims)
        if exact not in out:
            out.append(exact)
    return out + [approximate(spec, full_dims) for spec in indexes]


def approximate(spec: IndexSpec, full_dims: int) -> Variant:
    """The variant of an approximate index: its dims (all when the SPEC keeps them all) and how it stores a
    vector (float32, int8 for SQ8, pq codes)."""
    return Variant(spec.dims or full_dims, spec.info.storage, full_dims, index=spec)


# ----------------------------------------------------------------------------- searching one variant


def search_variant(variant: Variant, queries: np.ndarray, docs: np.ndarray, similarity: str, depth: int,
                   tie_rank: np.ndarray, *, progress: Progress | None = None, docs_unit: bool = True) -> Hits:
    """The top ``depth`` docs of every query in this variant's index.

    ``queries`` and ``docs`` are the full float32 vectors, queries unit length for cosine (`normalise_rows`), and
    docs too unless ``docs_unit`` is False (doc vectors on disk, scaled a block at a time as they are read);
    neither is changed. Docs that are not an array in memory (`evalcore.vectors.on_disk`) are read a block at a
    time: the float32 variants never hold a copy of them.
    """
    cosine = similarity == "cosine"
    scale = cosine and not docs_unit
    q = first_dims(queries, variant.dims, cosine)
    n_docs = docs.shape[0]
    if variant.precision == "float32":
        row_bytes = 4 * docs.shape[1]  # the same blocks whether the docs are held or read from disk
        if not isinstance(docs, np.ndarray):
            scores = float_scores(q, docs, prepare=lambda block: prepared_rows(block, variant.dims, cosine, scale))
            return top_n(scores, len(q), n_docs, depth, tie_rank, progress=progress, row_bytes=row_bytes)
        d = docs if variant.is_full else first_dims(docs, variant.dims, cosine)
        return top_n(float_scores(q, d), len(q), n_docs, depth, tie_rank, progress=progress, row_bytes=row_bytes)
    if variant.precision == "int8":
        codes, lo, step = quantize_int8(docs, variant.dims, cosine, scale=scale)
        return top_n(int8_scores(q, codes, lo, step), len(q), n_docs, depth, tie_rank, progress=progress)
    bits = sign_bits(docs, variant.dims)
    query_signs = np.where(q > 0, np.float32(1), np.float32(-1))
    wanted = variant.rescore or depth
    if not variant.rescore:
        return top_n(binary_scores(query_signs, bits, variant.dims), len(q), n_docs, wanted, tie_rank,
                     progress=progress)
    found = top_n(binary_scores(query_signs, bits, variant.dims), len(q), n_docs, wanted, tie_rank,
                  progress=None if progress is None else (lambda share: progress(0.9 * share)))
    del bits
    return rescore_with_floats(found, q, docs, variant.dims, cosine, depth, tie_rank, scale=scale)


def first_dims(matrix: np.ndarray, dims: int, cosine: bool) -> np.ndarray:
    """The first ``dims`` numbers of each row: a view for dot (or all dims), renormalised copies for cosine."""
    if dims == matrix.shape[1]:
        return matrix
    if not cosine:
        return matrix[:, :dims]
    return normalise_rows(matrix[:, :dims])


def quantize_int8(docs: np.ndarray, dims: int, cosine: bool, *,
                  scale: bool = False) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(codes, lo, step) of the first ``dims`` numbers (renormalised for cosine; ``scale``: rows not yet unit
    length), built a block of rows at a time."""
    lo = np.full(dims, np.inf, dtype=np.float32)
    hi = np.full(dims, -np.inf, dtype=np.float32)
    rows = doc_rows(docs)
    for start in range(0, docs.shape[0], rows):
        block = prepared_rows(docs[start:start + rows], dims, cosine, scale)
        np.minimum(lo, block.min(axis=0), out=lo)
        np.maximum(hi, block.max(axis=0), out=hi)
    step = ((hi - lo) / np.float32(255)).astype(np.float32)
    step[step == 0] = 1  # a constant dimension: every code 0 reads back as lo exactly
    codes = np.empty((docs.shape[0], dims), dtype=np.int8)
    for start in range(0, docs.shape[0], rows):
        block = prepared_rows(docs[start:start + rows], dims, cosine, scale)
        levels = np.rint((block - lo) / step)
        np.clip(levels, 0, 255, out=levels)
        codes[start:start + rows] = (levels - 128).astype(np.int8)
    return codes, lo, step


def int8_scores(queries: np.ndarray, codes: np.ndarray, lo: np.ndarray, step: np.ndarray):
    """query . (lo + step (code + 128)) = query . (lo + 128 step) + (query * step) . code, in float32."""
    scaled = np.ascontiguousarray(queries * step, dtype=np.float32)
    offset = (queries @ (lo + np.float32(128) * step)).astype(np.float32)

    widened = np.empty((0, codes.shape[1]), dtype=np.float32)

    def scores(q0: int, q1: int, d0: int, d1: int, out: np.ndarray | None = None) -> np.ndarray:
        nonlocal widened
        if widened.shape[0] != d1 - d0:
            widened = np.empty((d1 - d0, codes.shape[1]), dtype=np.float32)
        np.copyto(widened, codes[d0:d1])  # int8 to float32 in a reused buffer
        block = np.matmul(scaled[q0:q1], widened.T, out=out)
        block += offset[q0:q1, None]
        return block
    return scores


def sign_bits(docs: np.ndarray, dims: int) -> np.ndarray:
    """One bit per kept dimension (set when above zero), packed eight to a byte: (n, ceil(dims / 8)) uint8."""
    out = np.empty((docs.shape[0], math.ceil(dims / 8)), dtype=np.uint8)
    rows = doc_rows(docs)
    for start in range(0, docs.shape[0], rows):
        out[start:start + rows] = np.packbits(docs[start:start + rows, :dims] > 0, axis=1)
    return out


def binary_scores(query_signs: np.ndarray, bits: np.ndarray, dims: int):
    """dims - 2 x Hamming distance, as the inner product of +1/-1 vectors (exact: small integers in float32)."""
    def scores(q0: int, q1: int, d0: int, d1: int, out: np.ndarray | None = None) -> np.ndarray:
        signs = np.unpackbits(bits[d0:d1], axis=1, count=dims).astype(np.float32)
        signs *= 2
        signs -= 1
        return np.matmul(query_signs[q0:q1], signs.T, out=out)
    return scores


def rescore_with_floats(found: Hits, queries: np.ndarray, docs: np.ndarray, dims: int, cosine: bool, depth: int,
                        tie_rank: np.ndarray, rows: int = 64, *, scale: bool = False) -> Hits:
    """The ``depth`` best of each query's candidates, scored with the float32 vectors of the same dims
    (``scale``: doc rows not yet unit length)."""
    n_queries, wanted = found.docs.shape
    keep = min(depth, wanted)
    out_scores = np.empty((n_queries, keep), dtype=np.float32)
    out_docs = np.empty((n_queries, keep), dtype=np.int64)
    rows = max(1, min(rows, BLOCK_BYTES // max(1, 4 * wanted * docs.shape[1])))  # candidates' rows in one block
    for q0 in range(0, n_queries, rows):
        q1 = min(n_queries, q0 + rows)
        candidates = found.docs[q0:q1]
        vectors = prepared_rows(docs[candidates.ravel()], dims, cosine, scale)
        vectors = vectors.reshape(q1 - q0, wanted, dims)
        values = np.einsum("qd,qrd->qr", queries[q0:q1], vectors, dtype=np.float32)
        row_ids = np.repeat(np.arange(q1 - q0), wanted)
        out_scores[q0:q1], out_docs[q0:q1] = select(row_ids, candidates.ravel(), values.ravel(), q1 - q0, keep,
                                                    tie_rank)
    return Hits(out_scores, out_docs)
