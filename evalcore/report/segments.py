"""The gap between two groups of sources in words: "base: customers' queries score 21.4 points lower on recall@10
than team-written ones (95% CI 12.0 to 30.8; n = 260 vs 60)."

`evalcore.analyses.segments.segment_gaps` computes each gap, its interval and its verdict; the sentence here is
what the dashboard's Sources and Integrity pages show.
"""

from __future__ import annotations

from .amounts import format_amount, format_interval


def gap_sentence(row, min_n: int) -> str:
    """The sentence for one row of `evalcore.analyses.segments.SegmentGaps.gaps` (a row from ``itertuples()`` or
    a Series); ``min_n`` is the fewest queries a side needs (`SegmentGaps.min_n`)."""
    run, metric, name_a, name_b = row.run, row.metric, row.group_a, row.group_b
    counts = f"n = {row.n_a:,} vs {row.n_b:,}"
    if min(row.n_a, row.n_b) < min_n:
        return (f"{run}: too few queries to compare {name_a} with {name_b} on {metric} "
                f"({counts}; each side needs at least {min_n:,}).")
    if row.verdict == "too few":
        return f"{run}: no interval for the gap on {metric} ({counts})."
    ci = f"{row.level * 100:g}% CI"
    gap, low, high = row.gap, row.ci_low, row.ci_high
    if row.verdict in ("higher", "lower"):
        size, lo, hi = (gap, low, high) if gap > 0 else (-gap, -high, -low)
        return (f"{run}: {name_a} score {format_amount(metric, size)} {row.verdict} on {metric} than "
                f"{name_b} ({ci} {format_interval(lo, hi, metric=metric, join=' to ')}; {counts}).")
    return (f"{run}: no clear difference between {name_a} and {name_b} on {metric}: "
            f"{format_amount(metric, gap)} ({ci} {format_interval(low, high, metric=metric, join=' to ')}; "
            f"{counts}).")
