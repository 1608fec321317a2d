"""Character offsets are read a whole column at a time, and agree with a plain Python reading of each cell."""

from __future__ import annotations

import re

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evalcore.errors import InputError
from evalcore.readers.offsets import MAX_OFFSET, NO_OFFSET, offsets


def plain(cells: list[str | None]) -> list[int] | int:
    """Each cell as Python reads it: blank (or None) -> no offset; a decimal number that is whole and 0 or more ->
    that number; anything else -> the 0-based row of the first such cell is returned instead of the list."""
    out = []
    for row, cell in enumerate(cells):
        text = None if cell is None else cell.strip()
        if not text:
            out.append(NO_OFFSET)
            continue
        if not re.fullmatch(r"[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?", text):
            return row
        value = float(text)
        if value < 0 or value != int(value) or value > MAX_OFFSET:
            return row
        out.append(int(value))
    return out


def error(row, expected, text):
    return InputError(expected, line=row + 1, where="row", text=str(text))


cells = st.one_of(st.none(), st.integers(0, 10 ** 9).map(str), st.integers(-50, 50).map(str),
                  st.integers(MAX_OFFSET - 3, MAX_OFFSET + 3).map(str), st.integers(0, 2 ** 70).map(str),
                  st.sampled_from(["", " ", " 7 ", "3.0", "2.5", "1e3", "1.5e1", "-0", "+4", "five", "nan", "inf",
                                   "0x10", "1_0", "5.", ".5", "07"]))


@given(st.lists(cells, max_size=12))
@settings(max_examples=300, deadline=None)
def test_text_offsets_agree_with_a_plain_reading(values) -> None:
    expected = plain(values)
    if isinstance(expected, int):
        with pytest.raises(InputError) as info:
            offsets(pa.array(values, pa.string()), "start", error)
        assert info.value.line == expected + 1
    else:
        assert offsets(pa.array(values, pa.string()), "start", error).tolist() == expected


def test_numbers_and_python_values_of_every_kind() -> None:
    assert offsets(pa.array([0, None, 7]), "end", error).tolist() == [0, -1, 7]
    assert offsets(np.array([1.0, np.nan, 3.0]), "end", error).tolist() == [1, -1, 3]
    assert offsets([None, "4", 5], "end", error).tolist() == [-1, 4, 5]
    assert offsets(pa.nulls(2), "end", error).tolist() == [-1, -1]
    for bad, row in (([0, -2], 2), ([1.0, 2.5], 2), ([float("inf")], 1), ([True], 1)):
        with pytest.raises(InputError, match=rf"row {row}: expected a whole number of characters in end"):
            offsets(bad, "end", error)


@pytest.mark.parametrize("values", [
    pa.array([0, 2**64 - 1], pa.uint64()), pa.array([0, MAX_OFFSET + 1]), [0, 2**64 - 1], [0, 2**80], [0.0, 9e15],
    ["0", "9000000000000000"], pa.array([0, None, 2**63 - 1], pa.int64()),
])
def test_an_offset_past_the_ceiling_is_refused_by_row_whatever_its_type(values) -> None:
    """Item 1 and 2 of round three: 9e15 (a whole number, once accepted and then overflowing int64 sums) and a
    Parquet uint64 of 2**64 - 1 (once an ArrowInvalid) are refused by row, saying the ceiling."""
    with pytest.raises(InputError) as info:
        offsets(values, "end", error)
    assert info.value.line == 2 + (isinstance(values, pa.Array) and values.null_count > 0)
    assert info.value.expected == ("an offset in end of at most 1,099,511,627,776 characters (2**40; no document "
                                   "evalcore reads is longer)")


def test_offsets_up_to_the_ceiling_of_every_integer_type_are_read() -> None:
    for kind in (pa.uint8(), pa.int16(), pa.uint32(), pa.int64(), pa.uint64()):
        assert offsets(pa.array([0, None, 7], kind), "end", error).tolist() == [0, -1, 7]
    assert offsets(pa.array([MAX_OFFSET], pa.uint64()), "end", error).tolist() == [MAX_OFFSET]
    assert offsets([str(MAX_OFFSET), None], "end", error).tolist() == [MAX_OFFSET, -1]
