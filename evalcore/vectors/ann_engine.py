"""Approximate indexes behind one interface: an `Engine` builds an index from the doc vectors of a variant (full or
truncated dims) and searches it; `measure` times it the same way for every engine.

faiss is the one implementation today (`evalcore.vectors.ann_faiss`); a second engine (a vector database's client,
another library) is a class with the same methods added to `evalcore.vectors.ann_runs.ENGINES`, and nothing above
changes.
The doc vectors reach an engine as `DocSource` blocks (never a second copy of the whole matrix), already as the
exact search sees them: the first d numbers, unit length for cosine.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from .index_spec import IndexSpec, train_rows
from .search import doc_rows, prepared_rows

LATENCY_QUERIES = 1000
"""Most queries timed one at a time for the latency percentiles (evenly spread over the queries searched)."""
BATCH_SECONDS = 0.2
BATCH_REPEATS = 5
"""A batch that takes less than `BATCH_SECONDS` is searched again (up to `BATCH_REPEATS` times in all) and the
fastest time kept: a few milliseconds measured once are mostly the timer and the machine's other work."""


@dataclass(frozen=True)
class DocSource:
    """The docs as a variant's search sees them (`evalcore.vectors.search.prepared_rows`): the first ``dims``
    numbers of each row of ``matrix`` (an array or a matrix on disk), renormalised for ``cosine`` when truncated,
    and scaled to unit length first when ``scale`` (rows on disk not yet unit length)."""

    matrix: object
    dims: int
    cosine: bool
    scale: bool

    @property
    def n(self) -> int:
        return int(self.matrix.shape[0])

    def rows(self, start: int, stop: int) -> np.ndarray:
        return prepared_rows(np.asarray(self.matrix[start:stop], dtype=np.float32), self.dims, self.cosine,
                             self.scale)

    def blocks(self, rows: int | None = None) -> Iterator[np.ndarray]:
        """The prepared rows, `evalcore.vectors.search.doc_rows` at a time."""
        rows = rows or doc_rows(self.matrix)
        for start in range(0, self.n, rows):
            yield self.rows(start, min(self.n, start + rows))

    def sample(self, most: int | None = None, seed: int = 0) -> np.ndarray:
        """Every row when there are at most ``most`` (default: as many as an index trains on,
        `evalcore.vectors.index_spec.train_rows`), else ``most`` rows drawn with ``seed`` (in row order)."""
        most = most or train_rows(self.n, self.dims) or 1
        if self.n <= most:
            return self.rows(0, self.n)
        picked = np.sort(np.random.default_rng(seed).choice(self.n, most, replace=False))
        return prepared_rows(np.asarray(self.matrix[picked], dtype=np.float32), self.dims, self.cosine, self.scale)


class BuiltIndex(Protocol):
    """An index over the docs, ready to search."""

    def search(self, queries: np.ndarray, depth: int, spec: IndexSpec | None) -> tuple[np.ndarray, np.ndarray]:
        """(scores float32, doc rows int64) of shape (queries, depth), best first; a row of -1 where the index
        returned fewer than ``depth`` docs. ``spec`` gives the search setting (ef, nprobe); None for exact."""

    def serialized_bytes(self) -> int:
        """The index's size written to a file."""


class Engine(Protocol):
    """Builds and searches approximate indexes of the kinds in `evalcore.vectors.index_spec.KINDS`."""

    name: str

    def version(self) -> str: ...

    def build(self, spec: IndexSpec, docs: DocSource, similarity: str, *, seed: int) -> BuiltIndex: ...

    def exact(self, docs: DocSource, similarity: str) -> BuiltIndex:
        """Exact search in the same engine (its flat index): the speed an approximate index is compared with."""

    def threads(self, count: int | None) -> AbstractContextManager:
        """Run the block with ``count`` threads (None: the engine's default, every core)."""


@dataclass(frozen=True)
class Measured:
    """One search of every query, on one thread: the hits, queries per second of the whole batch, and each query's
    latency searched alone (p50, p99, over at most `LATENCY_QUERIES` queries)."""

    scores: np.ndarray
    rows: np.ndarray
    queries_per_second: float
    latency_p50_ms: float
    latency_p99_ms: float
    threads: int = 1


def measure(engine_: Engine, index: BuiltIndex, queries: np.ndarray, depth: int,
            spec: IndexSpec | None) -> Measured:
    """Search ``queries`` as one batch on one thread (the hits and queries per second, the fastest of a few
    searches when one is short), then time queries one at a time (latency): one thread, so the numbers do not depend
    on the machine's cores or its other work's threads."""
    with engine_.threads(1):
        seconds, spent = np.inf, 0.0
        for _ in range(BATCH_REPEATS):
            start = time.perf_counter()
            scores, rows = index.search(queries, depth, spec)
            took = time.perf_counter() - start
            seconds, spent = min(seconds, took), spent + took
            if spent >= BATCH_SECONDS:
                break
        seconds = max(seconds, 1e-9)
        timed = np.unique(np.linspace(0, len(queries) - 1, min(len(queries), LATENCY_QUERIES)).astype(np.int64))
        latencies = np.empty(len(timed), dtype=np.float64)
        for place, row in enumerate(timed):  # one call per query: latency is what one query waits
            one = queries[row:row + 1]
            begin = time.perf_counter()
            index.search(one, depth, spec)
            latencies[place] = time.perf_counter() - begin
    p50, p99 = np.percentile(latencies * 1000, [50, 99])
    return Measured(scores, rows, len(queries) / seconds, float(p50), float(p99))


def timed_build(build: Callable[[], BuiltIndex]) -> tuple[BuiltIndex, float]:
    """The index ``build`` makes and the seconds it took."""
    start = time.perf_counter()
    index = build()
    return index, time.perf_counter() - start
