"""The "Who did what" page (AppTest): every change in the workspace with its time and person, filterable by person
and action from the URL; on 127.0.0.1 without sign-in the person using the page is the owner, named by the server's
login name."""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_runner import run_cli
from streamlit.testing.v1 import AppTest

from evalcore.access import Actor, Role, login_name
from evalcore.readers.runs import read_run
from evalcore.store.workspace import ENV_VAR, Workspace
from evalcore.workflows import record_upload

from tests.dashboard.apptest_helpers import APP, TIMEOUT, app, no_exceptions, plain

S = Path(__file__).resolve().parents[2] / "sample_data"
ANA, BO = (f"{name} (--who; login {login_name()})" for name in ("ana", "bo"))  # the command line's --who: a claim


@pytest.fixture
def workspace(tmp_path, monkeypatch) -> Path:
    folder = tmp_path / "ws"
    monkeypatch.setenv(ENV_VAR, str(folder))
    for args in (("evaluate", "--labels", S / "labels.tsv", "--run", S / "base.trec", "--k", "1,5", "--save",
                  "--who", "ana"),
                 ("workspace", "delete", "evaluation", "1", "--yes", "--who", "bo")):
        done = run_cli(*args, "--workspace", folder)
        assert done.returncode == 0, done.stderr
    return folder


def page(**params: str) -> AppTest:
    at = AppTest.from_file(str(APP), default_timeout=TIMEOUT)
    for name, value in params.items():
        at.query_params[name] = value
    at.switch_page("views/activity.py")
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_every_change_is_listed_with_minute_and_person(workspace) -> None:
    at = page()
    [table] = [d.value for d in at.dataframe]
    assert table["person"].tolist() == [BO, ANA, ANA, ANA]
    assert table["action"].tolist() == ["delete", "save evaluation", "store file", "store file"]  # the files first
    assert table["at"].str.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d UTC").all()  # to the minute, zone named
    captions = plain(" ".join(c.value for c in at.caption))
    assert "4 changes, newest first; times in your time zone, to the minute." in captions
    assert f"You: {login_name()} (owner): may read every page and download; also upload files" in captions
    assert sorted(at.selectbox(key="activity.who").options) == [ANA, BO]


def test_a_link_filters_by_person_and_action(workspace) -> None:
    at = page(who=BO)
    [table] = [d.value for d in at.dataframe]
    assert table["person"].tolist() == [BO] and table["what"].iloc[0].startswith("evaluation 1 ")
    at = page(action="save evaluation")
    [table] = [d.value for d in at.dataframe]
    assert table["person"].tolist() == [ANA]
    assert "1 change (save evaluation), newest first" in plain(" ".join(c.value for c in at.caption))


def test_uploads_of_documents_and_chunk_maps_are_listed(tmp_path, monkeypatch) -> None:
    """Issue 30, item 8: the record lists documents and chunk-map uploads beside labels and runs."""
    folder = tmp_path / "ws"
    monkeypatch.setenv(ENV_VAR, str(folder))
    ws = Workspace(folder)
    docs = ws._put_file(S / "docs.jsonl", "docs.jsonl")
    chunks = ws._put_file(S / "chunking" / "sent3.chunks.csv", "sent3.chunks.csv")
    run = ws._put_file(S / "chunking" / "sent3.trec", "sent3.trec")
    record_upload(ws, actor=Actor("ed@example.com", Role.EDITOR, "signed in"),
                  runs=[(read_run(S / "chunking" / "sent3.trec"), run, None)], documents=docs,
                  chunk_maps=[("sent3", chunks)])
    at = page(action="upload")
    [table] = [d.value for d in at.dataframe]
    assert table["what"].tolist() == [f"chunk map of sent3: sent3.chunks.csv #{chunks.short}",
                                      f"documents docs.jsonl #{docs.short}", "run #1 sent3"]
    assert set(table["person"]) == {"ed@example.com"}
    assert "3 changes (upload), newest first" in plain(" ".join(c.value for c in at.caption))


def test_documents_and_a_chunk_map_uploaded_on_the_data_page_are_recorded(tmp_path, monkeypatch) -> None:
    folder = tmp_path / "ws"
    monkeypatch.setenv(ENV_VAR, str(folder))
    at = app("views/data.py")
    next(b for b in at.button if "chunking sample" in (b.label or "")).click().run()
    # The sample's chunk map and documents in other bytes (the sample's own files are never recorded).
    body = (S / "chunking" / "sent3.chunks.csv").read_bytes().replace(b"\n", b"\r\n")
    at.file_uploader(key="data.chunks.1.sent3").set_value(("mine.csv", body, "text/csv")).run()
    docs = (S / "docs.jsonl").read_text().splitlines(keepends=True)[::-1]
    at.file_uploader(key="data.documents.1").set_value(("my-docs.jsonl", "".join(docs).encode(),
                                                        "application/json")).run()
    no_exceptions(at)
    assert not at.error, [e.value for e in at.error]
    subjects = Workspace(folder).events(action="upload")["subject"].tolist()
    assert any(s.startswith("chunk map of sent3: mine.csv #") for s in subjects), subjects
    assert any(s.startswith("documents my-docs.jsonl #") for s in subjects), subjects
