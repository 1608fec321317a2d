"""A production miss added from the Failures page: the query text and its relevant docs become a new version of the
label set, through the same workflow as ``evalcore workspace add-cases`` (the case stored as a file, the change
logged under the person's name); a form missing a part says which, and writes nothing."""

from __future__ import annotations

from pathlib import Path

from evalcore.store.workspace import Workspace

from tests.dashboard.apptest_helpers import app, no_exceptions, texts

SAVE = "FormSubmitter:failures.save_form-Save this evaluation to the workspace"
ADD = "FormSubmitter:failures.case_form-Add to the labels"


def test_a_production_miss_becomes_a_new_version_of_the_labels(workspace: Path) -> None:
    at = app("views/failures.py", k="10")
    at.button(key=SAVE).click().run()
    no_exceptions(at)
    versions = Workspace(workspace).label_versions("labels:tune")
    assert len(versions) == 1

    at.text_input(key="failures.case_id").set_value("prod-001")
    at.text_input(key="failures.case_text").set_value("  turn off   invoice emails ")
    at.button(key=ADD).click().run()
    no_exceptions(at)
    assert "Query prod-001: name at least one relevant doc id" in texts(at)
    assert len(Workspace(workspace).label_versions("labels:tune")) == 1  # nothing written

    at.text_area(key="failures.case_docs").set_value("billing-invoices-02,\nbilling-invoices-14")
    at.button(key=ADD).click().run()
    no_exceptions(at)
    ws = Workspace(workspace)
    versions = ws.label_versions("labels:tune")
    assert len(versions) == 2
    added = ws.load_labels("labels:tune")
    mine = added.judgments[added.judgments["query"] == "prod-001"]
    assert sorted(mine["doc_id"]) == ["billing-invoices-02", "billing-invoices-14"] and set(mine["grade"]) == {1}
    assert added.field("query_text")["prod-001"] == "turn off invoice emails"
    assert added.field("source")["prod-001"] == "production"
    shown = " ".join(s.value for s in at.success).replace("\\", "")
    assert "Added query prod-001 to labels:tune v2" in shown and "added 1 query and 2 judgments" in shown
    events = ws.events()
    logged = events[events["action"] == "label-set version"]
    assert logged["detail"].str.contains("from production-miss-prod-001.jsonl", regex=False).any()


def test_a_production_miss_is_checked_saved_without_a_detour_and_scored_on_every_page(workspace: Path) -> None:
    at = app("views/failures.py", k="10")  # nothing saved yet: the page saves the labels itself
    assert len(at.text_input(key="failures.search").value or "") == 0
    at.text_input(key="failures.case_id").set_value("prod-001")
    at.text_input(key="failures.case_text").set_value("stop the invoice emails")
    at.text_area(key="failures.case_docs").set_value("billing-invoices-02, no-such-doc")
    at.button(key=ADD).click().run()
    no_exceptions(at)
    assert "prod-001: no-such-doc is not among the 503 documents loaded" in texts(at)
    assert not (workspace / "evalcore.sqlite").exists() or Workspace(workspace).label_sets().empty

    existing = at.dataframe[0].value["query"].iloc[0]  # a query the labels hold already: never overwritten
    at.text_input(key="failures.case_id").set_value(existing)
    at.text_area(key="failures.case_docs").set_value("billing-invoices-02")
    at.button(key=ADD).click().run()
    assert f"Query {existing} is already in labels:tune v1" in texts(at)

    at.text_input(key="failures.case_id").set_value("prod-001")
    at.text_area(key="failures.case_docs").set_value("billing-invoices-02, a-doc-still-to-write")
    at.checkbox(key="failures.case_new_docs").check()
    at.button(key=ADD).click().run()
    no_exceptions(at)
    ws = Workspace(workspace)
    assert list(ws.label_versions("labels:tune")["version"]) == [1, 2]  # saved first (v1), then the case (v2)
    at.button(key="failures.case_use").click().run()  # offered right after adding
    no_exceptions(at)
    assert at.query_params["search"] == "prod-001" and at.query_params["data"]
    assert "of 225 queries" in texts(at)  # the new case is scored: 224 tune queries and prod-001
    overview = app(data=at.query_params["data"])
    assert "n = 225 queries" in texts(overview)
