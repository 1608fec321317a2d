"""Metrics per slice of the labeled queries (by ``source``, ``split``, ``blind``), each with its own n.

A slice too small to rank is kept and marked (``small``), never dropped: a reader sees that
"failed_search: 0.40 (n = 9)" exists and that it cannot be compared with the others.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd

from .errors import UsageError, invalid_parameter
from .evaluation import Evaluation
from .intervals import mean_intervals
from .measures import Measure

SLICE_FIELDS = ("source", "split", "blind")
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


TEAM_SOURCES = ("team_written",)
"""Sources whose queries were written by the team (in the docs' own words), not by customers."""


def source_gap(
    evaluation: Evaluation,
    measures: Sequence[str | Measure] | None = None,
    *,
    team: Sequence[str] = TEAM_SOURCES,
    min_n: int = DEFAULT_MIN_SLICE_N,
) -> pd.DataFrame:
    """Team-written queries against customers' (every other known source): the gap that lets a demo pass and
    production fail. One row per run and measure: both means with their n, the gap (team minus customers) and a
    normal-approximation interval for it (the two groups are different queries, so not paired); ``small`` when
    either group has fewer than ``min_n`` queries. Queries without a source are in neither group.
    """
    from scipy.special import ndtri

    values = slice_values(evaluation, "source")
    is_team = np.isin(values, list(team))
    is_customer = ~is_team & (values != MISSING_VALUE)
    n_team, n_customer = int(is_team.sum()), int(is_customer.sum())
    if not n_team or not n_customer:
        raise UsageError(f"A source gap needs both team-written ({', '.join(team)}) and customer queries; these labels "
                         f"have {n_team} and {n_customer}.")
    z = float(ndtri(0.5 + evaluation.level / 2))
    records = []
    for result in evaluation.results:
        chosen = [Measure.parse(m) for m in measures] if measures else result.measures
        for m in chosen:
            scores = result.score(m)
            a, b = scores[is_team], scores[is_customer]
            gap = float(a.mean() - b.mean())
            se = float(np.sqrt(a.var(ddof=1) / len(a) + b.var(ddof=1) / len(b))) if min(len(a), len(b)) > 1 else np.nan
            records.append({
                "run": result.name, "model": result.model, "metric": str(m), "team_mean": float(a.mean()),
                "n_team": n_team, "customer_mean": float(b.mean()), "n_customer": n_customer, "gap": gap,
                "ci_low": gap - z * se, "ci_high": gap + z * se, "level": evaluation.level,
                "small": min(n_team, n_customer) < min_n, "n": result.n_queries,
                "labels": evaluation.labels.name, "fingerprint": evaluation.labels.fingerprint,
            })
    return pd.DataFrame.from_records(records)
