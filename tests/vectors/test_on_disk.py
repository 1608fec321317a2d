"""Doc vectors over the memory budget (EVALCORE_MAX_VECTOR_MB) are searched from disk, block by block: the same runs
as from the matrix held whole, resident memory far below the matrix's size, and a variant whose own codes or index
would not fit the budget refused in one sentence before anything is searched."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from evalcore.errors import UsageError, VectorFileError
from evalcore.readers.vectors import read_vectors
from evalcore.vectors import search
from evalcore.vectors.index_spec import parse_index_specs
from evalcore.vectors.on_disk import MappedMatrix, open_doc_vectors
from evalcore.vectors.runs import search_runs
from evalcore.vectors.variants import plan_variants
from tests.vectors.planted import planted

ROOT = Path(__file__).resolve().parents[2]


def _saved(tmp_path: Path, matrix: np.ndarray, ids) -> Path:
    path = tmp_path / "docs.npy"
    np.save(path, matrix)
    (tmp_path / "docs.ids.txt").write_text("\n".join(ids) + "\n", encoding="utf-8")
    return path


@pytest.mark.parametrize("similarity", ["cosine", "dot"])
def test_docs_over_the_budget_are_searched_from_disk_with_the_same_runs(tmp_path, monkeypatch, similarity) -> None:
    queries, docs, _ = planted(n_docs=1500, dims=48)  # rows not unit length: cosine scales them block by block
    path = _saved(tmp_path, docs.matrix, docs.ids)
    monkeypatch.setattr(search, "DOC_BLOCK_BYTES", 48 * 4 * 200)  # 200 rows a block: many blocks
    monkeypatch.setenv("EVALCORE_MAX_VECTOR_MB", "0.1")  # 100 kB: the 288 kB matrix is over it
    mapped = open_doc_vectors(path)
    assert isinstance(mapped.matrix, MappedMatrix) and list(mapped.ids) == list(docs.ids)
    held = read_vectors(path)
    assert isinstance(held.matrix, np.ndarray)
    monkeypatch.setenv("EVALCORE_MAX_VECTOR_MB", "100")  # a variant's own codes must fit: these do
    variants = plan_variants(48, "full,24", "float32,int8,binary", rescore=40, depth=20,
                             indexes=parse_index_specs(["hnsw:m=8:ef=16", "ivf:nlist=16:nprobe=2:dims=24"]))
    from_disk = search_runs(queries, mapped, variants, similarity=similarity, depth=20, build_threads=1)
    in_memory = search_runs(queries, held, variants, similarity=similarity, depth=20, build_threads=1)
    for a, b in zip(from_disk, in_memory):
        assert a.name == b.name and a.run.to_frame().equals(b.run.to_frame()), a.name
    assert from_disk[0].speed is None and in_memory[0].speed is not None  # exact is not timed from disk


def test_a_budget_a_variant_cannot_fit_is_one_sentence_before_searching(tmp_path, monkeypatch) -> None:
    queries, docs, _ = planted(n_docs=1500, dims=48)
    path = _saved(tmp_path, docs.matrix, docs.ids)
    monkeypatch.setenv("EVALCORE_MAX_VECTOR_MB", "0.05")  # 52 kB: int8 codes (72 kB) do not fit, float32 streams
    mapped = open_doc_vectors(path)
    variants = plan_variants(48, "full", "float32,int8", depth=20)
    with pytest.raises(UsageError) as caught:
        search_runs(queries, mapped, variants, depth=20)
    assert str(caught.value) == ("Searching 1,500 docs from disk, int8-full would hold 0.069 MB of its own (its codes or "
                                 "its index), over the memory budget of 0.05 MB (EVALCORE_MAX_VECTOR_MB): raise the "
                                 "budget or leave int8-full out.")
    assert search_runs(queries, mapped, variants[:1], depth=20)[0].run.n_queries == queries.n


def test_a_mapped_file_is_checked_like_a_read_one(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("EVALCORE_MAX_VECTOR_MB", "0.01")
    matrix = np.ones((100, 64), dtype=np.float32)
    matrix[42, 7] = np.nan
    ids = [f"d{i}" for i in range(100)]
    with pytest.raises(VectorFileError, match=r"docs\.npy, row 43: expected finite numbers in every vector .*"
                                              r"got 'nan at position 8'"):
        open_doc_vectors(_saved(tmp_path, matrix, ids))
    with pytest.raises(VectorFileError, match=r"expected a float32, C-order \.npy to search 100 x 64 vectors over "
                                              r"the memory budget"):
        open_doc_vectors(_saved(tmp_path, np.ones((100, 64)), ids))  # float64
    with pytest.raises(VectorFileError, match=r"docs\.ids\.txt, line 5: expected each id once \(it is also on line "
                                              r"1\), got 'd0'"):
        open_doc_vectors(_saved(tmp_path, np.ones((100, 64), dtype=np.float32), ids[:4] + ["d0"] + ids[5:]))
    with pytest.raises(UsageError, match="EVALCORE_MAX_VECTOR_MB must be a positive number of megabytes"):
        monkeypatch.setenv("EVALCORE_MAX_VECTOR_MB", "lots")
        open_doc_vectors(tmp_path / "docs.npy")


def test_searching_from_disk_keeps_resident_memory_far_below_the_matrix(tmp_path) -> None:
    """96 MB of doc vectors under a 16 MB budget: the search's peak resident memory grows by far less than the
    matrix (a fresh process, so nothing the test suite held before counts)."""
    rng = np.random.default_rng(0)
    path = tmp_path / "docs.npy"
    matrix = np.lib.format.open_memmap(path, mode="w+", dtype=np.float32, shape=(48_000, 512))
    for start in range(0, 48_000, 8000):
        matrix[start:start + 8000] = rng.standard_normal((8000, 512), dtype=np.float32)
    matrix.flush()
    del matrix
    (tmp_path / "docs.ids.txt").write_text("".join(f"d{i}\n" for i in range(48_000)), encoding="utf-8")
    script = textwrap.dedent(f"""
        import json, os, numpy as np
        from evalcore.readers.vectors import Vectors
        from evalcore.vectors.on_disk import open_doc_vectors
        from evalcore.vectors.runs import search_runs
        from evalcore.vectors.variants import plan_variants

        def rss_mb(field):
            for line in open("/proc/self/status"):
                if line.startswith(field):
                    return int(line.split()[1]) / 1024

        queries = Vectors("q", np.array([f"q{{i}}" for i in range(50)], dtype=object),
                          np.random.default_rng(1).standard_normal((50, 512), dtype=np.float32))
        docs = open_doc_vectors({str(path)!r})
        before = rss_mb("VmRSS")
        found = search_runs(queries, docs, plan_variants(512, "full,128", "float32", depth=20), depth=20)
        print(json.dumps({{"kind": type(docs.matrix).__name__, "before": before, "peak": rss_mb("VmHWM"),
                          "rows": int(found[1].run.n_rows)}}))
    """)
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=600,
                          env={"EVALCORE_MAX_VECTOR_MB": "16", "PATH": "/usr/bin:/bin"})
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout)
    assert seen["kind"] == "MappedMatrix" and seen["rows"] == 50 * 20
    assert seen["peak"] - seen["before"] < 48, seen  # the matrix is 94 MB; a block and its scores stay under 48
