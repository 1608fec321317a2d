"""Metrics per slice of the labeled queries (by ``source``, ``split``, ``blind``), each with its own n.

A slice too small to rank is kept and marked (``small``), never dropped: a reader sees that
"failed_search: 0.40 (n = 9)" exists and that it cannot be compared with the others.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd

from ..errors import UsageError, invalid_parameter
from ..metrics.evaluation import Evaluation
from ..metrics.measures import Measure
from ..stats.intervals import mean_intervals

DEFAULT_MIN_SLICE_N = 30
MISSING_VALUE = "(not set)"


def slice_values(evaluation: Evaluation, field: str) -> np.ndarray:
    """The value of ``field`` for each evaluated query, as text (``(not set)`` where missing)."""
    values = evaluation.labels.field(field)
    if values is None:
        raise UsageError(f"The labels have no {field!r} field to slice by; fields present: "
                         f"{', '.join(evaluation.labels.query_info.columns) or 'none'}.")
    queries = evaluation.results[0].queries
    aligned = values.reindex(queries).astype(object)
    # Values as written (``Support`` and ``support`` are different slices); booleans as true/false.
    aligned = aligned.map(lambda v: str(v).lower() if isinstance(v, bool) else v)
    text = aligned.where(aligned.notna(), MISSING_VALUE).astype(str)
    return text.to_numpy(dtype=object)


def slice_metrics(
    evaluation: Evaluation,
    field: str,
    measures: Sequence[str | Measure] | None = None,
    *,
    min_n: int = DEFAULT_MIN_SLICE_N,
) -> pd.DataFrame:
    """One row per run, slice value and measure: mean, interval, n, and whether it is too small.

    Intervals use the evaluation's level and seed, drawn within each slice.
    """
    if isinstance(min_n, bool) or not isinstance(min_n, int) or min_n < 1:
        raise invalid_parameter("min_n", "an integer >= 1", min_n)
    values = slice_values(evaluation, field)
    records = []
    for value in sorted(set(values.tolist())):
        rows = values == value
        columns, keys = [], []
        for result in evaluation.results:
            chosen = [Measure.parse(m) for m in measures] if measures else result.measures
            for m in chosen:
                columns.append(result.score(m)[rows])
                keys.append((result, m))
        intervals = mean_intervals(np.column_stack(columns), level=evaluation.level,
                                   n_resamples=evaluation.n_resamples, rng=evaluation.seed)
        n = int(rows.sum())
        for (result, m), interval in zip(keys, intervals):
            records.append({
                "run": result.name, "model": result.model, "field": field, "value": value, "metric": str(m),
                "mean": interval.point, "ci_low": interval.low, "ci_high": interval.high, "n": n,
                "small": n < min_n, "labels": evaluation.labels.name, "fingerprint": evaluation.labels.fingerprint,
            })
    return pd.DataFrame.from_records(records)

