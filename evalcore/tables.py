"""Turning a `Source` into a DataFrame of strings, with line numbers for every error.

Parsing is columnar (pandas' C parser); line numbers are only worked out on the error path,
by re-reading the text, so a good file never pays for them.
"""

from __future__ import annotations

import csv
import io
import json
import re
from dataclasses import dataclass
from typing import Iterable

import numpy as np
import pandas as pd

from .errors import InputError
from .sources import Source

QUERY_ALIASES = ("query", "query_id", "qid", "query-id")
DOC_ALIASES = ("doc_id", "docid", "doc", "corpus-id")
GRADE_ALIASES = ("grade", "relevance", "rel", "score", "label")
QUERY_FIELDS = ("query_text", "source", "blind", "split")
"""Optional per-query fields a labels file may carry (SPEC.md §1.1)."""

_COMMENT_LINES = re.compile(rb"(?m)^[ \t]*#[^\n]*$")


@dataclass(frozen=True)
class Table:
    """Rows of a file as strings, plus how to find the file line of a row for messages."""

    frame: pd.DataFrame
    source: Source
    header_lines: int  # lines before the first data row that are not blank or comments
    skip_comments: bool
    where: str = "line"  # "row" for Parquet and JSON, which have no lines

    def line_of(self, row: int) -> int:
        """The 1-based file line of data row ``row`` (0-based), counting what the parser skipped."""
        if self.where == "row":
            return row + 1
        wanted = row + self.header_lines
        seen = -1
        for number, line in enumerate(self.source.text().split("\n"), start=1):
            stripped = line.strip()
            if not stripped or (self.skip_comments and stripped.startswith("#")):
                continue
            seen += 1
            if seen == wanted:
                return number
        return number

    def raw_line(self, row: int) -> str:
        if self.where == "row":
            return ", ".join(f"{k}={v}" for k, v in self.frame.iloc[row].items())
        lines = self.source.text().split("\n")
        return lines[self.line_of(row) - 1]

    def error(self, row: int, expected: str, text: str | None = None) -> InputError:
        return InputError(
            expected,
            source=self.source.name,
            line=self.line_of(row),
            text=self.raw_line(row) if text is None else text,
            where=self.where,
        )


def read_whitespace(source: Source, fields: int, describe: str, usecols: Iterable[int]) -> Table:
    """Read a TREC-style file: whitespace-separated, ``#`` lines and blank lines skipped.

    Rows with fewer than ``fields`` fields are an error naming the line; extra trailing
    fields are ignored (trec_eval does the same). Only ``usecols`` are kept, as strings.
    """
    data = source.data
    has_comments = data.startswith(b"#") or b"\n#" in data or re.search(rb"\n[ \t]+#", data)
    if has_comments:
        data = _COMMENT_LINES.sub(b"", data)
    wanted = set(usecols) | {fields - 1}
    # Columns we do not need are read as categories (cheap); a subset usecols would make
    # pandas misread rows that carry extra trailing fields.
    dtypes = {c: (str if c in wanted else "category") for c in range(fields)}
    try:
        frame = pd.read_csv(
            io.BytesIO(data),
            sep=r"\s+",
            header=None,
            names=list(range(fields)),
            usecols=range(fields),
            dtype=dtypes,
            quoting=csv.QUOTE_NONE,
            keep_default_na=False,
            na_values=[],
            skip_blank_lines=True,
            engine="c",
        )
    except pd.errors.EmptyDataError:
        frame = pd.DataFrame({c: pd.Series([], dtype=str) for c in range(fields)})
    except (pd.errors.ParserError, UnicodeDecodeError, ValueError):
        source.text()  # names the line when the bytes are not UTF-8
        raise InputError(describe, source=source.name) from None
    table = Table(frame, source, header_lines=0, skip_comments=True)
    short = frame[fields - 1].isna() | (frame[fields - 1] == "")
    if short.any():
        row = int(np.flatnonzero(short.to_numpy())[0])
        raise table.error(row, describe)
    return Table(frame[sorted(wanted)], source, header_lines=0, skip_comments=True)


def read_delimited(source: Source, delimiter: str, describe: str) -> Table:
    """Read a CSV or TSV file with a header row; every cell is kept as a string."""
    try:
        frame = pd.read_csv(
            io.BytesIO(source.data),
            sep=delimiter,
            dtype=str,
            keep_default_na=False,
            na_values=[],
            skip_blank_lines=True,
            quoting=csv.QUOTE_NONE if delimiter == "\t" else csv.QUOTE_MINIMAL,
            engine="c",
        )
    except pd.errors.EmptyDataError:
        raise InputError(f"a header row ({describe})", source=source.name) from None
    except pd.errors.ParserError as exc:
        line = _parser_error_line(str(exc))
        text = source.lines()[line - 1] if line and line <= len(source.lines()) else None
        raise InputError(
            f"the same number of fields on every line as in the header ({describe})",
            source=source.name, line=line, text=text,
        ) from None
    except UnicodeDecodeError:
        source.text()
        raise
    frame.columns = [str(c).strip() for c in frame.columns]
    return Table(frame, source, header_lines=1, skip_comments=False)


def read_parquet(source: Source) -> Table:
    """Read a Parquet file; ids become strings exactly as stored (no number conversion)."""
    try:
        frame = pd.read_parquet(io.BytesIO(source.data))
    except Exception as exc:  # pyarrow raises many types for a damaged file
        raise InputError(f"a readable Parquet file ({type(exc).__name__}: {exc})", source=source.name) from None
    frame.columns = [str(c).strip() for c in frame.columns]
    return Table(frame, source, header_lines=0, skip_comments=False, where="row")


def read_json_value(source: Source) -> object:
    """Parse a whole JSON document, naming the line and column of a syntax error."""
    try:
        return json.loads(source.text())
    except json.JSONDecodeError as exc:
        line_text = source.lines()[exc.lineno - 1] if exc.lineno <= len(source.lines()) else ""
        raise InputError(
            f"valid JSON ({exc.msg} at column {exc.colno})", source=source.name, line=exc.lineno, text=line_text
        ) from None


def read_jsonl_records(source: Source) -> list[tuple[int, dict]]:
    """Parse one JSON object per line; returns (line number, object) pairs, blank lines skipped."""
    records = []
    for number, line in enumerate(source.text().split("\n"), start=1):
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except json.JSONDecodeError as exc:
            raise InputError(f"one JSON object per line ({exc.msg})", source=source.name, line=number, text=line) from None
        if not isinstance(value, dict):
            raise InputError("one JSON object per line", source=source.name, line=number, text=line)
        records.append((number, value))
    return records


def find_column(table: Table, aliases: tuple[str, ...], role: str, required: bool = True) -> str | None:
    """The column of ``table`` named by one of ``aliases`` (case-insensitive)."""
    lowered = {c.lower(): c for c in table.frame.columns}
    for alias in aliases:
        if alias in lowered:
            return lowered[alias]
    if required:
        raise InputError(
            f"a {role} column named one of {', '.join(aliases)}",
            source=table.source.name,
            line=1 if table.where == "line" else None,
            text=",".join(map(str, table.frame.columns)),
            where="line",
        )
    return None


def id_strings(values: pd.Series) -> pd.Series:
    """Ids as strings, exactly as written: ``007`` stays ``007``; Parquet numbers become their text."""
    if pd.api.types.is_string_dtype(values.dtype) and not pd.api.types.is_object_dtype(values.dtype):
        return values.str.strip()
    if pd.api.types.is_float_dtype(values.dtype):
        as_int = values.dropna()
        if (as_int == np.floor(as_int)).all():
            return values.map(lambda v: "" if pd.isna(v) else str(int(v))).astype(str)
    return values.map(lambda v: "" if v is None or (isinstance(v, float) and np.isnan(v)) else str(v).strip()).astype(str)


def parse_numbers(table: Table, column: str, expected: str) -> np.ndarray:
    """A column as float64; the first unparsable cell is an error naming its line."""
    values = table.frame[column]
    if pd.api.types.is_numeric_dtype(values.dtype) and not pd.api.types.is_bool_dtype(values.dtype):
        numbers = values.to_numpy(dtype=np.float64)
        bad = np.isnan(numbers)
    else:
        text = values.astype(str).str.strip()
        numbers = pd.to_numeric(text, errors="coerce").to_numpy(dtype=np.float64)
        bad = np.isnan(numbers) | np.isinf(numbers)
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        raise table.error(row, expected)
    return numbers


def first_empty(table: Table, column: str) -> int | None:
    """Index of the first row whose ``column`` is empty, or None."""
    empty = table.frame[column].astype(str).str.strip() == ""
    if empty.any():
        return int(np.flatnonzero(empty.to_numpy())[0])
    return None


def _parser_error_line(message: str) -> int | None:
    match = re.search(r"line (\d+)", message)
    return int(match.group(1)) if match else None
