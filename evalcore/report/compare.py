"""Paired comparisons in words: each comparison's verdict, the labelling plan, and the text and JSON of
``evalcore compare``.

`evalcore.analyses.compare` (and `evalcore.stats.paired`, `evalcore.stats.planner`) compute the numbers; the
sentences here are what every front end shows (the CLI, the dashboard's Overview, the meeting report), word for
word. Amounts are worded by `evalcore.report.amounts` (points for shares, decimals for the others).
"""

from __future__ import annotations

import math

from ..analyses.compare import ComparisonReport
from ..safe_text import md_text
from ..stats.paired import Comparison
from ..stats.planner import Plan
from .amounts import format_amount, format_interval, format_p


def comparison_verdict(c: Comparison) -> str:
    """The comparison in one sentence a product manager can read aloud, with its interval, p, counts and n.

    "tuned beats base on recall@1 by 13.0 points (95% CI 8.7 to 17.3; p < 0.001; 45 wins, 6 losses, 249 ties;
    n = 300)." A significant gap whose interval reaches zero is called borderline; an interval that excludes zero
    without a significant test is a lead that "could be luck", with why (never "indistinguishable" beside an interval that
    excludes zero); fewer than 50 queries (or a rough interval) adds the caveat.
    """
    level_text = f"{c.level * 100:g}% CI"
    p_text = format_p(c.p_adjusted) + (" after Holm" if c.n_comparisons > 1 else "")
    counts = f"{c.wins} wins, {c.losses} losses, {c.ties} ties"
    metric = c.metric
    if c.wins == 0 and c.losses == 0:
        sentence = f"{c.baseline} and {c.run} score the same on {metric} on all {c.n} queries"
    elif c.significant:
        verb, size, lo, hi = (("beats", c.diff, c.ci_low, c.ci_high) if c.diff > 0 else
                              ("is worse than", -c.diff, -c.ci_high, -c.ci_low))
        sentence = (
            f"{c.run} {verb} {c.baseline} on {metric} by {format_amount(metric, size)} "
            f"({level_text} {format_interval(lo, hi, metric=metric, join=' to ')}; {p_text}; {counts}; n = {c.n})"
        )
        if lo <= 0:
            sentence += ". The interval still reaches zero, so the gap is borderline"
    elif c.ci_low > 0 or c.ci_high < 0:  # the interval and the test disagree: never called indistinguishable
        verb = "leads" if c.diff > 0 else "trails"
        sentence = (
            f"{c.run} {verb} {c.baseline} on {metric} by {format_amount(metric, abs(c.diff))} "
            f"({c.run} minus {c.baseline}, {level_text} "
            f"{format_interval(c.ci_low, c.ci_high, metric=metric, join=' to ')}; {p_text}; {counts}; n = {c.n}), "
            "but that could be "
            "luck: the interval excludes zero, yet "
            + (f"the gap does not survive correcting for {c.n_comparisons} comparisons" if c.p_value < c.alpha else
               f"only {c.wins + c.losses} of the {c.n} queries differ, too few for the test to rule out chance")
        )
    else:
        sentence = (
            f"{c.baseline} and {c.run} are indistinguishable on {metric} with {c.n} queries "
            f"({c.run} minus {c.baseline}: {format_amount(metric, c.diff)}, {level_text} "
            f"{format_interval(c.ci_low, c.ci_high, metric=metric, join=' to ')}; {p_text}; {counts})"
        )
    if not c.reliable:
        caveat = c.interval_note or f"only {c.n} queries: treat as a rough guide"
        sentence += f". {caveat[0].upper()}{caveat[1:]}"
    return sentence + "."


def plan_summary(found: Plan) -> str:
    """The labelling plan in plain words: what this set can detect, what a named goal needs, and what halving a
    single model's interval takes."""
    name = found.metric or "the metric"
    metric = found.metric

    def amount(value: float) -> str:
        return format_amount(metric, value) if metric else f"{value:.3f}"

    settings = f"power {found.power * 100:g}%, alpha {found.alpha:g}"
    n = found.n
    parts = []
    if found.sigma == 0:
        parts.append(
            f"The two runs differ by the same amount on all {n:,} queries, so the spread of "
            "differences is unknown and no labelling plan can be drawn from them; "
            "plan from two runs that disagree on some queries."
        )
    else:
        parts.append(
            f"With {n:,} queries this set can detect differences of about "
            f"{amount(found.min_detectable)} in {name} ({settings})."
        )
        if found.n_needed is not None:
            goal = f"Detecting {amount(found.target_diff)} needs about {found.n_needed:,} queries"
            parts.append(goal + (f"; this set already has {n:,}." if found.n_needed <= n else "."))
    if found.halfwidth is not None and not math.isnan(found.halfwidth):
        parts.append(
            f"A single model's {name} is known to about +/- {amount(found.halfwidth)} "
            f"({found.level * 100:g}% interval); halving that takes about {4 * n:,} queries "
            f"({3 * n:,} more labeled queries)."
        )
    return " ".join(parts)


def comparison_record(c: Comparison) -> dict:
    """One comparison as the JSON output has it: `Comparison.to_dict` with the verdict where the interval's note
    is (the note is said in the verdict)."""
    record = {}
    for key, value in c.to_dict().items():
        if key == "interval_note":
            key, value = "verdict", comparison_verdict(c)
        record[key] = value
    return record


def comparison_dict(report: ComparisonReport) -> dict:
    """``evalcore compare --format json``: the numbers of `ComparisonReport.to_dict`, each comparison with its
    verdict and the planner with its summary."""
    out = report.to_dict()
    out["comparisons"] = [comparison_record(c) for c in report.comparisons]
    if report.planner is not None:
        out["planner"]["summary"] = plan_summary(report.planner)
    return out


def comparison_text(report: ComparisonReport, markdown: bool = False) -> str:
    """``evalcore compare`` for people: each verdict with its context, then the planner (in Markdown every name is
    escaped)."""
    labels = report.evaluation.labels
    models = {r.name: r.model for r in report.evaluation.results}
    lines = []
    for c in report.comparisons:
        verdict = comparison_verdict(c)
        context = (f"[{c.metric}, n = {c.n}, {c.baseline} = {models[c.baseline]}, {c.run} = {models[c.run]}, "
                   f"labels {labels.name}#{labels.fingerprint}; p {c.p_value:.3g} raw, test: {c.test}]")
        lines.append(f"- {md_text(verdict)} {md_text(context)}" if markdown else f"{verdict}\n    {context}")
    if report.planner is not None:
        base, run = report.planner_pair
        text = f"Planner ({base} vs {run}): {plan_summary(report.planner)}"
        lines.append(("\n" + md_text(text)) if markdown else "\n" + text)
    return "\n".join(lines) + "\n"
