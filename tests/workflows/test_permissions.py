"""Permissions are enforced in the workflow layer: every action refuses a person whose role does not allow it,
before anything is written, and every action taken is logged under the person's name. These calls are what a
forged request from a page would reach: hiding a button is not what protects the workspace."""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest

from evalcore import workflows
from evalcore.access import Actor, Role
from evalcore.analyses.judging import judging_pool
from evalcore.errors import NotPermitted
from evalcore.metrics.split import scoring_labels
from evalcore.readers.labels import read_labels
from evalcore.readers.runs import read_run
from evalcore.store.workspace import Workspace
from evalcore.workflows import (
    add_cases,
    delete,
    edit_entry,
    flag_for_rejudging,
    record_upload,
    reveal_holdout,
    save_evaluation,
    save_judging_round,
)

S = Path(__file__).resolve().parents[2] / "sample_data"
VIEWER = Actor("vi@example.com", Role.VIEWER, "signed in")
EDITOR = Actor("ed@example.com", Role.EDITOR, "signed in")
OWNER = Actor("ow@example.com", Role.OWNER, "signed in")


@pytest.fixture
def setting(tmp_path):
    labels = read_labels(S / "labels.tsv")
    runs = [read_run(S / "base.trec"), read_run(S / "tuned.trec")]
    evaluation = scoring_labels(labels).evaluate(runs, [1, 5])
    ws = Workspace(tmp_path / "ws")
    return ws, labels, runs, evaluation


def snapshot(ws: Workspace) -> tuple:
    """Everything an action could change."""
    return (ws.counts(), len(ws.reveals()), len(ws.rejudge_queue(open_only=False)), len(ws.judging_rounds()),
            len(ws.events()))


def test_a_viewer_is_refused_every_change_and_nothing_changes(setting, tmp_path) -> None:
    ws, labels, runs, evaluation = setting
    saved = save_evaluation(ws, evaluation, actor=OWNER, k=5).saved  # something to delete and edit
    before = snapshot(ws)
    entry = ws.archive.entry(saved.runs[0].line, "q064", labels=saved.labels.name)
    cases = tmp_path / "cases.jsonl"
    cases.write_text('{"query": "new q", "doc_id": "d1"}\n')
    pool = judging_pool(runs, labels, "q006", 3)
    attempts = {
        "save evaluations": lambda: save_evaluation(ws, evaluation, actor=VIEWER, k=1),
        "reveal the holdout": lambda: reveal_holdout(ws, labels, [("base", "m")], actor=VIEWER),
        "judge blind and flag": lambda: flag_for_rejudging(ws, labels, ["q006"], actor=VIEWER),
        "judge blind": lambda: save_judging_round(ws, "labels", pool, {d: True for d in pool.docs}, actor=VIEWER,
                                                  base=labels),
        "add label-set versions": lambda: add_cases(ws, "labels:tune", cases, actor=VIEWER),
        "edit the failure ledger": lambda: edit_entry(ws, entry, actor=VIEWER, status="known", tags=["chunking"],
                                                      note="x"),
        "delete from the workspace": lambda: delete(ws, "evaluation", saved.id, actor=VIEWER),
        "upload files": lambda: record_upload(ws, actor=VIEWER, labels=labels),
    }
    for words, attempt in attempts.items():
        with pytest.raises(NotPermitted) as refused:
            attempt()
            pytest.fail(f"a viewer could {words}")
        assert f"vi@example.com is a viewer here and may not {words}" in str(refused.value)
        assert snapshot(ws) == before, words


def test_an_editor_saves_edits_and_judges_but_cannot_reveal_delete_or_version(setting) -> None:
    ws, labels, runs, evaluation = setting
    saved = save_evaluation(ws, evaluation, actor=EDITOR, k=5).saved
    entry = ws.archive.entry(saved.runs[0].line, "q064", labels=saved.labels.name)
    assert edit_entry(ws, entry, actor=EDITOR, status="known", tags=["chunking"], note="seen") == \
        ["status", "tags", "note"]
    for refused in (lambda: reveal_holdout(ws, labels, [("base", "m")], actor=EDITOR),
                    lambda: delete(ws, "evaluation", saved.id, actor=EDITOR)):
        with pytest.raises(NotPermitted, match="that needs the owner role"):
            refused()
    log = ws.events()
    assert set(log["who"]) == {"ed@example.com"}
    assert log["action"].tolist() == ["ledger note", "ledger tags", "ledger status", "save evaluation"]  # newest first
    assert log.iloc[1]["detail"] == "+chunking" and log.iloc[2]["detail"] == "new -> known"


def test_every_owner_action_is_logged_under_their_name(setting, tmp_path) -> None:
    ws, labels, runs, evaluation = setting
    saved = save_evaluation(ws, evaluation, actor=OWNER, k=5).saved
    reveal = reveal_holdout(ws, labels, [("base", "acme")], actor=OWNER)
    assert reveal.who == "ow@example.com" and ws.reveals()["who"].tolist() == ["ow@example.com"]
    pool = judging_pool(runs, labels, "q006", 3)
    version = save_judging_round(ws, "labels", pool, {d: i == 0 for i, d in enumerate(pool.docs)}, actor=OWNER)
    assert ws.judging_rounds()["judge"].tolist() == ["ow@example.com"] and version.version == 2
    cases = tmp_path / "cases.jsonl"
    cases.write_text('{"query": "new q", "doc_id": "d1"}\n')
    add_cases(ws, "labels", cases, actor=OWNER)
    delete(ws, "evaluation", saved.id, actor=OWNER)
    log = ws.events()
    assert log["action"].tolist()[::-1] == ["save evaluation", "reveal holdout", "judging round",
                                            "label-set version", "delete"]
    assert set(log["who"]) == {"ow@example.com"}
    assert log.iloc[0]["subject"].startswith(f"evaluation {saved.id} ")  # what was deleted, in words


def test_every_action_in_the_workflow_layer_takes_the_person_acting() -> None:
    """A new workflow without ``actor`` would be a way around the roles: each public action takes one (keyword
    only, no default)."""
    actions = [getattr(workflows, name) for name in workflows.__all__ if inspect.isfunction(getattr(workflows, name))]
    assert len(actions) >= 8  # the eight of the team server, and any added since
    for action in actions:
        actor = inspect.signature(action).parameters.get("actor")
        assert actor is not None and actor.kind is inspect.Parameter.KEYWORD_ONLY, action.__name__
        assert actor.default is inspect.Parameter.empty, action.__name__
