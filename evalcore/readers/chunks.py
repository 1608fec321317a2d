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

from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import TYPE_CHECKING, Iterable

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from ..errors import InputError
from ..warning_log import EvalWarning, plural
from .arrow_tables import ArrowTable, id_column, text_column
from .chunk_parsers import map_columns
from .chunk_rows import KeptRows, MapFingerprint, RowLookup, read_kept, text_hashes
from .documents import Documents, DocumentsLike, read_documents
from .formats import file_stem, open_as, parse_file
from .ids import IdArray, first_repeat, to_arrow_strings
from .offsets import NO_OFFSET, offset_pairs
from .sources import Source, SourceLike, repair_warnings

if TYPE_CHECKING:
    from .labels import LabelSet


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
    fingerprint: str = ""
    """A short content hash of the map as its file gives it (chunk, doc, offsets; text by its own hash): the same
    chunking gives the same fingerprint whatever the file's format or row order (`MapFingerprint`). Saved
    evaluations carry it beside the run's."""
    file_chunks: int | None = None
    """The file's number of chunks when only some were kept (`read_chunks` with ``keep``); None: every one was."""
    file_docs: int | None = None
    lookup: RowLookup | None = field(default=None, repr=False)
    """How rows are found by id hash when the reader built it already (`read_chunks` with ``keep``); None: built
    from the ids when first needed."""

    def __post_init__(self) -> None:
        if not self.fingerprint:
            counted = MapFingerprint()
            counted.add(self.chunk_ids.hashes(), self.doc_ids.hashes()[self.doc_of_chunk], self.start, self.end,
                        text_hashes(self.text))
            self.fingerprint = counted.hexdigest()

    def __len__(self) -> int:
        return len(self.chunk_ids)

    @property
    def n_chunks(self) -> int:
        """The chunks held (all of the file's, or those kept)."""
        return len(self.chunk_ids)

    @property
    def n_docs(self) -> int:
        """The documents of the chunks held (codes in ``doc_of_chunk`` run below it)."""
        return len(self.doc_ids)

    @property
    def chunks_in_file(self) -> int:
        """How many chunks the map's file lists (what a person is told the map holds)."""
        return self.n_chunks if self.file_chunks is None else self.file_chunks

    @property
    def docs_in_file(self) -> int:
        """How many documents the map's file names."""
        return self.n_docs if self.file_docs is None else self.file_docs

    @property
    def has_offsets(self) -> bool:
        return self.start is not None and bool((self.start >= 0).any())

    @property
    def has_text(self) -> bool:
        return self.text is not None

    @property
    def ref(self) -> str:
        """``name#fingerprint``: how every number computed with this map names it."""
        return f"{self.name}#{self.fingerprint}"

    @cached_property
    def _by_hash(self) -> pd.Index | RowLookup | None:
        """The map's id hashes as a hash table (row = position), built once per map (or the reader's `lookup`, built
        as the map was read); None when two ids share a hash (then lookups go by the strings themselves)."""
        if self.lookup is not None:
            return self.lookup
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


def ids_to_keep(ranked: Iterable[IdArray | Iterable[str]], labels: "LabelSet | None" = None
                ) -> list[IdArray | Iterable[str]]:
    """What `read_chunks` keeps of a map (its ``keep``): the ids ranked by the runs that use the map (each run's
    ``doc_ids``) and the ids the ``labels`` judge (labels may name chunks rather than documents). The one rule both
    front ends read a chunk map by."""
    labeled = [] if labels is None else [labels.judgments["doc_id"].astype(str).unique()]
    return [*ranked, *labeled]


def read_chunks(source: ChunkMap | SourceLike | pd.DataFrame, *, format: str | None = None, name: str | None = None,
                documents: DocumentsLike | None = None,
                keep: Iterable[IdArray | Iterable[str]] | None = None) -> ChunkMap:
    """Read a chunk map: a CSV / TSV / JSONL / Parquet file (gzip too) with a ``chunk_id`` and a ``doc_id`` column
    (or their aliases, `evalcore.readers.chunk_parsers`) and optionally ``start``, ``end`` and ``text``.

    Every mistake is an InputError naming the file, the line (the row, for Parquet) and the text there: a missing
    column, a missing or too long id, a chunk listed twice, an offset that is not a whole number of 0 or more, a
    start without an end, a start past its end. With ``documents`` (a `Documents` or anything `read_documents`
    takes) the map is also checked against them (`placed_in`): a chunk of a document they lack, an end past its
    document's text. The columns stay Arrow arrays: no Python object per chunk is made.

    ``keep`` (ids: the runs' ``doc_ids``, the labels' doc ids): only the chunks with one of these ids are held, the
    others checked and counted as they are read (`evalcore.readers.chunk_rows`): a map of millions of chunks then
    costs little more than the runs that use it. The map still reports the file's number of chunks and documents
    (`ChunkMap.chunks_in_file`) and the file's fingerprint.
    """
    if isinstance(source, ChunkMap):
        return source if documents is None else placed_in(source, read_documents(documents))
    docs = read_documents(documents) if documents is not None else None
    if isinstance(source, pd.DataFrame):
        src = Source(name or "<DataFrame>", b"")
        found = ArrowTable(pa.Table.from_pandas(source.reset_index(drop=True), preserve_index=False), src,
                           where="row", header_lines=0)
    else:
        src, fmt = open_as(source, format)
        kept = read_kept(src, fmt, keep, docs) if keep is not None else None
        if kept is not None:
            chunks = _from_kept(kept, name or file_stem(src.name), src)
            try:
                return chunks if docs is None else placed_in(chunks, docs)
            except InputError:
                pass  # the whole read below names the row as the file has it
        src, found = parse_file(src, "chunks", format,
                                "a chunk map in CSV, TSV, JSONL or Parquet with chunk_id and doc_id columns")
    chunks = _from_table(found, name or (file_stem(src.name) if src.name != "<DataFrame>" else "chunks"))
    if src.repairs:
        chunks = replace(chunks, warnings=repair_warnings(src) + chunks.warnings)
    return chunks if docs is None else placed_in(chunks, docs, rows=found)


def _from_kept(kept: KeptRows, name: str, src: Source) -> ChunkMap:
    """The map of the rows `read_kept` kept, carrying the whole file's counts and fingerprint."""
    return ChunkMap(name, IdArray.hashed(kept.chunks, kept.chunk_hashes), IdArray(kept.docs), kept.doc_of_chunk,
                    kept.start, kept.end, kept.text, src.name, repair_warnings(src),
                    fingerprint=kept.fingerprint, file_chunks=kept.file_chunks, file_docs=kept.file_docs,
                    lookup=kept.lookup)


def _from_table(found: ArrowTable, name: str) -> ChunkMap:
    """The map from a parsed file: the columns found, ids and offsets checked, every error naming the line."""
    columns = map_columns(found)
    chunks = id_column(found, columns.chunk, "a chunk id")
    docs = id_column(found, columns.doc, "a doc id")
    starts = ends = None
    if columns.start is not None:
        starts, ends = offset_pairs(found.table.column(columns.start), found.table.column(columns.end), found.error,
                                    names=(columns.start, columns.end))
    text = text_column(found, columns.text) if columns.text is not None else None
    return _assemble(chunks, docs, starts, ends, text, name, found.source.name, found)


def _assemble(chunks: pa.Array | pa.ChunkedArray, docs: pa.Array | pa.ChunkedArray, starts: np.ndarray | None, ends: np.ndarray | None,
              text: pa.Array | None, name: str, source: str | None, rows) -> ChunkMap:
    """The map from checked columns; a chunk listed twice is an error naming both places (``rows``: how a row is
    named, `_Rows` or an `ArrowTable`)."""
    ids = IdArray(chunks)
    repeated = None if pd.Index(ids.hashes()).is_unique else first_repeat(ids)
    if repeated is not None:
        first, again = repeated
        raise rows.error(again, "each chunk listed once (a chunk belongs to one document at one place)",
                         f"{ids[again]} (listed first at {rows.where} {rows.line_of(first)})")
    encoded = pc.dictionary_encode(docs.combine_chunks() if isinstance(docs, pa.ChunkedArray) else docs)
    doc_of_chunk = encoded.indices.to_numpy(zero_copy_only=False).astype(np.int64)
    return ChunkMap(name, ids, IdArray(encoded.dictionary), doc_of_chunk, starts, ends, text, source)


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
        among = "" if chunks.file_chunks is None else " the runs name"
        warnings = warnings + (EvalWarning("chunk_text_not_found", f"{chunks.name}: the text of "
                                           f"{plural(lost, 'chunk')}{among} is not found in its document's text: no "
                                           "place, so no evidence is counted in it", lost),)
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
    return Documents(chunks.name, frame, source=chunks.source, of_chunks=True)
