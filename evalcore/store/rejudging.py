"""The re-judging queue and blind judging rounds: queries flagged for a second look, and each blind round's result.

Flagging a query never touches its labels; a blind judging round of one query makes a new label-set version,
records the round (judged depth, pool size, judge) and resolves the query's open queue entries, all in one
transaction.
"""

from __future__ import annotations

import sqlite3

import pandas as pd

from ..readers.labels import LabelSet
from .database import _check_name, _now, _replace_created, _who
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
