"""The log of who did what: append-only, filterable, and added to older workspaces when they are opened."""

from __future__ import annotations

import sqlite3

import pytest

from evalcore.errors import FrozenError, UsageError
from evalcore.readers.labels import read_labels
from evalcore.store.workspace import EVENT_COLUMNS, SCHEMA_VERSION, Workspace


def test_events_are_kept_newest_first_and_filter_by_person_and_action(tmp_path) -> None:
    ws = Workspace(tmp_path / "ws")
    ws._record_event("ana@example.com", "delete", "run #3 base", "")
    ws._record_event("bo", "ledger note", "line x, query q1 (labels)", "renamed in 2.3")
    ws._record_event("ana@example.com", "reveal holdout", "holdout of labels v1", "reveal #1")
    log = ws.events()
    assert list(log.columns) == EVENT_COLUMNS
    assert log["action"].tolist() == ["reveal holdout", "ledger note", "delete"]
    assert log["at"].str.endswith("+00:00").all()  # UTC, said so in the value
    assert ws.events(who="ana@example.com")["action"].tolist() == ["reveal holdout", "delete"]
    assert ws.events(action="ledger note")["detail"].tolist() == ["renamed in 2.3"]
    assert sorted(log["who"].unique()) == ["ana@example.com", "bo"]


def test_no_one_can_change_or_erase_an_event(tmp_path) -> None:
    ws = Workspace(tmp_path / "ws")
    ws._record_event("ana", "delete", "label set x")
    for sql in ("UPDATE events SET who = 'eve'", "DELETE FROM events"):
        with pytest.raises(FrozenError, match="never changed or erased"):
            ws.write(lambda conn, sql=sql: conn.execute(sql))
    assert ws.events()["who"].tolist() == ["ana"]
    ws._save_labels(read_labels({"a": ["d1"]}), name="x")
    ws._delete("labels", "x")  # deleting what an event names leaves the event
    assert len(ws.events()) == 1


def test_a_version_2_workspace_gets_the_log_on_open_and_keeps_everything(tmp_path) -> None:
    ws = Workspace(tmp_path / "ws")
    ws._save_labels(read_labels({"a": ["d1"]}), name="old")
    ws.close()
    conn = sqlite3.connect(tmp_path / "ws" / "workspace.sqlite")
    for table in ("events", "manifest_files", "manifests", "panel_marks"):  # the tables of versions 3, 4 and 8
        conn.execute(f"DROP TABLE {table}")
    conn.execute("PRAGMA user_version = 2")
    conn.commit()
    conn.close()
    read_only = Workspace(tmp_path / "ws", read_only=True)  # read as it is: an empty log, nothing upgraded
    assert read_only.events().empty and read_only.label_version("old").version == 1
    read_only.close()
    reopened = Workspace(tmp_path / "ws")
    assert reopened.read(lambda c: c.execute("PRAGMA user_version").fetchone()[0]) == SCHEMA_VERSION == 8
    assert reopened.label_version("old").version == 1
    sealed = reopened.events()  # the one event: the upgrade sealing the label-set version saved before
    assert sealed[["who", "action", "detail"]].values.tolist() == [["evalcore", "seal saved records",
                                                                    "1 label-set version"]]
    reopened._record_event("ana", "upload", "label set old v1")
    assert len(reopened.events()) == 2 and reopened.verify() == []


@pytest.mark.parametrize("who", ["ana\nlee@example.com", "ana\x1b]52;c;ZXZl\x07", "ana\u2028lee", "ana\u202eeel"])
def test_a_recorded_name_with_a_control_character_is_refused_by_the_store(tmp_path, who) -> None:
    """Issue 24, item 7: every front end records through the store, so the store refuses what would forge a line."""
    ws = Workspace(tmp_path / "ws")
    with pytest.raises(UsageError, match="without control characters"):
        ws._record_event(who, "delete", "run #1")
    with pytest.raises(UsageError, match="without control characters"):
        ws._record_reveal(read_labels({"a": ["d1"]}), rule="hash", runs=[], who=who)
    with pytest.raises(UsageError, match="without control characters"):
        ws._save_labels(read_labels({"a": ["d1"]}), name=f"labels {who}")
    assert ws.events().empty and ws.reveals().empty
