"""The Choose k page's model: the headline (each run's k from what the person said, `evalcore.report.choose_k`),
recall@k with its band over what k chunks cost (the chart), the numbers at the chosen k, the recommendation, and the
runs against prompt tokens at the person's token budget, from `evalcore.analyses.budget.k_budget` for every run and
k (`dashboard.caching.budget`).

The settings are one `evalcore.analyses.k_settings.BudgetSettings`, read from the URL (`settings_from`); the chart's
spec (`chart`) depends on the data set, settings, runs, k range and lower panel, not on k: k only moves its rule. Plain
functions: the k budget comes through `dashboard.caching`, and the view keeps what these return there.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import pandas as pd

from evalcore.analyses.budget_report import BudgetReport
from evalcore.analyses.decision import Decision, default_token_budget
from evalcore.analyses.k_decision import BASIS_ELBOW
from evalcore.analyses.k_settings import BudgetSettings
from evalcore.report.budget import budget_summary, rule_words
from evalcore.report.amounts import format_interval
from evalcore.report.choose_k import at_tokens_sentence, choose_k_headline, chunking_headline
from evalcore.metrics.dataset import Dataset

from dashboard import caching, computed, k_charts
from dashboard.loading import DEPTH, Loaded

CHART_COLUMNS = ["run", "k", "recall", "recall_ci_low", "recall_ci_high", "tokens_mean", "tokens_p90",
                 "cost_per_1k_requests", "cost_per_month", "marginal_recall"]
WINDOW_MIN = 10
SPEND = tuple(k_charts.SPEND_PANELS)
"""What the lower panel can show: prompt tokens, $ per 1,000 requests, $ per month (with requests per month)."""


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
    lam = number("lam")
    value = number("vpp")  # what a recall point is worth a month: needs the monthly requests (lambda wins for experts)
    value = value if value and rpm and lam is None else None
    return BudgetSettings(price_per_mtok=number("price"), requests_per_month=float(rpm) if rpm else None,
                          overhead_tokens=int(number("overhead", int) or 0), lam=lam, value_per_point=value,
                          chunk_tokens=chunk)


def budget(dataset: Dataset, settings: BudgetSettings) -> Loaded:
    """Every run's k budget for k = 1..`DEPTH` (a `BudgetReport`), or why there is none."""
    return caching.budget(dataset, settings)


def can_size_chunks(dataset: Dataset) -> bool:
    return computed.can_size_chunks(dataset)


def decision(dataset: Dataset, settings: BudgetSettings, runs: tuple[str, ...]) -> Decision:
    """The meeting's answers for the runs shown under ``settings`` (`dashboard.caching.decision`): every k on this
    page, in the headline, the chart's marks, the tables and "How the k is chosen", is its k to take."""
    return caching.decision(dataset, runs, settings)


def k_window(decided: Decision) -> int:
    """The k range the chart opens on, 1..this: where the decision is. Twice the largest k to take (trade-off or
    elbow) of the runs shown, at least `WINDOW_MIN`, at most `DEPTH`."""
    largest = max((decided.k_to_take(r).k for r in decided.runs), default=0)
    return int(min(DEPTH, max(WINDOW_MIN, 2 * largest)))


def picked_k(event) -> int | None:
    """The k a click on the chart picked (Streamlit's selection event, `k_charts.PICK`), or None."""
    try:
        points = (event or {}).get("selection", {}).get(k_charts.PICK) or []
        return int(round(float(points[0]["k"]))) if points else None
    except (AttributeError, KeyError, TypeError, ValueError, IndexError):
        return None


def describe(report: BudgetReport, settings: BudgetSettings, n: int, labels_ref: str, first_run: str
             ) -> tuple[str, str]:
    """The context every number of the page carries, and the price it assumes."""
    price = f"${report.settings['price_per_mtok']:g} per million input tokens"
    price_text = price + (" (a placeholder until you set your LLM's price)"
                          if report.settings["price_source"] == "default" else "")
    context = (f"n = {n:,} queries · labels {labels_ref} · tokens: {report[first_run].tokenizer} · "
               + (price if report.settings["price_source"] != "default" else "no price set")
               + (f" · {settings.requests_per_month:,.0f} requests per month"
                  if settings.requests_per_month is not None else ""))
    return context, price_text


@dataclass(frozen=True)
class Headline:
    """The page's first sentences, and what the person has not said yet."""

    text: str
    k: int  # the first run shown's k to take: the page's k when the URL names none


def headline(dataset: Dataset, settings: BudgetSettings, runs: tuple[str, ...], budget_tokens: float | None = None,
             metric: str | None = None) -> Headline:
    """Each run's k to take (`choose_k_headline`); with runs of chunkings, the chunking and its k to take at the
    person's prompt budget (``budget_tokens``, default the first run's k to take's tokens) on ``metric`` (default:
    evidence held when the labels carry spans), with the comparison that backs it (`evalcore.analyses.decision`)."""
    decided = decision(dataset, settings, runs)
    evidence = decided.chunking_metric() == "evidence_recall"
    metric = metric if metric == "recall" or (metric == "evidence_recall" and evidence) else None
    found = decided.chunking_at(budget_tokens, metric)
    text = choose_k_headline(decided) if found is None else chunking_headline(
        found, None if budget_tokens else f"the prompt tokens of {runs[0]}'s k to take; set your own budget against "
                                          "prompt tokens")
    return Headline(text, decided.k_to_take(runs[0]).k)


@dataclass(frozen=True)
class AtK:
    """What the page shows at the chosen k: a line per run, the table, and the chart's range (its spec: `chart`)."""

    k: int
    window: int
    k_max: int
    lines: list[dict]  # per run: name, recall and its interval (and in words), tokens, cost text
    table: pd.DataFrame
    context: str
    models: str


def _marks(decided: Decision) -> pd.DataFrame:
    """The chart's marks: each run's k to take, the decision's."""
    rows = []
    for name in decided.runs:
        taken = decided.k_to_take(name)
        kind = taken.basis
        rows.append({"run": name, "k": taken.k, "recall": taken.recall, "kind": kind,
                     "what": "k to take: the elbow (recall stops rising steeply)" if kind == "elbow"
                     else "k to take: the trade-off"})
    return pd.DataFrame(rows, columns=["run", "k", "recall", "kind", "what"])


def chart(dataset: Dataset, settings: BudgetSettings, runs: tuple[str, ...], context: str, spend: str,
          k_max: int) -> dict:
    """Recall@k with its band over what k chunks cost (the lower panel ``spend``), k = 1..``k_max``, each run's k to
    take marked (a Vega-Lite spec; the k chosen is drawn on it by `dashboard.k_charts.set_k`)."""
    decided = decision(dataset, settings, runs)
    shown = decided.budget.runs
    frame = pd.concat([r.table.assign(run=r.name) for r in shown], ignore_index=True)[CHART_COLUMNS]
    models = "models: " + "; ".join(f"{r.name} = {r.model}" for r in shown)
    unit = "chunks" if any(spec.chunks is not None for spec in dataset.runs if spec.name in runs) else "docs"
    return k_charts.choose_k(frame, _marks(decided), list(dataset.run_names), context=context, models=models, unit=unit,
                             spend=spend, k_max=k_max).to_dict()


def spend_shown(spend: str | None, settings: BudgetSettings) -> str:
    """The lower panel asked for, when it can be drawn ($ per month needs the monthly requests)."""
    if spend == "month" and settings.requests_per_month is None:
        return "tokens"
    return spend if spend in SPEND else "tokens"


def at_k(dataset: Dataset, settings: BudgetSettings, runs: tuple[str, ...], k: int, every: bool, n: int,
         labels_ref: str, spend: str = "tokens") -> AtK:
    """The numbers at ``k`` for the runs shown (``every``: the chart shows every k, not only its opening range;
    ``spend``: the lower panel, which `chart` draws)."""
    decided = decision(dataset, settings, runs)
    report = decided.budget
    shown = report.runs
    money = settings.requests_per_month is not None
    context, _ = describe(report, settings, n, labels_ref, runs[0])
    window = k_window(decided)
    k_max = DEPTH if (every or k > window) else window
    lines, rows = [], []
    for run in shown:
        at = run.row(k)
        cost = (f"${at['cost_per_month']:,.0f} per month" if money
                else f"${at['cost_per_1k_requests']:,.2f} per 1,000 requests")
        lines.append({"run": run.name, "recall": at["recall"], "low": at["recall_ci_low"],
                      "high": at["recall_ci_high"],
                      "interval": format_interval(at["recall_ci_low"], at["recall_ci_high"]),
                      "tokens": at["tokens_mean"], "cost": cost,
                      "added": 100 * at["marginal_recall"],
                      "evidence": at["evidence_recall"] if "evidence_recall" in at.index else None})
        rows.append({
            "run": run.name, "model": run.model, f"recall@{k}": at["recall"],
            f"recall@{k} 95% CI": format_interval(at["recall_ci_low"], at["recall_ci_high"]), f"hit@{k}": at["hit"],
            f"hit@{k} 95% CI": format_interval(at["hit_ci_low"], at["hit_ci_high"]), "tokens (mean)": at["tokens_mean"],
            "tokens (p90)": at["tokens_p90"], "$ per 1,000 requests": at["cost_per_1k_requests"],
            **({"$ per month": at["cost_per_month"]} if money else {}),
            **({f"evidence recall@{k}": at["evidence_recall"]} if "evidence_recall" in at.index else {}),
            "k to take": decided.k_to_take(run.name).k, "rule": decided.k_to_take(run.name).basis,
            "n": run.n_queries,
        })
    return AtK(k, window, k_max, lines, pd.DataFrame(rows), context,
               "models: " + "; ".join(f"{r.name} = {r.model}" for r in shown))


@dataclass(frozen=True)
class AgainstTokens:
    """The runs against prompt tokens: the chart, and the sentence at the person's token budget."""

    chart: dict
    sentence: str
    budget: float
    metric: str
    metrics: tuple[str, ...]  # what can be drawn: recall, and evidence_recall with evidence spans


def default_budget(dataset: Dataset, settings: BudgetSettings, runs: tuple[str, ...]) -> float:
    """The token budget the tokens view opens on (`evalcore.analyses.decision.default_token_budget`: the prompt
    tokens of the first run's k to take, to the nearest 100)."""
    return default_token_budget(decision(dataset, settings, runs).budget)


def against_tokens(dataset: Dataset, settings: BudgetSettings, runs: tuple[str, ...], budget_tokens: float,
                   metric: str | None, n: int, labels_ref: str) -> AgainstTokens:
    """The runs shown over the mean prompt tokens of their top k chunks, and the sentence at ``budget_tokens`` on
    ``metric`` (evidence held first when the labels carry spans)."""
    decided = decision(dataset, settings, runs)
    report = decided.budget
    shown = report.runs
    metrics = ("evidence_recall", "recall") if decided.chunking_metric() == "evidence_recall" else ("recall",)
    metric = metric if metric in metrics else metrics[0]  # evidence held first, when the labels carry spans
    columns = ["run", "k", metric, f"{metric}_ci_low", f"{metric}_ci_high", "tokens_mean"]
    frame = pd.concat([r.table.assign(run=r.name) for r in shown], ignore_index=True)[columns]
    reach = max(2.5 * float(budget_tokens), float(frame.loc[frame["k"] <= k_window(decided), "tokens_mean"].max()))
    frame = frame[frame["tokens_mean"] <= reach]  # where the choice is: up to 2.5 times the budget, or the k window
    context, _ = describe(report, settings, n, labels_ref, runs[0])
    models = "models: " + "; ".join(f"{r.name} = {r.model}" for r in shown)
    spec = k_charts.against_tokens(frame, list(dataset.run_names), metric=metric, budget=budget_tokens,
                                   context=context, models=models).to_dict()
    found = decided.at_tokens(budget_tokens, metric)
    return AgainstTokens(spec, at_tokens_sentence(found), float(budget_tokens), metric, metrics)


@dataclass(frozen=True)
class Recommendation:
    """How the k to take is chosen, and each run's k in a sentence."""

    rule: str
    runs: list[tuple[str, str, str]]  # name, model, sentence (with the elbow)
    csv: str
    price_text: str
    warnings: list[str]


def recommendation(dataset: Dataset, settings: BudgetSettings, runs: tuple[str, ...], n: int,
                   labels_ref: str) -> Recommendation:
    """How the k to take is chosen (the one rule in force, `evalcore.report.budget.rule_words`) and each run's k in a
    sentence, the same as the headline's and ``evalcore budget``'s."""
    report = budget(dataset, settings).value
    shown = decision(dataset, settings, runs).budget.runs
    rules = list(dict.fromkeys(rule_words(r) for r in shown))
    text = ("Rule: " + "; ".join(rules) + ". Stability: the same rule on bootstrap resamples of the queries."
            + (" Say what a recall point is worth (with the requests a month) for the trade-off instead."
               if any(r.basis == BASIS_ELBOW for r in shown) else ""))
    lines = [(r.name, r.model, budget_summary(r)) for r in shown]
    _, price_text = describe(report, settings, n, labels_ref, runs[0])
    return Recommendation(text, lines, report.to_csv(), price_text, [str(w) for w in report.warnings])
