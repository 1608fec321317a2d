"""Label sets: a name and numbered, frozen versions, and `add_cases`, which makes a new version from the latest.

A version holds the judgments and per-query fields as normalised JSONL (stored as a file: the version's
content), its fingerprint, and the upload it came from. No version ever changes (the database refuses updates
with a trigger), so an evaluation saved against a version can always be computed again; the same content
uploaded twice, in any row order, is the same version.
"""

from __future__ import annotations

import json
import math
import os
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Mapping

import numpy as np
import pandas as pd

from ..errors import NotInWorkspace, UsageError, invalid_parameter
from ..readers.labels import LabelSet, read_labels
from ..readers.sources import Source
from ..readers.tables import QUERY_FIELDS
from ..warning_log import plural
from .database import (
    BUSY_TIMEOUT_S,
    WRITE_ATTEMPTS,
    _check_name,
    _frame,
    _known,
    _names,
    _now,
    _replace_created,
    _row,
    _sha256,
)
from .files import FileStore, StoredFile, _read_file, _require_file, _store_file


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
class Case:
    """A query to add to a label set, e.g. a production miss: its relevant doc ids and what the customer typed."""

    query: str
    relevant: tuple[str, ...]
    query_text: str | None = None
    source: str | None = "production_miss"
    grade: float = 1.0


class LabelStore(FileStore):
    """The workspace's label sets and their versions (part of `Workspace`); parsed versions are cached."""

    def __init__(self, location: str | os.PathLike | None = None, *, busy_timeout: float = BUSY_TIMEOUT_S,
                 attempts: int = WRITE_ATTEMPTS, read_only: bool | None = None) -> None:
        self._labels_cache: dict[str, LabelSet] = {}
        super().__init__(location, busy_timeout=busy_timeout, attempts=attempts, read_only=read_only)

    def _save_labels(self, labels: LabelSet | Any, *, name: str | None = None, file: StoredFile | None = None,
                    format: str | None = None, note: str | None = None) -> LabelVersion:
        """Store a label set as a version of the set ``name`` (default: the labels' own name).

        ``labels`` is a `LabelSet` (then ``file`` may name the stored upload it came from) or
        anything `read_labels` takes; a path or bytes is stored first, then parsed. A version
        with the same judgments and per-query fields is reused (``created`` False); otherwise a
        new version is added.
        """
        if not isinstance(labels, LabelSet):
            if isinstance(labels, (bytes, bytearray, str, os.PathLike)) or hasattr(labels, "read"):
                file = self._put_file(labels)
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

    def _add_cases(self, name: str, cases: Iterable[Case | Mapping] | LabelSet, *, note: str | None = None,
                  file: StoredFile | None = None) -> LabelVersion:
        """A new version of label set ``name``: its latest version plus ``cases``.

        Each case is a `Case` (or a dict with the same keys: ``query``, ``relevant``, optional
        ``query_text``, ``source``, ``grade``), or pass a whole `LabelSet`. A (query, doc) pair the
        set already has takes the new grade (a corrected label); new pairs and queries are added
        at the end; a per-query field given replaces the old one. Earlier versions never change.
        The read of the latest version and the write of the new one are one transaction, so two
        people adding cases at once each get their own version and neither loses the other's.
        Returns the latest version unchanged (``created`` False) when nothing is new. ``file``: the stored upload
        the cases came from, recorded as the new version's source (so `remove_orphans` keeps it).
        """
        judgments, info = _cases_table(cases)
        set_name = _check_name(name, "name")

        version_id, created = self.write(lambda conn: self._add_cases_in(conn, set_name, judgments, info, note, file))
        record = self._version_record(version_id)
        return _replace_created(record, created)

    def _add_cases_in(self, conn: sqlite3.Connection, set_name: str, judgments: pd.DataFrame,
                      info: dict[str, dict[str, object]], note: str | None,
                      file: StoredFile | None = None) -> tuple[int, bool]:
        """Inside a write: the latest version of ``set_name`` plus the cases, as a new version when anything changed."""
        latest = _latest_version_row(conn, set_name)
        if latest is None:
            raise NotInWorkspace(f"No label set named {set_name!r} in the workspace {self.location}; "
                                 f"save one first (evaluate --save, or Session.record_upload). "
                                 f"{_known('Label sets', _names(conn, 'SELECT name FROM label_sets ORDER BY name'))}")
        base = self._parse_labels(conn, latest["content_sha256"], set_name, latest["version"])
        merged, change = _merge_cases(base, judgments, info, set_name)
        if change is None:
            return latest["id"], False
        payload = _LabelsPayload.build(merged)
        return _ensure_version(conn, set_name, payload, file, note, change=change, parent=latest["version"])

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


# ----------------------------------------------------------------------------- helpers (inside a transaction)


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
        spans = _spans_by_pair(labels.spans)
        lines, seen = [], set()
        for query, doc, grade in zip(queries, docs, grades):
            for span in spans.get((query, doc), [None]):  # a judgment with evidence: one line per span
                record: dict[str, object] = {"query": query, "doc_id": doc, "grade": grade}
                if span is not None:
                    record["start"], record["end"] = span
                if query not in seen:
                    seen.add(query)
                    record.update(fields.get(query, {}))
                lines.append(json.dumps(record, ensure_ascii=False))
        content = ("\n".join(lines) + "\n").encode("utf-8")
        pairs = sorted(f"{q}\t{d}\t{g:g}" for q, d, g in zip(queries, docs, grades))
        key = {"judgments": pairs, "fields": sorted(fields.items())}
        if spans:  # labels without spans keep the identity they always had
            key["spans"] = sorted(f"{q}\t{d}\t{a}\t{b}" for (q, d), found in spans.items() for a, b in found)
        identity = json.dumps(key, ensure_ascii=False, sort_keys=True, default=str)
        return cls(content, _sha256(content), _sha256(identity.encode("utf-8")), labels.fingerprint,
                   labels.n_queries, len(judgments))


def _spans_by_pair(spans: pd.DataFrame | None) -> dict[tuple[str, str], list[tuple[int, int]]]:
    """The evidence spans of each (query, doc), in the labels' order ({} without spans)."""
    found: dict[tuple[str, str], list[tuple[int, int]]] = {}
    if spans is None:
        return found
    for query, doc, start, end in zip(spans["query"].astype(str), spans["doc_id"].astype(str),
                                      spans["start"].tolist(), spans["end"].tolist()):
        found.setdefault((query, doc), []).append((int(start), int(end)))
    return found


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
    spans = base.spans
    if spans is not None:  # evidence stays with the judgments the cases left as they were
        regraded = pd.Index(old_key[updated["grade"].to_numpy() != old["grade"].to_numpy()])
        spans = spans[~pd.Index((spans["query"] + "\x00" + spans["doc_id"]).to_numpy(dtype=object)).isin(regraded)]
        spans = spans.reset_index(drop=True) if len(spans) else None
    return LabelSet(name=name, judgments=merged, query_info=frame, spans=spans), "; ".join(parts)
