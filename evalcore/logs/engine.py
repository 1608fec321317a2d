"""DuckDB, embedded, as the one engine that reads a query log: out of core, within a memory budget, its errors in
plain words.

A log can be far larger than memory (10 GB of JSON lines), so nothing here holds it: DuckDB scans the file (JSON
lines, CSV and Parquet, gzip too) and spills what does not fit to a temporary folder that is removed afterwards.
`LogFile` says where the file is and how it is stored; `connect` opens DuckDB within `MEMORY_MB`; `reader_sql` is
the table function that scans a file; `read_error` turns DuckDB's message about a bad line into an `InputError`
naming the file, the line, its text (personal data masked) and what was expected. Line numbers are worked out only
on that error path, by reading the file again up to the line.
"""

from __future__ import annotations

import gzip
import re
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import duckdb

from ..errors import InputError
from ..readers.nesting import deepest_line
from ..readers.sources import text_line_limit
from .personal_data import mask_text

MEMORY_MB = 256
"""DuckDB's memory limit: what it needs beyond this it spills to disk. With the Python side (the distinct queries,
a few hundred MB for a log of millions of them), a 10 GB log is sampled within 1 GB."""
MAX_JSON_DEPTH = 128
"""How deep a JSON line may nest: DuckDB's parser stops there (a log line has 5 levels or so)."""
SHOWN = 80
"""Characters of an offending line a message shows."""
RELATION_COLUMNS = ("ord", "kind", "q", "bad", "results", "session", "ts", "ids", "clicks", "qid")
"""What every log format becomes: the record's place (``ord``, 1-based among non-blank lines or rows), its kind
(``query``, ``event``, ``action``, ``span``, ``other``), the query text, why the row cannot be read (``bad``), how
many results it returned (NULL: not known), its session and its timestamp as written; the doc ids it returned and
the doc ids clicked, as the text the log lists them in (`evalcore.logs.id_lists.text_ids` reads it; NULL: not
known) and the search's id (``qid``, which UBI's click events name). Only the last pass
(`evalcore.logs.logged_docs`) reads these three."""


@dataclass(frozen=True)
class LogFile:
    """A log file on disk: its path, the name messages give it, and whether it is gzip-compressed."""

    path: Path
    name: str
    gzip: bool = False

    @property
    def compression(self) -> str:
        return "gzip" if self.gzip else "none"


def literal(text: str) -> str:
    """``text`` as a SQL string literal."""
    return "'" + text.replace("'", "''") + "'"


def ident(name: str) -> str:
    """``name`` as a quoted SQL identifier (a column named ``create`` or ``input.value``)."""
    return '"' + name.replace('"', '""') + '"'


@contextmanager
def connect() -> Iterator[duckdb.DuckDBPyConnection]:
    """A DuckDB connection within `MEMORY_MB`, spilling to a temporary folder removed on exit; times in UTC, no
    extension downloaded (JSON and Parquet are built in)."""
    spill = tempfile.mkdtemp(prefix="evalcore-log-")
    con = duckdb.connect(config={"memory_limit": f"{MEMORY_MB}MB", "temp_directory": spill,
                                 "preserve_insertion_order": False, "autoinstall_known_extensions": False,
                                 "autoload_known_extensions": False})
    try:
        con.execute("SET TimeZone = 'UTC'")
        yield con
    finally:
        con.close()
        shutil.rmtree(spill, ignore_errors=True)


def json_lines_sql(log: LogFile, columns: dict[str, str]) -> str:
    """The table function reading ``log`` as JSON lines: only ``columns`` (name -> DuckDB type; ``JSON`` keeps any
    value as JSON text), with ``ordinality`` (the record's place among the non-blank lines)."""
    spec = ", ".join(f"{literal(name)}: {literal(kind)}" for name, kind in columns.items())
    return (f"read_json({literal(str(log.path))}, format='newline_delimited', records=true, "
            f"compression={literal(log.compression)}, columns={{{spec}}}) WITH ORDINALITY")


def delimited_sql(log: LogFile, names: list[str], delimiter: str) -> str:
    """The table function reading ``log`` as CSV (standard quoting) or TSV (no quoting: a cell is read as written),
    every column as text, a row with more or fewer fields than the header an error naming its line."""
    spec = ", ".join(f"{literal(name)}: 'VARCHAR'" for name in names)
    quote = "quote='\"', escape='\"'" if delimiter == "," else "quote='', escape=''"
    return (f"read_csv({literal(str(log.path))}, delim={literal(delimiter)}, {quote}, header=true, "
            f"auto_detect=false, columns={{{spec}}}, compression={literal(log.compression)}, "
            f"max_line_size={text_line_limit().most}) WITH ORDINALITY")


def lines_sql(log: LogFile) -> str:
    """The table function reading every line of ``log`` as one text column ``line`` (a byte JSON text never holds
    as the delimiter), for index dumps: ``<index name><TAB><json>``."""
    return (f"read_csv({literal(str(log.path))}, delim='\\x01', quote='', escape='', header=false, "
            f"auto_detect=false, columns={{'line': 'VARCHAR'}}, compression={literal(log.compression)}, "
            f"max_line_size={text_line_limit().most}) WITH ORDINALITY")


def parquet_sql(log: LogFile) -> str:
    return f"read_parquet({literal(str(log.path))}) WITH ORDINALITY"


def epoch_sql(text: str) -> str:
    """SQL turning a timestamp given as text (ISO 8601, or seconds, milliseconds, microseconds or nanoseconds since
    1970, told apart by their digits) into seconds since 1970; NULL when it is none of these."""
    t = f"trim({text})"
    whole = f"length(split_part({t}, '.', 1))"
    number = f"try_cast({t} AS DOUBLE)"
    return (f"(CASE WHEN regexp_full_match({t}, '[0-9]+(\\.[0-9]*)?') THEN "
            f"CASE WHEN {whole} >= 17 THEN {number} / 1e9 WHEN {whole} >= 14 THEN {number} / 1e6 "
            f"WHEN {whole} >= 12 THEN {number} / 1e3 ELSE {number} END "
            f"ELSE epoch(try_cast({t} AS TIMESTAMPTZ)) END)")


def json_text(value: str) -> str:
    """SQL: a JSON value as the text it holds (a string's characters, a number's digits); NULL otherwise."""
    return (f"(CASE WHEN json_type({value}) = 'VARCHAR' THEN json_extract_string({value}, '$') "
            f"WHEN json_type({value}) IN ('BIGINT', 'UBIGINT', 'DOUBLE') THEN CAST({value} AS VARCHAR) END)")


_WHOLE = "'$'"
"""The JSON path of a whole value."""


def json_count(value: str) -> str:
    """SQL: how many ids a JSON value lists (an array's length, or the ids of a string separated by commas,
    semicolons, bars or spaces; a number as it is); NULL when it says nothing."""
    return (f"(CASE WHEN json_type({value}) = 'ARRAY' THEN json_array_length({value}) "
            f"WHEN json_type({value}) = 'VARCHAR' THEN {text_count(f'json_extract_string({value}, {_WHOLE})')} "
            f"WHEN json_type({value}) IN ('BIGINT', 'UBIGINT', 'DOUBLE') THEN CAST(CAST({value} AS DOUBLE) AS BIGINT) "
            f"END)")


def text_count(text: str) -> str:
    """SQL: how many ids a text lists: ``[]`` or nothing is none; a JSON array its length; Python's repr of a list of
    span documents, its ``document.id`` keys; otherwise ids separated by commas, semicolons, bars or spaces."""
    t = f"trim(coalesce({text}, ''))"
    return (f"(CASE WHEN {t} IN ('', '[]') THEN 0 "
            f"WHEN contains({t}, 'document.id') THEN (length({t}) - length(replace({t}, 'document.id', ''))) // 11 "
            f"WHEN left({t}, 1) = '[' AND json_valid({t}) THEN json_array_length({t}) "
            f"ELSE len(list_filter(regexp_split_to_array(regexp_replace({t}, '^\\[|\\]$|\"', '', 'g'), "
            f"'[,;|\\s]+'), lambda x: x <> '')) END)")


# ----------------------------------------------------------------------------- errors, on the error path only

_JSON_LINE = re.compile(r"(?:Malformed JSON|JSON transform error) in file .*?,(?: at byte \d+)? in line (\d+): (.*)",
                        re.S)
_CSV_LINE = re.compile(r"CSV Error on Line: (\d+)\s*\nOriginal Line: ?(.*?)\n(.*?)(?:\n|$)", re.S)
_DEPTH = re.compile(r"maximum recursion depth", re.I)


def read_error(exc: duckdb.Error, log: LogFile, expected: str) -> InputError:
    """DuckDB's error about reading ``log`` as a plain InputError: ``expected`` says what the file should hold; the
    line is the one DuckDB names (found again when it miscounts), its text masked."""
    message = str(exc)
    if isinstance(exc, duckdb.OutOfMemoryException):
        return InputError(f"a log that can be read within {MEMORY_MB} MB of memory and the free disk space of the "
                          "temporary folder ($TMPDIR)", source=log.name, text=_masked(message.splitlines()[0]))
    if _DEPTH.search(message):
        found = _deep_line(log)
        return InputError(f"JSON lines nested at most {MAX_JSON_DEPTH} levels deep ({expected})", source=log.name,
                          line=found[0] if found else None, text=found[1] if found else None)
    csv_match = _CSV_LINE.search(message)
    if csv_match:
        line, shown, why = int(csv_match.group(1)), csv_match.group(2), csv_match.group(3).strip()
        return InputError(f"{expected} ({_plain_csv_reason(why)})", source=log.name, line=line,
                          text=_masked(shown[:SHOWN]))
    json_match = _JSON_LINE.search(message)
    if json_match:
        reason = json_match.group(2).split("\n", 1)[0].strip().rstrip(".")
        line, text = _bad_json_line(log, int(json_match.group(1)))
        return InputError(f"{expected}, one JSON object per line ({reason})", source=log.name, line=line,
                          text=text)
    return InputError(expected, source=log.name, text=_masked(message.splitlines()[0][:200]))


def _plain_csv_reason(why: str) -> str:
    found = re.search(r"Expected Number of Columns: (\d+) Found: (\d+)", why)
    if found:
        return f"{found.group(1)} fields on every line, as the header has; this line has {found.group(2)}"
    if "unterminated quote" in why:
        return "a quoted cell closed by a quote; this one runs on"
    if "unicode" in why.lower():
        return "UTF-8 text"
    if "maximum line size" in why.lower():
        return f"lines of at most {text_line_limit().most:,} bytes ({text_line_limit().setting})"
    return why.rstrip(".")


def _masked(text: str) -> str:
    return mask_text(text)[0]


def open_lines(log: LogFile):
    """``log`` opened for reading bytes, inflated when it is gzip (the error path reads it again)."""
    return gzip.open(log.path, "rb") if log.gzip else open(log.path, "rb")


def _lines(log: LogFile) -> Iterator[tuple[int, bytes]]:
    """(line number, its first bytes) for every line; a line is read a megabyte at a time, so a line of gigabytes
    costs a megabyte."""
    with open_lines(log) as handle:
        number, start, fresh = 0, b"", True
        while piece := handle.readline(1 << 20):
            if fresh:
                number, start = number + 1, piece[:4096]
            fresh = piece.endswith(b"\n")
            if fresh:
                yield number, start
        if not fresh:
            yield number, start


def _bad_json_line(log: LogFile, hint: int) -> tuple[int, str]:
    """The line DuckDB names (it counts from 1, and may be a line late on an encoding error or at the end of the
    file): the first line from just before it that is not a JSON object, with its text."""
    last = (hint, "")
    for number, start in _lines(log):
        if number < hint - 2 or not start.strip():
            continue
        text = start.decode("utf-8", "replace").strip()
        last = (number, _masked(text[:SHOWN]))
        try:
            start.decode("utf-8")
        except UnicodeDecodeError:
            return last
        if not text.startswith("{") or number >= hint:
            return last
    return last


def _deep_line(log: LogFile) -> tuple[int, str] | None:
    """The first line nested deeper than `MAX_JSON_DEPTH` (measured a block of lines at a time, never parsed)."""
    with open_lines(log) as handle:
        before = 0
        while block := handle.read(1 << 24):
            block += handle.readline(1 << 26)
            found = deepest_line(block, MAX_JSON_DEPTH)
            if found:
                line, _, offset = found
                start = block.rfind(b"\n", 0, offset) + 1
                return before + line, _masked(block[start:start + SHOWN].decode("utf-8", "replace"))
            before += block.count(b"\n")
    return None


def line_of_record(log: LogFile, ordinal: int) -> tuple[int, str]:
    """The line number and text of the ``ordinal``-th record (1-based) of a file of JSON lines, whose blank lines
    hold no record."""
    seen = 0
    for number, start in _lines(log):
        if start.strip():
            seen += 1
            if seen == ordinal:
                return number, _masked(start.decode("utf-8", "replace").strip()[:SHOWN])
    return ordinal, ""


def line_text(log: LogFile, number: int) -> str:
    """The text of line ``number`` (1-based), masked."""
    for at, start in _lines(log):
        if at == number:
            return _masked(start.decode("utf-8", "replace").strip()[:SHOWN])
    return ""
