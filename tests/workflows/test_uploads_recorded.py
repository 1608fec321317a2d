"""Every kind of upload is in the record of who did what: labels and runs, and (issue 30, item 8) documents and each
run's chunk map, once per file, under the person who uploaded them; a viewer records nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

from evalcore.access import Actor, Role
from evalcore.errors import NotPermitted
from evalcore.readers.labels import read_labels
from evalcore.readers.runs import read_run
from evalcore.store.workspace import Workspace
from evalcore.workflows import record_upload
from evalcore.workflows.uploads import chunk_map_subject, documents_subject

S = Path(__file__).resolve().parents[2] / "sample_data"
EDITOR = Actor("ed@example.com", Role.EDITOR, "signed in")
VIEWER = Actor("vi@example.com", Role.VIEWER, "signed in")


def test_documents_and_chunk_maps_are_recorded_once_each_beside_labels_and_runs(tmp_path) -> None:
    ws = Workspace(tmp_path / "ws")
    labels_file = ws._put_file(S / "chunking" / "labels.tsv", "labels.tsv")
    run_file = ws._put_file(S / "chunking" / "sent3.trec", "sent3.trec")
    docs = ws._put_file(S / "docs.jsonl", "docs.jsonl")
    chunks = ws._put_file(S / "chunking" / "sent3.chunks.csv", "sent3.chunks.csv")
    run = read_run(S / "chunking" / "sent3.trec")
    for _ in range(2):  # registering the same data set again (another upload beside it) records nothing new
        record_upload(ws, actor=EDITOR, labels=read_labels(S / "chunking" / "labels.tsv"), labels_file=labels_file,
                      runs=[(run, run_file, None)], documents=docs, chunk_maps=[("sent3", chunks)])
    events = ws.events(action="upload")
    assert sorted(s.split(" ")[0] for s in events["subject"]) == ["chunk", "documents", "label", "run"]
    assert set(events["who"]) == {"ed@example.com"}
    by_subject = events.set_index("subject")["detail"]
    assert documents_subject(docs) == f"documents docs.jsonl #{docs.sha256[:12]}"
    assert chunk_map_subject("sent3", chunks) == f"chunk map of sent3: sent3.chunks.csv #{chunks.sha256[:12]}"
    assert by_subject[documents_subject(docs)] == f"file docs.jsonl, {docs.size:,} bytes, sha256 {docs.sha256}"
    assert chunks.sha256 in by_subject[chunk_map_subject("sent3", chunks)]

    # Another documents file (other bytes) is another upload.
    other = ws._put_file(b'{"doc_id": "d1", "text": "x"}\n', "docs.jsonl")
    record_upload(ws, actor=EDITOR, documents=other)
    assert len(ws.events(action="upload")) == 5


def test_a_viewer_records_no_documents_or_chunk_map(tmp_path) -> None:
    ws = Workspace(tmp_path / "ws")
    docs = ws._put_file(S / "docs.jsonl", "docs.jsonl")
    with pytest.raises(NotPermitted):
        record_upload(ws, actor=VIEWER, documents=docs, chunk_maps=[("sent3", docs)])
    assert ws.events().empty
