"""A page model's value as JSON: what a page would show, in a form a test (or a person diffing two runs) can read.

A plain module beside the tests (``from tests.page_models.dump import to_json``). Dataclasses become objects of their
fields, pandas frames ``{"columns": [...], "rows": [[...], ...]}``, series lists, numpy numbers Python numbers, NaN and
pandas' NA ``null``; a `dashboard.loading.Loaded` is its value or its error; a core list that builds its table on
demand (`evalcore.analyses.failures.FailureList`) is that table. Anything else the page would print is written as its
text.
"""

from __future__ import annotations

import dataclasses
import json
import math
from typing import Any

import numpy as np
import pandas as pd


def plain(value: Any) -> Any:
    """``value`` as JSON values (dicts, lists, strings, numbers, booleans, None)."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        return None if math.isnan(value) or math.isinf(value) else float(value)
    if value is pd.NA or value is pd.NaT:
        return None
    if isinstance(value, pd.DataFrame):
        return {"columns": [str(c) for c in value.columns],
                "rows": [[plain(cell) for cell in row] for row in value.itertuples(index=False, name=None)]}
    if isinstance(value, (pd.Series, pd.Index, np.ndarray)):
        return [plain(item) for item in value.tolist()]
    if isinstance(value, pd.Timestamp):
        return value.isoformat()
    if callable(getattr(value, "frame", None)):  # a list whose rows are built as a table when asked for
        return plain(value.frame())
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        if type(value).__name__ == "Loaded":
            return plain(value.value) if value.error is None else {"error": value.error}
        return {f.name: plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, tuple) and hasattr(value, "_fields"):  # a NamedTuple
        return {name: plain(item) for name, item in zip(value._fields, value)}
    if isinstance(value, dict):
        return {str(key): plain(item) for key, item in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [plain(item) for item in value]
    return str(value)


def to_json(value: Any) -> str:
    """``value`` (a page model's value) as a JSON document, keys in the order the model has them."""
    return json.dumps(plain(value), ensure_ascii=False, allow_nan=False)
