"""The sentence each presented page opens on, answering the page's question with the numbers that back it.

* `overview_headline`: which run is best, and is its lead real ("Best run: tuned. It puts a relevant document first
  for 65% of queries, 7 points more than tuned-256d, the next best (real: 95% CI 3 to 11 points; n = 320 queries).").
* `failures_headline`: how many queries each run fails at k, and how many a larger k would rescue.
* `sources_headline`: whether customers' queries score lower than the team's own.

The numbers come from `evalcore.analyses.headline` and `evalcore.analyses.segments`; the CLI (``evalcore evaluate``
and ``evalcore compare``), the meeting report and the dashboard all call these, so each says the same words.
Amounts are rounded for reading aloud (whole percents and points); the exact figures are one click away on every
surface (the comparison sentences of `evalcore.report.compare`, the tables).
"""

from __future__ import annotations

from typing import Sequence

import pandas as pd

from ..analyses.headline import BestRun, FailureCounts, is_real, lead
from ..metrics.failure import MISS_NAMES
from .amounts import format_amount, format_interval, is_share_metric

WHAT_METRIC_SAYS = {"hit@1": ("puts a relevant document first", "put a relevant document first")}
"""How the Overview's headline metric reads in a sentence: said of one run, and of several."""
MAX_RUNS_NAMED = 3
"""Runs a headline names one by one; more are counted."""


def percent(share: float) -> str:
    """A share as whole percents: ``65%`` (one decimal under 1%, so a small share never reads 0%)."""
    value = 100 * share
    return f"{value:.1f}%" if 0 < abs(value) < 1 else f"{value:.0f}%"


def points(metric: str, value: float, *, unit: bool = True) -> str:
    """A difference read aloud: whole points for shares (one decimal under one point), else `format_amount`."""
    if not is_share_metric(metric):
        return format_amount(metric, value, unit=unit)
    size = 100 * value
    text = f"{size:.1f}" if abs(size) < 1 else f"{size:.0f}"
    text = "0" if text in ("-0", "-0.0", "0.0") else text
    return f"{text} {'point' if text in ('1', '-1') else 'points'}" if unit else text


def _names(names: Sequence[str]) -> str:
    names = list(names)
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def best_run_line(found: BestRun) -> str:
    """The best run in one line: "Best run: tuned (acme-embed-large-v2)." or, when its lead could be chance, which
    runs share the lead."""
    if len(found.runs) == 1:
        return f"One run: {found.best} ({found.models[found.best]})."
    if found.clear:
        return f"Best run: {found.best} ({found.models[found.best]})."
    level = found.comparisons[0].level
    tied = [found.best] + [c.run for c in found.comparisons if not is_real(c)]
    return (f"No clear best run: {_names(tied)} are within chance of each other ({level * 100:g}% "
            "intervals of the differences reach zero).")


def overview_evidence(found: BestRun) -> str:
    """The sentence that backs `best_run_line`: the best run's share and its lead over the next best."""
    says, say = WHAT_METRIC_SAYS.get(found.metric, (f"scores on {found.metric}", f"score on {found.metric}"))
    mean = found.means[found.best]
    share = percent(mean.point) if is_share_metric(found.metric) else f"{mean.point:.3f}"
    n = f"n = {found.n:,} queries"
    if len(found.runs) == 1:
        return (f"{found.best} {says} for {share} of queries ({mean.level * 100:g}% CI "
                f"{format_interval(mean.low, mean.high, number=percent, join=' to ')}; {n}).")
    c = found.runner_up
    ci = f"{c.level * 100:g}% CI"
    if c.wins == 0 and c.losses == 0:
        return (f"{found.best} and {c.run} both {say} for {share} of queries, the very same ones ({n}).")
    diff, low, high = lead(c)
    verdict = "real" if is_real(c) else "could be chance"
    other = found.means[c.run].point
    other_share = percent(other) if is_share_metric(found.metric) else f"{other:.3f}"
    closest = ", the next best" if len(found.runs) > 2 else ""
    return (f"{found.best} {says} for {share} of queries, {points(found.metric, diff)} more than {c.run}{closest} "
            f"({other_share}; {verdict}: {ci} {points(found.metric, low, unit=False)} to "
            f"{points(found.metric, high)}; {n}).")


def overview_headline(found: BestRun) -> str:
    """The Overview's headline: `best_run_line` then `overview_evidence` (the first lines of ``evalcore evaluate``
    and ``evalcore compare``, the top of the meeting report)."""
    return f"{best_run_line(found)} {overview_evidence(found)}"


def failures_headline(counts: FailureCounts) -> str:
    """The Failures page's headline: the run that fails the fewest queries at k with the others beside it, the queries
    every run fails, and what twice the k would rescue."""
    meaning, k = MISS_NAMES[counts.mode], counts.k
    runs = sorted(counts.runs, key=lambda r: r.failed)  # stable: ties keep the runs' order
    first = runs[0]
    if all(r.failed == 0 for r in runs):
        who = "with any run shown" if len(runs) > 1 else f"with {first.run}"
        return f"At k = {k}, no query {meaning} {who}."
    text = f"At k = {k}, {first.failed:,} of {first.n:,} queries ({percent(first.failed / first.n)}) {meaning} with {first.run}"
    if len(runs) > 1:
        others = [f"{r.run} {r.failed:,}" for r in runs[1:MAX_RUNS_NAMED]]
        if len(runs) > MAX_RUNS_NAMED:
            others.append(f"{len(runs) - MAX_RUNS_NAMED} more runs")
        fewest = "the fewest of the runs shown" if first.failed < runs[1].failed else "as few as any run shown"
        text += f", {fewest} ({', '.join(others)}). {counts.in_every_run:,} of them fail with every run"
    text += "."
    if counts.larger_k is not None and first.failed:
        text += (f" Raising k to {counts.larger_k} would rescue {first.rescued:,} of {first.run}'s {first.failed:,}"
                 + ("." if first.rescued == first.failed else
                    ": the rest still get only a fragment." if counts.mode == "fragment" else
                    ": the rest are ranked further down or never returned."))
    return text


def sources_headline(gaps: pd.DataFrame, metric: str, runs: Sequence[str], min_n: int) -> str | None:
    """The Sources page's headline: on ``metric``, how each run's first group of sources (by default customers'
    queries) scores against the second (team-written ones), with the interval; None without a gap to tell
    (``gaps``: `evalcore.analyses.segments.SegmentGaps.gaps`)."""
    rows = gaps[(gaps["metric"] == metric) & gaps["run"].isin(list(runs))]
    rows = rows.set_index("run").reindex([r for r in runs if r in set(rows["run"])]).reset_index()
    if rows.empty:
        return None
    first = rows.iloc[0]
    name_a, name_b, counts = first["group_a"], first["group_b"], f"n = {int(first['n_a']):,} vs {int(first['n_b']):,}"
    if min(first["n_a"], first["n_b"]) < min_n:
        return (f"Too few queries to compare {name_a} with {name_b} on {metric} ({counts}; each side needs at least "
                f"{min_n:,}).")
    parts = []
    for row in rows.head(MAX_RUNS_NAMED).itertuples(index=False):
        ci = f"{row.level * 100:g}% CI"
        low, high = (-row.ci_high, -row.ci_low) if row.verdict == "lower" else (row.ci_low, row.ci_high)
        bounds = f"{ci} {format_interval(low, high, number=lambda v: points(metric, v, unit=False), join=' to ')}"
        if row.verdict in ("lower", "higher"):
            parts.append(f"{row.run} {points(metric, abs(row.gap))} {row.verdict} (real: {bounds})")
        elif row.verdict == "too few":
            parts.append(f"{row.run} no interval")
        else:
            parts.append(f"{row.run} {points(metric, row.gap)}, no clear difference ({bounds})")
    verdicts = set(rows["verdict"])
    more = f"; {len(rows) - MAX_RUNS_NAMED} more runs below" if len(rows) > MAX_RUNS_NAMED else ""
    if len(verdicts) == 1 and verdicts <= {"lower", "higher"}:
        sizes = sorted({points(metric, abs(g), unit=False) for g in rows["gap"]}, key=float)
        size = sizes[0] if len(sizes) == 1 else f"{sizes[0]} to {sizes[-1]}"
        unit = "" if not is_share_metric(metric) else (" point" if size == "1" else " points")
        who = "with every run shown" if len(rows) > 1 else f"with {rows['run'].iloc[0]}"
        text = (f"{name_a[0].upper()}{name_a[1:]} score {size}{unit} {next(iter(verdicts))} on {metric} than {name_b}, "
                f"{who}. By run: {'; '.join(parts)}{more} ({counts}).")
    else:
        text = f"On {metric}, {name_a} against {name_b}: {'; '.join(parts)}{more} ({counts})."
    if "lower" in verdicts and name_b == "team-written ones":
        text += " A demo on the team's own queries overstates what customers get."
    return text
