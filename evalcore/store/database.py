"""The workspace's SQLite connection and the one way in and out of it: `Database.write` and `Database.read`.

Every change runs inside one ``BEGIN IMMEDIATE`` transaction (retried with backoff while another writer holds
the lock) and commits whole or not at all; every read is one consistent snapshot. SQLite errors come out as
the typed `WorkspaceError` family. The small row helpers every store module shares (`_frame`, `_row`, `_now`,
...) live here too, so the modules built on top import them from one place.

The folder is ``EVALCORE_WORKSPACE`` when set, else ``$XDG_DATA_HOME/evalcore`` (by default
``~/.local/share/evalcore``; ``%LOCALAPPDATA%\\evalcore`` on Windows). The file is
``workspace.sqlite`` in WAL mode: readers never wait for a writer, a killed process leaves
the last committed state.

A folder (or file) the user cannot write, ``EVALCORE_WORKSPACE_READONLY=1`` or ``read_only=True`` opens the
workspace read-only: SQLite's ``mode=ro``, nothing created, no WAL switch; every write raises
`WorkspaceReadOnly` naming the folder.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import sqlite3
import threading
import time
from dataclasses import replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable, Sequence, TypeVar

import pandas as pd

from ..access import login_name
from ..errors import (
    FrozenError,
    WorkspaceBusy,
    WorkspaceCorrupt,
    WorkspaceError,
    WorkspaceReadOnly,
    invalid_parameter,
)
from ..safe_text import has_control
from .chain import chain_heads, chain_problems
from .chain import upgrade as upgrade_to_chain
from .manifest_rows import import_legacy_manifests, remove_imported
from .schema import (
    CHUNKS_VERSION,
    _chunks_statements,
    _FROZEN_MARK,
    CHAIN_VERSION,
    DB_NAME,
    SCHEMA_VERSION,
    _events_statements,
    _integrity_statements,
    _manifests_statements,
    _schema_statements,
    columns_of,
    missing_objects,
)

T = TypeVar("T")

ENV_VAR = "EVALCORE_WORKSPACE"
"""Environment variable naming the workspace folder."""

BUSY_TIMEOUT_S = 10.0
"""How long one attempt waits for another writer's lock before retrying."""

WRITE_ATTEMPTS = 5

READ_ONLY_ENV = "EVALCORE_WORKSPACE_READONLY"
"""Set to 1 (or true, yes, on) to open every workspace read-only, whatever its permissions."""


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


# ----------------------------------------------------------------------------- the connection


class Database:
    """The connection to one workspace file, its transactions and its whole-store checks.

    Safe to share between threads (one lock serialises use of the connection) and to open from
    several processes at once (SQLite's locks; writers queue, readers never wait). A forked
    child opens its own connection on first use.
    """

    def __init__(self, location: str | os.PathLike | None = None, *, busy_timeout: float = BUSY_TIMEOUT_S,
                 attempts: int = WRITE_ATTEMPTS, read_only: bool | None = None) -> None:
        self.location = Path(location).expanduser() if location is not None else default_location()
        self.path = self.location / DB_NAME
        self._busy_timeout = float(busy_timeout)
        self._attempts = max(1, int(attempts))
        self._lock = threading.RLock()
        self._conn: sqlite3.Connection | None = None
        self._pid: int | None = None
        self._immutable: tuple | None = None  # the file's state when read as immutable (see _open_read_only)
        self._read_only = _read_only_reason(self.location, self.path, read_only)
        self._connection()

    @property
    def read_only(self) -> bool:
        """True when this workspace was opened read-only (reads work, every write raises `WorkspaceReadOnly`)."""
        return self._read_only is not None

    def close(self) -> None:
        with self._lock:
            if self._conn is not None and self._pid == os.getpid():
                self._conn.close()
            self._conn = None

    def _connection(self) -> sqlite3.Connection:
        """The open connection (a new one after a fork or `close`, or when an immutable read's file changed)."""
        if self._conn is not None and self._pid == os.getpid():
            if self._immutable is None or self._immutable == _file_state(self.path):
                return self._conn
            self.close()
        if self.location.exists() and not self.location.is_dir():
            raise WorkspaceError(f"The workspace {self.location} is a file, not a folder; set {ENV_VAR} to a folder.")
        if self._read_only is not None:
            return self._open_read_only()
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
        except WorkspaceReadOnly:  # SQLite could not write what the permissions seemed to allow: read it as it is
            self._conn = None
            conn.close()
            self._read_only = "SQLite cannot write to it"
            return self._open_read_only()
        except BaseException:
            self._conn = None
            conn.close()
            raise
        return conn

    def _open_read_only(self) -> sqlite3.Connection:
        """A ``mode=ro`` connection: nothing created, no WAL switch, no schema upgrade.

        A WAL file needs its ``-shm`` index; when neither exists and the folder is read-only (the last writer closed
        cleanly, so the main file holds everything) the file is read as immutable, and reopened when it changes.
        """
        self._immutable = None
        if not self.path.is_file():
            raise WorkspaceReadOnly(f"The workspace folder {self.location} is read-only ({self._read_only}) and holds "
                                    f"no workspace yet ({DB_NAME}): there is nothing to read and nothing can be saved.")
        uri = self.path.absolute().as_uri() + "?mode=ro"
        try:
            conn = self._read_only_probe(uri)
        except sqlite3.OperationalError as exc:
            if not _needs_shm(exc):
                raise self._error(exc) from None
            wal = self.path.with_name(DB_NAME + "-wal")
            if wal.exists() and wal.stat().st_size > 0:
                raise WorkspaceReadOnly(
                    f"The workspace folder {self.location} is read-only ({self._read_only}) and its latest changes "
                    f"are still in {wal.name}, which SQLite can only read with write access to the folder. Open it "
                    "once with write access (any evalcore command) to fold them in.") from None
            state = _file_state(self.path)
            try:
                conn = self._read_only_probe(uri + "&immutable=1")
            except sqlite3.Error as again:
                raise self._error(again) from None
            self._immutable = state
        self._conn, self._pid = conn, os.getpid()
        return conn

    def _read_only_probe(self, uri: str) -> sqlite3.Connection:
        """Open ``uri`` and check its schema version (a read); the connection refuses writes itself."""
        conn = sqlite3.connect(uri, uri=True, timeout=self._busy_timeout, isolation_level=None,
                               check_same_thread=False)
        try:
            conn.execute("PRAGMA query_only = ON")
            conn.execute("PRAGMA foreign_keys = ON")
            version = conn.execute("PRAGMA user_version").fetchone()[0]
        except BaseException:
            conn.close()
            raise
        if version == 0 or version > SCHEMA_VERSION:
            conn.close()
            if version == 0:
                raise WorkspaceReadOnly(f"The workspace folder {self.location} is read-only ({self._read_only}) and "
                                        f"its {DB_NAME} holds no workspace yet: there is nothing to read.")
            raise _newer(self.path, version)
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
            raise _newer(self.path, version)
        conn.execute("BEGIN IMMEDIATE")
        try:
            current = conn.execute("PRAGMA user_version").fetchone()[0]  # another process may have just made it
            if current == 0:
                for statement in _schema_statements():
                    conn.execute(statement)
            if current < 2:
                for statement in _integrity_statements():
                    conn.execute(statement)
            if current < 3:
                for statement in _events_statements():
                    conn.execute(statement)
            imported = []
            if current < 4:
                for statement in _manifests_statements():
                    conn.execute(statement)
                imported = import_legacy_manifests(conn, self.location) if current else []
            if current < CHAIN_VERSION:
                upgrade_to_chain(conn)
            if current < CHUNKS_VERSION:
                for statement in _chunks_statements(columns_of(conn)):
                    conn.execute(statement)
            if current < SCHEMA_VERSION:
                conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
            conn.execute("COMMIT")
        except BaseException:
            _rollback(conn)
            raise
        if imported:
            remove_imported(imported)

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

    # ------------------------------------------------------------------ reads and writes

    def write(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        """The one way to change the store: ``fn(conn)`` inside a ``BEGIN IMMEDIATE`` transaction.

        It commits when ``fn`` returns and rolls back when it raises, so a change is stored whole
        or not at all (a process killed halfway leaves the last committed state). While another
        writer holds the lock each attempt waits up to ``busy_timeout`` seconds, and the whole
        transaction is retried with backoff; ``fn`` must therefore only read and write through
        ``conn``. Raises `WorkspaceBusy` when every attempt timed out, `WorkspaceReadOnly` (before anything
        runs) on a read-only workspace.
        """
        with self._lock:
            if self._read_only is not None:
                raise self._refused()
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

    def _refused(self, reason: str | None = None) -> WorkspaceReadOnly:
        return WorkspaceReadOnly(f"The workspace folder {self.location} is read-only ({reason or self._read_only}): "
                                 f"reading works, but nothing can be saved, changed or deleted there. Use a folder you "
                                 f"can write to (--workspace or {ENV_VAR}), or ask for write access.")

    def _error(self, exc: sqlite3.Error) -> WorkspaceError:
        text = str(exc)
        if _is_read_only(exc, self.location):
            return self._refused("SQLite cannot write to it")
        if _is_busy(exc):
            return WorkspaceBusy(f"The workspace {self.path} is busy: another process held the write lock through "
                                 f"{self._attempts} attempts of {self._busy_timeout:g} s. Try again.")
        if _FROZEN_MARK in text:
            return FrozenError(f"Refused: {text.split(_FROZEN_MARK, 1)[1].strip()}.")
        if isinstance(exc, sqlite3.DatabaseError) and ("not a database" in text or "malformed" in text):
            return WorkspaceCorrupt(f"The workspace file {self.path} is damaged ({text}). Move it aside to start a "
                                    "new workspace, or restore it from a backup.")
        return WorkspaceError(f"Workspace {self.path}: {text}.")

    # ------------------------------------------------------------------ checks

    def verify(self) -> list[str]:
        """Problems found (empty when sound): SQLite's integrity and foreign-key checks, every table and trigger of
        the layout (`schema.missing_objects`), the chained record of events and reveals (`chain.chain_problems`:
        the first row changed, removed or put in), and every stored file's size and SHA-256 against its record."""
        def read(conn):
            problems = [row[0] for row in conn.execute("PRAGMA integrity_check") if row[0] != "ok"]
            problems += [f"foreign key: {row}" for row in conn.execute("PRAGMA foreign_key_check")]
            problems += missing_objects(conn) + chain_problems(conn)
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

    def record_heads(self) -> dict[str, tuple[int, str]]:
        """Per chained table (events, holdout reveals): its rows and newest hash (`chain.chain_heads`), to note
        elsewhere: only a comparison with it tells a rewrite of the whole chain, or rows appended at its end."""
        return self.read(chain_heads)

    def counts(self) -> dict[str, int]:
        """Rows per table: a cheap fingerprint of the whole store (tests compare it across a crash)."""
        tables = ("files", "file_chunks", "label_sets", "label_versions", "runs", "evaluations", "evaluation_runs",
                  "metrics", "outcomes", "ledger", "ledger_tags", "ledger_log")
        return self.read(lambda conn: {t: conn.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0] for t in tables})


# ----------------------------------------------------------------------------- helpers: read-only


def _read_only_reason(location: Path, path: Path, read_only: bool | None) -> str | None:
    """Why the workspace opens read-only, in words (None: read-write). An explicit ``read_only`` decides."""
    if read_only is not None:
        return "opened read-only" if read_only else None
    if os.environ.get(READ_ONLY_ENV, "").strip().lower() in {"1", "true", "yes", "on"}:
        return f"{READ_ONLY_ENV} is set"
    if location.is_dir() and not os.access(location, os.W_OK):
        return "you cannot write to it"
    if path.is_file() and not os.access(path, os.W_OK):
        return f"you cannot write to its {DB_NAME}"
    return None


def _is_read_only(exc: BaseException, location: Path) -> bool:
    """SQLite refused a write to a read-only file (or cannot open one in a folder it may not write)."""
    if not isinstance(exc, sqlite3.Error):
        return False
    name = getattr(exc, "sqlite_errorname", "") or ""
    if name == "SQLITE_READONLY_DBMOVED":
        return False
    if name.startswith("SQLITE_READONLY") or "attempt to write a readonly database" in str(exc):
        return True
    cannot_open = name.startswith("SQLITE_CANTOPEN") or "unable to open database file" in str(exc)
    return cannot_open and location.is_dir() and not os.access(location, os.W_OK)


def _needs_shm(exc: sqlite3.Error) -> bool:
    """A read-only open of a WAL file whose ``-shm`` index is missing and cannot be made."""
    name = getattr(exc, "sqlite_errorname", "") or ""
    return name in {"SQLITE_READONLY_DIRECTORY", "SQLITE_READONLY_CANTINIT", "SQLITE_CANTOPEN"} or \
        "readonly database" in str(exc) or "unable to open database file" in str(exc)


def _file_state(path: Path) -> tuple | None:
    """The file's modification time and size, and whether a WAL file sits beside it (None: gone)."""
    try:
        stat = path.stat()
    except OSError:
        return None
    return stat.st_mtime_ns, stat.st_size, path.with_name(DB_NAME + "-wal").exists()


def _newer(path: Path, version: int) -> WorkspaceError:
    return WorkspaceError(f"The workspace {path} was made by a newer evalcore (schema {version}; this one reads "
                          f"{SCHEMA_VERSION}). Upgrade evalcore.")


# ----------------------------------------------------------------------------- helpers: transactions


def _is_busy(exc: BaseException) -> bool:
    text = str(exc).lower()
    return isinstance(exc, sqlite3.OperationalError) and ("locked" in text or "busy" in text)


def _rollback(conn: sqlite3.Connection) -> None:
    if conn.in_transaction:
        try:
            conn.execute("ROLLBACK")
        except sqlite3.Error:  # the transaction is gone already (e.g. rolled back by SQLite itself)
            pass


def _backoff(attempt: int) -> None:
    time.sleep(min(1.0, 0.02 * 2 ** attempt) * (0.5 + random.random()))


# ----------------------------------------------------------------------------- helpers shared by the store's modules


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="microseconds")


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _key(value: object) -> str:
    return _sha256(json.dumps(value, sort_keys=True, separators=(",", ":"), default=str).encode("utf-8"))


def _frame(conn: sqlite3.Connection, sql: str, params: Sequence = ()) -> pd.DataFrame:
    cursor = conn.execute(sql, tuple(params))
    columns = [d[0] for d in cursor.description]
    return pd.DataFrame.from_records(cursor.fetchall(), columns=columns)


def _row(conn: sqlite3.Connection, sql: str, params: Sequence = ()) -> dict | None:
    cursor = conn.execute(sql, tuple(params))
    found = cursor.fetchone()
    if found is None:
        return None
    return dict(zip([d[0] for d in cursor.description], found))


def _names(conn: sqlite3.Connection, sql: str, params: Sequence = ()) -> list[str]:
    return [str(row[0]) for row in conn.execute(sql, tuple(params))]


def _known(what: str, names: list[str]) -> str:
    if not names:
        return f"{what}: none yet."
    shown = ", ".join(names[:20]) + (f" and {len(names) - 20} more" if len(names) > 20 else "")
    return f"{what}: {shown}."


def _replace_created(record: T, created: bool) -> T:
    return replace(record, created=created)


def _check_name(name: object, what: str) -> str:
    """A name recorded with a change (a label set, a line, a person), stripped: non-empty, and without a control
    character (`has_control`: a newline in a name would show a made-up line wherever the record is listed)."""
    if not isinstance(name, str) or not name.strip():
        raise invalid_parameter(what, "a non-empty name", name)
    if has_control(name):
        raise invalid_parameter(what, "a name without control characters (a newline, tab, escape or direction "
                                "override would forge or hide text where it is shown)", name)
    return name.strip()


def _who(who: str | None) -> str:
    """The person acting: given (`_check_name`), else the login name."""
    if who is not None and str(who).strip():
        return _check_name(str(who), "who")
    return login_name()
