"""Hostile input, round three, item 0: the saved numbers and the record rewritten in the database file.

Each case edits a copy of one workspace (a saved evaluation, two holdout reveals) the way someone with the file
would: sqlite3 on a connection of their own, the triggers that refuse a change dropped and put back afterwards.
`evalcore workspace verify` must exit 1 and name what changed, each problem on one line. Edits are detected, not
prevented; the anchor (`--expect`) tells what nothing inside the file can: its newest events removed.
"""

from __future__ import annotations

import gc
import re
import shutil
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest
from cli_runner import run_cli

from evalcore.errors import WorkspaceCorrupt
from evalcore.store.workspace import DB_NAME, Workspace

ROOT = Path(__file__).resolve().parents[2]
LABELS, RUN = ROOT / "sample_data" / "labels.tsv", ROOT / "sample_data" / "base.trec"


@pytest.fixture(scope="module")
def saved(tmp_path_factory) -> Path:
    """A workspace as the command line leaves it: evaluation 1 saved (tune split, with misses), holdout revealed
    twice (reveals #1 and #2; reveal #2's event is the newest)."""
    folder = tmp_path_factory.mktemp("saved") / "ws"
    steps = [("evaluate", "--labels", LABELS, "--run", RUN, "--k", "1,5", "--save"),
             ("evaluate", "--labels", LABELS, "--run", RUN, "--split", "holdout", "--reveal"),
             ("evaluate", "--labels", LABELS, "--run", RUN, "--split", "holdout", "--reveal")]
    for step in steps:
        done = run_cli(*step, "--workspace", folder)
        assert done.returncode == 0, done.stderr
    gc.collect()  # every connection closed: the WAL folded into the file, which is all there is to copy
    return folder


def copy_of(saved: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(saved, tmp_path / "copy"))


def attack(folder: Path, change: Callable[[sqlite3.Connection], None]) -> None:
    """Change the file as anyone who can write it can: a connection of one's own, no evalcore involved."""
    conn = sqlite3.connect(folder / DB_NAME, isolation_level=None)
    try:
        change(conn)
    finally:
        conn.close()


def quietly(conn: sqlite3.Connection, triggers: tuple[str, ...], *statements: str) -> None:
    """Drop ``triggers``, run ``statements``, and put the very same triggers back, as a careful attacker would."""
    kept = [conn.execute("SELECT sql FROM sqlite_master WHERE name = ?", (name,)).fetchone()[0] for name in triggers]
    for name in triggers:
        conn.execute(f"DROP TRIGGER {name}")
    for statement in statements:
        conn.execute(statement)
    for sql in kept:
        conn.execute(sql)


def verify(folder: Path, *options: str) -> tuple[int, str, str]:
    done = run_cli("workspace", "verify", *options, "--workspace", folder)
    return done.returncode, done.stdout, done.stderr


# ----------------------------------------------------------------------------- the attacks


def rewrite_metric(conn: sqlite3.Connection) -> None:
    row = conn.execute("SELECT * FROM metrics WHERE evaluation_id = 1 AND metric = 'recall@1'").fetchone()
    conn.execute("DELETE FROM metrics WHERE evaluation_id = 1 AND metric = 'recall@1'")
    conn.execute(f"INSERT INTO metrics VALUES ({', '.join('?' * len(row))})", (*row[:4], 0.99, *row[5:]))


def misses_to_hits(conn: sqlite3.Connection) -> None:
    misses = conn.execute("SELECT * FROM outcomes WHERE evaluation_id = 1 AND hit = 0").fetchall()
    assert len(misses) > 10
    conn.execute("DELETE FROM outcomes WHERE evaluation_id = 1 AND hit = 0")
    for row in misses:  # evaluation_id, run_id, query, n_relevant, first_rank, hit, recall, rr, in_run, evidence
        conn.execute("INSERT INTO outcomes VALUES (?, ?, ?, ?, 1, 1, 1.0, 1.0, 1, ?)", (*row[:4], row[9]))


def rewrite_version(conn: sqlite3.Connection) -> None:
    row = list(conn.execute("SELECT * FROM label_versions WHERE id = 1").fetchone())
    row[3], row[9] = "0" * 12, 999  # fingerprint, n_queries
    conn.execute("DELETE FROM label_versions WHERE id = 1")
    conn.execute(f"INSERT INTO label_versions VALUES ({', '.join('?' * len(row))})", row)


def plant_trigger(conn: sqlite3.Connection) -> None:
    conn.execute("CREATE TRIGGER drop_reveals BEFORE INSERT ON holdout_reveals BEGIN SELECT RAISE(IGNORE); END")


def never_fires(conn: sqlite3.Connection) -> None:
    conn.execute("DROP TRIGGER holdout_reveals_delete")
    conn.execute("CREATE TRIGGER holdout_reveals_delete BEFORE DELETE ON holdout_reveals WHEN 0 BEGIN "
                 "SELECT RAISE(ABORT, 'frozen: holdout reveals are never changed or erased'); END")


def newest_event_removed(conn: sqlite3.Connection) -> None:
    quietly(conn, ("events_delete",), "DELETE FROM events WHERE id = (SELECT MAX(id) FROM events)",
            "UPDATE sqlite_sequence SET seq = (SELECT MAX(id) FROM events) WHERE name = 'events'")


def every_event_removed(conn: sqlite3.Connection) -> None:
    quietly(conn, ("events_delete",), "DELETE FROM events", "DELETE FROM sqlite_sequence WHERE name = 'events'")


def every_reveal_removed(conn: sqlite3.Connection) -> None:
    quietly(conn, ("holdout_reveals_delete",), "DELETE FROM holdout_reveals",
            "DELETE FROM sqlite_sequence WHERE name = 'holdout_reveals'")


def back_to_version_4(conn: sqlite3.Connection) -> None:
    """The layout of schema 4 (without the judges' marks of schema 8) and its version number."""
    conn.execute("DROP TABLE panel_marks")
    conn.execute("PRAGMA user_version = 4")


def event_edited_version_lowered(conn: sqlite3.Connection) -> None:
    quietly(conn, ("events_update",), "UPDATE events SET who = 'eve' WHERE id = 1")
    back_to_version_4(conn)  # the next open would run the chain step, hashing the edit in


def version_lowered(conn: sqlite3.Connection) -> None:
    conn.execute("PRAGMA user_version = 3")


CASES = {
    "recall@1 rewritten by DELETE and INSERT": (
        rewrite_metric, r"the summary numbers of evaluation 1 for run #1 \(base\) were changed after event #\d+ "
                        r"sealed them \(no longer matching the digest that event holds\)"),
    "saved misses turned into hits": (
        misses_to_hits, r"the per-query outcomes of evaluation 1 for run #1 \(base\) were changed after event #\d+"),
    "a label-set version's fingerprint and query count rewritten": (
        rewrite_version, r"label-set version #1 \(labels:tune v1\) was changed after event #\d+ sealed it"),
    "a planted trigger that drops every later reveal": (
        plant_trigger, r"the trigger drop_reveals on holdout_reveals is not one evalcore makes \(it was put in by "
                       r"hand, and can drop or change what is recorded\)"),
    "a trigger replaced by one that never fires": (
        never_fires, r"the trigger holdout_reveals_delete is not the one evalcore made \(it was replaced\)"),
    "the newest event removed with its counter": (
        newest_event_removed, r"holdout reveal #2 is in no event of the record"),
    "every event removed with its counter": (
        every_event_removed, r"saved evaluation 1 is in no event of the record .*\n(.*\n)*problem: and \d+ more "
                             r"records are in no event$"),
    "every reveal removed with its counter": (
        every_reveal_removed, r"holdout reveal #1, sealed by event #\d+, is gone and no event records its removal"),
    "an event edited and the schema version lowered": (
        event_edited_version_lowered, r"Refused to upgrade the workspace .* from schema 4 to 8, since hashing its "
                                      r"record again would seal a change made to it: event #1 was changed after it was "
                                      r"recorded"),
    "the schema version lowered below the tables it holds": (
        version_lowered, r"The workspace .* says it is schema 3, yet it holds the table manifests, which schema 4 "
                         r"makes: its schema "
                         r"number was lowered after it was made"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_verify_names_each_rewrite_of_the_record_and_the_saved_numbers(saved, tmp_path, case) -> None:
    folder = copy_of(saved, tmp_path)
    assert verify(folder)[0] == 0
    change, named = CASES[case]
    attack(folder, change)
    code, out, err = verify(folder)
    assert code == 1, (out, err)
    assert err == "" and "Traceback" not in out
    assert re.search("problem: " + named, out, re.MULTILINE), out
    lines = out.splitlines()
    assert all(line.startswith("problem: ") for line in lines[:-1]) and lines[-1].endswith("nothing removed")


def test_the_rewritten_number_is_what_reads_show_until_verify_names_it(saved, tmp_path) -> None:
    folder = copy_of(saved, tmp_path)
    attack(folder, rewrite_metric)
    shown = run_cli("workspace", "show", "evaluation", "1", "--workspace", folder)
    assert shown.returncode == 0 and "0.99" in shown.stdout  # detected, not prevented
    assert any("summary numbers of evaluation 1" in p for p in Workspace(folder).verify())


def test_a_planted_trigger_makes_every_later_record_refuse_instead_of_vanishing(saved, tmp_path) -> None:
    folder = copy_of(saved, tmp_path)
    attack(folder, plant_trigger)
    done = run_cli("evaluate", "--labels", LABELS, "--run", RUN, "--split", "holdout", "--reveal",
                   "--workspace", folder)
    assert done.returncode == 1 and "revealed and recorded" not in done.stderr
    assert done.stderr.strip().splitlines() == [
        "evalcore: error: Refused to record anything: the trigger drop_reveals on holdout_reveals is not one evalcore "
        "makes (it was put in by hand, and can drop or change what is recorded). Nothing was saved; run `evalcore "
        "workspace verify` to see what else was changed, and restore the workspace from a backup."]
    gc.collect()
    conn = sqlite3.connect(folder / DB_NAME)
    assert conn.execute("SELECT COUNT(*) FROM holdout_reveals").fetchone()[0] == 2  # nothing recorded, nothing lost
    conn.close()


def test_the_upgrade_refuses_a_record_that_does_not_verify_and_leaves_the_file_as_it_was(saved, tmp_path) -> None:
    folder = copy_of(saved, tmp_path)
    attack(folder, event_edited_version_lowered)
    before = (folder / DB_NAME).read_bytes()
    with pytest.raises(WorkspaceCorrupt, match=r"^Refused to upgrade the workspace .*event #1 was changed after it "
                                               r"was recorded .*Restore it from a backup\.$"):
        Workspace(folder)
    gc.collect()
    conn = sqlite3.connect(folder / DB_NAME)
    assert conn.execute("PRAGMA user_version").fetchone()[0] == 4  # not upgraded: nothing hashed again
    assert conn.execute("SELECT who FROM events WHERE id = 1").fetchone()[0] == "eve"
    conn.close()
    assert (folder / DB_NAME).read_bytes() == before


def test_a_lowered_version_over_an_intact_record_upgrades_without_hashing_it_again(saved, tmp_path) -> None:
    folder = copy_of(saved, tmp_path)
    heads = Workspace(folder).record_heads()
    gc.collect()
    attack(folder, back_to_version_4)
    again = Workspace(folder)
    assert again.record_heads() == heads and again.verify() == []


# ----------------------------------------------------------------------------- the anchor


def anchor_of(out: str) -> str:
    found = re.search(r"^anchor: ([0-9a-f]{64}) \(event #\d+, the newest", out, re.MULTILINE)
    assert found, out
    return found.group(1)


def test_the_anchor_kept_outside_tells_the_newest_events_removed(saved, tmp_path) -> None:
    folder = copy_of(saved, tmp_path)
    code, out, _ = verify(folder)
    first = anchor_of(out)
    code, out, _ = verify(folder, "--expect", first)
    assert code == 0 and "expected anchor found: event #" in out and "still the newest" in out

    ws = Workspace(folder)
    ws._record_event("ana", "ledger note", "line acme, query q1", "checked")  # an event that seals nothing
    ws.close()
    code, out, _ = verify(folder, "--expect", first[:16])  # a later record still holds the noted event
    assert code == 0 and "unchanged, and 1 event recorded since" in out
    latest = anchor_of(out)

    attack(folder, newest_event_removed)  # the ledger note, and its counter: nothing inside the file tells
    assert verify(folder)[0] == 0
    code, out, err = verify(folder, "--expect", latest)
    assert code == 1 and err == ""
    assert re.search(rf"^problem: the record holds no event with the hash {latest[:16]}\.\.\. given with --expect: its "
                     r"newest events were removed, or it was rewritten \(it now ends at event #\d+, "
                     r"hash [0-9a-f]{16}\)$", out, re.MULTILINE), out
    assert out.splitlines()[-1].endswith("1 problem found; nothing removed")


def test_the_anchor_tells_every_event_removed(saved, tmp_path) -> None:
    folder = copy_of(saved, tmp_path)
    noted = anchor_of(verify(folder)[1])
    attack(folder, every_event_removed)
    code, out, _ = verify(folder, "--expect", noted)
    assert code == 1 and "problem: the record holds no event, so not the one with the hash" in out


@pytest.mark.parametrize("given", ["abc", "z" * 64, "0" * 65])
def test_an_anchor_that_is_not_a_hash_is_a_usage_error(tmp_path, given) -> None:
    done = run_cli("workspace", "verify", "--expect", given, "--workspace", tmp_path)
    assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1 and "--expect" in done.stderr
