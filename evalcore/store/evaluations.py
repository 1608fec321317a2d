"""Saved evaluations: which label-set version, which runs, the settings, every summary row and every query's outcome.

Each query's outcome is stored at the evaluation's chosen k (hit or miss, rank of the first relevant doc), for
the failure ledger (`evalcore.store.ledger`) and a model line's history (`EvaluationStore.history`). An
evaluation is written in one transaction together with the label-set version and runs it needs, and can be
computed again from the stored files (`load_evaluation`: same numbers, same seed).
"""

from __future__ import annotations

import json
import math
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping, Sequence

import numpy as np
import pandas as pd

from ..errors import NotInWorkspace, UsageError, invalid_parameter
from ..metrics.evaluation import Evaluation, evaluate_runs
from ..metrics.measures import Measure
from ..version import __version__
from ..warning_log import EvalWarning
from .database import _check_name, _frame, _key, _known, _names, _now, _replace_created, _row
from .files import StoredFile, _require_file
from .label_versions import LabelStore, LabelVersion, _ensure_version, _LabelsPayload, _set_id, _version_by_id
from .runs import RunStore, StoredRun, _ensure_run, _run_by_id, _RunPayload
from .schema import columns_of


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



class EvaluationStore(LabelStore, RunStore):
    """The workspace's saved evaluations, their outcomes and a line's history (part of `Workspace`)."""

    def _save_evaluation(
        self,
        evaluation: Evaluation,
        *,
        k: int | None = None,
        labels_file: StoredFile | None = None,
        run_files: Mapping[str, StoredFile] | None = None,
        lines: Mapping[str, str] | None = None,
        label_set: str | None = None,
        run_format: str | Mapping[str, str | None] | None = None,
        note: str | None = None,
        chunk_files: Mapping[str, StoredFile] | None = None,
        chunks_format: Mapping[str, str | None] | None = None,
    ) -> SavedEvaluation:
        """Record an evaluation: its label-set version, runs, summary and per-query outcomes at ``k``.

        ``k`` is the chosen cutoff whose hit/miss each query's outcome records (default: the
        largest evaluated k). ``labels_file`` and ``run_files`` (by run name) are the stored
        uploads the inputs were read from (`put_file`); a run without one is stored as a table.
        ``lines`` maps run names to model-line names (default: each run's model string);
        ``label_set`` names the label set (default: the labels' name); ``run_format`` is the format
        override the run files were read with, if any: one for every run, or one per run name. A run of chunks is stored
        with the chunk map it was scored through: ``chunk_files`` (by run name) are the stored chunk map files (a map
        given without one is stored as a table), ``chunks_format`` the format each was read with. Everything is computed
        first and written in one transaction. Saving the same evaluation again (same version,
        runs and settings) returns the stored one with ``created`` False.
        """
        chosen_k = max(evaluation.ks) if k is None else evaluation.check_k(k)
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
        formats = run_format if isinstance(run_format, Mapping) else {name: run_format for name in names}
        chunk_files, chunks_format = dict(chunk_files or {}), dict(chunks_format or {})
        run_payloads = [_RunPayload.build(r.run, run_files.get(r.name), lines.get(r.name),
                                          formats.get(r.name) if r.name in run_files else None, r.chunks,
                                          chunk_files.get(r.name), chunks_format.get(r.name))
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
                    "in_run, evidence_recall) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
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

    def load_evaluation(self, key: int | str) -> Evaluation:
        """A saved evaluation computed again from its stored files and settings (same numbers, same seed)."""
        saved = self.evaluation(key)
        labels = self.load_labels(saved.labels.name, saved.labels.version)
        runs = [self.load_run(r.id) for r in saved.runs]
        maps = {r.name: self.load_chunks(r.id) for r in saved.runs if r.chunks_sha256 is not None}
        settings = saved.settings
        return evaluate_runs(runs, labels, list(saved.ks), min_grade=settings["min_grade"],
                             zero_relevant=settings["zero_relevant"], level=settings["level"], seed=settings["seed"],
                             n_resamples=settings["n_resamples"], chunks=maps or None)

    # ------------------------------------------------------------------ history

    def history(self, line: str, metrics: Sequence[str] | None = None, *, labels: str | None = None) -> pd.DataFrame:
        """A model line's metrics over its runs in upload order, with intervals, ready to chart.

        One row per run and metric, from the latest evaluation of each run on label set
        ``labels`` (default: the label set of the line's latest evaluation). Columns: ``line``,
        ``step`` (1 = the line's first run), ``run_id``, ``run``, ``model``, ``uploaded_at``
        (datetime, UTC), ``evaluation_id``, ``labels``, ``labels_version``, ``fingerprint``,
        ``metric``, ``k``, ``mean``, ``ci_low``, ``ci_high``, ``n``, ``level``, ``seed``,
        ``ci_method``, ``note``, ``chunks`` (the chunk map a run of chunks was scored through, ``name#fingerprint``;
        None for a run of documents). A change of ``labels_version`` between points means the queries
        changed too: compare such points with care.
        """
        def read(conn):
            set_name = _line_labels(conn, line, labels, self.location)
            chunks = ("r.chunks_name || '#' || r.chunks_fingerprint" if ("runs", "chunks_name") in columns_of(conn)
                      else "NULL")  # a read-only workspace from before chunk runs
            return _frame(conn, f"""
                WITH latest AS (
                    SELECT er.run_id, MAX(e.id) AS evaluation_id
                    FROM evaluation_runs er JOIN evaluations e ON e.id = er.evaluation_id
                    JOIN label_versions v ON v.id = e.label_version_id JOIN label_sets s ON s.id = v.set_id
                    JOIN runs r ON r.id = er.run_id
                    WHERE r.line = ? AND s.name = ? GROUP BY er.run_id)
                SELECT r.line, r.id AS run_id, r.name AS run, r.model, r.uploaded_at, l.evaluation_id,
                       s.name AS labels, v.version AS labels_version, v.fingerprint, m.metric, m.k, m.mean,
                       m.ci_low, m.ci_high, m.n, e.level, e.seed, m.ci_method, m.note, {chunks} AS chunks
                FROM latest l JOIN runs r ON r.id = l.run_id JOIN evaluations e ON e.id = l.evaluation_id
                JOIN label_versions v ON v.id = e.label_version_id JOIN label_sets s ON s.id = v.set_id
                JOIN metrics m ON m.evaluation_id = l.evaluation_id AND m.run_id = l.run_id
                ORDER BY r.id, m.rowid""", (line, set_name))

        frame = self.read(read)
        if metrics:
            wanted = [str(Measure.parse(m)) for m in metrics]
            frame = frame[frame["metric"].isin(wanted)].reset_index(drop=True)
        frame.insert(1, "step", pd.factorize(frame["run_id"])[0] + 1)
        frame["uploaded_at"] = pd.to_datetime(frame["uploaded_at"], utc=True, format="ISO8601")
        frame["k"] = frame["k"].astype("Int64")
        frame["note"] = frame["note"].fillna("")
        return frame


# ----------------------------------------------------------------------------- helpers (inside a transaction)


def _outcome_rows(result, k: int) -> list[tuple]:
    """Per evaluated query: n_relevant, first relevant rank (None if none returned), hit@k, recall@k, rr, in_run, and
    evidence_recall@k (None without evidence spans)."""
    ranked = result.ranked
    first = ranked.first_relevant
    hit = result.score(f"hit@{k}")
    recall = result.score(f"recall@{k}")
    rr = result.score("mrr")
    evidence = (result.score(f"evidence_recall@{k}") if result.scores.has_evidence
                else np.full(len(result.queries), np.nan))
    return [(str(q), int(n), int(f) if f > 0 else None, int(h > 0), float(r), float(x), int(bool(i)),
             None if np.isnan(e) else float(e))
            for q, n, f, h, r, x, i, e in zip(result.queries, ranked.index.n_relevant, first, hit, recall, rr,
                                              ranked.in_run, evidence)]


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


def _float(value: object) -> float | None:
    if value is None or pd.isna(value):
        return None
    number = float(value)
    return number if math.isfinite(number) else None


def _evalcore_version() -> str:
    return __version__
