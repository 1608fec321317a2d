"""A chunk map read a batch at a time, keeping only the chunks that runs (or labels) name.

A map of 5 million chunks scored against runs naming a million: holding every row (ids, their hash table, offsets)
cost four times the memory of the run itself, for rows no number reads. Read in batches, every row is still checked
as the whole read checks it (ids, offsets, against the documents), hashed for the duplicate check and the map's
fingerprint, and kept only when its chunk id is one of the ids asked for; what stays is one 8-byte hash per row and
the kept rows.

Anything irregular (a bad row, a format without a batch reader, a hash seen twice) hands the file back to the whole
read (`evalcore.readers.chunks.read_chunks`), which reads it or names the problem where the file has it: this module
never words an error of its own.
"""

from __future__ import annotations

import hashlib
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Callable, Iterable, Iterator, TypeVar

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from ..errors import InputError
from .arrow_tables import ArrowTable, delimited_batches, id_column, text_column
from .chunk_parsers import COLUMNS, MapColumns, map_columns
from .documents import Documents
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
    of documents, and its fingerprint."""

    chunks: pa.Array
    chunk_hashes: np.ndarray
    docs: pa.Array
    start: np.ndarray | None
    end: np.ndarray | None
    text: pa.Array | None
    file_chunks: int
    file_docs: int
    fingerprint: str
    lookup: RowLookup


_BITMAP_BITS = 26
"""2**26 bits (8 MB): a million wanted ids mark about 1.5% of it."""
_SHIFT = np.uint64(64 - _BITMAP_BITS)


class Wanted:
    """The hashes of the ids whose chunks are kept, for looking up millions of map rows: a bitmap of their top
    `_BITMAP_BITS` bits rules out most rows with one gather, and only the rest go through the hash table."""

    def __init__(self, hashes: np.ndarray) -> None:
        distinct = _distinct(hashes)
        self.table = pd.Index(distinct)
        slots = (distinct >> _SHIFT).astype(np.intp)  # sorted, as the hashes are
        byte = slots >> 3
        starts = np.flatnonzero(np.r_[True, byte[1:] != byte[:-1]]) if len(byte) else np.zeros(0, dtype=np.intp)
        self.bitmap = np.zeros(1 << (_BITMAP_BITS - 3), dtype=np.uint8)
        if len(byte):
            self.bitmap[byte[starts]] = np.bitwise_or.reduceat(np.left_shift(1, slots & 7).astype(np.uint8), starts)

    def rows_in(self, hashes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The positions in ``hashes`` of those wanted, and where each is in `table`."""
        slot = (hashes >> _SHIFT).astype(np.intp)
        maybe = np.flatnonzero((self.bitmap[slot >> 3] >> (slot & 7).astype(np.uint8)) & 1)
        at = self.table.get_indexer(hashes[maybe])
        found = at >= 0
        return maybe[found], at[found]


class RowLookup:
    """The rows of a map kept by `read_kept`, found by id hash through the wanted ids' table (built once, while
    reading): ``rows[i]`` is the map row of the id at position ``i`` of ``table`` (-1: the map has none)."""

    def __init__(self, table: pd.Index, rows: np.ndarray) -> None:
        self.table, self.rows = table, rows

    def get_indexer(self, hashes: np.ndarray) -> np.ndarray:
        """The map row of each hash, -1 where none (as `pandas.Index.get_indexer` on the map's hashes)."""
        at = self.table.get_indexer(hashes)
        return np.where(at >= 0, self.rows[np.maximum(at, 0)], -1)


def wanted_hashes(keep: Iterable[IdArray | Iterable[str]]) -> Wanted:
    """The hashes of every id in ``keep`` (arrays of ids: runs' ids, the labels' doc ids), as a lookup."""
    parts = [ids.hashes() if isinstance(ids, IdArray) else hash_strings(to_arrow_strings(list(ids))) for ids in keep]
    return Wanted(np.concatenate(parts) if parts else np.zeros(0, dtype=np.uint64))


def read_kept(src: Source, fmt: str, wanted: Wanted, documents: Documents | None) -> KeptRows | None:
    """The rows of chunk map ``src`` (format ``fmt``) whose chunk id hashes to one in ``wanted``, every row checked;
    None when the file must be read whole (`read_chunks` then reads it or names its problem)."""
    opened = _batches(src, fmt)
    if opened is None:
        return None
    found, batches, expected_rows = opened
    try:
        columns = map_columns(found)
    except InputError:
        return None
    against = _DocumentCheck(documents) if documents is not None else None
    fingerprint, seen, seen_docs, kept, positions, held = MapFingerprint(), _Growing(expected_rows), [], [], [], 0
    try:
        for part in _ahead(batches, lambda batch: _Batch(ArrowTable(pa.Table.from_batches([batch]), src,
                                                                    where=found.where), columns)):
            seen.append(part.chunk_hashes)
            seen_docs.append(_distinct(part.doc_values))  # here, not on the reading thread: it is the busier one
            fingerprint.add(part.chunk_hashes, part.doc_hashes, part.start, part.end, text_hashes(part.text))
            if against is not None and not against.fits(part):
                return None
            rows, at = wanted.rows_in(part.chunk_hashes)
            if len(rows):
                kept.append(part.kept(rows))
                positions.append(at)
                held += sum(k.nbytes for k in kept[-1] if k is not None)
                if held > max_file_bytes():
                    return None
    except (InputError, WholeReadNeeded, pa.ArrowException, OSError, UnicodeDecodeError):
        return None
    every = seen.values()
    del seen
    every.sort()
    if (every[1:] == every[:-1]).any():
        return None  # a chunk listed twice (or two ids sharing a hash): the whole read says which
    n_rows = len(every)
    del every
    n_docs = len(_distinct(np.concatenate(seen_docs))) if seen_docs else 0
    rows = np.full(len(wanted.table), -1, dtype=np.int64)
    if positions:
        at = np.concatenate(positions)
        rows[at] = np.arange(len(at))
    return _joined(kept, columns, n_rows, n_docs, fingerprint.hexdigest(), RowLookup(wanted.table, rows))


def _ahead(items: Iterator[T], make: Callable[[T], U]) -> Iterator[U]:
    """``make(item)`` of each item, read and made on a second thread one item ahead of the caller's use (Arrow's
    decoding and NumPy's array work let go of the GIL, so reading the next batch overlaps checking this one). An
    error raised there is raised here, at the item."""

    def step() -> U | None:
        item = next(items, None)
        made = None if item is None else make(item)
        del item
        pa.default_memory_pool().release_unused()  # what the item held: the allocator keeps it per thread otherwise
        return made

    with ThreadPoolExecutor(1, thread_name_prefix="evalcore-chunk-map") as pool:
        coming = pool.submit(step)
        while (made := coming.result()) is not None:
            coming = pool.submit(step)
            yield made


def _distinct(hashes: np.ndarray) -> np.ndarray:
    """The distinct values of ``hashes``, sorted (by a sort: NumPy's own unique hashes, several times slower here)."""
    ordered = np.sort(hashes)
    return ordered[np.r_[True, ordered[1:] != ordered[:-1]]] if len(ordered) else ordered


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
    """One batch's columns, checked as the whole read checks them, with the hashes of its ids."""

    def __init__(self, found: ArrowTable, columns: MapColumns) -> None:
        self.chunks, self.chunk_hashes, _ = _ids(found, columns.chunk, "a chunk id")
        self.docs, self.doc_hashes, self.doc_values = _ids(found, columns.doc, "a doc id")
        self.start = self.end = None
        if columns.start is not None:
            self.start, self.end = offset_pairs(found.table.column(columns.start), found.table.column(columns.end),
                                                found.error)
        self.text = text_column(found, columns.text).combine_chunks() if columns.text is not None else None

    def kept(self, rows: np.ndarray) -> tuple:
        """The columns at ``rows``: the ones kept."""
        taken = pa.array(rows)
        return (_plain(self.chunks.take(taken)), self.chunk_hashes[rows], _plain(self.docs.take(taken)),
                None if self.start is None else self.start[rows], None if self.end is None else self.end[rows],
                None if self.text is None else self.text.take(taken))


def _ids(found: ArrowTable, name: str, role: str) -> tuple[pa.Array, np.ndarray, np.ndarray]:
    """Column ``name`` checked as ids (`id_column`), the hash of each, and the hashes of the ids it holds (each row's,
    or a dictionary's values). A column Parquet gives as a dictionary stays one: its values are checked and hashed
    once each (a value repeated on many rows), the rows kept decoded later."""
    values = found.table.column(name).combine_chunks()
    if not pa.types.is_dictionary(values.type):
        ids = id_column(found, name, role).combine_chunks()
        hashes = hash_strings(ids)
        return ids, hashes, hashes
    if values.indices.null_count:
        raise WholeReadNeeded  # a row without an id: the whole read names it
    values_only = ArrowTable(pa.table({name: values.dictionary}), found.source, where=found.where)
    dictionary = id_column(values_only, name, role).combine_chunks()
    indices = values.indices.to_numpy(zero_copy_only=False)
    value_hashes = hash_strings(dictionary)
    return pa.DictionaryArray.from_arrays(values.indices, dictionary), value_hashes[indices], value_hashes


def _plain(values: pa.Array) -> pa.Array:
    return values.dictionary_decode() if pa.types.is_dictionary(values.type) else values


class _DocumentCheck:
    """Every row's document among the documents file's, and its end within that document's text (by the ids'
    hashes: the rows kept are checked again on the exact strings by `evalcore.readers.chunks.placed_in`)."""

    def __init__(self, documents: Documents) -> None:
        ids = to_arrow_strings(documents.frame.index.astype(str))
        self.table = pd.Index(hash_strings(ids))
        self.lengths = (documents.frame["text"].fillna("").astype(str).str.len().to_numpy(dtype=np.int64)
                        if documents.has_text else None)

    def fits(self, part: _Batch) -> bool:
        if not self.table.is_unique:
            return False
        at = self.table.get_indexer(part.doc_hashes)
        if (at < 0).any():
            return False
        return self.lengths is None or part.end is None or not (part.end > self.lengths[at]).any()


def _joined(kept: list[tuple], columns: MapColumns, n_rows: int, n_docs: int, fingerprint: str,
            lookup: RowLookup) -> KeptRows:
    """The kept pieces of every batch as one set of columns."""

    def arrays(i: int, kind) -> pa.Array:
        pieces = [k[i] for k in kept]
        return pa.concat_arrays(pieces) if pieces else pa.array([], kind)

    def numbers(i: int, given: bool, dtype) -> np.ndarray | None:
        if not given:
            return None
        return np.concatenate([k[i] for k in kept]) if kept else np.zeros(0, dtype=dtype)

    return KeptRows(arrays(0, pa.string()), numbers(1, True, np.uint64), arrays(2, pa.string()),
                    numbers(3, columns.start is not None, np.int64), numbers(4, columns.start is not None, np.int64),
                    arrays(5, pa.string()) if columns.text is not None else None, n_rows, n_docs, fingerprint, lookup)

