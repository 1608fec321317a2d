"""Building the files the reader tests read: written into a test's folder, Parquet built in memory."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq


def write(folder: Path, name: str, content: str | bytes) -> Path:
    """``content`` (text as UTF-8) written to ``folder / name``."""
    path = folder / name
    path.write_bytes(content if isinstance(content, bytes) else content.encode("utf-8"))
    return path


def parquet_bytes(columns: dict, **options) -> bytes:
    """A Parquet file of ``columns`` (name -> values or an Arrow array)."""
    sink = pa.BufferOutputStream()
    pq.write_table(pa.table(columns), sink, **options)
    return sink.getvalue().to_pybytes()
