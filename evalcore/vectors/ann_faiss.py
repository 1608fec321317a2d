"""The faiss engine (faiss-cpu, the ``ann`` extra): HNSW (flat and SQ8), IVF-Flat and IVF-PQ by inner product,
built from doc blocks, trained with a seed, searched with the SPEC's ef or nprobe.

Deterministic where faiss allows: training draws its sample and its k-means starts from the seed, and HNSW's levels
from faiss's fixed generator, so a build on one thread gives the same index every time (more threads may order
HNSW's insertions differently). faiss's thread count is one setting for the whole process: a lock keeps one build
or timed search at a time, so two pages never change it under each other.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np

from ..errors import UsageError
from .ann_engine import DocSource
from .index_spec import IndexSpec

INSTALL = 'pip install -e ".[ann]"'
_LOCK = threading.RLock()


def _faiss():
    """faiss, imported on first use (an optional package, slow to load); a clear sentence when it is missing."""
    try:
        import faiss  # deferred: optional (the ann extra), and only approximate indexes need it
    except ImportError:
        raise UsageError(f"Approximate indexes need faiss-cpu, which is not installed: {INSTALL}.") from None
    return faiss


class FaissIndex:
    """A built faiss index and how to search it."""

    def __init__(self, index, kind: str | None) -> None:
        self.index = index
        self.kind = kind

    def search(self, queries: np.ndarray, depth: int, spec: IndexSpec | None) -> tuple[np.ndarray, np.ndarray]:
        faiss = _faiss()
        params = None
        if spec is not None and spec.info.search_param == "ef":
            params = faiss.SearchParametersHNSW(efSearch=spec.value("ef"))
        elif spec is not None:
            params = faiss.SearchParametersIVF(nprobe=spec.value("nprobe"))
        depth = min(depth, self.index.ntotal)
        scores, rows = self.index.search(np.ascontiguousarray(queries, dtype=np.float32), depth, params=params)
        return scores, rows.astype(np.int64, copy=False)

    def serialized_bytes(self) -> int:
        faiss = _faiss()
        size = [0]

        def count(data: bytes) -> None:
            size[0] += len(data)
        faiss.write_index(self.index, faiss.PyCallbackIOWriter(count))
        return size[0]


class FaissEngine:
    """`evalcore.vectors.ann_engine.Engine` over faiss-cpu."""

    name = "faiss"

    def __init__(self) -> None:
        self.faiss = _faiss()

    def version(self) -> str:
        return f"faiss {self.faiss.__version__}"

    def build(self, spec: IndexSpec, docs: DocSource, similarity: str, *, seed: int) -> FaissIndex:
        faiss = self.faiss
        index = faiss.index_factory(docs.dims, _factory(spec), faiss.METRIC_INNER_PRODUCT)
        if spec.kind.startswith("hnsw"):
            index.hnsw.efConstruction = spec.value("efc")
        else:
            ivf = faiss.extract_index_ivf(index)
            _seeded(ivf.cp, seed)
            if spec.kind == "ivfpq":
                pq_index = faiss.downcast_index(ivf)
                pq_index.do_polysemous_training = False  # for polysemous filtering, which no search here uses
                _seeded(pq_index.pq.cp, seed)
        if not index.is_trained:
            index.train(docs.sample(seed=seed))
        for block in docs.blocks():
            index.add(block)
        return FaissIndex(index, spec.kind)

    def exact(self, docs: DocSource, similarity: str) -> FaissIndex:
        index = self.faiss.IndexFlatIP(docs.dims)
        for block in docs.blocks():
            index.add(block)
        return FaissIndex(index, None)

    @contextmanager
    def threads(self, count: int | None) -> Iterator[None]:
        with _LOCK:
            before = self.faiss.omp_get_max_threads()
            if count is not None:
                self.faiss.omp_set_num_threads(int(count))
            try:
                yield
            finally:
                self.faiss.omp_set_num_threads(before)


def _factory(spec: IndexSpec) -> str:
    """The faiss factory string of a SPEC: ``HNSW16,Flat``, ``HNSW16_SQ8``, ``IVF64,Flat``, ``IVF64,PQ16x8``."""
    if spec.kind == "hnsw":
        return f"HNSW{spec.value('m')},Flat"
    if spec.kind == "hnsw-sq8":
        return f"HNSW{spec.value('m')}_SQ8"
    if spec.kind == "ivf":
        return f"IVF{spec.value('nlist')},Flat"
    return f"IVF{spec.value('nlist')},PQ{spec.value('m')}x{spec.value('nbits')}"


def _seeded(clustering, seed: int) -> None:
    """k-means from ``seed``; faiss's advice about too few training points is ours to give (a warning of the study,
    not a line on the terminal from C++)."""
    clustering.seed = int(seed)
    clustering.min_points_per_centroid = 1

