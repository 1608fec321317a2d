"""Doc vectors larger than the memory budget, searched from disk: a float32 ``.npy`` is memory-mapped and read a
block of rows at a time, each block's pages let go once it is used, so resident memory stays near one block
however large the matrix (2,000,000 x 768 float32 is 6 GB; under a 1 GB budget it is never held whole).

`EVALCORE_MAX_VECTOR_MB` (default `DEFAULT_MAX_VECTOR_MB`) is the budget: doc vectors within it are read whole as
always (`evalcore.readers.vectors.read_vectors`, as are files of other formats); a larger uncompressed float32
``.npy`` is opened here instead
(its values checked finite block by block, its ids read as the reader reads them). The search reads it through
`MappedMatrix` exactly as it reads an array (``docs[d0:d1]``, ``docs[rows, :d]``), and scales rows to unit length
block by block when cosine needs it, so the runs are the same as from the matrix held whole. What a variant holds
of its own (int8 codes, sign bits, an approximate index) must fit the budget: `check_budget` says so before
anything is searched.
"""

from __future__ import annotations

import mmap
import os
from pathlib import Path

import numpy as np
import pyarrow as pa

from ..errors import UsageError, VectorFileError
from ..readers.ids import first_long_id, long_id_error
from ..readers.sources import open_source
from ..readers.vectors import IDS_SUFFIXES, Vectors, VectorsLike, read_vectors
from .search import doc_rows

MAX_VECTOR_ENV = "EVALCORE_MAX_VECTOR_MB"
DEFAULT_MAX_VECTOR_MB = 1024
"""Doc vectors up to this many MB are held in memory; larger ones are searched from disk (``EVALCORE_MAX_VECTOR_MB``
overrides)."""
_MB = 1 << 20
_COPY_BYTES = 2 << 20
"""Bytes of a file copied (and let go) at a time while a block of rows is read."""


def max_vector_bytes() -> int:
    """The memory budget for doc vectors, in bytes: ``EVALCORE_MAX_VECTOR_MB`` or the default."""
    return megabytes_setting(MAX_VECTOR_ENV, DEFAULT_MAX_VECTOR_MB)


def megabytes_setting(name: str, default_mb: int) -> int:
    """A memory budget set in megabytes by the environment variable ``name`` (unset or blank: ``default_mb``), in
    bytes; anything but a positive, finite number is one `UsageError` sentence naming the variable."""
    raw = os.environ.get(name)
    if raw is None or not raw.strip():
        return default_mb * _MB
    try:
        value = float(raw)
    except ValueError:
        value = -1.0
    if not 0 < value < float("inf"):
        raise UsageError(f"{name} must be a positive number of megabytes. Got {raw[:40]!r}.")
    return int(value * _MB)


class MappedMatrix:
    """A C-order float32 matrix in a ``.npy`` file, indexed like an array (rows by slice or by row numbers, then
    optionally columns by slice); every access returns a copy and lets the mapped pages go."""

    ndim = 2
    dtype = np.dtype(np.float32)

    def __init__(self, path: Path, shape: tuple[int, int], offset: int) -> None:
        self.path = Path(path)
        self.shape = (int(shape[0]), int(shape[1]))
        self._offset = int(offset)
        self._handle = open(self.path, "rb")
        self._map = mmap.mmap(self._handle.fileno(), 0, access=mmap.ACCESS_READ)
        self._array = np.frombuffer(self._map, dtype="<f4", count=self.shape[0] * self.shape[1],
                                    offset=offset).reshape(self.shape)

    @property
    def nbytes(self) -> int:
        return self.shape[0] * self.shape[1] * 4

    def __len__(self) -> int:
        return self.shape[0]

    def __getitem__(self, key) -> np.ndarray:
        rows, columns = key if isinstance(key, tuple) else (key, slice(None))
        if isinstance(rows, slice) and isinstance(columns, slice) and rows.indices(self.shape[0])[2] == 1:
            start, stop, _ = rows.indices(self.shape[0])
            width = len(range(self.shape[1])[columns])
            out = np.empty((max(0, stop - start), width), dtype=np.float32)
            step = max(1, _COPY_BYTES // (4 * self.shape[1]))
            for first in range(start, stop, step):  # a few MB resident at a time, however large the block
                last = min(stop, first + step)
                out[first - start:last - start] = self._array[first:last, columns]
                self._release(first, last)
            return out
        block = np.array(self._array[key], dtype=np.float32, order="C")  # rows picked one by one (few)
        self._release(0, self.shape[0])
        return block

    def _release(self, first: int, last: int) -> None:
        """The pages of rows ``first`` to ``last`` leave this process's resident memory (the file stays in the
        system's cache, so reading them again is cheap)."""
        if not hasattr(mmap, "MADV_DONTNEED"):
            return
        row = 4 * self.shape[1]
        begin = (self._offset + first * row) // mmap.PAGESIZE * mmap.PAGESIZE
        end = min(len(self._map), self._offset + last * row)
        if end > begin:
            self._map.madvise(mmap.MADV_DONTNEED, begin, end - begin)

    def __repr__(self) -> str:
        return f"MappedMatrix({self.path.name!r}, shape={self.shape})"


def on_disk(matrix: object) -> bool:
    """Whether a doc matrix is read from disk (not held in memory)."""
    return isinstance(matrix, MappedMatrix)


def open_doc_vectors(path: VectorsLike, *, ids=None, format: str | None = None) -> Vectors:
    """Doc vectors for a search: held in memory when their float32 matrix fits the budget (`max_vector_bytes`),
    else, for an uncompressed float32 ``.npy`` on disk, a `MappedMatrix` read block by block. Other formats are read
    whole (`read_vectors`, within its file size limit)."""
    budget = max_vector_bytes()
    file = Path(path) if isinstance(path, (str, os.PathLike)) else None
    if file is None or not file.is_file() or format not in (None, "npy"):
        return read_vectors(path, ids=ids, format=format)
    with open(file, "rb") as handle:
        if handle.read(6) != b"\x93NUMPY":  # Parquet, JSONL, gzip: read whole, within their own size limit
            return read_vectors(path, ids=ids, format=format)
        handle.seek(0)
        shape, fortran, dtype, offset = _npy_header(handle, str(file))
    if len(shape) != 2 or shape[0] * shape[1] * 4 <= budget:
        return read_vectors(path, ids=ids, format=format)
    if dtype != np.dtype("<f4") or fortran:
        raise VectorFileError(f"a float32, C-order .npy to search {shape[0]:,} x {shape[1]:,} vectors over the "
                              f"memory budget of {_mb(budget)} from disk (save them with "
                              f"np.save(path, matrix.astype('float32')), or set {MAX_VECTOR_ENV} to hold them)",
                              source=str(file), text=f"{dtype}{', Fortran order' if fortran else ''}")
    if offset + shape[0] * shape[1] * 4 > file.stat().st_size:
        raise VectorFileError(f"{shape[0]:,} x {shape[1]:,} float32 numbers, as its header says", source=str(file),
                              text=f"{file.stat().st_size:,} bytes")
    matrix = MappedMatrix(file, shape, offset)
    _check_finite(matrix, str(file))
    names = _ids(ids if ids is not None else _ids_beside(file), shape[0], str(file))
    return Vectors(str(file), names, matrix)


def _npy_header(handle, display: str) -> tuple[tuple, bool, np.dtype, int]:
    try:
        major, _ = np.lib.format.read_magic(handle)
        read = np.lib.format.read_array_header_1_0 if major == 1 else np.lib.format.read_array_header_2_0
        shape, fortran, dtype = read(handle)
    except Exception as exc:  # numpy raises several types for a damaged header
        raise VectorFileError(f"a readable .npy file ({type(exc).__name__}: {exc})", source=display) from None
    return shape, fortran, dtype, handle.tell()


def _check_finite(matrix: MappedMatrix, display: str) -> None:
    """Every value finite, checked a block of rows at a time; the first bad one named by row and position."""
    rows = doc_rows(matrix)
    for start in range(0, matrix.shape[0], rows):
        block = matrix[start:start + rows]
        bad = ~np.isfinite(block)
        if bad.any():
            row, column = (int(x[0]) for x in np.nonzero(bad))
            raise VectorFileError("finite numbers in every vector (no NaN or infinity)", source=display,
                                  line=start + row + 1, where="row",
                                  text=f"{block[row, column]} at position {column + 1}")


def _ids_beside(file: Path) -> Path:
    stem = file.name.removesuffix(".npy")
    for suffix in IDS_SUFFIXES:
        candidate = file.with_name(stem + suffix)
        if candidate.exists():
            return candidate
    raise VectorFileError(f"an ids file beside the .npy matrix (NAME{IDS_SUFFIXES[0]} or NAME{IDS_SUFFIXES[1]}, "
                          "one id per line), or the ids file given with it", source=str(file))


def _ids(source, rows: int, matrix_name: str) -> np.ndarray:
    """One id per line for each row: none empty, none too long, none repeated (each named by its line)."""
    src = open_source(source)
    lines = src.text().split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    if len(lines) != rows:
        raise VectorFileError(f"one id per line for each of the {rows:,} rows of {matrix_name}", source=src.name,
                              text=f"{len(lines):,} lines")
    values = np.array([line.strip() for line in lines], dtype=object)
    empty = np.flatnonzero(values == "")
    if len(empty):
        raise VectorFileError("an id on every line", source=src.name, line=int(empty[0]) + 1, text=lines[empty[0]])
    too_long = first_long_id(pa.array(values.tolist(), type=pa.string()))
    if too_long is not None:
        raise long_id_error(values[too_long], "an id", src.name, too_long + 1)
    order = np.argsort(values, kind="stable")
    repeated = np.flatnonzero(values[order][1:] == values[order][:-1])
    if len(repeated):
        row = int(order[repeated + 1].min())
        first = int(order[np.searchsorted(values[order], values[row])])
        raise VectorFileError(f"each id once (it is also on line {first + 1})", source=src.name, line=row + 1,
                              text=str(values[row]))
    return values


def check_budget(held: dict[str, int], n_docs: int) -> None:
    """Searching docs from disk, what each variant holds of its own (``held``: bytes by variant name) must fit the
    budget; the first that does not is named with its size."""
    budget = max_vector_bytes()
    for name, size in held.items():
        if size > budget:
            raise UsageError(f"Searching {n_docs:,} docs from disk, {name} would hold {_mb(size)} of its own "
                             f"(its codes or its index), over the memory budget of {_mb(budget)} "
                             f"({MAX_VECTOR_ENV}): raise the budget or leave {name} out.")


def _mb(size: int) -> str:
    """``1,024 MB``, ``0.12 MB``."""
    value = size / _MB
    return f"{value:,.0f} MB" if value >= 10 else f"{value:.2g} MB"
