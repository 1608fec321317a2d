"""Tables read straight to Arrow columns, for files of millions of rows (chunk maps, queries files).

`read_arrow_table` reads a CSV or TSV file with pyarrow's parser, a Parquet file through the budgeted reader, and
JSON lines with Arrow's JSON reader (after the nesting check a deep line needs); only the columns a caller may use
are kept, and nothing becomes a Python object per row. The `ArrowTable` it returns names the file line of any data
row for messages; line numbers are only worked out on the error path, a block of the file at a time
(`evalcore.readers.tables.row_place`), so naming the last line of a file of millions costs no more memory than a
block. A file the fast parsers refuse, or read with gaps or mixed types, is read again by the line-naming readers
(pandas for tables, one JSON object per line), which either read it or name the first bad line.
"""

from __future__ import annotations

import csv
import io
from contextlib import closing
from dataclasses import dataclass
from typing import Iterable, Iterator

import numpy as np
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
from .tables import KeptLines, read_delimited, row_place, unquoted

_BLOCK = 1 << 22
"""Bytes pyarrow's CSV and JSON parsers take at a time (4 MiB: as fast as larger blocks)."""
_STREAM_BLOCK = 1 << 20
"""Bytes at a time when the batches are let go as they are read (`delimited_batches`): as fast, and the blocks the
parser's threads hold at once take a quarter of the memory (a 5 M-row chunk map: 400 MB at the peak, not 460)."""


@dataclass(frozen=True)
class ArrowTable:
    """The columns of a file a reader may use (as Arrow columns, names as the file spells them), with how to name
    the place of a data row in a message: ``line`` for text files (counting what the parser skipped), ``row`` for
    Parquet. ``first_row``: the file's data rows before this table's first (a batch of a file read a batch at a
    time names its rows as the file has them); ``tsv``: a TSV, read without quoting (text cells are unquoted as
    pandas would, `text_column`)."""

    table: pa.Table
    source: Source
    where: str = "line"
    header_lines: int = 1
    quoted_delimiter: str | None = None
    header: tuple[str, ...] = ()
    first_row: int = 0
    tsv: bool = False

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
        """The 1-based line (or row, for Parquet) of data row ``row`` (0-based, of this table)."""
        if self.where == "row":
            return self.first_row + row + 1
        return self._place(row)[0]

    def raw_line(self, row: int) -> str:
        """Data row ``row`` as the file has it (for Parquet, its columns as ``name=value``)."""
        if self.where == "row":
            return ", ".join(f"{name}={self.table.column(name)[row].as_py()}" for name in self.table.column_names)
        return self._place(row)[2]

    def error(self, row: int, expected: str, text: str | None = None) -> InputError:
        """The message for data row ``row``: the file, its line (or row), ``text`` (else the line as written)."""
        if self.where == "row":
            line, shown = self.line_of(row), self.raw_line(row) if text is None else text
        else:
            line, _, written = self._place(row)  # the file is looked through once for both
            shown = written if text is None else text
        return InputError(expected, source=self.source.name, line=line, text=shown, where=self.where)

    def _place(self, row: int) -> tuple[int, int, str]:
        return row_place(self.source, self.first_row + row, self.header_lines, self.quoted_delimiter)


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
        return ArrowTable(pa.table({}), source, header_lines=lines_before, header=tuple(n.strip() for n in names),
                          tsv=delimiter == "\t")
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
                      quoted_delimiter=delimiter if delimiter == "," else None, tsv=delimiter == "\t")


def delimited_batches(source: Source, delimiter: str, wanted: Iterable[str], describe: str,
                      ) -> tuple[ArrowTable, Iterator[pa.RecordBatch]] | None:
    """A CSV or TSV file with a header, a batch of rows at a time: its columns (an `ArrowTable` of no rows, for
    finding them by name) and the batches of the columns in ``wanted``, every cell as text, as `read_arrow_table`
    reads them. A line with more or fewer fields than the header is an InputError naming it (found a block at a
    time); the batches raise `WholeReadNeeded` at anything else irregular (text that is not UTF-8, a quote left
    open). None when the file cannot be read this way at all (no header, no wanted column, a repeated column
    name). Closing the batches (a generator) closes the file's reader, whether or not it was read to the end."""
    wanted = {c.lower() for c in wanted}
    names = _header(source, delimiter)
    keep = [n for n in names or () if n.strip().lower() in wanted]
    if not keep or len(set(keep)) != len(keep):
        return None
    uneven: list[object] = []
    failures: list[BaseException] = []

    def handle(row) -> str:  # called from pyarrow's parser threads: it must never raise
        try:
            if row.text.strip():  # a line of spaces is a blank line, as for every reader
                uneven.append(row)
        except Exception:  # noqa: BLE001 - text that is not UTF-8: the whole read names its line
            failures.append(ValueError("undecodable row"))
        return "skip"

    parse, convert = _csv_options(delimiter, keep, handle)
    head = pa.table({n: pa.array([], pa.string()) for n in keep})
    found = ArrowTable(head, source, header_lines=1, quoted_delimiter=delimiter if delimiter == "," else None,
                       header=tuple(n.strip() for n in names), tsv=delimiter == "\t")

    def checked() -> None:
        if failures:
            raise WholeReadNeeded
        if uneven:
            raise _uneven_line(source, delimiter, len(names), describe)

    def batches() -> Iterator[pa.RecordBatch]:
        reader = None
        try:
            with quiet_in_pyarrow(handle, failures):
                reader = pacsv.open_csv(_csv_input(source), read_options=pacsv.ReadOptions(block_size=_STREAM_BLOCK),
                                        parse_options=parse, convert_options=convert)
                for batch in reader:
                    checked()
                    yield batch
        except (pa.ArrowException, UnicodeDecodeError):
            raise WholeReadNeeded from None
        finally:
            if reader is not None:
                reader.close()
            pa.default_memory_pool().release_unused()
        checked()

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
    """The error for the first line with more or fewer fields than the header (the error path only: a CSV reader
    over the file read a block at a time, so a quoted cell over several lines keeps the count right and a file of
    millions of lines is never held whole)."""
    quoting = csv.QUOTE_MINIMAL if delimiter == "," else csv.QUOTE_NONE
    with source.stream() as handle:
        kept = KeptLines(io.TextIOWrapper(handle, encoding="utf-8", errors="replace", newline=""))
        reader = csv.reader(kept, delimiter=delimiter, quoting=quoting)
        end = 0
        for number, record in enumerate(reader):
            start, end = end + 1, reader.line_num
            text = kept.take()
            if number >= header_lines and len(record) != fields and any(cell.strip() for cell in record):
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
                      header=found.column_names, tsv=found.tsv)


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
        table = _json_table(source.data)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return _jsonl_slow(source, wanted)
    finally:
        pa.default_memory_pool().release_unused()  # the parser's blocks, kept by the allocator until asked
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


def _json_table(data: bytes) -> pa.Table:
    """JSON lines as a table, parsed a block at a time: each block's parse is let go once it is converted, so the
    peak is half that of one whole parse (3 million chunk rows: 280 MB above the file's bytes, not 560). When a later
    block's fields or types differ from the first block's, the whole parse reads it (it unifies them), or refuses."""
    options = pa_json.ReadOptions(block_size=_BLOCK)
    try:
        with closing(pa_json.open_json(pa.BufferReader(data), read_options=options)) as reader:
            return pa.Table.from_batches(list(reader), reader.schema)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return pa_json.read_json(pa.BufferReader(data), read_options=options)


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
        values = _utf8(found, name, values)
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
    """Column ``name`` as text (numbers as their digits), nulls kept; in a TSV, a cell quoted as pandas writes it
    is read as pandas reads it (`evalcore.readers.tables.unquoted`)."""
    values = found.table.column(name)
    if pa.types.is_dictionary(values.type):
        values = values.cast(values.type.value_type)
    if pa.types.is_binary(values.type) or pa.types.is_large_binary(values.type):
        return _utf8(found, name, values)
    values = values if pa.types.is_string(values.type) else pc.cast(values, pa.string())
    return unquoted(values) if found.tsv else values


def _utf8(found: ArrowTable, name: str, values: pa.ChunkedArray) -> pa.ChunkedArray:
    """A binary column as text; the first row whose bytes are not UTF-8 is an error naming it, with its bytes as far
    as they decode."""
    try:
        return values.cast(pa.string())
    except pa.ArrowInvalid:
        pass
    row = _first_not_utf8(values)
    shown = (values[row].as_py() or b"")[:60].decode("utf-8", "replace")
    raise found.error(row, f"UTF-8 text in column {name!r}", text=shown)


def _first_not_utf8(values: pa.ChunkedArray) -> int:
    """The first row of a binary column whose bytes are not UTF-8 (the error path only: slices are cast until one
    fails, then its rows are tried one by one)."""
    step = 1 << 16
    for at in range(0, len(values), step):
        piece = values.slice(at, step)
        try:
            piece.cast(pa.string())
            continue
        except pa.ArrowInvalid:
            pass
        for offset, value in enumerate(piece.to_pylist()):
            try:
                (value or b"").decode("utf-8")
            except UnicodeDecodeError:
                return at + offset
    return 0

