"""The failure archive: every query a model line has failed, over its runs, and what people said about it.

Each saved evaluation records every query's outcome per run (`Workspace.save_evaluation`): the
rank of its first relevant doc, so a hit or a miss at any k. A **model line** is the runs that
share a model string (or a line name the user gave), in the order they reached the workspace.
Replaying a query's outcomes down its line gives its events:

* ``new`` - it fails the first time the line is seen answering it;
* ``fixed`` - it passes after failing in the line's previous run that answered it;
* ``regressed`` - it fails after passing in the previous run that answered it.

The ledger holds one row per (line, label set, query) that ever failed: when it was first seen
failing, when it was last fixed and last regressed, and a **status**: the latest event, unless a
person set one since (``known`` or ``won't fix``, or any other) - a person's status stands until a
later run changes the outcome again. People also add **cause tags** (`CAUSE_TAGS` suggests a
vocabulary; any short tag is accepted) and a **note**. Edits go through `Workspace.write` and are
logged; outcomes themselves are never edited.

A query fails at k when no relevant doc is in its top k (hit@k = 0: `evalcore.metrics.failure.FAILURE_MODE`,
decided by `failed_at_k`), and passes when its first relevant doc is at rank k or better. A run of chunks scored
with evidence spans also fails on a **fragment** (a relevant chunk in the top k holding under half the evidence);
each failing outcome says which kind it is (``failure``). The ledger's k defaults to the chosen k of the line's
latest evaluation.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ..errors import NotInWorkspace, invalid_parameter
from ..metrics.failure import FAILURE_MODE, MISS_NAMES, failed_at_k
from ..metrics.measures import check_k
from ..warning_log import plural
from .database import _frame, _now
from .schema import columns_of
from .evaluations import _line_labels
from .label_versions import LabelStore

STATUSES: dict[str, str] = {
    "new": "fails, and nobody has looked at it yet",
    "known": "fails; a person has looked at it",
    "regressed": "passed in an earlier run of the line and fails now",
    "fixed": "failed in an earlier run of the line and passes now",
    "wont_fix": "fails, and a person decided not to fix it (shown as \"won't fix\")",
}
"""Ledger statuses. ``new``, ``fixed`` and ``regressed`` are also set by the runs themselves."""

STATUS_LABELS = {"new": "new", "known": "known", "regressed": "regressed", "fixed": "fixed", "wont_fix": "won't fix"}
OPEN_STATUSES = ("regressed", "new", "known")
"""Statuses that count as open failures (shown in reports)."""

_STATUS_ORDER = {"regressed": 0, "new": 1, "known": 2, "wont_fix": 3, "fixed": 4}
_STATUS_ALIASES = {"won't fix": "wont_fix", "wont fix": "wont_fix", "wontfix": "wont_fix", "wont-fix": "wont_fix",
                   "won't-fix": "wont_fix", "won’t fix": "wont_fix"}

CAUSE_TAGS: dict[str, str] = {
    "vocabulary gap": "the customer's words are not the doc's words",
    "label wrong": "the labels are wrong: the doc retrieved is right, or the one marked relevant is not",
    "doc missing": "no doc answers the query (a content gap)",
    "chunking": "the answer is split across chunks or buried in a long one",
    "ranking": "the right doc is retrieved, but below k",
    "ambiguous query": "the query can mean several things",
    "duplicate docs": "near-identical docs crowd the top k",
}
"""Suggested cause tags; any short tag is accepted."""

MAX_TAG = 60
MAX_NOTE = 10_000

LEDGER_COLUMNS = [
    "line", "labels", "query", "query_text", "source", "status", "status_label", "status_by", "open", "passing",
    "failure", "regressed_now", "first_rank", "n_relevant", "first_failed_run_id", "first_failed_run", "first_failed_at",
    "fixed_run_id", "fixed_run", "regressed_run_id", "regressed_run", "last_run_id", "last_run", "n_runs",
    "n_failed", "tags", "note", "k", "labels_version", "fingerprint",
]
CHANGE_COLUMNS = [
    "query", "query_text", "source", "event", "first_rank", "first_rank_before", "status", "status_label", "tags",
    "note", "run_id", "run", "previous_run_id", "line", "k", "labels", "labels_version", "fingerprint",
]


def parse_status(status: str) -> str:
    """``won't fix`` / ``wont_fix`` / ``known`` ... -> the stored key; a usage error otherwise."""
    key = " ".join(str(status).strip().lower().split())
    key = _STATUS_ALIASES.get(key, key.replace(" ", "_"))
    if key not in STATUSES:
        raise invalid_parameter("status", "one of " + ", ".join(STATUS_LABELS.values()), status)
    return key


def normalise_tag(tag: str) -> str:
    """A tag as stored: lower case, single spaces, 1 to 60 characters."""
    text = " ".join(str(tag).split()).lower()
    if not 1 <= len(text) <= MAX_TAG:
        raise invalid_parameter("tag", f"a tag of 1 to {MAX_TAG} characters (e.g. {', '.join(CAUSE_TAGS)})", tag)
    return text


@dataclass(frozen=True)
class LineChanges:
    """What one run of a model line changed against the line's previous runs, regressions first.

    ``regressions``: queries that passed the last time the line answered them and fail now;
    ``fixed``: the reverse; ``new_failures``: queries failing the first time the line answers
    them. Each frame follows `CHANGE_COLUMNS`, worst first.
    """

    line: str
    labels: str
    k: int
    run_id: int
    run: str
    previous_run_id: int | None
    previous_run: str | None
    regressions: pd.DataFrame
    fixed: pd.DataFrame
    new_failures: pd.DataFrame
    n_still_failing: int
    n_queries: int

    def summary(self) -> str:
        """One sentence, regressions first."""
        against = (f"vs #{self.previous_run_id} {self.previous_run}" if self.previous_run_id is not None
                   else "(the line's first run)")
        parts = [f"{plural(len(self.regressions), 'regression')}"]
        if len(self.regressions):
            shown = ", ".join(self.regressions["query"].astype(str).head(5))
            parts[0] += f" ({shown}{', ...' if len(self.regressions) > 5 else ''})"
        parts.append(f"{len(self.fixed):,} fixed")
        parts.append(f"{plural(len(self.new_failures), 'new failure')}")
        parts.append(f"{self.n_still_failing:,} still failing")
        return (f"line {self.line}, run #{self.run_id} {self.run} {against} at k = {self.k} on {self.labels} "
                f"(n = {self.n_queries}): " + ", ".join(parts))


@dataclass(frozen=True)
class LedgerEntry:
    """One query of one line: its ledger row, its outcome in every run, and the edit log."""

    line: str
    labels: str
    query: str
    row: dict
    timeline: pd.DataFrame
    log: pd.DataFrame = field(repr=False)

    @property
    def status(self) -> str | None:
        return self.row.get("status")

    @property
    def tags(self) -> tuple[str, ...]:
        text = self.row.get("tags") or ""
        return tuple(t for t in text.split(", ") if t)

    @property
    def note(self) -> str:
        return self.row.get("note") or ""


class Archive:
    """The failure ledger over a `Workspace` (``workspace.archive``). Reads are snapshots; edits are
    single transactions through `Workspace.write`."""

    def __init__(self, workspace: LabelStore) -> None:
        self.workspace = workspace

    # ------------------------------------------------------------------ reading

    def observations(self, line: str, *, labels: str | None = None, k: int | None = None,
                     as_of: int | None = None) -> pd.DataFrame:
        """Every (run, query) outcome of a line on a label set, in run order, with ``passed`` at k.

        Each run counts once: its latest evaluation on the label set (any version). ``as_of``
        (a run id) ignores later runs. Columns: ``run_id``, ``run``, ``model``, ``uploaded_at``,
        ``evaluation_id``, ``labels_version``, ``fingerprint``, ``query``, ``n_relevant``,
        ``first_rank``, ``in_run``, ``passed``, ``event`` (new / fixed / regressed / empty),
        ``first_rank_before``, then ``line``, ``labels``, ``k``.
        """
        frame, name, chosen_k = self.workspace.read(lambda conn: _observations(conn, self.workspace, line, labels, k,
                                                                               as_of))
        return _replay(frame, line, name, chosen_k)

    def ledger(self, line: str, *, labels: str | None = None, k: int | None = None, as_of: int | None = None,
               include_passing: bool = False) -> pd.DataFrame:
        """One row per query the line has failed (or a person has annotated), regressions first.

        Order: queries that regressed in the line's latest run, then open statuses (regressed,
        new, known), then won't fix, then fixed; within each, the first relevant doc deepest
        first. ``include_passing`` adds queries that never failed (status empty). Columns follow
        `LEDGER_COLUMNS`; ``tags`` is a comma-separated string.
        """
        def read(conn):
            frame, name, chosen_k = _observations(conn, self.workspace, line, labels, k, as_of)
            edits = _edits(conn, line, name)
            return frame, name, chosen_k, edits

        frame, name, chosen_k, edits = self.workspace.read(read)
        observed = _replay(frame, line, name, chosen_k)
        return _ledger(observed, edits, self._query_fields(name), line, name, chosen_k, include_passing)

    def changes(self, line: str, *, run_id: int | None = None, labels: str | None = None,
                k: int | None = None) -> LineChanges:
        """What a run of the line (default: its latest) changed against the runs before it."""
        observed = self.observations(line, labels=labels, k=k)
        if observed.empty:
            raise NotInWorkspace(f"The model line {line!r} has no outcomes to compare.")
        name, chosen_k = observed["labels"].iloc[0], int(observed["k"].iloc[0])
        run_ids = pd.unique(observed["run_id"])
        if run_id is None:
            run_id = int(run_ids[-1])
        elif int(run_id) not in set(run_ids.tolist()):
            raise NotInWorkspace(f"Run {run_id} is not a saved run of line {line!r} on label set {name!r}; its runs "
                                 f"are: {', '.join(str(r) for r in run_ids)}.")
        run_id = int(run_id)
        earlier = [int(r) for r in run_ids if r < run_id]
        at = observed[observed["run_id"] == run_id]
        ledger = self.ledger(line, labels=name, k=chosen_k, as_of=run_id, include_passing=True)
        annotated = at.merge(ledger[["query", "query_text", "source", "status", "status_label", "tags", "note"]],
                             on="query", how="left")
        annotated["previous_run_id"] = earlier[-1] if earlier else pd.NA
        annotated["previous_run_id"] = annotated["previous_run_id"].astype("Int64")

        def pick(event: str) -> pd.DataFrame:
            part = annotated[annotated["event"] == event]
            return _worst_first(part)[CHANGE_COLUMNS].reset_index(drop=True)

        still = int(((~at["passed"]) & (at["event"] == "")).sum())
        previous = observed.loc[observed["run_id"] == earlier[-1], "run"].iloc[0] if earlier else None
        return LineChanges(line, name, chosen_k, run_id, str(at["run"].iloc[0]), earlier[-1] if earlier else None,
                           previous, pick("regressed"), pick("fixed"), pick("new"), still, len(at))

    def entry(self, line: str, query: str, *, labels: str | None = None, k: int | None = None) -> LedgerEntry:
        """One query up close: its ledger row, its outcome in each run of the line, and who changed what."""
        ledger = self.ledger(line, labels=labels, k=k, include_passing=True)
        rows = ledger[ledger["query"] == query]
        if rows.empty:
            raise NotInWorkspace(f"Line {line!r} has no outcome for query {query!r}.")
        name = str(rows["labels"].iloc[0])
        observed = self.observations(line, labels=name, k=k)
        timeline = observed[observed["query"] == query][
            ["run_id", "run", "model", "uploaded_at", "evaluation_id", "labels_version", "passed", "first_rank",
             "event"]].reset_index(drop=True)
        log = self.workspace.read(lambda conn: _frame(conn, """
            SELECT action, value, at FROM ledger_log WHERE line = ? AND labels = ? AND query = ? ORDER BY id""",
            (line, name, query)))
        record = rows.iloc[0].to_dict()
        return LedgerEntry(line, name, query, record, timeline, log)

    def _query_fields(self, labels: str) -> pd.DataFrame:
        info = self.workspace.load_labels(labels).query_info
        return info.reindex(columns=["query_text", "source"])

    # ------------------------------------------------------------------ editing

    def _set_status(self, line: str, query: str, status: str, *, labels: str | None = None) -> None:
        """Set a query's status (new, known, regressed, fixed, won't fix). It stands until a later run of
        the line changes the query's outcome."""
        key = parse_status(status)

        def write(conn: sqlite3.Connection) -> None:
            name, watermark = _edit_context(conn, self.workspace, line, query, labels)
            now = _now()
            conn.execute(
                "INSERT INTO ledger (line, labels, query, status, status_run_id, note, updated_at) "
                "VALUES (?, ?, ?, ?, ?, '', ?) ON CONFLICT (line, labels, query) DO UPDATE SET "
                "status = excluded.status, status_run_id = excluded.status_run_id, updated_at = excluded.updated_at",
                (line, name, query, key, watermark, now))
            _log(conn, line, name, query, "status", key, now)

        self.workspace.write(write)

    def _set_note(self, line: str, query: str, note: str, *, labels: str | None = None) -> None:
        """Replace a query's note (empty text clears it)."""
        if not isinstance(note, str) or len(note) > MAX_NOTE:
            raise invalid_parameter("note", f"text of at most {MAX_NOTE:,} characters", note if not isinstance(note, str)
                                    else f"{len(note):,} characters")

        def write(conn: sqlite3.Connection) -> None:
            name, _ = _edit_context(conn, self.workspace, line, query, labels)
            now = _now()
            conn.execute(
                "INSERT INTO ledger (line, labels, query, status, status_run_id, note, updated_at) "
                "VALUES (?, ?, ?, NULL, NULL, ?, ?) ON CONFLICT (line, labels, query) DO UPDATE SET "
                "note = excluded.note, updated_at = excluded.updated_at", (line, name, query, note, now))
            _log(conn, line, name, query, "note", note, now)

        self.workspace.write(write)

    def _add_tag(self, line: str, query: str, tag: str, *, labels: str | None = None) -> None:
        """Add a cause tag (see `CAUSE_TAGS`); adding one twice keeps one."""
        text = normalise_tag(tag)

        def write(conn: sqlite3.Connection) -> None:
            name, _ = _edit_context(conn, self.workspace, line, query, labels)
            now = _now()
            added = conn.execute("INSERT OR IGNORE INTO ledger_tags (line, labels, query, tag, added_at) "
                                 "VALUES (?, ?, ?, ?, ?)", (line, name, query, text, now)).rowcount
            if added:
                _log(conn, line, name, query, "add tag", text, now)

        self.workspace.write(write)

    def _remove_tag(self, line: str, query: str, tag: str, *, labels: str | None = None) -> None:
        text = normalise_tag(tag)

        def write(conn: sqlite3.Connection) -> None:
            name, _ = _edit_context(conn, self.workspace, line, query, labels)
            removed = conn.execute("DELETE FROM ledger_tags WHERE line = ? AND labels = ? AND query = ? AND tag = ?",
                                   (line, name, query, text)).rowcount
            if removed:
                _log(conn, line, name, query, "remove tag", text, _now())

        self.workspace.write(write)


# ----------------------------------------------------------------------------- internals


def _resolve_k(conn: sqlite3.Connection, line: str, labels: str, k: int | None) -> int:
    if k is not None:
        return check_k(k)
    row = conn.execute("""
        SELECT e.k FROM evaluations e JOIN evaluation_runs er ON er.evaluation_id = e.id
        JOIN runs r ON r.id = er.run_id JOIN label_versions v ON v.id = e.label_version_id
        JOIN label_sets s ON s.id = v.set_id WHERE r.line = ? AND s.name = ? ORDER BY e.id DESC LIMIT 1""",
                       (line, labels)).fetchone()
    if row is None:
        raise NotInWorkspace(f"The model line {line!r} has no evaluation on label set {labels!r}.")
    return int(row[0])


def _observations(conn: sqlite3.Connection, workspace: LabelStore, line: str, labels: str | None, k: int | None,
                  as_of: int | None) -> tuple[pd.DataFrame, str, int]:
    name = _line_labels(conn, line, labels, workspace.location)
    chosen_k = _resolve_k(conn, line, name, k)
    limit = int(as_of) if as_of is not None else None
    # A workspace from before chunk runs, opened read-only (not upgraded), has no evidence column.
    evidence = "o.evidence_recall" if ("outcomes", "evidence_recall") in columns_of(conn) else "NULL"
    frame = _frame(conn, f"""
        WITH latest AS (
            SELECT er.run_id, MAX(e.id) AS evaluation_id
            FROM evaluation_runs er JOIN evaluations e ON e.id = er.evaluation_id
            JOIN label_versions v ON v.id = e.label_version_id JOIN label_sets s ON s.id = v.set_id
            JOIN runs r ON r.id = er.run_id
            WHERE r.line = ? AND s.name = ? {"AND r.id <= ?" if limit is not None else ""}
            GROUP BY er.run_id)
        SELECT r.id AS run_id, r.name AS run, r.model, r.uploaded_at, l.evaluation_id, v.version AS labels_version,
               v.fingerprint, o.query, o.n_relevant, o.first_rank, o.in_run, {evidence} AS evidence_recall,
               e.k AS evidence_k
        FROM latest l JOIN runs r ON r.id = l.run_id JOIN evaluations e ON e.id = l.evaluation_id
        JOIN label_versions v ON v.id = e.label_version_id
        JOIN outcomes o ON o.evaluation_id = l.evaluation_id AND o.run_id = l.run_id
        ORDER BY r.id, o.rowid""", (line, name) + ((limit,) if limit is not None else ()))
    return frame, name, chosen_k


def _replay(frame: pd.DataFrame, line: str, labels: str, k: int) -> pd.DataFrame:
    """Add ``passed`` at k and each outcome's event (new / fixed / regressed) down the line's run order."""
    columns = ["run_id", "run", "model", "uploaded_at", "evaluation_id", "labels_version", "fingerprint", "query",
               "n_relevant", "first_rank", "in_run", "evidence_recall", "evidence_k"]
    if frame.empty:
        frame = pd.DataFrame({c: [] for c in columns})
    out = frame.copy()
    out["first_rank"] = pd.array(out["first_rank"], dtype="Int64")
    out["in_run"] = out["in_run"].astype(bool)
    ranks = out["first_rank"].to_numpy(dtype=np.float64, na_value=np.inf)
    # Only the first relevant rank is stored, so ``found`` is 1 when any relevant doc is in the top k, else 0:
    # exactly what the ledger's meaning of failure (FAILURE_MODE, "none": nothing relevant found) asks.
    found = (ranks <= k).astype(np.int64)
    nothing = failed_at_k(found, out["n_relevant"].to_numpy(), FAILURE_MODE)
    # A run of chunks with evidence spans also fails on a fragment: a relevant chunk holding under half the evidence.
    # Evidence recall is stored at the evaluation's own k: at another k the ledger cannot tell, and judges on the
    # relevant documents alone.
    evidence = pd.to_numeric(out.get("evidence_recall", pd.Series(np.nan, index=out.index)), errors="coerce")
    if "evidence_k" in out:
        evidence = evidence.where(pd.to_numeric(out["evidence_k"], errors="coerce") == k)
    fragment = failed_at_k(found, out["n_relevant"].to_numpy(), "fragment", evidence.to_numpy(dtype=np.float64))
    out["passed"] = ~(nothing | fragment)
    out["failure"] = np.select([nothing, fragment], [MISS_NAMES[FAILURE_MODE], MISS_NAMES["fragment"]], "")
    out = out.sort_values(["query", "run_id"], kind="stable")
    grouped = out.groupby("query", sort=False)
    before = grouped["passed"].shift(1)
    had = before.notna().to_numpy()
    was = before.fillna(False).astype(bool).to_numpy()
    now = out["passed"].to_numpy()
    out["event"] = np.select([~now & ~had, now & had & ~was, ~now & had & was], ["new", "fixed", "regressed"], "")
    out["first_rank_before"] = grouped["first_rank"].shift(1).astype("Int64")
    out = out.sort_values(["run_id"], kind="stable").reset_index(drop=True)
    out["line"] = line
    out["labels"] = labels
    out["k"] = k
    return out


def _edits(conn: sqlite3.Connection, line: str, labels: str) -> pd.DataFrame:
    frame = _frame(conn, """
        SELECT query, status AS person_status, status_run_id, note, updated_at FROM ledger WHERE line = ? AND labels = ?
        UNION ALL
        SELECT DISTINCT query, NULL, NULL, NULL, NULL FROM ledger_tags t WHERE line = ? AND labels = ?
          AND NOT EXISTS (SELECT 1 FROM ledger l WHERE l.line = t.line AND l.labels = t.labels AND l.query = t.query)
        """, (line, labels, line, labels))
    tags = _frame(conn, "SELECT query, tag FROM ledger_tags WHERE line = ? AND labels = ? ORDER BY tag",
                  (line, labels))
    joined = tags.groupby("query", sort=False)["tag"].agg(", ".join) if len(tags) else pd.Series(dtype=object)
    frame["tags"] = frame["query"].map(joined).astype(object).fillna("") if len(frame) else pd.Series(dtype=object)
    return frame


def _ledger(observed: pd.DataFrame, edits: pd.DataFrame, fields: pd.DataFrame, line: str, labels: str, k: int,
            include_passing: bool) -> pd.DataFrame:
    if observed.empty:
        return pd.DataFrame({c: [] for c in LEDGER_COLUMNS})
    ordered = observed.sort_values(["query", "run_id"], kind="stable")
    grouped = ordered.groupby("query", sort=False)
    last = grouped.tail(1).set_index("query")
    table = pd.DataFrame(index=last.index)
    table["passing"] = last["passed"]
    table["failure"] = last["failure"].where(~last["passed"], "") if "failure" in last else ""
    table["first_rank"] = last["first_rank"]
    table["n_relevant"] = last["n_relevant"]
    table["last_run_id"] = last["run_id"]
    table["last_run"] = last["run"]
    table["labels_version"] = last["labels_version"]
    table["fingerprint"] = last["fingerprint"]
    table["n_runs"] = grouped.size()
    table["n_failed"] = grouped["passed"].agg(lambda s: int((~s).sum()))

    failed = ordered[~ordered["passed"]].groupby("query", sort=False).head(1).set_index("query")
    table["first_failed_run_id"] = failed["run_id"].reindex(table.index).astype("Int64")
    table["first_failed_run"] = failed["run"].reindex(table.index)
    table["first_failed_at"] = failed["uploaded_at"].reindex(table.index)
    for event in ("fixed", "regressed"):
        rows = ordered[ordered["event"] == event].groupby("query", sort=False).tail(1).set_index("query")
        table[f"{event}_run_id"] = rows["run_id"].reindex(table.index).astype("Int64")
        table[f"{event}_run"] = rows["run"].reindex(table.index)
    events = ordered[ordered["event"] != ""].groupby("query", sort=False).tail(1).set_index("query")
    auto_status = events["event"].reindex(table.index)
    auto_run = events["run_id"].reindex(table.index).astype("Float64")
    latest_run = ordered["run_id"].max()
    table["regressed_now"] = (auto_status == "regressed").fillna(False).to_numpy() & \
        (auto_run == latest_run).fillna(False).to_numpy()

    edits = edits.set_index("query") if len(edits) else pd.DataFrame(
        columns=["person_status", "status_run_id", "note", "updated_at", "tags"])
    person = edits["person_status"].reindex(table.index) if len(edits) else pd.Series(None, index=table.index,
                                                                                        dtype=object)
    mark = pd.to_numeric(edits["status_run_id"], errors="coerce").reindex(table.index) if len(edits) else \
        pd.Series(np.nan, index=table.index)
    use_person = person.notna().to_numpy() & (auto_run.isna().to_numpy() |
                                              (auto_run.fillna(0).to_numpy(dtype=np.float64) <=
                                               mark.fillna(-1).to_numpy(dtype=np.float64)))
    status = np.where(use_person, person.to_numpy(dtype=object), auto_status.to_numpy(dtype=object))
    table["status"] = pd.Series(status, index=table.index, dtype=object).where(lambda s: s.notna(), None)
    table["status_by"] = np.where(use_person, "person", np.where(auto_status.notna().to_numpy(), "auto", ""))
    table["tags"] = (edits["tags"].reindex(table.index).fillna("") if len(edits) else "")
    table["note"] = (edits["note"].reindex(table.index).fillna("") if len(edits) else "")
    annotated = person.notna() | (table["tags"] != "") | (table["note"] != "")
    if not include_passing:
        table = table[(table["n_failed"] > 0) | annotated]
    table = table.copy()
    table["status_label"] = table["status"].map(lambda s: STATUS_LABELS.get(s, "") if s else "")
    table["open"] = table["status"].isin(OPEN_STATUSES) & ~table["passing"]
    table["query_text"] = fields["query_text"].reindex(table.index).to_numpy(dtype=object) if len(fields) else None
    table["source"] = fields["source"].reindex(table.index).to_numpy(dtype=object) if len(fields) else None
    for column in ("query_text", "source"):
        table[column] = table[column].astype(object).where(table[column].notna(), None)
    table["line"] = line
    table["labels"] = labels
    table["k"] = k
    table = table.reset_index().rename(columns={"index": "query"})
    return _worst_first(table)[LEDGER_COLUMNS].reset_index(drop=True)


def _worst_first(frame: pd.DataFrame) -> pd.DataFrame:
    """Regressions in the latest run first, then open statuses, won't fix, fixed; deepest first rank first."""
    if frame.empty:
        return frame
    regressed_now = frame["regressed_now"] if "regressed_now" in frame else frame.get("event", "") == "regressed"
    status_rank = frame["status"].map(lambda s: _STATUS_ORDER.get(s, 9) if isinstance(s, str) else 9)
    passing = frame["passing"] if "passing" in frame else frame.get("passed", False)
    depth = -frame["first_rank"].to_numpy(dtype=np.float64, na_value=np.inf)
    keys = pd.DataFrame({"a": ~np.asarray(regressed_now, dtype=bool), "b": np.asarray(passing, dtype=bool),
                         "c": status_rank.to_numpy(), "d": depth, "e": frame["query"].astype(str).to_numpy()},
                        index=frame.index)
    order = keys.sort_values(["a", "b", "c", "d", "e"], kind="stable").index
    return frame.loc[order]


def _edit_context(conn: sqlite3.Connection, workspace: LabelStore, line: str, query: str,
                  labels: str | None) -> tuple[str, int]:
    """The label set an edit applies to and the line's latest run id on it; the query must have an outcome."""
    name = _line_labels(conn, line, labels, workspace.location)
    if not isinstance(query, str) or not query:
        raise invalid_parameter("query", "a query id", query)
    found = conn.execute("""
        SELECT MAX(r.id) FROM runs r JOIN evaluation_runs er ON er.run_id = r.id
        JOIN evaluations e ON e.id = er.evaluation_id JOIN label_versions v ON v.id = e.label_version_id
        JOIN label_sets s ON s.id = v.set_id
        JOIN outcomes o ON o.evaluation_id = er.evaluation_id AND o.run_id = er.run_id AND o.query = ?
        WHERE r.line = ? AND s.name = ?""", (query, line, name)).fetchone()[0]
    if found is None:
        raise NotInWorkspace(f"Line {line!r} has no outcome for query {query!r} on label set {name!r}.")
    latest = conn.execute("""
        SELECT MAX(r.id) FROM runs r JOIN evaluation_runs er ON er.run_id = r.id
        JOIN evaluations e ON e.id = er.evaluation_id JOIN label_versions v ON v.id = e.label_version_id
        JOIN label_sets s ON s.id = v.set_id WHERE r.line = ? AND s.name = ?""", (line, name)).fetchone()[0]
    return name, int(latest)


def _log(conn: sqlite3.Connection, line: str, labels: str, query: str, action: str, value: str, at: str) -> None:
    conn.execute("INSERT INTO ledger_log (line, labels, query, action, value, at) VALUES (?, ?, ?, ?, ?, ?)",
                 (line, labels, query, action, value, at))


__all__ = ["Archive", "CAUSE_TAGS", "CHANGE_COLUMNS", "LEDGER_COLUMNS", "LedgerEntry", "LineChanges",
           "OPEN_STATUSES", "STATUSES", "STATUS_LABELS", "normalise_tag", "parse_status"]
