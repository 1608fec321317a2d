"""Run files of every format turned into a run's columns: one parser per format, for `evalcore.readers.formats`.

Each parser takes a `Source` and returns the parts `evalcore.readers.runs.read_run` assembles into a `Run`: a dict
with ``queries`` (or ``query_codes`` with ``query_ids``), ``docs``, ``scores`` and ``ranks`` (either may be
None), and optionally ``tag`` (the TREC run tag) and ``list_order`` (the order is a list's own).
"""

from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np
import pandas as pd

from ..errors import InputError
from .id_columns import table_ids
from .json_files import is_json_id, json_number, read_json_value, read_jsonl_records
from .sources import Source
from .tables import (
    DOC_ALIASES,
    QUERY_ALIASES,
    Table,
    find_column,
    first_empty,
    parse_numbers,
    read_delimited,
    read_parquet,
)
from .trec import read_trec_run_arrow, read_whitespace


def from_trec(src: Source) -> dict:
    """A TREC run: ``query Q0 doc_id rank score tag`` per line (pyarrow's fast path, else the line-naming one)."""
    fast = read_trec_run_arrow(src)
    if fast is not None:
        return fast
    table = read_whitespace(src, 6, "6 whitespace-separated fields: query Q0 doc_id rank score tag", (0, 2, 4, 5),
                            id_columns={0: "a query id", 2: "a doc id"})
    scores = parse_numbers(table, 4, "a number in the score column (5th field)")
    tags = table.frame[5]
    return {"queries": table.frame[0], "docs": table.frame[2], "scores": scores, "ranks": None,
            "tag": str(tags.iloc[0]) if len(tags) else None, "last_tag": str(tags.iloc[-1]) if len(tags) else None}


def from_csv(src: Source) -> dict:
    return _from_delimited(src, ",")


def from_tsv(src: Source) -> dict:
    return _from_delimited(src, "\t")


def _from_delimited(src: Source, delimiter: str) -> dict:
    return from_table(read_delimited(src, delimiter, "query, doc_id and rank or score", columns=TABLE_COLUMNS))


def from_parquet(src: Source) -> dict:
    return from_table(read_parquet(src, columns=TABLE_COLUMNS))


def from_json(src: Source) -> dict:
    """A JSON document ``{query: [doc, ...]}``, ``{query: {doc: score}}`` or ``{query: [{"doc_id", "score"}]}``."""
    value = read_json_value(src)
    if not isinstance(value, Mapping):
        raise InputError("a JSON object {query: [doc, ...]}", source=src.name, text=type(value).__name__)
    return from_mapping(value, src.name)


_RANK_ALIASES = ("rank", "position")
_SCORE_ALIASES = ("score", "similarity", "distance_score")
TABLE_COLUMNS = QUERY_ALIASES + DOC_ALIASES + _RANK_ALIASES + _SCORE_ALIASES
"""Every column a run table may use: a CSV/TSV/Parquet run reads only these."""


def from_table(table: Table) -> dict:
    """A run from a table (CSV, TSV, Parquet, a DataFrame): query and doc columns with a rank and/or a score."""
    q_col = find_column(table, QUERY_ALIASES, "query")
    d_col = find_column(table, DOC_ALIASES, "doc id")
    r_col = find_column(table, _RANK_ALIASES, "rank", required=False)
    s_col = find_column(table, _SCORE_ALIASES, "score", required=False)
    if r_col is None and s_col is None:
        raise InputError("a rank or score column", source=table.source.name, line=1,
                         text=",".join(table.column_names), where="line")
    for column, role in ((q_col, "a query id"), (d_col, "a doc id")):
        row = first_empty(table, column)
        if row is not None:
            raise table.error(row, f"{role} in column {column!r}")
    ranks = parse_numbers(table, r_col, f"a number in the rank column {r_col!r}") if r_col else None
    if ranks is not None:
        # A rank counts from 1; a position may count from 0 (a list index): both are whole numbers.
        first = 0 if r_col.lower() == "position" else 1
        bad = (ranks < first) | (ranks != np.floor(ranks))
        if bad.any():
            row = int(np.flatnonzero(bad)[0])
            what = "a rank that is a positive whole number" if first else "a position that is a whole number >= 0"
            raise table.error(row, f"{what} in column {r_col!r}")
    scores = parse_numbers(table, s_col, f"a number in the score column {s_col!r}") if s_col else None
    return {"queries": table_ids(table, q_col, "a query id"), "docs": table_ids(table, d_col, "a doc id"),
            "scores": scores, "ranks": ranks}


def from_mapping(value: Mapping, where: str) -> dict:
    """Runs from ``{q: [doc, ...]}``, ``{q: {doc: score}}`` or ``{q: [{"doc_id", "score"}]}``."""
    queries, docs, scores, list_pos = [], [], [], []
    scored = None
    for query, ranked in value.items():
        if isinstance(ranked, Mapping):
            items = [(doc, score) for doc, score in ranked.items()]
            kind = True
        elif isinstance(ranked, (list, tuple)):
            if ranked and all(isinstance(item, Mapping) for item in ranked):
                items = [(_field(item, DOC_ALIASES, where, query), _score(item, where, query)) for item in ranked]
                kind = True
            else:
                items = [(doc, None) for doc in ranked]
                kind = False
        else:
            raise InputError(f"a ranked list of doc ids for query {query!r}", source=where, text=repr(ranked)[:80])
        if not ranked:
            continue  # an empty ranking: the query is scored as missing from the run
        if scored is None:
            scored = kind
        elif scored != kind:
            raise InputError(f"the same shape for every query (query {query!r} differs)", source=where)
        for i, (doc, score) in enumerate(items):
            if not is_json_id(doc):
                raise InputError(f"doc ids as strings in query {query!r}", source=where, text=repr(doc)[:80])
            number = json_number(score) if kind else np.nan
            if number is None:
                raise InputError(f"a finite numeric score for doc {doc!r} of query {query!r}", source=where,
                                 text=repr(score)[:80])
            queries.append(str(query)); docs.append(str(doc)); list_pos.append(i)
            scores.append(number)
    return {"queries": pd.Series(queries, dtype=str), "docs": pd.Series(docs, dtype=str),
            "scores": np.asarray(scores, dtype=np.float64) if scored else None,
            "ranks": None if scored else np.asarray(list_pos, dtype=np.float64), "list_order": not scored}


def _field(item: Mapping, aliases: Sequence[str], where: str, query: object) -> str:
    for alias in aliases:
        if alias in item:
            return item[alias]
    raise InputError(f'a "doc_id" in each result of query {query!r}', source=where, text=repr(dict(item))[:80])


def _score(item: Mapping, where: str, query: object) -> float:
    if "score" not in item:
        raise InputError(f'a "score" in each result of query {query!r}', source=where, text=repr(dict(item))[:80])
    return item["score"]


def from_jsonl(src: Source) -> dict:
    """JSONL: ``{"query": ..., "ranked": [doc, ...]}`` per line, each query on one line."""
    queries, docs, positions = [], [], []
    seen: dict[str, int] = {}
    for number, record in read_jsonl_records(src):
        query = record.get("query", record.get("query_id", record.get("qid")))
        ranked = record.get("ranked")
        if not is_json_id(query) or not isinstance(ranked, list):
            raise InputError('{"query": ..., "ranked": [doc, ...]} on each line', source=src.name, line=number,
                             text=src.lines()[number - 1])
        if str(query) in seen:
            raise InputError(f"each query on one line only (query {query!r} is also on line {seen[str(query)]})",
                             source=src.name, line=number, text=src.lines()[number - 1])
        seen[str(query)] = number
        for i, doc in enumerate(ranked):
            if not is_json_id(doc):
                raise InputError('"ranked" as a list of doc ids', source=src.name, line=number,
                                 text=src.lines()[number - 1])
            queries.append(str(query)); docs.append(str(doc)); positions.append(i)
    return {"queries": pd.Series(queries, dtype=str), "docs": pd.Series(docs, dtype=str), "scores": None,
            "ranks": np.asarray(positions, dtype=np.float64), "list_order": True}
