"""A production miss (a query seen failing, with the docs that should have come back) added as a labeled case: only
an owner may, each part is checked before anything is written, and the case is the same record `add_cases` makes
from a file (a stored file, a new label-set version, an event under the person's name)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evalcore.access import Actor, Role
from evalcore.errors import NotPermitted, UsageError
from evalcore.readers.labels import read_labels
from evalcore.store.workspace import Workspace
from evalcore.workflows import add_production_miss
from evalcore.workflows.cases import production_miss_file, split_doc_ids

SAMPLE = Path(__file__).resolve().parents[2] / "sample_data"
OWNER = Actor("ow@example.com", Role.OWNER, "signed in")


@pytest.fixture
def workspace(tmp_path) -> Workspace:
    ws = Workspace(tmp_path / "ws")
    ws._save_labels(read_labels(SAMPLE / "labels.tsv"))
    return ws


def test_an_owner_adds_a_production_miss_as_a_new_version(workspace: Workspace) -> None:
    added = add_production_miss(workspace, "labels", "prod-7", "where did my\tinvoices go",
                                split_doc_ids("billing-invoices-02; billing-invoices-14\n billing-invoices-02"),
                                actor=OWNER)
    assert added.version.created and added.version.version == 2 and added.file.name == "production-miss-prod-7.jsonl"
    labels = workspace.load_labels("labels")
    mine = labels.judgments[labels.judgments["query"] == "prod-7"]
    assert sorted(mine["doc_id"]) == ["billing-invoices-02", "billing-invoices-14"]  # a doc named twice counts once
    assert labels.field("query_text")["prod-7"] == "where did my invoices go"
    assert labels.field("source")["prod-7"] == "production"
    event = workspace.events().iloc[0]
    assert event["who"] == "ow@example.com" and event["action"] == "label-set version"
    again = add_production_miss(workspace, "labels", "prod-7", "where did my invoices go",
                                ["billing-invoices-02", "billing-invoices-14"], actor=OWNER)
    assert not again.version.created  # nothing new: the set already has the case


@pytest.mark.parametrize("who", [Role.VIEWER, Role.EDITOR])
def test_only_an_owner_may_add_a_case(workspace: Workspace, who: Role) -> None:
    with pytest.raises(NotPermitted, match="may not add label-set versions"):
        add_production_miss(workspace, "labels", "prod-1", "text", ["d1"], actor=Actor("x@example.com", who, "x"))
    assert len(workspace.label_versions("labels")) == 1


@pytest.mark.parametrize("query, text, docs, says", [
    ("", "text", ["d1"], "needs a query id"),
    ("q", "   ", ["d1"], "Query q: say what the customer typed"),
    ("q", "text", [" ", ""], "Query q: name at least one relevant doc id"),
])
def test_each_missing_part_is_named_and_nothing_is_written(workspace: Workspace, query, text, docs, says) -> None:
    with pytest.raises(UsageError, match=says):
        add_production_miss(workspace, "labels", query, text, docs, actor=OWNER)
    assert len(workspace.label_versions("labels")) == 1


def test_the_case_file_is_plain_json_lines() -> None:
    rows = [json.loads(line) for line in production_miss_file("q=1", "=cmd|' /C calc'!A0", ["d1"]).splitlines()]
    assert rows == [{"query": "q=1", "doc_id": "d1", "grade": 1, "query_text": "=cmd|' /C calc'!A0",
                     "source": "production"}]


def test_an_existing_query_id_is_never_overwritten_silently(workspace: Workspace) -> None:
    first = workspace.load_labels("labels").queries[0]
    with pytest.raises(UsageError, match=f"Query {first} is already in labels v1 #"):
        add_production_miss(workspace, "labels", str(first), "what they typed", ["some-other-doc"], actor=OWNER)
    assert len(workspace.label_versions("labels")) == 1


def test_a_doc_the_documents_do_not_hold_is_refused_unless_said_to_be_new(workspace: Workspace) -> None:
    known = {"billing-invoices-02", "billing-invoices-14"}
    with pytest.raises(UsageError, match="prod-9: nope-1 is not among the 2 documents loaded"):
        add_production_miss(workspace, "labels", "prod-9", "text", ["billing-invoices-02", "nope-1"], actor=OWNER,
                            known_docs=known)
    assert len(workspace.label_versions("labels")) == 1
    added = add_production_miss(workspace, "labels", "prod-9", "text", ["billing-invoices-02", "nope-1"], actor=OWNER,
                                known_docs=known, not_in_corpus_yet=True)
    assert added.version.version == 2


def test_a_label_set_the_workspace_lacks_is_saved_first_in_the_persons_name(tmp_path) -> None:
    ws = Workspace(tmp_path / "empty")
    labels = read_labels(SAMPLE / "labels.tsv")
    added = add_production_miss(ws, "labels", "prod-1", "text", ["d1"], actor=OWNER, labels=labels)
    assert added.version.version == 2 and added.version.n_queries == labels.n_queries + 1
    assert list(ws.events()["action"]) == ["label-set version", "label-set version"]
    assert set(ws.events()["who"]) == {"ow@example.com"}
