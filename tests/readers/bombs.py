"""Small files that decode to gigabytes (issue 24, items 2 to 4), built here so every test can make them at the size
it needs: the full size for the memory test, a small one (with a lower limit) where only the refusal matters."""

from __future__ import annotations

import zlib
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq


def vectors_in_dictionary_pages(path: Path, rows: int = 80_000, dims: int = 25_000, dtype=np.float32) -> Path:
    """``rows`` vectors of ``dims`` equal floats: every value one entry of a dictionary page, so 80,000 x 25,000
    (8 GB as float32: the issue's file) is about 200 KB. Written 1,000 rows at a time (the same batch again and
    again); building it takes as long as encoding every value (20 s and more on a busy machine)."""
    step = min(rows, 1000)
    kind = pa.from_numpy_dtype(dtype)
    values = pa.array(np.zeros(step * dims, dtype=dtype))
    vectors = pa.ListArray.from_arrays(pa.array(np.arange(0, step * dims + 1, dims, dtype=np.int32)), values)
    schema = pa.schema([("id", pa.string()), ("vector", pa.list_(kind))])
    with pq.ParquetWriter(path, schema, write_statistics=False, compression="zstd") as writer:
        for start in range(0, rows, step):
            ids = pa.array([f"d{start + i}" for i in range(step)], pa.string())
            writer.write_table(pa.table({"id": ids, "vector": vectors}, schema=schema))
    return path


def run_of_one_long_doc_id(path: Path, rows: int = 3_000_000, chars: int = 1000, arrow_schema: bool = True) -> Path:
    """A run of ``rows`` rows whose ``doc_id`` is a dictionary of one ``chars``-character string: 3 million rows of
    1,000 characters (3 GB of text) in about 340 KB. Without the Arrow schema a reader gets plain text columns
    back, unless it asks for the dictionary."""
    doc = pa.DictionaryArray.from_arrays(pa.array(np.zeros(rows, dtype=np.int32)), pa.array(["d" * chars]))
    zeros = pa.array(np.zeros(rows, dtype=np.int32))
    table = pa.table({"query": pa.DictionaryArray.from_arrays(zeros, pa.array(["q1"])), "doc_id": doc,
                      "score": pa.array(np.zeros(rows))})
    pq.write_table(table, path, store_schema=arrow_schema, compression="zstd")
    return path


def gzip_with_a_long_first_line(path: Path, megabytes: int = 1024, rest: bytes = b"\nq1 Q0 d1 1 0.5 t\n") -> Path:
    """A gzip file whose first line is ``megabytes`` MB of zero bytes (1 GB: about 1 MB), then ``rest``: one member
    of 16 MB of zeros, compressed once and repeated (gzip members follow one another), then one of ``rest``."""
    member = zlib.compressobj(9, zlib.DEFLATED, 31)
    zeros = member.compress(bytes(16 << 20)) + member.flush()
    last = zlib.compressobj(9, zlib.DEFLATED, 31)
    path.write_bytes(zeros * (megabytes // 16) + last.compress(rest) + last.flush())
    return path
