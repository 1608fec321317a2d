"""The tamper-evident record (issue 24, item 6): every event and holdout reveal is chained to the one before it, and
`evalcore workspace verify` names the first row changed, removed or put in, and any missing table or trigger.

Each attack is made the way someone with the database file would make it: plain SQL on a connection of their own.
Edits to the file are detected, not prevented.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from cli_runner import run_cli

from evalcore.readers.labels import read_labels
from evalcore.store.chain import GENESIS, link
from evalcore.store.schema import CHAIN_VERSION
from evalcore.store.workspace import DB_NAME, SCHEMA_VERSION, Workspace


def recorded(folder: Path) -> Path:
    """A workspace with three events and two holdout reveals (each reveal is an event too: 5 events)."""
    ws = Workspace(folder)
    ws._record_event("ana@example.com", "upload", "label set labels v1", "labels.tsv")
    ws._record_reveal(read_labels({"q1": ["d1"], "q2": ["d2"]}), rule="hash 20%", runs=[("base", "m1")], who="ana")
    ws._record_event("bo@example.com", "ledger note", "line x, query q1 (labels)", "checked")
    ws._record_reveal(read_labels({"q1": ["d1"], "q2": ["d2"]}), rule="hash 20%", runs=[("base", "m1")], who="lee")
    ws._record_event("lee@example.com", "delete", "run #1 base")
    ws.close()
    return folder


def attack(folder: Path, *statements: str) -> None:
    """Change the file as anyone who can write it can: a connection of one's own, no evalcore involved."""
    conn = sqlite3.connect(folder / DB_NAME, isolation_level=None)
    try:
        for statement in statements:
            conn.execute(statement)
    finally:
        conn.close()


def verify(folder: Path) -> tuple[int, str]:
    done = run_cli("workspace", "verify", "--workspace", folder)
    return done.returncode, done.stdout + done.stderr


def test_an_untouched_record_is_sound_and_verify_prints_its_newest_hashes(tmp_path) -> None:
    folder = recorded(tmp_path / "ws")
    code, out = verify(folder)
    heads = Workspace(folder).record_heads()
    assert code == 0, out
    assert heads["events"][0] == 5 and heads["holdout_reveals"][0] == 2
    assert f"record: 5 events (newest hash {heads['events'][1][:16]}), 2 holdout reveals" in out


def test_each_row_carries_the_hash_of_its_content_and_of_the_row_before(tmp_path) -> None:
    folder = recorded(tmp_path / "ws")
    conn = sqlite3.connect(folder / DB_NAME)
    rows = conn.execute("SELECT id, at, who, action, subject, detail, sealed, prev_hash, hash FROM events "
                        "ORDER BY id").fetchall()
    conn.close()
    previous = GENESIS
    for row in rows:  # the sealed records (`seals`) are hashed after the content, when there is that column
        assert row[7] == previous and row[8] == link(previous, row[:7])
        previous = row[8]


def test_insert_or_replace_of_a_past_event_is_refused_and_if_forced_is_named(tmp_path) -> None:
    folder = recorded(tmp_path / "ws")
    forged = ("INSERT OR REPLACE INTO events (id, at, who, action, subject, detail) VALUES "
              "(2, '2026-01-01T00:00:00+00:00', 'eve', 'reveal holdout', 'nothing', '')")
    with pytest.raises(sqlite3.IntegrityError, match="never replaced"):
        attack(folder, forged)
    attack(folder, "DROP TRIGGER events_no_replace", forged)
    code, out = verify(folder)
    assert code == 1
    assert "problem: the trigger events_no_replace is missing" in out
    assert "problem: event #2 was changed after it was recorded (its content no longer matches its hash)" in out


def test_insert_or_replace_of_a_past_reveal_is_named(tmp_path) -> None:
    folder = recorded(tmp_path / "ws")
    attack(folder, "DROP TRIGGER holdout_reveals_no_replace",
           "INSERT OR REPLACE INTO holdout_reveals (id, label_set, version, fingerprint, rule, runs, who, at) "
           "VALUES (1, 'labels', 1, 'x', 'hash 20%', '[]', 'nobody', '2026-01-01T00:00:00+00:00')")
    code, out = verify(folder)
    assert code == 1 and "problem: holdout reveal #1 was changed after it was recorded" in out


def test_drop_trigger_then_update_every_who_is_named_at_the_first_event(tmp_path) -> None:
    folder = recorded(tmp_path / "ws")
    attack(folder, "DROP TRIGGER events_update", "UPDATE events SET who = 'eve'",
           "DROP TRIGGER holdout_reveals_update", "UPDATE holdout_reveals SET who = 'eve'")
    code, out = verify(folder)
    assert code == 1
    assert "problem: the trigger events_update is missing" in out
    assert "problem: event #1 was changed after it was recorded" in out
    assert "problem: holdout reveal #1 was changed after it was recorded" in out


def test_drop_table_events_is_named(tmp_path) -> None:
    folder = recorded(tmp_path / "ws")
    attack(folder, "DROP TABLE events")
    code, out = verify(folder)
    assert code == 1 and "problem: the table events (the record of who did what) is missing" in out


def test_a_trigger_replaced_by_one_that_lets_changes_through_is_named(tmp_path) -> None:
    folder = recorded(tmp_path / "ws")
    attack(folder, "DROP TRIGGER events_delete",
           "CREATE TRIGGER events_delete BEFORE DELETE ON events BEGIN SELECT 1; END")
    code, out = verify(folder)
    assert code == 1 and "problem: the trigger events_delete is not the one evalcore made" in out


def test_a_removed_event_and_the_newest_removed_are_named(tmp_path) -> None:
    folder = recorded(tmp_path / "ws")
    attack(folder, "DROP TRIGGER events_delete", "DELETE FROM events WHERE id = 3")
    code, out = verify(folder)
    assert code == 1 and "problem: event #3 was removed (#4 was recorded after it)" in out
    other = recorded(tmp_path / "other")
    attack(other, "DROP TRIGGER events_delete", "DELETE FROM events WHERE id >= 4")
    code, out = verify(other)
    assert code == 1 and "problem: the newest events #4 to #5 were removed" in out


def test_an_event_put_in_between_or_replaced_whole_is_named(tmp_path) -> None:
    folder = recorded(tmp_path / "ws")
    conn = sqlite3.connect(folder / DB_NAME, isolation_level=None)
    first = conn.execute("SELECT hash FROM events WHERE id = 1").fetchone()[0]
    content = [6, "2026-01-01T00:00:00+00:00", "eve", "delete", "run #9", ""]
    conn.execute("INSERT INTO events (id, at, who, action, subject, detail, prev_hash, hash) VALUES "
                 "(?, ?, ?, ?, ?, ?, ?, ?)", (*content, first, link(first, content)))  # chained right after #1
    conn.close()
    code, out = verify(folder)
    assert code == 1 and "problem: events #2 to #5 were put in afterwards, or #6 was" in out
    other = recorded(tmp_path / "other")
    conn = sqlite3.connect(other / DB_NAME, isolation_level=None)
    first = conn.execute("SELECT hash FROM events WHERE id = 1").fetchone()[0]
    content = [2, "2026-01-01T00:00:00+00:00", "eve", "upload", "nothing", ""]  # hashed as the chain would
    conn.execute("DROP TRIGGER events_no_replace")
    conn.execute("INSERT OR REPLACE INTO events (id, at, who, action, subject, detail, prev_hash, hash) VALUES "
                 "(?, ?, ?, ?, ?, ?, ?, ?)", (*content, first, link(first, content)))
    conn.close()
    code, out = verify(other)
    assert code == 1 and "problem: event #2 was replaced after it was recorded (#3 was recorded after a different #2)" in out


def test_a_workspace_from_before_the_chain_is_chained_on_open_and_its_record_kept(tmp_path) -> None:
    folder = recorded(tmp_path / "ws")
    before = Workspace(folder).events()
    reveals = Workspace(folder).reveals()
    conn = sqlite3.connect(folder / DB_NAME, isolation_level=None)  # back to how the step before kept the record
    for table, column in (("events", "sealed"), ("outcomes", "evidence_recall"), ("runs", "chunks_fingerprint"),
                          ("runs", "chunks_format"), ("runs", "chunks_name"), ("runs", "chunks_sha256")):
        conn.execute(f"ALTER TABLE {table} DROP COLUMN {column}")  # what the later steps 6 and 7 add
    for table in ("events", "holdout_reveals"):
        conn.execute(f"DROP TRIGGER {table}_no_replace")
        conn.execute(f"DROP TRIGGER {table}_update")
        conn.execute(f"UPDATE {table} SET prev_hash = NULL, hash = NULL")
        conn.execute(f"ALTER TABLE {table} DROP COLUMN prev_hash")
        conn.execute(f"ALTER TABLE {table} DROP COLUMN hash")
    conn.execute("CREATE TRIGGER events_update BEFORE UPDATE ON events BEGIN SELECT RAISE(ABORT, 'frozen: the record "
                 "of who did what is never changed or erased'); END")
    conn.execute("CREATE TRIGGER holdout_reveals_update BEFORE UPDATE ON holdout_reveals BEGIN SELECT RAISE(ABORT, "
                 "'frozen: holdout reveals are never changed or erased'); END")
    conn.execute("DROP TABLE panel_marks")  # what the later step 8 makes
    conn.execute(f"PRAGMA user_version = {CHAIN_VERSION - 1}")
    conn.close()
    read_only = Workspace(folder, read_only=True)  # read as it is: its own layout, no chain yet, nothing upgraded
    assert read_only.verify() == [] and read_only.record_heads() == {}
    read_only.close()
    upgraded = Workspace(folder)
    assert upgraded.read(lambda c: c.execute("PRAGMA user_version").fetchone()[0]) == SCHEMA_VERSION
    events = upgraded.events()  # newest first: the upgrade's own event sealing the records saved before, then the five
    assert events.iloc[1:].reset_index(drop=True).equals(before) and upgraded.reveals().equals(reveals)
    assert events.iloc[0][["who", "action"]].tolist() == ["evalcore", "seal saved records"]
    assert upgraded.verify() == [] and upgraded.record_heads()["events"][0] == 6
    upgraded._record_event("ana", "upload", "run #2")  # chained after the rows sealed on upgrade
    assert upgraded.verify() == []
    upgraded.close()
    with pytest.raises(sqlite3.IntegrityError, match="never changed"):  # its update trigger is back after the step
        attack(folder, "UPDATE events SET who = 'eve' WHERE id = 1")
