"""Character offsets are read a whole column at a time, and agree with a plain Python reading of each cell."""

from __future__ import annotations

import re

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evalcore.errors import InputError
from evalcore.readers.offsets import NO_OFFSET, offsets


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
        if value < 0 or value != int(value) or value > 2 ** 53:
            return row
        out.append(int(value))
    return out


def error(row, expected, text):
    return InputError(expected, line=row + 1, where="row", text=str(text))


cells = st.one_of(st.none(), st.integers(0, 10 ** 9).map(str), st.integers(-50, 50).map(str),
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
