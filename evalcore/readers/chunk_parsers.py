"""Chunk-map files of every format that can hold them, read to Arrow columns: one parser per format, for
`evalcore.readers.formats`.

A chunk map is a table (CSV, TSV, Parquet) or JSON lines, one chunk per row: its id, its document's id, and
optionally its place in the document's text (``start``, ``end``) and its own ``text``. Each parser returns an
`evalcore.readers.arrow_tables.ArrowTable` of the columns below (whichever the file has);
`evalcore.readers.chunks.read_chunks` checks them and builds the map.
"""

from __future__ import annotations

from typing import NamedTuple

from ..errors import InputError
from .arrow_tables import ArrowTable, read_arrow_table
from .sources import Source
from .tables import DOC_ALIASES

CHUNK_ALIASES = ("chunk_id", "chunkid", "chunk-id", "chunk", "id", "_id", "passage_id")
"""Names of the chunk id column (case-insensitive; the first the file has wins)."""
CHUNK_DOC_ALIASES = DOC_ALIASES + ("document_id", "parent_id", "ref_doc_id")
"""Names of the column naming the chunk's document."""
START_ALIASES = ("start", "start_char", "char_start", "start_index")
END_ALIASES = ("end", "end_char", "char_end", "end_index")
CHUNK_TEXT_ALIASES = ("text", "chunk_text", "content", "page_content")
COLUMNS = CHUNK_ALIASES + CHUNK_DOC_ALIASES + START_ALIASES + END_ALIASES + CHUNK_TEXT_ALIASES
"""Every column a chunk map may use: the others are not read."""
_DESCRIBE = "chunk_id and doc_id columns, optionally start, end and text"


def from_csv(src: Source) -> ArrowTable:
    return read_arrow_table(src, "csv", COLUMNS, _DESCRIBE)


def from_tsv(src: Source) -> ArrowTable:
    return read_arrow_table(src, "tsv", COLUMNS, _DESCRIBE)


def from_parquet(src: Source) -> ArrowTable:
    return read_arrow_table(src, "parquet", COLUMNS, _DESCRIBE)


def from_jsonl(src: Source) -> ArrowTable:
    return read_arrow_table(src, "jsonl", COLUMNS, _DESCRIBE)


class MapColumns(NamedTuple):
    """The names a chunk map file gives its columns (None: the file has no such column)."""

    chunk: str
    doc: str
    start: str | None
    end: str | None
    text: str | None


def map_columns(found: ArrowTable) -> MapColumns:
    """The chunk map's columns in ``found``, by their aliases: a chunk id and a doc id column (two different ones),
    and a start and an end column together or neither; anything else is an InputError naming the header."""
    chunk = found.column(CHUNK_ALIASES, "chunk id")
    doc = found.column(CHUNK_DOC_ALIASES, "doc id")
    start = found.column(START_ALIASES, "start", required=False)
    end = found.column(END_ALIASES, "end", required=False)
    if chunk == doc:
        raise InputError("a chunk id column and a doc id column (one column cannot be both)", source=found.source.name,
                         text=chunk)
    if (start is None) != (end is None):
        raise InputError(f"both a start and an end column, or neither (the file has {start or end!r} alone)",
                         source=found.source.name, line=1 if found.where == "line" else None,
                         text=",".join(found.header or found.table.column_names))
    return MapColumns(chunk, doc, start, end, found.column(CHUNK_TEXT_ALIASES, "text", required=False))
