"""A chunk map read a batch at a time, keeping only the chunks that runs (or labels) name.

A map of 5 million chunks scored against runs naming a million: holding every row (ids, their hash table, offsets)
cost four times the memory of the run itself, for rows no number reads. Read in batches, every row is still checked
as the whole read checks it (ids, offsets, against the documents), hashed for the duplicate check and the map's
fingerprint, and kept only when its chunk id is one of the ids asked for; what stays is one 8-byte hash per row and
the kept rows.

A bad row is refused by the batch that holds it, in the words of the whole read and naming the line (the row, for
Parquet) the whole read would name: each batch knows how many of the file's rows came before it, and the line is
found a block of the file at a time (`evalcore.readers.tables.row_place`); a chunk listed twice is named by reading
the file once more a batch at a time, holding only the rows whose id hash was seen twice. So a map of millions of
rows with one bad line at the end costs what a good one does. A format without a batch reader, and what batches
cannot tell (text that is not UTF-8, two ids sharing a hash), hand the file back to the whole read
(`evalcore.readers.chunks.read_chunks`), which reads it or names the problem where the file has it.

The batches are read on a second thread (`_Ahead`); on every way out, the thread is joined and the file's reader
closed before the caller goes on, so nothing of the read is left running when the interpreter exits.
"""

from __future__ import annotations

import hashlib
from concurrent.futures import ThreadPoolExecutor
from contextlib import closing
from dataclasses import dataclass, replace
from typing import Callable, Iterable, Iterator, TypeVar

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from ..errors import InputError
from .arrow_tables import ArrowTable, delimited_batches, id_column, text_column
from .chunk_parsers import COLUMNS, MapColumns, map_columns
from .documents import Documents
from .hash_sets import HashSet, distinct_sorted
from .ids import IdArray, hash_strings, mix64, to_arrow_strings
from .offsets import offset_pairs
from .parquet_files import WholeReadNeeded, parquet_batches
from .sources import Source, max_file_bytes

T = TypeVar("T")
U = TypeVar("U")
_ROW_SALT = (np.uint64(0x9E3779B97F4A7C15), np.uint64(0xC2B2AE3D27D4EB4F), np.uint64(0x165667B19E3779F9),
             np.uint64(0xD6E8FEB86659FD93))


class MapFingerprint:
    """A content hash of a chunk map's rows that does not depend on their order or the file's format.

    Each row (chunk id, doc id, start, end, text) becomes one 64-bit value; the fingerprint is a SHA-256 of the
    number of rows and two sums of them (wrapping), so it can be added to batch by batch. Rows are distinct (a chunk
    listed twice is refused), so the sums stand for the set of rows."""

    def __init__(self) -> None:
        self.rows = 0
        self.sums = [np.uint64(0), np.uint64(0)]

    def add(self, chunk_hashes: np.ndarray, doc_hashes: np.ndarray, start: np.ndarray | None,
            end: np.ndarray | None, text_hashes: np.ndarray | None) -> None:
        """Count rows given by their chunk and doc id hashes, offsets (None or `NO_OFFSET`: no place) and text
        hashes (None: no text)."""
        with np.errstate(over="ignore"):
            row = chunk_hashes * _ROW_SALT[0]  # id hashes are well mixed already: odd multiples keep columns apart
            row += doc_hashes * _ROW_SALT[1]
            for column, salt in ((start, _ROW_SALT[2]), (end, _ROW_SALT[3])):
                if column is not None:
                    row += column.astype(np.uint64) * salt  # -1 wraps: "no place"
            if text_hashes is not None:
                row += text_hashes
            row = mix64(row)
            self.sums[0] += row.sum(dtype=np.uint64)
            row *= row  # a second, different sum of the same rows
            self.sums[1] += row.sum(dtype=np.uint64)
        self.rows += len(row)

    def hexdigest(self) -> str:
        text = f"{self.rows}:{int(self.sums[0])}:{int(self.sums[1])}"
        return hashlib.sha256(text.encode()).hexdigest()[:12]


def text_hashes(text: pa.Array | pa.ChunkedArray | None) -> np.ndarray | None:
    """The hash of each chunk's own text (a missing text hashes as an empty one), None when the map has none."""
    return None if text is None else hash_strings(pc.fill_null(text, ""))


@dataclass(frozen=True)
class KeptRows:
    """The rows of a chunk map kept by `read_kept`, checked, with what the whole file said: its number of chunks,
    of documents, and its fingerprint. ``doc_of_chunk[i]`` is the position in ``docs`` (distinct) of row ``i``'s
    document."""

    chunks: pa.ChunkedArray
    chunk_hashes: np.ndarray
    docs: pa.ChunkedArray
    doc_of_chunk: np.ndarray
    start: np.ndarray | None
    end: np.ndarray | None
    text: pa.ChunkedArray | None
    file_chunks: int
    file_docs: int
    fingerprint: str
    lookup: RowLookup


class RowLookup:
    """The rows of a map kept by `read_kept`, found by id hash through the wanted ids' set (built once, before
    reading): ``rows[i]`` is the map row of the id at position ``i`` of ``wanted.values`` (-1: the map has none)."""

    def __init__(self, wanted: HashSet, rows: np.ndarray) -> None:
        self.wanted, self.rows = wanted, rows

    def get_indexer(self, hashes: np.ndarray) -> np.ndarray:
        """The map row of each hash, -1 where none (as `pandas.Index.get_indexer` on the map's hashes)."""
        if not len(self.rows):
            return np.full(len(hashes), -1, dtype=np.int64)
        at = self.wanted.positions(hashes)
        return np.where(at >= 0, self.rows[at], -1)


def wanted_hashes(keep: Iterable[IdArray | Iterable[str]]) -> HashSet:
    """The hashes of every id in ``keep`` (arrays of ids: runs' ids, the labels' doc ids), as a set."""
    parts = [ids.hashes() if isinstance(ids, IdArray) else hash_strings(to_arrow_strings(list(ids))) for ids in keep]
    return HashSet(np.concatenate(parts) if parts else np.zeros(0, dtype=np.uint64))


def read_kept(src: Source, fmt: str, keep: Iterable[IdArray | Iterable[str]],
              documents: Documents | None) -> KeptRows | None:
    """The rows of chunk map ``src`` (format ``fmt``) whose chunk id is one of ``keep``'s (arrays of ids: runs'
    ids, the labels' doc ids), every row checked (a bad one is an InputError naming it, see the module's docs);
    None when the file must be read whole (`read_chunks` then reads it or names its problem)."""
    opened = _batches(src, fmt)
    if opened is None:
        return None
    found, batches, expected_rows = opened
    try:
        columns = map_columns(found)  # a missing column: named from the header, as the whole read names it
    except InputError:
        batches.close()
        raise
    against = _DocumentCheck(documents) if documents is not None else None
    dictionaries = _Dictionaries()  # the reading thread's
    with _Ahead(batches, _Numbered(found, columns, dictionaries)) as parts:
        wanted = wanted_hashes(keep)  # while the first batch is read
        fingerprint, seen, docs, kept = MapFingerprint(), _Growing(expected_rows), _DistinctHashes(), \
            _Keeping(wanted, columns)
        try:
            for part in parts:
                part.check_chunks()  # here: the reading thread has the decoding
                seen.append(part.chunk_hashes)
                docs.add(part.doc_values)
                fingerprint.add(part.chunk_hashes, part.doc_hashes, part.start, part.end, text_hashes(part.text))
                if against is not None:
                    against.check(part)
                if not kept.add(part, *wanted.rows_in(part.chunk_hashes)):
                    return None  # the rows kept outgrow the memory budget: the whole read says so
        except (WholeReadNeeded, pa.ArrowException, OSError, UnicodeDecodeError):
            return None
    docs.add(dictionaries.named())  # the reading thread is done
    with ThreadPoolExecutor(1, thread_name_prefix="evalcore-chunk-map") as pool:
        coded = None if kept.overfull else pool.submit(kept.doc_codes)  # while the duplicate check sorts
        every = seen.values()
        del seen
        every.sort()
        twice = every[1:][every[1:] == every[:-1]]
        n_rows = len(every)
        del every
        doc_codes = None if coded is None else coded.result()
    if len(twice) or doc_codes is None:
        _refuse_repeat(src, fmt, np.unique(twice))
        return None  # two ids sharing a hash, no chunk listed twice: the whole read tells them apart
    return kept.rows(n_rows, docs.count(), fingerprint.hexdigest(), doc_codes)


def _refuse_repeat(src: Source, fmt: str, hashes: np.ndarray) -> None:
    """The InputError for the first row (in the file's order) whose chunk id an earlier row has, worded and placed
    as the whole read words it: the file read once more a batch at a time, holding only the ids whose hash is one of
    ``hashes`` until the first repeat. Nothing when no id is repeated (two ids share a hash)."""
    opened = _batches(src, fmt)
    if opened is None:
        return
    found, batches, _ = opened
    columns, first, before = map_columns(found), {}, 0
    with closing(batches):
        for batch in batches:
            part = replace(found, table=pa.Table.from_batches([batch]))
            chunks, chunk_hashes, _ = _ids(part, columns.chunk, "a chunk id", _Dictionaries())
            rows = np.flatnonzero(np.isin(chunk_hashes, hashes))
            for row, chunk in zip((before + rows).tolist(), chunks.take(pa.array(rows, pa.int64())).to_pylist()):
                if chunk in first:
                    raise found.error(row, "each chunk listed once (a chunk belongs to one document at one place)",
                                      f"{chunk} (listed first at {found.where} {found.line_of(first[chunk])})")
                first[chunk] = row
            before += batch.num_rows


class _Numbered:
    """Makes each batch's `_Batch` (on the reading thread), its rows numbered as the file numbers them: the batch
    knows how many rows came before it, so an error in it names the file's line."""

    def __init__(self, found: ArrowTable, columns: MapColumns, dictionaries: _Dictionaries) -> None:
        self.found, self.columns, self.dictionaries, self.before = found, columns, dictionaries, 0

    def __call__(self, batch: pa.RecordBatch) -> _Batch:
        part = _Batch(replace(self.found, table=pa.Table.from_batches([batch]), first_row=self.before),
                      self.columns, self.dictionaries)
        self.before += batch.num_rows
        return part


class _Keeping:
    """The rows kept so far, and the kept row of each wanted id (`RowLookup`). The numbers go into arrays sized once
    for as many rows as there are wanted ids (a row per id at most, ids being distinct: pages never written take no
    memory), so nothing is copied at the end; the text columns are kept as each batch's piece."""

    def __init__(self, wanted: HashSet, columns: MapColumns) -> None:
        self.wanted, self.size, capacity = wanted, 0, len(wanted)
        self.chunk_hashes, self.doc_hashes = np.empty(capacity, np.uint64), np.empty(capacity, np.uint64)
        self.lookup = np.full(capacity, -1, dtype=np.int64)  # the kept row of each wanted id
        offsets = columns.start is not None
        self.start = np.empty(capacity, np.int64) if offsets else None
        self.end = np.empty(capacity, np.int64) if offsets else None
        self.chunks: list[pa.Array] = []
        self.docs: list[pa.Array] = []
        self.text: list[pa.Array] | None = [] if columns.text is not None else None
        self.held = 0
        self.overfull = False  # more rows than wanted ids: one is listed twice (named once every row is checked)

    def add(self, part: _Batch, rows: np.ndarray, at: np.ndarray) -> bool:
        """Keep ``part``'s ``rows`` (their ids at ``at`` in the wanted set); False when they outgrow the memory
        budget. Past as many rows as wanted ids (a chunk listed twice), nothing more is kept (`overfull`)."""
        end = self.size + len(rows)
        if self.overfull or end > len(self.lookup):
            self.overfull = True
            return True
        self.chunk_hashes[self.size:end] = part.chunk_hashes[rows]
        self.doc_hashes[self.size:end] = part.doc_hashes[rows]
        self.lookup[at] = np.arange(self.size, end)
        taken = pa.array(rows)
        self.chunks.append(_plain(part.chunks.take(taken)))
        self.docs.append(_plain(part.docs.take(taken)))
        self.held += self.chunks[-1].nbytes + self.docs[-1].nbytes + 24 * len(rows)
        if self.start is not None:
            self.start[self.size:end] = part.start[rows]
            self.end[self.size:end] = part.end[rows]
            self.held += 16 * len(rows)
        if self.text is not None:
            self.text.append(part.text.take(taken))
            self.held += self.text[-1].nbytes
        self.size = end
        return self.held <= max_file_bytes()

    def doc_codes(self) -> tuple[pa.ChunkedArray, np.ndarray]:
        """The distinct documents of the rows kept and the position there of each row's (`_doc_codes`)."""
        return _doc_codes(pa.chunked_array(self.docs, pa.string()), self.doc_hashes[:self.size])

    def rows(self, n_rows: int, n_docs: int, fingerprint: str, doc_codes: tuple[pa.ChunkedArray, np.ndarray],
             ) -> KeptRows:
        """The rows kept (their documents coded by `doc_codes`), with the file's counts and fingerprint."""
        n = self.size
        distinct, doc_of_chunk = doc_codes
        return KeptRows(pa.chunked_array(self.chunks, pa.string()), self.chunk_hashes[:n], distinct, doc_of_chunk,
                        None if self.start is None else self.start[:n], None if self.end is None else self.end[:n],
                        None if self.text is None else pa.chunked_array(self.text, pa.string()), n_rows, n_docs,
                        fingerprint, RowLookup(self.wanted, self.lookup))


def _doc_codes(docs: pa.ChunkedArray, hashes: np.ndarray) -> tuple[pa.ChunkedArray, np.ndarray]:
    """The distinct documents of ``docs`` (in order of first appearance) and the position there of each row's,
    found by the rows' doc hashes and confirmed on the strings (two documents sharing a hash are told apart by
    Arrow's own encoding instead)."""
    codes, _ = pd.factorize(hashes)  # numbered in order of first appearance: a row is a first where a new one starts
    first = np.flatnonzero(np.r_[True, codes[1:] > np.maximum.accumulate(codes)[:-1]]) if len(codes) else codes
    distinct = docs.take(pa.array(first, pa.int64()))
    if len(codes) and not pc.all(pc.equal(docs, distinct.take(pa.array(codes)))).as_py():
        encoded = pc.dictionary_encode(docs.combine_chunks())
        return pa.chunked_array([encoded.dictionary]), encoded.indices.to_numpy(zero_copy_only=False).astype(np.int64)
    return distinct, codes.astype(np.int64, copy=False)


class _DistinctHashes:
    """Counts the distinct values among arrays of hashes added one at a time, holding only the distinct ones seen
    (merged every few arrays, so repeats across arrays do not pile up)."""

    def __init__(self) -> None:
        self._merged = np.zeros(0, dtype=np.uint64)
        self._pending: list[np.ndarray] = []
        self._pending_size = 0

    def add(self, hashes: np.ndarray) -> None:
        if len(hashes) > 1:
            hashes = hashes[np.r_[True, hashes[1:] != hashes[:-1]]]  # a document's chunks often come together
        self._pending.append(hashes)
        self._pending_size += len(hashes)
        if self._pending_size > len(self._merged):
            self._merge()

    def count(self) -> int:
        self._merge()
        return len(self._merged)

    def _merge(self) -> None:
        self._merged = distinct_sorted(np.concatenate([self._merged, *self._pending]))
        self._pending, self._pending_size = [], 0


class _Ahead:
    """``make(item)`` of each item, read and made on a second thread one item ahead of the caller's use, from the
    moment it is opened (the caller prepares meanwhile). Arrow's decoding and NumPy's array work let go of the GIL,
    so reading the next batch overlaps checking this one. An error raised there is raised at the item; leaving
    the ``with`` block waits for the item being made."""

    def __init__(self, items: Iterator[T], make: Callable[[T], U]) -> None:
        self._items, self._make = items, make
        self._pool = ThreadPoolExecutor(1, thread_name_prefix="evalcore-chunk-map")
        self._coming = self._pool.submit(self._step)

    def __enter__(self) -> _Ahead:
        return self

    def __exit__(self, *_) -> None:
        """Join the thread (after the item it is making), then close the items (the file's reader) here, however
        the block was left: a reader left to the garbage collector could be torn down as the interpreter exits,
        with its own threads still running (an abort: "terminate called without an active exception")."""
        self._pool.shutdown(wait=True, cancel_futures=True)
        self._coming = None  # an error held there holds this object through its traceback
        close = getattr(self._items, "close", None)
        if close is not None:
            close()

    def __iter__(self) -> Iterator[U]:
        while (made := self._coming.result()) is not None:
            self._coming = self._pool.submit(self._step)
            yield made

    def _step(self) -> U | None:
        item = next(self._items, None)
        made = None if item is None else self._make(item)
        del item
        pa.default_memory_pool().release_unused()  # what the item held: the allocator keeps it per thread otherwise
        return made


def _batches(src: Source, fmt: str) -> tuple[ArrowTable, Iterator[pa.RecordBatch], int | None] | None:
    """The file's columns (a table of no rows), its batches and its number of rows when known beforehand, for the
    formats read this way."""
    if fmt == "parquet":
        opened = parquet_batches(src, COLUMNS)
        if opened is None:
            return None
        names, empty, batches, rows = opened
        return ArrowTable(empty, src, where="row", header_lines=0, header=names), batches, rows
    if fmt in ("csv", "tsv"):
        opened = delimited_batches(src, "," if fmt == "csv" else "\t", COLUMNS,
                                   "chunk_id and doc_id columns, optionally start, end and text")
        return None if opened is None else (*opened, None)
    return None


class _Growing:
    """A uint64 array filled batch by batch: sized once when the number of rows is known (no second copy at the
    end), else grown by half again as needed."""

    def __init__(self, rows: int | None) -> None:
        self._data = np.empty(rows if rows is not None else 1 << 16, dtype=np.uint64)
        self._size = 0

    def append(self, values: np.ndarray) -> None:
        end = self._size + len(values)
        if end > len(self._data):
            grown = np.empty(max(end, len(self._data) * 3 // 2), dtype=np.uint64)
            grown[:self._size] = self._data[:self._size]
            self._data = grown
        self._data[self._size:end] = values
        self._size = end

    def values(self) -> np.ndarray:
        """The values appended (a view when the array was sized right)."""
        return self._data[:self._size]


class _Batch:
    """One batch's columns, checked as the whole read checks them, with the hashes of its ids. Made in two halves
    to share the work between the threads: the documents, offsets and text where the batch is read (`_Ahead`),
    the chunk ids (`check_chunks`) where it is used."""

    chunks: pa.Array
    chunk_hashes: np.ndarray

    def __init__(self, found: ArrowTable, columns: MapColumns, dictionaries: _Dictionaries) -> None:
        self.found, self.chunk_column = found, columns.chunk
        try:
            self.docs, self.doc_hashes, self.doc_values = _ids(found, columns.doc, "a doc id", dictionaries)
            self.start = self.end = None
            if columns.start is not None:
                self.start, self.end = offset_pairs(found.table.column(columns.start),
                                                    found.table.column(columns.end), found.error,
                                                    names=(columns.start, columns.end))
            self.text = text_column(found, columns.text).combine_chunks() if columns.text is not None else None
        except InputError:
            self.check_chunks()  # a bad chunk id in the batch comes first, as in the whole read
            raise

    def check_chunks(self) -> None:
        """Check and hash the chunk ids."""
        self.chunks, self.chunk_hashes, _ = _ids(self.found, self.chunk_column, "a chunk id", _Dictionaries())


def _ids(found: ArrowTable, name: str, role: str, dictionaries: _Dictionaries,
         ) -> tuple[pa.Array, np.ndarray, np.ndarray]:
    """Column ``name`` checked as ids (`id_column`), the hash of each, and hashes of the ids the rows hold, to count
    the distinct ones: each row's, or for a dictionary column those `_Dictionaries` hands on. A column Parquet gives
    as a dictionary stays one: its values are checked and hashed once each (a value repeated on many rows), the
    rows kept decoded later; one with a row that names no value, or holding a value no id may be, is decoded and
    checked row by row, so the message names the row that holds it (a value no row names is no error)."""
    values = found.table.column(name).combine_chunks()
    if pa.types.is_dictionary(values.type) and not values.indices.null_count:
        indices = values.indices.to_numpy(zero_copy_only=False)
        try:
            dictionary, value_hashes, named = dictionaries.checked(found, name, role, values.dictionary, indices)
            return pa.DictionaryArray.from_arrays(values.indices, dictionary), value_hashes[indices], named
        except InputError:
            pass  # a value no id may be, in the dictionary: the rows decoded name it where one holds it
    ids = id_column(found, name, role).combine_chunks()  # a row without an id named as `id_column` words it
    hashes = hash_strings(ids)
    return ids, hashes, hashes


class _Dictionaries:
    """The dictionary a column came with last, checked and hashed, and which of its values rows named. Parquet
    hands every batch of a row group its own copy of the group's dictionary (100,000 documents, say): it is checked
    and hashed once here, and the values the group's rows name (a dictionary may hold values no row names) are
    handed on once, with the first batch of the next dictionary or by `named`."""

    def __init__(self) -> None:
        self._last: tuple[pa.Array, pa.Array, np.ndarray] | None = None
        self._named = np.zeros(0, dtype=bool)

    def checked(self, found: ArrowTable, name: str, role: str, dictionary: pa.Array, indices: np.ndarray,
                ) -> tuple[pa.Array, np.ndarray, np.ndarray]:
        """``dictionary`` checked as ids, their hashes, and the hashes of the values named under the dictionary
        before, when this one differs (else none); ``indices`` (this batch's rows) are noted as named. A value no id
        may be is an InputError (naming no row of the file), and nothing is changed."""
        before = np.zeros(0, dtype=np.uint64)
        if self._last is None or not self._last[0].equals(dictionary):
            values_only = ArrowTable(pa.table({name: dictionary}), found.source, where=found.where)
            checked = id_column(values_only, name, role).combine_chunks()
            before = self.named()
            self._last = (dictionary, checked, hash_strings(checked))
            self._named = np.zeros(len(dictionary), dtype=bool)
        self._named[indices] = True
        return self._last[1], self._last[2], before

    def named(self) -> np.ndarray:
        """The hashes of the values rows named under the last dictionary not handed on yet."""
        if self._last is None:
            return np.zeros(0, dtype=np.uint64)
        out = self._last[2][self._named]
        self._named[:] = False
        return out


def _plain(values: pa.Array) -> pa.Array:
    return values.dictionary_decode() if pa.types.is_dictionary(values.type) else values


class _DocumentCheck:
    """Every row's document among the documents file's, and its end within that document's text (by the ids'
    hashes: the rows kept are checked again on the exact strings by `evalcore.readers.chunks.placed_in`); a row that
    is not is named as `placed_in` names it."""

    def __init__(self, documents: Documents) -> None:
        hashes = hash_strings(to_arrow_strings(documents.frame.index.astype(str)))
        self.documents, self.known = documents, HashSet(hashes)
        self.unique = len(self.known) == len(hashes)  # else two documents share a hash: the whole read checks
        self.lengths = None  # each document's text length, in the order of `known.values`
        if documents.has_text and self.unique:
            lengths = documents.frame["text"].fillna("").astype(str).str.len().to_numpy(dtype=np.int64)
            self.lengths = lengths[np.argsort(hashes)]

    def check(self, part: _Batch) -> None:
        """An InputError for the first row of ``part`` whose document the file lacks, else the first whose end is
        past its document's text; `WholeReadNeeded` when the hashes cannot tell."""
        if not self.unique:
            raise WholeReadNeeded
        at = self.known.positions(part.doc_hashes)
        absent = np.flatnonzero(at < 0)  # a hash the documents lack: so does the id
        if len(absent):
            named = self.documents.source or self.documents.name
            raise part.found.error(int(absent[0]), f"a doc_id the documents file {named} has")
        if self.lengths is None or part.end is None:
            return
        past = np.flatnonzero(part.end > self.lengths[at])
        if len(past):
            row = int(past[0])
            text = self.documents.text(str(part.docs[row].as_py()))
            if text is None or part.end[row] <= len(text):
                raise WholeReadNeeded  # two documents share a hash after all
            raise part.found.error(row, f"an end within its document's text ({len(text):,} characters)")
