"""TREC files: whitespace-separated lines, ``#`` comments and blank lines skipped.

`read_whitespace` reads any TREC-style file (qrels, or a run the fast path gave up on) with pandas' C parser and
names the first short line; `read_trec_run_arrow` is the fast path for runs: pyarrow's multi-threaded CSV parser
straight to integer-coded queries and Arrow doc ids, returning None whenever anything is irregular enough to need
the line-naming reader.
"""

from __future__ import annotations

import csv
import io
import os
import re
from typing import Iterable

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
from pyarrow import csv as pacsv

from ..errors import InputError
from .id_columns import check_id_lengths
from .ids import first_long_id, long_id_error, used_ids
from .sources import MAX_ID_ENV, Source, quiet_in_pyarrow, trec_line_limit
from .tables import Table


_COMMENT_LINES = re.compile(rb"(?m)^[ \t]*#[^\n]*$")


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


def _first_short_line(source: Source, fields: int, describe: str) -> InputError:
    """The error for the first line with too few fields (the error path only: a Python scan)."""
    for number, line in enumerate(source.text().split("\n"), start=1):
        stripped = line.strip()
        if stripped and not stripped.startswith("#") and len(stripped.split()) < fields:
            return InputError(describe, source=source.name, line=number, text=line)
    return InputError(describe, source=source.name)


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
    last_tag = _last_tag(path, source)
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
    found = _run_parts(source, parsed, irregular, first_line, pool)
    if found is not None:
        found["last_tag"] = last_tag
    return found


_TAIL_BYTES = 4096


def _last_tag(path, source: Source) -> str | None:
    """The run tag (6th field) of the file's last line, read from its last bytes only (from disk when the parser
    streams the file, else from the bytes already in memory): with the first line's, it tells a file whose tag
    column is not one run's name."""
    if path is not None:
        with open(path, "rb") as handle:
            handle.seek(0, os.SEEK_END)
            handle.seek(max(0, handle.tell() - _TAIL_BYTES))
            tail = handle.read()
    else:
        tail = source.data[-_TAIL_BYTES:]
    lines = [line.split() for line in tail.decode("utf-8", "replace").split("\n")
             if line.strip() and not line.lstrip().startswith("#")]
    return lines[-1][5] if lines and len(lines[-1]) >= 6 else None


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
    query_ids = _shared_dictionary(table["query"])
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
    cap = trec_line_limit().most
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


def _shared_dictionary(column) -> "pa.Array":
    """The dictionary a unified dictionary column shares across its Arrow chunks (empty if it has none)."""

    return column.chunks[0].dictionary if column.num_chunks else pa.array([], pa.string())


def _indices(column) -> "pa.ChunkedArray":
    return pa.chunked_array([chunk.indices for chunk in column.chunks], type=pa.int32())
