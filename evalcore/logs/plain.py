"""A plain table of queries as one SQL relation of the log columns (`evalcore.logs.engine.RELATION_COLUMNS`).

One row per search: ``query`` (or ``query_text``, ``user_query``) and, optionally, ``timestamp`` (``time``, ``ts``),
``session`` (``session_id``, ``client_id``), ``result_ids`` (``results``, ``query_response_object_ids``: a list, or
ids in one cell separated by commas, semicolons, bars or spaces; an empty cell or ``[]`` is a search that found
nothing) or ``result_count`` (``n_results``, ``hits``), and ``clicked_ids`` (``clicked_doc_ids``: the docs the
customer clicked after that search, written as ``result_ids`` is). CSV, TSV,
JSON lines or Parquet; column names are matched without regard to case. A UBI ``ubi_queries`` index exported as CSV
or Parquet is read here too (its ``user_query``, ``client_id`` and ``query_response_object_ids``).
"""

from __future__ import annotations

import pyarrow.parquet as pq

from .detect import LogShape
from .engine import delimited_sql, ident, json_count, json_lines_sql, json_text, parquet_sql, text_count
from .id_lists import json_raw, list_raw

QUERY = ("query_text", "query", "user_query")
"""The query text column: the first of these the table has (``query_text`` first: beside it, ``query`` is an id)."""
TIME = ("timestamp", "time", "ts", "datetime")
SESSION = ("session", "session_id", "client_id")
RESULT_IDS = ("result_ids", "results", "query_response_object_ids")
RESULT_COUNT = ("result_count", "n_results", "hits")
CLICKED_IDS = ("clicked_ids", "clicked_doc_ids")


def plain_relation(shape: LogShape) -> str:
    """The SELECT giving the log columns for a plain table (or a UBI index exported as a table)."""
    if shape.layout in ("jsonl", "bulk", "otlp"):
        return _json_lines(shape)
    found = {c.strip().lower(): c for c in shape.columns}

    def first(names: tuple[str, ...]) -> str | None:
        return next((found[n] for n in names if n in found), None)

    if shape.layout == "parquet":
        source = parquet_sql(shape.log)
    else:
        source = delimited_sql(shape.log, list(shape.columns), "\t" if shape.layout == "tsv" else ",")
    query, time, session = first(QUERY), first(TIME), first(SESSION)
    ids, count, clicked = first(RESULT_IDS), first(RESULT_COUNT), first(CLICKED_IDS)
    if ids is not None:
        cell = ident(ids)
        listed = f"len({cell})" if shape.layout == "parquet" and _is_list(shape, ids) else text_count(
            f"CAST({cell} AS VARCHAR)")
        results = f"CASE WHEN {cell} IS NULL THEN 0 ELSE {listed} END"
    elif count is not None:
        results = f"try_cast(try_cast({ident(count)} AS DOUBLE) AS BIGINT)"
    else:
        results = "NULL"

    def text(column: str | None) -> str:
        return f"CAST({ident(column)} AS VARCHAR)" if column else "NULL"

    def id_list(column: str | None) -> str:
        if column is None:
            return "NULL"
        if shape.layout == "parquet" and _is_list(shape, column):
            return f"coalesce({list_raw(ident(column))}, '[]')"
        return f"coalesce({text(column)}, '')"  # an empty cell: nothing returned, nothing clicked

    return (f"SELECT ordinality AS ord, 'query' AS kind, {text(query)} AS q, NULL AS bad, {results} AS results, "
            f"{text(session)} AS session, {text(time)} AS ts, {id_list(ids)} AS ids, {id_list(clicked)} AS clicks, "
            f"NULL AS qid FROM {source}")


def _is_list(shape: LogShape, column: str) -> bool:
    """Whether a Parquet column holds lists (its type, from the file's schema)."""
    return str(pq.read_schema(shape.log.path).field(column).type).startswith(("list", "large_list"))


_FOREIGN = ("action_name", "resourceSpans", "attributes", "span_kind", "attributes.input.value", "input.value",
            "index", "create", "update", "delete")
"""Keys of another log format (a UBI event or bulk action, a span): a line holding one and no query column is a
line of another format, an error; a line with none of the known keys is a row without a query text."""


def _json_lines(shape: LogShape) -> str:
    names = QUERY + TIME + SESSION + RESULT_IDS + RESULT_COUNT + CLICKED_IDS
    read = json_lines_sql(shape.log, {name: "JSON" for name in names + _FOREIGN})
    query = f"coalesce({', '.join(ident(n) for n in QUERY)})"
    ids = f"coalesce({', '.join(ident(n) for n in RESULT_IDS)})"
    clicked = f"coalesce({', '.join(ident(n) for n in CLICKED_IDS)})"
    counts = f"coalesce({', '.join(ident(n) for n in RESULT_COUNT)})"
    foreign = " OR ".join(f"{ident(n)} IS NOT NULL" for n in _FOREIGN)
    text = {name: f"coalesce({', '.join(json_text(ident(n)) for n in group)})"
            for name, group in (("session", SESSION), ("ts", TIME))}
    return (f"SELECT ordinality AS ord, CASE WHEN q_json IS NULL AND foreign_key THEN 'other' "
            f"ELSE 'query' END AS kind, {json_text('q_json')} AS q, "
            f"CASE WHEN json_type(q_json) IN ('OBJECT', 'ARRAY', 'BOOLEAN') THEN 'the query as text' END AS bad, "
            f"coalesce({json_count('ids')}, {json_count('counts')}) AS results, session, ts, "
            f"{json_raw('ids')} AS ids, {json_raw('clicked')} AS clicks, NULL AS qid "
            f"FROM (SELECT ordinality, {query} AS q_json, {ids} AS ids, {counts} AS counts, {clicked} AS clicked, "
            f"({foreign}) AS foreign_key, "
            f"{text['session']} AS session, {text['ts']} AS ts FROM {read})")
