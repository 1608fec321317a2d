"""The doc ids a log line lists, as SQL: what a search returned (UBI ``query_response_object_ids``, a span's
``retrieval.documents``, a table's ``result_ids``) and what was clicked (a table's ``clicked_ids``, a UBI click).

Logs write a list of ids in many ways: a JSON array of ids (strings or numbers), a JSON array of span documents
(``{"document.id": ...}`` or ``{"document": {"id": ...}}``), a Parquet list, Python's repr of a list of span
documents (a CSV cell), or ids in one string separated by commas, semicolons, bars or spaces. Each log format keeps
the list as the text it was written in (`json_raw`, `list_raw`: cheap, no list built), and `text_ids` turns a text
into a DuckDB ``VARCHAR[]`` in the order logged. Building a list costs microseconds a row, so the last pass
(`evalcore.logs.logged_docs`) builds one only for the few texts it keeps (each sampled query's latest search's),
never for every line of the log. An empty list is a search that found nothing; NULL says nothing. Only the first
`MAX_IDS` are kept. The counts the first pass reads (`evalcore.logs.engine.json_count`) follow the same rules.
"""

from __future__ import annotations

from .engine import json_text

MAX_IDS = 100
"""The most ids of one list kept (a search's first results; the clicks of one line)."""

_SEPARATED = "'[,;|\\s]+'"
_REPR_ID = "'[''\"]document\\.id[''\"]\\s*:\\s*[''\"]?([^''\",}\\]]+)'"
"""A ``document.id`` key and its value in Python's repr of a span document (or its JSON)."""


def bounded(ids: str) -> str:
    """SQL: a list of ids without NULL or blank ones (each trimmed), its first `MAX_IDS`."""
    trimmed = f"list_transform({ids}, lambda id_: trim(id_))"
    return f"list_slice(list_filter({trimmed}, lambda id_: coalesce(id_, '') <> ''), 1, {MAX_IDS})"


def _element(value: str) -> str:
    """SQL: one JSON element of a list of ids as text: the id itself, or a span document's id."""
    return (f"coalesce({json_text(value)}, json_extract_string({value}, '$.\"document.id\"'), "
            f"json_extract_string({value}, '$.document.id'), json_extract_string({value}, '$.id'))")


def text_ids(text: str) -> str:
    """SQL: the ids a text lists (see the module docs), bounded; NULL stays NULL (not known), while ``''`` and
    ``[]`` are an empty list (found nothing)."""
    t = f"trim({text})"
    array = f"list_transform(json_extract({t}::JSON, '$[*]'), lambda el_: {_element('el_')})"
    return bounded(f"(CASE WHEN {text} IS NULL THEN NULL WHEN {t} IN ('', '[]') THEN []::VARCHAR[] "
                   f"WHEN contains({t}, 'document.id') THEN regexp_extract_all({t}, {_REPR_ID}, 1) "
                   f"WHEN left({t}, 1) = '[' AND json_valid({t}) THEN {array} "
                   f"ELSE regexp_split_to_array(regexp_replace({t}, '^\\[|\\]$|\"', '', 'g'), {_SEPARATED}) END)")


def json_raw(value: str) -> str:
    """SQL: a JSON value listing ids as the text `text_ids` reads: an array's JSON, a string's characters; NULL
    otherwise (a number is a count of results, not an id)."""
    return (f"(CASE json_type({value}) WHEN 'ARRAY' THEN CAST({value} AS VARCHAR) "
            f"WHEN 'VARCHAR' THEN json_extract_string({value}, '$') END)")


def list_raw(column: str) -> str:
    """SQL: a list (a Parquet list of ids or of span documents, or a list built here) as the text `text_ids` reads:
    its JSON."""
    return f"CAST(to_json({column}) AS VARCHAR)"


def one_raw(value: str) -> str:
    """SQL: a single id (a JSON string or number: a UBI click's object id) as the text `text_ids` reads, however it
    is spelled (a comma or a space in it stays in it)."""
    return f"CASE WHEN {json_text(value)} IS NOT NULL THEN {list_raw(f'[{json_text(value)}]')} END"


def numbered_raw(pairs: str) -> str:
    """SQL: the ids of numbered keys (``retrieval.documents.{i}.document.id``), ``pairs`` a list of structs ``{i:
    the number, v: the id}``, in the order of their number, as the text `text_ids` reads; NULL when there are
    none."""
    ordered = f"list_transform(list_sort({pairs}), lambda pair_: pair_.v)"
    return f"(CASE WHEN len({pairs}) = 0 THEN NULL ELSE {list_raw(ordered)} END)"
