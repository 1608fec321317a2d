"""Ids read from a table's column: exact text, and within the length limit.

`id_strings` keeps every id as written (``007`` stays ``007``; a Parquet integer column becomes its digits; a
float column only when every value is a whole number within 2**53); `check_id_lengths` refuses an id longer than
`evalcore.readers.sources.max_id_chars`, naming its line; `table_ids` does both for one column.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa

from ..errors import InputError
from .ids import first_long_id, long_id_error
from .tables import Table


def id_strings(values: pd.Series, table: Table | None = None) -> pd.Series:
    """Ids as strings, exactly as written: ``007`` stays ``007`` and spaces are kept; Parquet
    integers become their text. Missing cells become "" (callers reject empty ids).

    Ids stored as floats must be whole numbers within 2**53 (beyond, distinct ids would merge):
    anything else is an InputError naming the row of ``table`` (when given).
    """
    missing = values.isna().to_numpy()
    if pd.api.types.is_float_dtype(values.dtype):
        numbers = values.to_numpy(dtype=np.float64, na_value=np.nan)
        bad = ~missing & ((numbers != np.floor(numbers)) | (np.abs(numbers) > _EXACT_FLOAT))
        if bad.any():
            row = int(np.flatnonzero(bad)[0])
            expected = f"an id that is text or a whole number up to 2**53 in column {values.name!r}"
            text = repr(float(numbers[row]))
            if table is not None:
                raise table.error(row, expected, text=text)
            raise InputError(expected, line=row + 1, text=text, where="row")
        values = values.fillna(0).astype(np.int64)
    text = values.astype(str)
    if missing.any():
        text = text.where(~missing, "")
    return text


_EXACT_FLOAT = 2.0 ** 53


def table_ids(table: Table, column: str, role: str) -> pd.Series:
    """The ids of one column as `id_strings`, each within `max_id_chars` (else an error naming the row)."""
    text = id_strings(table.frame[column], table)
    check_id_lengths(table, text, role)
    return text


def check_id_lengths(table: "Table", values: pd.Series, role: str) -> None:
    """An InputError naming the row of the first id in ``values`` (strings) longer than `max_id_chars`."""
    row = first_long_id(pa.array(values.to_numpy(dtype=object), type=pa.string(), from_pandas=True))
    if row is not None:
        raise long_id_error(str(values.iloc[row]), role, table.source.name, table.line_of(row), table.where)
