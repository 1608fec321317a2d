"""Deleting a label set, a run, an evaluation or a file: a plan first (what would go, in words and counts: what
the CLI and the dashboard show before asking), then the deletion itself, in the same transaction.

Kept apart because it is the one place that knows how every stored record depends on the others.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from ..errors import UsageError, invalid_parameter
from ..warning_log import plural
from .evaluations import EvaluationStore, _evaluation_by_id
from .events import append_event
from .files import _file_record, _resolve_sha, run_uses
from .label_versions import _set_id
from .runs import _run_by_id


@dataclass(frozen=True)
class Deletion:
    """What deleting one thing removes (or would remove, for a plan): a sentence and the counts."""

    kind: str
    key: str
    description: str
    counts: dict


DELETE_KINDS = ("labels", "run", "evaluation", "file")


class DeletionStore(EvaluationStore):
    """Deleting from the workspace (part of `Workspace`)."""

    def _delete(self, kind: str, key: str | int, *, dry_run: bool = False, who: str | None = None) -> Deletion:
        """Delete a label set (by name, every version), a run or an evaluation (by id), or a file.

        A label set takes its evaluations and its ledger entries with it; a run leaves the
        evaluations it was in (an evaluation left without runs goes); files nothing uses any more
        go with the records that used them. A file still in use is refused. ``dry_run`` says what
        would go without deleting anything (what the CLI and the dashboard show before asking). ``who``: the person
        deleting, logged (`events`) in the same transaction, so nothing is deleted without its record.
        """
        if kind not in DELETE_KINDS:
            raise invalid_parameter("kind", "one of " + ", ".join(DELETE_KINDS), kind)
        if kind == "evaluation":
            key = self.evaluation_id(key)

        def act(conn: sqlite3.Connection) -> Deletion:
            plan = _plan_delete(conn, kind, key, self.location)
            if not dry_run:
                _execute_delete(conn, plan)
                if who is not None:
                    append_event(conn, who, "delete", plan.deletion.description)
            return plan.deletion

        if dry_run:
            return self.read(act)
        return self.write(act)


# ----------------------------------------------------------------------------- helpers (inside a transaction)


@dataclass(frozen=True)
class _Plan:
    deletion: Deletion
    evaluations: tuple[int, ...] = ()
    set_id: int | None = None
    labels: str | None = None
    run_id: int | None = None
    file: str | None = None
    files: tuple[str, ...] = ()


def _ids(conn: sqlite3.Connection, sql: str, params: Sequence | dict = ()) -> list:
    return [row[0] for row in conn.execute(sql, params if isinstance(params, dict) else tuple(params))]


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
                     files=tuple(f for f in (run.file_sha256, run.chunks_sha256) if f is not None))
    if kind == "evaluation":
        saved = _evaluation_by_id(conn, int(key), location)
        outcomes = conn.execute("SELECT COUNT(*) FROM outcomes WHERE evaluation_id = ?", (saved.id,)).fetchone()[0]
        text = (f"evaluation {saved.id} (labels {saved.labels.ref}, runs {', '.join(r.name for r in saved.runs)}): "
                f"{plural(outcomes, 'per-query outcome')}")
        return _Plan(Deletion(kind, str(saved.id), text, {"evaluations": 1, "outcomes": outcomes}), (saved.id,))
    sha = _resolve_sha(conn, str(key))
    record = _file_record(conn, sha)
    users = [f"run #{i}" for i in _ids(conn, f"SELECT id FROM runs r WHERE {run_uses(conn, ':sha')}", {"sha": sha})]
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
        _delete_file(conn, plan.file)
    for sha in set(plan.files):
        used = conn.execute(
            f"SELECT EXISTS(SELECT 1 FROM runs r WHERE {run_uses(conn, ':sha')}) OR EXISTS(SELECT 1 FROM label_versions "
            "WHERE content_sha256 = :sha OR source_sha256 = :sha) OR EXISTS(SELECT 1 FROM evaluations WHERE "
            "labels_file_sha256 = :sha)", {"sha": sha}).fetchone()[0]
        if not used:
            _delete_file(conn, sha)


def _delete_file(conn: sqlite3.Connection, sha: str) -> None:
    """Delete a stored file, and the saved views (manifests) that name it: a view missing a file cannot open, and
    its link then says the files are gone."""
    conn.execute("DELETE FROM manifests WHERE (kind, key) IN (SELECT kind, key FROM manifest_files WHERE sha256 = ?)",
                 (sha,))
    conn.execute("DELETE FROM files WHERE sha256 = ?", (sha,))
