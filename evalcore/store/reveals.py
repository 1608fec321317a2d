"""Holdout reveals: an append-only record of every time someone looked at holdout numbers.

Recording a reveal saves the labels as a version first, so the reveal names the exact version, and returns the
`Reveal` that unseals the holdout. Reveals are keyed by label-set name, not by foreign key, and the database
refuses to change or erase them: deleting a label set does not erase that its holdout was seen.
"""

from __future__ import annotations

import json
import sqlite3
from typing import Sequence

import pandas as pd

from ..metrics.split import Reveal
from ..readers.labels import LabelSet
from ..safe_text import one_line
from ..timestamps import minute
from .chain import REVEALS, append
from .database import _now, _who
from .events import append_event
from .files import StoredFile
from .label_versions import LabelStore


class RevealStore(LabelStore):
    """The workspace's record of holdout reveals (part of `Workspace`)."""

    def _record_reveal(self, labels: LabelSet, *, rule: str, runs: Sequence[tuple[str, str]], name: str | None = None,
                      who: str | None = None, file: StoredFile | None = None) -> Reveal:
        """Record that someone is about to see holdout numbers; returns the `Reveal` that unseals them.

        The labels are saved as a version of the set ``name`` (default their own name) first, so
        the reveal names the exact version. Reveals are append-only; each is also in the log of who did what
        (`events`), written in the same transaction.
        """
        version = self._save_labels(labels, name=name, file=file)
        person = _who(who)
        runs_text = json.dumps([f"{n}={m}" for n, m in runs], ensure_ascii=False)

        def write(conn: sqlite3.Connection) -> tuple[int, str, int]:
            at = _now()
            reveal_id = append(conn, REVEALS, {"label_set": version.name, "version": version.version,
                                               "fingerprint": labels.fingerprint, "rule": rule, "runs": runs_text,
                                               "who": person, "at": at})
            views = conn.execute("SELECT COUNT(*) FROM holdout_reveals WHERE label_set = ?",
                                 (version.name,)).fetchone()[0]
            append_event(conn, person, "reveal holdout", f"holdout of {version.name} v{version.version}",
                         f"reveal #{reveal_id} ({rule}); runs {', '.join(f'{n}={m}' for n, m in runs)}")
            return reveal_id, at, views

        reveal_id, at, views = self.write(write)
        return Reveal(reveal_id, version.name, version.version, labels.fingerprint, rule,
                      tuple(f"{n}={m}" for n, m in runs), person, at, views)

    def reveals(self, label_set: str | None = None) -> pd.DataFrame:
        """Every recorded look at holdout numbers (of one label set, or all), oldest first."""
        columns = ", ".join(REVEALS.columns)  # the recorded content, not its chain
        if label_set is None:
            return self._frame(f"SELECT {columns} FROM holdout_reveals ORDER BY id")
        return self._frame(f"SELECT {columns} FROM holdout_reveals WHERE label_set = ? ORDER BY id", (label_set,))

    def reveal_summary(self, label_set: str) -> str:
        """``holdout of NAME viewed 3 times, last on 2026-11-29 23:01 by ana`` (or never viewed)."""
        seen = self.reveals(label_set)
        if seen.empty:
            return f"holdout of {label_set} never viewed"
        last = seen.iloc[-1]
        times = "once" if len(seen) == 1 else f"{len(seen)} times"
        return f"holdout of {label_set} viewed {times}, last on {minute(last['at'])} by {one_line(str(last['who']))}"
