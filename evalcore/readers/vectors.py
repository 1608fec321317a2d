"""Query and doc vectors: Parquet (an id column and a list-of-float column), JSONL (``{"id", "vector"}``) or a
``.npy`` matrix with an ids file beside it, read into one float32 matrix per file.

Every file is opened through `evalcore.readers.sources` (gzip, size limit, regular files only), ids obey the
same length limit as run and label ids, and every mistake is a `VectorFileError` naming the file and the row (or
line): rows of different lengths, NaN or infinite values, a repeated id, an empty file, a JSON line nested deeper
than `nesting.MAX_NESTING` (checked before Arrow's parser, which such a line crashes). `check_dimensions` and
`labeled_only` check a query file against the doc file and the labels. The matrix is float32 and C-contiguous,
held once: the searches in `evalcore.vectors` read it in blocks and never copy it whole.
"""

from __future__ import annotations

import io
import os
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Union

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.json as pa_json

from ..errors import InputError, VectorFileError, invalid_parameter
from ..warning_log import EvalWarning, plural
from .ids import first_long_id, long_id_error
from .nesting import MAX_NESTING, deepest_line
from .json_files import content_lines, is_json_id, read_jsonl_records
from .parquet_files import read_parquet_columns
from .sources import Source, SourceLike, open_source, text_line_limit

VECTOR_FORMATS = ("parquet", "jsonl", "npy")
ID_COLUMNS = ("id", "_id", "doc_id", "docid", "query_id", "query", "qid", "query-id", "corpus-id")
"""Names of the id column in a Parquet file, first found wins (case-insensitive)."""
VECTOR_COLUMNS = ("vector", "embedding", "embeddings", "values", "emb")
"""Names of the vector column in a Parquet file (and the JSONL key), first found wins."""
IDS_SUFFIXES = (".ids.txt", ".ids")
"""The ids file beside ``NAME.npy``: ``NAME.ids.txt`` or ``NAME.ids``, one id per line."""
_NPY_MAGIC = b"\x93NUMPY"


@dataclass(eq=False)
class Vectors:
    """One file of vectors: ``ids[i]`` is the id of row ``i`` of ``matrix`` (float32, C-contiguous, finite), found
    on row (or line, ``where``) ``rows[i]`` of the file (None: row ``i + 1``), so a later check names the place."""

    name: str
    ids: np.ndarray
    matrix: np.ndarray
    warnings: tuple[EvalWarning, ...] = field(default=())
    rows: np.ndarray | None = None
    where: str = "row"

    def place(self, i: int) -> int:
        """The row (or line) number in the file of row ``i``."""
        return int(self.rows[i]) if self.rows is not None else i + 1

    def subset(self, keep: np.ndarray) -> "Vectors":
        """The rows where ``keep`` is True (a copy), each still named by its place in the file."""
        places = self.rows if self.rows is not None else np.arange(1, self.n + 1)
        return Vectors(self.name, self.ids[keep], np.ascontiguousarray(self.matrix[keep]), self.warnings,
                       places[keep], self.where)

    @property
    def n(self) -> int:
        return int(self.matrix.shape[0])

    @property
    def dims(self) -> int:
        return int(self.matrix.shape[1])

    @property
    def nbytes(self) -> int:
        return int(self.matrix.nbytes)

    def __repr__(self) -> str:
        return f"Vectors(name={self.name!r}, n={self.n}, dims={self.dims})"


VectorsLike = Union[Vectors, SourceLike]


def read_vectors(source: VectorsLike, *, ids: SourceLike | None = None, format: str | None = None,
                 name: str | None = None) -> Vectors:
    """Read query or doc vectors from a path, bytes or an upload.

    ``format`` is ``parquet``, ``jsonl`` or ``npy`` (default: from the content, then the extension). A ``.npy``
    matrix needs its ids: ``ids`` (a file of one id per line), else ``NAME.ids.txt`` or ``NAME.ids`` beside it.
    """
    if isinstance(source, Vectors):
        return source
    src = open_source(source, name)
    fmt = _detect(src, format)
    if fmt == "npy":
        ids_source = ids if ids is not None else _ids_beside(source, src.name)
        parts = _from_npy(src, open_source(ids_source))
    elif fmt == "parquet":
        parts = _from_parquet(src)
    else:
        parts = _from_jsonl(src)
    id_values, matrix, where, row_base = parts
    return _finish(src.name, id_values, matrix, where, row_base)


def _detect(src: Source, explicit: str | None) -> str:
    if explicit is not None:
        key = explicit.strip().lower().lstrip(".")
        key = {"pq": "parquet", "ndjson": "jsonl", "numpy": "npy"}.get(key, key)
        if key not in VECTOR_FORMATS:
            raise invalid_parameter("vectors format", "one of " + ", ".join(VECTOR_FORMATS), explicit)
        return key
    head = _first_bytes(src)
    if head.startswith(_NPY_MAGIC):
        return "npy"
    if head.startswith(b"PAR1"):
        return "parquet"
    if src.extension in (".npy", ".parquet", ".pq"):
        return "npy" if src.extension == ".npy" else "parquet"
    return "jsonl"


def _first_bytes(src: Source) -> bytes:
    """The first bytes of the (decompressed) file; neither read nor inflated whole for them."""
    return src.head(8)


def _ids_beside(source: object, display: str) -> Path:
    if isinstance(source, (str, os.PathLike)):
        base = Path(source)
        stem = base.name.removesuffix(".gz")
        stem = stem.removesuffix(".npy")
        for suffix in IDS_SUFFIXES:
            candidate = base.with_name(stem + suffix)
            if candidate.exists():
                return candidate
    raise VectorFileError(f"an ids file beside the .npy matrix (NAME{IDS_SUFFIXES[0]} or NAME{IDS_SUFFIXES[1]}, "
                          "one id per line), or the ids file given with it", source=display)


# ----------------------------------------------------------------------------- formats


def _from_npy(src: Source, ids_src: Source) -> tuple[list[str], np.ndarray, str, int]:
    try:
        path = src.binary_path
        matrix = np.load(path if path is not None else io.BytesIO(src.data), allow_pickle=False)
    except ValueError as exc:
        raise VectorFileError(f"a .npy matrix of numbers ({exc})", source=src.name) from None
    except Exception as exc:  # numpy raises several types for a damaged header
        raise VectorFileError(f"a readable .npy file ({type(exc).__name__}: {exc})", source=src.name) from None
    if matrix.ndim != 2 or not (np.issubdtype(matrix.dtype, np.floating) or np.issubdtype(matrix.dtype, np.integer)):
        raise VectorFileError("a 2-D .npy matrix of numbers (one row per id)", source=src.name,
                              text=f"shape {matrix.shape}, dtype {matrix.dtype}")
    lines = ids_src.text().split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    if len(lines) != matrix.shape[0]:
        raise VectorFileError(f"one id per line for each of the {matrix.shape[0]:,} rows of {src.name}",
                              source=ids_src.name, text=f"{len(lines):,} lines")
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            raise VectorFileError("an id on every line", source=ids_src.name, line=number, text=line)
    return [line.strip() for line in lines], matrix, "row", 1


def _from_parquet(src: Source) -> tuple[list[str] | pa.Array, np.ndarray, str, int]:
    """The id and vector columns, read within the memory budget (`evalcore.readers.parquet_files`: a file whose
    vectors decode past it is refused before they are read)."""

    def choose(names: tuple[str, ...]) -> list[str]:
        found = [_column(list(names), ID_COLUMNS), _column(list(names), VECTOR_COLUMNS)]
        if None in found:
            raise VectorFileError(f"an id column ({', '.join(ID_COLUMNS[:3])}, ...) and a vector column "
                                  f"({', '.join(VECTOR_COLUMNS[:3])}, ...)", source=src.name,
                                  text=", ".join(map(str, names)))
        return found

    try:
        table, _ = read_parquet_columns(src, choose=choose)
    except VectorFileError:
        raise
    except InputError as exc:
        raise VectorFileError(exc.expected, source=exc.source, line=exc.line, text=exc.text) from None
    id_col, vec_col = table.column_names
    ids = _id_strings(table.column(id_col).combine_chunks(), src.name, "row", 1)
    matrix = _list_matrix(table.column(vec_col).combine_chunks(), src.name, "row", 1)
    return ids, matrix, "row", 1


def _column(names: list[str], aliases: tuple[str, ...]) -> str | None:
    lowered = {str(n).strip().lower(): n for n in reversed(names)}
    for alias in aliases:
        if alias in lowered:
            return lowered[alias]
    return None


def _from_jsonl(src: Source) -> tuple[pa.Array | list[str], np.ndarray, str, np.ndarray]:
    """JSONL through Arrow's parser (fast); a file it refuses, or reads with gaps or mixed types, is read again
    line by line, which either reads it (ids of mixed types) or names the first bad line exactly."""
    src.line_limit = text_line_limit()  # counted as a gzip file inflates
    lines = content_lines(src.data)
    if not len(lines):
        raise VectorFileError("at least one vector", source=src.name)
    _check_nesting(src)  # before Arrow's parser, which a deeply nested line crashes (it recurses once per level)
    try:
        table = pa_json.read_json(io.BytesIO(src.data), read_options=pa_json.ReadOptions(block_size=1 << 24))
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return _jsonl_slow(src)
    id_col, vec_col = _column(table.column_names, ID_COLUMNS), _column(table.column_names, VECTOR_COLUMNS)
    if id_col is None or vec_col is None or table.num_rows != len(lines):
        return _jsonl_slow(src)
    ids, vectors = table.column(id_col).combine_chunks(), table.column(vec_col).combine_chunks()
    id_ok = pa.types.is_string(ids.type) or pa.types.is_large_string(ids.type) or pa.types.is_integer(ids.type)
    vec_ok = pa.types.is_list(vectors.type) and (pa.types.is_floating(vectors.type.value_type) or
                                                 pa.types.is_integer(vectors.type.value_type))
    if not (id_ok and vec_ok) or ids.null_count or vectors.null_count or vectors.flatten().null_count:
        return _jsonl_slow(src)
    return _id_strings(ids, src.name, "line", lines), _list_matrix(vectors, src.name, "line", lines), "line", lines


def _check_nesting(src: Source) -> None:
    """Refuse a line nested deeper than `MAX_NESTING`, naming it, before any JSON parser sees the file."""
    found = deepest_line(src.data)
    if found is not None:
        line, _, offset = found
        start = src.data.rfind(b"\n", 0, offset) + 1
        raise VectorFileError(f"JSON nested at most {MAX_NESTING} levels deep (a vector line has 2: an object holding "
                              "a list of numbers)", source=src.name, line=line,
                              text=bytes(src.data[start:start + 60]).decode("utf-8", "replace") + "...")


def _jsonl_slow(src: Source) -> tuple[list[str], np.ndarray, str, np.ndarray]:
    """Line by line: ids of any JSON id type, every line checked, the first bad one named."""
    try:
        records = read_jsonl_records(src)
    except VectorFileError:
        raise
    except InputError as exc:
        raise VectorFileError(exc.expected, source=exc.source, line=exc.line, text=exc.text) from None
    ids, vectors, numbers = [], [], []
    for number, record in records:
        vector = next((record[k] for k in VECTOR_COLUMNS if k in record), None)
        ident = next((record[k] for k in ID_COLUMNS if k in record), None)
        if not is_json_id(ident) or not isinstance(vector, list):
            raise VectorFileError('{"id": ..., "vector": [numbers, ...]} on each line', source=src.name, line=number,
                                  text=src.lines()[number - 1])
        for value in vector:
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise VectorFileError("a vector of numbers", source=src.name, line=number, text=repr(value)[:80])
        if vectors and len(vector) != len(vectors[0]):
            raise _uneven(src.name, "line", number, len(vectors[0]), len(vector), numbers[0])
        ids.append(str(ident)); vectors.append(vector); numbers.append(number)
    if not vectors:
        raise VectorFileError("at least one vector", source=src.name)
    with np.errstate(over="ignore"):
        matrix = np.array(vectors, dtype=np.float64).reshape(len(vectors), len(vectors[0]))
    return ids, matrix, "line", np.asarray(numbers)


# ----------------------------------------------------------------------------- shared checks


def _place(rows: np.ndarray | int, row: int) -> int:
    """The row (1-based) or line number of 0-based row ``row``."""
    return int(rows[row]) if isinstance(rows, np.ndarray) else row + rows


def _id_strings(values: pa.Array, display: str, where: str, rows) -> pa.Array:
    if pa.types.is_integer(values.type):
        values = pc.cast(values, pa.string())
    elif pa.types.is_binary(values.type) or pa.types.is_large_binary(values.type):
        try:
            values = pc.cast(values, pa.string())
        except pa.ArrowInvalid:
            raise VectorFileError("ids as UTF-8 text", source=display) from None
    elif not (pa.types.is_string(values.type) or pa.types.is_large_string(values.type)):
        raise VectorFileError("an id column of text or whole numbers", source=display, text=str(values.type))
    if values.null_count:
        row = pc.index(pc.is_null(values), True).as_py()
        raise VectorFileError("an id on every row", source=display, line=_place(rows, row), where=where)
    too_long = first_long_id(values)
    if too_long is not None:
        raise long_id_error(values[too_long].as_py(), "an id", display, _place(rows, too_long), where)
    return values


def _list_matrix(values: pa.Array, display: str, where: str, rows) -> np.ndarray:
    """A list (or fixed-size list) column of numbers as an (n, d) float32 matrix, every row the same length."""
    if pa.types.is_fixed_size_list(values.type):
        width = values.type.list_size
        lengths = np.full(len(values), width, dtype=np.int64)
    elif pa.types.is_list(values.type) or pa.types.is_large_list(values.type):
        lengths = pc.list_value_length(values).to_numpy(zero_copy_only=False)
    else:
        raise VectorFileError("a vector column holding lists of numbers", source=display, text=str(values.type))
    if values.null_count:
        row = pc.index(pc.is_null(values), True).as_py()
        raise VectorFileError("a vector on every row", source=display, line=_place(rows, row), where=where)
    if not len(values):
        return np.zeros((0, 0), dtype=np.float32)
    width = int(lengths[0])
    uneven = np.flatnonzero(lengths != width)
    if len(uneven):
        row = int(uneven[0])
        raise _uneven(display, where, _place(rows, row), width, int(lengths[row]), _place(rows, 0))
    flat = values.flatten()
    if not (pa.types.is_floating(flat.type) or pa.types.is_integer(flat.type)):
        raise VectorFileError("vectors of numbers", source=display, text=str(flat.type))
    if flat.null_count:
        at = pc.index(pc.is_null(flat), True).as_py()
        raise VectorFileError("a number at every position of every vector", source=display,
                              line=_place(rows, at // max(width, 1)), where=where, text="null")
    with np.errstate(over="ignore"):  # a float64 past float32's range becomes inf, refused by `_finish`
        return np.ascontiguousarray(flat.to_numpy(zero_copy_only=False).astype(np.float32, copy=False)
                                    .reshape(len(values), width))


def _uneven(display: str, where: str, place: int, width: int, got: int, first: int) -> VectorFileError:
    return VectorFileError(f"{plural(width, 'number')} in every vector, as in {where} {first}", source=display,
                           line=place, where=where, text=plural(got, 'number'))


def _finish(display: str, ids: Iterable[str] | pa.Array, matrix: np.ndarray, where: str, rows) -> Vectors:
    if matrix.shape[0] == 0:
        raise VectorFileError("at least one vector", source=display)
    if matrix.shape[1] == 0:
        raise VectorFileError("vectors with at least one number", source=display, line=_place(rows, 0), where=where)
    with np.errstate(over="ignore"):
        matrix = np.ascontiguousarray(matrix, dtype=np.float32)  # a float64 past float32's range becomes inf
    if not np.isfinite(matrix).all():
        bad_rows = np.flatnonzero(~np.isfinite(matrix).all(axis=1))
        row = int(bad_rows[0])
        column = int(np.flatnonzero(~np.isfinite(matrix[row]))[0])
        raise VectorFileError("finite numbers in every vector (no NaN or infinity, and within float32's range)",
                              source=display, line=_place(rows, row), where=where,
                              text=f"{matrix[row, column]} at position {column + 1}")
    id_array = ids if isinstance(ids, pa.Array) else pa.array(list(ids), type=pa.string())
    if isinstance(ids, list):
        row = first_long_id(id_array)
        if row is not None:
            raise long_id_error(ids[row], "an id", display, _place(rows, row), where)
    values = np.asarray(id_array.to_pylist(), dtype=object)
    _check_unique(values, display, where, rows)
    places = rows if isinstance(rows, np.ndarray) else None if rows == 1 else np.arange(rows, rows + len(values))
    return Vectors(display, values, matrix, rows=places, where=where)


def _check_unique(values: np.ndarray, display: str, where: str, rows) -> None:
    order = np.argsort(values, kind="stable")
    ordered = values[order]
    same = np.flatnonzero(ordered[1:] == ordered[:-1])
    if len(same):
        repeats = order[same + 1]
        row = int(repeats.min())  # the first row that repeats an earlier id
        first = int(order[np.searchsorted(ordered, values[row])])
        raise VectorFileError(f"each id once (it is also on {where} {_place(rows, first)})", source=display,
                              line=_place(rows, row), where=where, text=str(values[row]))


def check_dimensions(queries: Vectors, docs: Vectors) -> None:
    """Query and doc vectors must have the same number of dimensions (both made by the same model)."""
    if queries.dims != docs.dims:
        raise VectorFileError(f"query vectors with as many numbers as the doc vectors ({docs.dims:,} in {docs.name})",
                              source=queries.name, line=1, where="row", text=f"{queries.dims:,} numbers")


def labeled_only(queries: Vectors, labeled: Iterable[str], labels_name: str) -> tuple[Vectors, tuple[EvalWarning, ...]]:
    """The query vectors of the labeled queries, in the file's order; an error when none is labeled.

    Query vectors without labels are left out (reported); labeled queries without a vector stay in the labels and
    score 0, as a query missing from a run does (reported).
    """
    wanted = np.asarray(list(labeled), dtype=object)
    keep = np.isin(queries.ids, wanted)
    if not keep.any():
        raise VectorFileError(f"query ids that match the labeled queries of {labels_name} (none of the "
                              f"{queries.n:,} does; labeled queries look like {wanted[0]!r})" if len(wanted) else
                              f"labeled queries in {labels_name} to match", source=queries.name, line=1, where="row",
                              text=str(queries.ids[0]))
    warnings = []
    extra = int((~keep).sum())
    if extra:
        warnings.append(EvalWarning("unlabeled_query_vectors", f"{queries.name}: {plural(extra, 'query vector')} "
                                    f"without labels in {labels_name} left out", extra))
    missing = int((~np.isin(wanted, queries.ids)).sum())
    if missing:
        warnings.append(EvalWarning("labeled_query_without_vector", f"{labels_name}: {plural(missing, 'labeled query', 'labeled queries')} "
                                    f"with no vector in {queries.name}; each scores 0, as a query missing from a "
                                    "run does", missing))
    if extra:
        queries = queries.subset(keep)
    return replace(queries, warnings=tuple(warnings)), tuple(warnings)
