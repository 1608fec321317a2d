"""Character offsets (``start``, ``end``) in a document's text: where a chunk lies (chunk maps) and where the evidence
is (labels' spans). 0-based, end exclusive, whole numbers of 0 or more; a row may give neither.

`offset_pairs` turns two columns (Arrow, NumPy, pandas or lists: text, integers of any width or sign, floats) into
int64 arrays, with `NO_OFFSET` where a row gives none, checking a whole column at once; the first row that breaks a
rule is handed to the caller's ``error`` so that each reader names the place as its file has it (a line, a row).
No offset is past `MAX_OFFSET`, the one ceiling every reader of offsets keeps, so sums and products of offsets stay
far inside int64 wherever they are used.
"""

from __future__ import annotations

from typing import Callable

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from ..errors import InputError

NO_OFFSET = -1
"""``start`` / ``end`` of a row that gives no place."""

RowError = Callable[[int, str, "str | None"], InputError]
"""``error(row, expected, text)``: the message naming 0-based row ``row`` (``text`` None: the row as written)."""

MAX_OFFSET = 1 << 40
"""The largest character offset accepted (2**40, 1,099,511,627,776): 512 times the largest file evalcore reads by
default (``EVALCORE_MAX_FILE_MB``, 2,048 MB), so no document it can read is longer, and a float holds every whole
number up to it exactly. A larger one (9e15, 2**64 - 1) is an error naming its row, before any sum is made of it."""
_NUMBER = r"^[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?$"


def offset_pairs(start, end, error: RowError, *, empty: bool = True,
                 names: tuple[str, str] = ("start", "end")) -> tuple[np.ndarray, np.ndarray]:
    """``start`` and ``end`` as int64 arrays (`NO_OFFSET` where blank). Each row gives both or neither, and ``start``
    is at most ``end`` (below it when ``empty`` is False: an evidence span holds at least one character); a value
    that is not a whole number from 0 to `MAX_OFFSET`, or a row breaking a rule, is ``error``. ``names``: the two
    columns as the file names them, for the message."""
    starts, ends = offsets(start, names[0], error), offsets(end, names[1], error)
    given = (starts >= 0) != (ends >= 0)
    if given.any():
        row = int(np.flatnonzero(given)[0])
        raise error(row, "both start and end, or neither, on each row", None)
    backwards = starts > ends
    if backwards.any():
        row = int(np.flatnonzero(backwards)[0])
        raise error(row, "start at most end (character offsets, end exclusive)", None)
    if not empty:
        hollow = (starts >= 0) & (starts == ends)
        if hollow.any():
            row = int(np.flatnonzero(hollow)[0])
            raise error(row, "start below end (an evidence span of at least one character; end exclusive)", None)
    return starts, ends


def offsets(values, column: str, error: RowError) -> np.ndarray:
    """One column of character offsets as int64, `NO_OFFSET` where a row gives none (null, NaN or blank text)."""
    array = _arrow(values)
    if pa.types.is_null(array.type):
        return np.full(len(array), NO_OFFSET, dtype=np.int64)
    if pa.types.is_string(array.type) or pa.types.is_large_string(array.type):
        return _from_text(array, column, error)
    if pa.types.is_integer(array.type):
        return _from_integers(array, column, error)
    if pa.types.is_floating(array.type):
        return _whole(array.cast(pa.float64()).to_numpy(zero_copy_only=False), column, error)
    raise error(0, _expected(column), None)


def _expected(column: str) -> str:
    return f"a whole number of characters in {column} (0 or more)"


def too_large(column: str) -> str:
    """What an offset past `MAX_OFFSET` is told it should be."""
    return (f"an offset in {column} of at most {MAX_OFFSET:,} characters (2**40; no document evalcore reads is "
            "longer)")


def _refuse(wrong: np.ndarray, large: np.ndarray, column: str, error: RowError) -> None:
    """``error`` at the first row that is ``wrong`` (no whole number of 0 or more) or ``large`` (past `MAX_OFFSET`),
    each told what it should be; nothing when there is none."""
    first_wrong, first_large = np.flatnonzero(wrong)[:1], np.flatnonzero(large)[:1]
    if not len(first_wrong) and not len(first_large):
        return
    if len(first_large) and (not len(first_wrong) or first_large[0] < first_wrong[0]):
        raise error(int(first_large[0]), too_large(column), None)
    raise error(int(first_wrong[0]), _expected(column), None)


def _from_integers(array: pa.Array, column: str, error: RowError) -> np.ndarray:
    """Integers of any width and sign (a Parquet uint64 of 2**64 - 1 too) as int64: checked before the cast, in the
    column's own type, so no value wraps or fails to convert."""
    valid = None if not array.null_count else array.is_valid().to_numpy(zero_copy_only=False)
    numbers = array.to_numpy(zero_copy_only=False) if valid is None else \
        pc.fill_null(array, 0).to_numpy(zero_copy_only=False)
    if len(numbers):
        wrong = numbers < 0 if pa.types.is_signed_integer(array.type) else np.zeros(len(numbers), dtype=bool)
        _refuse(wrong, numbers > MAX_OFFSET, column, error)
    out = numbers.astype(np.int64)
    if valid is not None:
        out[~valid] = NO_OFFSET
    return out


def _arrow(values) -> pa.Array:
    """Any column as one Arrow array: text stays text, numbers numbers (Python lists of both become text, and so do
    whole numbers past what int64 holds)."""
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks()
    if isinstance(values, pa.Array):
        return values.dictionary_decode() if pa.types.is_dictionary(values.type) else values
    if isinstance(values, pd.Series):
        values = values.to_numpy(dtype=object) if values.dtype == object else values.to_numpy()
    try:
        return pa.array(values, from_pandas=True)
    except (pa.ArrowException, TypeError, ValueError, OverflowError):  # mixed numbers and text: every value as text
        return pa.array([None if v is None or v is pd.NA else str(v) for v in values], pa.string())


def _from_text(array: pa.Array, column: str, error: RowError) -> np.ndarray:
    if not array.null_count and _plain_digits(array):  # the usual case: nothing blank, nothing padded
        return pc.cast(array, pa.int64()).to_numpy(zero_copy_only=False)
    trimmed = pc.utf8_trim_whitespace(array)
    blank = pc.fill_null(pc.equal(trimmed, ""), True)
    filled = pc.if_else(blank, "0", trimmed)
    blank_rows = blank.to_numpy(zero_copy_only=False)
    if _plain_digits(filled):
        return np.where(blank_rows, NO_OFFSET, pc.cast(filled, pa.int64()).to_numpy(zero_copy_only=False))
    malformed = pc.invert(pc.match_substring_regex(filled, _NUMBER))
    numbers = pc.cast(pc.if_else(malformed, "0", filled), pa.float64()).to_numpy(zero_copy_only=False).copy()
    numbers[malformed.to_numpy(zero_copy_only=False)] = -1.0  # no number at all: as wrong as a negative one
    numbers[blank_rows] = np.nan
    return _whole(numbers, column, error)


def _plain_digits(array: pa.Array) -> bool:
    """Every value is 1 to 12 ASCII digits (no sign, fraction or "0x"): a whole number below `MAX_OFFSET`. Longer
    ones go the way of any number, to be refused as too large by row."""
    return bool(pc.all(pc.ascii_is_decimal(array)).as_py()) and pc.max(pc.binary_length(array)).as_py() <= 12


def _whole(numbers: np.ndarray, column: str, error: RowError) -> np.ndarray:
    """Floats (NaN: none given) as int64 offsets; a fraction, a negative or an infinity is an error, and so is a
    number past `MAX_OFFSET` (told the ceiling)."""
    given = ~np.isnan(numbers)
    with np.errstate(invalid="ignore"):
        wrong = given & ((numbers < 0) | ~np.isfinite(numbers) | (numbers != np.floor(numbers)))
        large = given & ~wrong & (numbers > MAX_OFFSET)
    _refuse(wrong, large, column, error)
    return np.where(given, np.nan_to_num(numbers, nan=NO_OFFSET), NO_OFFSET).astype(np.int64)
