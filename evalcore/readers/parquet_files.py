"""Parquet files read within the memory budget: only the columns a reader uses, batch by batch, stopping as soon as
what was read passes `evalcore.readers.sources.max_file_bytes`.

Every reader of a Parquet file (labels, runs, documents, chunk maps, queries, vectors) reads it through
`read_parquet_columns`, so the budget is kept in one place.
"""

from __future__ import annotations

from typing import Iterable

import pyarrow as pa
import pyarrow.parquet as pq

from ..errors import InputError
from .sources import Source, max_file_bytes, too_large


def read_parquet_columns(source: Source, wanted: Iterable[str] | None = None) -> tuple[pa.Table, tuple[str, ...]]:
    """The columns of ``source`` whose names (stripped, lower case) are in ``wanted`` (None: every column), and every
    column name the file has (for messages). A damaged file or one past the budget is an InputError naming it."""
    wanted = None if wanted is None else {c.lower() for c in wanted}
    try:
        parquet = pq.ParquetFile(source.binary_path or pa.BufferReader(source.data))
        names = tuple(str(n) for n in parquet.schema_arrow.names)
        chosen = [n for n in names if wanted is None or n.strip().lower() in wanted]
        table = _read_columns(parquet, chosen, source.name)
    except InputError:
        raise
    except Exception as exc:  # pyarrow raises many types for a damaged file
        raise InputError(f"a readable Parquet file ({type(exc).__name__}: {exc})", source=source.name) from None
    return table, tuple(n.strip() for n in names)


def _read_columns(parquet: pq.ParquetFile, columns: list[str], display: str) -> pa.Table:
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
