"""Labels files of every format turned into judgments: one parser per format, for `evalcore.readers.formats`.

Each parser takes a `Source` and returns `ParsedLabels` (judgments, per-query fields, conflicts between rows of
one query); `evalcore.readers.labels.read_labels` picks the parser from the format table and builds the
`LabelSet`. Tables (TREC qrels, CSV, TSV, Parquet, a DataFrame) go through `from_table`, JSON documents (and
Python dicts) through `from_mapping`, JSONL through `from_jsonl`.
"""

from __future__ import annotations

from typing import Mapping, NamedTuple

import numpy as np
import pandas as pd

from ..errors import InputError
from ..warning_log import EvalWarning, plural
from .id_columns import table_ids
from .json_files import is_json_id, json_number, read_json_value, read_jsonl_records
from .offsets import offset_pairs
from .sources import Source
from .spans import Rows
from .tables import (
    DOC_ALIASES,
    GRADE_ALIASES,
    QUERY_ALIASES,
    QUERY_FIELDS,
    Table,
    find_column,
    first_empty,
    parse_numbers,
    read_delimited,
    read_parquet,
)
from .trec import read_whitespace

_TRUE = {"true", "1", "yes", "y", "t"}
_FALSE = {"false", "0", "no", "n", "f"}
SPLITS = ("tune", "holdout")

SPAN_FIELDS = ("start", "end")
"""The evidence span of a row: character offsets in the document's text (`evalcore.readers.spans`)."""
TABLE_COLUMNS = QUERY_ALIASES + DOC_ALIASES + GRADE_ALIASES + QUERY_FIELDS + SPAN_FIELDS
"""Every column a labels table may use: a CSV/TSV/Parquet labels file reads only these."""


class ParsedLabels(NamedTuple):
    """What a labels parser found: one row per file row (query, doc_id, grade, and ``start``/``end`` when the file
    carries evidence spans, `NO_OFFSET` where a row has none), the per-query fields (indexed by query; None when the
    file has none), the warnings about rows of one query that disagree, and how a row's place is named (``rows``,
    for the messages about spans; None when the file has no spans)."""

    judgments: pd.DataFrame
    info: pd.DataFrame | None
    conflicts: list[EvalWarning]
    rows: Rows | None = None


# ----------------------------------------------------------------------------- one parser per format


def from_trec(src: Source) -> ParsedLabels:
    """TREC qrels: ``query iter doc_id grade`` per line, the iter column ignored."""
    table = read_whitespace(src, 4, "4 whitespace-separated fields: query iter doc_id grade", (0, 2, 3),
                            id_columns={0: "a query id", 2: "a doc id"})
    frame = pd.DataFrame({"query": table.frame[0], "doc_id": table.frame[2], "grade": table.frame[3]})
    return from_table(Table(frame, src, table.header_lines, table.skip_comments))


def from_csv(src: Source) -> ParsedLabels:
    return _from_delimited(src, ",")


def from_tsv(src: Source) -> ParsedLabels:
    return _from_delimited(src, "\t")


def _from_delimited(src: Source, delimiter: str) -> ParsedLabels:
    return from_table(read_delimited(src, delimiter, "query, doc_id and optional grade columns",
                                     columns=TABLE_COLUMNS))


def from_parquet(src: Source) -> ParsedLabels:
    return from_table(read_parquet(src, columns=TABLE_COLUMNS))


def from_json(src: Source) -> ParsedLabels:
    """A JSON document ``{query: [doc, ...]}`` or ``{query: {doc: grade}}``."""
    value = read_json_value(src)
    if not isinstance(value, Mapping):
        raise InputError("a JSON object {query: [doc, ...]} or {query: {doc: grade}}", source=src.name,
                         text=type(value).__name__)
    return from_mapping(value, src.name)


# ----------------------------------------------------------------------------- tables


def from_table(table: Table) -> ParsedLabels:
    """Validate a table of judgments: ids present and within the limits, grades numbers, per-query fields agreeing."""
    q_col = find_column(table, QUERY_ALIASES, "query")
    d_col = find_column(table, DOC_ALIASES, "doc id")
    g_col = find_column(table, GRADE_ALIASES, "grade", required=False)
    for column, role in ((q_col, "a query id"), (d_col, "a doc id")):
        row = first_empty(table, column)
        if row is not None:
            raise table.error(row, f"{role} in column {column!r}")
    if g_col is not None:
        grades = parse_numbers(table, g_col, f"a number in the grade column {g_col!r}")
    else:
        grades = np.ones(len(table.frame))
    judgments = pd.DataFrame({
        "query": table_ids(table, q_col, "a query id").to_numpy(),
        "doc_id": table_ids(table, d_col, "a doc id").to_numpy(),
        "grade": grades,
    })
    spans = _span_columns(table)
    if spans is not None:
        judgments["start"], judgments["end"] = spans
    info, conflicts = _query_fields(table, judgments["query"])
    return ParsedLabels(judgments, info, conflicts, table if spans is not None else None)


def _span_columns(table: Table) -> tuple[np.ndarray, np.ndarray] | None:
    """The ``start`` and ``end`` columns as offsets (checked: whole numbers, both or neither, start <= end), or None
    when the table has neither."""
    s_col = find_column(table, ("start",), "start", required=False)
    e_col = find_column(table, ("end",), "end", required=False)
    if s_col is None and e_col is None:
        return None
    if s_col is None or e_col is None:
        raise InputError(f"both a start and an end column, or neither (the file has {s_col or e_col!r} alone)",
                         source=table.source.name, line=1 if table.where == "line" else None,
                         text=",".join(table.column_names), where="line")
    return offset_pairs(table.frame[s_col], table.frame[e_col], table.error, empty=False)


def _query_fields(table: Table, queries: pd.Series) -> tuple[pd.DataFrame, list[EvalWarning]]:
    """Per-query fields from a table's optional columns, one value per query (see `_one_per_query`)."""
    lowered = {c.lower(): c for c in table.frame.columns}
    columns = {}
    for field_name in QUERY_FIELDS:
        column = lowered.get(field_name)
        if column is None:
            continue
        values = table.frame[column]
        if field_name == "blind":
            values = _parse_blind(table, column)
        elif field_name == "split":
            values = _parse_split(table, column)
        else:  # a TSV's quoted query text read as pandas reads it (`Table.text`)
            text = table.text(column) if field_name == "query_text" else _cell_text(values)
            values = text.where(text.str.strip() != "", None)
        columns[field_name] = values.to_numpy()
    rows = pd.DataFrame(columns, index=pd.Index(queries.to_numpy(), name="query"))
    return _one_per_query(rows, table.line_of, table.raw_line, table.source.name, table.where)


def _one_per_query(rows: pd.DataFrame, line_of, raw_line, source: str, where: str = "line",
                   ) -> tuple[pd.DataFrame, list[EvalWarning]]:
    """One value of each per-query field per query, from one row per judgment (indexed by query).

    Rows of one query that disagree are not settled silently: two splits for one query is an
    error (the query would sit on both sides of the holdout); ``blind`` false on any row makes
    the query not blind (some of its judgments were made after seeing rankings); for text
    fields the first value is kept. Each of the last two gets a warning naming an example.
    ``line_of(row)`` and ``raw_line(row)`` locate a 0-based row for messages.
    """
    if rows.columns.empty:
        return pd.DataFrame(index=pd.Index(pd.unique(rows.index.to_numpy()), name="query")), []
    info = rows.groupby(level=0, sort=False).first()
    warnings = []
    positions = pd.Series(np.arange(len(rows)), index=rows.index)
    for field_name in rows.columns:
        present = rows[field_name].notna().to_numpy()
        values = rows[field_name][present]
        if values.empty:
            continue
        first = values.groupby(level=0, sort=False).transform("first")
        differs = (values.astype(str) != first.astype(str)).to_numpy()
        if not differs.any():
            continue
        at = int(positions[present].to_numpy()[np.flatnonzero(differs)[0]])
        query = rows.index[at]
        before = first.to_numpy()[np.flatnonzero(differs)[0]]
        first_at = int(positions[present][values.index == query].iloc[0])
        n_queries = int(values.index[differs].nunique())
        if field_name == "split":
            raise InputError(
                f"one split per query (query {query!r} is {before!r} at {where} {line_of(first_at)})",
                source=source, line=line_of(at), text=raw_line(at), where=where)
        if field_name == "blind":
            any_false = (~values.astype(bool)).groupby(level=0, sort=False).any()
            info.loc[any_false[any_false].index, "blind"] = False
            kept = "counted as not blind (some of their judgments were made after seeing rankings)"
        else:
            kept = "the first value is used"
        warnings.append(EvalWarning(
            "query_field_conflict",
            f"{source}: {plural(n_queries, 'query', 'queries')} {'has' if n_queries == 1 else 'have'} different "
            f"{field_name} values on different rows, {kept}; e.g. query {query!r} has {str(before)!r} at {where} {line_of(first_at)} and "
            f"{str(rows[field_name].iloc[at])!r} at {where} {line_of(at)}",
            n_queries,
        ))
    return info, warnings


def _cell_text(values: pd.Series) -> pd.Series:
    """Cells as text, missing cells (Parquet nulls) as ""."""
    return values.astype(object).where(values.notna(), "").astype(str)


def _parse_blind(table: Table, column: str) -> pd.Series:
    text = _cell_text(table.frame[column]).str.strip().str.lower()
    known = text.isin(_TRUE | _FALSE | {""})
    if not known.all():
        row = int(np.flatnonzero(~known.to_numpy())[0])
        raise table.error(row, f"true or false in column {column!r}", text=str(table.frame[column].iloc[row]))
    return text.map(lambda v: True if v in _TRUE else (False if v in _FALSE else None)).astype(object)


def _parse_split(table: Table, column: str) -> pd.Series:
    text = _cell_text(table.frame[column]).str.strip().str.lower()
    known = text.isin(SPLITS + ("",))
    if not known.all():
        row = int(np.flatnonzero(~known.to_numpy())[0])
        raise table.error(row, f"'tune' or 'holdout' in column {column!r}", text=str(table.frame[column].iloc[row]))
    return text.where(text != "", None)


# ----------------------------------------------------------------------------- JSON


def from_mapping(value: Mapping, where: str) -> ParsedLabels:
    """Labels from ``{query: [doc, ...]}`` or ``{query: {doc: grade}}``."""
    queries, docs, grades = [], [], []
    for query, judged in value.items():
        if isinstance(judged, Mapping):
            for doc, grade in judged.items():
                number = json_number(grade)
                if number is None:
                    raise InputError(f"a finite numeric grade for doc {doc!r} of query {query!r}", source=where,
                                     text=repr(grade)[:80])
                queries.append(str(query)); docs.append(str(doc)); grades.append(number)
        elif isinstance(judged, (list, tuple, set, frozenset)):
            for doc in (sorted(judged, key=str) if isinstance(judged, (set, frozenset)) else judged):
                if not is_json_id(doc):
                    raise InputError(f"doc ids (strings) in the list of query {query!r}", source=where,
                                     text=repr(doc)[:80])
                queries.append(str(query)); docs.append(str(doc)); grades.append(1.0)
        else:
            raise InputError(f"a list of doc ids or a {{doc: grade}} object for query {query!r}",
                             source=where, text=repr(judged)[:80])
    judgments = pd.DataFrame({"query": pd.Series(queries, dtype=str), "doc_id": pd.Series(docs, dtype=str),
                              "grade": np.asarray(grades, dtype=np.float64)})
    return ParsedLabels(judgments, None, [])


def from_jsonl(src: Source) -> ParsedLabels:
    """Labels from JSONL: ``{"query", "relevant": [...]}`` or ``{"query", "doc_id", "grade"}`` per line."""
    rows_q, rows_d, rows_g, field_rows, field_lines = [], [], [], [], []
    rows_s, rows_e, row_lines = [], [], []
    for number, record in read_jsonl_records(src):
        query = _alias(record, QUERY_ALIASES)
        if not is_json_id(query) or str(query) == "":
            raise InputError('a "query" id', source=src.name, line=number, text=_line(src, number))
        query = str(query)
        if "relevant" in record:
            relevant = record["relevant"]
            if not isinstance(relevant, list) or not all(is_json_id(doc) for doc in relevant):
                raise InputError('"relevant" as a list of doc ids', source=src.name, line=number,
                                 text=_line(src, number))
            if any(f in record for f in SPAN_FIELDS):
                raise InputError('"start" and "end" with a "doc_id" (a "relevant" list has no place for spans)',
                                 source=src.name, line=number, text=_line(src, number))
            for doc in relevant:
                rows_q.append(query); rows_d.append(str(doc)); rows_g.append(1.0)
                rows_s.append(None); rows_e.append(None); row_lines.append(number)
        elif _alias(record, DOC_ALIASES) is not None:
            doc = _alias(record, DOC_ALIASES)
            raw_grade = _alias(record, GRADE_ALIASES)
            grade = 1.0 if raw_grade is None else json_number(raw_grade)
            if not is_json_id(doc) or grade is None:
                raise InputError('a "doc_id" string and a finite numeric "grade"', source=src.name, line=number,
                                 text=_line(src, number))
            rows_q.append(query); rows_d.append(str(doc)); rows_g.append(grade)
            rows_s.append(record.get("start")); rows_e.append(record.get("end")); row_lines.append(number)
        else:
            raise InputError('a "relevant" list or a "doc_id" field', source=src.name, line=number,
                             text=_line(src, number))
        fields = {f: _jsonl_field(src, number, f, record[f]) for f in QUERY_FIELDS if f in record}
        if fields:
            field_rows.append({"query": query, **fields})
            field_lines.append(number)
    judgments = pd.DataFrame({"query": pd.Series(rows_q, dtype=str), "doc_id": pd.Series(rows_d, dtype=str),
                              "grade": np.asarray(rows_g, dtype=np.float64)})
    rows = None
    if any(v is not None for v in rows_s + rows_e):
        rows = _LineRows(src, row_lines)
        judgments["start"], judgments["end"] = offset_pairs(rows_s, rows_e, rows.error, empty=False)
    if not field_rows:
        return ParsedLabels(judgments, None, [], rows)
    fields = pd.DataFrame(field_rows).set_index("query")
    columns = [f for f in QUERY_FIELDS if f in fields.columns]
    info, conflicts = _one_per_query(fields[columns].astype(object).where(fields[columns].notna(), None),
                                     lambda row: field_lines[row], lambda row: _line(src, field_lines[row]), src.name)
    return ParsedLabels(judgments, info.reindex(pd.unique(judgments["query"].to_numpy())), conflicts, rows)


class _LineRows:
    """How a JSONL judgment row is named: the line it came from (several rows may share a line)."""

    where = "line"

    def __init__(self, src: Source, lines: list[int]) -> None:
        self.src, self.lines = src, lines

    def line_of(self, row: int) -> int:
        return self.lines[row]

    def error(self, row: int, expected: str, text: str | None = None) -> InputError:
        return InputError(expected, source=self.src.name, line=self.lines[row],
                          text=_line(self.src, self.lines[row]) if text is None else text)


def _alias(record: Mapping, aliases: tuple[str, ...]) -> object:
    """The value of the first of ``aliases`` present in ``record`` (case-sensitive JSON keys)."""
    for alias in aliases:
        if alias in record:
            return record[alias]
    return None


def _jsonl_field(src: Source, number: int, field_name: str, value: object) -> object:
    if field_name == "blind":
        if isinstance(value, bool):
            return value
        text = str(value).strip().lower()
        if text in _TRUE | _FALSE:
            return text in _TRUE
        raise InputError('"blind" as true or false', source=src.name, line=number, text=_line(src, number))
    if field_name == "split":
        text = str(value).strip().lower()
        if text not in SPLITS:
            raise InputError('"split" as "tune" or "holdout"', source=src.name, line=number, text=_line(src, number))
        return text
    return None if value is None else str(value)


def _line(src: Source, number: int) -> str:
    return src.lines()[number - 1]
