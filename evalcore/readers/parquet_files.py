"""Parquet files read within the memory budget: only the columns a reader uses, a batch at a time, each batch counted
at its decoded size before the next is read, stopping as soon as the total passes
`evalcore.readers.sources.max_file_bytes`.

A Parquet file is small on disk for what it holds: a dictionary page lets 3 million rows name one 1,000-character
string (3 GB once decoded) in 338 KB, and 80,000 vectors of 25,000 equal floats (8 GB) fit in 220 KB. So the size
the file's metadata gives is not the budget's measure; what each column decodes to is:

* before anything is read, numbers count their number of values times their width, which the metadata gives
  exactly (the vectors above are refused here, having read nothing);
* text columns whose pages are dictionary pages (a few bytes a value on disk) are read as dictionaries: held
  compact, counted at the length of the text each value stands for, and decoded only once the whole file is
  within the budget;
* batches hold about `BATCH_BYTES` each, by the metadata's measure of a row, so no one batch decodes far past it.

Every reader of a Parquet file (labels, runs, documents, chunk maps, queries, vectors) reads it through
`read_parquet_columns`, so the budget is kept in one place.
"""

from __future__ import annotations

from typing import Callable, Iterable, Iterator

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from ..errors import InputError
from .sources import Source, max_file_bytes, too_large

BATCH_BYTES = 64 << 20
"""About how many decoded bytes one batch may hold (rows per batch follow from the metadata's bytes per row)."""
DICTIONARY_BYTES_PER_VALUE = 4
"""A text column chunk taking fewer bytes a value than this, uncompressed, is dictionary pages (a plain page stores
a 4-byte length before every value): it is read as a dictionary and counted at its decoded size."""
_WIDTH = {"BOOLEAN": 1, "INT32": 4, "INT64": 8, "INT96": 12, "FLOAT": 4, "DOUBLE": 8}
_MAX_BATCH_ROWS = 1 << 16
_STREAM_BATCH_ROWS = 1 << 18
"""Rows of a batch read to be let go (`parquet_batches`): fewer, larger batches decode faster."""


def read_parquet_columns(source: Source, wanted: Iterable[str] | None = None, *,
                         choose: Callable[[tuple[str, ...]], list[str]] | None = None,
                         ) -> tuple[pa.Table, tuple[str, ...]]:
    """The columns of ``source`` whose names (stripped, lower case) are in ``wanted`` (None: every column), or those
    ``choose(names)`` picks, decoded (no dictionary types), and every column name the file has (for messages). A
    damaged file, or one whose columns decode past the budget, is an InputError naming it."""
    try:
        parquet, names, chosen, _ = _opened(source, choose or _named(wanted))
        table = _read_columns(parquet, chosen, source.name)
    except InputError:
        raise
    except Exception as exc:  # pyarrow raises many types for a damaged file
        raise InputError(f"a readable Parquet file ({type(exc).__name__}: {exc})", source=source.name) from None
    return table, tuple(n.strip() for n in names)


class WholeReadNeeded(Exception):
    """A file read a batch at a time turned out irregular (or too large once decoded): the whole read
    (`read_parquet_columns`, `evalcore.readers.arrow_tables.read_arrow_table`) reads it or names its problem."""


def parquet_batches(source: Source, wanted: Iterable[str],
                    ) -> tuple[tuple[str, ...], pa.Table, Iterator[pa.RecordBatch], int] | None:
    """The columns of ``source`` named in ``wanted`` (stripped, lower case), one batch at a time: every column name
    the file has, the chosen columns as an empty table (their names and types), the batches, and the number of
    rows. For a reader that keeps only some rows. Text held as dictionary pages stays a dictionary (the reader
    decodes what it keeps); each batch is counted at its decoded size, and one past the budget raises
    `WholeReadNeeded`. None when the file needs the whole read: damaged, or numbers past the budget."""
    try:
        parquet, names, chosen, stored = _opened(source, _named(wanted))
        bound, rows = _decoded_bound(parquet.metadata, chosen)
    except Exception:  # noqa: BLE001 - a damaged file: the whole read names the problem
        return None
    limit = max_file_bytes()
    if bound > limit:
        return None
    batch_rows = _batch_rows(bound, rows, _STREAM_BATCH_ROWS)

    def batches() -> Iterator[pa.RecordBatch]:  # closed (the file with it) however the caller stops
        try:
            for batch in parquet.iter_batches(batch_size=batch_rows, columns=chosen, use_pandas_metadata=False,
                                              use_threads=False):  # the reader works on the other core meanwhile
                if sum(_decoded_at_most(column) for column in batch.columns) > limit and \
                        sum(decoded_bytes(column) for column in batch.columns) > limit:
                    raise WholeReadNeeded
                yield batch
        finally:
            parquet.close()

    return tuple(n.strip() for n in names), stored.empty_table().select(chosen), batches(), rows


def _opened(source: Source, choose: Callable[[tuple[str, ...]], list[str]],
            ) -> tuple[pq.ParquetFile, tuple[str, ...], list[str], pa.Schema]:
    """``source`` opened for the columns ``choose(names)`` picks, with text held as dictionary pages read as
    dictionaries (`_dictionary_columns`): the reader, every column name, the chosen ones, and the schema as stored
    (no dictionary types). Pages are read as they are decoded, not a row group at a time ahead (``pre_buffer``, for
    remote files): on a local file that held a fifth more memory and took longer."""
    parquet = pq.ParquetFile(_handle(source), pre_buffer=False)
    stored = parquet.schema_arrow
    names = tuple(str(n) for n in stored.names)
    chosen = choose(names)
    compact = _dictionary_columns(parquet, chosen)
    if compact:
        parquet = pq.ParquetFile(_handle(source), read_dictionary=compact, pre_buffer=False)
    return parquet, names, chosen, stored


def _named(wanted: Iterable[str] | None) -> Callable[[tuple[str, ...]], list[str]]:
    """Choose the columns whose names (stripped, lower case) are in ``wanted`` (None: every column)."""
    lowered = None if wanted is None else {c.lower() for c in wanted}
    return lambda names: [n for n in names if lowered is None or n.strip().lower() in lowered]


def _batch_rows(bound: int, rows: int, most: int) -> int:
    """Rows per batch so that one holds about `BATCH_BYTES` by the metadata's measure of a row, at most ``most``."""
    return int(min(most, max(1, BATCH_BYTES * max(rows, 1) // max(bound, 1))))


def _handle(source: Source):
    return source.binary_path or pa.BufferReader(source.data)


def _leaves(meta: pq.FileMetaData, columns: list[str]) -> dict[str, list[int]]:
    """The leaf column positions (Parquet's own columns) of each chosen column, by the first part of their path."""
    found: dict[str, list[int]] = {name: [] for name in columns}
    for j in range(meta.num_columns):
        top = meta.schema.column(j).path.split(".")[0]
        if top in found:
            found[top].append(j)
    return found


def _dictionary_columns(parquet: pq.ParquetFile, columns: list[str]) -> list[str]:
    """The chosen text columns with a column chunk of dictionary pages (see `DICTIONARY_BYTES_PER_VALUE`)."""
    meta, out = parquet.metadata, []
    for name, leaves in _leaves(meta, columns).items():
        text = [j for j in leaves if meta.schema.column(j).physical_type == "BYTE_ARRAY"]
        if len(text) != 1 or len(leaves) != 1:
            continue  # nested text: read as it is, counted as it decodes
        for i in range(meta.num_row_groups):
            chunk = meta.row_group(i).column(text[0])
            if chunk.num_values and chunk.total_uncompressed_size < DICTIONARY_BYTES_PER_VALUE * chunk.num_values:
                out.append(name)
                break
    return out


def _decoded_bound(meta: pq.FileMetaData, columns: list[str]) -> tuple[int, int]:
    """What the chosen columns decode to at least, by the metadata (numbers: values times width; anything else:
    its uncompressed pages), and the number of rows."""
    total = 0
    positions = [j for leaves in _leaves(meta, columns).values() for j in leaves]
    for i in range(meta.num_row_groups):
        group = meta.row_group(i)
        for j in positions:
            chunk, column = group.column(j), meta.schema.column(j)
            width = _WIDTH.get(column.physical_type, column.length if column.physical_type ==
                               "FIXED_LEN_BYTE_ARRAY" else 0)
            total += max(chunk.total_uncompressed_size, chunk.num_values * (width or 0))
    return total, meta.num_rows


def _read_columns(parquet: pq.ParquetFile, columns: list[str], display: str) -> pa.Table:
    """The chosen columns, batch by batch, each counted at its decoded size; decoded once all are within budget."""
    limit = max_file_bytes()
    bound, rows = _decoded_bound(parquet.metadata, columns)
    if bound > limit:
        raise too_large(display, "Parquet columns that decode to")
    batch_rows = _batch_rows(bound, rows, _MAX_BATCH_ROWS)
    batches, held = [], 0
    for batch in parquet.iter_batches(batch_size=batch_rows, columns=columns, use_pandas_metadata=False):
        held += sum(decoded_bytes(column) for column in batch.columns)
        if held > limit:
            raise too_large(display, "Parquet columns that decode to")
        batches.append(batch)
    table = pa.Table.from_batches(batches) if batches else parquet.schema_arrow.empty_table().select(columns)
    del batches
    for i, field in enumerate(table.schema):
        if pa.types.is_dictionary(field.type):
            table = table.set_column(i, field.name, table.column(i).cast(field.type.value_type))
    return table


def _decoded_at_most(values: pa.Array) -> int:
    """A quick upper bound of `decoded_bytes`: a dictionary's longest value for every row."""
    if not pa.types.is_dictionary(values.type) or not len(values.dictionary):
        return values.nbytes
    try:
        longest = pc.max(pc.binary_length(values.dictionary)).as_py() or 0
    except (pa.ArrowNotImplementedError, TypeError):  # not text: count it exactly
        return decoded_bytes(values)
    return (longest + 4) * len(values)


def decoded_bytes(values: pa.Array) -> int:
    """The bytes ``values`` take once decoded: a dictionary array counts the value each index stands for (text:
    its length, plus an offset), anything else its buffers."""
    if not pa.types.is_dictionary(values.type):
        return values.nbytes
    dictionary, n = values.dictionary, len(values)
    if not len(dictionary):
        return 4 * n
    kind = dictionary.type
    if not (pa.types.is_string(kind) or pa.types.is_binary(kind) or pa.types.is_large_string(kind)
            or pa.types.is_large_binary(kind)):
        try:
            return n * max(1, kind.bit_width // 8)  # numbers: their width
        except ValueError:  # nested values: as if each index held a copy of the whole dictionary
            return dictionary.nbytes * n
    lengths = pc.binary_length(dictionary).fill_null(0).to_numpy(zero_copy_only=False).astype(np.int64)
    indices = pc.fill_null(values.indices, 0).to_numpy(zero_copy_only=False).astype(np.int64)
    return int(lengths[indices].sum()) + 4 * n
