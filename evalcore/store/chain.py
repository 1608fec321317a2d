"""The tamper-evident record: every event and every holdout reveal carries a hash of its own content and of the row
before it (a hash chain, as a transparency log keeps one), so `chain_problems` can name the first row changed,
removed or put in after it was recorded.

Edits to the database file are detected, not prevented: anyone who can write ``workspace.sqlite`` can change it, and
the triggers that refuse changes can be dropped. What the chain adds is that a change to a recorded row (an
``INSERT OR REPLACE``, an ``UPDATE`` after ``DROP TRIGGER``), a row taken out, or one put in between, no longer
matches the hashes around it, and ``evalcore workspace verify`` says which. Each event also seals the saved records
its change wrote (`seals`), so the events' chain covers them too. Three changes keep a consistent chain: a rewrite
of the chain from some row onwards and the newest rows removed together with the counter that numbered them (both
told by the newest event's hash kept outside the workspace: `find_event`, ``workspace verify --expect``), and rows
appended at the end with hashes computed the same way (verify says how many came after the hash kept).

``link(previous, content)`` is SHA-256 over the previous row's hash, a newline and the row's content (its id first)
as compact JSON; the first row's previous hash is `GENESIS`. A row is written only while every trigger in the file is
one evalcore makes (`schema.foreign_triggers`), and read back to check that it was stored as written.
"""

from __future__ import annotations

import hashlib
import json
import re
import sqlite3
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ..errors import WorkspaceCorrupt
from ..warning_log import plural
from .schema import _chain_statements, _events_statements, _integrity_statements, foreign_triggers

GENESIS = "0" * 64
"""The previous hash of a chain's first row."""


@dataclass(frozen=True)
class Chain:
    """One chained table: its name, what one row is called in a sentence, the content columns hashed (id first), and
    the columns added by a later schema step, hashed after them only when set (so rows hashed before keep theirs)."""

    table: str
    noun: str
    columns: tuple[str, ...]
    optional: tuple[str, ...] = ()


EVENTS = Chain("events", "event", ("id", "at", "who", "action", "subject", "detail"), ("sealed",))
REVEALS = Chain("holdout_reveals", "holdout reveal",
                ("id", "label_set", "version", "fingerprint", "rule", "runs", "who", "at"))
CHAINS = (EVENTS, REVEALS)


def link(previous: str, content: Sequence) -> str:
    """The hash of one row: SHA-256 of the previous row's hash, a newline and ``content`` as compact JSON."""
    body = json.dumps(list(content), ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(f"{previous}\n{body}".encode("utf-8")).hexdigest()


def append(conn: sqlite3.Connection, chain: Chain, values: Mapping[str, object]) -> int:
    """Insert one row into ``chain.table`` inside the caller's transaction, chained to the newest row; ``values`` holds
    every content column but ``id``, which is the next one the table gives (so the hash can include it), and any
    optional column to set. Returns the id.

    Refused (`WorkspaceCorrupt`, the transaction undone) while the file holds a trigger evalcore does not make, or when
    the row read back is not the row written: something in the file would drop or change what is recorded, and the
    command would say it was recorded."""
    foreign = foreign_triggers(conn)
    if foreign:
        raise WorkspaceCorrupt(f"Refused to record anything: {foreign[0]}. Nothing was saved; run `evalcore workspace "
                               "verify` to see what else was changed, and restore the workspace from a backup.")
    newest = conn.execute(f"SELECT hash FROM {chain.table} ORDER BY id DESC LIMIT 1").fetchone()
    previous = newest[0] if newest and newest[0] else GENESIS
    row_id = _last_id(conn, chain.table) + 1
    extra = tuple(c for c in chain.optional if values.get(c) is not None)
    content = [row_id, *(values[c] for c in chain.columns[1:] + extra)]
    digest = link(previous, content)
    names = ", ".join(chain.columns + extra + ("prev_hash", "hash"))
    marks = ", ".join("?" for _ in range(len(content) + 2))
    conn.execute(f"INSERT INTO {chain.table} ({names}) VALUES ({marks})", (*content, previous, digest))
    stored = conn.execute(f"SELECT hash FROM {chain.table} WHERE id = ?", (row_id,)).fetchone()
    if stored is None or stored[0] != digest:
        raise WorkspaceCorrupt(f"Refused: {chain.noun} #{row_id} was not stored as written (something in the "
                               "workspace file dropped or changed it). Nothing was saved; run `evalcore workspace "
                               "verify`, and restore the workspace from a backup.")
    return row_id


def _content(chain: Chain, row: Sequence) -> list:
    """The hashed content of a row read as ``chain.columns + chain.optional``: the optional values only when set."""
    base = len(chain.columns)
    return [*row[:base], *(value for value in row[base:] if value is not None)]


def _present(conn: sqlite3.Connection, chain: Chain) -> tuple[str, ...]:
    """The optional columns ``chain.table`` has (a workspace upgraded step by step gains them late)."""
    columns = {row[1] for row in conn.execute(f"PRAGMA table_info({chain.table})")}
    return tuple(c for c in chain.optional if c in columns)


def seal(conn: sqlite3.Connection, chain: Chain) -> None:
    """Compute the chain of the rows already in ``chain.table`` (a workspace upgraded to the chained record), in id
    order; the caller has lifted the table's update trigger for this one step."""
    extra = _present(conn, chain)
    rows = conn.execute(f"SELECT {', '.join(chain.columns + extra)} FROM {chain.table} ORDER BY id").fetchall()
    previous, updates = GENESIS, []
    for row in rows:
        digest = link(previous, _content(chain, row))
        updates.append((previous, digest, row[0]))
        previous = digest
    conn.executemany(f"UPDATE {chain.table} SET prev_hash = ?, hash = ? WHERE id = ?", updates)


def upgrade(conn: sqlite3.Connection) -> None:
    """The schema step that chains the record (`schema.CHAIN_VERSION`), inside the caller's upgrade transaction: the
    hash columns and the no-replace triggers, and the chain of the rows recorded before chains existed, computed with
    the update triggers lifted for this step alone and made again right after.

    A table whose rows carry hashes already (a workspace whose version number was lowered) is never hashed again: the
    caller has checked that its chain verifies (`chain_problems`) and refuses the upgrade otherwise, since hashing it
    again would seal any change made to it."""
    for statement in _chain_statements():  # each made once, whatever state an interrupted older tool left
        adding = re.match(r"ALTER TABLE (\w+) ADD COLUMN (\w+)", statement)
        if adding and adding.group(2) in {row[1] for row in conn.execute(f"PRAGMA table_info({adding.group(1)})")}:
            continue
        making = re.match(r"CREATE TRIGGER (\w+)", statement)
        if making:
            conn.execute(f"DROP TRIGGER IF EXISTS {making.group(1)}")
        conn.execute(statement)
    refusing_updates = {s.split()[2]: s for s in _integrity_statements() + _events_statements()
                        if s.startswith(("CREATE TRIGGER holdout_reveals_update", "CREATE TRIGGER events_update"))}
    for chain in CHAINS:
        if conn.execute(f"SELECT 1 FROM {chain.table} WHERE hash IS NOT NULL LIMIT 1").fetchone():
            continue
        conn.execute(f"DROP TRIGGER IF EXISTS {chain.table}_update")
        seal(conn, chain)
        conn.execute(refusing_updates[f"{chain.table}_update"])


def chain_problems(conn: sqlite3.Connection) -> list[str]:
    """The first break of each chain, in words: a row changed, removed, replaced or put in between, or the newest
    rows removed (empty when every chain is intact, or the table is missing: `schema.missing_objects` says so)."""
    problems = []
    for chain in CHAINS:
        if not _has_chain(conn, chain.table):
            continue
        extra = _present(conn, chain)
        rows = [(*_content(chain, row[:-2]), *row[-2:]) for row in conn.execute(
            f"SELECT {', '.join(chain.columns + extra)}, prev_hash, hash FROM {chain.table} ORDER BY id")]
        found = _first_break(rows, chain.noun) or _newest_removed(conn, chain, rows)
        if found:
            problems.append(found)
    return problems


def chain_heads(conn: sqlite3.Connection) -> dict[str, tuple[int, str]]:
    """Per chained table present: (rows, the newest row's hash), to note elsewhere: a rewrite of the whole chain or
    rows appended at the end are told only by comparing with it."""
    heads = {}
    for chain in CHAINS:
        if _has_chain(conn, chain.table):
            count, = conn.execute(f"SELECT COUNT(*) FROM {chain.table}").fetchone()
            newest = conn.execute(f"SELECT hash FROM {chain.table} ORDER BY id DESC LIMIT 1").fetchone()
            heads[chain.table] = (int(count), newest[0] if newest and newest[0] else GENESIS)
    return heads


def _first_break(rows: list[tuple], noun: str) -> str | None:
    """The first row whose content does not match its hash, or whose previous hash is not the row before's."""
    seen: dict[str, int] = {}  # stored hash -> position in ``rows``
    previous, previous_id = GENESIS, 0
    for position, row in enumerate(rows):
        content, before, stored = row[:-2], row[-2], row[-1]
        row_id = content[0]
        if not stored or not before or link(before, content) != stored:
            return f"{noun} #{row_id} was changed after it was recorded (its content no longer matches its hash)"
        if before != previous:
            if before in seen:
                between = [r[0] for r in rows[seen[before] + 1:position]]
                return (f"{_ids(noun, between)} {'was' if len(between) == 1 else 'were'} put in afterwards, or "
                        f"#{row_id} was: #{row_id} was recorded right after #{rows[seen[before]][0]}")
            if row_id > previous_id + 1:
                gone = list(range(previous_id + 1, row_id))
                return (f"{_ids(noun, gone)} {'was' if len(gone) == 1 else 'were'} removed "
                        f"(#{row_id} was recorded after {'it' if len(gone) == 1 else 'them'})")
            if previous_id == 0:
                return f"{noun} #{row_id} was replaced after it was recorded (it does not start the record)"
            return (f"{noun} #{previous_id} was replaced after it was recorded (#{row_id} was recorded after a "
                    f"different #{previous_id})")
        seen[stored] = position
        previous, previous_id = stored, row_id
    return None


def _newest_removed(conn: sqlite3.Connection, chain: Chain, rows: list[tuple]) -> str | None:
    """The newest rows removed: the table had given out higher ids (``sqlite_sequence``) than it now holds."""
    highest = rows[-1][0] if rows else 0
    given = _given_id(conn, chain.table)
    if given <= highest:
        return None
    gone = list(range(highest + 1, given + 1))
    return f"the newest {_ids(chain.noun, gone)} {'was' if len(gone) == 1 else 'were'} removed"


def _ids(noun: str, ids: list[int]) -> str:
    """``event #4`` or ``events #4 to #9``."""
    return f"{noun} #{ids[0]}" if len(ids) == 1 else f"{noun}s #{ids[0]} to #{ids[-1]}"


def _given_id(conn: sqlite3.Connection, table: str) -> int:
    """The highest id ``table`` has given out (its ``sqlite_sequence`` entry; 0 when none)."""
    found = conn.execute("SELECT seq FROM sqlite_sequence WHERE name = ?", (table,)).fetchone()
    return int(found[0]) if found and found[0] is not None else 0


def _last_id(conn: sqlite3.Connection, table: str) -> int:
    highest, = conn.execute(f"SELECT MAX(id) FROM {table}").fetchone()
    return max(_given_id(conn, table), int(highest or 0))


def _has_chain(conn: sqlite3.Connection, table: str) -> bool:
    columns = {row[1] for row in conn.execute(f"PRAGMA table_info({table})")}
    return {"prev_hash", "hash"} <= columns


def describe_heads(heads: dict[str, tuple[int, str]]) -> str:
    """``record: 12 events (newest hash 3fa9c2e1b7d04a11), 2 holdout reveals (...)``, for verify to print."""
    nouns = {chain.table: chain.noun for chain in CHAINS}
    parts = [f"{plural(count, nouns[table])} (newest hash {head[:16]})" for table, (count, head) in heads.items()]
    return ("record: " + ", ".join(parts) if parts else
            "record: not chained yet (a workspace from before the chain, read-only: opened once with write access, "
            "it is chained)")


def find_event(conn: sqlite3.Connection, noted: str) -> int | None:
    """The id of the event whose hash is ``noted`` (or starts with it), None when no event has it: an anchor noted
    outside the workspace (`evalcore workspace verify --expect`) is found while the record still holds that event
    with that content, and every event before it unchanged (`chain_problems`)."""
    if not _has_chain(conn, EVENTS.table):
        return None
    found = conn.execute("SELECT id FROM events WHERE substr(hash, 1, ?) = ? ORDER BY id LIMIT 1",
                         (len(noted), noted.lower())).fetchone()
    return int(found[0]) if found else None
