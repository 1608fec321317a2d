"""OpenInference retriever spans (Phoenix, or any OpenTelemetry collector) as one SQL relation of the log columns
(`evalcore.logs.engine.RELATION_COLUMNS`).

A retriever span records one retrieval: ``input.value`` is the query, ``retrieval.documents.{i}.document.id`` and
``.score`` what came back, with the span's and trace's ids and its start time. Exports write the attributes in
three ways, all read here:

* flattened into columns or keys: ``attributes.input.value`` (Phoenix's spans dataframe, as JSON lines, CSV or
  Parquet), ``input.value``, ``attributes.retrieval.documents`` (a list of documents; in a CSV, its text) or
  ``retrieval.documents.0.document.id``;
* nested under ``attributes``: ``{"attributes": {"input": {"value": ...}, "retrieval": {"documents": [...]}}}``, or
  dotted keys inside it (``{"attributes": {"input.value": ...}}``);
* OTLP JSON, as a collector's file exporter writes it: ``resourceSpans[].scopeSpans[].spans[]`` with
  ``attributes`` a list of ``{"key", "value": {"stringValue": ...}}``.

Only retriever spans are queries: a span whose kind (``openinference.span.kind``, or Phoenix's ``span_kind``) is
another (LLM, chain, embedding) is counted and left out. A retriever span without documents found nothing; a span
of unknown kind without documents is a query whose results are not known. The session is ``session.id``. The docs
returned are the documents' ids in the order listed (a list's order, or the number ``{i}`` of the flattened keys);
spans record no clicks.
"""

from __future__ import annotations

import re

import pyarrow.parquet as pq

from .detect import LogShape
from .engine import (
    delimited_sql,
    ident,
    json_count,
    json_lines_sql,
    json_text,
    parquet_sql,
    text_count,
)
from .id_lists import MAX_IDS, json_raw, list_raw, numbered_raw

_QUERY = ("attributes.input.value", "input.value")
_KIND = ("attributes.openinference.span.kind", "openinference.span.kind", "span_kind")
_DOCS = ("attributes.retrieval.documents", "retrieval.documents")
_FIRST_DOC = ("attributes.retrieval.documents.0.document.id", "retrieval.documents.0.document.id")
_SESSION = ("attributes.session.id", "session.id", "session_id")
_TIME = ("start_time", "startTime", "start_time_unix_nano", "startTimeUnixNano", "timestamp")
_IDENTITY = ("context.span_id", "span_id", "spanId", "context", "name")
"""Fields any span has: a line with none of these (and no attribute above) is not a span."""

_NUMBERED = re.compile(r"(?:attributes\.)?retrieval\.documents\.(\d+)\.document\.id", re.I)
"""A flattened key or column naming one returned document's id."""
_NUMBERED_SQL = "'retrieval\\.documents\\.[0-9]+\\.document\\.id'"
_JSON_NUMBERED = tuple(f"{prefix}retrieval.documents.{i}.document.id" for i in range(MAX_IDS)
                       for prefix in ("attributes.", ""))
"""The flattened keys of the first `MAX_IDS` documents, read from JSON lines (only the last pass reads them)."""

_ATTRIBUTE_PATHS = {"query": ('$."input.value"', "$.input.value"),
                    "kind": ('$."openinference.span.kind"', "$.openinference.span.kind"),
                    "session": ('$."session.id"', "$.session.id"),
                    "docs": ('$."retrieval.documents"', "$.retrieval.documents"),
                    "first_doc": ('$."retrieval.documents.0.document.id"',)}


def spans_relation(shape: LogShape) -> str:
    """The SELECT giving the log columns for a file of OpenInference spans."""
    if shape.layout in ("jsonl", "otlp", "bulk"):
        return _json_lines(shape)
    found = {c.strip().lower(): c for c in shape.columns}
    if shape.layout == "parquet":
        source = parquet_sql(shape.log)
    else:
        source = delimited_sql(shape.log, list(shape.columns), "\t" if shape.layout == "tsv" else ",")

    def first(names: tuple[str, ...]) -> str:
        present = [f"CAST({ident(found[n.lower()])} AS VARCHAR)" for n in names if n.lower() in found]
        return f"coalesce({', '.join(present)})" if len(present) > 1 else (present[0] if present else "NULL")

    docs = [found[n.lower()] for n in _DOCS if n.lower() in found]
    if docs and shape.layout == "parquet":
        doc_count = f"CASE WHEN {ident(docs[0])} IS NULL THEN NULL ELSE len({ident(docs[0])}) END"
    elif docs:
        doc_count = f"CASE WHEN {ident(docs[0])} IS NULL THEN NULL ELSE {text_count(ident(docs[0]))} END"
    else:
        doc_count = "NULL"
    nested = "attributes" in found and shape.layout == "parquet"
    attributes = f"to_json({ident(found['attributes'])})" if nested else "NULL::JSON"
    if docs:
        listed = (list_raw(ident(docs[0])) if shape.layout == "parquet" and not _is_text(shape, docs[0])
                  else f"CAST({ident(docs[0])} AS VARCHAR)")
    else:
        listed = _numbered_columns([(int(m.group(1)), c) for c in shape.columns
                                    if (m := _NUMBERED.fullmatch(c.strip()))])
    return _span_rows(f"(SELECT ordinality, to_json({first(_QUERY)}) AS q_json, {first(_KIND)} AS kind_text, "
                      f"{doc_count} AS doc_count, {first(_FIRST_DOC)} AS first_doc, {first(_SESSION)} AS session, "
                      f"{first(_TIME)} AS ts, true AS is_span, {attributes} AS attrs, {listed} AS doc_ids "
                      f"FROM {source})")


def _is_text(shape: LogShape, column: str) -> bool:
    """Whether a Parquet column holds text (a list of documents written out), not a list."""
    return str(pq.read_schema(shape.log.path).field(column).type) in ("string", "large_string")


def _numbered_columns(numbered: list[tuple[int, str]]) -> str:
    """SQL: the ids of the flattened ``retrieval.documents.{i}.document.id`` columns, in the order of ``i``, as
    text (`evalcore.logs.id_lists`); only looked at when the first of them is there."""
    if not numbered:
        return "NULL::VARCHAR"
    ordered = sorted(numbered)[:MAX_IDS]
    values = ", ".join(f"CAST({ident(c)} AS VARCHAR)" for _, c in ordered)
    first = " OR ".join(f"{ident(c)} IS NOT NULL" for i, c in ordered if i == ordered[0][0])
    return f"CASE WHEN {first} THEN {list_raw(f'[{values}]')} END"


def _json_lines(shape: LogShape) -> str:
    declared = {name: "JSON" for name in (*_QUERY, *_DOCS, "attributes", "context", "resourceSpans")}
    declared.update({name: "VARCHAR" for name in (*_KIND, *_FIRST_DOC, *_SESSION, *_TIME, *_IDENTITY[:3], "name",
                                                  *_JSON_NUMBERED)})
    read = json_lines_sql(shape.log, declared)

    def first(names: tuple[str, ...]) -> str:
        return f"coalesce({', '.join(ident(n) for n in names)})"

    identity = " OR ".join(f"{ident(n)} IS NOT NULL" for n in (*_IDENTITY, "attributes", *_QUERY, *_KIND))
    flat = (f"SELECT ordinality, {first(_QUERY)} AS q_json, {first(_KIND)} AS kind_text, "
            f"{json_count(first(_DOCS))} AS doc_count, {first(_FIRST_DOC)} AS first_doc, {first(_SESSION)} AS session, "
            f"{first(_TIME)} AS ts, ({identity}) AS is_span, \"attributes\" AS attrs, "
            f"coalesce({json_raw(first(_DOCS))}, "
            f"{_numbered_columns([(int(_NUMBERED.fullmatch(n).group(1)), n) for n in _JSON_NUMBERED])}) AS doc_ids "
            f"FROM {read} WHERE \"resourceSpans\" IS NULL")
    otlp = _otlp(read)
    return _span_rows(f"({flat} UNION ALL {otlp})")


def _otlp(read: str) -> str:
    """Each span of each OTLP line, its attribute list turned into the flattened fields."""
    def attribute(key: str) -> str:
        return (f"json_extract_string(list_filter(attrs_list, lambda a: json_extract_string(a, '$.key') = "
                f"'{key}')[1], '$.value.stringValue')")

    numbered = (f"list_filter(attrs_list, lambda a: regexp_full_match(json_extract_string(a, '$.key'), "
                f"{_NUMBERED_SQL}))")
    docs = f"len({numbered})"
    pairs = (f"list_transform({numbered}, lambda a_: {{'i': CAST(regexp_extract(json_extract_string(a_, '$.key'), "
             f"'[0-9]+') AS INTEGER), 'v': coalesce(json_extract_string(a_, '$.value.stringValue'), "
             f"json_extract_string(a_, '$.value.intValue'))}})")
    spans = (f"SELECT ordinality, unnest(json_extract(\"resourceSpans\", '$[*].scopeSpans[*].spans[*]')) AS span "
             f"FROM {read} WHERE \"resourceSpans\" IS NOT NULL")
    listed = (f"SELECT ordinality, span, json_extract(span, '$.attributes[*]') AS attrs_list FROM ({spans})")
    return (f"SELECT ordinality, to_json({attribute('input.value')}) AS q_json, "
            f"{attribute('openinference.span.kind')} AS kind_text, {docs} AS doc_count, NULL AS first_doc, "
            f"{attribute('session.id')} AS session, json_extract_string(span, '$.startTimeUnixNano') AS ts, "
            f"true AS is_span, NULL::JSON AS attrs, {numbered_raw(pairs)} AS doc_ids FROM ({listed})")


def _span_rows(rows: str) -> str:
    """The log columns from span rows (``q_json``: the query as a JSON value; ``attrs``: nested attributes, or
    NULL)."""
    def attr(name: str, extract: str = "json_extract_string") -> str:
        paths = _ATTRIBUTE_PATHS[name]
        found = [f"{extract}(attrs, '{p}')" for p in paths]
        return f"coalesce({', '.join(found)})" if len(found) > 1 else found[0]

    query_json = "coalesce(q_json, " + attr("query", "json_extract") + ")"
    query = json_text("qj")
    docs = json_count(attr("docs", "json_extract"))
    keys = f"list_filter(json_keys(attrs), lambda k_: regexp_full_match(k_, {_NUMBERED_SQL}))"
    keyed = (f"list_transform({keys}, lambda k_: {{'i': CAST(regexp_extract(k_, '[0-9]+') AS INTEGER), "
             f"'v': json_extract_string(attrs, '$.\"' || k_ || '\"')}})")
    listed = (f"coalesce(doc_ids, {json_raw(attr('docs', 'json_extract'))}, CASE WHEN "
              f"json_exists(attrs, '$.\"retrieval.documents.0.document.id\"') THEN {numbered_raw(keyed)} END)")
    return f"""
SELECT ordinality AS ord,
       CASE WHEN NOT is_span THEN 'other'
            WHEN kind IS NOT NULL AND kind <> 'RETRIEVER' THEN 'span'
            ELSE 'query' END AS kind,
       q, CASE WHEN NOT is_span THEN NULL
               WHEN json_type(qj) IN ('OBJECT', 'ARRAY', 'BOOLEAN') THEN 'input.value as text' END AS bad,
       CASE WHEN doc_total IS NOT NULL THEN doc_total WHEN kind = 'RETRIEVER' THEN 0 END AS results,
       session, ts,
       CASE WHEN is_span AND (kind IS NULL OR kind = 'RETRIEVER') THEN
            coalesce(listed, CASE WHEN kind = 'RETRIEVER' THEN '[]' END) END AS ids,
       NULL::VARCHAR AS clicks, NULL AS qid
FROM (SELECT ordinality, is_span, qj, {query} AS q, {listed} AS listed,
             upper(coalesce(kind_text, {attr('kind')})) AS kind,
             CASE WHEN doc_count IS NOT NULL THEN doc_count WHEN {docs} IS NOT NULL THEN {docs}
                  WHEN coalesce(first_doc, {attr('first_doc')}) IS NOT NULL THEN 1 END AS doc_total,
             coalesce(session, {attr('session')}) AS session, ts
      FROM (SELECT *, {query_json} AS qj FROM {rows}))"""
