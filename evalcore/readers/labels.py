"""The labeled set: who judged which doc for which query, and how relevant it is.

A `LabelSet` keeps every judgment, including explicit non-relevant ones (a grade below the
threshold), because they tell how deep the judging went. Per-query fields (what the
customer typed, where the query came from, whether judging was blind, its split) live in a
separate per-query table.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from functools import cached_property
from typing import Mapping, Union

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from ..errors import InputError, invalid_parameter
from ..warning_log import EvalWarning, plural
from .ids import first_long_id, long_id_error
from .sources import Source, SourceLike, detect_format, open_source
from .tables import (
    DOC_ALIASES,
    GRADE_ALIASES,
    QUERY_ALIASES,
    QUERY_FIELDS,
    Table,
    find_column,
    first_empty,
    is_json_id,
    json_number,
    parse_numbers,
    read_delimited,
    read_json_value,
    read_jsonl_records,
    read_parquet,
    read_whitespace,
    table_ids,
)

_TRUE = {"true", "1", "yes", "y", "t"}
_FALSE = {"false", "0", "no", "n", "f"}
SPLITS = ("tune", "holdout")


@dataclass(eq=False)
class LabelSet:
    """Judgments (query, doc_id, grade), one row per pair, plus per-query fields.

    ``judgments`` has string columns ``query`` and ``doc_id`` and a float ``grade``;
    ``query_info`` is indexed by query id with whichever of ``query_text``, ``source``,
    ``blind``, ``split`` the file carried.
    """

    name: str
    judgments: pd.DataFrame
    query_info: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(index=pd.Index([], name="query")))
    warnings: tuple[EvalWarning, ...] = ()
    source: str | None = None
    spans: pd.DataFrame | None = None  # evidence: query, doc_id, start, end (character offsets of the doc's text)

    @cached_property
    def queries(self) -> np.ndarray:
        """Query ids in the order they first appear in the file."""
        return pd.unique(self.judgments["query"].to_numpy())

    @cached_property
    def fingerprint(self) -> str:
        """A short hash of the normalised judgments: same pairs and grades -> same fingerprint.

        Row order, file format and per-query fields do not change it. The hashed text is one
        line per judgment, sorted by (query, doc id): ``<len>:<query><len>:<doc>=<grade>``
        (length-prefixed ids cannot run into each other; grades at full float precision).
        """

        query = pa.array(self.judgments["query"].astype(str).to_numpy(dtype=object), pa.string())
        doc = pa.array(self.judgments["doc_id"].astype(str).to_numpy(dtype=object), pa.string())
        grade = np.ascontiguousarray(self.judgments["grade"].to_numpy(dtype=np.float64))
        # Each distinct grade (by bit pattern, so -0.0 stays "-0.0") printed once, as str(float) does.
        bits, which = np.unique(grade.view(np.uint64), return_inverse=True)
        grade_text = pa.array([str(g) for g in bits.view(np.float64).tolist()], pa.string())
        grade_text = grade_text.take(pa.array(which.reshape(-1)))
        # Arrow sorts UTF-8 bytewise, which is code-point order: the order Python sorts str in.
        order = pc.sort_indices(pa.table({"q": query, "d": doc}),
                                sort_keys=[("q", "ascending"), ("d", "ascending")])
        query, doc, grade_text = query.take(order), doc.take(order), grade_text.take(order)

        def length(values: pa.Array) -> pa.Array:  # code points, as Python's len()
            return pc.cast(pc.utf8_length(values), pa.string())

        lines = pc.binary_join_element_wise(length(query), ":", query, length(doc), ":", doc, "=", grade_text,
                                            "\n", "")
        offsets = np.frombuffer(lines.buffers()[1], dtype=np.int32, count=len(lines) + 1, offset=lines.offset * 4)
        text = memoryview(lines.buffers()[2])[int(offsets[0]):int(offsets[-1]) - 1]  # without the last "\n"
        return hashlib.sha256(text).hexdigest()[:12]

    @property
    def n_queries(self) -> int:
        return len(self.queries)

    def relevant_counts(self, min_grade: float = 1) -> pd.Series:
        """Number of relevant docs per query (0 for queries judged only non-relevant)."""
        relevant = self.judgments["grade"] >= min_grade
        counts = relevant.groupby(self.judgments["query"], sort=False).sum()
        return counts.reindex(self.queries, fill_value=0).astype(np.int64)

    def field(self, name: str) -> pd.Series | None:
        """A per-query field (``source``, ``split``, ...) aligned to `queries`, or None if absent."""
        if name not in self.query_info.columns:
            return None
        return self.query_info[name].reindex(self.queries)

    def __repr__(self) -> str:
        return (f"LabelSet(name={self.name!r}, queries={self.n_queries}, "
                f"judgments={len(self.judgments)}, fingerprint={self.fingerprint!r})")


LabelsLike = Union[LabelSet, SourceLike, Mapping, pd.DataFrame]


def read_labels(source: LabelsLike, *, format: str | None = None, name: str | None = None) -> LabelSet:
    """Read labels from a file path, bytes, an upload, a dict or a DataFrame.

    Dicts follow the JSON shapes of docs/formats.md: ``{query: [doc, ...]}`` (all grade 1; sets too) or
    ``{query: {doc: grade}}``. DataFrames use the tabular column names and aliases.
    """
    if isinstance(source, LabelSet):
        return source
    if isinstance(source, Mapping):
        return _from_mapping(source, name or "labels", "<dict>", "key")
    if isinstance(source, pd.DataFrame):
        table = Table(source.reset_index(drop=True), Source(name or "<DataFrame>", b""), 0, False, "row")
        return _from_table(table, name or "labels")
    src = open_source(source, name=None)
    fmt = detect_format(src, format)
    label_name = name or src.stem
    if fmt == "trec":
        table = read_whitespace(src, 4, "4 whitespace-separated fields: query iter doc_id grade", (0, 2, 3),
                                id_columns={0: "a query id", 2: "a doc id"})
        frame = pd.DataFrame({"query": table.frame[0], "doc_id": table.frame[2], "grade": table.frame[3]})
        table = Table(frame, src, table.header_lines, table.skip_comments)
        result = _from_table(table, label_name)
    elif fmt in ("csv", "tsv"):
        table = read_delimited(src, "," if fmt == "csv" else "\t", "query, doc_id and optional grade columns",
                               columns=_TABLE_COLUMNS)
        result = _from_table(table, label_name)
    elif fmt == "parquet":
        result = _from_table(read_parquet(src, columns=_TABLE_COLUMNS), label_name)
    elif fmt == "json":
        value = read_json_value(src)
        if not isinstance(value, Mapping):
            raise InputError("a JSON object {query: [doc, ...]} or {query: {doc: grade}}", source=src.name,
                             text=type(value).__name__)
        result = _from_mapping(value, label_name, src.name, "key")
    else:
        result = _from_jsonl(src, label_name)
    repairs = tuple(EvalWarning("file_repaired", f"{src.name}: {r}", 1) for r in src.repairs)
    result.warnings = repairs + result.warnings
    result.source = src.name
    return result


_TABLE_COLUMNS = QUERY_ALIASES + DOC_ALIASES + GRADE_ALIASES + QUERY_FIELDS
"""Every column a labels table may use: a CSV/TSV/Parquet labels file reads only these."""


def _from_table(table: Table, name: str) -> LabelSet:
    """Validate a table of judgments and build the `LabelSet`."""
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
    info, conflicts = _query_fields(table, judgments["query"])
    return _finish(name, judgments, info, table.source.name, conflicts)


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
        else:
            text = _cell_text(values)
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


def _from_mapping(value: Mapping, name: str, where: str, unit: str) -> LabelSet:
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
    return _finish(name, judgments, None, where)


def _from_jsonl(src: Source, name: str) -> LabelSet:
    """Labels from JSONL: ``{"query", "relevant": [...]}`` or ``{"query", "doc_id", "grade"}`` per line."""
    rows_q, rows_d, rows_g, field_rows, field_lines = [], [], [], [], []
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
            for doc in relevant:
                rows_q.append(query); rows_d.append(str(doc)); rows_g.append(1.0)
        elif _alias(record, DOC_ALIASES) is not None:
            doc = _alias(record, DOC_ALIASES)
            raw_grade = _alias(record, GRADE_ALIASES)
            grade = 1.0 if raw_grade is None else json_number(raw_grade)
            if not is_json_id(doc) or grade is None:
                raise InputError('a "doc_id" string and a finite numeric "grade"', source=src.name, line=number,
                                 text=_line(src, number))
            rows_q.append(query); rows_d.append(str(doc)); rows_g.append(grade)
        else:
            raise InputError('a "relevant" list or a "doc_id" field', source=src.name, line=number,
                             text=_line(src, number))
        fields = {f: _jsonl_field(src, number, f, record[f]) for f in QUERY_FIELDS if f in record}
        if fields:
            field_rows.append({"query": query, **fields})
            field_lines.append(number)
    judgments = pd.DataFrame({"query": pd.Series(rows_q, dtype=str), "doc_id": pd.Series(rows_d, dtype=str),
                              "grade": np.asarray(rows_g, dtype=np.float64)})
    if not field_rows:
        return _finish(name, judgments, None, src.name)
    rows = pd.DataFrame(field_rows).set_index("query")
    columns = [f for f in QUERY_FIELDS if f in rows.columns]
    info, conflicts = _one_per_query(rows[columns].astype(object).where(rows[columns].notna(), None),
                                     lambda row: field_lines[row], lambda row: _line(src, field_lines[row]), src.name)
    return _finish(name, judgments, info.reindex(pd.unique(judgments["query"].to_numpy())), src.name, conflicts)


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


def _finish(name: str, judgments: pd.DataFrame, info: pd.DataFrame | None, source: str | None = None,
            conflicts: list[EvalWarning] = ()) -> LabelSet:
    """Drop duplicate judgments (keeping the highest grade, with a warning) and build the set."""
    warnings: list[EvalWarning] = list(conflicts)
    if judgments.empty:
        raise InputError("at least one judgment (query, doc, grade)", source=source or name)
    for column, role in (("query", "a query id"), ("doc_id", "a doc id")):
        values = pa.array(judgments[column].to_numpy(dtype=object), pa.string(), from_pandas=True)
        row = first_long_id(values)  # the table readers name the line; this catches JSON and Python values
        if row is not None:
            raise long_id_error(values[row].as_py(), role, source or name, None)
    duplicated = judgments.duplicated(["query", "doc_id"], keep=False)
    if duplicated.any():
        dups = judgments[duplicated]
        n_pairs = int(dups.drop_duplicates(["query", "doc_id"]).shape[0])
        conflicting = int((dups.groupby(["query", "doc_id"])["grade"].nunique() > 1).sum())
        order = judgments.sort_values("grade", ascending=False, kind="stable")
        kept = order.drop_duplicates(["query", "doc_id"], keep="first").index.sort_values()
        judgments = judgments.loc[kept].reset_index(drop=True)
        detail = f"; {plural(conflicting, 'pair')} had different grades, the highest was kept" if conflicting else ""
        warnings.append(EvalWarning(
            "duplicate_judgment",
            f"{plural(n_pairs, '(query, doc) pair')} judged more than once; one judgment kept per pair{detail}",
            n_pairs,
        ))
    if info is None or info.empty:
        info = pd.DataFrame(index=pd.Index(pd.unique(judgments["query"].to_numpy()), name="query"))
    info.index = info.index.astype(str)
    info.index.name = "query"
    return LabelSet(name=name, judgments=judgments.reset_index(drop=True), query_info=info,
                    warnings=tuple(warnings))


def check_min_grade(min_grade: float) -> float:
    """The relevance threshold must be a finite number."""
    try:
        value = float(min_grade)
    except (TypeError, ValueError):
        raise invalid_parameter("min_grade", "a number", min_grade) from None
    if not np.isfinite(value):
        raise invalid_parameter("min_grade", "a finite number", min_grade)
    return value
