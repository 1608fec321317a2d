"""Saved views: the manifests that name which stored files make up a data set or a set of vector models.

A manifest is a small JSON value (`evalcore.metrics.dataset` defines the two shapes) kept under a key derived from its
content, so the key can travel in a link (``?data=KEY``, ``?vectors=KEY``) and open the same files after a restart or
on another visitor's screen. The files it names are listed in ``manifest_files`` with a foreign key to ``files``: the
clean-up of unused files asks the database which files are named, and SQLite refuses to remove one that is.

Workspaces from before manifests lived here kept them as JSON files in ``dashboard/datasets/`` and
``dashboard/vectors/`` inside the workspace folder; `manifest_rows.import_legacy_manifests` takes them in once, on the upgrade.
"""

from __future__ import annotations

import json
import sqlite3
from typing import Any

from ..errors import NotInWorkspace, invalid_parameter
from .database import Database
from .manifest_rows import insert_manifest

KINDS = ("dataset", "vector_models")
"""What a manifest describes: a data set (labels, runs, documents, ...) or a set of uploaded vector models."""
_WORDS = {"dataset": "data set", "vector_models": "set of vector models"}


def _check(kind: str, key: str) -> None:
    if kind not in KINDS:
        raise invalid_parameter("kind", f"one of {', '.join(KINDS)}", kind)
    if not isinstance(key, str) or not key.isalnum() or len(key) > 64:
        raise invalid_parameter("key", "a manifest key (letters and digits, at most 64)", key)


class ManifestStore(Database):
    """The workspace's saved views (part of `Workspace`)."""

    def _put_manifest(self, kind: str, key: str, body: Any) -> None:
        """Keep ``body`` under ``key``. Every file it names must be stored first (`put_file`); raises
        `NotInWorkspace` when one is not, and writes nothing then."""
        _check(kind, key)

        def write(conn: sqlite3.Connection) -> None:
            if not insert_manifest(conn, kind, key, body):
                raise NotInWorkspace(f"The {_WORDS[kind]} {key} names a file the workspace does not hold; "
                                     "store its files first.")

        self.write(write)

    def manifest_keys(self, kind: str, limit: int = 20) -> list[str]:
        """The keys of the newest ``limit`` manifests of ``kind``, newest first (none in a read-only workspace from
        before manifests lived in the database)."""
        _check(kind, "x")

        def read(conn: sqlite3.Connection) -> list[str]:
            if conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'manifests'").fetchone() is None:
                return []
            rows = conn.execute("SELECT key FROM manifests WHERE kind = ? ORDER BY created_at DESC, rowid DESC "
                                "LIMIT ?", (kind, int(limit)))
            return [row[0] for row in rows]

        return self.read(read)

    def manifest(self, kind: str, key: str) -> Any | None:
        """The manifest kept under ``key`` (None when there is none; a read-only workspace from before manifests
        lived in the database reads as holding none)."""
        _check(kind, key)

        def read(conn: sqlite3.Connection) -> Any | None:
            if conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'manifests'").fetchone() is None:
                return None
            row = conn.execute("SELECT body FROM manifests WHERE kind = ? AND key = ?", (kind, key)).fetchone()
            return None if row is None else json.loads(row[0])

        return self.read(read)
