"""Whose words are the queries in? Metrics per segment (e.g. per ``source``) and the gap between two groups.

A set of queries the team wrote in the docs' own words lets a demo pass; customers type
something else and production fails. `segment_gaps` puts a number on that: each segment's
mean, interval and n (from `evalcore.analyses.slices.slice_metrics`), a rank among segments large
enough to rank, and for every run and metric the gap between two groups of segments with a
95% interval and a verdict. The sentence a product manager reads aloud is
`evalcore.report.segments.gap_sentence`'s.

Decisions a user should know
----------------------------
* **Which two groups** (`default_pair`). When a segment is team-written (a value that reads
  ``team_written``, ignoring case and ``-``/space/``_``), the gap is *every other source*
  ("customers' queries") minus the team-written ones: that is the demo-versus-production
  question. Otherwise it is the largest segment minus the second largest (ties by name).
  ``(not set)`` is never part of a default group: queries without a source are neither the
  team's nor known to be customers'. ``a=`` / ``b=`` choose the groups by value instead
  (one value or several; naming only one side compares it with every other set value).
* **Gap** = mean(group a) - mean(group b), each mean over the group's pooled queries, so a
  negative gap means group a (by default the customers) scores lower.
* **Interval for the difference of two independent means.** The two groups hold different
  queries, so nothing is paired; the width comes from each group's own spread.

  - Every score in both groups is 0 or 1 (hit@k, recall@k with one relevant doc): Newcombe's
    hybrid score interval (his method 10), built from the two Wilson intervals the rest of
    evalcore already uses for 0/1 means: ``d - sqrt((p_a - l_a)^2 + (u_b - p_b)^2)`` to
    ``d + sqrt((u_a - p_a)^2 + (p_b - l_b)^2)``. Unlike the plain normal difference it stays
    sensible when a group scores 0% or 100% (a team-written set often does).
  - Otherwise the Welch interval: ``d +/- t * sqrt(v_a/n_a + v_b/n_b)`` with sample variances
    and the Welch-Satterthwaite degrees of freedom. It does not assume equal spreads or sizes
    (60 team-written queries against 260 customers' is the usual shape). Groups are only
    compared when both hold at least ``min_n`` (30 by default) queries, where the mean of a
    bounded score is close to normal; it is closed form, so it is the same on every machine
    and needs no seed, and a test can check it by hand and its coverage by simulation.
    A bootstrap within each group would be no more exact at these sizes and, for every run,
    metric and k on the dashboard, far slower.
  - Both groups constant (every query the same score): the interval is the point, method
    ``constant``. Fewer than 2 queries on a side: no interval (NaN), method ``undefined``.
* **Verdict**: ``lower`` / ``higher`` when the interval excludes 0, ``no clear difference``
  when it does not, ``too few`` when either group has fewer than ``min_n`` queries (the
  numbers are still reported, never hidden). One interval per run and metric, not corrected
  for multiplicity: read one metric, not the most striking of twenty.
* **Small segments** (fewer than ``min_n`` queries) are kept and marked ``small``; they get
  no rank.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Sequence

import numpy as np
import pandas as pd
from scipy.special import ndtri, stdtrit  # not scipy.stats: 0.4 s more to import on a cold dashboard

from ..errors import UsageError, invalid_parameter
from ..metrics.evaluation import Evaluation
from ..metrics.measures import Measure
from ..stats.intervals import check_level
from .slices import DEFAULT_MIN_SLICE_N, MISSING_VALUE, slice_metrics, slice_values

TEAM_WRITTEN = "team_written"
"""The source value (ignoring case and separators) that marks queries the team wrote itself."""

GAP_COLUMNS = ["run", "model", "field", "metric", "group_a", "group_b", "values_a", "values_b", "mean_a", "mean_b",
               "n_a", "n_b", "gap", "ci_low", "ci_high", "method", "level", "verdict", "labels", "fingerprint"]


@dataclass(frozen=True)
class GapPair:
    """The two groups of segments a gap compares: ``a`` minus ``b``.

    ``name_a`` / ``name_b`` are how sentences call them ("customers' queries", "team-written
    ones"); ``rule`` says how they were chosen.
    """

    a: tuple[str, ...]
    b: tuple[str, ...]
    name_a: str
    name_b: str
    rule: str


@dataclass(frozen=True)
class SegmentGaps:
    """Per-segment metrics and the gap between two groups, for every run and metric.

    ``segments``: the columns of `slice_metrics` plus ``rank`` (1 = best among segments that
    are not small; missing for small ones). ``gaps``: one row per run and metric (`GAP_COLUMNS`),
    empty when there is no ``pair`` (then ``note`` says why).
    """

    field: str
    min_n: int
    level: float
    segments: pd.DataFrame
    gaps: pd.DataFrame
    pair: GapPair | None
    note: str | None = None


def is_team_written(value: str) -> bool:
    return re.sub(r"[\s\-_]+", "_", str(value).strip().lower()) == TEAM_WRITTEN


def default_pair(counts: dict[str, int]) -> GapPair | None:
    """The groups a reader expects compared, from each segment's query count (see the module docs)."""
    known = {v: n for v, n in counts.items() if v != MISSING_VALUE and n > 0}
    team = sorted(v for v in known if is_team_written(v))
    if team:
        rest = tuple(sorted(v for v in known if v not in team))
        if not rest:
            return None
        return GapPair(a=rest, b=tuple(team), name_a="customers' queries", name_b="team-written ones",
                       rule="every other source against the team-written queries")
    ordered = sorted(known, key=lambda v: (-known[v], v))
    if len(ordered) < 2:
        return None
    first, second = ordered[:2]
    return GapPair(a=(first,), b=(second,), name_a=f"{first} queries", name_b=f"{second} ones",
                   rule="the largest segment against the second largest")


def chosen_pair(counts: dict[str, int], a: str | Sequence[str] | None, b: str | Sequence[str] | None) -> GapPair | None:
    """The groups named by value; one side missing means every other set value. None, None: `default_pair`."""
    if a is None and b is None:
        return default_pair(counts)
    known = [v for v in counts if v != MISSING_VALUE]

    def values(side: str | Sequence[str] | None, name: str) -> tuple[str, ...]:
        chosen = (side,) if isinstance(side, str) else tuple(side or ())
        unknown = [v for v in chosen if v not in counts]
        if unknown:
            raise UsageError(f"No segment named {unknown[0]!r} in the {name!r} group; segments are: "
                             f"{', '.join(sorted(counts))}.")
        return tuple(dict.fromkeys(chosen))

    group_a, group_b = values(a, "a"), values(b, "b")
    if not group_a:
        group_a = tuple(v for v in known if v not in group_b)
    if not group_b:
        group_b = tuple(v for v in known if v not in group_a)
    if set(group_a) & set(group_b):
        raise UsageError(f"A segment cannot be on both sides of a gap: {sorted(set(group_a) & set(group_b))[0]!r}.")
    if not group_a or not group_b:
        return None

    def name(group: tuple[str, ...], ones: bool) -> str:
        noun = "ones" if ones else "queries"
        return f"{group[0]} {noun}" if len(group) == 1 else f"{' + '.join(group)} {noun}"

    return GapPair(a=group_a, b=group_b, name_a=name(group_a, False), name_b=name(group_b, True),
                   rule="chosen by value")


def difference_intervals(a: np.ndarray, b: np.ndarray, level: float = 0.95) -> dict[str, np.ndarray]:
    """Mean(a) - mean(b) per column with its interval; ``a`` and ``b`` are (n_a, m) and (n_b, m) score matrices.

    Returns arrays of length m: ``mean_a``, ``mean_b``, ``gap``, ``ci_low``, ``ci_high`` and
    ``method`` (``newcombe``, ``welch``, ``constant`` or ``undefined``; see the module docs).
    """
    level = check_level(level)
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    if a.ndim != 2 or b.ndim != 2 or a.shape[1] != b.shape[1]:
        raise invalid_parameter("a, b", "2-D score matrices with the same number of columns",
                                f"shapes {a.shape} and {b.shape}")
    if a.shape[0] < 1 or b.shape[0] < 1:
        raise invalid_parameter("a, b", "at least one query on each side", f"shapes {a.shape} and {b.shape}")
    n_a, n_b = a.shape[0], b.shape[0]
    mean_a, mean_b = a.mean(axis=0), b.mean(axis=0)
    gap = mean_a - mean_b
    low, high = np.full_like(gap, np.nan), np.full_like(gap, np.nan)
    method = np.full(gap.shape, "undefined", dtype=object)

    binary = (((a == 0) | (a == 1)).all(axis=0)) & (((b == 0) | (b == 1)).all(axis=0))
    if binary.any():
        z = float(ndtri(0.5 + level / 2))
        la, ua = _wilson(mean_a[binary], n_a, z)
        lb, ub = _wilson(mean_b[binary], n_b, z)
        pa, pb = mean_a[binary], mean_b[binary]
        low[binary] = gap[binary] - np.sqrt((pa - la) ** 2 + (ub - pb) ** 2)
        high[binary] = gap[binary] + np.sqrt((ua - pa) ** 2 + (pb - lb) ** 2)
        method[binary] = "newcombe"

    rest = ~binary
    if rest.any() and n_a >= 2 and n_b >= 2:
        va = a[:, rest].var(axis=0, ddof=1) / n_a
        vb = b[:, rest].var(axis=0, ddof=1) / n_b
        se = np.sqrt(va + vb)
        constant = se == 0
        with np.errstate(divide="ignore", invalid="ignore"):
            df = (va + vb) ** 2 / (va**2 / (n_a - 1) + vb**2 / (n_b - 1))
        t = stdtrit(np.where(constant, 1.0, df), 0.5 + level / 2)  # Student's t quantile, as scipy.stats.t.ppf
        half = np.where(constant, 0.0, t * se)
        low[rest] = gap[rest] - half
        high[rest] = gap[rest] + half
        method[rest] = np.where(constant, "constant", "welch")
    return {"mean_a": mean_a, "mean_b": mean_b, "gap": gap, "ci_low": low, "ci_high": high, "method": method}


def _wilson(p: np.ndarray, n: int, z: float) -> tuple[np.ndarray, np.ndarray]:
    """Wilson bounds for shares ``p`` out of ``n`` (as `evalcore.stats.intervals.wilson_interval`, vectorised)."""
    z2 = z * z
    denom = 1 + z2 / n
    centre = (p + z2 / (2 * n)) / denom
    half = z * np.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / denom
    low = np.where(p == 0, 0.0, np.maximum(0.0, centre - half))
    high = np.where(p == 1, 1.0, np.minimum(1.0, centre + half))
    return low, high


def gap_verdict(gap: float, low: float, high: float, n_a: int, n_b: int, min_n: int) -> str:
    """``too few`` (a side under ``min_n`` queries, or no interval), ``higher`` / ``lower`` (the interval excludes
    0) or ``no clear difference``."""
    if min(n_a, n_b) < min_n or not np.isfinite(low) or not np.isfinite(high):
        return "too few"
    if low > 0 or high < 0:
        return "higher" if gap > 0 else "lower"
    return "no clear difference"


def segment_gaps(
    evaluation: Evaluation,
    field: str = "source",
    measures: Sequence[str | Measure] | None = None,
    *,
    min_n: int = DEFAULT_MIN_SLICE_N,
    a: str | Sequence[str] | None = None,
    b: str | Sequence[str] | None = None,
    slices: pd.DataFrame | None = None,
) -> SegmentGaps:
    """Every metric split by ``field`` (mean, interval, n, small, rank) and the gap between two groups.

    ``measures`` defaults to each run's listed measures. ``slices`` is a `slice_metrics` result
    for the same evaluation, field and measures to reuse (its bootstrap is most of the cost;
    ``small`` is recomputed for ``min_n``). Raises `UsageError` when the labels have no
    ``field``, or when ``a``/``b`` name a value that is not there.
    """
    if isinstance(min_n, bool) or not isinstance(min_n, int) or min_n < 1:
        raise invalid_parameter("min_n", "an integer >= 1", min_n)
    if slices is None:
        segments = slice_metrics(evaluation, field, measures, min_n=min_n)
    else:
        segments = slices.assign(small=slices["n"] < min_n)
    values = slice_values(evaluation, field)
    segments = _ranked(segments)
    counts = dict(zip(*np.unique(values.astype(str), return_counts=True)))
    counts = {str(v): int(n) for v, n in counts.items()}
    pair = chosen_pair(counts, a, b)
    if pair is None:
        set_values = [v for v in counts if v != MISSING_VALUE]
        note = (f"Only one {field} ({', '.join(set_values) or 'none set'}): there is no second group to compare with."
                if len(set_values) < 2 else f"No two groups of {field} values to compare.")
        return SegmentGaps(field, min_n, evaluation.level, segments, pd.DataFrame(columns=GAP_COLUMNS), None, note)
    in_a, in_b = np.isin(values, pair.a), np.isin(values, pair.b)
    keys, columns = [], []
    for result in evaluation.results:
        chosen = [Measure.parse(m) for m in measures] if measures else result.measures
        for m in chosen:
            keys.append((result, m))
            columns.append(result.score(m))
    matrix = np.column_stack(columns)
    found = difference_intervals(matrix[in_a], matrix[in_b], evaluation.level)
    n_a, n_b = int(in_a.sum()), int(in_b.sum())
    records = []
    for i, (result, m) in enumerate(keys):
        verdict = gap_verdict(float(found["gap"][i]), float(found["ci_low"][i]), float(found["ci_high"][i]), n_a, n_b,
                              min_n)
        records.append({
            "run": result.name, "model": result.model, "field": field, "metric": str(m),
            "group_a": pair.name_a, "group_b": pair.name_b, "values_a": ", ".join(pair.a),
            "values_b": ", ".join(pair.b), "mean_a": float(found["mean_a"][i]), "mean_b": float(found["mean_b"][i]),
            "n_a": n_a, "n_b": n_b, "gap": float(found["gap"][i]), "ci_low": float(found["ci_low"][i]),
            "ci_high": float(found["ci_high"][i]), "method": str(found["method"][i]), "level": evaluation.level,
            "verdict": verdict, "labels": evaluation.labels.name,
            "fingerprint": evaluation.labels.fingerprint,
        })
    gaps = pd.DataFrame.from_records(records, columns=GAP_COLUMNS)
    return SegmentGaps(field, min_n, evaluation.level, segments, gaps, pair)


def _ranked(segments: pd.DataFrame) -> pd.DataFrame:
    """``rank`` within each run and metric: 1 = highest mean among segments that are not small."""
    out = segments.copy()
    big = out[~out["small"]]
    ranks = big.groupby(["run", "metric"])["mean"].rank(ascending=False, method="min")
    out["rank"] = pd.array([pd.NA] * len(out), dtype="Int64")
    out.loc[ranks.index, "rank"] = ranks.astype("int64").to_numpy()
    return out
