"""Schema 8, the marks of several judges (``panel_marks``): kept apart per person, never changed once stored, sealed by
the event that wrote them (an edit to the file shows in verify), and an older workspace upgraded with everything kept.
"""

from __future__ import annotations

import gc
import sqlite3
from pathlib import Path

import pytest

from evalcore.access import Actor, Role
from evalcore.analyses.judging import judging_pool
from evalcore.errors import FrozenError
from evalcore.readers.labels import read_labels
from evalcore.readers.runs import read_run
from evalcore.store.workspace import DB_NAME, SCHEMA_VERSION, Workspace
from evalcore.workflows import Session

ROOT = Path(__file__).resolve().parents[2]
S = ROOT / "sample_data"
ANA = Actor("ana@example.com", Role.EDITOR, "signed in")


def _marked(folder: Path) -> Workspace:
    """A workspace holding ana's marks on one pool of the sample (every doc relevant but the first)."""
    labels = read_labels(S / "labels.tsv")
    pool = judging_pool([read_run(S / "base.trec"), read_run(S / "tuned.trec")], labels, "q006", 3)
    ws = Workspace(folder)
    Session(ws, ANA).save_marks("labels", pool, {d: i > 0 for i, d in enumerate(pool.docs)})
    return ws


def _edit(folder: Path, *statements: str) -> None:
    """Change the file as anyone who can write it: the triggers dropped, the statements run, the triggers put back."""
    conn = sqlite3.connect(folder / DB_NAME, isolation_level=None)
    kept = [conn.execute("SELECT sql FROM sqlite_master WHERE name = ?", (name,)).fetchone()[0]
            for name in ("panel_marks_update", "panel_marks_delete")]
    conn.execute("DROP TRIGGER panel_marks_update")
    conn.execute("DROP TRIGGER panel_marks_delete")
    for statement in statements:
        conn.execute(statement)
    for sql in kept:
        conn.execute(sql)
    conn.close()


def test_marks_are_kept_per_person_and_refuse_every_change(tmp_path) -> None:
    ws = _marked(tmp_path / "ws")
    log = ws.panel_marks("labels")
    assert set(log["who"]) == {ANA.who} and set(log["kind"]) == {"judge"} and log["entry"].nunique() == 1
    assert log["relevant"].tolist() == [False] + [True] * (len(log) - 1)  # in the pool's order
    for sql in ("UPDATE panel_marks SET who = 'eve'", "DELETE FROM panel_marks"):
        with pytest.raises(FrozenError, match="marks of judges are never changed or erased"):
            ws.write(lambda conn, sql=sql: conn.execute(sql))
    assert ws.verify() == []


def test_a_mark_rewritten_in_the_file_is_named_by_verify(tmp_path) -> None:
    folder = tmp_path / "ws"
    _marked(folder).close()
    gc.collect()
    _edit(folder, "UPDATE panel_marks SET marks = replace(marks, ':0', ':1') WHERE id = 1")
    problems = Workspace(folder).verify()
    assert any(p.startswith("panel marks #1 (judge ana@example.com on q006 of labels) was changed after event #")
               for p in problems), problems


def test_a_mark_put_in_by_hand_is_in_no_event(tmp_path) -> None:
    folder = tmp_path / "ws"
    _marked(folder).close()
    gc.collect()
    _edit(folder, "INSERT INTO panel_marks (label_set, query, kind, who, depth, marks, at) VALUES "
                  "('labels', 'q006', 'judge', 'eve', 3, '{\"x\":1}', '2026-01-01')")
    problems = Workspace(folder).verify()
    assert any("panel marks #2 (judge eve on q006 of labels) is in no event" in p for p in problems), problems


def test_a_version_7_workspace_gets_the_table_on_open_and_reads_as_before_read_only(tmp_path) -> None:
    folder = tmp_path / "ws"
    ws = Workspace(folder)
    ws._save_labels(read_labels({"a": ["d1"]}), name="old")
    ws._record_event("ana", "upload", "label set old v1")
    heads = ws.record_heads()
    ws.close()
    gc.collect()
    conn = sqlite3.connect(folder / DB_NAME)
    conn.execute("DROP TABLE panel_marks")
    conn.execute("PRAGMA user_version = 7")
    conn.commit()
    conn.close()
    old = Workspace(folder, read_only=True)  # read as it is: no table, no marks, nothing upgraded
    assert old.panel_marks("old").empty and old.verify() == []
    old.close()
    upgraded = Workspace(folder)
    assert upgraded.read(lambda c: c.execute("PRAGMA user_version").fetchone()[0]) == SCHEMA_VERSION == 8
    assert upgraded.record_heads() == heads and upgraded.verify() == []  # nothing hashed again
    assert upgraded.label_version("old").version == 1 and upgraded.panel_marks().empty
