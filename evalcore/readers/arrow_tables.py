"""Tables read straight to Arrow columns, for files of millions of rows (chunk maps, queries files).

`read_arrow_table` reads a CSV or TSV file with pyarrow's parser, a Parquet file through the budgeted reader, and
JSON lines with Arrow's JSON reader (after the nesting check a deep line needs); only the columns a caller may use
are kept, and nothing becomes a Python object per row. The `ArrowTable` it returns names the file line of any data
row for messages; line numbers are only worked out on the error path, by the same scan `evalcore.readers.tables`
uses. A file the fast parsers refuse, or read with gaps or mixed types, is read again by the line-naming readers
(pandas for tables, one JSON object per line), which either read it or name the first bad line.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from typing import Iterable, Iterator

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.json as pa_json
from pyarrow import csv as pacsv

from ..errors import InputError
from .ids import first_long_id, long_id_error
from .json_files import content_lines, is_json_id, read_jsonl_records
from .nesting import MAX_NESTING, deepest_line
from .parquet_files import WholeReadNeeded, read_parquet_columns
from .sources import Source, first_content_line, quiet_in_pyarrow
from .tables import Table, read_delimited

_BLOCK = 1 << 22
"""Bytes pyarrow's CSV and JSON parsers take at a time (4 MiB: as fast as larger blocks)."""
_STREAM_BLOCK = 1 << 20
"""Bytes at a time when the batches are let go as they are read (`delimited_batches`): as fast, and the blocks the
parser's threads hold at once take a quarter of the memory (a 5 M-row chunk map: 400 MB at the peak, not 460)."""


@dataclass(frozen=True)
class ArrowTable:
    """The columns of a file a reader may use (as Arrow columns, names as the file spells them), with how to name
    the place of a data row in a message: ``line`` for text files (counting what the parser skipped), ``row`` for
    Parquet."""

    table: pa.Table
    source: Source
    where: str = "line"
    header_lines: int = 1
    quoted_delimiter: str | None = None
    header: tuple[str, ...] = ()

    def column(self, aliases: tuple[str, ...], role: str, required: bool = True) -> str | None:
        """The column named by one of ``aliases`` (case-insensitive, first alias found wins); a required one
        missing is an error naming the header."""
        lowered = {}
        for name in self.table.column_names:
            lowered.setdefault(name.strip().lower(), name)
        for alias in aliases:
            if alias in lowered:
                return lowered[alias]
        if not required:
            return None
        shown = first_content_line(self.source) if self.where == "line" and self.header_lines else None
        raise InputError(f"a {role} column named one of {', '.join(aliases)}", source=self.source.name,
                         line=1 if shown is not None else None,
                         text=shown if shown is not None else ",".join(self.header or self.table.column_names))

    def line_of(self, row: int) -> int:
        """The 1-based line (or row, for Parquet) of data row ``row`` (0-based)."""
        if self.where == "row":
            return row + 1
        return self._lines().line_of(row)

    def raw_line(self, row: int) -> str:
        """Data row ``row`` as the file has it (for Parquet, its columns as ``name=value``)."""
        if self.where == "row":
            return ", ".join(f"{name}={self.table.column(name)[row].as_py()}" for name in self.table.column_names)
        return self._lines().raw_line(row)

    def error(self, row: int, expected: str, text: str | None = None) -> InputError:
        """The message for data row ``row``: the file, its line (or row), ``text`` (else the line as written)."""
        return InputError(expected, source=self.source.name, line=self.line_of(row),
                          text=self.raw_line(row) if text is None else text, where=self.where)

    def _lines(self) -> Table:
        return Table(pd.DataFrame(), self.source, self.header_lines, skip_comments=False,
                     quoted_delimiter=self.quoted_delimiter)


def read_arrow_table(source: Source, fmt: str, columns: Iterable[str], describe: str,
                     names: tuple[str, ...] | None = None) -> ArrowTable:
    """The columns named in ``columns`` (lower case; the others are not kept) of a ``csv``, ``tsv``, ``parquet`` or
    ``jsonl`` file; ``describe`` says what the file should hold, for a message about its header. CSV and TSV cells
    are kept as text, for the caller to read as it must (and name the cell it cannot); ``names`` are the columns
    of a CSV or TSV file without a header line."""
    wanted = {c.lower() for c in columns}
    if fmt == "parquet":
        table, names = read_parquet_columns(source, wanted)
        return ArrowTable(table, source, where="row", header_lines=0, header=names)
    if fmt == "jsonl":
        return _jsonl(source, wanted)
    return _delimited(source, "," if fmt == "csv" else "\t", wanted, describe, names)


# ----------------------------------------------------------------------------- CSV and TSV


def _delimited(source: Source, delimiter: str, wanted: set[str], describe: str,
               given: tuple[str, ...] | None = None) -> ArrowTable:
    """pyarrow's CSV parser, every kept column as text (ids stay as written). A line with more or fewer fields than
    the header is an error naming it; anything else irregular goes to the line-naming reader (pandas)."""
    irregular: list[str] = []

    def handle(row) -> str:  # called from pyarrow's parser threads: it must never raise
        try:
            if row.text.strip():  # a line of spaces is a blank line, as for every reader
                irregular.append(row.text)
        except Exception:  # noqa: BLE001 - text that is not UTF-8: the slow reader names its line
            failures.append(ValueError("undecodable row"))
        return "skip"

    failures: list[BaseException] = []
    names = given or _header(source, delimiter)
    if names is None:
        raise InputError(f"a header row ({describe})", source=source.name)
    lines_before = 0 if given else 1
    keep = [n for n in names if n.strip().lower() in wanted]
    if not keep:  # pyarrow would read every column: none is needed to say which is missing
        return ArrowTable(pa.table({}), source, header_lines=lines_before, header=tuple(n.strip() for n in names))
    parse, convert = _csv_options(delimiter, keep, handle)
    try:
        with quiet_in_pyarrow(handle, failures):
            table = pacsv.read_csv(_csv_input(source), parse_options=parse, convert_options=convert,
                                   read_options=pacsv.ReadOptions(block_size=_BLOCK, column_names=given))
    except (pa.ArrowException, UnicodeDecodeError):
        table = None
    pa.default_memory_pool().release_unused()  # the parser's block buffers, kept by the allocator until asked
    if irregular and not failures and table is not None:
        raise _uneven_line(source, delimiter, len(names), describe, lines_before)
    if table is None or irregular or failures or len(set(keep)) != len(keep):
        return _delimited_slow(source, delimiter, wanted, describe, given)
    return ArrowTable(table, source, header_lines=lines_before, header=tuple(n.strip() for n in names),
                      quoted_delimiter=delimiter if delimiter == "," else None)


def delimited_batches(source: Source, delimiter: str, wanted: Iterable[str], describe: str,
                      ) -> tuple[ArrowTable, Iterator[pa.RecordBatch]] | None:
    """A CSV or TSV file with a header, a batch of rows at a time: its columns (an `ArrowTable` of no rows, for
    finding them by name) and the batches of the columns in ``wanted``, every cell as text, as `read_arrow_table`
    reads them. The batches raise `WholeReadNeeded` at the first irregular line; None when the file cannot be
    read this way at all (no header, no wanted column, a repeated column name)."""
    wanted = {c.lower() for c in wanted}
    names = _header(source, delimiter)
    keep = [n for n in names or () if n.strip().lower() in wanted]
    if not keep or len(set(keep)) != len(keep):
        return None
    irregular: list[object] = []

    def handle(row) -> str:  # called from pyarrow's parser threads: it must never raise
        irregular.append(row)
        return "skip"

    parse, convert = _csv_options(delimiter, keep, handle)
    head = pa.table({n: pa.array([], pa.string()) for n in keep})
    found = ArrowTable(head, source, header_lines=1, quoted_delimiter=delimiter if delimiter == "," else None,
                       header=tuple(n.strip() for n in names))

    def batches() -> Iterator[pa.RecordBatch]:
        try:
            with quiet_in_pyarrow(handle, irregular):
                reader = pacsv.open_csv(_csv_input(source), read_options=pacsv.ReadOptions(block_size=_STREAM_BLOCK),
                                        parse_options=parse, convert_options=convert)
                for batch in reader:
                    if irregular:
                        raise WholeReadNeeded
                    yield batch
        except (pa.ArrowException, UnicodeDecodeError):
            raise WholeReadNeeded from None
        finally:
            pa.default_memory_pool().release_unused()
        if irregular:
            raise WholeReadNeeded

    return found, batches()


def _csv_options(delimiter: str, keep: list[str], handle) -> tuple[pacsv.ParseOptions, pacsv.ConvertOptions]:
    """How pyarrow parses a CSV (quoted cells, double quotes, line breaks in a quoted cell) or a TSV (none of
    these), calling ``handle`` on a line with the wrong number of fields, and keeps the columns ``keep`` as text."""
    quoted = delimiter == ","
    parse = pacsv.ParseOptions(delimiter=delimiter, quote_char='"' if quoted else False, double_quote=quoted,
                               newlines_in_values=quoted, ignore_empty_lines=True, invalid_row_handler=handle)
    convert = pacsv.ConvertOptions(include_columns=keep, column_types={n: pa.string() for n in keep},
                                   strings_can_be_null=False, quoted_strings_can_be_null=False)
    return parse, convert


def _csv_input(source: Source):
    """The file's path when pyarrow can read it as it is, else its bytes (inflated, repaired)."""
    return str(source.plain_path) if source.plain_path is not None else pa.py_buffer(source.data)


def _header(source: Source, delimiter: str) -> tuple[str, ...] | None:
    """The column names of the file's first line that is not blank, as the parser reads them; None when there is
    none in the file's first bytes."""
    head = source.head()
    if b"\n" not in head:
        head = source.data  # a header longer than the first bytes
    for raw in head.split(b"\n"):
        line = raw.decode("utf-8", "replace").rstrip("\r")
        if line.strip():
            quoting = csv.QUOTE_MINIMAL if delimiter == "," else csv.QUOTE_NONE
            return tuple(next(csv.reader([line], delimiter=delimiter, quoting=quoting)))
    return None


def _uneven_line(source: Source, delimiter: str, fields: int, describe: str, header_lines: int = 1) -> InputError:
    """The error for the first line with more or fewer fields than the header (the error path only: a Python scan
    that counts lines as a CSV reader consumes them, so a quoted cell over several lines keeps the count right)."""
    reader = csv.reader(io.StringIO(source.text(), newline=""), delimiter=delimiter,
                        quoting=csv.QUOTE_MINIMAL if delimiter == "," else csv.QUOTE_NONE)
    end = 0
    for number, record in enumerate(reader):
        start, end = end + 1, reader.line_num
        if number >= header_lines and len(record) != fields and any(cell.strip() for cell in record):
            text = "\n".join(source.lines()[start - 1:end])
            return InputError(_uneven(fields, describe, header_lines), source=source.name, line=start, text=text)
    return InputError(_uneven(fields, describe, header_lines), source=source.name)


def _uneven(fields: int, describe: str, header_lines: int) -> str:
    return f"{fields} fields on every line{', as in the header' if header_lines else ''} ({describe})"


def _delimited_slow(source: Source, delimiter: str, wanted: set[str], describe: str,
                    given: tuple[str, ...] | None = None) -> ArrowTable:
    """The line-naming reader (pandas): it reads what pyarrow would not, or names the first bad line."""
    found = read_delimited(source, delimiter, describe, columns=wanted, names=given)
    frame = found.frame.loc[:, ~found.frame.columns.duplicated()]
    table = pa.table({name: pa.array(frame[name].to_numpy(dtype=object), pa.string()) for name in frame.columns})
    return ArrowTable(table, source, header_lines=found.header_lines, quoted_delimiter=found.quoted_delimiter,
                      header=found.column_names)


# ----------------------------------------------------------------------------- JSON lines


def _jsonl(source: Source, wanted: set[str]) -> ArrowTable:
    """Arrow's JSON reader (after the nesting check); a file it refuses, or reads with mixed types in a kept column,
    is read one object per line, which names the first bad line."""
    found = deepest_line(source.data)
    if found is not None:
        line, _, offset = found
        start = source.data.rfind(b"\n", 0, offset) + 1
        raise InputError(f"JSON nested at most {MAX_NESTING} levels deep", source=source.name, line=line,
                         text=bytes(source.data[start:start + 60]).decode("utf-8", "replace") + "...")
    try:
        table = pa_json.read_json(pa.BufferReader(source.data), read_options=pa_json.ReadOptions(block_size=_BLOCK))
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return _jsonl_slow(source, wanted)
    if table.num_rows != len(content_lines(source.data)):
        return _jsonl_slow(source, wanted)  # two objects on one line: the slow reader names it
    keep = [n for n in table.column_names if n.strip().lower() in wanted]
    table = table.select(keep)
    for name in keep:
        kind = table.schema.field(name).type
        if not (pa.types.is_string(kind) or pa.types.is_integer(kind) or pa.types.is_floating(kind)
                or pa.types.is_null(kind)):
            return _jsonl_slow(source, wanted)  # objects, lists, booleans: the slow reader names the line
    return ArrowTable(table, source, header_lines=0)


def _jsonl_slow(source: Source, wanted: set[str]) -> ArrowTable:
    """One JSON object per line (the error path, or ids of mixed types): each kept field a JSON id, number, text
    or null, else an error naming the line."""
    records = read_jsonl_records(source)
    names: list[str] = []
    for _, record in records:
        names.extend(k for k in record if k.strip().lower() in wanted and k not in names)
    columns = {}
    for name in names:
        values, text = [], False
        for number, record in records:
            value = record.get(name)
            if value is not None and not (is_json_id(value) or isinstance(value, float)):
                raise InputError(f"{name!r} as text or a number", source=source.name, line=number,
                                 text=source.lines()[number - 1])
            text = text or isinstance(value, str)
            values.append(value)
        if text:  # ids of mixed types: whole numbers become their digits; a fraction is no id
            at = next((i for i, v in enumerate(values) if isinstance(v, float)), None)
            if at is not None:
                number = records[at][0]
                raise InputError(f"{name!r} as text or a whole number on every line", source=source.name,
                                 line=number, text=source.lines()[number - 1])
            values = [None if v is None else str(v) for v in values]
        columns[name] = pa.array(values, pa.string() if text else None)
    return ArrowTable(pa.table(columns), source, header_lines=0)



# ----------------------------------------------------------------------------- ids


def id_column(found: ArrowTable, name: str, role: str) -> pa.ChunkedArray:
    """Column ``name`` as ids: text exactly as written (whole numbers as their digits; a float only when it is a
    whole number within 2**53), every row holding one within `max_id_chars`; anything else names its line. Text
    columns are not copied."""
    values = found.table.column(name)
    if pa.types.is_dictionary(values.type):
        values = values.cast(values.type.value_type)
    if pa.types.is_floating(values.type):
        numbers = values.to_numpy(zero_copy_only=False)
        bad = ~np.isnan(numbers) & ((numbers != np.floor(numbers)) | (np.abs(numbers) > 2.0 ** 53))
        if bad.any():
            row = int(np.flatnonzero(bad)[0])
            raise found.error(row, f"an id that is text or a whole number up to 2**53 in column {name!r}",
                              text=repr(float(numbers[row])))
        values = pc.cast(values, pa.int64())
    if pa.types.is_binary(values.type) or pa.types.is_large_binary(values.type):
        try:
            values = values.cast(pa.string())
        except pa.ArrowInvalid:
            raise InputError(f"UTF-8 text in column {name!r}", source=found.source.name) from None
    if not (pa.types.is_string(values.type) or pa.types.is_large_string(values.type)):
        if not (pa.types.is_integer(values.type) or pa.types.is_null(values.type)):
            raise InputError(f"ids as text or whole numbers in column {name!r}", source=found.source.name,
                             text=str(values.type))
        values = pc.cast(values, pa.string())
    if values.null_count or len(values) and pc.min(pc.binary_length(values)).as_py() == 0:
        row = pc.index(pc.or_kleene(pc.is_null(values), pc.equal(pc.binary_length(values), 0)), True).as_py()
        raise found.error(row, f"{role} in column {name!r}")
    long = first_long_id(values)
    if long is not None:
        raise long_id_error(values[long].as_py(), role, found.source.name, found.line_of(long), found.where)
    return values if pa.types.is_string(values.type) else values.cast(pa.string())


def text_column(found: ArrowTable, name: str) -> pa.ChunkedArray:
    """Column ``name`` as text (numbers as their digits), nulls kept."""
    values = found.table.column(name)
    if pa.types.is_dictionary(values.type):
        values = values.cast(values.type.value_type)
    if pa.types.is_binary(values.type) or pa.types.is_large_binary(values.type):
        try:
            return values.cast(pa.string())
        except pa.ArrowInvalid:
            raise InputError(f"UTF-8 text in column {name!r}", source=found.source.name) from None
    return values if pa.types.is_string(values.type) else pc.cast(values, pa.string())

