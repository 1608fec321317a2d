"""The k budget in words: each run's recommendation as a sentence, and the text and JSON of ``evalcore budget``.

`evalcore.analyses.budget.k_budget` computes the numbers (`evalcore.analyses.budget_report`); the sentence here is
what the CLI, the dashboard's Choose k page and the meeting report show, word for word.
"""

from __future__ import annotations

import math

from ..analyses.budget_report import BudgetReport, RunBudget
from ..analyses.k_choice import BASIS_ELBOW, BASIS_TRADE_OFF, FIT_BELOW_QUERIES
from ..safe_text import text_table
from ..stats.intervals import MIN_RELIABLE_QUERIES
from .amounts import format_interval, money


def rule_words(run: RunBudget) -> str:
    """The one rule that gave the run's k, in words: the elbow (no trade-off given) or the trade-off with its
    lambda."""
    if run.basis == BASIS_ELBOW:
        return ("the elbow of recall@k (where recall stops rising steeply, cost aside: plain Kneedle on the raw "
                "curve); no trade-off was given")
    rule = run.rule
    unit = "point" if rule["lambda"] == 1 else "points"
    curve = (f"a smooth fit of the recall curve, n < {FIT_BELOW_QUERIES}" if rule["fit"]["used"]
             else "the raw recall curve")
    return (f"the trade-off: the largest 100*recall(k) - lambda*tokens(k)/1000 on {curve}; lambda = "
            f"{rule['lambda']:g} recall {unit} per 1,000 tokens ({rule['lambda_source']})")


def budget_summary(run: RunBudget) -> str:
    """The k to take in one plain sentence, with its rule's stability and what stopping costs."""
    s, stop = run.stability, run.stop_cost
    spread = (f"{s['share']:.0%} of resamples pick {s['low_k']}" if s["low_k"] == s["high_k"] else
              f"{s['share']:.0%} of resamples between {s['low_k']} and {s['high_k']}")
    text = f"k = {run.recommended_k} ({'the elbow' if run.basis == BASIS_ELBOW else 'the trade-off'}); {spread}"
    if run.basis == BASIS_TRADE_OFF and stop["k"] == run.rule.get("decided_within_k", stop["max_k"]):
        text += (". That is the largest k the decision looks at: recall is still gaining more than lambda points per "
                 "1,000 tokens there, so a larger lambda may move the pick")
    elif stop["k"] < stop["reference_k"]:
        lost = format_interval(stop["ci_low"], stop["ci_high"], join=" to ", number=lambda v: f"{100 * v:.1f}")
        text += (f". Stopping at {stop['k']} instead of {stop['reference_k']} loses {100 * stop['recall_lost']:.1f} "
                 f"recall points ({stop['level']:.0%} CI {lost}) and saves "
                 f"{stop['tokens_saved_mean']:,.0f} prompt tokens per request")
    else:
        text += f". That is at or past k = {stop['reference_k']}, the cutoff stopping early is measured against"
    if s["unstable"]:
        text += f". Unstable: {s['reason']}"
    return text


def budget_dict(report: BudgetReport) -> dict:
    """``evalcore budget --format json``: the numbers of `BudgetReport.to_dict`, each run with its summary sentence
    (before its table)."""
    out = report.to_dict()
    out["runs"] = [_with_summary(entry, run) for entry, run in zip(out["runs"], report.runs)]
    return out


def _with_summary(entry: dict, run: RunBudget) -> dict:
    table = entry.pop("table")
    return {**entry, "summary": budget_summary(run), "table": table}


def budget_text(report: BudgetReport) -> str:
    """``evalcore budget`` for people: a table per run, each headed by its context, then the k to take with its rule,
    and the warnings."""
    out: list[str] = []
    label_ref = f"{report.labels_name}#{report.fingerprint}"
    for run in report.runs:
        level = int(round(run.stop_cost["level"] * 100))
        price_note = (f"{money(run.price_per_mtok, cents=True)} per million input tokens of the generator LLM"
                      + (" (default; set --price-per-mtok)" if run.price_source == "default" else ""))
        volume = (f"{run.requests_per_month:,.0f} requests/month" if run.requests_per_month is not None
                  else "per month: set --requests-per-month")
        rough = (f" (only {run.n_queries}: intervals are a rough guide)"
                 if run.n_queries < MIN_RELIABLE_QUERIES else "")
        lines = [
            f"run {run.name}  model {run.model}  labels {label_ref}  n = {run.n_queries} queries{rough}",
            f"tokens: {run.tokenizer}; prompt overhead {run.overhead_tokens:,} tokens",
            f"price: {price_note}; {volume}",
        ]
        header = ["k", "recall", f"{level}% CI", "hit", f"{level}% CI", "tokens", "p90", "$/1k req", "$/month",
                  "+recall pts", "pts/1k tok", ""]
        body = []
        for row in run.table.itertuples(index=False):
            body.append([
                str(row.k), f"{row.recall:.3f}",
                format_interval(row.recall_ci_low, row.recall_ci_high, join="-", missing="-"),
                f"{row.hit:.3f}", format_interval(row.hit_ci_low, row.hit_ci_high, join="-", missing="-"),
                f"{row.tokens_mean:,.0f}",
                f"{row.tokens_p90:,.0f}", money(row.cost_per_1k_requests), money(row.cost_per_month),
                f"{100 * row.marginal_recall:+.1f}",
                "-" if not math.isfinite(row.marginal_recall_per_1k_tokens)
                else f"{100 * row.marginal_recall_per_1k_tokens:.2f}",
                "<- k to take" if row.k == run.recommended_k else "",
            ])
        lines.append(text_table(header, body, right=set(range(len(header) - 1))))
        lines.append(f"k to take = {run.recommended_k}: {rule_words(run)}")
        lines.append("  " + budget_summary(run))
        out.append("\n".join(lines))
    if report.warnings:
        out.append("warnings:\n" + "\n".join(f"  [{w.code}] x{w.count}: {w.message}" for w in report.warnings))
    settings = report.settings
    out.append(f"Intervals: {int(round(settings['level'] * 100))}% (Wilson where every per-query score is 0 or 1, "
               "else BCa bootstrap); "
               f"{settings['n_resamples']:,} resamples, seed {settings['seed']}, shared by intervals, stability and "
               f"stop cost. Relevant = grade >= {settings['min_grade']:g}.")
    return "\n\n".join(out) + "\n"
