"""Sealed records: each event carries the digests of the saved records its change wrote or removed, so the chain of
events (`chain`) covers the numbers, outcomes and versions too, not only who did what.

The frozen tables refuse ``UPDATE``, but anyone who can write the file can ``DELETE`` a row and ``INSERT`` it again
changed (a recall@1 of 0.4732 made 0.99, misses made hits, a label-set version's fingerprint rewritten). A record here
is one unit a change writes whole: a saved evaluation (its settings), its summary numbers for one run, its per-query
outcomes for one run, a label-set version, a run, a holdout reveal, one person's marks on one query's pool. Its
digest is SHA-256 over its rows as compact JSON, in a fixed column and row order.

Which records an event seals is what its own connection wrote since the connection's last event: temporary triggers
(`watch`, on each writing connection only) note every record inserted or deleted, and `claim` turns the notes into the
event's ``sealed`` column (``{"added": {record: digest}, "removed": [record]}``), hashed into the event. An edit made
over another connection is never claimed by an event. `seal_problems` replays the events and compares every record
with the digest of the event that sealed it last: changed, gone without an event that removed it, or in no event.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime, timezone

from ..safe_text import one_line
from ..warning_log import agree, plural
from .chain import EVENTS, append

_PENDING = "evalcore_unsealed"
"""The temporary table (one per writing connection) of the records written since its last event."""

SEALER = "evalcore"
"""Who the event that seals the records saved before sealing existed names (the upgrade, not a person)."""


@dataclass(frozen=True)
class _Kind:
    """One kind of record: its key columns (the first of them filters), the SQL of its rows, in a fixed order."""

    keys: int
    sql: str
    filter: str


_KINDS = {
    "evaluation": _Kind(1, "SELECT id, key, label_version_id, labels_file_sha256, k, ks, min_grade, zero_relevant, "
                           "level, seed, n_resamples, n_queries, warnings, evalcore_version, note, created_at "
                           "FROM evaluations {where} ORDER BY id", "id"),
    "numbers": _Kind(2, "SELECT er.evaluation_id, er.run_id, er.position, m.metric, m.k, m.mean, m.ci_low, m.ci_high, "
                        "m.n, m.ci_method, m.reliable, m.note FROM evaluation_runs er LEFT JOIN metrics m "
                        "ON m.evaluation_id = er.evaluation_id AND m.run_id = er.run_id {where} "
                        "ORDER BY er.evaluation_id, er.run_id, m.metric", "er.evaluation_id"),
    "outcomes": _Kind(2, "SELECT er.evaluation_id, er.run_id, o.query, o.n_relevant, o.first_rank, o.hit, o.recall, "
                         "o.rr, o.in_run, o.evidence_recall FROM evaluation_runs er LEFT JOIN outcomes o "
                         "ON o.evaluation_id = er.evaluation_id AND o.run_id = er.run_id {where} "
                         "ORDER BY er.evaluation_id, er.run_id, o.query", "er.evaluation_id"),
    "label_version": _Kind(1, "SELECT v.id, s.name, v.set_id, v.version, v.fingerprint, v.content_id, "
                              "v.content_sha256, v.source_sha256, v.source_name, v.parent_version, v.n_queries, "
                              "v.n_judgments, v.change, v.note, v.created_at FROM label_versions v "
                              "LEFT JOIN label_sets s ON s.id = v.set_id {where} ORDER BY v.id", "v.id"),
    "run": _Kind(1, "SELECT id, key, name, model, line, price_per_mtok, dims, index_bytes, file_sha256, file_name, "
                    "format, n_queries, n_rows, uploaded_at, chunks_sha256, chunks_name, chunks_format, "
                    "chunks_fingerprint FROM runs {where} ORDER BY id", "id"),
    "reveal": _Kind(1, "SELECT id, label_set, version, fingerprint, rule, runs, who, at FROM holdout_reveals {where} "
                       "ORDER BY id", "id"),
    "panel_mark": _Kind(1, "SELECT id, label_set, query, kind, who, depth, marks, query_text, source, stratum, "
                           "version, note, at FROM panel_marks {where} ORDER BY id", "id"),
}

_TABLES = {"panel_mark": "panel_marks"}
"""The kinds whose table a later schema step makes (schema 8): a read-only older workspace has none of them."""

_WATCHED = (("evaluations", ("evaluation",), "id"), ("evaluation_runs", ("numbers", "outcomes"), "evaluation_id"),
            ("label_versions", ("label_version",), "id"), ("runs", ("run",), "id"),
            ("holdout_reveals", ("reveal",), "id"), ("panel_marks", ("panel_mark",), "id"))
"""Each table whose inserts and deletes `watch` notes: the kinds of record a row of it is, and its key columns."""


def watch(conn: sqlite3.Connection) -> None:
    """Note, on this connection only, every record it inserts or deletes (temporary triggers writing `_PENDING`), for
    the next event it appends to seal; a writing connection calls this once it is open and upgraded."""
    conn.execute(f"CREATE TEMP TABLE IF NOT EXISTS {_PENDING} (record TEXT PRIMARY KEY, present INTEGER NOT NULL)")
    for table, kinds, key in _WATCHED:
        for when, row, present in (("INSERT", "NEW", 1), ("DELETE", "OLD", 0)):
            names = " || ':' || ".join(f"{row}.{column}" for column in
                                       ((key,) if table != "evaluation_runs" else (key, "run_id")))
            notes = " ".join(f"INSERT OR REPLACE INTO {_PENDING} VALUES ('{kind}:' || {names}, {present});"
                             for kind in kinds)
            conn.execute(f"CREATE TEMP TRIGGER IF NOT EXISTS evalcore_seal_{table}_{when.lower()} AFTER {when} "
                         f"ON main.{table} BEGIN {notes} END")


def claim(conn: sqlite3.Connection) -> str:
    """What the next event seals, as its ``sealed`` text: the digest of every record this connection wrote since its
    last event, and the records it removed (``""`` when none); the notes are cleared (inside the caller's
    transaction, so they come back if it is undone)."""
    if conn.execute("SELECT 1 FROM sqlite_temp_master WHERE name = ?", (_PENDING,)).fetchone() is None:
        return ""
    notes = dict(conn.execute(f"SELECT record, present FROM {_PENDING}").fetchall())
    conn.execute(f"DELETE FROM {_PENDING}")
    written = [record for record, present in notes.items() if present]
    added = {}
    for kind, ids in _by_kind(written).items():
        found = digests(conn, kind, ids)
        added.update({record: found[record] for record in written if record in found})
    removed = sorted(record for record, present in notes.items() if not present)
    return _sealed_text(added, removed)


def seal_unsealed(conn: sqlite3.Connection, version: int) -> None:
    """The schema step that starts sealing (`schema.SEALED_VERSION`): one event, by `SEALER`, sealing every record
    saved before (none when there is none), so the chain covers them from now on."""
    sealed = _replay(conn)[0]
    unsealed = {record: digest for record, digest in all_digests(conn).items() if record not in sealed}
    if not unsealed:
        return
    counts = {kind: 0 for kind in _KINDS}
    for record in unsealed:
        counts[record.split(":")[0]] += 1
    words = {"evaluation": "saved evaluation", "label_version": "label-set version", "run": "run",
             "reveal": "holdout reveal", "panel_mark": "judge's marks"}
    parts = [plural(counts[kind], word) for kind, word in words.items() if counts[kind]]
    if counts["numbers"]:
        parts.append(f"the numbers and per-query outcomes of {plural(counts['numbers'], 'evaluated run')}")
    append(conn, EVENTS, {"at": datetime.now(timezone.utc).isoformat(timespec="microseconds"), "who": SEALER,
                          "action": "seal saved records", "subject": f"the records saved before schema {version}",
                          "detail": ", ".join(parts), "sealed": _sealed_text(unsealed, [])})


def sealing(conn: sqlite3.Connection) -> bool:
    """Whether this workspace's events seal records (schema 7 and later: the ``sealed`` column is there)."""
    return "sealed" in {row[1] for row in conn.execute("PRAGMA table_info(events)")}


def sealed_started(conn: sqlite3.Connection) -> bool:
    """Whether any event has sealed anything (then every record must be in an event, even before an upgrade)."""
    if not sealing(conn):
        return False
    return conn.execute("SELECT 1 FROM events WHERE sealed IS NOT NULL LIMIT 1").fetchone() is not None


def seal_problems(conn: sqlite3.Connection, shown: int = 5) -> list[str]:
    """Every sealed record that changed, went without an event removing it, or is in no event, in words (at most
    ``shown`` of each, then how many more); empty before sealing existed (a read-only older workspace)."""
    if not sealing(conn):
        return []
    state, problems = _replay(conn)
    present = all_digests(conn)
    changed = sorted((event, record) for record, (digest, event) in state.items()
                     if record in present and present[record] != digest)
    gone = sorted((event, record) for record, (digest, event) in state.items() if record not in present)
    unsealed = sorted((record for record in present if record not in state), key=_order)

    def changed_words(event: int, record: str) -> str:
        return (f"{_name(conn, record)} {_verb(record, 'was', 'were')} changed after event #{event} sealed "
                f"{_verb(record, 'it', 'them')} (no longer matching the digest that event holds)")

    def gone_words(event: int, record: str) -> str:
        return (f"{_name(conn, record)}, sealed by event #{event}, {_verb(record, 'is', 'are')} gone and no event "
                f"records {_verb(record, 'its', 'their')} removal")

    def unsealed_words(event: int, record: str) -> str:
        return (f"{_name(conn, record)} {_verb(record, 'is', 'are')} in no event of the record (put in by hand, or "
                "saved without an event)")

    problems += _listed(changed, shown, "sealed record", ("was changed", "were changed"), changed_words)
    problems += _listed(gone, shown, "sealed record", ("is gone", "are gone"), gone_words)
    problems += _listed([(0, r) for r in unsealed], shown, "record", ("is in no event", "are in no event"),
                        unsealed_words)
    return problems


def sealed_count(conn: sqlite3.Connection) -> int:
    """How many records the events seal now (for verify to say what it checked)."""
    return len(_replay(conn)[0]) if sealing(conn) else 0


def all_digests(conn: sqlite3.Connection) -> dict[str, str]:
    """The digest of every record the workspace holds now."""
    found: dict[str, str] = {}
    for kind in _KINDS:
        if kind not in _TABLES or conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?",
                                               (_TABLES[kind],)).fetchone() is not None:
            found.update(digests(conn, kind))
    return found


def digests(conn: sqlite3.Connection, kind: str, ids: Iterable[int] | None = None) -> dict[str, str]:
    """The digest of each record of ``kind`` (only those whose first key is in ``ids`` when given)."""
    spec = _KINDS[kind]
    params = sorted(set(ids)) if ids is not None else []
    where = f"WHERE {spec.filter} IN ({', '.join('?' * len(params))})" if ids is not None else ""
    found: dict[str, str] = {}
    current, hasher = None, None
    for row in conn.execute(spec.sql.format(where=where), params):
        key = row[:spec.keys]
        if key != current:
            if hasher is not None:
                found[_record(kind, current)] = hasher.hexdigest()
            current, hasher = key, hashlib.sha256(kind.encode("utf-8"))
        hasher.update(b"\n" + json.dumps(list(row), ensure_ascii=False, separators=(",", ":")).encode("utf-8"))
    if hasher is not None:
        found[_record(kind, current)] = hasher.hexdigest()
    return found


# ----------------------------------------------------------------------------- helpers


def _replay(conn: sqlite3.Connection) -> tuple[dict[str, tuple[str, int]], list[str]]:
    """The records the events seal now (record -> (digest, the event that sealed it last)), and the events whose
    ``sealed`` text cannot be read."""
    state: dict[str, tuple[str, int]] = {}
    unreadable = []
    if not sealing(conn):
        return state, unreadable
    for event, text in conn.execute("SELECT id, sealed FROM events WHERE sealed IS NOT NULL AND sealed != '' "
                                    "ORDER BY id"):
        try:
            sealed = json.loads(text)
            removed, added = list(sealed.get("removed", [])), dict(sealed.get("added", {}))
        except (ValueError, TypeError, AttributeError):
            unreadable.append(f"event #{event}: the records it seals cannot be read")
            continue
        for record in removed:
            state.pop(str(record), None)
        state.update({str(record): (str(digest), int(event)) for record, digest in added.items()})
    return state, unreadable


def _sealed_text(added: dict[str, str], removed: list[str]) -> str:
    body = {name: part for name, part in (("added", dict(sorted(added.items(), key=lambda i: _order(i[0])))),
                                          ("removed", removed)) if part}
    return json.dumps(body, ensure_ascii=False, separators=(",", ":")) if body else ""


def _by_kind(records: Iterable[str]) -> dict[str, set[int]]:
    """Records grouped by kind, with the first key of each (what `digests` filters on)."""
    grouped: dict[str, set[int]] = {}
    for record in records:
        kind, first = record.split(":")[:2]
        grouped.setdefault(kind, set()).add(int(first))
    return grouped


def _record(kind: str, key: tuple) -> str:
    return ":".join([kind, *(str(part) for part in key)])


def _order(record: str) -> tuple:
    kind, *key = record.split(":")
    return (list(_KINDS).index(kind) if kind in _KINDS else len(_KINDS), *(int(k) if k.isdigit() else 0 for k in key))


def _verb(record: str, one: str, many: str) -> str:
    return many if record.split(":")[0] in ("numbers", "outcomes") else one


def _name(conn: sqlite3.Connection, record: str) -> str:
    """A record in words: ``the per-query outcomes of evaluation 3 for run #2 (base)``, ``label-set version #5
    (labels v2)``."""
    kind, *key = record.split(":")
    ids = [int(k) if k.isdigit() else k for k in key]
    if kind in ("numbers", "outcomes"):
        what = "summary numbers" if kind == "numbers" else "per-query outcomes"
        return f"the {what} of evaluation {ids[0]} for {_run(conn, ids[1])}"
    if kind == "label_version":
        found = conn.execute("SELECT s.name, v.version FROM label_versions v JOIN label_sets s ON s.id = v.set_id "
                             "WHERE v.id = ?", (ids[0],)).fetchone()
        return f"label-set version #{ids[0]}" + (f" ({one_line(str(found[0]))} v{found[1]})" if found else "")
    if kind == "run":
        return _run(conn, ids[0])
    if kind == "panel_mark":
        found = conn.execute("SELECT label_set, query, kind, who FROM panel_marks WHERE id = ?", (ids[0],)).fetchone()
        return f"panel marks #{ids[0]}" + (f" ({found[2]} {one_line(str(found[3]))} on {one_line(str(found[1]))} of "
                                           f"{one_line(str(found[0]))})" if found else "")
    return {"evaluation": "saved evaluation {}", "reveal": "holdout reveal #{}"}.get(kind, kind + " {}").format(
        *ids[:1])


def _run(conn: sqlite3.Connection, run_id: int) -> str:
    found = conn.execute("SELECT name FROM runs WHERE id = ?", (run_id,)).fetchone()
    return f"run #{run_id}" + (f" ({one_line(str(found[0]))})" if found else "")


def _listed(found: list[tuple[int, str]], shown: int, noun: str, what: tuple[str, str],
            sentence: Callable[[int, str], str]) -> list[str]:
    """The first ``shown`` of ``found`` (event, record) in words, and one more line saying how many were left out
    (``what``: its verb, for one and for more)."""
    lines = [sentence(event, record) for event, record in found[:shown]]
    left = len(found) - shown
    if left > 0:
        lines.append(f"and {plural(left, 'more ' + noun)} {agree(left, *what)}")
    return lines
