"""Tables: a CSV, TSV or Parquet file (or a DataFrame) as a DataFrame of strings, with line numbers for every error.

Parsing is columnar (pandas' C parser, pyarrow for Parquet), and only the columns a reader may use are read;
line numbers are only worked out on the error path, by re-reading the text, so a good file never pays for them
(`row_place` reads it a block at a time, so naming the last line of a file of millions costs no more memory than a
block). A TSV is read without quoting, except that a text cell quoted as Python's csv module and pandas write it is
read as they read it (`unquoted`).
The column names (and aliases) labels and runs use are here, and the helpers that find a column and turn it into
numbers. TREC files are read by `evalcore.readers.trec`, JSON by `evalcore.readers.json_files`, ids are checked by
`evalcore.readers.id_columns`.
"""

from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass
from typing import Iterable

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from ..errors import InputError
from .json_files import content_lines
from .parquet_files import read_parquet_columns
from .sources import Source, first_content_line

QUERY_ALIASES = ("query", "query_id", "qid", "query-id")
DOC_ALIASES = ("doc_id", "docid", "doc", "corpus-id")
GRADE_ALIASES = ("grade", "relevance", "rel", "score", "label")
QUERY_FIELDS = ("query_text", "source", "blind", "split", "stratum")
"""Optional per-query fields a labels file may carry (docs/formats.md)."""


@dataclass(frozen=True)
class Table:
    """Rows of a file as strings, plus how to find the file line of a row for messages."""

    frame: pd.DataFrame
    source: Source
    header_lines: int  # lines before the first data row that are not blank or comments
    skip_comments: bool
    where: str = "line"  # "row" for Parquet and JSON, which have no lines
    quoted_delimiter: str | None = None  # CSV: a quoted cell may span lines, so rows are found by a CSV reader
    header: tuple[str, ...] | None = None  # every column the file names, when only some were read
    tsv: bool = False  # read without quoting: text cells are `unquoted`

    def text(self, column: str) -> pd.Series:
        """Column ``column`` as text: a TSV's quoted cells read as pandas reads them (`unquoted`), missing cells
        (Parquet nulls) as ""."""
        values = self.frame[column]
        text = values.astype(object).where(values.notna(), "").astype(str)
        if not self.tsv or not len(text):
            return text
        plain = unquoted(pa.array(text.to_numpy(dtype=object), pa.string()))
        return pd.Series(plain.to_numpy(zero_copy_only=False), index=text.index, dtype=object)

    @property
    def column_names(self) -> tuple[str, ...]:
        """The columns the file names (all of them, also those not read)."""
        return self.header if self.header is not None else tuple(map(str, self.frame.columns))

    def line_of(self, row: int) -> int:
        """The 1-based file line of data row ``row`` (0-based), counting what the parser skipped."""
        if self.where == "row":
            return row + 1
        if self.quoted_delimiter is not None and '"' in self.source.text():
            return self._record_lines(row)[0]
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
        if self.quoted_delimiter is not None and '"' in self.source.text():
            first, last = self._record_lines(row)
            return "\n".join(lines[first - 1:last])
        return lines[self.line_of(row) - 1]

    def _record_lines(self, row: int) -> tuple[int, int]:
        """First and last file line of data row ``row`` of a quoted CSV (the error path only: a Python scan).

        Lines are counted as the CSV reader consumes them, so a quoted cell holding line breaks
        does not shift the lines of the rows after it.
        """
        reader = csv.reader(io.StringIO(self.source.text(), newline=""), delimiter=self.quoted_delimiter)
        wanted, seen, end = row + self.header_lines, -1, 0
        for record in reader:
            start, end = end + 1, reader.line_num
            if not any(cell.strip() for cell in record) and start == end:
                continue  # a blank line: the table parser skips it too
            seen += 1
            if seen == wanted:
                return start, end
        return end, end

    def error(self, row: int, expected: str, text: str | None = None) -> InputError:
        return InputError(
            expected,
            source=self.source.name,
            line=self.line_of(row),
            text=self.raw_line(row) if text is None else text,
            where=self.where,
        )


def read_delimited(source: Source, delimiter: str, describe: str, columns: Iterable[str] | None = None,
                   names: tuple[str, ...] | None = None) -> Table:
    """Read a CSV or TSV file with a header row (or, given ``names``, a file without one); every cell is kept as a
    string.

    ``columns`` are the names (lower case) a caller may use: only those are read, so a wide
    file's other columns (a text column in a run file, say) cost nothing. The whole header is
    kept for messages that list what the file has.
    """
    wanted = None if columns is None else {c.lower() for c in columns}
    options = dict(sep=delimiter, dtype=str, keep_default_na=False, na_values=[], skip_blank_lines=True,
                   quoting=csv.QUOTE_NONE if delimiter == "\t" else csv.QUOTE_MINIMAL, engine="c")
    if names is not None:
        options.update(header=None, names=list(names))
    try:
        header = names
        if wanted is not None and names is None:
            found = pd.read_csv(io.BytesIO(source.data), nrows=0, **options).columns
            header = tuple(str(c).strip() for c in found)
        frame = pd.read_csv(
            io.BytesIO(source.data),
            usecols=None if wanted is None else (lambda name: str(name).strip().lower() in wanted),
            **options,
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
    return Table(frame, source, header_lines=0 if names is not None else 1, skip_comments=False,
                 quoted_delimiter=None if delimiter == "\t" else delimiter, header=header, tsv=delimiter == "\t")


def read_parquet(source: Source, columns: Iterable[str] | None = None) -> Table:
    """Read a Parquet file; ids become strings exactly as stored (no number conversion).

    ``columns`` are the names (lower case) a caller may use: only those are read and
    decompressed, so a wide file's other columns cost nothing; the whole header is kept for
    messages. The columns read are held to the memory budget (`evalcore.readers.parquet_files`).
    Binary columns must hold UTF-8 text.
    """
    table, names = read_parquet_columns(source, columns)
    for i, name in enumerate(table.column_names):
        if pa.types.is_binary(table.schema.field(i).type) or pa.types.is_large_binary(table.schema.field(i).type):
            table = table.set_column(i, name, _utf8_column(table.column(i), name, source.name))
    frame = table.to_pandas()
    frame.columns = [str(c).strip() for c in frame.columns]
    return Table(frame, source, header_lines=0, skip_comments=False, where="row", header=names)


def _utf8_column(values: pa.ChunkedArray, name: str, display: str) -> pa.ChunkedArray:
    """A binary column as text; bytes that are not UTF-8 are an error naming their row."""
    try:
        return values.cast(pa.string())
    except pa.ArrowInvalid:
        pass
    for row, value in enumerate(values.to_pylist()):  # the error path only
        try:
            (value or b"").decode("utf-8")
        except UnicodeDecodeError:
            raise InputError(f"UTF-8 text in column {name!r}", source=display, line=row + 1,
                             text=value[:60].decode("utf-8", "replace"),
                             where="row") from None
    raise InputError(f"UTF-8 text in column {name!r}", source=display)


def find_column(table: Table, aliases: tuple[str, ...], role: str, required: bool = True) -> str | None:
    """The column of ``table`` named by one of ``aliases`` (case-insensitive)."""
    lowered = {c.lower(): c for c in table.frame.columns}
    for alias in aliases:
        if alias in lowered:
            return lowered[alias]
    if required:
        named = {c.lower() for c in table.column_names} & {*QUERY_ALIASES, *DOC_ALIASES}
        headerless = (" (a file without a header line: name its format with the format override, "
                      "--labels-format / --run-format / --docs-format, or the format choice beside the upload)"
                      if table.where == "line" and not named else "")
        raise InputError(
            f"a {role} column named one of {', '.join(aliases)}{headerless}",
            source=table.source.name,
            line=1 if table.where == "line" else None,
            text=",".join(table.column_names) if table.where != "line" else _header_as_read(table),
            where="line",
        )
    return None


def _header_as_read(table: Table) -> str:
    """The file's first content line as it stands (tabs shown as tabs), for a message about its header."""
    first = first_content_line(table.source)
    return first if first is not None else ",".join(table.column_names)


def parse_numbers(table: Table, column: str, expected: str) -> np.ndarray:
    """A column as float64; the first unparsable cell is an error naming its line."""
    values = table.frame[column]
    if pd.api.types.is_numeric_dtype(values.dtype) and not pd.api.types.is_bool_dtype(values.dtype):
        numbers = values.to_numpy(dtype=np.float64, na_value=np.nan)
        bad = ~np.isfinite(numbers)
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
    values = table.frame[column]
    empty = values.isna().to_numpy() | (values.astype(str).str.strip() == "").to_numpy()
    if empty.any():
        return int(np.flatnonzero(empty)[0])
    return None


def _parser_error_line(message: str) -> int | None:
    match = re.search(r"line (\d+)", message)
    return int(match.group(1)) if match else None


_QUOTED = r'^"(?:[^"]|"")*"$'
"""A cell quoted as Python's csv module and pandas write one: a quote first and last, every quote inside doubled."""


def unquoted(values: pa.Array | pa.ChunkedArray) -> pa.Array | pa.ChunkedArray:
    """TSV text cells as pandas and Python's csv module read them: a cell that begins with a double quote and is
    quoted consistently (`_QUOTED`: ``"a ""high Km"" enzyme"``) loses its outer quotes and the doubling of those
    inside (``a "high Km" enzyme``); any other cell, and every cell when none begins with a quote, is kept as written. Ids are never
    passed here: they are read as written."""
    if not len(values) or not pc.any(pc.starts_with(values, '"')).as_py():
        return values
    quoted = pc.fill_null(pc.match_substring_regex(values, _QUOTED), False)
    inner = pc.replace_substring(pc.utf8_slice_codeunits(values, 1, -1), '""', '"')
    return pc.if_else(quoted, inner, values)


_FIND_BLOCK = 1 << 22
"""Bytes read at a time while looking for a row's line (`row_place`)."""


def row_place(source: Source, row: int, header_lines: int, quoted_delimiter: str | None = None,
              ) -> tuple[int, int, str]:
    """The first and last line of data row ``row`` (0-based) of a text table or JSON lines file, and its text, as
    `Table.line_of` and `Table.raw_line` give them (blank lines skipped; in a CSV with quotes, records as a CSV
    reader reads them), found a block at a time: a file of millions of lines is never held whole, nor made into one
    Python string per line. Past the last row: the last line and no text."""
    wanted, seen, lines, at = row + header_lines, 0, 0, 0
    carry = b""
    with source.stream() as handle:
        while True:
            block = handle.read(_FIND_BLOCK)
            data = carry + block
            cut = data.rfind(b"\n") + 1 if block else len(data)
            whole, carry = data[:cut], data[cut:]
            if quoted_delimiter is not None and b'"' in whole:  # records from here on: a CSV reader's
                handle.seek(at)
                return _record_place(handle, wanted - seen, lines, quoted_delimiter)
            solid = content_lines(whole) if whole else np.zeros(0, dtype=np.int64)
            if seen + len(solid) > wanted:
                local = int(solid[wanted - seen])
                return lines + local, lines + local, _line_text(whole, local)
            seen, lines, at = seen + len(solid), lines + whole.count(b"\n"), at + len(whole)
            if not block:
                return max(lines, 1), max(lines, 1), ""


def _line_text(data: bytes, number: int) -> str:
    """Line ``number`` (1-based) of ``data``, as text."""
    start = 0
    for _ in range(number - 1):
        start = data.index(b"\n", start) + 1
    end = data.find(b"\n", start)
    return data[start:len(data) if end < 0 else end].decode("utf-8", "replace").rstrip("\r")


class KeptLines:
    """The lines a CSV reader takes from a text stream, kept until `clear`: the lines of the record it read last."""

    def __init__(self, stream: io.TextIOBase) -> None:
        self.stream, self.kept = stream, []

    def __iter__(self) -> KeptLines:
        return self

    def __next__(self) -> str:
        line = next(self.stream)
        self.kept.append(line)
        return line

    def take(self) -> str:
        text = "".join(self.kept).replace("\r\n", "\n")
        self.kept = []
        return text[:-1] if text.endswith("\n") else text


def _record_place(handle, wanted: int, lines: int, delimiter: str) -> tuple[int, int, str]:
    """`row_place` from a record boundary on: record ``wanted`` (0-based, counting records that hold something)
    read by a CSV reader, ``lines`` lines before it (the error path only: a Python step per record)."""
    kept = KeptLines(io.TextIOWrapper(handle, encoding="utf-8", errors="replace", newline=""))
    reader = csv.reader(kept, delimiter=delimiter)
    seen, end = -1, lines
    for record in reader:
        start, end = end + 1, lines + reader.line_num
        text = kept.take()
        if not any(cell.strip() for cell in record) and start == end:
            continue  # a blank line: the table parser skips it too
        seen += 1
        if seen == wanted:
            return start, end, text
    return end, end, ""
