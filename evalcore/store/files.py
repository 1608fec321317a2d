"""Stored files: the raw bytes of every upload, content-addressed by SHA-256 and kept before anything parses them.

The same bytes given twice are stored once, whatever their name. A file is split into blocks of `BLOCK_BYTES`, a
row each (no size limit, bounded memory per row), and its hash is checked on every read, so a damaged store says so
instead of returning other bytes.

A writer killed between storing a file and saving the record that uses it leaves an orphan: `remove_orphans`
removes stored files no record references once they are older than a grace period (`ORPHAN_GRACE_S`). A record is
a row of the workspace whose foreign key names the file (label version, run, evaluation, or a saved view's
manifest, behind the dashboard's ``?data=`` links): the database is asked, never a folder.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator

import pandas as pd

from ..errors import InputError, NotInWorkspace, UsageError, WorkspaceCorrupt, invalid_parameter
from ..readers.sources import Source, open_source
from .database import Database, _frame, _names, _now, _sha256
from .schema import columns_of

BLOCK_BYTES = 8 * 1024 * 1024
"""Stored files are split into blocks of this many bytes, one row of ``file_chunks`` each (no size limit, bounded
memory per row)."""

ORPHAN_GRACE_S = 3600.0
"""`remove_orphans` keeps an unreferenced file stored less than this many seconds ago: a save may be about to use it."""


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
class Orphans:
    """What `remove_orphans` found: the unreferenced files removed (or, with ``dry_run``, that would be), the block
    rows (``stray_blocks``: rows of ``file_chunks``) left without a file, and how many unreferenced files were kept as
    too recent."""

    files: tuple[StoredFile, ...]
    stray_blocks: int
    recent: int
    older_than: float
    removed: bool

    @property
    def size(self) -> int:
        return sum(f.size for f in self.files)


class FileStore(Database):
    """The workspace's stored files (part of `Workspace`)."""

    def _put_file(self, source: bytes | str | os.PathLike | Any, name: str | None = None) -> StoredFile:
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

            def blocks() -> Iterator[bytes]:
                check, empty = hashlib.sha256(), True
                with open(path, "rb") as handle:
                    while True:
                        block = handle.read(BLOCK_BYTES)
                        if not block:
                            break
                        check.update(block)
                        empty = False
                        yield block
                if empty:
                    yield b""
                if check.hexdigest() != digest:
                    raise InputError("a file that does not change while it is stored; try again", source=display)

            return self.write(lambda conn: _store_file(conn, digest, size, display, blocks))
        raise invalid_parameter("source", "a path, bytes or a binary file object", type(source).__name__)

    def _put_bytes(self, data: bytes, name: str) -> StoredFile:
        digest = _sha256(data)

        def blocks() -> Iterator[bytes]:
            for start in range(0, max(len(data), 1), BLOCK_BYTES):
                yield data[start:start + BLOCK_BYTES]

        return self.write(lambda conn: _store_file(conn, digest, len(data), name, blocks))

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
        return self.read(lambda conn: _frame(conn, f"""
            SELECT f.sha256, f.name, f.size, f.stored_at,
                   (SELECT COUNT(*) FROM runs r WHERE {run_uses(conn, "f.sha256")})
                 + (SELECT COUNT(*) FROM label_versions v WHERE v.content_sha256 = f.sha256 OR v.source_sha256 = f.sha256)
                 + (SELECT COUNT(*) FROM evaluations e WHERE e.labels_file_sha256 = f.sha256) AS used_by
            FROM files f ORDER BY f.stored_at, f.sha256"""))

    def _remove_orphans(self, *, older_than: float = ORPHAN_GRACE_S, dry_run: bool = False) -> Orphans:
        """Remove stored files that no record references (a row of any table whose foreign key names ``files``:
        label versions, runs, evaluations, saved views' manifests) and that were stored more than ``older_than``
        seconds ago, and block rows without a file. One write transaction: a file referenced by then is never removed (SQLite's foreign keys
        refuse it too). ``dry_run`` only reports (a read).
        """
        if not older_than >= 0:
            raise invalid_parameter("older_than", "a number of seconds, 0 or more", older_than)
        try:
            cutoff = (datetime.now(timezone.utc) - timedelta(seconds=float(older_than))).isoformat(timespec="microseconds")
        except OverflowError:  # before any date: nothing is that old
            cutoff = ""

        def sweep(conn: sqlite3.Connection) -> Orphans:
            unused = [StoredFile(*row) for row in conn.execute(
                f"SELECT sha256, name, size, stored_at FROM files WHERE sha256 NOT IN ({_references(conn)}) "
                "ORDER BY stored_at, sha256")]
            old = tuple(f for f in unused if f.stored_at <= cutoff)
            stray = conn.execute("SELECT COUNT(*) FROM file_chunks WHERE sha256 NOT IN (SELECT sha256 FROM files)"
                                 ).fetchone()[0]
            if not dry_run:
                conn.executemany("DELETE FROM files WHERE sha256 = ?", [(f.sha256,) for f in old])
                conn.execute("DELETE FROM file_chunks WHERE sha256 NOT IN (SELECT sha256 FROM files)")
            return Orphans(old, stray, len(unused) - len(old), float(older_than), not dry_run)

        return self.read(sweep) if dry_run else self.write(sweep)


# ----------------------------------------------------------------------------- helpers (inside a transaction)


def _hash_path(path: Path, display: str) -> tuple[str, int]:
    digest, size = hashlib.sha256(), 0
    try:
        with open(path, "rb") as handle:
            while True:
                block = handle.read(BLOCK_BYTES)
                if not block:
                    break
                digest.update(block)
                size += len(block)
    except OSError as exc:
        raise InputError(f"a readable file ({exc.strerror})", source=display) from None
    return digest.hexdigest(), size


def _store_file(conn: sqlite3.Connection, digest: str, size: int, name: str,
                blocks: Callable[[], Iterator[bytes]]) -> StoredFile:
    """Insert a file and its blocks unless the same bytes are stored already (all inside the caller's
    transaction). Bytes stored before are not written again, whatever their age: a clean-up that removes them
    between this and the save that names them makes that save fail cleanly (`NotInWorkspace`), and the retry
    stores them anew; a record never points to a missing file."""
    row = conn.execute("SELECT size, stored_at FROM files WHERE sha256 = ?", (digest,)).fetchone()
    if row:
        return StoredFile(digest, name, row[0], row[1], created=False)
    stored_name = name
    stored_at = _now()
    n_blocks = max(1, -(-size // BLOCK_BYTES))
    conn.execute("INSERT INTO files (sha256, name, size, n_chunks, stored_at) VALUES (?, ?, ?, ?, ?)",
                 (digest, stored_name, size, n_blocks, stored_at))
    count = _store_blocks(conn, digest, blocks())
    if count != n_blocks:
        raise InputError("a file that does not change while it is stored; try again", source=name)
    return StoredFile(digest, name, size, stored_at, created=row is None)


def _file_references(conn: sqlite3.Connection) -> list[tuple[str, str]]:
    """Every (table, column) whose foreign key names ``files``, found in the schema itself (the blocks of
    ``file_chunks`` aside)."""
    found = []
    for table in _names(conn, "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name"):
        if table != "file_chunks":
            found += [(_quoted(table), _quoted(str(fk[3])))
                      for fk in conn.execute(f"PRAGMA foreign_key_list({_quoted(table)})") if fk[2] == "files"]
    return found


def _quoted(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'



def _references(conn: sqlite3.Connection) -> str:
    """A subquery: the hash of every file a record references (no NULL, so ``NOT IN`` is safe)."""
    parts = [f"SELECT {c} FROM {t} WHERE {c} IS NOT NULL" for t, c in _file_references(conn)]
    return " UNION ".join(parts) or "SELECT NULL WHERE 0"


def _store_blocks(conn: sqlite3.Connection, digest: str, blocks: Iterable[bytes]) -> int:
    count = 0
    for seq, block in enumerate(blocks):
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


def run_uses(conn: sqlite3.Connection, sha: str) -> str:
    """The SQL condition on a run ``r`` that uses the file ``sha`` (an SQL expression): its run file or, for a run of
    chunks, its chunk map (a workspace from before chunk runs, opened read-only, has no such column)."""
    if ("runs", "chunks_sha256") in columns_of(conn):
        return f"(r.file_sha256 = {sha} OR r.chunks_sha256 = {sha})"
    return f"r.file_sha256 = {sha}"
