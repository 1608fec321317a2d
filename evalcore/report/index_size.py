"""The index-size decision in words: one sentence per variant, and the table and JSON of ``evalcore vectors``.

`evalcore.analyses.index_size` computes the numbers (`IndexSizeReport`); the sentence here is what the CLI and the
dashboard's Index size page show, word for word: "binary 256 loses 4.1 points of recall@10 against full vectors
(95% CI 2.0 to 6.3; p < 0.001 after Holm; n = 224); the index is 24x smaller."
"""

from __future__ import annotations

import pandas as pd

from ..analyses.index_size import IndexSizeReport
from ..vectors.runs import VariantRun
from .amounts import format_amount, format_p, human_bytes, times

REFERENCE_VERDICT = "the full vectors (reference)"
"""What the chart says of the full vectors, which are not compared with themselves."""


def variant_verdict(report: IndexSizeReport, item: VariantRun) -> str | None:
    """The plain sentence for one variant against the full vectors (None for the full vectors themselves)."""
    found = report.comparisons.get(item.name)
    if found is None:
        return None
    metric, words, ratio = found.metric, item.variant.words, report.ratio(item)
    level = f"{found.level * 100:g}% CI"
    p_text = format_p(found.p_adjusted) + (" after Holm" if found.n_comparisons > 1 else "")
    size = f"the index is {times(ratio)} smaller" if ratio >= 1 else f"the index is {times(1 / ratio)} larger"
    if found.wins == 0 and found.losses == 0:
        return f"{words} scores the same as full vectors on {metric} on every one of the {found.n} queries; {size}."
    if found.significant:
        verb, amount, low, high = (("gains", found.diff, found.ci_low, found.ci_high) if found.diff > 0 else
                                   ("loses", -found.diff, -found.ci_high, -found.ci_low))
        return (f"{words} {verb} {format_amount(metric, amount)} of {metric} against full vectors ({level} "
                f"{format_amount(metric, low, unit=False)} to {format_amount(metric, high, unit=False)}; {p_text}; "
                f"n = {found.n}); {size}.")
    return (f"{words} is indistinguishable from full vectors on {metric} with {found.n} queries (difference "
            f"{format_amount(metric, found.diff)}, {level} {format_amount(metric, found.ci_low, unit=False)} to "
            f"{format_amount(metric, found.ci_high, unit=False)}; {p_text}); {size}.")


def index_size_dict(report: IndexSizeReport) -> dict:
    """``evalcore vectors --format json``: the numbers of `IndexSizeReport.to_dict`, each comparison with the full
    vectors (``vs_full``) ending in its verdict."""
    out = report.to_dict()
    for entry, item in zip(out["variants"], report.variants):
        if entry["vs_full"] is not None:
            entry["vs_full"]["verdict"] = variant_verdict(report, item)
    return out


def index_size_points(report: IndexSizeReport, metric: str | None = None) -> pd.DataFrame:
    """`IndexSizeReport.points` with each variant's ``verdict`` (before ``frontier``), for the chart's tooltips."""
    frame = report.points(metric)
    verdicts = [variant_verdict(report, item) or REFERENCE_VERDICT for item in report.variants]
    frame.insert(frame.columns.get_loc("frontier"), "verdict", verdicts)
    return frame


def index_size_rows(report: IndexSizeReport) -> tuple[list[str], list[list[str]]]:
    """The table for people: one row per variant with its size, every metric with its interval, and vs full."""
    names = report.metric_names()
    headers = ["variant", "dims", "precision", "index", "smaller", *names, f"vs full ({report.metric})", "p (Holm)",
               "n", "model"]
    body = []
    for item in report.variants:
        values = report.metrics(item)
        cells = [f"{values[m]['mean']:.4f} ({values[m]['ci_low']:.4f}-{values[m]['ci_high']:.4f})" for m in names]
        found = report.comparisons.get(item.name)
        if found is None:
            versus, p = "reference", ""
        else:
            amount = [format_amount(found.metric, value, unit=False) for value in (found.diff, found.ci_low,
                                                                                   found.ci_high)]
            versus = f"{amount[0]} ({amount[1]} to {amount[2]})"
            p = format_p(found.p_adjusted).removeprefix("p ").removeprefix("= ")
        body.append([item.name, str(item.variant.dims), item.variant.precision, human_bytes(item.index_bytes),
                     times(report.ratio(item)), *cells, versus, p, str(report.evaluation[item.name].n_queries),
                     item.run.model])
    return headers, body
