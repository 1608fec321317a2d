"""The Data page's format choice beside each upload, and the server's workspace path kept from every visitor:
driven through AppTest."""

from __future__ import annotations

import json
from pathlib import Path

from evalcore.store.workspace import Workspace
import streamlit as st
from streamlit.testing.v1 import AppTest

from evalcore.store.workspace import ENV_VAR

from tests.dashboard.apptest_helpers import RUN_A, app, no_exceptions, plain, texts

HINT = "the format choice beside the upload"
# TREC qrels in a .csv whose first line has a stray fifth field: detection reads a headerless CSV, the TREC
# reader takes it.
ODD_QRELS = b"q1 0 d1 1 checked\nq1 0 d9 0\nq2 0 d2 1\nq3 0 d3 1\nq3 0 d4 2\nq4 0 d5 1\n"
RUN_IN_JSON = RUN_A.encode()  # TREC run lines in a file named .json: detection trusts the extension
DOCS_IN_JSON = "\n".join(json.dumps({"doc_id": d, "text": f"text of {d}"})
                         for d in ["d1", "d2", "d3", "d4", "d5", "d9"]).encode()  # JSON lines named .json
PAGES = ("views/data.py", "views/overview.py", "views/choose_k.py", "views/failures.py", "views/history.py",
         "views/sources.py", "views/integrity.py", "views/judge.py")


def errors(at: AppTest) -> str:
    return plain(" ".join(e.value for e in at.error))


def everything_shown(at: AppTest) -> str:
    """Every string the page sends: text elements, widget labels, help, options, table cells."""
    parts = [texts(at), errors(at)]
    for kind in ("selectbox", "multiselect", "text_input", "number_input", "button", "radio", "toggle", "expander",
                 "tabs", "page_link", "success", "caption", "markdown", "text", "code"):
        for element in at.get(kind):
            proto = getattr(element, "proto", None)
            parts.append(str(proto) if proto is not None else repr(element))
    for frame in at.get("dataframe"):
        parts.append(frame.value.to_csv())
    return plain("\n".join(parts))


def test_each_upload_is_read_with_the_format_chosen_beside_it(workspace: Path) -> None:
    at = app("views/data.py")
    for slot in ("labels", "runs"):
        assert at.selectbox(key=f"data.{slot}.format.0").value == "detect"
        assert at.selectbox(key=f"data.{slot}.format.0").options == ["detect", "trec", "csv", "tsv", "parquet",
                                                                       "json", "jsonl"]
    # The documents reader takes tables and JSON lines only: the other formats are not offered.
    assert at.selectbox(key="data.documents.format.0").options == ["detect", "csv", "tsv", "parquet", "jsonl"]

    # Detected, the qrels read as a headerless CSV: the message says so and names the format choice; nothing changes.
    at.file_uploader(key="data.labels.0").set_value(("qrels.csv", ODD_QRELS, "text/csv")).run()
    no_exceptions(at)
    assert "qrels.csv, line 1: expected a query column" in errors(at) and HINT in errors(at)
    assert "Labels: labels.tsv · 320 queries" in texts(at) and "data" not in at.query_params

    # Read as TREC, they load.
    at.selectbox(key="data.labels.format.0").set_value("trec").run()
    no_exceptions(at)
    assert not at.error, errors(at)
    assert "Labels: qrels.csv (read as trec) · 4 queries · 6 judgments" in texts(at)
    key = at.query_params["data"]

    # A run in TREC named .json, then documents in JSON lines named .json: each fails detected, loads when named.
    at.file_uploader(key="data.runs.0").set_value([("a.json", RUN_IN_JSON, "application/json")]).run()
    no_exceptions(at)
    assert "a.json, line 1: expected valid JSON" in errors(at)
    assert at.query_params["data"] == key and "Runs: base, tuned, tuned-256d" in texts(at)
    at.selectbox(key="data.runs.format.0").set_value("trec").run()
    no_exceptions(at)
    assert not at.error, errors(at)
    assert "Runs: a (read as trec)" in texts(at)
    at.file_uploader(key="data.documents.0").set_value(("docs.json", DOCS_IN_JSON, "application/json")).run()
    no_exceptions(at)
    assert "docs.json: expected a documents file in CSV, TSV, JSONL or Parquet" in errors(at)
    at.selectbox(key="data.documents.format.0").set_value("jsonl").run()
    no_exceptions(at)
    assert not at.error, errors(at)
    assert "Documents: docs.json (read as jsonl) · 6 docs" in texts(at)
    key = at.query_params["data"]

    # The format is part of the data set: in its manifest, so a link opens it after a server restart.
    manifest = Workspace(workspace).manifest("dataset", key)
    assert manifest["labels"]["format"] == "trec" and manifest["runs"][0]["file"]["format"] == "trec"
    assert manifest["documents"]["format"] == "jsonl"
    st.cache_resource.clear()
    st.cache_data.clear()
    other = app("views/overview.py", data=key)
    assert other.dataframe[0].value["run"].tolist() == ["a"] and not other.warning
    other.switch_page("views/data.py").run()
    no_exceptions(other)
    words = texts(other)
    assert "Labels: qrels.csv (read as trec) · 4 queries" in words and "Runs: a (read as trec)" in words
    assert "Documents: docs.json (read as jsonl)" in words

    # The saved evaluation keeps the run's format: the History page's report reads it back.
    other.switch_page("views/failures.py").run()
    other.button(key="FormSubmitter:failures.save_form-Save this evaluation to the workspace").click().run()
    no_exceptions(other)
    assert not other.error, errors(other)
    other.switch_page("views/history.py").run()
    other.button(key="history.prepare").click().run()
    no_exceptions(other)
    assert not other.error, errors(other)
    assert any(b.label == "Report (HTML)" for b in other.get("download_button"))


def test_a_format_that_does_not_fit_is_explained_and_keeps_what_is_loaded() -> None:
    at = app("views/data.py")
    at.selectbox(key="data.labels.format.0").set_value("parquet").run()
    at.file_uploader(key="data.labels.0").set_value(("mine.csv", b"query,doc_id,grade\nq1,d1,1\n", "text/csv")).run()
    no_exceptions(at)
    assert "mine.csv" in errors(at)
    assert "Labels: labels.tsv · 320 queries" in texts(at) and "data" not in at.query_params
    at.selectbox(key="data.labels.format.0").set_value("detect").run()  # back to detect: it reads
    assert not at.error, errors(at)
    assert "Labels: mine.csv · 1 queries" in texts(at) or "Labels: mine.csv · 1 query" in texts(at)


def test_a_file_read_with_the_detected_format_keeps_the_manifest_and_key_it_had() -> None:
    from evalcore.metrics.dataset import Dataset, FileRef, RunSpec

    ref = FileRef("a.trec", "0" * 64, 10)
    plain_set = Dataset(labels=FileRef("l.csv", "1" * 64, 5), runs=(RunSpec(ref, "a"),))
    manifest = plain_set.manifest()
    assert "format" not in manifest["labels"] and "format" not in manifest["runs"][0]["file"]
    assert Dataset.from_manifest(manifest) == plain_set
    as_trec = plain_set.with_runs((RunSpec(ref.as_read("trec"), "a"),))
    assert as_trec.key != plain_set.key and as_trec.manifest()["runs"][0]["file"]["format"] == "trec"
    assert Dataset.from_manifest(json.loads(json.dumps(as_trec.manifest()))).key == as_trec.key


def test_no_page_shows_the_server_s_workspace_path(workspace: Path) -> None:
    at = app("views/data.py")
    at.file_uploader(key="data.labels.0").set_value(("qrels.csv", ODD_QRELS, "text/csv"))
    at.selectbox(key="data.labels.format.0").set_value("trec")
    at.file_uploader(key="data.runs.0").set_value([("a.trec", RUN_A.encode(), "text/plain")]).run()
    no_exceptions(at)
    assert "the server's workspace" in texts(at)
    at.switch_page("views/failures.py").run()
    at.button(key="FormSubmitter:failures.save_form-Save this evaluation to the workspace").click().run()
    no_exceptions(at)
    for page in PAGES:
        at.switch_page(page).run()
        no_exceptions(at)
        shown = everything_shown(at)
        assert at.title[0].value in shown  # what is searched holds the page
        assert str(workspace) not in shown, (page, shown)
    # A link to a data set this workspace does not hold says so without the path.
    unknown = app(data="0123456789ab")
    assert "not in the server's workspace" in texts(unknown) and str(workspace) not in everything_shown(unknown)


def test_a_workspace_that_cannot_be_opened_is_explained_without_its_path(tmp_path: Path, monkeypatch) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the workspace should be")
    monkeypatch.setenv(ENV_VAR, str(blocker))
    at = app("views/data.py")
    message = errors(at)
    assert "The server's workspace is a file, not a folder" in message, message
    assert str(blocker) not in everything_shown(at)
    at.switch_page("views/history.py").run()
    no_exceptions(at)
    assert "The server's workspace is a file" in errors(at) and str(blocker) not in everything_shown(at)
