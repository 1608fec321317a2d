"""The workspace's tables: the SQL that makes them, the triggers that freeze stored rows, the schema version.

Kept apart from the code that reads and writes the tables so the whole layout of `workspace.sqlite` can be read
in one place; `database.Database` runs these statements when it opens a new or older workspace.
"""

from __future__ import annotations

import re
import sqlite3
from functools import lru_cache

DB_NAME = "workspace.sqlite"
SCHEMA_VERSION = 8
"""1: files, label sets, runs, evaluations, ledger. 2: adds the integrity tables (holdout reveals,
re-judging queue, blind judging rounds). 3: adds the append-only log of who did what (``events``). 4: adds the
manifests of saved views (``manifests``, ``manifest_files``), which the dashboard kept as JSON files before (imported
once on upgrade). 5: chains the events and the holdout reveals (a hash per row, `chain`), the rows already there
included. 6: a stored run names the chunk map it was scored through (its file and fingerprint), and each saved
outcome its evidence recall (fragments are a failure kind). 7: each event seals the saved records its change wrote
(``events.sealed``: their digests, inside the event's hash; `seals`); the records saved before are sealed by one event
on upgrade. 8: each judge's marks kept apart (``panel_marks``: marks, adjudications, freezes; append-only,
sealed). An older workspace is upgraded in place on open (each step adds tables or columns, none changes a
recorded value), and never when its record does not verify (`database.Database`)."""
CHAIN_VERSION = 5
"""The schema step that chains the record (`chain.upgrade`); kept apart so versions can be renumbered."""

# ----------------------------------------------------------------------------- schema: the stored records

_SCHEMA = """
CREATE TABLE files (
    sha256 TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    size INTEGER NOT NULL,
    n_chunks INTEGER NOT NULL,
    stored_at TEXT NOT NULL
);
CREATE TABLE file_chunks (
    sha256 TEXT NOT NULL REFERENCES files(sha256) ON DELETE CASCADE,
    seq INTEGER NOT NULL,
    data BLOB NOT NULL,
    PRIMARY KEY (sha256, seq)
);
CREATE TABLE label_sets (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    name TEXT NOT NULL UNIQUE,
    created_at TEXT NOT NULL
);
CREATE TABLE label_versions (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    set_id INTEGER NOT NULL REFERENCES label_sets(id) ON DELETE CASCADE,
    version INTEGER NOT NULL,
    fingerprint TEXT NOT NULL,
    content_id TEXT NOT NULL,
    content_sha256 TEXT NOT NULL REFERENCES files(sha256),
    source_sha256 TEXT REFERENCES files(sha256),
    source_name TEXT,
    parent_version INTEGER,
    n_queries INTEGER NOT NULL,
    n_judgments INTEGER NOT NULL,
    change TEXT NOT NULL,
    note TEXT,
    created_at TEXT NOT NULL,
    UNIQUE (set_id, version),
    UNIQUE (set_id, content_id)
);
CREATE TABLE runs (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    key TEXT NOT NULL UNIQUE,
    name TEXT NOT NULL,
    model TEXT NOT NULL,
    line TEXT NOT NULL,
    price_per_mtok REAL,
    dims INTEGER,
    index_bytes INTEGER,
    file_sha256 TEXT NOT NULL REFERENCES files(sha256),
    file_name TEXT NOT NULL,
    format TEXT,
    n_queries INTEGER NOT NULL,
    n_rows INTEGER NOT NULL,
    uploaded_at TEXT NOT NULL
);
CREATE INDEX runs_by_line ON runs(line, id);
CREATE TABLE evaluations (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    key TEXT NOT NULL UNIQUE,
    label_version_id INTEGER NOT NULL REFERENCES label_versions(id),
    labels_file_sha256 TEXT REFERENCES files(sha256),
    k INTEGER NOT NULL,
    ks TEXT NOT NULL,
    min_grade REAL NOT NULL,
    zero_relevant TEXT NOT NULL,
    level REAL NOT NULL,
    seed INTEGER NOT NULL,
    n_resamples INTEGER NOT NULL,
    n_queries INTEGER NOT NULL,
    warnings TEXT NOT NULL,
    evalcore_version TEXT NOT NULL,
    note TEXT,
    created_at TEXT NOT NULL
);
CREATE TABLE evaluation_runs (
    evaluation_id INTEGER NOT NULL REFERENCES evaluations(id) ON DELETE CASCADE,
    run_id INTEGER NOT NULL REFERENCES runs(id),
    position INTEGER NOT NULL,
    PRIMARY KEY (evaluation_id, run_id)
);
CREATE INDEX evaluation_runs_by_run ON evaluation_runs(run_id);
CREATE TABLE metrics (
    evaluation_id INTEGER NOT NULL,
    run_id INTEGER NOT NULL,
    metric TEXT NOT NULL,
    k INTEGER,
    mean REAL NOT NULL,
    ci_low REAL,
    ci_high REAL,
    n INTEGER NOT NULL,
    ci_method TEXT,
    reliable INTEGER,
    note TEXT,
    PRIMARY KEY (evaluation_id, run_id, metric),
    FOREIGN KEY (evaluation_id, run_id) REFERENCES evaluation_runs(evaluation_id, run_id) ON DELETE CASCADE
);
CREATE TABLE outcomes (
    evaluation_id INTEGER NOT NULL,
    run_id INTEGER NOT NULL,
    query TEXT NOT NULL,
    n_relevant INTEGER NOT NULL,
    first_rank INTEGER,
    hit INTEGER NOT NULL,
    recall REAL NOT NULL,
    rr REAL NOT NULL,
    in_run INTEGER NOT NULL,
    PRIMARY KEY (evaluation_id, run_id, query),
    FOREIGN KEY (evaluation_id, run_id) REFERENCES evaluation_runs(evaluation_id, run_id) ON DELETE CASCADE
);
CREATE TABLE ledger (
    line TEXT NOT NULL,
    labels TEXT NOT NULL,
    query TEXT NOT NULL,
    status TEXT,
    status_run_id INTEGER,
    note TEXT NOT NULL DEFAULT '',
    updated_at TEXT NOT NULL,
    PRIMARY KEY (line, labels, query)
);
CREATE TABLE ledger_tags (
    line TEXT NOT NULL,
    labels TEXT NOT NULL,
    query TEXT NOT NULL,
    tag TEXT NOT NULL,
    added_at TEXT NOT NULL,
    PRIMARY KEY (line, labels, query, tag)
);
CREATE TABLE ledger_log (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    line TEXT NOT NULL,
    labels TEXT NOT NULL,
    query TEXT NOT NULL,
    action TEXT NOT NULL,
    value TEXT,
    at TEXT NOT NULL
);
"""

_FROZEN_TABLES = ("files", "file_chunks", "label_versions", "runs", "evaluations", "evaluation_runs", "metrics",
                  "outcomes")
_FROZEN_MARK = "frozen:"


def _schema_statements() -> list[str]:
    statements = [s.strip() for s in _SCHEMA.split(";") if s.strip()]
    for table in _FROZEN_TABLES:
        statements.append(f"CREATE TRIGGER {table}_frozen BEFORE UPDATE ON {table} BEGIN "
                          f"SELECT RAISE(ABORT, '{_FROZEN_MARK} {table} rows never change once stored'); END")
    return statements


# ----------------------------------------------------------------------------- schema: integrity (issue 7)
# Holdout reveals (append-only: never updated or deleted), the queue of queries flagged for blind
# re-judging, and each blind judging round (the judged depth of a query in a label-set version).
# Keyed by label-set name, not by foreign key: deleting a label set does not erase that its
# holdout was seen.

_INTEGRITY_SCHEMA = """
CREATE TABLE holdout_reveals (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    label_set TEXT NOT NULL,
    version INTEGER NOT NULL,
    fingerprint TEXT NOT NULL,
    rule TEXT NOT NULL,
    runs TEXT NOT NULL,
    who TEXT NOT NULL,
    at TEXT NOT NULL
);
CREATE INDEX holdout_reveals_by_set ON holdout_reveals(label_set, id);
CREATE TABLE rejudge_queue (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    label_set TEXT NOT NULL,
    query TEXT NOT NULL,
    reason TEXT NOT NULL,
    doc_id TEXT,
    flagged_by TEXT NOT NULL,
    flagged_at TEXT NOT NULL,
    resolved_version INTEGER,
    resolved_at TEXT
);
CREATE INDEX rejudge_queue_by_set ON rejudge_queue(label_set, query);
CREATE TABLE judging_rounds (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    label_set TEXT NOT NULL,
    version INTEGER NOT NULL,
    query TEXT NOT NULL,
    depth INTEGER NOT NULL,
    n_docs INTEGER NOT NULL,
    n_relevant INTEGER NOT NULL,
    judge TEXT NOT NULL,
    at TEXT NOT NULL
)
"""


def _append_only(schema: str, table: str, why: str) -> list[str]:
    """``schema``'s statements, then the triggers refusing any update or delete of ``table``, saying ``why``."""
    statements = [s.strip() for s in schema.split(";") if s.strip()]
    for event in ("UPDATE", "DELETE"):
        statements.append(f"CREATE TRIGGER {table}_{event.lower()} BEFORE {event} ON {table} BEGIN "
                          f"SELECT RAISE(ABORT, '{_FROZEN_MARK} {why}'); END")
    return statements


def _integrity_statements() -> list[str]:
    return _append_only(_INTEGRITY_SCHEMA, "holdout_reveals", "holdout reveals are never changed or erased")


# ----------------------------------------------------------------------------- schema: who did what (issue 17)
# One row per change a person made through `evalcore.workflows`: when (UTC), who (a signed-in email address, a
# login name or --who), the action (a key of `evalcore.access.ACTIONS`), what it was done to and the details.
# Append-only, like the reveals: the database refuses to change or erase a row, and deleting what an event names
# leaves the event (that it was deleted is itself an event).

_EVENTS_SCHEMA = """
CREATE TABLE events (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    at TEXT NOT NULL,
    who TEXT NOT NULL,
    action TEXT NOT NULL,
    subject TEXT NOT NULL,
    detail TEXT NOT NULL DEFAULT ''
);
CREATE INDEX events_by_who ON events(who, id);
CREATE INDEX events_by_action ON events(action, id)
"""


def _events_statements() -> list[str]:
    return _append_only(_EVENTS_SCHEMA, "events", "the record of who did what is never changed or erased")


# ----------------------------------------------------------------------------- schema: saved views (issue 25)
# A manifest names the stored files a view is made of (a data set: labels, runs with their metadata, documents; a
# set of vector models), by a key derived from its content: the key is what a link carries (``?data=KEY``,
# ``?vectors=KEY``). ``manifest_files`` lists the files each names, with a foreign key to ``files``, so the clean-up
# of unused files asks the database (never a folder scan) and SQLite refuses to remove a file a manifest names.

_MANIFESTS_SCHEMA = """
CREATE TABLE manifests (
    kind TEXT NOT NULL,
    key TEXT NOT NULL,
    body TEXT NOT NULL,
    created_at TEXT NOT NULL,
    PRIMARY KEY (kind, key)
);
CREATE TABLE manifest_files (
    kind TEXT NOT NULL,
    key TEXT NOT NULL,
    sha256 TEXT NOT NULL REFERENCES files(sha256),
    PRIMARY KEY (kind, key, sha256),
    FOREIGN KEY (kind, key) REFERENCES manifests(kind, key) ON DELETE CASCADE
);
CREATE INDEX manifest_files_by_file ON manifest_files(sha256)
"""


def _manifests_statements() -> list[str]:
    statements = [s.strip() for s in _MANIFESTS_SCHEMA.split(";") if s.strip()]
    statements.append("CREATE TRIGGER manifests_frozen BEFORE UPDATE ON manifests BEGIN "
                      f"SELECT RAISE(ABORT, '{_FROZEN_MARK} a manifest never changes: its key is its content'); END")
    return statements


# ----------------------------------------------------------------------------- schema: the chained record (issue 24)
# Each event and each holdout reveal carries the hash of the row before it and its own (`chain`); an insert that
# reuses a recorded id (INSERT OR REPLACE, which fires no delete trigger) is refused like an update.

_CHAINED = ("events", "holdout_reveals")


def _chain_statements() -> list[str]:
    statements = [f"ALTER TABLE {table} ADD COLUMN {column} TEXT" for table in _CHAINED
                  for column in ("prev_hash", "hash")]
    for table in _CHAINED:
        statements.append(f"CREATE TRIGGER {table}_no_replace BEFORE INSERT ON {table} "
                          f"WHEN EXISTS (SELECT 1 FROM {table} WHERE id = NEW.id) BEGIN "
                          f"SELECT RAISE(ABORT, '{_FROZEN_MARK} a recorded row of {table} is never replaced'); END")
    return statements


# ----------------------------------------------------------------------------- schema: chunk runs (issue 21)
# A run that ranks chunks is scored through a chunk map: the stored run names the map's stored file (so a saved
# evaluation is computed again exactly), its name, format and fingerprint (what History shows beside the run). Each
# saved outcome keeps the query's evidence recall at the saved k (NULL without evidence spans), so the failure ledger
# can tell a fragment (a relevant chunk holding under half the evidence) from a miss.

CHUNKS_VERSION = 6


_CHUNKS_COLUMNS = (("runs", "chunks_sha256", "TEXT REFERENCES files(sha256)"), ("runs", "chunks_name", "TEXT"),
                   ("runs", "chunks_format", "TEXT"), ("runs", "chunks_fingerprint", "TEXT"),
                   ("outcomes", "evidence_recall", "REAL"))


def _chunks_statements(present: set[tuple[str, str]]) -> list[str]:
    """The columns step 6 adds, each only where it is not already (``present``: (table, column) pairs)."""
    return [f"ALTER TABLE {table} ADD COLUMN {column} {kind}" for table, column, kind in _CHUNKS_COLUMNS
            if (table, column) not in present]


def columns_of(conn, tables: tuple[str, ...] = ("runs", "outcomes")) -> set[tuple[str, str]]:
    """Every (table, column) of ``tables`` the workspace has now."""
    return {(table, row[1]) for table in tables for row in conn.execute(f"PRAGMA table_info({table})")}


# ----------------------------------------------------------------------------- schema: sealed records (round three)
# Each event carries the digests of the saved records (evaluations, their numbers and outcomes, label-set versions,
# runs, holdout reveals) its change wrote or removed, inside its own hash (`seals`): a record rewritten by DELETE and
# INSERT no longer matches the event that saved it.

SEALED_VERSION = 7


def _sealed_statements(present: set[tuple[str, str]]) -> list[str]:
    """The column step 7 adds (only where it is not already)."""
    return [] if ("events", "sealed") in present else ["ALTER TABLE events ADD COLUMN sealed TEXT"]


# ----------------------------------------------------------------------------- schema: judging by several people
# Each row is one person's marks on one query's pool (``kind`` judge), an adjudicator's decisions on pairs the judges
# disagreed on (adjudication), or the final marks a freeze put into a label-set version (frozen: ``version``); ``marks``
# is a JSON object {doc id: 1 or 0}. Keyed by label-set name like the judging rounds; append-only (a new mark is a new
# row, the latest counts) and sealed by the event that wrote it (`seals`).

PANEL_VERSION = 8

_PANEL_SCHEMA = """
CREATE TABLE panel_marks (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    label_set TEXT NOT NULL,
    query TEXT NOT NULL,
    kind TEXT NOT NULL,
    who TEXT NOT NULL,
    depth INTEGER NOT NULL,
    marks TEXT NOT NULL,
    query_text TEXT,
    source TEXT,
    stratum TEXT,
    version INTEGER,
    note TEXT NOT NULL DEFAULT '',
    at TEXT NOT NULL
);
CREATE INDEX panel_marks_by_query ON panel_marks(label_set, query, id)
"""


def _panel_statements() -> list[str]:
    return _append_only(_PANEL_SCHEMA, "panel_marks",
                        "the marks of judges are never changed or erased: a new mark is a new row")


# ----------------------------------------------------------------------------- the layout, checked

_MEANING = {"events": "the record of who did what", "holdout_reveals": "the record of holdout reveals"}


def _statements_up_to(version: int) -> list[str]:
    """Every statement of the schema steps a workspace of ``version`` has taken, in the order they were taken."""
    steps = ((1, _schema_statements), (2, _integrity_statements), (3, _events_statements), (4, _manifests_statements),
             (CHAIN_VERSION, _chain_statements), (CHUNKS_VERSION, lambda: _chunks_statements(set())),
             (SEALED_VERSION, lambda: _sealed_statements(set())), (PANEL_VERSION, _panel_statements))
    return [statement for step, statements in steps if step <= version for statement in statements()]


@lru_cache(maxsize=None)
def _reference(version: int) -> dict[tuple[str, str], tuple[str, str]]:
    """The layout evalcore makes at ``version``, made in memory from the statements above: (type, name) -> (the
    table it belongs to, its SQL as SQLite keeps it, whitespace normalised)."""
    conn = sqlite3.connect(":memory:")
    try:
        for statement in _statements_up_to(version):
            conn.execute(statement)
        return _objects(conn)
    finally:
        conn.close()


def _objects(conn: sqlite3.Connection) -> dict[tuple[str, str], tuple[str, str]]:
    """Every table, index and trigger the file defines (SQLite's own and automatic indexes aside)."""
    rows = conn.execute("SELECT type, name, tbl_name, sql FROM sqlite_master WHERE type IN ('table', 'index', "
                        "'trigger') AND sql IS NOT NULL AND name NOT LIKE 'sqlite%'").fetchall()
    return {(kind, name): (table, _normal(sql)) for kind, name, table, sql in rows}


def _normal(sql: str) -> str:
    """SQL with its spacing made canonical: runs of whitespace as one space, none beside ``( ) , ;``."""
    return re.sub(r"\s*([(),;])\s*", r"\1", " ".join(sql.split()))


def layout_problems(conn: sqlite3.Connection) -> list[str]:
    """Every table, index or trigger of the layout (at the workspace's own schema version) that the file lacks or
    defines differently, and every trigger it holds that the layout does not define, in words: a trigger dropped,
    replaced by one that never fires, or put in to drop or change what is recorded."""
    version = conn.execute("PRAGMA user_version").fetchone()[0]  # a read-only older workspace: its own steps
    expected, present = _reference(version), _objects(conn)
    problems = []
    for (kind, name), (_, sql) in expected.items():
        meaning = f" ({_MEANING[name]})" if name in _MEANING else ""
        if (kind, name) not in present:
            problems.append(f"the {kind} {name}{meaning} is missing")
        elif present[(kind, name)][1] != sql:
            problems.append(f"the trigger {name} is not the one evalcore made (it was replaced)" if kind == "trigger"
                            else f"the {kind} {name}{meaning} is not defined as evalcore made it (it was changed)")
    return problems + foreign_triggers(conn, present, expected)


def foreign_triggers(conn: sqlite3.Connection, present: dict | None = None, expected: dict | None = None) -> list[str]:
    """Every trigger the file holds that evalcore does not make (at the workspace's version), in words; a write
    refuses to record anything while one is there (`chain.append`): it could drop or change what is recorded."""
    if expected is None:
        expected = _reference(conn.execute("PRAGMA user_version").fetchone()[0])
    present = _objects(conn) if present is None else present
    return [f"the trigger {name} on {table} is not one evalcore makes (it was put in by hand, and can drop or change "
            "what is recorded)" for (kind, name), (table, _) in sorted(present.items())
            if kind == "trigger" and (kind, name) not in expected]


def tables_ahead(conn: sqlite3.Connection, version: int) -> list[tuple[str, int]]:
    """The tables the file holds that only a later schema step than ``version`` makes, with that step: a workspace
    whose version number was lowered after it was made (it is not upgraded: the upgrade would redo those steps)."""
    present = {name for (kind, name) in _objects(conn) if kind == "table"}
    found = []
    for step in range(version + 1, SCHEMA_VERSION + 1):
        before = _reference(step - 1)
        found += [(name, step) for (kind, name) in _reference(step)  # in the order the step makes them
                  if kind == "table" and (kind, name) not in before and name in present]
    return found
