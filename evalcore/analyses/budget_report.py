"""The k budget's answer: `RunBudget` per run and `BudgetReport` for several, with their renderings.

`evalcore.analyses.budget.k_budget` computes them; here they read as plain dicts and JSON (NaN -> null),
a long frame and CSV with every row's context (run, model, labels, fingerprint, n, tokenizer, price),
and the text tables the CLI prints.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ..errors import UsageError
from ..metrics.measures import check_k
from ..safe_text import text_table, to_csv
from ..stats.intervals import MIN_RELIABLE_QUERIES
from ..warning_log import EvalWarning
from .k_choice import FIT_BELOW_QUERIES


@dataclass(frozen=True)
class RunBudget:
    """One run's k budget: the per-k table, the recommended k, and the context of every number."""

    name: str
    model: str
    n_queries: int
    labels_name: str
    fingerprint: str
    table: pd.DataFrame
    recommended_k: int
    kneedle_k: int | None
    stability: dict
    stop_cost: dict
    rule: dict
    tokenizer: str
    token_sources: dict
    price_per_mtok: float
    price_source: str
    requests_per_month: float | None
    overhead_tokens: int
    embedding_price_per_mtok: float | None
    warnings: tuple[EvalWarning, ...] = ()

    @property
    def max_k(self) -> int:
        return int(self.table["k"].iloc[-1])

    def row(self, k: int) -> pd.Series:
        """The table row at ``k``."""
        return self.table.iloc[check_k(k, self.max_k) - 1]

    def summary(self) -> str:
        """The recommendation in one plain sentence, with its stability and what stopping costs."""
        s, stop = self.stability, self.stop_cost
        spread = (f"{s['share']:.0%} of resamples pick {s['low_k']}" if s["low_k"] == s["high_k"] else
                  f"{s['share']:.0%} of resamples between {s['low_k']} and {s['high_k']}")
        text = f"k = {self.recommended_k}; {spread}"
        if stop["k"] == stop["max_k"]:
            text += (". That is the largest k in the table: recall is still gaining more than lambda points per "
                     "1,000 tokens there, so a larger max k (or a larger lambda) may move the pick")
        elif stop["k"] < stop["reference_k"]:
            text += (f". Stopping at {stop['k']} instead of {stop['reference_k']} loses {100 * stop['recall_lost']:.1f} "
                     f"recall points ({stop['level']:.0%} CI {100 * stop['ci_low']:.1f} to {100 * stop['ci_high']:.1f}) and saves "
                     f"{stop['tokens_saved_mean']:,.0f} prompt tokens per request")
        else:
            text += f". That is at or past k = {stop['reference_k']}, the cutoff stopping early is measured against"
        if s["unstable"]:
            text += f". Unstable: {s['reason']}"
        return text

    def to_dict(self) -> dict:
        """Plain types only (NaN -> None), shaped as the CLI's JSON run entry."""
        rows = [{key: _plain_value(value) for key, value in record.items()}
                for record in self.table.to_dict(orient="records")]
        return {
            "name": self.name, "model": self.model, "n_queries": self.n_queries,
            "labels": {"name": self.labels_name, "fingerprint": self.fingerprint},
            "recommended_k": self.recommended_k, "kneedle_k": self.kneedle_k,
            "rule": _plain(self.rule), "stability": _plain(self.stability), "stop_cost": _plain(self.stop_cost),
            "tokenizer": self.tokenizer, "token_sources": _plain(self.token_sources),
            "price_per_mtok": self.price_per_mtok, "price_source": self.price_source,
            "requests_per_month": self.requests_per_month, "overhead_tokens": self.overhead_tokens,
            "embedding_price_per_mtok": self.embedding_price_per_mtok,
            "summary": self.summary(),
            "table": rows,
        }

    def __repr__(self) -> str:
        return (f"RunBudget(run={self.name!r}, n={self.n_queries}, recommended_k={self.recommended_k}, "
                f"max_k={self.max_k}, tokenizer={self.tokenizer!r})")


@dataclass(frozen=True)
class BudgetReport:
    """k budgets of several runs on one label set; renders as dict/JSON, a long frame, CSV and text."""

    runs: list[RunBudget]
    labels_name: str
    fingerprint: str
    n_labeled_queries: int
    settings: dict
    warnings: tuple[EvalWarning, ...] = field(default=())

    def __getitem__(self, name: str) -> RunBudget:
        for run in self.runs:
            if run.name == name:
                return run
        raise UsageError(f"No run named {name!r}; runs are: {', '.join(r.name for r in self.runs)}.")

    def __iter__(self):
        return iter(self.runs)

    def __len__(self) -> int:
        return len(self.runs)

    def to_dict(self) -> dict:
        return {
            "labels": {"name": self.labels_name, "fingerprint": self.fingerprint,
                       "n_queries": self.n_labeled_queries},
            "runs": [run.to_dict() for run in self.runs],
            "settings": _plain(self.settings),
            "warnings": [w.to_dict() for w in self.warnings],
        }

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), ensure_ascii=False, allow_nan=False)

    def to_frame(self) -> pd.DataFrame:
        """One row per run and k, each carrying run, model, labels, fingerprint, n, tokenizer and price."""
        frames = []
        for run in self.runs:
            table = run.table.copy()
            context = {"run": run.name, "model": run.model, "labels": run.labels_name,
                       "fingerprint": run.fingerprint, "n": run.n_queries, "tokenizer": run.tokenizer,
                       "price_per_mtok": run.price_per_mtok, "price_source": run.price_source,
                       "requests_per_month": run.requests_per_month, "overhead_tokens": run.overhead_tokens}
            for position, (key, value) in enumerate(context.items()):
                table.insert(position, key, value)
            table["recommended"] = table["k"] == run.recommended_k
            table["kneedle"] = table["k"] == (run.kneedle_k or 0)
            frames.append(table)
        return pd.concat(frames, ignore_index=True)

    def to_csv(self) -> str:
        return to_csv(self.to_frame())

    def to_text(self) -> str:
        """A table per run, each headed by its context, then the recommendation and the warnings."""
        return _render_text(self)

    def __repr__(self) -> str:
        shown = ", ".join(f"{r.name}: k={r.recommended_k}" for r in self.runs)
        return f"BudgetReport(labels={self.labels_name}#{self.fingerprint}, {shown})"


def _plain_value(value: object) -> object:
    if isinstance(value, (np.integer,)):
        return int(value)
    if isinstance(value, (np.bool_,)):
        return bool(value)
    if isinstance(value, (float, np.floating)):
        return float(value) if math.isfinite(float(value)) else None
    return value


def _plain(value: object) -> object:
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return _plain_value(value)


def _money(value: float | None, cents: bool = False) -> str:
    """Dollars for a table cell: whole dollars from $100, cents from $1 (or always with ``cents``),
    else three significant digits so small per-request costs do not print as $0.00."""
    if value is None or not math.isfinite(value):
        return "-"
    if abs(value) >= 100 and not cents:
        return f"${value:,.0f}"
    if abs(value) >= 1 or (cents and abs(value) >= 0.01) or value == 0:
        return f"${value:,.2f}"
    return f"${value:.3g}"


def _render_text(report: BudgetReport) -> str:
    out: list[str] = []
    label_ref = f"{report.labels_name}#{report.fingerprint}"
    for run in report.runs:
        level = int(round(run.stop_cost["level"] * 100))
        price_note = (f"{_money(run.price_per_mtok, cents=True)} per million input tokens of the generator LLM"
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
            marks = []
            if row.k == run.recommended_k:
                marks.append("<- recommended")
            if row.k == run.kneedle_k:
                marks.append("<- elbow")
            body.append([
                str(row.k), f"{row.recall:.3f}", f"{row.recall_ci_low:.3f}-{row.recall_ci_high:.3f}",
                f"{row.hit:.3f}", f"{row.hit_ci_low:.3f}-{row.hit_ci_high:.3f}", f"{row.tokens_mean:,.0f}",
                f"{row.tokens_p90:,.0f}", _money(row.cost_per_1k_requests), _money(row.cost_per_month),
                f"{100 * row.marginal_recall:+.1f}",
                "-" if not math.isfinite(row.marginal_recall_per_1k_tokens)
                else f"{100 * row.marginal_recall_per_1k_tokens:.2f}",
                " ".join(marks),
            ])
        lines.append(text_table(header, body, right=set(range(len(header) - 1))))
        rule = run.rule
        curve = ("a smooth fit of the recall curve, n < " f"{FIT_BELOW_QUERIES}") if rule["fit"]["used"] else \
            "the raw recall curve"
        unit = "point" if rule["lambda"] == 1 else "points"
        lam_text = f"lambda = {rule['lambda']:g} recall {unit} per 1,000 tokens ({rule['lambda_source']})"
        lines.append(f"recommended k = {run.recommended_k}: largest 100*recall(k) - lambda*tokens(k)/1000 on "
                     f"{curve}; {lam_text}")
        lines.append("  " + run.summary())
        if run.kneedle_k is not None:
            lines.append(f"  elbow (plain Kneedle on raw recall@k, ignores cost): k = {run.kneedle_k}")
        out.append("\n".join(lines))
    if report.warnings:
        out.append("warnings:\n" + "\n".join(f"  [{w.code}] x{w.count}: {w.message}" for w in report.warnings))
    settings = report.settings
    out.append(f"Intervals: {int(round(settings['level'] * 100))}% (Wilson where every per-query score is 0 or 1, "
               "else BCa bootstrap); "
               f"{settings['n_resamples']:,} resamples, seed {settings['seed']}, shared by intervals, stability and "
               f"stop cost. Relevant = grade >= {settings['min_grade']:g}.")
    return "\n\n".join(out) + "\n"
