"""The re-judging queue, blind judging rounds and the marks of several judges: queries flagged for a second look,
each blind round's result, and each person's marks kept apart until a panel is frozen.

Flagging a query never touches its labels; a blind judging round of one query makes a new label-set version,
records the round (judged depth, pool size, judge) and resolves the query's open queue entries, all in one
transaction. Several judges' marks (``panel_marks``: one row per person and query, an adjudicator's decisions, each
freeze's final marks) never change once stored; freezing them makes one new version for every query judged.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Mapping, Sequence

import pandas as pd

from ..readers.labels import LabelSet
from .database import _check_name, _frame, _now, _replace_created, _who
from .label_versions import LabelStore, LabelVersion, _cases_table, _set_id


class RejudgingStore(LabelStore):
    """The workspace's re-judging queue and blind judging rounds (part of `Workspace`)."""

    def _flag_for_rejudging(self, label_set: str, query: str, *, reason: str, doc_id: str | None = None,
                           who: str | None = None) -> int:
        """Queue one query of a saved label set for blind re-judging (labels are not touched); returns the entry
        id. A query already waiting is not queued twice (its open entry's id is returned)."""
        name = _check_name(label_set, "label set")
        person = _who(who)

        def write(conn: sqlite3.Connection) -> int:
            _set_id(conn, name, self.location)
            found = conn.execute("SELECT id FROM rejudge_queue WHERE label_set = ? AND query = ? AND "
                                 "resolved_version IS NULL", (name, str(query))).fetchone()
            if found:
                return found[0]
            return conn.execute(
                "INSERT INTO rejudge_queue (label_set, query, reason, doc_id, flagged_by, flagged_at) "
                "VALUES (?, ?, ?, ?, ?, ?)", (name, str(query), str(reason), doc_id, person, _now())).lastrowid

        return self.write(write)

    def rejudge_queue(self, label_set: str | None = None, *, open_only: bool = True) -> pd.DataFrame:
        """Queries flagged for blind re-judging (open ones unless ``open_only`` is False), oldest first."""
        where, params = [], []
        if label_set is not None:
            where.append("label_set = ?")
            params.append(label_set)
        if open_only:
            where.append("resolved_version IS NULL")
        clause = f"WHERE {' AND '.join(where)}" if where else ""
        return self._frame(f"SELECT * FROM rejudge_queue {clause} ORDER BY id", params)

    def _save_blind_judgments(self, name: str, judged: LabelSet, *, query: str, depth: int, who: str | None = None,
                             note: str | None = None) -> LabelVersion:
        """A new version of label set ``name`` with a blind judging round of one query (`judging.marks_to_labels`),
        the round (judged depth, pool size, who) recorded and the query's open re-judging entries resolved, all in
        one transaction. Earlier versions never change."""
        set_name = _check_name(name, "name")
        judgments, info = _cases_table(judged)
        person = _who(who)
        n_relevant = int((judgments["grade"] > 0).sum())
        text = note or f"blind judging of {query} at depth {int(depth)} by {person}"

        def write(conn: sqlite3.Connection) -> tuple[int, bool]:
            version_id, created = self._add_cases_in(conn, set_name, judgments, info, text)
            version = conn.execute("SELECT version FROM label_versions WHERE id = ?", (version_id,)).fetchone()[0]
            at = _now()
            conn.execute("INSERT INTO judging_rounds (label_set, version, query, depth, n_docs, n_relevant, judge, at) "
                         "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                         (set_name, version, str(query), int(depth), len(judgments), n_relevant, person, at))
            conn.execute("UPDATE rejudge_queue SET resolved_version = ?, resolved_at = ? WHERE label_set = ? AND "
                         "query = ? AND resolved_version IS NULL", (version, at, set_name, str(query)))
            return version_id, created

        version_id, created = self.write(write)
        return _replace_created(self._version_record(version_id), created)

    def judging_rounds(self, label_set: str | None = None) -> pd.DataFrame:
        """Every blind judging round: label set, version made, query, judged depth, pool size, judge, time."""
        if label_set is None:
            return self._frame("SELECT * FROM judging_rounds ORDER BY id")
        return self._frame("SELECT * FROM judging_rounds WHERE label_set = ? ORDER BY id", (label_set,))

    # ------------------------------------------------------------------ several judges

    def _save_panel_marks(self, label_set: str, query: str, marks: Mapping[str, bool], *, kind: str, who: str,
                          depth: int, query_text: str | None = None, source: str | None = None,
                          stratum: str | None = None, version: int | None = None, note: str = "") -> int:
        """One person's marks on one query (``kind``: judge, adjudication or frozen), kept apart from everyone
        else's; returns the row id. Rows are never changed: a later row of the same person and query replaces it."""
        name = _check_name(label_set, "label set")
        person = _check_name(who, "who")
        body = json.dumps({str(doc): int(bool(mark)) for doc, mark in marks.items()}, ensure_ascii=False,
                          separators=(",", ":"))
        row = (name, str(query), str(kind), person, int(depth), body, query_text, source, stratum, version,
               str(note or ""), _now())
        return self.write(lambda conn: conn.execute(
            "INSERT INTO panel_marks (label_set, query, kind, who, depth, marks, query_text, source, stratum, "
            "version, note, at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", row).lastrowid)

    def panel_marks(self, label_set: str | None = None) -> pd.DataFrame:
        """Every mark of several judges, one row per (entry, doc), oldest first: entry, label_set, query, kind
        (judge, adjudication, frozen), who, depth, doc_id, relevant, query_text, source, stratum, version, note, at."""
        where, params = ("WHERE label_set = ?", (label_set,)) if label_set is not None else ("", ())

        def read(conn: sqlite3.Connection) -> pd.DataFrame:
            if conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'panel_marks'").fetchone() \
                    is None:
                return _marks_frame(pd.DataFrame(columns=PANEL_ROW_COLUMNS))  # read-only, from before schema 8
            return _marks_frame(_frame(conn, f"SELECT {', '.join(PANEL_ROW_COLUMNS)} FROM panel_marks {where} "
                                             "ORDER BY id", params))

        return self.read(read)

    def _freeze_panel(self, label_set: str, judged: LabelSet, rounds: Sequence[Mapping], *, who: str,
                      note: str | None = None) -> LabelVersion:
        """A new version of ``label_set`` with the panel's final marks (``judged``), in one transaction with, for
        each query of ``rounds`` (query, depth, n_docs, n_relevant, judges, marks, query_text, source, stratum): its
        judging round, its frozen marks (which close the query's open marks) and its resolved re-judging entries."""
        set_name = _check_name(label_set, "label set")
        person = _check_name(who, "who")
        judgments, info = _cases_table(judged)
        text = note or f"judged blind by several people, frozen by {person}"

        def write(conn: sqlite3.Connection) -> tuple[int, bool]:
            version_id, created = self._add_cases_in(conn, set_name, judgments, info, text)
            version = conn.execute("SELECT version FROM label_versions WHERE id = ?", (version_id,)).fetchone()[0]
            at = _now()
            for found in rounds:
                query = str(found["query"])
                conn.execute("INSERT INTO judging_rounds (label_set, version, query, depth, n_docs, n_relevant, judge, "
                             "at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                             (set_name, version, query, int(found["depth"]), int(found["n_docs"]),
                              int(found["n_relevant"]), ", ".join(found["judges"]), at))
                body = json.dumps({str(d): int(bool(m)) for d, m in found["marks"].items()}, ensure_ascii=False,
                                  separators=(",", ":"))
                conn.execute("INSERT INTO panel_marks (label_set, query, kind, who, depth, marks, query_text, source, "
                             "stratum, version, note, at) VALUES (?, ?, 'frozen', ?, ?, ?, ?, ?, ?, ?, '', ?)",
                             (set_name, query, person, int(found["depth"]), body, found.get("query_text"),
                              found.get("source"), found.get("stratum"), version, at))
                conn.execute("UPDATE rejudge_queue SET resolved_version = ?, resolved_at = ? WHERE label_set = ? AND "
                             "query = ? AND resolved_version IS NULL", (version, at, set_name, query))
            return version_id, created

        version_id, created = self.write(write)
        return _replace_created(self._version_record(version_id), created)


PANEL_ROW_COLUMNS = ["id", "label_set", "query", "kind", "who", "depth", "marks", "query_text", "source", "stratum",
                     "version", "note", "at"]
PANEL_COLUMNS = ["entry", "label_set", "query", "kind", "who", "depth", "doc_id", "relevant", "query_text", "source",
                 "stratum", "version", "note", "at"]


def _marks_frame(rows: pd.DataFrame) -> pd.DataFrame:
    """The stored rows (one per person and query, marks as JSON) as one row per (entry, doc), in each pool's order."""
    out = []
    for row in rows.itertuples(index=False):
        for doc, mark in json.loads(row.marks).items():
            out.append((row.id, row.label_set, row.query, row.kind, row.who, row.depth, doc, bool(mark),
                        row.query_text, row.source, row.stratum, row.version, row.note, row.at))
    return pd.DataFrame(out, columns=PANEL_COLUMNS)
