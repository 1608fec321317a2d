"""The schema upgrade: the steps that bring a new or older workspace to `schema.SCHEMA_VERSION`, and the checks that
refuse it when upgrading would hide a change to the record.

An upgrade adds tables and columns, chains a record from before the chain (`chain.upgrade`) and seals the records
saved before sealing (`seals.seal_unsealed`). Hashing the record is what makes a change to it show, so an upgrade
must never hash again a record someone changed: a workspace whose version number was lowered by hand (to make the
next open redo those steps) or whose record does not verify is refused, in one sentence, and nothing is changed.
`database.Database` runs `run_steps` inside its one upgrade transaction.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from ..errors import WorkspaceCorrupt
from .chain import chain_problems
from .chain import upgrade as upgrade_to_chain
from .manifest_rows import import_legacy_manifests
from .schema import (
    CHAIN_VERSION,
    CHUNKS_VERSION,
    PANEL_VERSION,
    SCHEMA_VERSION,
    SEALED_VERSION,
    _chunks_statements,
    _events_statements,
    _integrity_statements,
    _manifests_statements,
    _panel_statements,
    _schema_statements,
    _sealed_statements,
    columns_of,
    tables_ahead,
)
from .seals import seal_problems, seal_unsealed, sealed_started


def run_steps(conn: sqlite3.Connection, location: Path, path: Path) -> list:
    """Every step the workspace at ``path`` has not taken, inside the caller's transaction; returns the legacy manifest
    files imported (the caller removes them once committed). Raises `WorkspaceCorrupt` first (`refuse_upgrade`)
    when upgrading would hide a change."""
    current = conn.execute("PRAGMA user_version").fetchone()[0]  # another process may have just made it
    if current >= SCHEMA_VERSION:
        return []
    refuse_upgrade(conn, current, path)
    if current == 0:
        _run(conn, _schema_statements())
    if current < 2:
        _run(conn, _integrity_statements())
    if current < 3:
        _run(conn, _events_statements())
    imported = []
    if current < 4:
        _run(conn, _manifests_statements())
        imported = import_legacy_manifests(conn, location) if current else []
    if current < CHAIN_VERSION:
        upgrade_to_chain(conn)
    if current < CHUNKS_VERSION:
        _run(conn, _chunks_statements(columns_of(conn)))
    if current < SEALED_VERSION:
        _run(conn, _sealed_statements(columns_of(conn, ("events",))))
    if current < PANEL_VERSION:
        _run(conn, _panel_statements())
    conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
    if current < SEALED_VERSION:
        seal_unsealed(conn, SEALED_VERSION)  # after the version: appending checks the triggers of this one
    return imported


def refuse_upgrade(conn: sqlite3.Connection, current: int, path: Path) -> None:
    """Raise `WorkspaceCorrupt` (one sentence) when upgrading from ``current`` would hide a change: the file holds a
    table a later step makes (its version number was lowered: the upgrade would redo those steps and hash the record
    again), or its record does not verify (the upgrade would hash it again, sealing the change)."""
    ahead = tables_ahead(conn, current)
    if ahead:
        name, step = ahead[0]
        raise WorkspaceCorrupt(
            f"The workspace {path} says it is schema {current}, yet it holds the table {name}, which schema {step} "
            "makes: its schema number was lowered after it was made. It is not upgraded (that would redo those steps "
            "and hash its record again); restore it from a backup.")
    problems = chain_problems(conn) + (seal_problems(conn) if sealed_started(conn) else [])
    if problems:
        more = f", and {len(problems) - 1} more" if len(problems) > 1 else ""
        raise WorkspaceCorrupt(
            f"Refused to upgrade the workspace {path} from schema {current} to {SCHEMA_VERSION}, since hashing its "
            f"record again would seal a change made to it: {problems[0]}{more}. Restore it from a backup.")


def _run(conn: sqlite3.Connection, statements: list[str]) -> None:
    for statement in statements:
        conn.execute(statement)
