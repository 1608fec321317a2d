"""``evalcore vectors`` on the sample vectors: the JSON shape the issue names, the table and sentences for people
with every number in context, runs written as TREC files that score the same through ``evaluate``, and one clear
line for a bad vector file."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from cli_runner import run_cli

from tests.cli.test_number_context import json_problems, text_problems

ROOT = Path(__file__).resolve().parents[2]
S = ROOT / "sample_data"
V = S / "vectors"
TUNED = ["--labels", str(S / "labels.tsv"), "--query-vectors", str(V / "tuned.queries.npy"),
         "--doc-vectors", str(V / "tuned.docs.npy"), "--model", "acme-embed-large-v2-kestrel-ft"]


def test_json_names_every_variant_with_size_intervals_and_the_paired_verdict() -> None:
    done = run_cli("vectors", *TUNED, "--dims", "full,64", "--precision", "float32,binary", "--k", "1,10",
                   "--format", "json")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert [v["name"] for v in data["variants"]] == ["float32-full", "binary-full", "float32-64", "binary-64"]
    full, binary = data["variants"][0], data["variants"][1]
    assert full["dims"] == 256 and full["precision"] == "float32" and full["vs_full"] is None
    ids = sum(len(line) + 8 for line in (V / "tuned.docs.ids.txt").read_text().split())
    assert full["index_bytes"] == 503 * 256 * 4 + ids and full["n_docs"] == 503
    assert binary["index_bytes"] == 503 * 32 + ids
    assert set(full["metrics"]) == {"recall@1", "recall@10", "mrr"}
    assert set(full["metrics"]["recall@1"]) == {"mean", "ci_low", "ci_high"}
    vs = binary["vs_full"]
    assert vs["metric"] == "recall@10" and vs["diff"] < 0 and vs["p_adjusted"] < 0.05
    assert vs["verdict"].startswith("binary full loses ") and "x smaller." in vs["verdict"]
    assert data["split"]["split"] == "tune"  # the holdout stays sealed here as everywhere
    assert json_problems(data, "vectors json") == []
    assert "tune split (exploratory" in done.stderr


def test_table_for_people_and_runs_saved_as_trec_score_the_same(tmp_path) -> None:
    done = run_cli("vectors", *TUNED, "--dims", "full,128", "--precision", "float32,int8", "--k", "1,5",
                   "--save-runs", str(tmp_path / "runs"))
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "index size for acme-embed-large-v2-kestrel-ft: 503 docs x 256 dims, cosine, top 100 per query" in out
    assert "int8 128 " in out and "x smaller." in out
    assert text_problems(out, "vectors table") == []
    written = sorted(p.name for p in (tmp_path / "runs").iterdir())
    assert written == ["float32-128.trec", "float32-full.trec", "int8-128.trec", "int8-full.trec"]
    again = run_cli("evaluate", "--labels", str(S / "labels.tsv"), "--run", str(tmp_path / "runs" / "int8-128.trec"),
                    "--k", "1,5", "--format", "json")
    cli = json.loads(run_cli("vectors", *TUNED, "--dims", "128", "--precision", "int8", "--k", "1,5",
                             "--format", "json").stdout)
    evaluated = {m: v["mean"] for m, v in json.loads(again.stdout)["runs"][0]["metrics"].items()}
    variant = next(v for v in cli["variants"] if v["name"] == "int8-128")
    assert np.isclose(evaluated["recall@5"], variant["metrics"]["recall@5"]["mean"], atol=0, rtol=0)


def test_a_bad_vector_file_is_one_line_and_exit_2(tmp_path) -> None:
    bad = tmp_path / "queries.jsonl"
    bad.write_text('{"id": "q001", "vector": [1, 2]}\n{"id": "q002", "vector": [1]}\n')
    done = run_cli("vectors", "--labels", str(S / "labels.tsv"), "--query-vectors", str(bad),
                   "--doc-vectors", str(V / "base.docs.npy"))
    assert done.returncode == 2
    assert done.stderr.strip() == (f"evalcore: error: {bad}, line 2: expected 2 numbers in every vector, as in "
                                   "line 1, got '1 number'")
    mismatch = run_cli("vectors", "--labels", str(S / "labels.tsv"), "--query-vectors", str(V / "base.queries.npy"),
                       "--doc-vectors", str(V / "tuned.docs.npy"))
    assert mismatch.returncode == 2
    assert "base.queries.npy, row 1: expected query vectors with as many numbers as the doc vectors (256 in" in \
        mismatch.stderr


def _scaled(tmp_path: Path, factor: float) -> list[str]:
    """The tuned model's vectors times ``factor`` (the same directions: cosine must rank them the same)."""
    for part in ("queries", "docs"):
        np.save(tmp_path / f"{part}.npy", (np.load(V / f"tuned.{part}.npy") * factor).astype(np.float32))
        (tmp_path / f"{part}.ids.txt").write_bytes((V / f"tuned.{part}.ids.txt").read_bytes())
    return ["--labels", str(S / "labels.tsv"), "--query-vectors", str(tmp_path / "queries.npy"),
            "--query-ids", str(tmp_path / "queries.ids.txt"), "--doc-vectors", str(tmp_path / "docs.npy"),
            "--doc-ids", str(tmp_path / "docs.ids.txt"), "--dims", "full", "--precision", "float32"]


def _recall(done) -> float:
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)["variants"][0]["metrics"]["recall@10"]["mean"]


def test_cosine_does_not_depend_on_the_vectors_scale_and_dot_overflow_is_an_error(tmp_path) -> None:
    plain = _recall(run_cli("vectors", *TUNED, "--dims", "full", "--precision", "float32", "--k", "1,10",
                            "--format", "json"))
    for factor in (1e20, 1e-23):  # squares overflow / underflow float32: lengths are taken in float64
        folder = tmp_path / str(factor)
        folder.mkdir()
        args = _scaled(folder, factor)
        assert _recall(run_cli("vectors", *args, "--k", "1,10", "--format", "json")) == plain
    dot = run_cli("vectors", *_scaled(tmp_path, 1e20), "--similarity", "dot")
    assert dot.returncode == 2 and "the float32-full search overflowed" in dot.stderr, dot.stderr
    assert "Traceback" not in dot.stderr and "RuntimeWarning" not in dot.stderr


def test_ids_with_spaces_are_not_written_as_a_broken_trec_run(tmp_path) -> None:
    ids = (V / "tuned.docs.ids.txt").read_text(encoding="utf-8").split()
    spaced = tmp_path / "docs.ids.txt"
    spaced.write_text("\n".join(f"{d} v2" for d in ids) + "\n", encoding="utf-8")
    done = run_cli("vectors", *TUNED[:4], "--doc-vectors", str(V / "tuned.docs.npy"), "--doc-ids", str(spaced),
                   "--dims", "full", "--precision", "float32", "--save-runs", str(tmp_path / "runs"))
    assert done.returncode == 2 and "doc ids without spaces or tabs to write a TREC run" in done.stderr, done.stderr


def test_a_k_deeper_than_the_search_is_refused_before_searching() -> None:
    done = run_cli("vectors", *TUNED, "--k", "1,50", "--depth", "10")
    assert done.returncode == 2 and "between 1 and 10" in done.stderr, done.stderr
    metric = run_cli("vectors", *TUNED, "--metric", "recall@20", "--depth", "10")
    assert metric.returncode == 2 and "between 1 and 10" in metric.stderr, metric.stderr


SWEEP = ["--index", "hnsw:m=8:ef=8", "--index", "hnsw:m=8:ef=32", "--index", "ivf:nlist=32:nprobe=1",
         "--build-threads", "1"]


def test_an_index_sweep_in_json_has_the_issue_shape_and_its_runs_are_saved_under_its_spec(tmp_path) -> None:
    done = run_cli("vectors", *TUNED, *SWEEP, "--format", "json", "--save-runs", str(tmp_path / "runs"))
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    names = [v["name"] for v in data["variants"]]
    assert names == ["float32-full", "hnsw-m8-ef8", "hnsw-m8-ef32", "ivf-nlist32-nprobe1"]  # only full float32
    hnsw = data["variants"][1]
    assert hnsw["index"] == "hnsw:m=8:ef=8:efc=40" and hnsw["params"] == {"m": 8, "ef": 8, "efc": 40}
    assert set(hnsw["neighbor_recall"]) == {"k", "mean", "p5"} and hnsw["neighbor_recall"]["k"] == 10 and 0 <= hnsw["neighbor_recall"]["p5"] <= 1
    assert {"count", "queries"} <= set(hnsw["lost_queries"]) and hnsw["lost_queries"]["count"] > 0
    assert hnsw["lost_queries"]["count"] == len(hnsw["lost_queries"]["queries"])
    assert hnsw["build_seconds"] >= 0 and hnsw["queries_per_second"] > 0 and set(hnsw["latency_ms"]) == {"p50", "p99"}
    assert hnsw["index_bytes"] > 503 * 256 * 4  # the vectors and the graph, written to a file, and the ids
    assert hnsw["vs_full"]["verdict"].startswith("HNSW m = 8, ef = 8 ")
    assert data["variants"][3]["lost_queries"]["count"] > hnsw["lost_queries"]["count"]  # one list of 32: worse
    assert data["variants"][2]["neighbor_recall"]["mean"] > hnsw["neighbor_recall"]["mean"]  # ef 32 beats ef 8
    assert data["settings"]["search_threads"] == 1 and data["settings"]["build_threads"] == 1
    assert json_problems(data, "vectors json") == []
    written = sorted(p.name for p in (tmp_path / "runs").iterdir())
    assert written == ["float32-full.trec", "hnsw-m8-ef32.trec", "hnsw-m8-ef8.trec", "ivf-nlist32-nprobe1.trec"]


def test_an_index_sweep_for_people_says_what_each_setting_loses_and_lists_the_lost_queries() -> None:
    done = run_cli("vectors", *TUNED, *SWEEP)
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "HNSW m = 8, ef = 8 loses the answer for " in out and " of 224 queries (" in out
    assert "than exact search; it returns " in out and "of exact search's top 10 (the worst 5% of queries: " in out
    assert "neighbour recall@10" in out and "lost by hnsw-m8-ef8: q" in out
    assert "every search on one thread" in out and "indexes built on 1 thread" in out
    assert text_problems(out, "vectors table") == []


@pytest.mark.parametrize("spec, said", [
    ("annoy:trees=10", "The index 'annoy:trees=10' names an unknown index type 'annoy': expected one of hnsw, "
                       "hnsw-sq8, ivf, ivfpq (for example hnsw:m=16:ef=32)."),
    ("hnsw:m=16:nprobe=2", "The index 'hnsw:m=16:nprobe=2' has an unknown parameter 'nprobe' for hnsw: expected m, "
                           "ef, efc or dims."),
    ("ivfpq:nlist=16:m=30", "The index 'ivfpq:nlist=16:m=30' splits each vector into m = 30 parts, which must divide "
                            "its 256 dimensions (for example 8, 16, 32, 64)."),
    ("ivf:nlist=1000", "The index 'ivf:nlist=1000' has nlist = 1,000 lists, more than the 503 docs: use at most 503 "
                       "(about 22, the square root of the docs, is usual)."),
])
def test_a_bad_index_spec_is_one_line_and_exit_2(spec: str, said: str) -> None:
    done = run_cli("vectors", *TUNED, "--index", spec)
    assert done.returncode == 2
    assert done.stderr.strip() == f"evalcore: error: {said}"
    assert done.stdout == ""


def test_doc_vectors_over_the_memory_budget_are_searched_from_disk_with_the_same_numbers() -> None:
    args = [*TUNED, "--dims", "full,64", "--precision", "float32,int8", "--format", "json"]
    held = json.loads(run_cli("vectors", *args).stdout)
    from_disk = run_cli("vectors", *args, env={"EVALCORE_MAX_VECTOR_MB": "0.2"})  # the 515 kB matrix is over it
    assert from_disk.returncode == 0, from_disk.stderr
    assert [v["metrics"] for v in json.loads(from_disk.stdout)["variants"]] == [v["metrics"] for v in held["variants"]]
    tight = run_cli("vectors", *args, env={"EVALCORE_MAX_VECTOR_MB": "0.1"})  # int8 codes (129 kB) do not fit
    assert tight.returncode == 2 and "int8-full would hold 0.12 MB of its own" in tight.stderr, tight.stderr


# ----------------------------------------------------------------------------- zero vectors (issue 24, item 10)


def _with_zeros(tmp_path: Path, part: str, rows: list[int]) -> list[str]:
    """The tuned model's files with the given rows of ``part`` (queries or docs) set to all zeros."""
    for name in ("queries", "docs"):
        matrix = np.load(V / f"tuned.{name}.npy")
        if name == part:
            matrix[rows] = 0
        np.save(tmp_path / f"{name}.npy", matrix)
        (tmp_path / f"{name}.ids.txt").write_text((V / f"tuned.{name}.ids.txt").read_text())
    return ["--labels", str(S / "labels.tsv"), "--query-vectors", str(tmp_path / "queries.npy"),
            "--doc-vectors", str(tmp_path / "docs.npy"), "--dims", "full,64", "--precision", "float32,binary"]


def test_an_all_zero_query_vector_is_refused_with_the_file_and_row(tmp_path) -> None:
    ids = (V / "tuned.queries.ids.txt").read_text().split()
    args = _with_zeros(tmp_path, "queries", [4])
    for similarity in ("cosine", "dot"):  # either way every doc would score 0: a ranking by the tie rule alone
        done = run_cli("vectors", *args, "--similarity", similarity)
        assert done.returncode == 2, done.stderr
        assert done.stderr.strip() == (
            f"evalcore: error: {tmp_path / 'queries.npy'}, row 5: expected a query vector with a number other than 0 "
            f"(all zeros have no direction: every doc would score 0 and the ranking would be the tie rule alone), "
            f"got '{ids[4]}: 256 zeros'")


def test_all_zero_doc_vectors_are_left_out_of_a_cosine_search_and_said(tmp_path) -> None:
    doc_ids = (V / "tuned.docs.ids.txt").read_text().split()
    args = _with_zeros(tmp_path, "docs", [0, 7, 9])
    done = run_cli("vectors", *args, "--format", "json")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    [warning] = [w for w in data["warnings"] if w["code"] == "zero_doc_vectors"]
    assert warning["count"] == 3 and warning["message"] == (
        f"{tmp_path / 'docs.npy'}: 3 doc vectors of all zeros left out of the cosine search (rows 1, 8, 10; first id "
        f"{doc_ids[0]!r}): they have no direction, so every query would score them 0")
    assert {v["n_docs"] for v in data["variants"]} == {500}  # the index holds the docs searched
    assert f"warning: [zero_doc_vectors] x3: {tmp_path / 'docs.npy'}: 3 doc vectors of all zeros left out" in done.stderr
    text = run_cli("vectors", *args)
    assert "index size for docs: 500 docs x 256 dims (3 all-zero doc vectors left out), cosine" in text.stdout
    dot = run_cli("vectors", *args, "--similarity", "dot", "--format", "json")  # under dot a zero doc scores 0: kept
    assert {v["n_docs"] for v in json.loads(dot.stdout)["variants"]} == {503}
    on_disk = run_cli("vectors", *args, env={"EVALCORE_MAX_VECTOR_MB": "0.2"})  # leaving rows out would copy them
    assert on_disk.returncode == 2 and "docs.npy, row 1: expected doc vectors with a number other than 0 in every " \
        "row, to search them from disk" in on_disk.stderr, on_disk.stderr
