"""OpenSearch User Behavior Insights (UBI) logs as one SQL relation of the log columns (`RELATION_COLUMNS`).

UBI keeps two indexes: ``ubi_queries`` (one document per search: ``query_id``, ``user_query``,
``query_response_object_ids``, ``client_id``, ``timestamp``) and ``ubi_events`` (``action_name`` such as click,
``query_id``, ``event_attributes.object.object_id``, ``event_attributes.position.ordinal``). They arrive as JSON
lines (one document a line; an export's ``{"_index", "_id", "_source": {...}}`` too), as a bulk file (an action line
such as ``{"index": {"_index": "ubi_queries"}}``, then the document; ``{"doc": ...}`` after an update) or as an
index dump (``<index name><TAB><json>`` a line). A query document is a query; an event is not (it is counted, never
sampled); a bulk action line is neither. A line that is none of these is an error naming it: a file of two formats
mixed stops there.

A query's results are known when ``query_response_object_ids`` (or the older ``query_response_hit_ids``) is
there: a list, or ids in one string separated by commas or spaces; an empty one is a search that found nothing.
The session is ``session_id``, else ``client_id``. A click is an event whose ``action_name`` holds ``click`` (any
case: ``click``, ``CLICK_THROUGH``, ``product_click``); the doc clicked is its ``event_attributes.object.object_id``
and the search it followed its ``query_id``.
"""

from __future__ import annotations

from .detect import LogShape
from .engine import ident, json_count, json_lines_sql, json_text, lines_sql
from .id_lists import json_raw, one_raw

_FIELDS = {"user_query": "JSON", "query_id": "VARCHAR", "client_id": "VARCHAR", "session_id": "VARCHAR",
           "timestamp": "VARCHAR", "query_response_object_ids": "JSON", "query_response_hit_ids": "JSON",
           "action_name": "VARCHAR", "event_attributes": "JSON"}
_WRAPPERS = {"_source": "JSON", "doc": "JSON"}
_ACTIONS = {"index": "JSON", "create": "JSON", "update": "JSON", "delete": "JSON"}


def ubi_relation(shape: LogShape) -> str:
    """The SELECT giving `RELATION_COLUMNS` for a UBI log of any layout."""
    if shape.layout == "dump":
        fields = ", ".join([f"json_extract(doc, {_path(name)}) AS {ident(name)}" if kind == "JSON"
                            else f"json_extract_string(doc, {_path(name)}) AS {ident(name)}"
                            for name, kind in _FIELDS.items()]
                           + [f"json_extract(doc, {_path(name)}) AS {ident(name)}" for name in _WRAPPERS]
                           + [f"NULL::JSON AS {ident(name)}" for name in _ACTIONS])
        lines = (f"SELECT ordinality, CASE WHEN strpos(line, chr(9)) > 0 THEN try_cast(substr(line, strpos(line, "
                 f"chr(9)) + 1) AS JSON) END AS parsed FROM {lines_sql(shape.log)} "
                 f"WHERE trim(coalesce(line, '')) <> ''")
        source = (f"(SELECT ordinality, CASE WHEN json_type(parsed) = 'OBJECT' THEN parsed END AS doc, "
                  f"coalesce(json_type(parsed), '') <> 'OBJECT' AS not_json FROM ({lines}))")
        rows = f"(SELECT ordinality, not_json, {fields} FROM {source})"
    else:
        columns = {**_FIELDS, **_WRAPPERS, **_ACTIONS}
        rows = f"(SELECT *, false AS not_json FROM {json_lines_sql(shape.log, columns)})"
    return _rows_sql(rows)


def _path(name: str) -> str:
    return f"'$.{name}'"


def _rows_sql(rows: str) -> str:
    wrapped = 'coalesce("_source", "doc")'

    def field(name: str, text: bool = False) -> str:
        inner = f"json_extract_string({wrapped}, {_path(name)})" if text else f"json_extract({wrapped}, {_path(name)})"
        return f"coalesce({ident(name)}, {inner})"

    query = field("user_query")
    action = field("action_name", text=True)
    ids = f"coalesce({field('query_response_object_ids')}, {field('query_response_hit_ids')})"
    query_id = field("query_id", text=True)
    is_action = " OR ".join(f"{ident(name)} IS NOT NULL" for name in _ACTIONS)
    clicked = "json_extract(attributes, '$.object.object_id')"
    return f"""
SELECT ordinality AS ord,
       CASE WHEN not_json THEN 'other'
            WHEN uq IS NOT NULL OR ids IS NOT NULL OR (qid IS NOT NULL AND an IS NULL) THEN 'query'
            WHEN an IS NOT NULL THEN 'event'
            WHEN is_action THEN 'action'
            ELSE 'other' END AS kind,
       {json_text("uq")} AS q,
       CASE WHEN not_json THEN 'a JSON object after the index name'
            WHEN json_type(uq) IN ('OBJECT', 'ARRAY', 'BOOLEAN') THEN 'user_query as text' END AS bad,
       {json_count("ids")} AS results,
       sess AS session, ts,
       CASE WHEN kind = 'query' THEN {json_raw("ids")} END AS ids,
       CASE WHEN kind = 'event' AND contains(lower(an), 'click') THEN {one_raw(clicked)} END AS clicks,
       qid
FROM (SELECT ordinality, not_json, {query} AS uq, {action} AS an, {ids} AS ids, {query_id} AS qid,
             ({is_action}) AS is_action, {field('event_attributes')} AS attributes,
             coalesce("session_id", "client_id", json_extract_string({wrapped}, '$.session_id'),
                      json_extract_string({wrapped}, '$.client_id')) AS sess,
             coalesce("timestamp", json_extract_string({wrapped}, '$.timestamp')) AS ts
      FROM {rows})"""
