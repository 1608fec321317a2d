"""Search from vectors against faiss-cpu: exact search (100,000 docs x 768 dims, 2,000 queries, top 100), the
approximate indexes of ``evalcore vectors --index`` (100,000 x 384, 1,000 queries), and exact search from disk under
a memory budget.

Not a test: prints times as ratios against faiss on the same vectors in the same run, and peak memory against the
doc matrix's own size or the budget. Usage::

    .venv/bin/pip install -e '.[bench]'                       # faiss-cpu, psutil
    .venv/bin/python benchmarks/bench_vectors.py              # all three parts: several minutes on 2 cores
    .venv/bin/python benchmarks/bench_vectors.py --part index # the approximate indexes only
    .venv/bin/python benchmarks/bench_vectors.py --part index --index hnsw:m=16:ef=32 --index ivf:nlist=256:nprobe=8
    .venv/bin/python benchmarks/bench_vectors.py --docs 20000 --queries 500 --index-docs 20000   # a quick try
    .venv/bin/python benchmarks/bench_vectors.py --keep-openblas-env          # leave OPENBLAS_* as set

**exact**: three searches, each timed for evalcore (`evalcore.vectors.variants.search_variant`, which `evalcore vectors` and
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

import tempfile
from pathlib import Path

import numpy as np
import psutil

from evalcore.readers.vectors import Vectors
from evalcore.vectors.ann_engine import DocSource, measure, timed_build
from evalcore.vectors.ann_runs import engine
from evalcore.vectors.index_spec import parse_index_specs
from evalcore.vectors.on_disk import MAX_VECTOR_ENV, open_doc_vectors
from evalcore.vectors.runs import hits_run, search_runs
from evalcore.vectors.search import Hits, normalise_rows, tie_ranks
from evalcore.vectors.variants import Variant, plan_variants, search_variant

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


def embedding_like(n_docs: int, n_queries: int, dims: int, latent: int = 24, seed: int = 1
                   ) -> tuple[np.ndarray, np.ndarray]:
    """Unit-length docs and queries that lie near a ``latent``-dimensional subspace, as real embeddings do (random
    vectors in 384 dimensions have no near neighbours to find); each query near one doc."""
    rng = np.random.default_rng(seed)
    projection = rng.standard_normal((latent, dims), dtype=np.float32)
    noise = np.float32(0.05 * np.sqrt(latent))
    docs = np.empty((n_docs, dims), dtype=np.float32)
    codes = rng.standard_normal((n_docs, latent), dtype=np.float32)
    for start in range(0, n_docs, 10_000):
        block = codes[start:start + 10_000] @ projection
        block += noise * rng.standard_normal(block.shape, dtype=np.float32)
        docs[start:start + len(block)] = block
    normalise_rows(docs, out=docs)
    near = codes[rng.integers(0, n_docs, n_queries)] + 0.3 * rng.standard_normal((n_queries, latent), dtype=np.float32)
    queries = near @ projection + noise * rng.standard_normal((n_queries, dims), dtype=np.float32)
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


DEFAULT_INDEXES = ("hnsw:m=16:ef=16", "hnsw:m=16:ef=32", "hnsw:m=16:ef=64", "hnsw:m=16:ef=128",
                   "hnsw-sq8:m=16:ef=64", "ivf:nlist=256:nprobe=4", "ivf:nlist=256:nprobe=16",
                   "ivfpq:nlist=256:nprobe=16:m=48")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--part", default="exact,index,disk", help="parts to run, comma separated")
    parser.add_argument("--docs", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=2_000)
    parser.add_argument("--dims", type=int, default=768)
    parser.add_argument("--truncate", type=int, default=256)
    parser.add_argument("--depth", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=3, help="tries of each timed search (the best is kept)")
    parser.add_argument("--index", action="append", default=None, metavar="SPEC")
    parser.add_argument("--index-docs", type=int, default=100_000)
    parser.add_argument("--index-dims", type=int, default=384)
    parser.add_argument("--index-queries", type=int, default=1_000)
    parser.add_argument("--build-threads", type=int, default=None, help="default every core")
    parser.add_argument("--budget-mb", type=float, default=64)
    parser.add_argument("--keep-openblas-env", action="store_true")
    args = parser.parse_args()
    import faiss

    parts = {p.strip() for p in args.part.split(",")}
    removed = ", ".join(f"{k}={v}" for k, v in _REMOVED.items()) or "neither was set"
    kept = "kept as set" if args.keep_openblas_env else f"removed for this run ({removed})"
    print(f"numpy {np.__version__}, faiss {faiss.__version__}, {os.cpu_count()} CPUs; OPENBLAS_CORETYPE / "
          f"OPENBLAS_L2_SIZE: {kept}; load average before {os.getloadavg()[0]:.1f}\n")
    if "exact" in parts:
        exact_part(args, faiss)
    if parts & {"index", "disk"}:
        docs, queries = embedding_like(args.index_docs, args.index_queries, args.index_dims)
        if "index" in parts:
            index_part(args, docs, queries)
        if "disk" in parts:
            disk_part(args, docs, queries)


def exact_part(args, faiss) -> None:
    """evalcore's exact search against faiss's flat and 8-bit indexes, and its peak memory."""
    docs, queries = make_vectors(args.docs, args.queries, args.dims)
    doc_bytes = docs.nbytes
    ids = np.array([f"d{i:06d}" for i in range(args.docs)], dtype=object)
    ranks = tie_ranks(ids)
    print(f"exact: {args.docs:,} docs x {args.dims} dims (doc matrix {doc_bytes / MB:,.0f} MiB), {args.queries:,} "
          f"queries, top {args.depth}; faiss threads {faiss.omp_get_max_threads()}")
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
          f"doc matrix (highest {max(r[3] for r in rows):.2f})\n")


def recall_at(found: np.ndarray, exact: np.ndarray, k: int = 10) -> float:
    """The share of the exact top k that ``found``'s top k holds, over all queries (vectorised)."""
    ours, truth = found[:, :k], exact[:, :k]
    hits = (ours[:, :, None] == truth[:, None, :]).any(axis=1)
    return float(hits.mean())


def index_part(args, docs: np.ndarray, queries: np.ndarray) -> None:
    """Every SPEC built and searched through evalcore's engine, and the same index searched by faiss directly."""
    specs = parse_index_specs(args.index or DEFAULT_INDEXES)
    n, dims = docs.shape
    ids = np.array([f"d{i:06d}" for i in range(n)], dtype=object)
    exact = search_variant(Variant(dims, "float32", dims), queries, docs, "cosine", args.depth, tie_ranks(ids))
    runner = engine()
    print(f"index: {n:,} docs x {dims} dims (doc matrix {docs.nbytes / MB:,.0f} MiB), {len(queries):,} queries, top "
          f"{args.depth}, cosine; built on {args.build_threads or 'every core'} thread(s), searched on one; "
          f"{runner.version()}")
    rows, built = [], {}
    for spec in specs:
        if spec.build_key not in built:
            built.clear()  # one index in memory at a time
            with runner.threads(args.build_threads):
                built[spec.build_key] = timed_build(
                    lambda s=spec: runner.build(s, DocSource(docs, dims, True, False), "cosine", seed=0))
        index, build_seconds = built[spec.build_key]
        ours = measure(runner, index, queries, args.depth, spec)
        raw, params = index.index, _params(spec)
        ours_seconds = theirs = np.inf
        ratios = []
        with runner.threads(1):
            for _ in range(args.repeat):  # round-robin pairs: evalcore's search call, then faiss's own
                seconds, _ = timed(lambda: index.search(queries, args.depth, spec))
                ours_seconds = min(ours_seconds, seconds)
                peer, _ = timed(lambda: raw.search(queries, args.depth, params=params))
                theirs = min(theirs, peer)
                ratios.append(seconds / peer)
        ratio = float(np.median(ratios))  # each pair ran back to back: the median ratio shrugs off a busy moment
        start = time.perf_counter()
        hits_run(Hits(ours.scores, ours.rows), np.array([f"q{i}" for i in range(len(queries))], dtype=object), ids,
                 name=spec.name, model="bench")
        with_run = ours_seconds + time.perf_counter() - start
        rows.append((spec.name, build_seconds, ours.queries_per_second, ours.latency_p50_ms, ours.latency_p99_ms,
                     recall_at(ours.rows, exact.docs), index.serialized_bytes(), ratio, ours_seconds / theirs,
                     with_run / theirs))
        print(f"  {spec.name}: built {build_seconds:.1f} s, {ours.queries_per_second:,.0f} queries/s, recall@10 "
              f"{rows[-1][5]:.4f}, search {ratio:.2f}x faiss's own call (median of {len(ratios)} pairs; best "
              f"{ours_seconds:.3f} s against {theirs:.3f} s)", flush=True)
    print()
    print("| index | build s | queries/s (1 thread) | p50 ms | p99 ms | recall@10 vs exact | size MiB | "
          "evalcore / faiss, search (median of pairs) | best / best | with the run (best / best) |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for name, build, qps, p50, p99, recall, size, ratio, best, whole in rows:
        print(f"| {name} | {build:.1f} | {qps:,.0f} | {p50:.2f} | {p99:.2f} | {recall:.4f} | {size / MB:,.1f} | "
              f"{ratio:.2f} | {best:.2f} | {whole:.2f} |")
    print(f"\ntarget: search within 1.2x of calling faiss directly (highest {max(r[7] for r in rows):.2f})\n")


def _params(spec):
    import faiss  # the peer, called directly
    if spec.info.search_param == "ef":
        return faiss.SearchParametersHNSW(efSearch=spec.value("ef"))
    return faiss.SearchParametersIVF(nprobe=spec.value("nprobe"))


def disk_part(args, docs: np.ndarray, queries: np.ndarray) -> None:
    """Exact search of docs on disk under a memory budget: peak resident memory and time against held."""
    n, dims = docs.shape
    ids = [f"d{i:06d}" for i in range(n)]
    query_vectors = Vectors("queries", np.array([f"q{i}" for i in range(len(queries))], dtype=object), queries)
    variants = plan_variants(dims, f"full,{dims // 3}", "float32", depth=args.depth)
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "docs.npy"
        np.save(path, docs)
        (Path(folder) / "docs.ids.txt").write_text("\n".join(ids) + "\n", encoding="utf-8")
        os.environ[MAX_VECTOR_ENV] = f"{args.budget_mb:g}"
        on_disk = open_doc_vectors(path)
        held = Vectors("docs", np.array(ids, dtype=object), docs)
        start_rss = psutil.Process().memory_info().rss
        with PeakRss() as memory:
            disk_seconds, _ = timed(lambda: search_runs(query_vectors, on_disk, variants, depth=args.depth))
        held_seconds, _ = timed(lambda: search_runs(query_vectors, held, variants, depth=args.depth))
    grown = (memory.peak - start_rss) / MB
    print(f"disk: {n:,} x {dims} float32 on disk ({docs.nbytes / MB:,.0f} MiB), {type(on_disk.matrix).__name__}, "
          f"budget {args.budget_mb:g} MiB; {len(queries):,} queries, full and {dims // 3} dims, cosine, top {args.depth}")
    print("| search | seconds | peak resident growth MiB | budget MiB | doc matrix MiB |")
    print("| --- | ---: | ---: | ---: | ---: |")
    print(f"| from disk | {disk_seconds:.2f} | {grown:,.0f} | {args.budget_mb:g} | {docs.nbytes / MB:,.0f} |")
    print(f"| held in memory | {held_seconds:.2f} | (the matrix) | | {docs.nbytes / MB:,.0f} |")
    print(f"\ntarget: resident growth under the budget ({grown:,.0f} of {args.budget_mb:g} MiB)")


if __name__ == "__main__":
    main()
