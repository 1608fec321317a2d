"""A query log counted out of core: every distinct query text with how often it was logged, how often its results
were known and empty, and how often a different query followed it in the same session within a minute.

Two DuckDB scans of the file, no Python loop per log line:

1. every row grouped by its query text as written (DuckDB spills what does not fit): its count, results known,
   results empty; the rows that are events, bulk actions, other spans, blank, too long or unreadable are counted
   by kind. The distinct texts (not the rows) come to Python: normalised (`evalcore.logs.normalise`), personal data
   masked (`evalcore.logs.personal_data`), and grouped again by the masked normal form.
2. when the log has sessions: each row's normal form joined back by its text's hash, the searches written to a
   Parquet file in the spill folder, sorted by session and time (DuckDB's external sort) and streamed back in
   batches: whether the next query of the session is a different one within `REFORMULATION_SECONDS` is a comparison
   of neighbouring rows in numpy.

A query longer than `MAX_QUERY_CHARS` as logged is not something a person typed: counted, never held or sampled.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..errors import InputError
from ..warning_log import EvalWarning, plural
from .detect import LogShape
from .engine import connect, epoch_sql, line_of_record, line_text, literal, read_error
from .normalise import normalise_texts
from .personal_data import kind_counts, mask_texts
from .plain import plain_relation
from .spans import spans_relation
from .ubi import ubi_relation

MAX_QUERY_CHARS = 4096
"""The longest query text sampled, in characters as logged; a longer one is counted and left out."""
REFORMULATION_SECONDS = 60
"""A query followed by a different one in the same session within this many seconds was reformulated."""

_HOLDS = {"ubi": "ubi_queries documents with a user_query (events are not queries)",
          "openinference": "retriever spans with an input.value", "table": "rows with a query text"}
"""What holds the queries in each kind of log, for the message about a log without any."""
_RELATIONS = {"ubi": ubi_relation, "openinference": spans_relation, "table": plain_relation}


@dataclass
class QueryCounts:
    """The distinct normalised queries of a log (``table``: ``query``, ``count``, ``known``, ``empty``, ``timed``,
    ``reformulated``, sorted by ``query``) and what else the log held (``rows`` by kind). ``texts``: each distinct
    query text as logged, by its hash (``h``), with the row of ``table`` it normalises to (``row``): how a later scan
    finds the logged searches of a normalised query."""

    shape: LogShape
    table: pa.Table
    rows: dict[str, int]
    texts: pa.Table = field(default_factory=lambda: pa.table({"h": pa.array([], pa.uint64()),
                                                               "row": pa.array([], pa.int32())}))
    masked_queries: int = 0
    masked_distinct: int = 0
    masked_kinds: dict[str, int] = field(default_factory=dict)
    sessions: bool = False
    results: bool = False
    warnings: list[EvalWarning] = field(default_factory=list)

    @property
    def queries(self) -> int:
        """Logged queries: rows with a query text."""
        return int(pc.sum(self.table["count"]).as_py() or 0)


def relation_of(shape: LogShape) -> str:
    """The SELECT giving ``shape``'s rows as `evalcore.logs.engine.RELATION_COLUMNS`, whatever its format."""
    return _RELATIONS[shape.kind](shape)


def count_queries(shape: LogShape) -> QueryCounts:
    """Scan ``shape``'s file: the distinct normalised, masked queries with their counts (see the module docs)."""
    relation = relation_of(shape)
    with connect() as con:
        try:
            _group(con, relation)
        except duckdb.Error as exc:
            raise read_error(exc, shape.log, f"{shape.describe()} throughout") from None
        rows, bad_time = _row_counts(con, shape)
        texts = con.sql("SELECT q, hash(q) AS h, n, known, empty, in_session FROM grouped "
                        "WHERE kind = 'query' AND q IS NOT NULL").to_arrow_table()
        con.execute("DROP TABLE grouped")
        normal = normalise_texts(texts["q"])
        masked, changed, kinds = mask_texts(normal)
        weights = texts["n"].to_numpy()
        per_text = pa.table({"h": texts["h"], "query": masked, "n": texts["n"], "known": texts["known"],
                             "empty": texts["empty"], "in_session": texts["in_session"]})
        blank = pc.equal(per_text["query"], "")
        rows["blank"] = rows.get("blank", 0) + int(pc.sum(pc.filter(per_text["n"], blank)).as_py() or 0)
        per_text = per_text.filter(pc.invert(blank))
        table = (per_text.group_by("query").aggregate([("n", "sum"), ("known", "sum"), ("empty", "sum"),
                                                       ("in_session", "sum")])
                 .rename_columns(["query", "count", "known", "empty", "in_session"]))
        table = pa.table({name: table[name] if name == "query" else pc.cast(pc.fill_null(table[name], 0), pa.int64())
                          for name in table.column_names}).sort_by("query")
        if not table.num_rows:
            raise InputError(f"{_HOLDS[shape.kind]} ({shape.describe()})", source=shape.log.name,
                             text=_nothing(rows))
        in_session = int(pc.sum(table["in_session"]).as_py() or 0) > 0
        rows_of = pa.table({"query": table["query"], "row": pa.array(np.arange(table.num_rows, dtype=np.int32))})
        texts = per_text.select(["h", "query"]).join(rows_of, "query").select(["h", "row"])
        try:
            timed, reformulated = (_reformulations(con, relation, texts, table.num_rows) if in_session
                                   else (np.zeros(table.num_rows, np.int64),) * 2)
        except duckdb.Error as exc:
            raise read_error(exc, shape.log, f"{shape.describe()} throughout") from None
        sessions = bool(timed.sum())
    table = table.drop_columns(["in_session"]).append_column("timed", pa.array(timed, pa.int64())) \
        .append_column("reformulated", pa.array(reformulated, pa.int64()))
    counts = QueryCounts(shape, table, rows, texts, masked_queries=int(weights[changed].sum()),
                         masked_distinct=int(pc.count_distinct(pc.filter(masked, pa.array(changed))).as_py()),
                         masked_kinds=kind_counts(kinds, weights[changed]), sessions=sessions,
                         results=int(pc.sum(table["known"]).as_py() or 0) > 0)
    counts.warnings = _warnings(counts, bad_time)
    return counts


def _group(con: duckdb.DuckDBPyConnection, relation: str) -> None:
    """Pass 1: the table ``grouped``, one row per (kind, query text as written), kept in DuckDB (which spills it):
    only the query texts and their counts come to Python."""
    con.execute(f"""
CREATE TEMP TABLE grouped AS
WITH log AS ({relation}),
rows AS (SELECT kind, ord, bad, results, session, ts,
                kind = 'query' AND q IS NOT NULL AND length(q) > {MAX_QUERY_CHARS} AS too_long,
                CASE WHEN bad IS NULL AND NOT (length(q) > {MAX_QUERY_CHARS}) THEN q END AS q
         FROM log)
SELECT kind, q, count(*)::BIGINT AS n, count(results)::BIGINT AS known, count_if(results = 0)::BIGINT AS empty,
       count(session)::BIGINT AS in_session,
       count_if(session IS NOT NULL AND ts IS NOT NULL AND {epoch_sql('ts')} IS NULL)::BIGINT AS bad_time,
       count_if(too_long)::BIGINT AS too_long, min(ord)::BIGINT AS first_ord,
       min(ord) FILTER (WHERE bad IS NOT NULL)::BIGINT AS bad_ord, any_value(bad) FILTER (WHERE bad IS NOT NULL) AS bad
FROM rows GROUP BY kind, q""")


def _row_counts(con: duckdb.DuckDBPyConnection, shape: LogShape) -> tuple[dict[str, int], int]:
    """Rows by kind, and queries in a session whose time cannot be read; an unreadable row, or a row of another
    format, is an InputError naming its line."""
    bad = con.sql("SELECT bad_ord, bad FROM grouped WHERE bad_ord IS NOT NULL ORDER BY bad_ord LIMIT 1").fetchall()
    if bad:
        _raise_at(shape, int(bad[0][0]), f"{bad[0][1]} ({shape.describe()})")
    other = con.sql("SELECT min(first_ord) FROM grouped WHERE kind = 'other'").fetchall()[0][0]
    if other is not None:
        _raise_at(shape, int(other), f"a line of {shape.describe()}, as the file's first lines are")
    counts: dict[str, int] = {}
    summary = con.sql("SELECT kind, q IS NULL AS no_text, sum(n)::BIGINT, sum(too_long)::BIGINT, "
                      "sum(bad_time)::BIGINT FROM grouped GROUP BY kind, no_text").fetchall()
    for kind, no_text, n, too_long, _ in summary:
        if kind == "query" and no_text:  # no text, or too long
            counts["too_long"] = counts.get("too_long", 0) + too_long
            counts["blank"] = counts.get("blank", 0) + n - too_long
        elif kind != "query":
            counts[kind] = counts.get(kind, 0) + n
    counts["records"] = sum(row[2] for row in summary)
    return counts, sum(row[4] for row in summary)


def _raise_at(shape: LogShape, ordinal: int, expected: str) -> None:
    if shape.layout in ("parquet", "csv", "tsv"):
        where, line = ("row", ordinal) if shape.layout == "parquet" else ("line", ordinal + 1)
        raise InputError(expected, source=shape.log.name, line=line, where=where)
    if shape.layout == "dump":  # every line is a row there, blank ones too
        raise InputError(expected, source=shape.log.name, line=ordinal, text=line_text(shape.log, ordinal))
    line, text = line_of_record(shape.log, ordinal)
    raise InputError(expected, source=shape.log.name, line=line, text=text)


def _nothing(rows: dict[str, int]) -> str:
    held = [plural(n, word, many) for key, word, many in (("event", "UBI event", "UBI events"),
                                                          ("action", "bulk action line", "bulk action lines"),
                                                          ("span", "span of another kind", "spans of other kinds"),
                                                          ("blank", "row without a query text",
                                                           "rows without a query text"),
                                                          ("too_long", "query too long", "queries too long"))
            if (n := rows.get(key, 0))]
    return ", ".join(held) if held else "no rows"


def _reformulations(con: duckdb.DuckDBPyConnection, relation: str, texts: pa.Table,
                    distinct: int) -> tuple[np.ndarray, np.ndarray]:
    """Pass 2: for each of the ``distinct`` normalised queries (``texts``: each logged text's hash and the row of its
    normal form), the logged occurrences with a session and a readable time, and those a different query followed in
    the same session within `REFORMULATION_SECONDS`.

    Each search's session (hashed), time and query go to a Parquet file in the spill folder; DuckDB sorts them by
    session, time and query (an external sort: it spills what does not fit; ties in time are ordered by the normal
    form, so the answer does not depend on the file's order) and streams them back in batches, each search compared
    with the next one a batch at a time in numpy."""
    con.register("norms_found", texts.rename_columns(["h", "nid"]))
    con.execute("CREATE TEMP TABLE norms AS SELECT * FROM norms_found")
    con.unregister("norms_found")
    # DuckDB cannot tell how many rows a log holds (it guesses none) and would build the join's hash table from the
    # log: the join is written with the distinct texts on the build side (the right), and left there. The texts are
    # joined by their 64-bit hash (two of a million distinct texts share one about once in 10^7 logs).
    con.execute("SET disabled_optimizers = 'join_order,build_side_probe_side'")
    searches = str(Path(con.sql("SELECT current_setting('temp_directory')").fetchall()[0][0]) / "searches.parquet")
    con.execute(f"""
COPY (WITH log AS ({relation})
      SELECT hash(l.session) AS s, {epoch_sql('l.ts')} AS t, m.nid
      FROM log l JOIN norms m ON hash(l.q) = m.h
      WHERE l.kind = 'query' AND l.session IS NOT NULL AND {epoch_sql('l.ts')} IS NOT NULL)
TO {literal(searches)} (FORMAT parquet)""")
    sorted_searches = con.sql(f"SELECT s, t, nid FROM read_parquet({literal(searches)}) ORDER BY s, t, nid"
                              ).to_arrow_reader(1 << 20)
    timed = np.zeros(distinct, np.int64)
    again = np.zeros(distinct, np.int64)
    carried = None  # the last search of the batch before: its next search starts this batch
    for batch in sorted_searches:
        session, time, nid = (batch.column(i).to_numpy() for i in range(3))
        timed += np.bincount(nid, minlength=len(timed))
        if carried is not None:
            session, time, nid = (np.concatenate(([c], v)) for c, v in zip(carried, (session, time, nid)))
        followed = ((session[1:] == session[:-1]) & (nid[1:] != nid[:-1])
                    & (time[1:] - time[:-1] <= REFORMULATION_SECONDS))
        again += np.bincount(nid[:-1][followed], minlength=len(again))
        carried = (session[-1], time[-1], nid[-1])
    return timed, again


def _warnings(counts: QueryCounts, bad_time: int) -> list[EvalWarning]:
    out = []
    name = counts.shape.log.name
    if counts.rows.get("too_long"):
        n = counts.rows["too_long"]
        out.append(EvalWarning("query_too_long", f"{name}: {plural(n, 'query', 'queries')} longer than "
                               f"{MAX_QUERY_CHARS:,} characters left out (not something a person typed)", n))
    if bad_time:
        out.append(EvalWarning("timestamp_unreadable", f"{name}: {plural(bad_time, 'query', 'queries')} in a session "
                               "with a timestamp that is neither ISO 8601 nor a number since 1970: left out of the "
                               "reformulation check", bad_time))
    return out
