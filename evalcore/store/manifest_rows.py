"""The rows of the manifests tables, written inside the caller's transaction: shared by `manifests.ManifestStore` and the
upgrade step that takes in the manifest files older workspaces kept in their folder (`database.Database` runs it, so
this module builds on nothing of the store's)."""

from __future__ import annotations

import json
import sqlite3
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

LEGACY_FOLDERS = {"dataset": Path("dashboard") / "datasets", "vector_models": Path("dashboard") / "vectors"}
"""Where workspaces before schema version 4 kept manifests, as ``KEY.json`` files inside the workspace folder."""


def named_files(body: Any) -> list[str]:
    """Every file hash a manifest names: the ``sha256`` of each file reference in it, in order, once each."""
    found: dict[str, None] = {}
    stack = [body]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            sha = item.get("sha256")
            if isinstance(sha, str):
                found[sha.lower()] = None
            stack.extend(reversed([v for k, v in item.items() if k != "sha256"]))
        elif isinstance(item, (list, tuple)):
            stack.extend(reversed(item))
    return list(found)


def insert_manifest(conn: sqlite3.Connection, kind: str, key: str, body: Any) -> bool:
    """Store one manifest inside the caller's transaction (no change when the key is stored already); False when
    a file it names is not stored (nothing is written then)."""
    if conn.execute("SELECT 1 FROM manifests WHERE kind = ? AND key = ?", (kind, key)).fetchone():
        return True
    files = named_files(body)
    if files:
        marks = ", ".join("?" * len(files))
        present = {row[0] for row in conn.execute(f"SELECT sha256 FROM files WHERE sha256 IN ({marks})", files)}
        if len(present) < len(files):
            return False
    conn.execute("INSERT INTO manifests (kind, key, body, created_at) VALUES (?, ?, ?, ?)",
                 (kind, key, json.dumps(body, sort_keys=True, separators=(",", ":")), datetime.now(timezone.utc).isoformat(timespec="microseconds")))
    conn.executemany("INSERT INTO manifest_files (kind, key, sha256) VALUES (?, ?, ?)",
                     [(kind, key, sha) for sha in files])
    return True


def import_legacy_manifests(conn: sqlite3.Connection, location: Path) -> list[Path]:
    """Take in the manifest files an older dashboard wrote into the workspace folder (inside the caller's
    transaction); returns the files taken in, which the caller removes once the transaction is committed. A file
    that cannot be read, is not a manifest, or names a file the workspace lacks is left where it is."""
    taken = []
    for kind, folder in LEGACY_FOLDERS.items():
        for path in sorted((location / folder).glob("*.json")):
            key = path.stem
            if not key.isalnum() or len(key) > 64:
                continue
            try:
                body = json.loads(path.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                continue
            if isinstance(body, (dict, list)) and insert_manifest(conn, kind, key, body):
                taken.append(path)
    return taken


def remove_imported(paths: list[Path]) -> None:
    """Remove legacy manifest files already taken into the database, and their folders once empty (best effort:
    a file left behind is never read again)."""
    for path in paths:
        try:
            path.unlink()
        except OSError:
            pass
    for folder in {p.parent for p in paths}:
        for empty in (folder, folder.parent):
            try:
                empty.rmdir()
            except OSError:
                break
