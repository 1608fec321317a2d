"""Character offsets (``start``, ``end``) in a document's text: where a chunk lies (chunk maps) and where the evidence
is (labels' spans). 0-based, end exclusive, whole numbers of 0 or more; a row may give neither.

`offset_pairs` turns two columns (Arrow, NumPy, pandas or lists: text, integers or floats) into int64 arrays, with
`NO_OFFSET` where a row gives none, checking a whole column at once; the first row that breaks a rule is handed to
the caller's ``error`` so that each reader names the place as its file has it (a line, a row).
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

_LARGEST = 2.0 ** 53
"""Offsets beyond this are refused (floats past it are no longer whole numbers one apart)."""
_NUMBER = r"^[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?$"


def offset_pairs(start, end, error: RowError, *, empty: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """``start`` and ``end`` as int64 arrays (`NO_OFFSET` where blank). Each row gives both or neither, and ``start``
    is at most ``end`` (below it when ``empty`` is False: an evidence span holds at least one character); a value
    that is not a whole number of 0 or more, or a row breaking a rule, is ``error``."""
    starts, ends = offsets(start, "start", error), offsets(end, "end", error)
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
    expected = f"a whole number of characters in {column} (0 or more)"
    if pa.types.is_null(array.type):
        return np.full(len(array), NO_OFFSET, dtype=np.int64)
    if pa.types.is_string(array.type) or pa.types.is_large_string(array.type):
        return _from_text(array, expected, error)
    if pa.types.is_integer(array.type):
        if not array.null_count:  # the common case: whole numbers on every row
            numbers = array.cast(pa.int64()).to_numpy(zero_copy_only=False)
            if len(numbers) and numbers.min() < 0:
                raise error(int(np.flatnonzero(numbers < 0)[0]), expected, None)
            return numbers
        numbers = pc.fill_null(array.cast(pa.int64()), NO_OFFSET).to_numpy(zero_copy_only=False)
        negative = (numbers < 0) & array.is_valid().to_numpy(zero_copy_only=False)
        if negative.any():
            raise error(int(np.flatnonzero(negative)[0]), expected, None)
        return numbers
    if pa.types.is_floating(array.type):
        return _whole(array.cast(pa.float64()).to_numpy(zero_copy_only=False), expected, error)
    raise error(0, expected, None)


def _arrow(values) -> pa.Array:
    """Any column as one Arrow array: text stays text, numbers numbers (Python lists of both become text)."""
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks()
    if isinstance(values, pa.Array):
        return values.dictionary_decode() if pa.types.is_dictionary(values.type) else values
    if isinstance(values, pd.Series):
        values = values.to_numpy(dtype=object) if values.dtype == object else values.to_numpy()
    try:
        return pa.array(values, from_pandas=True)
    except (pa.ArrowException, TypeError, ValueError):  # mixed numbers and text: read every value as text
        return pa.array([None if v is None or v is pd.NA else str(v) for v in values], pa.string())


def _from_text(array: pa.Array, expected: str, error: RowError) -> np.ndarray:
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
    return _whole(numbers, expected, error)


def _plain_digits(array: pa.Array) -> bool:
    """Every value is 1 to 15 ASCII digits (no sign, fraction or "0x"): a whole number int64 holds exactly, below
    the largest offset allowed. Longer ones go the way of any number, to be refused as too large by row."""
    return bool(pc.all(pc.ascii_is_decimal(array)).as_py()) and pc.max(pc.binary_length(array)).as_py() <= 15


def _whole(numbers: np.ndarray, expected: str, error: RowError) -> np.ndarray:
    """Floats (NaN: none given) as int64 offsets; a fraction, a negative, an infinity or anything past 2**53 is an
    error."""
    given = ~np.isnan(numbers)
    with np.errstate(invalid="ignore"):
        bad = given & ((numbers < 0) | (numbers > _LARGEST) | (numbers != np.floor(numbers)))
    if bad.any():
        raise error(int(np.flatnonzero(bad)[0]), expected, None)
    return np.where(given, np.nan_to_num(numbers, nan=NO_OFFSET), NO_OFFSET).astype(np.int64)
