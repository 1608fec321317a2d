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
workspace read-only: immutable while no writer has it open, else ``mode=ro`` through the writer's own files, so
nothing is created beside it; no WAL switch, no upgrade; every write raises `WorkspaceReadOnly` naming the folder.
Opening with write access upgrades an older workspace (`upgrade`), never one whose record does not verify.
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
from .chain import chain_heads, chain_problems, find_event
from .manifest_rows import remove_imported
from .schema import _FROZEN_MARK, DB_NAME, SCHEMA_VERSION, layout_problems
from .seals import seal_problems, sealed_count, watch
from .upgrade import run_steps

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
        self._open: sqlite3.Connection | None = None  # the connection of the write transaction in progress, if any
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
        """A read-only connection that creates nothing beside the file: no ``-wal`` or ``-shm``, no WAL switch, no
        schema upgrade.

        SQLite opening a WAL file ``mode=ro`` in a folder it can write makes ``-wal`` and ``-shm`` and leaves them
        behind. So while no ``-wal`` file is there (no connection has the workspace open for writing, and the last
        one folded every change into the file) it is read as immutable, and reopened when the file changes or a
        ``-wal`` appears (`_connection`; a read the file changed under is read again, `_read_immutable`). While a
        writer's ``-wal`` is there it is read ``mode=ro`` through the writer's own files.
        """
        self._immutable = None
        if not self.path.is_file():
            raise WorkspaceReadOnly(f"The workspace folder {self.location} is read-only ({self._read_only}) and holds "
                                    f"no workspace yet ({DB_NAME}): there is nothing to read and nothing can be saved.")
        uri = self.path.absolute().as_uri() + "?mode=ro"
        wal, shm = self.path.with_name(DB_NAME + "-wal"), self.path.with_name(DB_NAME + "-shm")
        holds_changes = wal.exists() and wal.stat().st_size > 0
        conn = None
        if wal.exists() and shm.exists():  # a writer's files: read through them, making none
            try:
                conn = self._read_only_probe(uri)
            except sqlite3.OperationalError as exc:
                if not _needs_shm(exc) or holds_changes:
                    raise (self._wal_unreadable(wal) if _needs_shm(exc) else self._error(exc)) from None
        elif holds_changes:  # mode=ro would make the index beside it
            raise self._wal_unreadable(wal)
        if conn is None:
            state = _file_state(self.path)
            try:
                conn = self._read_only_probe(uri + "&immutable=1")
            except sqlite3.Error as exc:
                raise self._error(exc) from None
            self._immutable = state
        self._conn, self._pid = conn, os.getpid()
        return conn

    def _wal_unreadable(self, wal: Path) -> WorkspaceReadOnly:
        return WorkspaceReadOnly(
            f"The workspace folder {self.location} is read-only ({self._read_only}) and its latest changes are still "
            f"in {wal.name}, which SQLite reads only through an index file ({DB_NAME}-shm) it can write. Open it once "
            "with write access (any evalcore command) to fold them in.")

    def _read_immutable(self, fn: Callable[[sqlite3.Connection], T], conn: sqlite3.Connection, tries: int = 0) -> T:
        """``fn`` on an immutable connection, read again on a fresh one when the file changed while it read (a writer
        that opened since may have folded changes into the file, unseen by an immutable reader)."""
        state = self._immutable
        try:
            conn.execute("BEGIN")
            try:
                result = fn(conn)
            finally:
                _rollback(conn)
        except sqlite3.Error as exc:
            if _file_state(self.path) == state or tries >= WRITE_ATTEMPTS:
                raise self._error(exc) from None
        else:
            if _file_state(self.path) == state or tries >= WRITE_ATTEMPTS:
                return result
        conn = self._connection()  # the file changed while it read: reopened
        return self._read_immutable(fn, conn, tries + 1) if self._immutable is not None else self.read(fn)

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
        if version > SCHEMA_VERSION:
            raise _newer(self.path, version)
        if version < SCHEMA_VERSION:
            self._upgrade(conn)
        watch(conn)

    def _upgrade(self, conn: sqlite3.Connection) -> None:
        """Make a new workspace, or bring an older one to `SCHEMA_VERSION`, in one transaction (`upgrade.run_steps`:
        refused, nothing changed, when its record does not verify or its version number was lowered)."""
        conn.execute("BEGIN IMMEDIATE")
        try:
            imported = run_steps(conn, self.location, self.path)
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

        Called from inside another ``write`` (the same thread), ``fn`` joins that transaction as a savepoint: it is
        undone alone when it raises, and stored only when the outer change commits (`atomic`).
        """
        with self._lock:
            if self._read_only is not None:
                raise self._refused()
            if self._open is not None:
                return self._nested(fn, self._open)
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
                    self._open = conn
                    try:
                        result = fn(conn)
                    finally:
                        self._open = None
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
            if self._open is not None:  # inside a write: read what it has written so far
                return fn(self._open)
            conn = self._connection()
            if self._immutable is not None:
                return self._read_immutable(fn, conn)
            try:
                conn.execute("BEGIN")
                try:
                    return fn(conn)
                finally:
                    _rollback(conn)
            except sqlite3.Error as exc:
                raise self._error(exc) from None

    def atomic(self, action: Callable[[], T]) -> T:
        """Run ``action`` (any number of this workspace's writes and reads) as one transaction: every change it makes
        is stored together, or none is (a change and the event that records it, for example). Retried whole while
        another writer holds the lock, so ``action`` must change nothing outside the workspace."""
        return self.write(lambda conn: action())

    @staticmethod
    def _nested(fn: Callable[[sqlite3.Connection], T], conn: sqlite3.Connection) -> T:
        conn.execute("SAVEPOINT nested")
        try:
            result = fn(conn)
        except BaseException:
            conn.execute("ROLLBACK TO nested")
            conn.execute("RELEASE nested")
            raise
        conn.execute("RELEASE nested")
        return result

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
        """Problems found (empty when sound): SQLite's integrity and foreign-key checks, every table, index and trigger
        against the layout evalcore makes (`schema.layout_problems`: missing, changed, or a trigger it does not make),
        the chained record of events and reveals (`chain.chain_problems`: the first row changed, removed or put in),
        every saved record against the digest of the event that sealed it (`seals.seal_problems`), and every stored
        file's size and SHA-256 against its record."""
        def read(conn):
            problems = [row[0] for row in conn.execute("PRAGMA integrity_check") if row[0] != "ok"]
            problems += [f"foreign key: {row}" for row in conn.execute("PRAGMA foreign_key_check")]
            problems += layout_problems(conn) + chain_problems(conn)
            try:
                problems += seal_problems(conn)
            except sqlite3.Error as exc:  # a table the records live in is missing or changed: named above
                problems.append(f"the sealed records cannot be checked ({exc})")
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

    def anchor(self) -> tuple[int, str] | None:
        """The newest event's id and full hash (None: no chained event): the one value to keep outside the workspace.
        Every event before it is chained to it, and the events seal the saved records, so it stands for the whole
        record: a later `find_anchor` that does not find it means the record was rewritten or its end removed."""
        def read(conn):
            newest = conn.execute("SELECT id, hash FROM events ORDER BY id DESC LIMIT 1").fetchone() \
                if chain_heads(conn).get("events") else None
            return (int(newest[0]), str(newest[1])) if newest and newest[1] else None
        return self.read(read)

    def find_anchor(self, noted: str) -> int | None:
        """The id of the event whose hash is ``noted`` (or starts with it); None when the record no longer holds it."""
        return self.read(lambda conn: find_event(conn, noted))

    def sealed_records(self) -> int:
        """How many saved records the events seal now (`seals`)."""
        return self.read(sealed_count)

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
    """The file's modification time and size, and those of the WAL file beside it, if any (None: gone)."""
    try:
        stat = path.stat()
    except OSError:
        return None
    try:
        wal = path.with_name(DB_NAME + "-wal").stat()
    except OSError:
        return stat.st_mtime_ns, stat.st_size, None
    return stat.st_mtime_ns, stat.st_size, (wal.st_mtime_ns, wal.st_size)


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
