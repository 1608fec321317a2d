"""Who did what: an append-only log of every change a person made to the workspace, with when and who.

`evalcore.workflows` appends one event per action (a saved evaluation, a reveal, a ledger change, a label-set
version, a judging round, a deletion, an upload), naming the person from their sign-in (the dashboard) or
``--who`` / the login name (the command line). The database refuses to change or erase an event; deleting what an
event names leaves the event. Each event is chained to the one before it (`chain`): an edit to the file shows in
``workspace verify``; it carries the digests of the saved records its change wrote (`seals`), so an edit to those shows
too. A workspace opened read-only from before the log existed reads as an empty log.
"""

from __future__ import annotations

import sqlite3

import pandas as pd

from .chain import EVENTS, append
from .database import Database, _check_name, _frame, _now
from .seals import claim

EVENT_COLUMNS = list(EVENTS.columns)


def append_event(conn: sqlite3.Connection, who: str, action: str, subject: str, detail: str = "") -> int:
    """Append one event inside the caller's transaction (a change and its event are stored together or not at
    all); returns its id. ``who`` is checked here, the one way every event is written (`_check_name`). The event
    seals the records this connection wrote or removed since its last event (`seals.claim`)."""
    person = _check_name(who, "who")
    return append(conn, EVENTS, {"at": _now(), "who": person, "action": action, "subject": str(subject),
                                 "detail": str(detail or ""), "sealed": claim(conn)})


class EventStore(Database):
    """The workspace's log of who did what (part of `Workspace`)."""

    def _record_event(self, who: str, action: str, subject: str, detail: str = "") -> int:
        """Append one event (``at`` is now, UTC); returns its id."""
        person = _check_name(who, "who")
        name = _check_name(action, "action")

        return self.write(lambda conn: append_event(conn, person, name, subject, detail))

    def events(self, *, who: str | None = None, action: str | None = None, limit: int | None = None) -> pd.DataFrame:
        """Events, newest first (of one person and/or one action when given; at most ``limit``): id, at (ISO UTC),
        who, action, subject, detail."""
        where, params = [], []
        if who is not None:
            where.append("who = ?")
            params.append(who)
        if action is not None:
            where.append("action = ?")
            params.append(action)
        clause = f" WHERE {' AND '.join(where)}" if where else ""
        tail = f" LIMIT {int(limit)}" if limit is not None else ""
        sql = f"SELECT {', '.join(EVENT_COLUMNS)} FROM events{clause} ORDER BY id DESC{tail}"

        def read(conn: sqlite3.Connection) -> pd.DataFrame:
            if conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'events'").fetchone() is None:
                return pd.DataFrame(columns=EVENT_COLUMNS)  # a read-only workspace from before the log
            return _frame(conn, sql, params)

        return self.read(read)
