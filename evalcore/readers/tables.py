"""Turning a `Source` into a DataFrame of strings, with line numbers for every error.

Parsing is columnar (pandas' C parser); line numbers are only worked out on the error path,
by re-reading the text, so a good file never pays for them. Ids longer than `max_id_chars`
are refused right after parsing (one Arrow kernel over the lengths).
"""

from __future__ import annotations

import csv
import io
import json
import math
import re
from dataclasses import dataclass
from typing import Iterable

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from pyarrow import csv as pacsv

from ..errors import InputError
from .ids import first_long_id, long_id_error, used_ids
from .sources import (
    MAX_ID_ENV,
    Source,
    first_content_line,
    max_file_bytes,
    max_id_chars,
    quiet_in_pyarrow,
    too_large,
)

QUERY_ALIASES = ("query", "query_id", "qid", "query-id")
DOC_ALIASES = ("doc_id", "docid", "doc", "corpus-id")
GRADE_ALIASES = ("grade", "relevance", "rel", "score", "label")
QUERY_FIELDS = ("query_text", "source", "blind", "split")
"""Optional per-query fields a labels file may carry (docs/formats.md)."""

_COMMENT_LINES = re.compile(rb"(?m)^[ \t]*#[^\n]*$")


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


def read_whitespace(source: Source, fields: int, describe: str, usecols: Iterable[int],
                    id_columns: dict[int, str] | None = None) -> Table:
    """Read a TREC-style file: whitespace-separated, ``#`` lines and blank lines skipped.

    Rows with fewer than ``fields`` fields are an error naming the line; extra trailing
    fields are ignored (trec_eval does the same). Only ``usecols`` are kept, as strings.
    ``id_columns`` (column -> role, e.g. ``{2: "doc id"}``) are checked against `max_id_chars`.
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
        raise _first_short_line(source, fields, describe) from None
    table = Table(frame, source, header_lines=0, skip_comments=True)
    short = frame[fields - 1].isna() | (frame[fields - 1] == "")
    if short.any():
        row = int(np.flatnonzero(short.to_numpy())[0])
        raise table.error(row, describe)
    for column, role in (id_columns or {}).items():
        check_id_lengths(table, frame[column], role)
    return Table(frame[sorted(wanted)], source, header_lines=0, skip_comments=True)


_RUN_COLUMNS = ["query", "q0", "doc_id", "rank", "score", "tag"]


def read_trec_run_arrow(source: Source) -> dict | None:
    """Fast path for TREC runs: pyarrow's multi-threaded CSV parser straight to integer codes.

    Returns query codes with the unique query ids, the doc ids as Arrow strings (one per row:
    no global doc dictionary is built, see `evalcore.readers.ids`), float scores and the first run tag, or
    None when anything is irregular enough to need `read_whitespace` (which names the bad
    line). Tabs and repeated spaces are folded first; rows that still do not split into six
    fields (extra trailing fields, stray whitespace) are re-split in Python, which is only
    cheap when they are rare; ``#`` comment lines are dropped.
    """

    head = source.head()
    first_line = next((line.split() for line in head.decode("utf-8", "replace").split("\n")
                       if line.strip() and not line.lstrip().startswith("#")), [])
    path = source.plain_path
    if path is not None and b"\t" not in head and b"  " not in head:
        data = str(path)  # let pyarrow stream the file: its bytes are never held whole
    else:
        data = source.data
        if b"\t" in head or b"  " in head:
            data = data.replace(b"\t", b" ")
            if b"  " in data:
                data = re.sub(rb" {2,}", b" ", data)
        data = pa.py_buffer(data)
    irregular: list[list[str]] = []
    bad = False

    def handle(row) -> str:
        # Called from pyarrow's parser threads: it must never raise (see `quiet_in_pyarrow`).
        nonlocal bad
        try:
            text = row.text.strip()
            if text.startswith("#") or not text:
                return "skip"
            fields = text.split()
            if len(fields) >= 6:
                irregular.append(fields[:6])
            else:
                bad = True
        except Exception:  # noqa: BLE001 - recorded, and the slow path names the line
            bad = True
        return "skip"

    pool = pa.default_memory_pool()
    failures: list[BaseException] = []
    try:
        with quiet_in_pyarrow(handle, failures):
            table = _read_run_csv(data, pool, handle)
    except (pa.ArrowException, UnicodeDecodeError) as exc:
        if "straddl" in str(exc):  # a line longer than a block: refuse it before pandas reads it whole
            _refuse_long_line(source)
        return None
    del data
    pool.release_unused()  # the parser's block buffers, kept by the allocator until asked
    if bad or failures or len(irregular) > 100_000:
        return None
    parsed = [table]  # handed over, not shared: _run_parts drops the parse buffers before it allocates more
    del table
    return _run_parts(source, parsed, irregular, first_line, pool)


def _read_run_csv(data, pool, handle) -> pa.Table:
    """pyarrow's CSV reader on a TREC run (space-separated, six columns, three kept)."""
    query_type = pa.dictionary(pa.int32(), pa.string())
    return pacsv.read_csv(
        data, memory_pool=pool,
        # 4 MiB blocks: as fast as larger ones, and fewer bytes in flight across the parser threads.
        read_options=pacsv.ReadOptions(column_names=_RUN_COLUMNS, block_size=1 << 22),
        parse_options=pacsv.ParseOptions(delimiter=" ", quote_char=False, escape_char=False,
                                          ignore_empty_lines=True, invalid_row_handler=handle),
        # Query ids are few and repeat on every line: read straight to dictionary codes.
        convert_options=pacsv.ConvertOptions(
            column_types={"query": query_type, "doc_id": pa.string(), "score": pa.float64()},
            include_columns=["query", "doc_id", "score"], strings_can_be_null=False,
        ),
    )


def _run_parts(source: Source, parsed: list[pa.Table], irregular: list[list[str]], first_line: list[str],
               pool) -> dict | None:
    """The parsed columns of a TREC run as `read_trec_run_arrow` returns them (None: the slow path decides)."""
    table = parsed.pop()
    tag = first_line[5] if len(first_line) >= 6 else None
    if irregular:
        try:
            extra_scores = [float(f[4]) for f in irregular]
        except ValueError:
            return None
        extra = pa.table({"query": pa.array([f[0] for f in irregular], pa.string()).dictionary_encode(),
                          "doc_id": pa.array([f[2] for f in irregular], pa.string()),
                          "score": pa.array(extra_scores, pa.float64())})
        table = pa.concat_tables([table, extra.cast(table.schema)])
        tag = tag or irregular[0][5]
    table = table.unify_dictionaries(memory_pool=pool)
    query_ids = _chunk_dictionary(table["query"])
    comments = pc.starts_with(query_ids, "#")
    if pc.any(comments).as_py():
        # A "# ..." line that happens to split into six fields: drop its rows.
        comment_codes = pa.array(np.flatnonzero(comments.to_numpy(zero_copy_only=False)), pa.int32())
        keep = pc.invert(pc.is_in(_indices(table["query"]), value_set=comment_codes))
        table = table.filter(keep)
    # An empty field means doubled or stray whitespace hid a missing field: the slow path names it.
    if len(table) and (pc.min(pc.binary_length(query_ids)).as_py() == 0
                       or pc.min(pc.binary_length(table["doc_id"])).as_py() == 0):
        return None
    scores = np.concatenate([chunk.to_numpy(zero_copy_only=False) for chunk in table["score"].chunks]
                            or [np.zeros(0)])
    if not np.isfinite(scores).all():
        return None  # NaN or inf: the slow path names the line
    query_codes = np.concatenate([np.asarray(chunk.indices.to_numpy(zero_copy_only=False), dtype=np.int32)
                                  for chunk in table["query"].chunks] or [np.zeros(0, np.int32)])
    docs = table["doc_id"]
    del table
    pool.release_unused()  # the query strings, score and parse buffers: give the memory back now
    query_ids, query_codes = used_ids(query_ids, query_codes)
    for values, role in ((pa.array(query_ids, pa.string()), "a query id"), (docs, "a doc id")):
        row = first_long_id(values)
        if row is not None:
            value = values[row].as_py()
            raise long_id_error(value, role, source.name, _line_holding(source, value))
    return {"query_codes": query_codes, "query_ids": query_ids, "docs": docs, "scores": scores, "ranks": None,
            "tag": tag}


def _refuse_long_line(source: Source) -> None:
    """An InputError for the first line longer than a run line can be (ids within `max_id_chars`), if any.

    Only called when a line did not fit one 4 MiB parser block: the gaps between newlines, 64 MiB at a time.
    """
    cap = 8 * max_id_chars() + 4096  # two ids of up to 4 UTF-8 bytes a character, and the short fields
    data = source.data
    everything = np.frombuffer(data, dtype=np.uint8)
    last, lines = -1, 0  # the last newline seen, and how many
    for lo in range(0, len(everything) + 1, 1 << 26):
        ends = np.flatnonzero(everything[lo:lo + (1 << 26)] == 10) + lo
        if lo + (1 << 26) >= len(everything):
            ends = np.append(ends, len(everything))  # the last line, with or without its newline
        starts = np.concatenate([[last + 1], ends[:-1] + 1])
        long = np.flatnonzero(ends - starts > cap)
        if len(long):
            start, end = int(starts[long[0]]), int(ends[long[0]])
            raise InputError(f"a run line of at most {cap:,} bytes (set {MAX_ID_ENV} to allow longer ids)",
                             source=source.name, line=lines + int(long[0]) + 1,
                             text=data[start:start + 40].decode("utf-8", "replace") + f"... ({end - start:,} bytes)")
        if len(ends):
            last, lines = int(ends[-1]), lines + len(ends)


def _line_holding(source: Source, value: str) -> int | None:
    """The line where ``value`` first appears in the file (the error path only)."""
    data = source.data
    at = data.find(value.encode("utf-8"))
    return None if at < 0 else data.count(b"\n", 0, at) + 1


def check_id_lengths(table: "Table", values: pd.Series, role: str) -> None:
    """An InputError naming the row of the first id in ``values`` (strings) longer than `max_id_chars`."""
    row = first_long_id(pa.array(values.to_numpy(dtype=object), type=pa.string(), from_pandas=True))
    if row is not None:
        raise long_id_error(str(values.iloc[row]), role, table.source.name, table.line_of(row), table.where)


def _chunk_dictionary(column) -> "pa.Array":
    """The dictionary a unified dictionary column shares across its chunks (empty if no chunks)."""

    return column.chunks[0].dictionary if column.num_chunks else pa.array([], pa.string())


def _indices(column) -> "pa.ChunkedArray":
    return pa.chunked_array([chunk.indices for chunk in column.chunks], type=pa.int32())


def _first_short_line(source: Source, fields: int, describe: str) -> InputError:
    """The error for the first line with too few fields (the error path only: a Python scan)."""
    for number, line in enumerate(source.text().split("\n"), start=1):
        stripped = line.strip()
        if stripped and not stripped.startswith("#") and len(stripped.split()) < fields:
            return InputError(describe, source=source.name, line=number, text=line)
    return InputError(describe, source=source.name)


def read_delimited(source: Source, delimiter: str, describe: str, columns: Iterable[str] | None = None) -> Table:
    """Read a CSV or TSV file with a header row; every cell is kept as a string.

    ``columns`` are the names (lower case) a caller may use: only those are read, so a wide
    file's other columns (a text column in a run file, say) cost nothing. The whole header is
    kept for messages that list what the file has.
    """
    wanted = None if columns is None else {c.lower() for c in columns}
    options = dict(sep=delimiter, dtype=str, keep_default_na=False, na_values=[], skip_blank_lines=True,
                   quoting=csv.QUOTE_NONE if delimiter == "\t" else csv.QUOTE_MINIMAL, engine="c")
    try:
        header = None
        if wanted is not None:
            names = pd.read_csv(io.BytesIO(source.data), nrows=0, **options).columns
            header = tuple(str(c).strip() for c in names)
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
    return Table(frame, source, header_lines=1, skip_comments=False,
                 quoted_delimiter=None if delimiter == "\t" else delimiter, header=header)


def read_parquet(source: Source, columns: Iterable[str] | None = None) -> Table:
    """Read a Parquet file; ids become strings exactly as stored (no number conversion).

    ``columns`` are the names (lower case) a caller may use: only those are read and
    decompressed, so a wide file's other columns cost nothing; the whole header is kept for
    messages. The columns read may not take more than `max_file_bytes` in memory. Binary
    columns must hold UTF-8 text.
    """
    wanted = None if columns is None else {c.lower() for c in columns}
    try:
        parquet = pq.ParquetFile(source.binary_path or pa.BufferReader(source.data))
        names = tuple(parquet.schema_arrow.names)
        chosen = [n for n in names if wanted is None or str(n).strip().lower() in wanted]
        table = _read_parquet_columns(parquet, chosen, source.name)
    except InputError:
        raise
    except Exception as exc:  # pyarrow raises many types for a damaged file
        raise InputError(f"a readable Parquet file ({type(exc).__name__}: {exc})", source=source.name) from None
    for i, name in enumerate(table.column_names):
        if pa.types.is_binary(table.schema.field(i).type) or pa.types.is_large_binary(table.schema.field(i).type):
            table = table.set_column(i, name, _utf8_column(table.column(i), name, source.name))
    frame = table.to_pandas()
    frame.columns = [str(c).strip() for c in frame.columns]
    return Table(frame, source, header_lines=0, skip_comments=False, where="row",
                 header=tuple(str(n).strip() for n in names))


def _read_parquet_columns(parquet: pq.ParquetFile, columns: list[str], display: str) -> pa.Table:
    """The chosen columns, batch by batch, stopping as soon as they pass `max_file_bytes`."""
    limit, meta, chosen = max_file_bytes(), parquet.metadata, set(columns)
    groups = (meta.row_group(i) for i in range(meta.num_row_groups))
    if sum(group.column(j).total_uncompressed_size for group in groups for j in range(group.num_columns)
           if group.column(j).path_in_schema in chosen) > limit:
        raise too_large(display, "Parquet columns that decompress to")
    batches, held = [], 0
    for batch in parquet.iter_batches(batch_size=1 << 16, columns=columns, use_pandas_metadata=False):
        held += batch.nbytes
        if held > limit:
            raise too_large(display, "Parquet columns that decompress to")
        batches.append(batch)
    if not batches:
        return parquet.schema_arrow.empty_table().select(columns)
    return pa.Table.from_batches(batches)


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


def read_json_value(source: Source) -> object:
    """Parse a whole JSON document, naming the line and column of a syntax error."""
    try:
        return json.loads(source.text(), parse_constant=_reject_constant, object_pairs_hook=_unique_keys)
    except (RecursionError, ValueError) as exc:
        if not isinstance(exc, json.JSONDecodeError):
            raise InputError(f"valid JSON ({_why(exc)})", source=source.name) from None
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
            value = json.loads(line, parse_constant=_reject_constant)
        except (RecursionError, ValueError) as exc:
            raise InputError(f"one JSON object per line ({_why(exc)})", source=source.name, line=number,
                             text=line) from None
        if not isinstance(value, dict):
            raise InputError("one JSON object per line", source=source.name, line=number, text=line)
        records.append((number, value))
    return records


def _unique_keys(pairs: list[tuple[str, object]]) -> dict:
    """A JSON object whose keys are all distinct (a repeated query would silently replace the first)."""
    out: dict = {}
    for key, value in pairs:
        if key in out:
            raise ValueError(f"the key {key!r} appears twice in one object")
        out[key] = value
    return out


def _reject_constant(name: str) -> float:
    raise ValueError(f"{name} is not a number evalcore accepts")


def _why(exc: Exception) -> str:
    if isinstance(exc, json.JSONDecodeError):
        return exc.msg
    if isinstance(exc, RecursionError):
        return "nested too deeply"
    return str(exc)


def is_json_id(value: object) -> bool:
    """JSON ids are strings or whole numbers (written as their text); nothing else."""
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def json_number(value: object) -> float | None:
    """A finite float from a JSON number (not a bool), else None."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    try:
        number = float(value)
    except OverflowError:
        return None
    return number if math.isfinite(number) else None


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


def id_strings(values: pd.Series, table: Table | None = None) -> pd.Series:
    """Ids as strings, exactly as written: ``007`` stays ``007`` and spaces are kept; Parquet
    integers become their text. Missing cells become "" (callers reject empty ids).

    Ids stored as floats must be whole numbers within 2**53 (beyond, distinct ids would merge):
    anything else is an InputError naming the row of ``table`` (when given).
    """
    missing = values.isna().to_numpy()
    if pd.api.types.is_float_dtype(values.dtype):
        numbers = values.to_numpy(dtype=np.float64, na_value=np.nan)
        bad = ~missing & ((numbers != np.floor(numbers)) | (np.abs(numbers) > _EXACT_FLOAT))
        if bad.any():
            row = int(np.flatnonzero(bad)[0])
            expected = f"an id that is text or a whole number up to 2**53 in column {values.name!r}"
            text = repr(float(numbers[row]))
            if table is not None:
                raise table.error(row, expected, text=text)
            raise InputError(expected, line=row + 1, text=text, where="row")
        values = values.fillna(0).astype(np.int64)
    text = values.astype(str)
    if missing.any():
        text = text.where(~missing, "")
    return text


_EXACT_FLOAT = 2.0 ** 53


def table_ids(table: Table, column: str, role: str) -> pd.Series:
    """The ids of one column as `id_strings`, each within `max_id_chars` (else an error naming the row)."""
    text = id_strings(table.frame[column], table)
    check_id_lengths(table, text, role)
    return text


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
