"""Chunk maps: which document each chunk a retriever returns belongs to, and where in that document's text it lies.

A RAG pipeline retrieves chunks (``"4983#2"``, ``"c-4983-002"``) while people label documents. A chunk map lines the
two up: one row per chunk with its ``chunk_id`` and ``doc_id``, and optionally ``start`` and ``end`` (character
offsets in the document's text, 0-based, end exclusive) and the chunk's ``text``. With a map, a run's ranking stays a
list of chunks (k counts chunks: k chunks go into the prompt) and relevance is the document's (`evalcore.metrics`).

Kept as Arrow arrays with integer codes, never as millions of Python strings: a map of 5 million chunks is a few
hundred MB of Arrow buffers, and a run's chunk ids are looked up in it by hash (`rows_of`), with exact string
equality deciding every match.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field, replace
from functools import cached_property

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from ..errors import InputError
from ..warning_log import EvalWarning, plural
from .arrow_tables import ArrowTable, id_column, text_column
from .chunk_parsers import CHUNK_ALIASES, CHUNK_DOC_ALIASES, CHUNK_TEXT_ALIASES, END_ALIASES, START_ALIASES
from .documents import Documents, DocumentsLike, read_documents
from .formats import file_stem, parse_file
from .ids import IdArray, first_repeat, to_arrow_strings
from .offsets import NO_OFFSET, offset_pairs
from .sources import Source, SourceLike, repair_warnings


@dataclass(eq=False)
class ChunkMap:
    """Chunk id -> document (and where in its text), one row per chunk, ids distinct.

    ``doc_of_chunk[i]`` is the position in ``doc_ids`` of chunk ``i``'s document; ``start``/``end`` are
    `NO_OFFSET` where a row gives none (None when the file has no such columns); ``text`` is the chunk's own text
    (None when the file has none).
    """

    name: str
    chunk_ids: IdArray
    doc_ids: IdArray
    doc_of_chunk: np.ndarray
    start: np.ndarray | None = None
    end: np.ndarray | None = None
    text: pa.Array | pa.ChunkedArray | None = None
    source: str | None = None
    warnings: tuple[EvalWarning, ...] = field(default=())

    def __len__(self) -> int:
        return len(self.chunk_ids)

    @property
    def n_chunks(self) -> int:
        return len(self.chunk_ids)

    @property
    def n_docs(self) -> int:
        return len(self.doc_ids)

    @property
    def has_offsets(self) -> bool:
        return self.start is not None and bool((self.start >= 0).any())

    @property
    def has_text(self) -> bool:
        return self.text is not None

    @cached_property
    def fingerprint(self) -> str:
        """A short content hash of the map (chunk, doc, offsets; text by its own hash): the same chunking gives the
        same fingerprint whatever the file's format or row order. Saved evaluations carry it beside the run's."""
        order = np.argsort(self.chunk_ids.hashes(), kind="stable")
        digest = hashlib.sha256()
        digest.update(np.ascontiguousarray(self.chunk_ids.hashes()[order]).tobytes())
        digest.update(np.ascontiguousarray(self.doc_ids.hashes()[self.doc_of_chunk[order]]).tobytes())
        for column in (self.start, self.end):
            digest.update(b"-" if column is None else np.ascontiguousarray(column[order]).tobytes())
        if self.text is not None:
            digest.update(np.ascontiguousarray(IdArray(self.text.fill_null("")).hashes()[order]).tobytes())
        return digest.hexdigest()[:12]

    @property
    def ref(self) -> str:
        """``name#fingerprint``: how every number computed with this map names it."""
        return f"{self.name}#{self.fingerprint}"

    @cached_property
    def _by_hash(self) -> pd.Index | None:
        """The map's id hashes as a hash table (row = position), built once per map; None when two ids share a hash
        (then lookups go by the strings themselves)."""
        table = pd.Index(self.chunk_ids.hashes())
        return table if table.is_unique else None

    def rows_of(self, ids: IdArray, confirm: np.ndarray | None = None,
                candidate: np.ndarray | None = None) -> np.ndarray:
        """The map row of each of ``ids`` (int64), -1 where the map has no such chunk.

        Each id's hash (kept with the ids) is looked up in the map's hash table, and a match is confirmed on the exact
        strings: a run of a million rows against a map of millions of chunks is one pass over the run. ``confirm``
        (a mask over ``ids``) limits the string check to the ids whose row can change a number (the caller knows
        which); the others are taken on their 64-bit hash alone. ``candidate``: `candidate_rows` of ``ids``, when the
        caller has it already."""
        out = np.full(len(ids), -1, dtype=np.int64)
        if not len(ids) or not self.n_chunks:
            return out
        table = self._by_hash
        if table is None:
            values = ids.arrow.combine_chunks() if isinstance(ids.arrow, pa.ChunkedArray) else ids.arrow
            found = pc.fill_null(pc.index_in(values, value_set=self.chunk_ids.arrow.combine_chunks()), -1)
            return found.to_numpy(zero_copy_only=False).astype(np.int64)
        if candidate is None:
            candidate = table.get_indexer(ids.hashes())
        rows = np.flatnonzero((candidate >= 0) & (True if confirm is None else confirm))
        same = pc.equal(ids.take_arrow(rows), self.chunk_ids.take_arrow(candidate[rows])).to_numpy(
            zero_copy_only=False)
        out[rows[same]] = candidate[rows[same]]
        if confirm is not None:
            trusted = (candidate >= 0) & ~confirm
            out[trusted] = candidate[trusted]
        return out

    def candidate_rows(self, ids: IdArray) -> np.ndarray:
        """The map row each of ``ids`` hashes to (-1: none), before any string check (see `rows_of`)."""
        table = self._by_hash
        if table is None:
            return self.rows_of(ids)
        return table.get_indexer(ids.hashes()).astype(np.int64)


def chunk_map(chunk_ids, doc_ids, *, start=None, end=None, text=None, name: str = "chunks",
              source: str | None = None) -> ChunkMap:
    """A `ChunkMap` from columns (lists, arrays or Arrow arrays of equal length); a chunk listed twice, a missing
    id, or offsets that are not whole numbers with ``start <= end`` are a clear error naming the row."""
    chunks = to_arrow_strings(chunk_ids)
    docs = to_arrow_strings(doc_ids)
    if len(chunks) != len(docs):
        raise InputError("chunk_id and doc_id columns of the same length", source=source or name)
    rows = _Rows(source or name, {"chunk_id": chunks, "doc_id": docs, "start": start, "end": end})
    for column, values in (("chunk_id", chunks), ("doc_id", docs)):
        if values.null_count:
            row = int(np.flatnonzero(values.is_null().to_numpy(zero_copy_only=False))[0])
            raise rows.error(row, f"a {column} on every row")
    starts = ends = None
    if start is not None or end is not None:
        starts, ends = offset_pairs(_or_blank(start, len(chunks)), _or_blank(end, len(chunks)), rows.error)
    chunk_text = None if text is None else to_arrow_strings(text)
    return _assemble(chunks, docs, starts, ends, chunk_text, name, source, rows)


def read_chunks(source: ChunkMap | SourceLike | pd.DataFrame, *, format: str | None = None, name: str | None = None,
                documents: DocumentsLike | None = None) -> ChunkMap:
    """Read a chunk map: a CSV / TSV / JSONL / Parquet file (gzip too) with a ``chunk_id`` and a ``doc_id`` column
    (or their aliases, `evalcore.readers.chunk_parsers`) and optionally ``start``, ``end`` and ``text``.

    Every mistake is an InputError naming the file, the line (the row, for Parquet) and the text there: a missing
    column, a missing or too long id, a chunk listed twice, an offset that is not a whole number of 0 or more, a
    start without an end, a start past its end. With ``documents`` (a `Documents` or anything `read_documents`
    takes) the map is also checked against them (`placed_in`): a chunk of a document they lack, an end past its
    document's text. The columns stay Arrow arrays: no Python object per chunk is made.
    """
    if isinstance(source, ChunkMap):
        return source if documents is None else placed_in(source, read_documents(documents))
    if isinstance(source, pd.DataFrame):
        src = Source(name or "<DataFrame>", b"")
        found = ArrowTable(pa.Table.from_pandas(source.reset_index(drop=True), preserve_index=False), src,
                           where="row", header_lines=0)
    else:
        src, found = parse_file(source, "chunks", format,
                                "a chunk map in CSV, TSV, JSONL or Parquet with chunk_id and doc_id columns")
    chunks = _from_table(found, name or (file_stem(src.name) if src.name != "<DataFrame>" else "chunks"))
    if src.repairs:
        chunks = replace(chunks, warnings=repair_warnings(src) + chunks.warnings)
    return chunks if documents is None else placed_in(chunks, read_documents(documents), rows=found)


def _from_table(found: ArrowTable, name: str) -> ChunkMap:
    """The map from a parsed file: the columns found, ids and offsets checked, every error naming the line."""
    chunk_col = found.column(CHUNK_ALIASES, "chunk id")
    doc_col = found.column(CHUNK_DOC_ALIASES, "doc id")
    start_col = found.column(START_ALIASES, "start", required=False)
    end_col = found.column(END_ALIASES, "end", required=False)
    text_col = found.column(CHUNK_TEXT_ALIASES, "text", required=False)
    if chunk_col == doc_col:
        raise InputError("a chunk id column and a doc id column (one column cannot be both)", source=found.source.name,
                         text=chunk_col)
    if (start_col is None) != (end_col is None):
        shown = start_col or end_col
        raise InputError(f"both a start and an end column, or neither (the file has {shown!r} alone)",
                         source=found.source.name, line=1 if found.where == "line" else None,
                         text=",".join(found.header or found.table.column_names))
    chunks = id_column(found, chunk_col, "a chunk id")
    docs = id_column(found, doc_col, "a doc id")
    starts = ends = None
    if start_col is not None:
        starts, ends = offset_pairs(found.table.column(start_col), found.table.column(end_col), found.error)
    text = text_column(found, text_col) if text_col is not None else None
    return _assemble(chunks, docs, starts, ends, text, name, found.source.name, found)


def _assemble(chunks: pa.Array | pa.ChunkedArray, docs: pa.Array | pa.ChunkedArray, starts: np.ndarray | None, ends: np.ndarray | None,
              text: pa.Array | None, name: str, source: str | None, rows) -> ChunkMap:
    """The map from checked columns; a chunk listed twice is an error naming both places (``rows``: how a row is
    named, `_Rows` or an `ArrowTable`)."""
    ids = IdArray(chunks)
    table = pd.Index(ids.hashes())  # the lookup table every run's chunks go through, built once with the check
    repeated = None if table.is_unique else first_repeat(ids)
    if repeated is not None:
        first, again = repeated
        raise rows.error(again, "each chunk listed once (a chunk belongs to one document at one place)",
                         f"{ids[again]} (listed first at {rows.where} {rows.line_of(first)})")
    encoded = pc.dictionary_encode(docs.combine_chunks() if isinstance(docs, pa.ChunkedArray) else docs)
    doc_of_chunk = encoded.indices.to_numpy(zero_copy_only=False).astype(np.int64)
    made = ChunkMap(name, ids, IdArray(encoded.dictionary), doc_of_chunk, starts, ends, text, source)
    made.__dict__["_by_hash"] = table if table.is_unique else None
    return made


class _Rows:
    """How `chunk_map` names a row of columns given in Python: ``row N``, with the row's values."""

    where = "row"

    def __init__(self, source: str, columns: dict) -> None:
        self.source, self.columns = source, columns

    def line_of(self, row: int) -> int:
        return row + 1

    def error(self, row: int, expected: str, text: str | None = None) -> InputError:
        if text is None:
            text = ", ".join(f"{name} {_value(values, row)}" for name, values in self.columns.items()
                             if values is not None)
        return InputError(expected, source=self.source, line=row + 1, where="row", text=text)


def _value(values, row: int) -> str:
    value = values[row]
    value = value.as_py() if isinstance(value, pa.Scalar) else value
    return "(none)" if value is None or (isinstance(value, float) and np.isnan(value)) else str(value)


def _or_blank(values, n: int):
    """An offsets column, or one of nothing but blanks when only the other one is given."""
    return pa.nulls(n) if values is None else values


def placed_in(chunks: ChunkMap, documents: Documents, *, rows: ArrowTable | None = None) -> ChunkMap:
    """``chunks`` checked against the documents file, with each chunk's place found where the map gives text but no
    offsets. A chunk of a document the file lacks, or an end past its document's text, is an error naming the row
    (the line of the file, with ``rows``: the table the map was read from); a chunk whose text is not found in its
    document keeps no place (counted in a warning)."""
    doc_ids = np.asarray(chunks.doc_ids, dtype=object)
    known = documents.frame.index
    absent = ~pd.Index(doc_ids).isin(known)
    if absent.any():
        first = int(np.flatnonzero(absent[chunks.doc_of_chunk])[0])
        expected = f"a doc_id the documents file {documents.source or documents.name} has"
        if rows is not None:
            raise rows.error(first, expected)
        raise InputError(expected, source=chunks.source or chunks.name, line=first + 1, where="row",
                         text=str(doc_ids[chunks.doc_of_chunk[first]]))
    if not documents.has_text:
        return chunks
    texts = (documents.frame["text"].reindex(pd.Index(doc_ids, dtype=object)).fillna("").astype(str)
             .to_numpy(dtype=object))
    lengths = np.fromiter((len(t) for t in texts), dtype=np.int64, count=len(texts))
    start = chunks.start if chunks.start is not None else np.full(chunks.n_chunks, NO_OFFSET, dtype=np.int64)
    end = chunks.end if chunks.end is not None else np.full(chunks.n_chunks, NO_OFFSET, dtype=np.int64)
    past = end > lengths[chunks.doc_of_chunk]
    if past.any():
        row = int(np.flatnonzero(past)[0])
        expected = f"an end within its document's text ({lengths[chunks.doc_of_chunk[row]]:,} characters)"
        if rows is not None:
            raise rows.error(row, expected)
        raise InputError(expected, source=chunks.source or chunks.name, line=row + 1, where="row",
                         text=f"end {end[row]} of {chunks.chunk_ids[row]}")
    unplaced = np.flatnonzero(start < 0)
    if chunks.text is None or not len(unplaced):
        return replace(chunks, start=start, end=end) if chunks.start is None else chunks
    start, end = start.copy(), end.copy()
    own = chunks.text.take(pa.array(unplaced)).to_pylist()
    lost = 0
    for row, text in zip(unplaced, own):  # only chunks given as text alone: their place is found once, here
        where = texts[chunks.doc_of_chunk[row]].find(text) if text else -1
        if where < 0:
            lost += 1
            continue
        start[row], end[row] = where, where + len(text)
    warnings = chunks.warnings
    if lost:
        warnings = warnings + (EvalWarning("chunk_text_not_found", f"{chunks.name}: the text of "
                                           f"{plural(lost, 'chunk')} is not found in its document's text: no place, "
                                           "so no evidence is counted in it", lost),)
    return replace(chunks, start=start, end=end, warnings=warnings)


def chunk_texts(chunks: ChunkMap, ids: np.ndarray, documents: Documents | None = None) -> Documents:
    """The text of the chunks ``ids`` (ids the map holds) as a documents table: each chunk's own ``text``, else its
    document's text between ``start`` and ``end``; a chunk with neither has no text (its tokens are then counted as
    a document without text is). What the k budget counts the prompt tokens of a chunk run from."""
    ids = np.asarray(ids, dtype=object)
    rows = chunks.rows_of(IdArray(to_arrow_strings(list(ids)))) if len(ids) else np.zeros(0, dtype=np.int64)
    text = np.full(len(ids), None, dtype=object)
    if chunks.text is not None and len(rows):
        text[:] = chunks.text.take(pa.array(rows)).to_pylist()
    if documents is not None and documents.has_text and chunks.start is not None:
        todo = np.flatnonzero(np.array([t is None for t in text], dtype=bool) & (chunks.start[rows] >= 0))
        docs = np.asarray(chunks.doc_ids[chunks.doc_of_chunk[rows[todo]]], dtype=object)
        whole = documents.frame["text"].reindex(pd.Index(docs, dtype=object)).to_numpy(dtype=object)
        for i, doc_text, s, e in zip(todo, whole, chunks.start[rows[todo]], chunks.end[rows[todo]]):
            if isinstance(doc_text, str):
                text[i] = doc_text[s:e]
    known = np.array([t is not None for t in text], dtype=bool)
    frame = pd.DataFrame({"text": text[known]}, index=pd.Index(ids[known], dtype=object, name="doc_id"))
    return Documents(chunks.name, frame, source=chunks.source)
