"""A run of chunks in the workspace: saved with the chunk map it was scored through (its file, or a table made of
it), computed again with it, its map named in the run's record, and its fragments counted as failures by the ledger
(a relevant chunk holding under half the evidence)."""

from __future__ import annotations

import pandas as pd
import pytest

from evalcore.access import local_actor
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
    assert stored.chunks_ref == f"windows#{evaluation.results[0].chunks.fingerprint}"
    again = ws.load_evaluation(saved.id)
    for metric in ("recall@1", "evidence_recall@1", "evidence_recall@2", "mrr"):
        assert again.results[0][metric] == pytest.approx(evaluation.results[0][metric]), metric
    assert ws.remove_orphans(older_than=0).files == ()  # the stored map is the run's, not an orphan


def test_the_ledger_counts_a_fragment_as_a_failure_and_says_so(tmp_path):
    ws = Workspace(tmp_path)
    saved = save_evaluation(ws, _evaluation(), actor=local_actor(None), k=1).saved
    ledger = ws.archive.ledger(saved.runs[0].line)
    failing = dict(zip(ledger["query"], ledger["failure"]))
    assert not ledger.set_index("query").loc["q3", "passing"]
    assert failing.get("q3") == "got only a fragment"  # found at k = 1, holding 10 of its 100 evidence characters
    assert "q2" not in failing  # found whole
    assert failing.get("q1", "") == ""  # a#1 holds 50 of its 100: half is not under half
