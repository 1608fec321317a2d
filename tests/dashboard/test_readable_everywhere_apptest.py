"""What a person reads on every page has no raw None / nan / NaT, no microsecond timestamps, no "1 queries", and
an empty state is a neutral notice, not an error.

Walks every page that dashboard/app.py lists (a page added later is walked too) in three states: the sample data
as the first visit shows it; the sample data with a failure opened and an evaluation saved (the History line,
the ledger, the Data page's workspace tables); and small uploaded files with missing fields (no source, no
documents, a query no run returned anything relevant for).
"""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
from streamlit.testing.v1 import AppTest

from tests.dashboard.apptest_helpers import DOCS_JSONL, LABELS_CSV, RUN_A, app, no_exceptions, texts

ROOT = Path(__file__).resolve().parents[2]
PAGES = re.findall(r'st\.Page\("(views/[a-z_]+\.py)"', (ROOT / "dashboard" / "app.py").read_text(encoding="utf-8"))
RAW = re.compile(r"(?<![\w.-])(None|nan|NaN|NaT|null|<NA>)(?![\w-])")
MICROSECONDS = re.compile(r"\d{2}:\d{2}:\d{2}\.\d{3,6}|\d{2}:\d{2}:\d{2}(?:\+00:00)?\b")
GRAMMAR = re.compile(r"\b1 (queries|runs|docs|documents|failures|labels|regressions|versions|evaluations)\b"
                     r"|\w\(s\)")  # "1 run(s)": the page knows the count


def _problems(at: AppTest, where: str) -> list[str]:
    """Everything on the page a person would read as a glitch."""
    found = []
    words = texts(at) + "\n" + "\n".join(s.value for s in at.success)
    for pattern, what in [(RAW, "raw value"), (MICROSECONDS, "time to the second or finer"), (GRAMMAR, "plural")]:
        for match in pattern.finditer(words):
            found.append(f"{where}: {what} in text: ...{words[max(0, match.start() - 60):match.end() + 30]!r}")
    for number, table in enumerate(at.dataframe):
        frame = table.value
        if not isinstance(frame, pd.DataFrame):
            continue
        shown_columns = list(table.proto.column_order) or list(frame.columns)
        for column in [c for c in shown_columns if c in frame.columns]:
            values = frame[column]
            if values.isna().any() and (not table.proto.placeholder or RAW.fullmatch(table.proto.placeholder)):
                found.append(f"{where}: table {number} column {column!r} has empty cells shown as None")
            shown = values.dropna().astype(str)
            if shown.str.fullmatch(r"None|nan|NaN|NaT|<NA>|null").any():
                found.append(f"{where}: table {number} column {column!r} has a raw None/nan text")
            if shown.str.contains(r"\d{2}:\d{2}:\d{2}").any():
                found.append(f"{where}: table {number} column {column!r} shows seconds: {shown.iloc[0]!r}")
    for error in at.error:
        if re.search(r"nothing|no .* yet|empty", error.value, re.I):
            found.append(f"{where}: an empty state shown as an error: {error.value[:100]!r}")
    return found


def _walk(at: AppTest, label: str, **params: str) -> list[str]:
    found = []
    for page in PAGES:
        at.query_params.clear()
        at.query_params.update(params)
        at.switch_page(page).run()
        no_exceptions(at)
        found += _problems(at, f"{label} {page}")
    return found


def test_every_page_reads_cleanly_on_the_sample_data(workspace):
    at = app()
    found = _walk(at, "sample")
    # A failure opened up close, on the Failures page.
    at.switch_page("views/failures.py").run()
    first = at.selectbox(key="failures.query").options[1] if len(at.selectbox(key="failures.query").options) > 1 \
        else None
    assert first is not None, "the sample data has failures to open"
    at.selectbox(key="failures.query").set_value(first).run()
    no_exceptions(at)
    found += _problems(at, "sample views/failures.py with a query open")
    # An evaluation saved: History, the ledger, the Data page's workspace tables read from the store.
    at.button(key="FormSubmitter:failures.save_form-Save this evaluation to the workspace").click().run()
    no_exceptions(at)
    found += _problems(at, "sample views/failures.py after saving")
    found += _walk(at, "saved")
    assert not found, "\n".join(found)


def test_every_page_reads_cleanly_on_uploads_with_missing_fields(workspace):
    at = app("views/data.py")
    at.file_uploader(key="data.labels.0").set_value(("mine.csv", LABELS_CSV.encode(), "text/csv"))
    at.file_uploader(key="data.runs.0").set_value([("a.trec", RUN_A.encode(), "text/plain")])
    at.file_uploader(key="data.documents.0").set_value(("docs.jsonl", DOCS_JSONL.encode(), "application/json"))
    at.run()
    no_exceptions(at)
    found = _problems(at, "upload views/data.py")
    found += _walk(at, "upload", data=at.query_params["data"][0] if isinstance(at.query_params["data"], list)
                   else at.query_params["data"])
    assert not found, "\n".join(found)


def test_an_empty_workspace_is_a_neutral_notice(workspace):
    at = app("views/history.py")
    assert not at.error, [e.value for e in at.error]
    assert at.info, "an empty History says so in a neutral notice"


def test_labels_alone_say_what_to_upload_next(workspace):
    at = app("views/data.py")
    at.file_uploader(key="data.labels.0").set_value(("mine.csv", LABELS_CSV.encode(), "text/csv"))
    at.run()
    no_exceptions(at)
    hints = [i.value for i in at.info]
    assert any("Upload your runs next" in h for h in hints), hints
    at.file_uploader(key="data.runs.0").set_value([("a.trec", RUN_A.encode(), "text/plain")])
    at.run()
    no_exceptions(at)
    assert not any("next" in i.value for i in at.info), [i.value for i in at.info]
