"""A run of chunks in the workspace: saved with the chunk map it was scored through (its file, or a table made of
it), computed again with it, its map named in the run's record, and its fragments counted as failures by the ledger
(a relevant chunk holding under half the evidence)."""

from __future__ import annotations

import pandas as pd
import pytest

from evalcore.access import local_actor
from evalcore.errors import UsageError
from evalcore.metrics.evaluation import evaluate_runs
from evalcore.readers.chunks import chunk_map
from evalcore.readers.labels import read_labels
from evalcore.store.workspace import Workspace
from evalcore.workflows import save_evaluation


def _evaluation():
    labels = read_labels({"q1": {"a": 1}, "q2": {"b": 1}, "q3": {"c": 1}})
    labels.spans = pd.DataFrame({"query": ["q1", "q2", "q3"], "doc_id": ["a", "b", "c"], "start": [0, 0, 0],
                                 "end": [100, 100, 100]})
    chunks = chunk_map(["a#1", "a#2", "b#1", "c#1"], ["a", "a", "b", "c"], start=[0, 50, 0, 0], end=[50, 100, 100, 10],
                       name="windows")
    run = {"q1": ["a#1", "a#2"], "q2": ["b#1"], "q3": ["c#1"]}  # q3 finds its document, with 10% of the evidence
    return evaluate_runs([run], labels, [1, 2], chunks=chunks)


def test_a_saved_chunk_run_keeps_its_map_and_scores_the_same_again(tmp_path):
    evaluation = _evaluation()
    ws = Workspace(tmp_path)
    saved = save_evaluation(ws, evaluation, actor=local_actor(None), k=1).saved
    stored = ws.run(saved.runs[0].id)
    assert (stored.chunks_name, stored.chunks_fingerprint) == ("windows", evaluation.results[0].chunks.fingerprint)
    again = ws.load_evaluation(saved.id)
    for metric in ("recall@1", "evidence_recall@1", "evidence_recall@2", "mrr"):
        assert again.results[0][metric] == pytest.approx(evaluation.results[0][metric]), metric
    assert ws._remove_orphans(older_than=0).files == ()  # the stored map is the run's, not an orphan


def test_the_ledger_counts_a_fragment_as_a_failure_and_says_so(tmp_path):
    ws = Workspace(tmp_path)
    saved = save_evaluation(ws, _evaluation(), actor=local_actor(None), k=1).saved
    ledger = ws.archive.ledger(saved.runs[0].line)
    failing = dict(zip(ledger["query"], ledger["failure"]))
    assert not ledger.set_index("query").loc["q3", "passing"]
    assert failing.get("q3") == "got only a fragment"  # found at k = 1, holding 10 of its 100 evidence characters
    assert "q2" not in failing  # found whole
    assert failing.get("q1", "") == ""  # a#1 holds 50 of its 100: half is not under half


def _saved_at_k1(tmp_path):
    """q1's chunks hold 40% of its evidence at k = 1 (a fragment there) and all of it at k = 2."""
    labels = read_labels({"q1": {"a": 1}})
    labels.spans = pd.DataFrame({"query": ["q1"], "doc_id": ["a"], "start": [0], "end": [100]})
    chunks = chunk_map(["a#1", "a#2"], ["a", "a"], start=[0, 40], end=[40, 100], name="halves")
    evaluation = evaluate_runs([{"q1": ["a#1", "a#2"]}], labels, [1, 2], chunks=chunks)
    ws = Workspace(tmp_path)
    return ws, save_evaluation(ws, evaluation, actor=local_actor(None), k=1).saved


def test_the_ledger_judges_fragments_only_at_the_k_their_evidence_was_kept(tmp_path):
    ws, saved = _saved_at_k1(tmp_path)
    line = saved.runs[0].line
    at_1 = ws.archive.ledger(line, k=1, include_passing=True).set_index("query")
    assert at_1.loc["q1", "failure"] == "got only a fragment"
    # At k = 2 the stored evidence (of k = 1) says nothing: the query is judged on its documents, found.
    at_2 = ws.archive.ledger(line, k=2, include_passing=True).set_index("query")
    assert at_2.loc["q1", "passing"] and at_2.loc["q1", "failure"] == ""


def test_a_workspace_from_before_chunk_runs_opened_read_only_still_has_its_ledger(tmp_path):
    import sqlite3

    ws, saved = _saved_at_k1(tmp_path)
    line = saved.runs[0].line
    conn = sqlite3.connect(tmp_path / "workspace.sqlite")
    for table, column in (("outcomes", "evidence_recall"), ("runs", "chunks_fingerprint"), ("runs", "chunks_format"),
                          ("runs", "chunks_name")):
        conn.execute(f"ALTER TABLE {table} DROP COLUMN {column}")
    conn.execute("PRAGMA user_version = 5")
    conn.commit()
    conn.close()
    old = Workspace(tmp_path, read_only=True)
    ledger = old.archive.ledger(line, k=1, include_passing=True).set_index("query")
    assert ledger.loc["q1", "passing"]  # no evidence kept before chunk runs: judged on its documents


def test_a_runs_chunk_map_is_a_used_file_and_goes_with_the_run(tmp_path):
    ws, saved = _saved_at_k1(tmp_path)
    run = ws.run(saved.runs[0].id)
    files = ws.files().set_index("sha256")
    assert files.loc[run.chunks_sha256, "used_by"] == 1
    with pytest.raises(UsageError, match=f"still used by run #{run.id}"):
        ws._delete("file", run.chunks_sha256, dry_run=True)
    ws._delete("run", run.id)
    assert run.chunks_sha256 not in set(ws.files()["sha256"])  # the map left with its run, not as an orphan
