"""What the log says each sampled query returned and what customers clicked: the docs a judging pool adds to the
runs' and the ``production`` run of the logged results.

One more DuckDB scan of the file, after the sample is drawn, for the sampled queries only (each logged text found by
its hash, as the reformulation pass finds it); a second one for UBI click events, which name the search they
followed by its ``query_id`` (keeping every click for a join would cost more than reading the file again). A
sampled query is a group of near-duplicates and repeated searches, so one rule says which loggings count:

* **results**: those of its most recent search whose results the log lists (latest timestamp; at equal or missing
  times, the later line), its first `MAX_IDS` in the order logged; an empty list when that search found nothing.
  That is what production returns now, and what the ``production`` run ranks;
* **clicks**: the distinct docs clicked after any of its `RECENT_SEARCHES` most recent searches (a table's
  ``clicked_ids``, UBI click events joined by ``query_id``), the most clicked first (ties by id), at most `MAX_IDS`.

Every aggregate is bounded per sampled query (a top-n by time, never a list of every logging), so a head query
logged millions of times holds no more memory than a tail query, and DuckDB stays within its limit whatever the
log.

Doc ids never carry query text: they are read only from the result and click fields, never from the query's, and
an id is left out (counted, `LoggedDocs.left_out`) when it holds white space or ``;`` (a TREC line and the queries
file's ``;`` lists cannot carry it, and text with spaces is not an id), is longer than `MAX_ID_CHARS`, or holds
personal data by the patterns queries are masked with (`evalcore.logs.personal_data`; an id of digits alone is an
id, not a phone or card number).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import duckdb
import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from .detect import LogShape
from .engine import connect, epoch_sql, read_error
from .id_lists import MAX_IDS, text_ids
from .personal_data import mask_texts
from .plain import CLICKED_IDS, RESULT_IDS

RECENT_SEARCHES = 100
"""The most recent searches of a sampled query whose clicks are counted."""
MAX_ID_CHARS = 256
"""The longest doc id kept."""


@dataclass(frozen=True)
class LoggedDocs:
    """Per sampled query (in the sample's order): the results of its most recent listed search (None: the log lists
    none for it) and the docs clicked; ids left out (`left_out`, see the module docs)."""

    results: list[tuple[str, ...] | None]
    clicks: list[tuple[str, ...]]
    left_out: int = 0

    @property
    def with_results(self) -> int:
        """Sampled queries with at least one logged result."""
        return sum(1 for r in self.results if r)

    @property
    def with_clicks(self) -> int:
        return sum(1 for c in self.clicks if c)


@dataclass
class _Found:
    """The scan's raw answer, before ids are checked: per position, results and (position, doc, clicks) rows."""

    results: dict[int, list[str]] = field(default_factory=dict)
    clicks: pd.DataFrame = field(default_factory=lambda: pd.DataFrame({"pos": [], "doc": [], "n": []}))


def none_logged(n: int) -> LoggedDocs:
    """No logged docs for ``n`` sampled queries (a log that lists neither results nor clicks)."""
    return LoggedDocs([None] * n, [()] * n)


def may_list(shape: LogShape, results: bool, events: int) -> bool:
    """Whether the log can hold result or click ids at all: a table's columns say; another log, whether the first
    pass saw results or events (a plain table of JSON lines is always looked at)."""
    if shape.kind == "table" and shape.columns:
        return bool({c.strip().lower() for c in shape.columns} & set(RESULT_IDS + CLICKED_IDS))
    return results or events > 0 or shape.kind == "table"


def logged_docs(shape: LogShape, relation: str, picked: pa.Table, n: int, *, events: bool) -> LoggedDocs:
    """Scan the log (``relation``: its rows as `evalcore.logs.engine.RELATION_COLUMNS`) for the ``n`` sampled
    queries; ``picked``: every logged text of a sampled query by its hash (``h``) with the query's place in the
    sample (``pos``); ``events``: the log holds UBI events (their clicks are joined by ``query_id``)."""
    if not n or not picked.num_rows:
        return none_logged(n)
    with connect() as con:
        try:
            found = _scan(con, relation, picked, events)
        except duckdb.Error as exc:
            raise read_error(exc, shape.log, f"{shape.describe()} throughout") from None
    return _checked(found, n)


def _scan(con: duckdb.DuckDBPyConnection, relation: str, picked: pa.Table, events: bool) -> _Found:
    """The sampled queries' searches grouped by query (a top-n by time each), then, with ``events``, the click events
    of their recent searches: the latest results by position, and every (position, doc) clicked with its count."""
    con.register("picked_found", picked)
    con.execute("CREATE TEMP TABLE picked AS SELECT h, pos FROM picked_found")
    con.unregister("picked_found")
    # As in the reformulation pass: the sampled texts stay on the build side (the right) of the join with the log,
    # whose size DuckDB cannot tell.
    con.execute("SET disabled_optimizers = 'join_order,build_side_probe_side'")
    # Lists of ids stay the text the log wrote them in until the few kept are read (`text_ids`): building a list
    # for every logging of a head query would cost more than the scan. Every arg_max is DuckDB's top-n form (n = 1
    # for the latest results): the plain one keeps each text it replaces until the end, which on a log in time
    # order is every logging of a head query, past the memory limit.
    recency = f"{{'t': coalesce({epoch_sql('l.ts')}, -1e300), 'o': l.ord}}"
    con.execute(f"""
CREATE TEMP TABLE recent AS
WITH log AS ({relation})
SELECT p.pos,
       (arg_max(CAST(l.ids AS VARCHAR), {recency}, 1) FILTER (WHERE l.ids IS NOT NULL))[1] AS ids,
       arg_max({{'c': CAST(l.clicks AS VARCHAR)}}, {recency}, {RECENT_SEARCHES}) AS clicks,
       arg_max(CAST(l.qid AS VARCHAR), {recency}, {RECENT_SEARCHES}) FILTER (WHERE l.qid IS NOT NULL) AS qids
FROM log l JOIN picked p ON hash(l.q) = p.h
WHERE l.kind = 'query'
GROUP BY p.pos""")
    clicked = "SELECT pos, unnest(clicks).c AS raw FROM recent"
    if events:  # a second scan: the click events of those searches, joined by query_id
        con.execute("CREATE TEMP TABLE searched AS SELECT DISTINCT unnest(qids) AS qid, pos FROM recent")
        clicked += (f" UNION ALL SELECT s.pos, e.raw FROM (WITH log AS ({relation}) SELECT CAST(qid AS VARCHAR) "
                    "AS qid, CAST(clicks AS VARCHAR) AS raw FROM log WHERE kind = 'event' AND clicks IS NOT NULL) e "
                    "JOIN searched s ON e.qid = s.qid")
    results = con.sql(f"SELECT pos, {text_ids('ids')} FROM recent WHERE ids IS NOT NULL").fetchall()
    counted = con.sql(f"SELECT pos, doc, count(*)::BIGINT AS n FROM (SELECT pos, unnest({text_ids('raw')}) AS doc "
                      f"FROM ({clicked}) WHERE raw IS NOT NULL) GROUP BY pos, doc").df()
    return _Found({int(pos): list(ids) for pos, ids in results}, counted)


def kept_ids(ids: pa.Array) -> np.ndarray:
    """Which doc ids may travel (see the module docs): no white space or ``;``, at most `MAX_ID_CHARS`, no personal
    data (an id of digits alone is kept)."""
    ids = pc.cast(ids, pa.large_string())
    if not len(ids):
        return np.zeros(0, dtype=bool)
    fits = pc.and_(pc.less_equal(pc.utf8_length(ids), MAX_ID_CHARS),
                   pc.invert(pc.match_substring_regex(ids, r"[\s;]")))
    digits = pc.match_substring_regex(ids, r"^[0-9]+$").to_numpy(zero_copy_only=False)
    personal = mask_texts(ids)[1] & ~digits
    return fits.to_numpy(zero_copy_only=False) & ~personal


def _checked(found: _Found, n: int) -> LoggedDocs:
    """The ids checked (`kept_ids`), each query's results without repeats (first place kept), its clicks the most
    clicked first (ties by id), each at most `MAX_IDS`."""
    rows = pd.DataFrame({"pos": np.repeat(list(found.results), [len(v) for v in found.results.values()]),
                         "doc": [d for v in found.results.values() for d in v]})
    clicks = found.clicks
    keep_results = kept_ids(pa.array(rows["doc"].astype(str).tolist(), pa.large_string()))
    keep_clicks = kept_ids(pa.array(clicks["doc"].astype(str).tolist(), pa.large_string()))
    left_out = int((~keep_results).sum() + (~keep_clicks).sum())
    rows = rows[keep_results].drop_duplicates(["pos", "doc"])
    clicks = clicks[keep_clicks].sort_values(["pos", "n", "doc"], ascending=[True, False, True], kind="stable")
    clicks = clicks[clicks.groupby("pos").cumcount() < MAX_IDS]
    results: list[tuple[str, ...] | None] = [None] * n
    for pos in found.results:
        results[pos] = ()
    for pos, docs in rows.groupby("pos", sort=False)["doc"]:
        results[int(pos)] = tuple(docs.astype(str))
    clicked: list[tuple[str, ...]] = [()] * n
    for pos, docs in clicks.groupby("pos", sort=False)["doc"]:
        clicked[int(pos)] = tuple(docs.astype(str))
    return LoggedDocs(results, clicked, left_out)
