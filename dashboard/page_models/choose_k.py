"""The Choose k page's model: recall@k with its band over what k chunks cost (the chart), the numbers at the chosen
k, and the recommendation, from `evalcore.analyses.budget.k_budget` for every run and k (`dashboard.computed.budget`).

The settings are one `evalcore.analyses.k_settings.BudgetSettings`, read from the URL (`settings_from`); the chart's
spec is built once per data set, settings, runs and k range, and k only moves its rule.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import pandas as pd
import streamlit as st

from evalcore.analyses.budget_report import BudgetReport, RunBudget
from evalcore.analyses.k_settings import BudgetSettings
from evalcore.report.budget import budget_summary
from evalcore.store.datasets import Dataset

from dashboard import charts, computed, loading
from dashboard.loading import DEPTH, HASH, Loaded

CHART_COLUMNS = ["run", "k", "recall", "recall_ci_low", "recall_ci_high", "tokens_mean", "tokens_p90", "cost_per_month"]
WINDOW_MIN = 10


def settings_from(read: Callable[[str], Any], can_size_chunks: bool) -> BudgetSettings:
    """The settings the URL holds (``read(name)`` gives a parameter's text); a value that is not a number of the
    right kind, or negative, is the default. The chunk size counts only when no documents file can size chunks."""
    def number(name: str, kind=float):
        try:
            value = kind(read(name))
        except (TypeError, ValueError):
            return None
        return value if value >= 0 else None

    rpm = number("rpm", int)
    chunk = None if can_size_chunks else (number("chunk", int) or None)
    return BudgetSettings(price_per_mtok=number("price"), requests_per_month=float(rpm) if rpm else None,
                          overhead_tokens=int(number("overhead", int) or 0), lam=number("lam"), chunk_tokens=chunk)


def budget(dataset: Dataset, settings: BudgetSettings) -> Loaded:
    """Every run's k budget for k = 1..`DEPTH` (a `BudgetReport`), or why there is none."""
    return computed.budget(dataset, settings)


def can_size_chunks(dataset: Dataset) -> bool:
    return computed.can_size_chunks(dataset)


def k_window(runs: list[RunBudget]) -> int:
    """The k range the chart opens on, 1..this: where the decision is. Twice the largest recommended k or elbow of
    the runs shown, at least `WINDOW_MIN`, at most `DEPTH`."""
    largest = max((max(r.recommended_k or 0, r.kneedle_k or 0) for r in runs), default=0)
    return int(min(DEPTH, max(WINDOW_MIN, 2 * largest)))


def picked_k(event) -> int | None:
    """The k a click on the chart picked (Streamlit's selection event, `charts.PICK`), or None."""
    try:
        points = (event or {}).get("selection", {}).get(charts.PICK) or []
        return int(round(float(points[0]["k"]))) if points else None
    except (AttributeError, KeyError, TypeError, ValueError, IndexError):
        return None


def describe(report: BudgetReport, settings: BudgetSettings, n: int, labels_ref: str, first_run: str
             ) -> tuple[str, str]:
    """The context every number of the page carries, and the price it assumes."""
    price_text = f"${report.settings['price_per_mtok']:g} per million input tokens" + (
        " (placeholder: set your LLM's price below)" if report.settings["price_source"] == "default" else "")
    context = (f"n = {n:,} queries · labels {labels_ref} · tokens: {report[first_run].tokenizer} · {price_text}"
               + (f" · {settings.requests_per_month:,.0f} requests per month"
                  if settings.requests_per_month is not None else ""))
    return context, price_text


@dataclass(frozen=True)
class AtK:
    """What the page shows at the chosen k: a line per run, the table, the chart spec and its range."""

    k: int
    window: int
    k_max: int
    chart: dict
    lines: list[dict]  # per run: name, recall and its interval, tokens, cost text
    table: pd.DataFrame
    recommended: list[tuple[str, int]]
    context: str
    models: str


@st.cache_data(max_entries=32, show_spinner=False, hash_funcs={**HASH, BudgetSettings: repr})
def _chart(dataset: Dataset, settings: BudgetSettings, runs: tuple[str, ...], context: str, money: bool,
           k_max: int) -> dict:
    report = computed.budget(dataset, settings).value
    shown = [report[name] for name in runs]
    frame = pd.concat([r.table.assign(run=r.name) for r in shown], ignore_index=True)[CHART_COLUMNS]
    marks = pd.DataFrame([{"run": r.name, "k": r.recommended_k, "recall": r.row(r.recommended_k)["recall"]}
                          for r in shown])
    models = "models: " + "; ".join(f"{r.name} = {r.model}" for r in shown)
    return charts.choose_k(frame, marks, list(dataset.run_names), context=context, models=models, money=money,
                           k_max=k_max).to_dict()


def at_k(dataset: Dataset, settings: BudgetSettings, runs: tuple[str, ...], k: int, every: bool, n: int,
         labels_ref: str) -> AtK:
    """The numbers at ``k`` for the runs shown (``every``: the chart shows every k, not only its opening range)."""
    report = computed.budget(dataset, settings).value
    shown = [report[name] for name in runs]
    money = settings.requests_per_month is not None
    context, _ = describe(report, settings, n, labels_ref, runs[0])
    window = k_window(shown)
    k_max = DEPTH if (every or k > window) else window
    lines, rows = [], []
    for run in shown:
        at = run.row(k)
        cost = (f"${at['cost_per_month']:,.0f} per month" if money
                else f"${at['cost_per_1k_requests']:,.2f} per 1,000 requests")
        lines.append({"run": run.name, "recall": at["recall"], "low": at["recall_ci_low"],
                      "high": at["recall_ci_high"], "tokens": at["tokens_mean"], "cost": cost})
        rows.append({
            "run": run.name, "model": run.model, f"recall@{k}": at["recall"],
            "recall 95% CI": f"{at['recall_ci_low']:.3f} – {at['recall_ci_high']:.3f}", f"hit@{k}": at["hit"],
            "hit 95% CI": f"{at['hit_ci_low']:.3f} – {at['hit_ci_high']:.3f}", "tokens (mean)": at["tokens_mean"],
            "tokens (p90)": at["tokens_p90"], "$ per 1,000 requests": at["cost_per_1k_requests"],
            **({"$ per month": at["cost_per_month"]} if money else {}), "recommended k": run.recommended_k,
            "n": run.n_queries,
        })
    return AtK(k, window, k_max, _chart(dataset, settings, tuple(runs), context, money, k_max), lines,
               pd.DataFrame(rows), [(r.name, r.recommended_k) for r in shown], context,
               "models: " + "; ".join(f"{r.name} = {r.model}" for r in shown))


@dataclass(frozen=True)
class Recommendation:
    """How the recommended k is chosen, and each run's recommendation in a sentence."""

    rule: str
    runs: list[tuple[str, str, str]]  # name, model, sentence (with the elbow)
    csv: str
    price_text: str
    warnings: list[str]


def recommendation(dataset: Dataset, settings: BudgetSettings, runs: tuple[str, ...], n: int,
                   labels_ref: str) -> Recommendation:
    report = computed.budget(dataset, settings).value
    shown = [report[name] for name in runs]
    rule = shown[0].rule
    curve = (f"a smooth fit ({rule['fit']['model']}) of the recall curve" if rule["fit"]["used"]
             else "the recall curve itself")
    text = (f"Rule: {rule['description']}, with λ = {rule['lambda']:g} {rule['lambda_unit']} "
            f"({rule['lambda_source']}), read on {curve}. Stability: the same rule on bootstrap resamples of the "
            f"queries. The elbow (Kneedle) ignores cost and is shown as a landmark.")
    lines = [(r.name, r.model, budget_summary(r) + (f" · elbow of the curve (Kneedle): k = {r.kneedle_k}"
                                                  if r.kneedle_k else "")) for r in shown]
    _, price_text = describe(report, settings, n, labels_ref, runs[0])
    return Recommendation(text, lines, report.to_csv(), price_text, [str(w) for w in report.warnings])
