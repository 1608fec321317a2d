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
from .documents import Documents
from .ids import IdArray, to_arrow_strings

NO_OFFSET = -1
"""``start`` / ``end`` of a chunk whose place in its document's text is not given."""


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
    text: pa.Array | None = None
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
    for column, values in (("chunk_id", chunks), ("doc_id", docs)):
        nulls = values.null_count
        if nulls:
            row = int(np.flatnonzero(values.is_null().to_numpy(zero_copy_only=False))[0])
            raise InputError(f"a {column} on every row", source=source or name, line=row + 1, where="row")
    ids = IdArray(chunks)
    table = pd.Index(ids.hashes())
    repeated = _first_repeat(ids, table)
    if repeated is not None:
        first, again = repeated
        raise InputError("each chunk listed once (a chunk belongs to one document at one place)",
                         source=source or name, line=again + 1, where="row",
                         text=f"{ids[again]} (listed first at row {first + 1})")
    encoded = pc.dictionary_encode(docs)
    doc_of_chunk = encoded.indices.to_numpy(zero_copy_only=False).astype(np.int64)
    starts = ends = None
    if start is not None or end is not None:
        starts, ends = _offsets(start, len(chunks), "start", source or name), _offsets(end, len(chunks), "end",
                                                                                       source or name)
        given = (starts >= 0) != (ends >= 0)
        if given.any():
            row = int(np.flatnonzero(given)[0])
            raise InputError("both start and end, or neither, on each row", source=source or name, line=row + 1,
                             where="row", text=f"start {starts[row]}, end {ends[row]}".replace("-1", "(none)"))
        backwards = (starts >= 0) & (starts > ends)
        if backwards.any():
            row = int(np.flatnonzero(backwards)[0])
            raise InputError("start at most end (character offsets, end exclusive)", source=source or name,
                             line=row + 1, where="row", text=f"start {starts[row]}, end {ends[row]}")
    chunk_text = None if text is None else to_arrow_strings(text)
    made = ChunkMap(name, ids, IdArray(encoded.dictionary), doc_of_chunk, starts, ends, chunk_text, source)
    made.__dict__["_by_hash"] = table if table.is_unique else None  # the lookup table, built once with the check
    return made


def _offsets(values, n: int, column: str, source: str) -> np.ndarray:
    """A column of character offsets as int64, `NO_OFFSET` where a row gives none; anything but a whole number of
    0 or more is an error naming the row."""
    if values is None:
        return np.full(n, NO_OFFSET, dtype=np.int64)
    if isinstance(values, (pa.Array, pa.ChunkedArray)) and pa.types.is_integer(values.type):  # the columnar path
        nulls = pc.is_null(values).to_numpy(zero_copy_only=False)
        numbers = pc.fill_null(values, 0).to_numpy(zero_copy_only=False).astype(np.int64)
        bad = ~nulls & (numbers < 0)
        if bad.any():
            row = int(np.flatnonzero(bad)[0])
            raise InputError(f"a whole number of characters in {column} (0 or more)", source=source, line=row + 1,
                             where="row", text=str(numbers[row]))
        numbers[nulls] = NO_OFFSET
        return numbers
    if isinstance(values, (pa.Array, pa.ChunkedArray)):
        values = values.to_pandas()
    given = pd.Series(values, dtype=object).reset_index(drop=True)
    numbers = pd.to_numeric(given, errors="coerce").astype(np.float64)
    blank = given.isna().to_numpy() | given.map(lambda v: isinstance(v, str) and not v.strip()).to_numpy()
    bad = ~blank & (np.isnan(numbers.to_numpy()) | (numbers.to_numpy() < 0)
                    | (numbers.to_numpy() != np.floor(numbers.to_numpy())))
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        raise InputError(f"a whole number of characters in {column} (0 or more)", source=source, line=row + 1,
                         where="row", text=str(given.iloc[row]))
    return np.where(blank, NO_OFFSET, np.nan_to_num(numbers.to_numpy(), nan=NO_OFFSET)).astype(np.int64)


def _first_repeat(ids: IdArray, table: pd.Index) -> tuple[int, int] | None:
    """(first row, repeating row) of the first chunk id listed twice, in file order; None when all are distinct.
    ``table`` is the ids' hashes as an index: when they are unique (nearly always) nothing more is done."""
    if table.is_unique:
        return None
    hashes = ids.hashes()
    repeated = np.flatnonzero(table.duplicated(keep=False))
    order = repeated[np.argsort(hashes[repeated], kind="stable")]
    same = np.flatnonzero(hashes[order][1:] == hashes[order][:-1])
    pairs = [(int(order[i]), int(order[i + 1])) for i in same]
    exact = [(a, b) for a, b in pairs if ids[a] == ids[b]]  # a hash only proposes
    return min(exact, key=lambda pair: pair[1]) if exact else None


def placed_in(chunks: ChunkMap, documents: Documents) -> ChunkMap:
    """``chunks`` checked against the documents file, with each chunk's place found where the map gives text but no
    offsets. A chunk of a document the file lacks, or an end past its document's text, is an error naming the row;
    a chunk whose text is not found in its document keeps no place (counted in a warning)."""
    doc_ids = np.asarray(chunks.doc_ids, dtype=object)
    known = documents.frame.index
    absent = ~pd.Index(doc_ids).isin(known)
    if absent.any():
        first = int(np.flatnonzero(absent[chunks.doc_of_chunk])[0])
        raise InputError(f"a doc_id the documents file {documents.source or documents.name} has",
                         source=chunks.source or chunks.name, line=first + 1, where="row",
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
        raise InputError(f"an end within its document's text ({lengths[chunks.doc_of_chunk[row]]:,} characters)",
                         source=chunks.source or chunks.name, line=row + 1, where="row",
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
