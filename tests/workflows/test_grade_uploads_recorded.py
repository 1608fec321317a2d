"""An uploaded answer-grade file is in the record of who did what (issue 31): named with the run whose answers it
grades, once per file, under the person who uploaded it; a viewer records nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

from evalcore.access import Actor, Role
from evalcore.errors import NotPermitted
from evalcore.store.workspace import Workspace
from evalcore.workflows.session import Session
from evalcore.workflows.uploads import grades_subject

G = Path(__file__).resolve().parents[1] / "fixtures" / "grades"
EDITOR = Actor("ed@example.com", Role.EDITOR, "signed in")
VIEWER = Actor("vi@example.com", Role.VIEWER, "signed in")


def test_a_grade_file_is_recorded_once_with_its_run(tmp_path) -> None:
    ws = Workspace(tmp_path / "ws")
    session = Session(ws, EDITOR)
    ragas = session.store_file(G / "ragas.csv", "ragas.csv")
    for _ in range(2):  # registering the data set again records nothing new
        session.record_upload(grades=[("bm25", ragas)])
    events = ws.events(action="upload")
    assert events["subject"].tolist() == [f"answer grades of bm25: ragas.csv #{ragas.sha256[:12]}"]
    assert grades_subject("bm25", ragas) == events["subject"].iloc[0]
    assert events["who"].tolist() == ["ed@example.com"] and ragas.sha256 in events["detail"].iloc[0]
    session.record_upload(grades=[("dense", ragas)])  # the same file as another run's grades is another record
    assert len(ws.events(action="upload")) == 2


def test_a_viewer_records_no_grade_file(tmp_path) -> None:
    ws = Workspace(tmp_path / "ws")
    ragas = Session(ws, EDITOR).store_file(G / "ragas.csv", "ragas.csv")
    with pytest.raises(NotPermitted):
        Session(ws, VIEWER).record_upload(grades=[("bm25", ragas)])
    assert ws.events(action="upload").empty
