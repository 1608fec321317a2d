"""Approximate indexes searched like the exact variants: each built once from the doc vectors of its dims (a sweep
of ef or nprobe shares one build), every query searched on one thread, and timed: build seconds, queries per
second, p50 and p99 latency, and the index's size written to a file.

The exact float32 search of the same dims is timed the same way in the same engine (its flat index), so "4x faster
than exact" compares like with like; it is skipped when the doc matrix is searched from disk (a flat index would
hold it whole in memory).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from ..errors import UsageError
from .ann_engine import DocSource, Engine, measure, timed_build
from .ann_faiss import FaissEngine
from .search import Hits
from .variants import Variant, first_dims

ENGINES: dict[str, Callable[[], Engine]] = {FaissEngine.name: FaissEngine}
"""Every engine by name: one implementation of `evalcore.vectors.ann_engine.Engine` each."""
DEFAULT_ENGINE = FaissEngine.name


@dataclass(frozen=True)
class Speed:
    """How an index was built and how fast it answers (one thread for every search)."""

    build_seconds: float
    queries_per_second: float
    latency_p50_ms: float
    latency_p99_ms: float
    serialized_bytes: int
    engine: str
    build_threads: int | None
    search_threads: int = 1

    def to_dict(self) -> dict:
        return {"build_seconds": self.build_seconds, "queries_per_second": self.queries_per_second,
                "latency_ms": {"p50": self.latency_p50_ms, "p99": self.latency_p99_ms}}


@dataclass(frozen=True)
class Searched:
    """One variant's hits (a doc row of -1 where the index returned fewer docs than the depth) and its speed."""

    hits: Hits
    speed: Speed


class BuildStore(Protocol):
    """Where built indexes are kept between studies of the same doc vectors (the caller keys it by their content):
    a sweep that adds an ef or nprobe searches the index already built."""

    def get(self, key: tuple) -> tuple | None: ...

    def __setitem__(self, key: tuple, value: tuple) -> None: ...


def engine(name: str = DEFAULT_ENGINE) -> Engine:
    """The engine ``name``: a `UsageError` when it is unknown or its package is missing."""
    if name not in ENGINES:
        raise UsageError(f"The 'engine' parameter must be one of {', '.join(sorted(ENGINES))}. Got {name!r}.")
    return ENGINES[name]()


def search_indexes(variants: Sequence[Variant], queries: np.ndarray, docs, similarity: str, depth: int, *,
                   docs_unit: bool, build_threads: int | None = None, seed: int = 0,
                   engine_name: str = DEFAULT_ENGINE, progress: Callable[[int, float], None] | None = None,
                   builds: BuildStore | None = None) -> dict[Variant, Searched]:
    """Build and search every approximate variant of ``variants`` (one build per `IndexSpec.build_key`).

    ``queries`` and ``docs`` are the full vectors as the exact search holds them: unit length for cosine when
    ``docs_unit`` (else the docs are scaled block by block as an index reads them); ``progress(i, share)`` is
    told how far variant ``i`` of ``variants`` is; ``builds`` keeps built indexes for later studies of the same
    docs (the build's parameters, the similarity, seed, threads and engine are its key).
    """
    chosen = [(i, v) for i, v in enumerate(variants) if v.index is not None]
    if not chosen:
        return {}
    for _, variant in chosen:
        variant.index.check(int(docs.shape[0]), variant.full_dims)
    runner = engine(engine_name)
    cosine = similarity == "cosine"
    built: dict[tuple, tuple] = {}
    out: dict[Variant, Searched] = {}
    for number, variant in chosen:
        spec = variant.index
        source = _source(docs, variant.dims, cosine, docs_unit)
        if spec.build_key not in built:
            key = (spec.build_key, similarity, docs_unit, seed, build_threads, engine_name)
            kept = builds.get(key) if builds is not None else None
            if kept is None:
                with runner.threads(build_threads):
                    index, seconds = timed_build(lambda: runner.build(spec, source, similarity, seed=seed))
                kept = (index, seconds, index.serialized_bytes())
                if builds is not None:
                    builds[key] = kept
            built = {spec.build_key: kept} | \
                {k: v for k, v in built.items() if _shares_build(k, variants[number + 1:])}
        if progress is not None:
            progress(number, 0.5)
        index, seconds, size = built[spec.build_key]
        found = measure(runner, index, first_dims(queries, variant.dims, cosine), depth, spec)
        out[variant] = Searched(Hits(found.scores, found.rows),
                                Speed(seconds, found.queries_per_second, found.latency_p50_ms, found.latency_p99_ms,
                                      size, runner.version(), build_threads))
        if progress is not None:
            progress(number, 1.0)
    return out


def exact_speeds(variants: Sequence[Variant], queries: np.ndarray, docs, similarity: str, depth: int, *,
                 docs_unit: bool, engine_name: str = DEFAULT_ENGINE) -> dict[Variant, Speed]:
    """The exact float32 variants that approximate ones are measured against, timed in the engine's flat index on
    one thread; none when the docs are searched from disk (`np.memmap` or another on-disk matrix)."""
    dims = {v.dims for v in variants if v.index is not None}
    if not dims or not isinstance(docs, np.ndarray) or isinstance(docs, np.memmap):
        return {}
    runner = engine(engine_name)
    cosine = similarity == "cosine"
    out: dict[Variant, Speed] = {}
    for variant in variants:
        if variant.index is None and variant.precision == "float32" and variant.dims in dims and \
                variant not in out:
            index, seconds = timed_build(lambda v=variant: runner.exact(_source(docs, v.dims, cosine, docs_unit),
                                                                        similarity))
            found = measure(runner, index, first_dims(queries, variant.dims, cosine), depth, None)
            out[variant] = Speed(seconds, found.queries_per_second, found.latency_p50_ms, found.latency_p99_ms,
                                 index.serialized_bytes(), runner.version(), None)
    return out


def _source(docs, dims: int, cosine: bool, docs_unit: bool) -> DocSource:
    """The docs as the exact search of ``dims`` sees them: truncated rows renormalised for cosine."""
    return DocSource(docs, dims, cosine, cosine and not docs_unit)


def _shares_build(key: tuple, later: Sequence[Variant]) -> bool:
    """A built index is kept while a later variant of the sweep still searches it (one index in memory otherwise)."""
    return any(v.index is not None and v.index.build_key == key for v in later)
