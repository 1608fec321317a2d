"""Exact search from vectors against faiss-cpu's flat index: 100,000 docs x 768 dims, 2,000 queries, top 100.

Not a test: prints times as ratios against faiss on the same vectors in the same run, and peak memory against the
doc matrix's own size. Usage::

    .venv/bin/pip install -e '.[bench]'                       # faiss-cpu, psutil
    .venv/bin/python benchmarks/bench_vectors.py              # about a minute or two on 2 cores
    .venv/bin/python benchmarks/bench_vectors.py --docs 20000 --queries 500   # a quick try
    .venv/bin/python benchmarks/bench_vectors.py --keep-openblas-env          # leave OPENBLAS_* as set

Three searches, each timed for evalcore (`evalcore.vectors.variants.search_variant`, which `evalcore vectors` and
the dashboard use) and for faiss, round-robin, best of ``--repeat`` each (default 3):

* float32 at all 768 dims: faiss ``IndexFlatIP``;
* float32 truncated to ``--truncate`` dims (renormalised): faiss ``IndexFlatIP`` on the same truncated vectors
  (evalcore's time includes building its truncated matrix; faiss's does not include ``add``);
* int8 (per-dimension range): faiss ``IndexScalarQuantizer(QT_8bit)`` (evalcore's time includes quantizing;
  faiss's does not include ``train`` and ``add``).

The vectors are unit length (cosine = inner product). Memory: the process's resident size is sampled every 5 ms
while evalcore searches; "peak" is the highest sample minus the resident size just before that search, plus the doc
matrix itself (held throughout): the doc matrix and everything the search adds to it (its own representation,
score blocks, candidates); the target is under 2.5 times the doc matrix. evalcore's top 100 are checked against faiss's (they may differ only between equal scores).

OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE (which can make numpy's matrix products slower on some machines) are
removed from the environment before numpy loads, unless ``--keep-openblas-env``; the output says which were set.
"""

from __future__ import annotations

import argparse
import os
import sys
import threading
import time

_REMOVED = {}
if "--keep-openblas-env" not in sys.argv:
    for _name in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE"):
        if _name in os.environ:
            _REMOVED[_name] = os.environ.pop(_name)

import numpy as np
import psutil

from evalcore.vectors.search import normalise_rows, tie_ranks
from evalcore.vectors.variants import Variant, search_variant

MB = 1 << 20


class PeakRss:
    """The highest resident size seen while the block runs (sampled every 5 ms on a thread)."""

    def __init__(self) -> None:
        self.process = psutil.Process()
        self.peak = 0
        self._stop = threading.Event()

    def __enter__(self) -> PeakRss:
        self.peak = self.process.memory_info().rss
        self._thread = threading.Thread(target=self._watch, daemon=True)
        self._thread.start()
        return self

    def _watch(self) -> None:
        while not self._stop.is_set():
            self.peak = max(self.peak, self.process.memory_info().rss)
            time.sleep(0.005)

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()
        self.peak = max(self.peak, self.process.memory_info().rss)


def make_vectors(n_docs: int, n_queries: int, dims: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Unit-length float32 docs and queries; each query near one doc, so the top 100 are not all noise."""
    rng = np.random.default_rng(seed)
    docs = np.empty((n_docs, dims), dtype=np.float32)
    for start in range(0, n_docs, 10_000):
        block = rng.standard_normal((min(10_000, n_docs - start), dims), dtype=np.float32)
        block *= np.linspace(2.0, 0.5, dims, dtype=np.float32)  # earlier dims carry more, as Matryoshka models'
        docs[start:start + len(block)] = block
    normalise_rows(docs, out=docs)
    near = rng.integers(0, n_docs, n_queries)
    queries = docs[near] + 0.1 * rng.standard_normal((n_queries, dims), dtype=np.float32)
    return docs, normalise_rows(queries)


def timed(function):
    start = time.perf_counter()
    result = function()
    return time.perf_counter() - start, result


def faiss_index(faiss, docs: np.ndarray, precision: str):
    """The peer's index over ``docs``: flat inner product, or its 8-bit scalar quantizer (trained, filled)."""
    if precision == "int8":
        index = faiss.IndexScalarQuantizer(docs.shape[1], faiss.ScalarQuantizer.QT_8bit, faiss.METRIC_INNER_PRODUCT)
        index.train(docs)
    else:
        index = faiss.IndexFlatIP(docs.shape[1])
    index.add(docs)
    return index


def agreement(ours: np.ndarray, theirs: np.ndarray, k: int = 10) -> float:
    """Share of faiss's top k that evalcore's top k also holds, over all queries."""
    same = [len(set(a[:k]) & set(b[:k])) for a, b in zip(ours.tolist(), theirs.tolist())]
    return sum(same) / (k * len(same))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--docs", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=2_000)
    parser.add_argument("--dims", type=int, default=768)
    parser.add_argument("--truncate", type=int, default=256)
    parser.add_argument("--depth", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--keep-openblas-env", action="store_true")
    args = parser.parse_args()
    import faiss

    docs, queries = make_vectors(args.docs, args.queries, args.dims)
    doc_bytes = docs.nbytes
    ids = np.array([f"d{i:06d}" for i in range(args.docs)], dtype=object)
    ranks = tie_ranks(ids)
    print(f"{args.docs:,} docs x {args.dims} dims (doc matrix {doc_bytes / MB:,.0f} MiB), {args.queries:,} queries, "
          f"top {args.depth}; numpy {np.__version__}, faiss {faiss.__version__}, {os.cpu_count()} CPUs; "
          f"faiss threads {faiss.omp_get_max_threads()}")
    removed = ", ".join(f"{k}={v}" for k, v in _REMOVED.items()) or "neither was set"
    kept = "kept as set" if args.keep_openblas_env else f"removed for this run ({removed})"
    print(f"OPENBLAS_CORETYPE / OPENBLAS_L2_SIZE: {kept}; load average before {os.getloadavg()[0]:.1f}")
    rows = []
    cases = [("float32 full", Variant(args.dims, "float32", args.dims)),
             (f"float32 {args.truncate}", Variant(args.truncate, "float32", args.dims)),
             ("int8 full", Variant(args.dims, "int8", args.dims))]
    for label, variant in cases:
        if variant.is_full:
            peer_docs, peer_queries = docs, queries
        else:
            peer_docs, peer_queries = normalise_rows(docs[:, :variant.dims]), normalise_rows(queries[:, :variant.dims])
        index = faiss_index(faiss, peer_docs, variant.precision)
        del peer_docs
        ours, theirs, peak = float("inf"), float("inf"), 0.0
        for _ in range(args.repeat):  # round-robin, best of each: the machine's load moves both alike
            start_rss = psutil.Process().memory_info().rss
            with PeakRss() as memory:
                seconds, hits = timed(lambda v=variant: search_variant(v, queries, docs, "cosine", args.depth, ranks))
            ours, peak = min(ours, seconds), max(peak, (memory.peak - start_rss + doc_bytes) / doc_bytes)
            seconds, (_, found) = timed(lambda i=index, q=peer_queries: i.search(q, args.depth))
            theirs = min(theirs, seconds)
        index = None  # the peer's copy of the docs goes before the next case
        rows.append((label, ours, theirs, peak, agreement(hits.docs, found)))
        print(f"  {label}: evalcore {ours:.2f} s, faiss {theirs:.2f} s, ratio {ours / theirs:.2f}; "
              f"peak {peak:.2f}x the doc matrix; top-10 agreement with faiss {rows[-1][4]:.4f}", flush=True)
    print()
    print("| search | evalcore s | faiss s | ratio (evalcore / faiss) | evalcore peak / doc matrix | top-10 agreement |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    for label, ours, theirs, peak, agree in rows:
        print(f"| {label} | {ours:.2f} | {theirs:.2f} | {ours / theirs:.2f} | {peak:.2f} | {agree:.4f} |")
    print(f"\ntargets: float32 full within 1.5x of faiss (ratio {rows[0][1] / rows[0][2]:.2f}); peak under 2.5x the "
          f"doc matrix (highest {max(r[3] for r in rows):.2f})")


if __name__ == "__main__":
    main()
