"""The command line on chunk runs (issue 21): --chunks FILE and NAME=FILE on every scoring command, the evidence
metrics in the JSON beside the others, the budget counting each chunking's own text, compare --at-tokens, and every
bad chunk file or argument one clear line with exit 2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evalcore.metrics.evaluation import evaluate
from evalcore.metrics.split import scoring_labels
from evalcore.readers.chunks import read_chunks
from evalcore.readers.labels import read_labels
from tests.cli_runner import run_cli

ROOT = Path(__file__).resolve().parents[2]
C = ROOT / "sample_data" / "chunking"
DOCS = ROOT / "sample_data" / "docs.jsonl"
RUNS = ["--run", str(C / "sent1.trec"), "--run", str(C / "sent3.trec"), "--run", str(C / "char400.trec")]
MAPS = ["--chunks", f"sent1={C / 'sent1.chunks.csv'}", "--chunks", f"sent3={C / 'sent3.chunks.csv'}",
        "--chunks", f"char400={C / 'char400.chunks.csv'}"]


def _json(done) -> dict:
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_evaluate_scores_chunks_against_document_labels_with_evidence_beside_every_metric():
    found = _json(run_cli("evaluate", "--labels", C / "labels.tsv", "--run", C / "sent3.trec",
                          "--chunks", C / "sent3.chunks.csv", "--k", "1,5", "--format", "json"))
    run = found["runs"][0]
    assert run["chunks"]["name"] == "sent3.chunks" and len(run["chunks"]["fingerprint"]) == 12
    for name in ("recall@5", "evidence_recall@5", "evidence_precision@1"):
        assert set(run["metrics"][name]) >= {"mean", "ci_low", "ci_high"}, name
    # the same numbers as the Python API on the same (tune) queries
    labels = scoring_labels(read_labels(C / "labels.tsv")).labels
    direct = evaluate(C / "sent3.trec", labels, [1, 5], chunks=read_chunks(C / "sent3.chunks.csv"))
    assert run["metrics"]["recall@5"]["mean"] == pytest.approx(direct["recall@5"], abs=1e-12)
    assert run["metrics"]["evidence_recall@5"]["mean"] == pytest.approx(direct["evidence_recall@5"], abs=1e-12)


def test_each_run_names_its_own_chunking():
    found = _json(run_cli("evaluate", "--labels", C / "labels.tsv", *RUNS, *MAPS, "--k", "5", "--format", "json"))
    assert [r["chunks"]["name"] for r in found["runs"]] == ["sent1.chunks", "sent3.chunks", "char400.chunks"]
    recall = {r["name"]: r["metrics"]["recall@5"]["mean"] for r in found["runs"]}
    assert recall["sent1"] < recall["char400"]  # at the same k, larger chunks find more documents


def test_the_budget_counts_each_chunkings_own_text():
    found = _json(run_cli("budget", "--labels", C / "labels.tsv", *RUNS, *MAPS, "--max-k", "5", "--format", "json"))
    tokens = {r["name"]: r["table"][0]["tokens_mean"] for r in found["runs"]}
    assert tokens["sent1"] < tokens["sent3"] < tokens["char400"]  # one sentence, three, 400 characters
    assert all("evidence_recall" in r["table"][0] for r in found["runs"])
    assert not any(w["code"] == "chunk_size_assumed" for w in found["warnings"])


def test_compare_at_a_token_budget_says_the_decision_in_one_sentence():
    text = run_cli("compare", "--labels", C / "labels.tsv", *RUNS, *MAPS, "--at-tokens", "300",
                   "--at-tokens-metric", "evidence_recall")
    assert text.returncode == 0, text.stderr
    assert "At about 300 prompt tokens, char400 with k = 4 holds 70% of the evidence" in text.stdout
    found = _json(run_cli("compare", "--labels", C / "labels.tsv", *RUNS, *MAPS, "--at-tokens", "300",
                          "--format", "json"))
    by_name = {r["name"]: r for r in found["runs"]}
    assert found["at_tokens"] == 300 and all(r["tokens_mean"] <= 300 for r in found["runs"])
    assert by_name["sent1"]["k"] > by_name["sent3"]["k"] > by_name["char400"]["k"]  # smaller chunks, more of them
    assert by_name[found["runs"][1]["name"]]["vs_best"]["p_adjusted"] is not None


@pytest.mark.parametrize(("content", "expected"), [
    ("chunk_id,doc_id\na,x\nb,y\na,z\n", "line 4: expected each chunk listed once"),
    ("chunk_id,doc_id,start,end\na,x,9,3\n", "line 2: expected start at most end"),
    ("chunk_id,doc_id,start,end\na,x,one,3\n", "line 2: expected a whole number"),
    ("id_of_chunk,doc_id\na,x\n", "a chunk id column"),
])
def test_a_bad_chunk_map_is_one_line_naming_file_and_line(tmp_path, content, expected):
    path = tmp_path / "chunks.csv"
    path.write_text(content, encoding="utf-8")
    done = run_cli("evaluate", "--labels", C / "labels.tsv", "--run", C / "sent3.trec", "--chunks", path)
    assert done.returncode == 2 and expected in done.stderr and str(path) in done.stderr, done.stderr
    assert "Traceback" not in done.stderr and len(done.stderr.strip().splitlines()) == 1


def test_a_chunk_the_map_lacks_an_unknown_document_and_an_end_past_the_text_are_refused(tmp_path):
    lacking = tmp_path / "lacking.csv"
    lacking.write_text("chunk_id,doc_id\nonly-this,billing-invoices-01\n", encoding="utf-8")
    done = run_cli("evaluate", "--labels", C / "labels.tsv", "--run", C / "sent3.trec", "--chunks", lacking)
    assert done.returncode == 2 and "every chunk the run names in the chunk map" in done.stderr, done.stderr
    unknown = tmp_path / "unknown.csv"
    unknown.write_text("chunk_id,doc_id\na,no-such-doc\n", encoding="utf-8")
    done = run_cli("budget", "--labels", C / "labels.tsv", "--run", C / "sent3.trec", "--chunks", unknown,
                   "--docs", DOCS)
    assert done.returncode == 2 and "no-such-doc" in done.stderr and "line 2" in done.stderr, done.stderr
    past = tmp_path / "past.csv"
    past.write_text("chunk_id,doc_id,start,end\na,billing-invoices-01,0,100000\n", encoding="utf-8")
    done = run_cli("budget", "--labels", C / "labels.tsv", "--run", C / "sent3.trec", "--chunks", past,
                   "--docs", DOCS)
    assert done.returncode == 2 and "an end within its document's text" in done.stderr, done.stderr


def test_chunk_arguments_that_name_no_run_are_usage_errors():
    done = run_cli("evaluate", "--labels", C / "labels.tsv", "--run", C / "sent3.trec",
                   "--chunks", f"nope={C / 'sent3.chunks.csv'}")
    assert done.returncode == 2 and "there is no run named 'nope'" in done.stderr
    done = run_cli("compare", "--labels", C / "labels.tsv", *RUNS, *MAPS, "--at-tokens", "300", "--metric", "recall@5")
    assert done.returncode == 2 and "--at-tokens compares at a prompt budget" in done.stderr


def test_a_queries_file_gives_ids_only_labels_their_text(tmp_path):
    labels = tmp_path / "qrels.tsv"
    labels.write_text("query-id\tcorpus-id\tscore\nq1\tfaq-login\t1\nq2\tacct-recovery\t1\n", encoding="utf-8")
    run = tmp_path / "run.json"
    run.write_text(json.dumps({"q1": ["x"], "q2": ["acct-recovery"]}), encoding="utf-8")
    queries = tmp_path / "queries.jsonl"
    queries.write_text('{"_id": "q1", "text": "cannot log in"}\n{"_id": "q2", "text": "reset my password"}\n',
                       encoding="utf-8")
    failures = tmp_path / "failures.csv"
    done = run_cli("report", "--labels", labels, "--run", run, "--queries", queries, "--k", "1",
                   "--failures-csv", failures, "--output", tmp_path / "report.md")
    assert done.returncode == 0, done.stderr
    assert "cannot log in" in failures.read_text(encoding="utf-8")
    clash = tmp_path / "clash.tsv"
    clash.write_text("query\tdoc_id\tquery_text\nq1\tfaq-login\tsomething else\n", encoding="utf-8")
    done = run_cli("evaluate", "--labels", clash, "--run", run, "--queries", queries)
    assert done.returncode == 2 and str(clash) in done.stderr and str(queries) in done.stderr, done.stderr
