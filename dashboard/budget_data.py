"""The Choose k page's numbers: `evalcore.analyses.budget.k_budget` for every run and k, and its chart.

Keyed on content hashes as `dashboard.data` is; the chart is built once per data set, settings and runs
(`dashboard.charts.choose_k`), and k only moves its rule. `k_window` is the k range the chart opens on.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd
import streamlit as st

from dashboard import charts, data
from dashboard.store import Dataset


@dataclass(frozen=True)
class BudgetSettings:
    """What the person sets on the Choose k page; None = the core's default."""

    price_per_mtok: float | None = None
    requests_per_month: float | None = None
    overhead_tokens: int = 0
    lam: float | None = None
    chunk_tokens: int | None = None


@st.cache_resource(max_entries=32, show_spinner="Counting prompt tokens and resampling the recall curves…",
                   hash_funcs={**data.HASH, BudgetSettings: repr})
def budget(dataset: Dataset, settings: BudgetSettings) -> data.Loaded:
    """`evalcore.analyses.budget.k_budget` for every run, k = 1..`DEPTH` (k-independent: the k control only reads
    it)."""
    from evalcore.analyses.budget import k_budget

    loaded = data.evaluation(dataset)
    if not loaded.ok:
        return loaded
    docs = data.documents(dataset.documents) if dataset.documents is not None else None
    doc_value = docs.value if docs is not None and docs.ok else None
    return data.load(k_budget, loaded.value, docs=doc_value, max_k=data.DEPTH,
                     price_per_mtok=settings.price_per_mtok, requests_per_month=settings.requests_per_month,
                     overhead_tokens=settings.overhead_tokens, lam=settings.lam, chunk_tokens=settings.chunk_tokens)


def has_chunk_sizes(dataset: Dataset) -> bool:
    """Whether the documents file can size chunks (text or token counts)."""
    if dataset.documents is None:
        return False
    docs = data.documents(dataset.documents)
    return docs.ok and (docs.value.has_text or docs.value.has_tokens)


CHART_COLUMNS = ["run", "k", "recall", "recall_ci_low", "recall_ci_high", "tokens_mean", "tokens_p90", "cost_per_month"]
WINDOW_MIN = 10


def k_window(runs) -> int:
    """The k range the chart opens on, 1..this: where the decision is. Twice the largest recommended k or elbow of
    the runs shown (``RunBudget``s), at least `WINDOW_MIN`, at most `data.DEPTH`."""
    largest = max((max(r.recommended_k or 0, r.kneedle_k or 0) for r in runs), default=0)
    return int(min(data.DEPTH, max(WINDOW_MIN, 2 * largest)))


def picked_k(event) -> int | None:
    """The k a click on the Choose k chart picked (Streamlit's selection event, `charts.PICK`), or None."""
    try:
        points = (event or {}).get("selection", {}).get(charts.PICK) or []
        return int(round(float(points[0]["k"]))) if points else None
    except (AttributeError, KeyError, TypeError, ValueError, IndexError):
        return None


@st.cache_data(max_entries=32, show_spinner=False, hash_funcs={**data.HASH, BudgetSettings: repr})
def chart_spec(dataset: Dataset, settings: BudgetSettings, runs: tuple[str, ...], all_runs: tuple[str, ...],
               context: str, money: bool, k_max: int) -> dict:
    """The Choose k chart (`charts.choose_k`, k = 1..``k_max``) as a spec, built once per data set, settings, runs
    and range; k only moves its rule (`charts.set_k`)."""
    budgets = [budget(dataset, settings).value[name] for name in runs]
    frame = pd.concat([r.table.assign(run=r.name) for r in budgets], ignore_index=True)[CHART_COLUMNS]
    marks = pd.DataFrame([{"run": r.name, "k": r.recommended_k, "recall": r.row(r.recommended_k)["recall"]}
                          for r in budgets])
    models = "models: " + "; ".join(f"{r.name} = {r.model}" for r in budgets)
    return charts.choose_k(frame, marks, all_runs, context=context, models=models, money=money, k_max=k_max).to_dict()
