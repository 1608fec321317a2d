"""The workspace: every file, label set, run and evaluation a team has saved, in one SQLite file.

One class, `Workspace`, owns the connection. Every change goes through `Workspace.write`, which
runs a function inside one ``BEGIN IMMEDIATE`` transaction (retried while another writer holds
the lock) and commits it whole or not at all; reads go through `Workspace.read`, one consistent
snapshot each. Errors come out typed: `WorkspaceError` and its subclasses.

What is kept, and how:

* **Files** (uploads): the raw bytes, content-addressed by SHA-256, stored before anything
  parses them. The same bytes given twice are stored once.
* **Label sets**: a name and numbered, frozen versions. A version holds the judgments and
  per-query fields as normalised JSONL (the version's content), its fingerprint, and the upload
  it came from. Adding cases (`add_cases`) makes a new version; no version ever changes (the
  database refuses updates with a trigger).
* **Runs**: the run file plus its metadata (name, model string, model line, price, dims, index
  size, format, upload time). A model *line* groups runs over time: the model string unless
  the user names a line.
* **Evaluations**: which label-set version, which runs, the settings, every summary row (mean,
  interval, n) and every query's outcome at the chosen k (hit or miss, rank of the first
  relevant doc), for the failure ledger (`evalcore.store.ledger`) and history (`Workspace.history`).

The folder is ``EVALCORE_WORKSPACE`` when set, else ``$XDG_DATA_HOME/evalcore`` (by default
``~/.local/share/evalcore``; ``%LOCALAPPDATA%\\evalcore`` on Windows). The file is
``workspace.sqlite`` in WAL mode: readers never wait for a writer, a killed process leaves
the last committed state.
"""

from __future__ import annotations

import hashlib
import io
import json
import math
import os
import random
import sqlite3
import threading
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator, Mapping, Sequence, TypeVar

import numpy as np
import pandas as pd

from ..errors import (
    FrozenError,
    InputError,
    NotInWorkspace,
    UsageError,
    WorkspaceBusy,
    WorkspaceCorrupt,
    WorkspaceError,
    invalid_parameter,
)
from ..readers.labels import LabelSet, read_labels
from ..readers.runs import Run, read_run
from ..readers.sources import Source, open_source
from ..readers.tables import QUERY_FIELDS
from ..version import __version__
from ..warning_log import EvalWarning, plural

if TYPE_CHECKING:  # pragma: no cover
    from ..metrics.evaluation import Evaluation
    from ..metrics.split import Reveal
    from .ledger import Archive

T = TypeVar("T")

ENV_VAR = "EVALCORE_WORKSPACE"
"""Environment variable naming the workspace folder."""

DB_NAME = "workspace.sqlite"
SCHEMA_VERSION = 2
"""1: files, label sets, runs, evaluations, ledger. 2: adds the integrity tables (holdout reveals,
re-judging queue, blind judging rounds); a version-1 workspace is upgraded in place on open."""
CHUNK_BYTES = 8 * 1024 * 1024
"""Stored files are split into rows of this many bytes (no size limit, bounded memory per row)."""

BUSY_TIMEOUT_S = 10.0
"""How long one attempt waits for another writer's lock before retrying."""

WRITE_ATTEMPTS = 5




# ----------------------------------------------------------------------------- records


@dataclass(frozen=True)
class StoredFile:
    """One stored file: its content hash, the name it was given, its size. ``created`` is False when
    the same bytes were already stored (nothing was written)."""

    sha256: str
    name: str
    size: int
    stored_at: str
    created: bool = False

    @property
    def short(self) -> str:
        return self.sha256[:12]


@dataclass(frozen=True)
class LabelVersion:
    """One frozen version of a named label set."""

    id: int
    name: str
    version: int
    fingerprint: str
    n_queries: int
    n_judgments: int
    change: str
    note: str | None
    created_at: str
    content_sha256: str
    source_sha256: str | None
    source_name: str | None
    parent_version: int | None
    created: bool = False

    @property
    def ref(self) -> str:
        """``labels v2 #196355168d42``: how the version is quoted next to a number."""
        return f"{self.name} v{self.version} #{self.fingerprint}"


@dataclass(frozen=True)
class StoredRun:
    """One run as stored: its file and the metadata it was read with."""

    id: int
    name: str
    model: str
    line: str
    price_per_mtok: float | None
    dims: int | None
    index_bytes: int | None
    file_sha256: str
    file_name: str
    format: str | None
    n_queries: int
    n_rows: int
    uploaded_at: str
    created: bool = False

    @property
    def ref(self) -> str:
        return f"#{self.id} {self.name}"


@dataclass(frozen=True)
class SavedEvaluation:
    """One saved evaluation: its label-set version, runs, settings, summary and warnings."""

    id: int
    created_at: str
    labels: LabelVersion
    runs: tuple[StoredRun, ...]
    k: int
    ks: tuple[int, ...]
    settings: dict
    n_queries: int
    warnings: tuple[EvalWarning, ...]
    evalcore_version: str
    note: str | None
    labels_file_sha256: str | None
    summary: pd.DataFrame = field(repr=False, compare=False)
    created: bool = False

    def run(self, name: str) -> StoredRun:
        for run in self.runs:
            if run.name == name:
                return run
        raise NotInWorkspace(f"Evaluation {self.id} has no run named {name!r}; runs are: "
                             f"{', '.join(r.name for r in self.runs)}.")

    def describe(self) -> str:
        """One line: id, labels version, k, runs."""
        runs = ", ".join(f"{r.name} ({r.model}, line {r.line})" for r in self.runs)
        return (f"evaluation {self.id}: labels {self.labels.ref}, n = {self.n_queries}, k = {self.k}, "
                f"runs {runs}")


@dataclass(frozen=True)
class Case:
    """A query to add to a label set, e.g. a production miss: its relevant doc ids and what the customer typed."""

    query: str
    relevant: tuple[str, ...]
    query_text: str | None = None
    source: str | None = "production_miss"
    grade: float = 1.0


@dataclass(frozen=True)
class Deletion:
    """What deleting one thing removes (or would remove, for a plan): a sentence and the counts."""

    kind: str
    key: str
    description: str
    counts: dict


DELETE_KINDS = ("labels", "run", "evaluation", "file")


# ----------------------------------------------------------------------------- schema

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


def _integrity_statements() -> list[str]:
    statements = [s.strip() for s in _INTEGRITY_SCHEMA.split(";") if s.strip()]
    for event in ("UPDATE", "DELETE"):
        statements.append(f"CREATE TRIGGER holdout_reveals_{event.lower()} BEFORE {event} ON holdout_reveals BEGIN "
                          f"SELECT RAISE(ABORT, '{_FROZEN_MARK} holdout reveals are never changed or erased'); END")
    return statements


def _who(who: str | None) -> str:
    """The person acting: given, else the login name."""
    if who is not None and str(who).strip():
        return str(who).strip()
    import getpass

    try:
        return getpass.getuser()
    except Exception:  # no login name (some containers): still record that someone looked
        return "unknown"


# ----------------------------------------------------------------------------- location


def default_location() -> Path:
    """``EVALCORE_WORKSPACE``, else the per-user data folder (XDG on Linux/macOS, LOCALAPPDATA on Windows)."""
    env = os.environ.get(ENV_VAR)
    if env:
        return Path(env).expanduser()
    if os.name == "nt":
        base = os.environ.get("LOCALAPPDATA")
        return (Path(base) if base else Path.home() / "AppData" / "Local") / "evalcore"
    xdg = os.environ.get("XDG_DATA_HOME")
    base = Path(xdg) if xdg and Path(xdg).is_absolute() else Path.home() / ".local" / "share"
    return base / "evalcore"


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="microseconds")


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _key(value: object) -> str:
    return _sha256(json.dumps(value, sort_keys=True, separators=(",", ":"), default=str).encode("utf-8"))


def _is_busy(exc: BaseException) -> bool:
    text = str(exc).lower()
    return isinstance(exc, sqlite3.OperationalError) and ("locked" in text or "busy" in text)


def _evalcore_version() -> str:
    return __version__


# ----------------------------------------------------------------------------- the store


class Workspace:
    """The embedded store. Open with ``Workspace()`` (the default folder) or ``Workspace(path)``.

    Safe to share between threads (one lock serialises use of the connection) and to open from
    several processes at once (SQLite's locks; writers queue, readers never wait). A forked
    child opens its own connection on first use.
    """

    def __init__(self, location: str | os.PathLike | None = None, *, busy_timeout: float = BUSY_TIMEOUT_S,
                 attempts: int = WRITE_ATTEMPTS) -> None:
        self.location = Path(location).expanduser() if location is not None else default_location()
        self.path = self.location / DB_NAME
        self._busy_timeout = float(busy_timeout)
        self._attempts = max(1, int(attempts))
        self._lock = threading.RLock()
        self._conn: sqlite3.Connection | None = None
        self._pid: int | None = None
        self._labels_cache: dict[str, LabelSet] = {}
        self._connection()

    @classmethod
    def open(cls, location: str | os.PathLike | None = None, **options) -> "Workspace":
        return cls(location, **options)

    def __repr__(self) -> str:
        return f"Workspace({str(self.location)!r})"

    def __enter__(self) -> "Workspace":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        with self._lock:
            if self._conn is not None and self._pid == os.getpid():
                self._conn.close()
            self._conn = None

    # ------------------------------------------------------------------ connection, reads and writes

    def _connection(self) -> sqlite3.Connection:
        """The open connection (a new one after a fork or `close`)."""
        if self._conn is not None and self._pid == os.getpid():
            return self._conn
        if self.location.exists() and not self.location.is_dir():
            raise WorkspaceError(f"The workspace {self.location} is a file, not a folder; set {ENV_VAR} to a folder.")
        try:
            self.location.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise WorkspaceError(f"Cannot create the workspace folder {self.location}: {exc.strerror}.") from None
        try:
            conn = sqlite3.connect(str(self.path), timeout=self._busy_timeout, isolation_level=None,
                                   check_same_thread=False)
        except sqlite3.Error as exc:
            raise self._error(exc) from None
        self._conn, self._pid = conn, os.getpid()
        try:
            self._retry(lambda: self._configure(conn))
        except BaseException:
            self._conn = None
            conn.close()
            raise
        return conn

    def _configure(self, conn: sqlite3.Connection) -> None:
        conn.execute("PRAGMA foreign_keys = ON")
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("PRAGMA synchronous = FULL")
        conn.execute("PRAGMA journal_size_limit = 67108864")  # truncate the WAL back to 64 MiB after a big upload
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        if version == SCHEMA_VERSION:
            return
        if version > SCHEMA_VERSION:
            raise WorkspaceError(f"The workspace {self.path} was made by a newer evalcore (schema {version}; this "
                                 f"one reads {SCHEMA_VERSION}). Upgrade evalcore.")
        conn.execute("BEGIN IMMEDIATE")
        try:
            current = conn.execute("PRAGMA user_version").fetchone()[0]  # another process may have just made it
            if current == 0:
                for statement in _schema_statements():
                    conn.execute(statement)
            if current < 2:
                for statement in _integrity_statements():
                    conn.execute(statement)
            if current < SCHEMA_VERSION:
                conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
            conn.execute("COMMIT")
        except BaseException:
            _rollback(conn)
            raise

    def _retry(self, action: Callable[[], T]) -> T:
        for attempt in range(self._attempts):
            try:
                return action()
            except sqlite3.Error as exc:
                if _is_busy(exc) and attempt + 1 < self._attempts:
                    _backoff(attempt)
                    continue
                raise self._error(exc) from None
        raise AssertionError("unreachable")  # pragma: no cover

    def write(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        """The one way to change the store: ``fn(conn)`` inside a ``BEGIN IMMEDIATE`` transaction.

        It commits when ``fn`` returns and rolls back when it raises, so a change is stored whole
        or not at all (a process killed halfway leaves the last committed state). While another
        writer holds the lock each attempt waits up to ``busy_timeout`` seconds, and the whole
        transaction is retried with backoff; ``fn`` must therefore only read and write through
        ``conn``. Raises `WorkspaceBusy` when every attempt timed out.
        """
        with self._lock:
            conn = self._connection()
            for attempt in range(self._attempts):
                try:
                    conn.execute("BEGIN IMMEDIATE")
                except sqlite3.Error as exc:
                    if _is_busy(exc) and attempt + 1 < self._attempts:
                        _backoff(attempt)
                        continue
                    raise self._error(exc) from None
                try:
                    result = fn(conn)
                    conn.execute("COMMIT")
                    return result
                except BaseException as exc:
                    _rollback(conn)
                    if _is_busy(exc) and attempt + 1 < self._attempts:
                        _backoff(attempt)
                        continue
                    if isinstance(exc, sqlite3.Error):
                        raise self._error(exc) from None
                    raise
        raise AssertionError("unreachable")  # pragma: no cover

    def read(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        """``fn(conn)`` on one consistent snapshot (a read transaction); never blocks writers."""
        with self._lock:
            conn = self._connection()
            try:
                conn.execute("BEGIN")
                try:
                    return fn(conn)
                finally:
                    _rollback(conn)
            except sqlite3.Error as exc:
                raise self._error(exc) from None

    def _frame(self, sql: str, params: Sequence = ()) -> pd.DataFrame:
        return self.read(lambda conn: _frame(conn, sql, params))

    def _error(self, exc: sqlite3.Error) -> WorkspaceError:
        text = str(exc)
        if _is_busy(exc):
            return WorkspaceBusy(f"The workspace {self.path} is busy: another process held the write lock through "
                                 f"{self._attempts} attempts of {self._busy_timeout:g} s. Try again.")
        if _FROZEN_MARK in text:
            return FrozenError(f"Refused: {text.split(_FROZEN_MARK, 1)[1].strip()}.")
        if isinstance(exc, sqlite3.DatabaseError) and ("not a database" in text or "malformed" in text):
            return WorkspaceCorrupt(f"The workspace file {self.path} is damaged ({text}). Move it aside to start a "
                                    "new workspace, or restore it from a backup.")
        return WorkspaceError(f"Workspace {self.path}: {text}.")

    # ------------------------------------------------------------------ files

    def put_file(self, source: bytes | str | os.PathLike | Any, name: str | None = None) -> StoredFile:
        """Store a file's raw bytes (a path, bytes, or a binary file object such as an upload).

        Content-addressed: the same bytes are stored once, whatever their name. A path is read
        twice (hashed, then stored while the hash is checked again), never held whole in memory.
        """
        if isinstance(source, (bytes, bytearray, memoryview)):
            data = bytes(source)
            return self._put_bytes(data, name or "<bytes>")
        if hasattr(source, "read"):
            data = source.read()
            if isinstance(data, str):
                data = data.encode("utf-8")
            return self._put_bytes(bytes(data), name or getattr(source, "name", None) or "<upload>")
        if isinstance(source, (str, os.PathLike)):
            open_source(source)  # the reader's checks: exists, is a file, readable
            path = Path(source)
            display = name or path.name
            digest, size = _hash_path(path, display)

            def chunks() -> Iterator[bytes]:
                check, empty = hashlib.sha256(), True
                with open(path, "rb") as handle:
                    while True:
                        block = handle.read(CHUNK_BYTES)
                        if not block:
                            break
                        check.update(block)
                        empty = False
                        yield block
                if empty:
                    yield b""
                if check.hexdigest() != digest:
                    raise InputError("a file that does not change while it is stored; try again", source=display)

            return self.write(lambda conn: _store_file(conn, digest, size, display, chunks))
        raise invalid_parameter("source", "a path, bytes or a binary file object", type(source).__name__)

    def _put_bytes(self, data: bytes, name: str) -> StoredFile:
        digest = _sha256(data)

        def chunks() -> Iterator[bytes]:
            for start in range(0, max(len(data), 1), CHUNK_BYTES):
                yield data[start:start + CHUNK_BYTES]

        return self.write(lambda conn: _store_file(conn, digest, len(data), name, chunks))

    def file(self, sha256: str) -> StoredFile:
        """The stored file with this hash (or a unique prefix of at least 8 hex digits)."""
        return self.read(lambda conn: _file_record(conn, _resolve_sha(conn, sha256)))

    def read_file(self, sha256: str) -> bytes:
        """The raw bytes of a stored file; checks the size and hash."""
        return self.read(lambda conn: _read_file(conn, _resolve_sha(conn, sha256)))

    def source(self, stored: StoredFile | str) -> Source:
        """A stored file as a `Source` for the readers (its name drives format detection)."""
        record = stored if isinstance(stored, StoredFile) else self.file(stored)
        return Source(record.name, self.read_file(record.sha256))

    def files(self) -> pd.DataFrame:
        """Every stored file: sha256, name, size, stored_at, and how many records use it."""
        return self._frame("""
            SELECT f.sha256, f.name, f.size, f.stored_at,
                   (SELECT COUNT(*) FROM runs r WHERE r.file_sha256 = f.sha256)
                 + (SELECT COUNT(*) FROM label_versions v WHERE v.content_sha256 = f.sha256 OR v.source_sha256 = f.sha256)
                 + (SELECT COUNT(*) FROM evaluations e WHERE e.labels_file_sha256 = f.sha256) AS used_by
            FROM files f ORDER BY f.stored_at, f.sha256""")

    # ------------------------------------------------------------------ label sets

    def save_labels(self, labels: LabelSet | Any, *, name: str | None = None, file: StoredFile | None = None,
                    format: str | None = None, note: str | None = None) -> LabelVersion:
        """Store a label set as a version of the set ``name`` (default: the labels' own name).

        ``labels`` is a `LabelSet` (then ``file`` may name the stored upload it came from) or
        anything `read_labels` takes; a path or bytes is stored first, then parsed. A version
        with the same judgments and per-query fields is reused (``created`` False); otherwise a
        new version is added.
        """
        if not isinstance(labels, LabelSet):
            if isinstance(labels, (bytes, bytearray, str, os.PathLike)) or hasattr(labels, "read"):
                file = self.put_file(labels)
                labels = read_labels(labels if isinstance(labels, (str, os.PathLike)) else self.source(file),
                                     format=format)
            else:
                labels = read_labels(labels, format=format)
        payload = _LabelsPayload.build(labels)
        set_name = _check_name(name or labels.name, "name")
        version_id, created = self.write(lambda conn: _ensure_version(conn, set_name, payload, file, note))
        return _replace_created(self._version_record(version_id), created)

    def _version_record(self, version_id: int) -> LabelVersion:
        return self.read(lambda conn: _version_by_id(conn, version_id))

    def add_cases(self, name: str, cases: Iterable[Case | Mapping] | LabelSet, *, note: str | None = None) -> LabelVersion:
        """A new version of label set ``name``: its latest version plus ``cases``.

        Each case is a `Case` (or a dict with the same keys: ``query``, ``relevant``, optional
        ``query_text``, ``source``, ``grade``), or pass a whole `LabelSet`. A (query, doc) pair the
        set already has takes the new grade (a corrected label); new pairs and queries are added
        at the end; a per-query field given replaces the old one. Earlier versions never change.
        The read of the latest version and the write of the new one are one transaction, so two
        people adding cases at once each get their own version and neither loses the other's.
        Returns the latest version unchanged (``created`` False) when nothing is new.
        """
        judgments, info = _cases_table(cases)
        set_name = _check_name(name, "name")

        version_id, created = self.write(lambda conn: self._add_cases_in(conn, set_name, judgments, info, note))
        record = self._version_record(version_id)
        return _replace_created(record, created)

    def _add_cases_in(self, conn: sqlite3.Connection, set_name: str, judgments: pd.DataFrame,
                      info: dict[str, dict[str, object]], note: str | None) -> tuple[int, bool]:
        """Inside a write: the latest version of ``set_name`` plus the cases, as a new version when anything changed."""
        latest = _latest_version_row(conn, set_name)
        if latest is None:
            raise NotInWorkspace(f"No label set named {set_name!r} in the workspace {self.location}; "
                                 f"save one first (evaluate --save, or Workspace.save_labels). "
                                 f"{_known('Label sets', _names(conn, 'SELECT name FROM label_sets ORDER BY name'))}")
        base = self._parse_labels(conn, latest["content_sha256"], set_name, latest["version"])
        merged, change = _merge_cases(base, judgments, info, set_name)
        if change is None:
            return latest["id"], False
        payload = _LabelsPayload.build(merged)
        return _ensure_version(conn, set_name, payload, None, note, change=change, parent=latest["version"])

    def label_sets(self) -> pd.DataFrame:
        """One row per label set: versions, the latest version's fingerprint and size, evaluations."""
        return self._frame("""
            SELECT s.name, COUNT(v.id) AS versions, MAX(v.version) AS latest_version,
                   (SELECT v2.fingerprint FROM label_versions v2 WHERE v2.set_id = s.id ORDER BY v2.version DESC LIMIT 1)
                       AS fingerprint,
                   (SELECT v2.n_queries FROM label_versions v2 WHERE v2.set_id = s.id ORDER BY v2.version DESC LIMIT 1)
                       AS n_queries,
                   (SELECT COUNT(*) FROM evaluations e JOIN label_versions v3 ON v3.id = e.label_version_id
                     WHERE v3.set_id = s.id) AS evaluations,
                   s.created_at, MAX(v.created_at) AS updated_at
            FROM label_sets s JOIN label_versions v ON v.set_id = s.id
            GROUP BY s.id ORDER BY s.name""")

    def label_versions(self, name: str) -> pd.DataFrame:
        """Every version of one label set, oldest first."""
        def read(conn):
            set_id = _set_id(conn, name, self.location)
            return _frame(conn, """
                SELECT v.version, v.fingerprint, v.n_queries, v.n_judgments, v.change, v.note, v.source_name,
                       v.parent_version, v.created_at,
                       (SELECT COUNT(*) FROM evaluations e WHERE e.label_version_id = v.id) AS evaluations
                FROM label_versions v WHERE v.set_id = ? ORDER BY v.version""", (set_id,))
        return self.read(read)

    def label_version(self, name: str, version: int | None = None) -> LabelVersion:
        """One version of a label set (default: the latest)."""
        def read(conn):
            row = _version_row(conn, name, version, self.location)
            return _version_by_id(conn, row["id"])
        return self.read(read)

    def load_labels(self, name: str, version: int | None = None) -> LabelSet:
        """A version of a label set (default: the latest) as a `LabelSet` named after the set."""
        def read(conn):
            row = _version_row(conn, name, version, self.location)
            return self._parse_labels(conn, row["content_sha256"], name, row["version"])
        return self.read(read)

    def _parse_labels(self, conn: sqlite3.Connection, sha: str, name: str, version: int) -> LabelSet:
        cache_key = f"{sha}:{name}"
        cached = self._labels_cache.get(cache_key)
        if cached is None:
            data = _read_file(conn, sha)
            cached = read_labels(Source(f"workspace {name} v{version}.jsonl", data), format="jsonl", name=name)
            if len(self._labels_cache) > 32:
                self._labels_cache.clear()
            self._labels_cache[cache_key] = cached
        return cached

    # ------------------------------------------------------------------ runs

    def save_run(self, run: Run | Any, *, file: StoredFile | None = None, line: str | None = None,
                 format: str | None = None) -> StoredRun:
        """Store one run with its metadata; the same file, name, metadata and line are stored once.

        ``run`` is a `Run` (pass the stored upload it came from as ``file``; without one the run
        is stored as a Parquet table of query, doc_id, rank, score) or anything `read_run` takes
        (a path or bytes is stored first, then parsed with its sidecar). ``line`` names the model
        line (default: the model string).
        """
        if not isinstance(run, Run):
            if isinstance(run, (bytes, bytearray, str, os.PathLike)) or hasattr(run, "read"):
                file = self.put_file(run)
                run = read_run(run if isinstance(run, (str, os.PathLike)) else self.source(file), format=format)
            else:
                run = read_run(run, format=format)
        payload = _RunPayload.build(run, file, line, format)
        run_id, created = self.write(lambda conn: _ensure_run(conn, payload))
        return _replace_created(self.run(run_id), created)

    def run(self, run_id: int) -> StoredRun:
        return self.read(lambda conn: _run_by_id(conn, int(run_id)))

    def change_marker(self) -> tuple:
        """Counts and last ids of stored runs, evaluations and their links: a cheap value (one query) that
        changes whenever any of them is added or deleted, by this process or another, for callers that keep
        what they read from those tables."""
        return self.read(lambda conn: tuple(conn.execute(
            "SELECT (SELECT COUNT(*) FROM runs), (SELECT MAX(id) FROM runs), (SELECT COUNT(*) FROM evaluations), "
            "(SELECT MAX(id) FROM evaluations), (SELECT COUNT(*) FROM evaluation_runs)").fetchone()))

    def runs(self, line: str | None = None) -> pd.DataFrame:
        """Stored runs (of one model line, or all), oldest first."""
        where, params = ("WHERE r.line = ?", (line,)) if line is not None else ("", ())
        return self._frame(f"""
            SELECT r.id, r.name, r.model, r.line, r.price_per_mtok, r.dims, r.index_bytes, r.file_name,
                   r.file_sha256, r.format, r.n_queries, r.uploaded_at,
                   (SELECT COUNT(*) FROM evaluation_runs er WHERE er.run_id = r.id) AS evaluations
            FROM runs r {where} ORDER BY r.id""", params)

    def load_run(self, run_id: int) -> Run:
        """A stored run read back from its stored file, with the stored metadata."""
        record = self.run(run_id)
        return _load_run(record, self.read_file(record.file_sha256))

    def lines(self) -> pd.DataFrame:
        """One row per model line: its runs, models, first and latest upload, evaluations."""
        return self._frame("""
            SELECT r.line, COUNT(*) AS runs, GROUP_CONCAT(DISTINCT r.model) AS models,
                   MIN(r.uploaded_at) AS first_upload, MAX(r.uploaded_at) AS latest_upload, MAX(r.id) AS latest_run_id,
                   (SELECT COUNT(DISTINCT er.evaluation_id) FROM evaluation_runs er JOIN runs r2 ON r2.id = er.run_id
                     WHERE r2.line = r.line) AS evaluations
            FROM runs r GROUP BY r.line ORDER BY r.line""")

    # ------------------------------------------------------------------ evaluations

    def save_evaluation(
        self,
        evaluation: "Evaluation",
        *,
        k: int | None = None,
        labels_file: StoredFile | None = None,
        run_files: Mapping[str, StoredFile] | None = None,
        lines: Mapping[str, str] | None = None,
        label_set: str | None = None,
        run_format: str | None = None,
        note: str | None = None,
    ) -> SavedEvaluation:
        """Record an evaluation: its label-set version, runs, summary and per-query outcomes at ``k``.

        ``k`` is the chosen cutoff whose hit/miss each query's outcome records (default: the
        largest evaluated k). ``labels_file`` and ``run_files`` (by run name) are the stored
        uploads the inputs were read from (`put_file`); a run without one is stored as a table.
        ``lines`` maps run names to model-line names (default: each run's model string);
        ``label_set`` names the label set (default: the labels' name); ``run_format`` is the format
        override the run files were read with, if any. Everything is computed
        first and written in one transaction. Saving the same evaluation again (same version,
        runs and settings) returns the stored one with ``created`` False.
        """
        chosen_k = _check_k(evaluation, k)
        names = evaluation.run_names
        run_files = dict(run_files or {})
        lines = dict(lines or {})
        for what, given in (("run_files", run_files), ("lines", lines)):
            unknown = sorted(set(given) - set(names))
            if unknown:
                raise UsageError(f"{what} names a run that is not in the evaluation: {', '.join(unknown)}; runs are: "
                                 f"{', '.join(names)}.")
        set_name = _check_name(label_set or evaluation.labels.name, "label_set")
        labels_payload = _LabelsPayload.build(evaluation.labels)
        run_payloads = [_RunPayload.build(r.run, run_files.get(r.name), lines.get(r.name),
                                          run_format if r.name in run_files else None)
                        for r in evaluation.results]
        summary = evaluation.summary
        per_run = []
        for result in evaluation.results:
            rows = summary[summary["run"] == result.name]
            metrics = [(row.metric, None if pd.isna(row.k) else int(row.k), float(row.mean), _float(row.ci_low),
                        _float(row.ci_high), int(row.n), row.ci_method, int(bool(row.reliable)), row.note or None)
                       for row in rows.itertuples()]
            per_run.append((metrics, _outcome_rows(result, chosen_k)))
        record = {
            "ks": json.dumps(list(evaluation.ks)), "min_grade": float(evaluation.min_grade),
            "zero_relevant": evaluation.zero_relevant, "level": float(evaluation.level), "seed": int(evaluation.seed),
            "n_resamples": int(evaluation.n_resamples), "n_queries": int(evaluation.results[0].n_queries),
            "warnings": json.dumps([w.to_dict() for w in evaluation.all_warnings], ensure_ascii=False),
        }

        def write(conn: sqlite3.Connection) -> tuple[int, bool]:
            version_id, _ = _ensure_version(conn, set_name, labels_payload, labels_file, None)
            if labels_file is not None:
                _require_file(conn, labels_file.sha256)
            run_ids = [_ensure_run(conn, payload)[0] for payload in run_payloads]
            key = _key({"labels": version_id, "runs": run_ids, "k": chosen_k, "ks": record["ks"],
                        "min_grade": record["min_grade"], "zero_relevant": record["zero_relevant"],
                        "level": record["level"], "seed": record["seed"], "n_resamples": record["n_resamples"]})
            found = conn.execute("SELECT id FROM evaluations WHERE key = ?", (key,)).fetchone()
            if found:
                return found[0], False
            cursor = conn.execute(
                "INSERT INTO evaluations (key, label_version_id, labels_file_sha256, k, ks, min_grade, zero_relevant, "
                "level, seed, n_resamples, n_queries, warnings, evalcore_version, note, created_at) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (key, version_id, labels_file.sha256 if labels_file else None, chosen_k, record["ks"],
                 record["min_grade"], record["zero_relevant"], record["level"], record["seed"],
                 record["n_resamples"], record["n_queries"], record["warnings"], _evalcore_version(), note, _now()))
            evaluation_id = cursor.lastrowid
            for position, (run_id, (metrics, outcomes)) in enumerate(zip(run_ids, per_run)):
                conn.execute("INSERT INTO evaluation_runs (evaluation_id, run_id, position) VALUES (?, ?, ?)",
                             (evaluation_id, run_id, position))
                conn.executemany(
                    "INSERT INTO metrics (evaluation_id, run_id, metric, k, mean, ci_low, ci_high, n, ci_method, "
                    "reliable, note) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    [(evaluation_id, run_id, *row) for row in metrics])
                conn.executemany(
                    "INSERT INTO outcomes (evaluation_id, run_id, query, n_relevant, first_rank, hit, recall, rr, "
                    "in_run) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    [(evaluation_id, run_id, *row) for row in outcomes])
            return evaluation_id, True

        evaluation_id, created = self.write(write)
        return _replace_created(self.evaluation(evaluation_id), created)

    def evaluation_id(self, key: int | str) -> int:
        """An evaluation id from an int, a numeric string or ``latest``."""
        if isinstance(key, str) and key.strip().lower() == "latest":
            found = self.read(lambda conn: conn.execute("SELECT MAX(id) FROM evaluations").fetchone()[0])
            if found is None:
                raise NotInWorkspace(f"The workspace {self.location} has no saved evaluation yet; save one with "
                                     "`evalcore evaluate ... --save`.")
            return int(found)
        try:
            return int(key)
        except (TypeError, ValueError):
            raise invalid_parameter("evaluation", "an evaluation id (a number) or 'latest'", key) from None

    def evaluation(self, key: int | str) -> SavedEvaluation:
        """One saved evaluation (id or ``latest``) with its summary."""
        evaluation_id = self.evaluation_id(key)
        return self.read(lambda conn: _evaluation_by_id(conn, evaluation_id, self.location))

    def evaluations(self, line: str | None = None, *, run_id: int | None = None) -> pd.DataFrame:
        """Saved evaluations (those with a run of ``line``, or with run ``run_id``, or all), oldest first."""
        if run_id is not None:
            where, params = ("WHERE e.id IN (SELECT evaluation_id FROM evaluation_runs WHERE run_id = ?)",
                             (int(run_id),))
        elif line is not None:
            where, params = ("WHERE e.id IN (SELECT er.evaluation_id FROM evaluation_runs er JOIN runs r ON r.id = "
                             "er.run_id WHERE r.line = ?)", (line,))
        else:
            where, params = "", ()
        return self._frame(f"""
            SELECT e.id, e.created_at, s.name AS labels, v.version AS labels_version, v.fingerprint, e.k,
                   e.ks, e.n_queries,
                   (SELECT GROUP_CONCAT(name, ', ') FROM (SELECT r.name FROM evaluation_runs er JOIN runs r
                     ON r.id = er.run_id WHERE er.evaluation_id = e.id ORDER BY er.position)) AS runs,
                   e.note
            FROM evaluations e JOIN label_versions v ON v.id = e.label_version_id JOIN label_sets s ON s.id = v.set_id
            {where} ORDER BY e.id""", params)

    def outcomes(self, key: int | str, run: str | None = None) -> pd.DataFrame:
        """Per-query outcomes of a saved evaluation at its chosen k: one row per run and query."""
        saved = self.evaluation(key)
        runs = [saved.run(run)] if run is not None else list(saved.runs)
        ids = [r.id for r in runs]
        frame = self._frame(f"""
            SELECT o.run_id, r.name AS run, r.model, r.line, o.query, o.n_relevant, o.first_rank, o.hit, o.recall,
                   o.rr, o.in_run
            FROM outcomes o JOIN runs r ON r.id = o.run_id JOIN evaluation_runs er
              ON er.evaluation_id = o.evaluation_id AND er.run_id = o.run_id
            WHERE o.evaluation_id = ? AND o.run_id IN ({','.join('?' * len(ids))})
            ORDER BY er.position, o.rowid""", (saved.id, *ids))
        frame["first_rank"] = frame["first_rank"].astype("Int64")
        frame["hit"] = frame["hit"].astype(bool)
        frame["in_run"] = frame["in_run"].astype(bool)
        frame["k"] = saved.k
        frame["labels"] = saved.labels.name
        frame["labels_version"] = saved.labels.version
        frame["fingerprint"] = saved.labels.fingerprint
        return frame

    def load_evaluation(self, key: int | str) -> "Evaluation":
        """A saved evaluation computed again from its stored files and settings (same numbers, same seed)."""
        from ..metrics.evaluation import evaluate_runs

        saved = self.evaluation(key)
        labels = self.load_labels(saved.labels.name, saved.labels.version)
        runs = [self.load_run(r.id) for r in saved.runs]
        settings = saved.settings
        return evaluate_runs(runs, labels, list(saved.ks), min_grade=settings["min_grade"],
                             zero_relevant=settings["zero_relevant"], level=settings["level"], seed=settings["seed"],
                             n_resamples=settings["n_resamples"])

    # ------------------------------------------------------------------ history and the failure archive

    def history(self, line: str, metrics: Sequence[str] | None = None, *, labels: str | None = None) -> pd.DataFrame:
        """A model line's metrics over its runs in upload order, with intervals, ready to chart.

        One row per run and metric, from the latest evaluation of each run on label set
        ``labels`` (default: the label set of the line's latest evaluation). Columns: ``line``,
        ``step`` (1 = the line's first run), ``run_id``, ``run``, ``model``, ``uploaded_at``
        (datetime, UTC), ``evaluation_id``, ``labels``, ``labels_version``, ``fingerprint``,
        ``metric``, ``k``, ``mean``, ``ci_low``, ``ci_high``, ``n``, ``level``, ``seed``,
        ``ci_method``, ``note``. A change of ``labels_version`` between points means the queries
        changed too: compare such points with care.
        """
        def read(conn):
            set_name = _line_labels(conn, line, labels, self.location)
            return _frame(conn, """
                WITH latest AS (
                    SELECT er.run_id, MAX(e.id) AS evaluation_id
                    FROM evaluation_runs er JOIN evaluations e ON e.id = er.evaluation_id
                    JOIN label_versions v ON v.id = e.label_version_id JOIN label_sets s ON s.id = v.set_id
                    JOIN runs r ON r.id = er.run_id
                    WHERE r.line = ? AND s.name = ? GROUP BY er.run_id)
                SELECT r.line, r.id AS run_id, r.name AS run, r.model, r.uploaded_at, l.evaluation_id,
                       s.name AS labels, v.version AS labels_version, v.fingerprint, m.metric, m.k, m.mean,
                       m.ci_low, m.ci_high, m.n, e.level, e.seed, m.ci_method, m.note
                FROM latest l JOIN runs r ON r.id = l.run_id JOIN evaluations e ON e.id = l.evaluation_id
                JOIN label_versions v ON v.id = e.label_version_id JOIN label_sets s ON s.id = v.set_id
                JOIN metrics m ON m.evaluation_id = l.evaluation_id AND m.run_id = l.run_id
                ORDER BY r.id, m.rowid""", (line, set_name))

        frame = self.read(read)
        if metrics:
            from ..metrics.measures import Measure

            wanted = [str(Measure.parse(m)) for m in metrics]
            frame = frame[frame["metric"].isin(wanted)].reset_index(drop=True)
        frame.insert(1, "step", pd.factorize(frame["run_id"])[0] + 1)
        frame["uploaded_at"] = pd.to_datetime(frame["uploaded_at"], utc=True, format="ISO8601")
        frame["k"] = frame["k"].astype("Int64")
        frame["note"] = frame["note"].fillna("")
        return frame

    @property
    def archive(self) -> "Archive":
        """The failure ledger over this workspace (`evalcore.store.ledger.Archive`)."""
        from .ledger import Archive

        return Archive(self)

    # ------------------------------------------------------------------ integrity (issue 7): reveals, re-judging, blind rounds

    def record_reveal(self, labels: LabelSet, *, rule: str, runs: Sequence[tuple[str, str]], name: str | None = None,
                      who: str | None = None, file: StoredFile | None = None) -> "Reveal":
        """Record that someone is about to see holdout numbers; returns the `Reveal` that unseals them.

        The labels are saved as a version of the set ``name`` (default their own name) first, so
        the reveal names the exact version. Reveals are append-only.
        """
        from ..metrics.split import Reveal

        version = self.save_labels(labels, name=name, file=file)
        person = _who(who)
        runs_text = json.dumps([f"{n}={m}" for n, m in runs], ensure_ascii=False)

        def write(conn: sqlite3.Connection) -> tuple[int, str, int]:
            at = _now()
            cursor = conn.execute(
                "INSERT INTO holdout_reveals (label_set, version, fingerprint, rule, runs, who, at) "
                "VALUES (?, ?, ?, ?, ?, ?, ?)",
                (version.name, version.version, labels.fingerprint, rule, runs_text, person, at))
            views = conn.execute("SELECT COUNT(*) FROM holdout_reveals WHERE label_set = ?",
                                 (version.name,)).fetchone()[0]
            return cursor.lastrowid, at, views

        reveal_id, at, views = self.write(write)
        return Reveal(reveal_id, version.name, version.version, labels.fingerprint, rule,
                      tuple(f"{n}={m}" for n, m in runs), person, at, views)

    def reveals(self, label_set: str | None = None) -> pd.DataFrame:
        """Every recorded look at holdout numbers (of one label set, or all), oldest first."""
        if label_set is None:
            return self._frame("SELECT * FROM holdout_reveals ORDER BY id")
        return self._frame("SELECT * FROM holdout_reveals WHERE label_set = ? ORDER BY id", (label_set,))

    def reveal_summary(self, label_set: str) -> str:
        """``holdout of NAME viewed 3 times, last on 2026-11-29 23:01 by ana`` (or never viewed)."""
        seen = self.reveals(label_set)
        if seen.empty:
            return f"holdout of {label_set} never viewed"
        last = seen.iloc[-1]
        times = "once" if len(seen) == 1 else f"{len(seen)} times"
        return f"holdout of {label_set} viewed {times}, last on {str(last['at'])[:16].replace('T', ' ')} UTC by {last['who']}"

    def flag_for_rejudging(self, label_set: str, query: str, *, reason: str, doc_id: str | None = None,
                           who: str | None = None) -> int:
        """Queue one query of a saved label set for blind re-judging (labels are not touched); returns the entry
        id. A query already waiting is not queued twice (its open entry's id is returned)."""
        name = _check_name(label_set, "label set")
        person = _who(who)

        def write(conn: sqlite3.Connection) -> int:
            _set_id(conn, name, self.location)
            found = conn.execute("SELECT id FROM rejudge_queue WHERE label_set = ? AND query = ? AND "
                                 "resolved_version IS NULL", (name, str(query))).fetchone()
            if found:
                return found[0]
            return conn.execute(
                "INSERT INTO rejudge_queue (label_set, query, reason, doc_id, flagged_by, flagged_at) "
                "VALUES (?, ?, ?, ?, ?, ?)", (name, str(query), str(reason), doc_id, person, _now())).lastrowid

        return self.write(write)

    def rejudge_queue(self, label_set: str | None = None, *, open_only: bool = True) -> pd.DataFrame:
        """Queries flagged for blind re-judging (open ones unless ``open_only`` is False), oldest first."""
        where, params = [], []
        if label_set is not None:
            where.append("label_set = ?")
            params.append(label_set)
        if open_only:
            where.append("resolved_version IS NULL")
        clause = f"WHERE {' AND '.join(where)}" if where else ""
        return self._frame(f"SELECT * FROM rejudge_queue {clause} ORDER BY id", params)

    def save_blind_judgments(self, name: str, judged: LabelSet, *, query: str, depth: int, who: str | None = None,
                             note: str | None = None) -> LabelVersion:
        """A new version of label set ``name`` with a blind judging round of one query (`judging.marks_to_labels`),
        the round (judged depth, pool size, who) recorded and the query's open re-judging entries resolved, all in
        one transaction. Earlier versions never change."""
        set_name = _check_name(name, "name")
        judgments, info = _cases_table(judged)
        person = _who(who)
        n_relevant = int((judgments["grade"] > 0).sum())
        text = note or f"blind judging of {query} at depth {int(depth)} by {person}"

        def write(conn: sqlite3.Connection) -> tuple[int, bool]:
            version_id, created = self._add_cases_in(conn, set_name, judgments, info, text)
            version = conn.execute("SELECT version FROM label_versions WHERE id = ?", (version_id,)).fetchone()[0]
            at = _now()
            conn.execute("INSERT INTO judging_rounds (label_set, version, query, depth, n_docs, n_relevant, judge, at) "
                         "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                         (set_name, version, str(query), int(depth), len(judgments), n_relevant, person, at))
            conn.execute("UPDATE rejudge_queue SET resolved_version = ?, resolved_at = ? WHERE label_set = ? AND "
                         "query = ? AND resolved_version IS NULL", (version, at, set_name, str(query)))
            return version_id, created

        version_id, created = self.write(write)
        return _replace_created(self._version_record(version_id), created)

    def judging_rounds(self, label_set: str | None = None) -> pd.DataFrame:
        """Every blind judging round: label set, version made, query, judged depth, pool size, judge, time."""
        if label_set is None:
            return self._frame("SELECT * FROM judging_rounds ORDER BY id")
        return self._frame("SELECT * FROM judging_rounds WHERE label_set = ? ORDER BY id", (label_set,))

    # ------------------------------------------------------------------ deleting

    def delete(self, kind: str, key: str | int, *, dry_run: bool = False) -> Deletion:
        """Delete a label set (by name, every version), a run or an evaluation (by id), or a file.

        A label set takes its evaluations and its ledger entries with it; a run leaves the
        evaluations it was in (an evaluation left without runs goes); files nothing uses any more
        go with the records that used them. A file still in use is refused. ``dry_run`` says what
        would go without deleting anything (what the CLI and the dashboard show before asking).
        """
        if kind not in DELETE_KINDS:
            raise invalid_parameter("kind", "one of " + ", ".join(DELETE_KINDS), kind)
        if kind == "evaluation":
            key = self.evaluation_id(key)

        def act(conn: sqlite3.Connection) -> Deletion:
            plan = _plan_delete(conn, kind, key, self.location)
            if not dry_run:
                _execute_delete(conn, plan)
            return plan.deletion

        if dry_run:
            return self.read(act)
        return self.write(act)

    # ------------------------------------------------------------------ checks

    def verify(self) -> list[str]:
        """Problems found (empty when sound): SQLite's integrity and foreign-key checks, and every stored
        file's size and SHA-256 against its record."""
        def read(conn):
            problems = [row[0] for row in conn.execute("PRAGMA integrity_check") if row[0] != "ok"]
            problems += [f"foreign key: {row}" for row in conn.execute("PRAGMA foreign_key_check")]
            for sha, size, n_chunks in conn.execute("SELECT sha256, size, n_chunks FROM files").fetchall():
                digest, total, count = hashlib.sha256(), 0, 0
                for (data,) in conn.execute("SELECT data FROM file_chunks WHERE sha256 = ? ORDER BY seq", (sha,)):
                    digest.update(data)
                    total += len(data)
                    count += 1
                if digest.hexdigest() != sha or total != size or count != n_chunks:
                    problems.append(f"file {sha[:12]}: content does not match its hash or size")
            return problems
        return self.read(read)

    def counts(self) -> dict[str, int]:
        """Rows per table: a cheap fingerprint of the whole store (tests compare it across a crash)."""
        tables = ("files", "file_chunks", "label_sets", "label_versions", "runs", "evaluations", "evaluation_runs",
                  "metrics", "outcomes", "ledger", "ledger_tags", "ledger_log")
        return self.read(lambda conn: {t: conn.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0] for t in tables})


# ----------------------------------------------------------------------------- helpers: transactions


def _rollback(conn: sqlite3.Connection) -> None:
    if conn.in_transaction:
        try:
            conn.execute("ROLLBACK")
        except sqlite3.Error:  # the transaction is gone already (e.g. rolled back by SQLite itself)
            pass


def _backoff(attempt: int) -> None:
    time.sleep(min(1.0, 0.02 * 2 ** attempt) * (0.5 + random.random()))


def _frame(conn: sqlite3.Connection, sql: str, params: Sequence = ()) -> pd.DataFrame:
    cursor = conn.execute(sql, tuple(params))
    columns = [d[0] for d in cursor.description]
    return pd.DataFrame.from_records(cursor.fetchall(), columns=columns)


def _names(conn: sqlite3.Connection, sql: str, params: Sequence = ()) -> list[str]:
    return [str(row[0]) for row in conn.execute(sql, tuple(params))]


def _known(what: str, names: list[str]) -> str:
    if not names:
        return f"{what}: none yet."
    shown = ", ".join(names[:20]) + (f" and {len(names) - 20} more" if len(names) > 20 else "")
    return f"{what}: {shown}."


def _replace_created(record: T, created: bool) -> T:
    from dataclasses import replace

    return replace(record, created=created)


def _float(value: object) -> float | None:
    if value is None or pd.isna(value):
        return None
    number = float(value)
    return number if math.isfinite(number) else None


def _check_name(name: object, what: str) -> str:
    if not isinstance(name, str) or not name.strip():
        raise invalid_parameter(what, "a non-empty name", name)
    return name.strip()


def _check_k(evaluation: "Evaluation", k: int | None) -> int:
    depth = min(r.depth for r in evaluation.results)
    if k is None:
        return max(evaluation.ks)
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or not 1 <= int(k) <= depth:
        raise invalid_parameter("k", f"an integer between 1 and {depth} (the depth this evaluation was scored to)", k)
    return int(k)


# ----------------------------------------------------------------------------- helpers: files


def _hash_path(path: Path, display: str) -> tuple[str, int]:
    digest, size = hashlib.sha256(), 0
    try:
        with open(path, "rb") as handle:
            while True:
                block = handle.read(CHUNK_BYTES)
                if not block:
                    break
                digest.update(block)
                size += len(block)
    except OSError as exc:
        raise InputError(f"a readable file ({exc.strerror})", source=display) from None
    return digest.hexdigest(), size


def _store_file(conn: sqlite3.Connection, digest: str, size: int, name: str,
                chunks: Callable[[], Iterator[bytes]]) -> StoredFile:
    """Insert a file and its chunks unless the same bytes are stored already (all inside the caller's
    transaction)."""
    row = conn.execute("SELECT size, stored_at FROM files WHERE sha256 = ?", (digest,)).fetchone()
    if row:
        return StoredFile(digest, name, row[0], row[1], created=False)
    stored_at = _now()
    n_chunks = max(1, -(-size // CHUNK_BYTES))
    conn.execute("INSERT INTO files (sha256, name, size, n_chunks, stored_at) VALUES (?, ?, ?, ?, ?)",
                 (digest, name, size, n_chunks, stored_at))
    count = _store_chunks(conn, digest, chunks())
    if count != n_chunks:
        raise InputError("a file that does not change while it is stored; try again", source=name)
    return StoredFile(digest, name, size, stored_at, created=True)


def _store_chunks(conn: sqlite3.Connection, digest: str, chunks: Iterable[bytes]) -> int:
    count = 0
    for seq, block in enumerate(chunks):
        conn.execute("INSERT INTO file_chunks (sha256, seq, data) VALUES (?, ?, ?)", (digest, seq, block))
        count += 1
    return count


def _resolve_sha(conn: sqlite3.Connection, text: str) -> str:
    key = str(text).strip().lower()
    if len(key) < 8 or any(c not in "0123456789abcdef" for c in key):
        raise invalid_parameter("sha256", "a file hash (at least 8 hex digits)", text)
    rows = _names(conn, "SELECT sha256 FROM files WHERE sha256 >= ? AND sha256 < ? LIMIT 2", (key, key + "g"))
    if not rows:
        raise NotInWorkspace(f"No stored file with hash {key}.")
    if len(rows) > 1:
        raise UsageError(f"The hash prefix {key} matches several files; give more digits.")
    return rows[0]


def _file_record(conn: sqlite3.Connection, sha: str) -> StoredFile:
    row = conn.execute("SELECT sha256, name, size, stored_at FROM files WHERE sha256 = ?", (sha,)).fetchone()
    if row is None:
        raise NotInWorkspace(f"No stored file with hash {sha}.")
    return StoredFile(*row)


def _require_file(conn: sqlite3.Connection, sha: str) -> None:
    if conn.execute("SELECT 1 FROM files WHERE sha256 = ?", (sha,)).fetchone() is None:
        raise NotInWorkspace(f"The file {sha[:12]} is not stored in this workspace; store it with put_file first.")


def _read_file(conn: sqlite3.Connection, sha: str) -> bytes:
    row = conn.execute("SELECT size FROM files WHERE sha256 = ?", (sha,)).fetchone()
    if row is None:
        raise NotInWorkspace(f"No stored file with hash {sha}.")
    data = b"".join(r[0] for r in conn.execute("SELECT data FROM file_chunks WHERE sha256 = ? ORDER BY seq", (sha,)))
    if len(data) != row[0] or _sha256(data) != sha:
        raise WorkspaceCorrupt(f"The stored file {sha[:12]} does not match its hash; the workspace is damaged.")
    return data


# ----------------------------------------------------------------------------- helpers: label sets


def _missing(value: object) -> bool:
    if value is None:
        return True
    try:
        return bool(pd.isna(value))
    except (TypeError, ValueError):
        return False


def _field_value(name: str, value: object) -> object:
    return bool(value) if name == "blind" else str(value)


def _query_field_map(info: pd.DataFrame) -> dict[str, dict[str, object]]:
    """``{query: {field: value}}`` for the non-empty per-query fields."""
    fields = [f for f in QUERY_FIELDS if f in info.columns]
    out: dict[str, dict[str, object]] = {}
    if not fields:
        return out
    for query, values in zip(info.index.astype(str), info[fields].itertuples(index=False, name=None)):
        kept = {f: _field_value(f, v) for f, v in zip(fields, values) if not _missing(v)}
        if kept:
            out[query] = kept
    return out


@dataclass(frozen=True)
class _LabelsPayload:
    """A label set as the workspace stores it: normalised JSONL in the set's own row order.

    ``content_id`` ignores row order (sorted judgments and per-query fields), so the same set
    uploaded in another order is the same version.
    """

    content: bytes
    sha256: str
    content_id: str
    fingerprint: str
    n_queries: int
    n_judgments: int

    @classmethod
    def build(cls, labels: LabelSet) -> "_LabelsPayload":
        judgments = labels.judgments
        fields = _query_field_map(labels.query_info)
        queries = judgments["query"].astype(str).tolist()
        docs = judgments["doc_id"].astype(str).tolist()
        grades = judgments["grade"].astype(float).tolist()
        lines, seen = [], set()
        for query, doc, grade in zip(queries, docs, grades):
            record: dict[str, object] = {"query": query, "doc_id": doc, "grade": grade}
            if query not in seen:
                seen.add(query)
                record.update(fields.get(query, {}))
            lines.append(json.dumps(record, ensure_ascii=False))
        content = ("\n".join(lines) + "\n").encode("utf-8")
        pairs = sorted(f"{q}\t{d}\t{g:g}" for q, d, g in zip(queries, docs, grades))
        identity = json.dumps({"judgments": pairs, "fields": sorted(fields.items())}, ensure_ascii=False,
                              sort_keys=True, default=str)
        return cls(content, _sha256(content), _sha256(identity.encode("utf-8")), labels.fingerprint,
                   labels.n_queries, len(judgments))


def _row(conn: sqlite3.Connection, sql: str, params: Sequence = ()) -> dict | None:
    cursor = conn.execute(sql, tuple(params))
    found = cursor.fetchone()
    if found is None:
        return None
    return dict(zip([d[0] for d in cursor.description], found))


def _set_id(conn: sqlite3.Connection, name: str, location: Path) -> int:
    row = conn.execute("SELECT id FROM label_sets WHERE name = ?", (name,)).fetchone()
    if row is None:
        raise NotInWorkspace(f"No label set named {name!r} in the workspace {location}. "
                             f"{_known('Label sets', _names(conn, 'SELECT name FROM label_sets ORDER BY name'))}")
    return row[0]


def _latest_version_row(conn: sqlite3.Connection, name: str) -> dict | None:
    return _row(conn, """SELECT v.* FROM label_versions v JOIN label_sets s ON s.id = v.set_id
                         WHERE s.name = ? ORDER BY v.version DESC LIMIT 1""", (name,))


def _version_row(conn: sqlite3.Connection, name: str, version: int | None, location: Path) -> dict:
    set_id = _set_id(conn, name, location)
    if version is None:
        return _row(conn, "SELECT * FROM label_versions WHERE set_id = ? ORDER BY version DESC LIMIT 1", (set_id,))
    row = _row(conn, "SELECT * FROM label_versions WHERE set_id = ? AND version = ?", (set_id, int(version)))
    if row is None:
        versions = _names(conn, "SELECT version FROM label_versions WHERE set_id = ? ORDER BY version", (set_id,))
        raise NotInWorkspace(f"Label set {name!r} has no version {version}; versions are: {', '.join(versions)}.")
    return row


def _version_by_id(conn: sqlite3.Connection, version_id: int) -> LabelVersion:
    row = _row(conn, """SELECT v.*, s.name FROM label_versions v JOIN label_sets s ON s.id = v.set_id
                        WHERE v.id = ?""", (version_id,))
    if row is None:
        raise NotInWorkspace(f"No label-set version with id {version_id}.")
    return LabelVersion(id=row["id"], name=row["name"], version=row["version"], fingerprint=row["fingerprint"],
                        n_queries=row["n_queries"], n_judgments=row["n_judgments"], change=row["change"],
                        note=row["note"], created_at=row["created_at"], content_sha256=row["content_sha256"],
                        source_sha256=row["source_sha256"], source_name=row["source_name"],
                        parent_version=row["parent_version"])


def _ensure_version(conn: sqlite3.Connection, set_name: str, payload: _LabelsPayload, file: StoredFile | None,
                    note: str | None, *, change: str | None = None, parent: int | None = None) -> tuple[int, bool]:
    """The version of ``set_name`` with this content, added (and the set made) when new."""
    row = conn.execute("SELECT id FROM label_sets WHERE name = ?", (set_name,)).fetchone()
    if row is None:
        set_id = conn.execute("INSERT INTO label_sets (name, created_at) VALUES (?, ?)", (set_name, _now())).lastrowid
    else:
        set_id = row[0]
    found = conn.execute("SELECT id FROM label_versions WHERE set_id = ? AND content_id = ?",
                         (set_id, payload.content_id)).fetchone()
    if found:
        return found[0], False
    if file is not None:
        _require_file(conn, file.sha256)
    _store_file(conn, payload.sha256, len(payload.content), f"{set_name}.labels.jsonl", lambda: iter([payload.content]))
    latest = conn.execute("SELECT MAX(version) FROM label_versions WHERE set_id = ?", (set_id,)).fetchone()[0] or 0
    version = latest + 1
    if change is None:
        change = "first version" if version == 1 else "new content uploaded"
        if file is not None:
            change += f" from {file.name}"
    cursor = conn.execute(
        "INSERT INTO label_versions (set_id, version, fingerprint, content_id, content_sha256, source_sha256, "
        "source_name, parent_version, n_queries, n_judgments, change, note, created_at) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (set_id, version, payload.fingerprint, payload.content_id, payload.sha256, file.sha256 if file else None,
         file.name if file else None, parent if parent is not None else (latest or None), payload.n_queries,
         payload.n_judgments, change, note, _now()))
    return cursor.lastrowid, True


def _cases_table(cases: Iterable[Case | Mapping] | LabelSet) -> tuple[pd.DataFrame, dict[str, dict[str, object]]]:
    """Cases as judgments (query, doc_id, grade) and per-query fields."""
    if isinstance(cases, LabelSet):
        return cases.judgments[["query", "doc_id", "grade"]].copy(), _query_field_map(cases.query_info)
    if isinstance(cases, (Case, Mapping)):
        cases = [cases]
    rows: list[tuple[str, str, float]] = []
    fields: dict[str, dict[str, object]] = {}
    for number, case in enumerate(cases, start=1):
        if isinstance(case, Mapping):
            unknown = set(case) - {"query", "relevant", "query_text", "source", "grade"}
            if unknown or "query" not in case or "relevant" not in case:
                raise invalid_parameter(f"cases[{number}]", "a dict with 'query' and 'relevant' and optionally "
                                        "'query_text', 'source', 'grade'", dict(case))
            relevant = case["relevant"]
            case = Case(query=case["query"], relevant=(relevant,) if isinstance(relevant, str) else tuple(relevant),
                        query_text=case.get("query_text"), source=case.get("source", "production_miss"),
                        grade=case.get("grade", 1.0))
        if not isinstance(case, Case):
            raise invalid_parameter(f"cases[{number}]", "a Case or a dict", type(case).__name__)
        query = str(case.query) if case.query is not None else ""
        if not query.strip():
            raise invalid_parameter(f"cases[{number}].query", "a non-empty query id", case.query)
        relevant = (case.relevant,) if isinstance(case.relevant, str) else tuple(case.relevant)
        docs = [str(d) for d in relevant if str(d).strip()]
        if not docs:
            raise invalid_parameter(f"cases[{number}].relevant", "at least one relevant doc id", case.relevant)
        grade = case.grade
        if isinstance(grade, bool) or not isinstance(grade, (int, float, np.integer, np.floating)) \
                or not math.isfinite(float(grade)):
            raise invalid_parameter(f"cases[{number}].grade", "a finite number", grade)
        rows.extend((query, doc, float(grade)) for doc in docs)
        given = {f: str(v) for f, v in (("query_text", case.query_text), ("source", case.source)) if not _missing(v)}
        if given:
            fields.setdefault(query, {}).update(given)
    if not rows:
        raise UsageError("No cases to add: give at least one query with its relevant doc ids.")
    return pd.DataFrame(rows, columns=["query", "doc_id", "grade"]), fields


def _merge_cases(base: LabelSet, judgments: pd.DataFrame, fields: dict[str, dict[str, object]],
                 name: str) -> tuple[LabelSet, str | None]:
    """``base`` plus the cases; the change in words, or None when nothing changed."""
    old = base.judgments[["query", "doc_id", "grade"]].reset_index(drop=True)
    new = judgments.drop_duplicates(["query", "doc_id"], keep="last").reset_index(drop=True)
    old_key = (old["query"] + "\x00" + old["doc_id"]).to_numpy(dtype=object)
    new_key = (new["query"] + "\x00" + new["doc_id"]).to_numpy(dtype=object)
    new_grade = pd.Series(new["grade"].to_numpy(dtype=np.float64), index=new_key)
    hit = pd.Index(new_key).get_indexer(old_key) >= 0
    updated = old.copy()
    updated.loc[hit, "grade"] = new_grade.reindex(old_key[hit]).to_numpy()
    n_regraded = int((updated["grade"].to_numpy() != old["grade"].to_numpy()).sum())
    added = new[pd.Index(old_key).get_indexer(new_key) < 0]
    merged = pd.concat([updated, added], ignore_index=True)
    n_new_queries = len(set(added["query"]) - set(old["query"]))

    info = _query_field_map(base.query_info)
    known = set(old["query"])
    n_fields = 0
    for query, given in fields.items():
        current = info.setdefault(query, {})
        for key, value in given.items():
            if current.get(key) != value:
                current[key] = value
                n_fields += query in known  # fields of a new query come with it, not as a change
    if not len(added) and not n_regraded and not n_fields:
        return base, None
    queries = pd.unique(merged["query"].to_numpy(dtype=object))
    columns = [f for f in QUERY_FIELDS if any(f in v for v in info.values())]
    frame = pd.DataFrame({c: [info.get(q, {}).get(c) for q in queries] for c in columns},
                         index=pd.Index(queries, name="query"), dtype=object)
    parts = []
    if len(added):
        parts.append(f"added {plural(n_new_queries, 'query', 'queries')} and {plural(len(added), 'judgment')}")
    if n_regraded:
        parts.append(f"changed {plural(n_regraded, 'grade')}")
    if n_fields:
        parts.append(f"changed {plural(n_fields, 'query field')}")
    return LabelSet(name=name, judgments=merged, query_info=frame), "; ".join(parts)


# ----------------------------------------------------------------------------- helpers: runs


@dataclass(frozen=True)
class _RunPayload:
    """A run as the workspace stores it: metadata, the file it was read from (or a table of it)."""

    key: str
    name: str
    model: str
    line: str
    price_per_mtok: float | None
    dims: int | None
    index_bytes: int | None
    file_sha256: str
    file_name: str
    format: str | None
    n_queries: int
    n_rows: int
    content: bytes | None

    @classmethod
    def build(cls, run: Run, file: StoredFile | None, line: str | None, format: str | None) -> "_RunPayload":
        if file is None:
            buffer = io.BytesIO()
            table = run.to_frame()
            if table["score"].isna().any():  # a list-ordered run has no scores: rank alone says the order
                table = table.drop(columns="score")
            table.to_parquet(buffer, index=False)
            content = buffer.getvalue()
            sha, file_name, format = _sha256(content), f"{run.name}.parquet", "parquet"
        else:
            if not isinstance(file, StoredFile):
                raise invalid_parameter("file", "a StoredFile (from Workspace.put_file)", type(file).__name__)
            content, sha, file_name = None, file.sha256, file.name
        line = run.model if line is None else _check_name(line, "line")
        meta = {"name": run.name, "model": run.model, "line": line, "price_per_mtok": run.price_per_mtok,
                "dims": run.dims, "index_bytes": run.index_bytes, "file": sha, "format": format}
        return cls(_key(meta), run.name, run.model, line, run.price_per_mtok, run.dims, run.index_bytes, sha,
                   file_name, format, run.n_queries, run.n_rows, content)


def _ensure_run(conn: sqlite3.Connection, payload: _RunPayload) -> tuple[int, bool]:
    found = conn.execute("SELECT id FROM runs WHERE key = ?", (payload.key,)).fetchone()
    if found:
        return found[0], False
    if payload.content is not None:
        _store_file(conn, payload.file_sha256, len(payload.content), payload.file_name, lambda: iter([payload.content]))
    else:
        _require_file(conn, payload.file_sha256)
    cursor = conn.execute(
        "INSERT INTO runs (key, name, model, line, price_per_mtok, dims, index_bytes, file_sha256, file_name, format, "
        "n_queries, n_rows, uploaded_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (payload.key, payload.name, payload.model, payload.line, payload.price_per_mtok, payload.dims,
         payload.index_bytes, payload.file_sha256, payload.file_name, payload.format, payload.n_queries,
         payload.n_rows, _now()))
    return cursor.lastrowid, True


def _run_by_id(conn: sqlite3.Connection, run_id: int) -> StoredRun:
    row = _row(conn, "SELECT * FROM runs WHERE id = ?", (run_id,))
    if row is None:
        raise NotInWorkspace(f"No run with id {run_id} in the workspace. "
                             f"{_known('Runs', _names(conn, 'SELECT id FROM runs ORDER BY id'))}")
    return StoredRun(id=row["id"], name=row["name"], model=row["model"], line=row["line"],
                     price_per_mtok=row["price_per_mtok"], dims=row["dims"], index_bytes=row["index_bytes"],
                     file_sha256=row["file_sha256"], file_name=row["file_name"], format=row["format"],
                     n_queries=row["n_queries"], n_rows=row["n_rows"], uploaded_at=row["uploaded_at"])


def _load_run(record: StoredRun, data: bytes) -> Run:
    return read_run(Source(record.file_name, data), format=record.format, name=record.name, model=record.model,
                    price_per_mtok=record.price_per_mtok, dims=record.dims, index_bytes=record.index_bytes,
                    sidecar=False)


# ----------------------------------------------------------------------------- helpers: evaluations


def _outcome_rows(result, k: int) -> list[tuple]:
    """Per evaluated query: n_relevant, first relevant rank (None if none returned), hit@k, recall@k, rr, in_run."""
    ranked = result.ranked
    first = ranked.first_relevant
    hit = result.score(f"hit@{k}")
    recall = result.score(f"recall@{k}")
    rr = result.score("mrr")
    return [(str(q), int(n), int(f) if f > 0 else None, int(h > 0), float(r), float(x), int(bool(i)))
            for q, n, f, h, r, x, i in zip(result.queries, ranked.index.n_relevant, first, hit, recall, rr,
                                           ranked.in_run)]


def _evaluation_by_id(conn: sqlite3.Connection, evaluation_id: int, location: Path) -> SavedEvaluation:
    row = _row(conn, "SELECT * FROM evaluations WHERE id = ?", (evaluation_id,))
    if row is None:
        raise NotInWorkspace(f"No evaluation {evaluation_id} in the workspace {location}. "
                             f"{_known('Evaluations', _names(conn, 'SELECT id FROM evaluations ORDER BY id'))}")
    version = _version_by_id(conn, row["label_version_id"])
    run_ids = [r[0] for r in conn.execute(
        "SELECT run_id FROM evaluation_runs WHERE evaluation_id = ? ORDER BY position", (evaluation_id,))]
    runs = tuple(_run_by_id(conn, run_id) for run_id in run_ids)
    summary = _frame(conn, """
        SELECT r.name AS run, r.model, m.metric, m.k, m.mean, m.ci_low, m.ci_high, m.n, m.ci_method, m.reliable, m.note
        FROM metrics m JOIN runs r ON r.id = m.run_id
        JOIN evaluation_runs er ON er.evaluation_id = m.evaluation_id AND er.run_id = m.run_id
        WHERE m.evaluation_id = ? ORDER BY er.position, m.rowid""", (evaluation_id,))
    summary["k"] = summary["k"].astype("Int64")
    summary["reliable"] = summary["reliable"].astype(bool)
    summary["note"] = summary["note"].fillna("")
    summary["labels"] = version.name
    summary["labels_version"] = version.version
    summary["fingerprint"] = version.fingerprint
    summary["level"] = row["level"]
    ks = tuple(json.loads(row["ks"]))
    settings = {"k": list(ks), "chosen_k": row["k"], "min_grade": row["min_grade"],
                "zero_relevant": row["zero_relevant"], "level": row["level"], "seed": row["seed"],
                "n_resamples": row["n_resamples"]}
    warnings = tuple(EvalWarning(w["code"], w["message"], w["count"]) for w in json.loads(row["warnings"]))
    return SavedEvaluation(id=row["id"], created_at=row["created_at"], labels=version, runs=runs, k=row["k"], ks=ks,
                           settings=settings, n_queries=row["n_queries"], warnings=warnings,
                           evalcore_version=row["evalcore_version"], note=row["note"],
                           labels_file_sha256=row["labels_file_sha256"], summary=summary)


def _line_labels(conn: sqlite3.Connection, line: str, labels: str | None, location: Path) -> str:
    """The label set a line's views use: the one given, else that of the line's latest evaluation."""
    if conn.execute("SELECT 1 FROM runs WHERE line = ? LIMIT 1", (line,)).fetchone() is None:
        raise NotInWorkspace(f"No model line named {line!r} in the workspace {location}. "
                             f"{_known('Lines', _names(conn, 'SELECT DISTINCT line FROM runs ORDER BY line'))}")
    if labels is not None:
        _set_id(conn, labels, location)
        return labels
    row = conn.execute("""
        SELECT s.name FROM evaluations e JOIN evaluation_runs er ON er.evaluation_id = e.id
        JOIN runs r ON r.id = er.run_id JOIN label_versions v ON v.id = e.label_version_id
        JOIN label_sets s ON s.id = v.set_id WHERE r.line = ? ORDER BY e.id DESC LIMIT 1""", (line,)).fetchone()
    if row is None:
        raise NotInWorkspace(f"The model line {line!r} has no saved evaluation yet.")
    return row[0]


# ----------------------------------------------------------------------------- helpers: deleting


@dataclass(frozen=True)
class _Plan:
    deletion: Deletion
    evaluations: tuple[int, ...] = ()
    set_id: int | None = None
    labels: str | None = None
    run_id: int | None = None
    file: str | None = None
    files: tuple[str, ...] = ()


def _ids(conn: sqlite3.Connection, sql: str, params: Sequence = ()) -> list:
    return [row[0] for row in conn.execute(sql, tuple(params))]


def _in(values: Sequence) -> str:
    return "(" + ",".join("?" * len(values)) + ")"


def _plan_delete(conn: sqlite3.Connection, kind: str, key: str | int, location: Path) -> _Plan:
    if kind == "labels":
        name = str(key)
        set_id = _set_id(conn, name, location)
        versions = _ids(conn, "SELECT id FROM label_versions WHERE set_id = ?", (set_id,))
        evaluations = _ids(conn, f"SELECT id FROM evaluations WHERE label_version_id IN {_in(versions)}", versions)
        outcomes = conn.execute(f"SELECT COUNT(*) FROM outcomes WHERE evaluation_id IN {_in(evaluations)}",
                                evaluations).fetchone()[0]
        ledger = conn.execute("SELECT COUNT(*) FROM ledger WHERE labels = ?", (name,)).fetchone()[0]
        files = _ids(conn, "SELECT content_sha256 FROM label_versions WHERE set_id = ? UNION "
                           "SELECT source_sha256 FROM label_versions WHERE set_id = ?", (set_id, set_id))
        files += _ids(conn, f"SELECT labels_file_sha256 FROM evaluations WHERE id IN {_in(evaluations)}", evaluations)
        text = (f"label set {name!r}: {plural(len(versions), 'version')}, {plural(len(evaluations), 'evaluation')} "
                f"({plural(outcomes, 'per-query outcome')}) and {plural(ledger, 'ledger entry', 'ledger entries')}")
        counts = {"versions": len(versions), "evaluations": len(evaluations), "outcomes": outcomes, "ledger": ledger}
        return _Plan(Deletion(kind, name, text, counts), tuple(evaluations), set_id=set_id, labels=name,
                     files=tuple(f for f in files if f))
    if kind == "run":
        try:
            run_id = int(key)
        except (TypeError, ValueError):
            raise invalid_parameter("run", "a run id (a number; see `evalcore workspace list runs`)", key) from None
        run = _run_by_id(conn, run_id)
        evaluations = _ids(conn, "SELECT evaluation_id FROM evaluation_runs WHERE run_id = ?", (run_id,))
        emptied = _ids(conn, f"""SELECT evaluation_id FROM evaluation_runs WHERE evaluation_id IN {_in(evaluations)}
                                 GROUP BY evaluation_id HAVING COUNT(*) = 1""", evaluations)
        outcomes = conn.execute("SELECT COUNT(*) FROM outcomes WHERE run_id = ?", (run_id,)).fetchone()[0]
        text = (f"run #{run.id} {run.name} (model {run.model}, line {run.line}): its results in "
                f"{plural(len(evaluations), 'evaluation')} ({plural(outcomes, 'per-query outcome')})")
        if emptied:
            text += f"; {plural(len(emptied), 'evaluation')} left without runs go too"
        counts = {"evaluations": len(evaluations), "emptied_evaluations": len(emptied), "outcomes": outcomes}
        return _Plan(Deletion(kind, str(run_id), text, counts), tuple(emptied), run_id=run_id,
                     files=(run.file_sha256,))
    if kind == "evaluation":
        saved = _evaluation_by_id(conn, int(key), location)
        outcomes = conn.execute("SELECT COUNT(*) FROM outcomes WHERE evaluation_id = ?", (saved.id,)).fetchone()[0]
        text = (f"evaluation {saved.id} (labels {saved.labels.ref}, runs {', '.join(r.name for r in saved.runs)}): "
                f"{plural(outcomes, 'per-query outcome')}")
        return _Plan(Deletion(kind, str(saved.id), text, {"evaluations": 1, "outcomes": outcomes}), (saved.id,))
    sha = _resolve_sha(conn, str(key))
    record = _file_record(conn, sha)
    users = [f"run #{i}" for i in _ids(conn, "SELECT id FROM runs WHERE file_sha256 = ?", (sha,))]
    users += [f"label set {n} v{v}" for n, v in conn.execute(
        "SELECT s.name, v.version FROM label_versions v JOIN label_sets s ON s.id = v.set_id "
        "WHERE v.content_sha256 = ? OR v.source_sha256 = ?", (sha, sha))]
    users += [f"evaluation {i}" for i in _ids(conn, "SELECT id FROM evaluations WHERE labels_file_sha256 = ?", (sha,))]
    if users:
        raise UsageError(f"The file {sha[:12]} ({record.name}) is still used by {', '.join(users)}; delete those "
                         "first.")
    text = f"file {sha[:12]} {record.name} ({record.size:,} bytes)"
    return _Plan(Deletion(kind, sha, text, {"files": 1, "bytes": record.size}), file=sha)


def _execute_delete(conn: sqlite3.Connection, plan: _Plan) -> None:
    kind = plan.deletion.kind
    if plan.evaluations:
        conn.execute(f"DELETE FROM evaluations WHERE id IN {_in(plan.evaluations)}", plan.evaluations)
    if kind == "labels":
        conn.execute("DELETE FROM label_versions WHERE set_id = ?", (plan.set_id,))
        conn.execute("DELETE FROM label_sets WHERE id = ?", (plan.set_id,))
        for table in ("ledger", "ledger_tags", "ledger_log"):
            conn.execute(f"DELETE FROM {table} WHERE labels = ?", (plan.labels,))
    elif kind == "run":
        conn.execute("DELETE FROM evaluation_runs WHERE run_id = ?", (plan.run_id,))
        conn.execute("DELETE FROM runs WHERE id = ?", (plan.run_id,))
    elif kind == "file":
        conn.execute("DELETE FROM files WHERE sha256 = ?", (plan.file,))
    for sha in set(plan.files):
        used = conn.execute(
            "SELECT EXISTS(SELECT 1 FROM runs WHERE file_sha256 = ?) OR EXISTS(SELECT 1 FROM label_versions WHERE "
            "content_sha256 = ? OR source_sha256 = ?) OR EXISTS(SELECT 1 FROM evaluations WHERE labels_file_sha256 = ?)",
            (sha, sha, sha, sha)).fetchone()[0]
        if not used:
            conn.execute("DELETE FROM files WHERE sha256 = ?", (sha,))
