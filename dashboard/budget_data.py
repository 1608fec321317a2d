"""The Choose k page's numbers: `evalcore.analyses.budget.k_budget` for every run and k, and its chart.

Keyed on content hashes as `dashboard.data` is; the chart is built once per data set, settings and runs
(`dashboard.charts.choose_k`), and k only moves its rule.
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


@st.cache_data(max_entries=32, show_spinner=False, hash_funcs={**data.HASH, BudgetSettings: repr})
def chart_spec(dataset: Dataset, settings: BudgetSettings, runs: tuple[str, ...], all_runs: tuple[str, ...],
               context: str, price_text: str, money: bool) -> dict:
    """The Choose k chart (`charts.choose_k`) as a spec, built once per data set, settings and runs; k only moves
    its rule (`charts.set_k`), which is drawn in the PNG download only."""
    budgets = [budget(dataset, settings).value[name] for name in runs]
    frame = pd.concat([r.table.assign(run=r.name) for r in budgets], ignore_index=True)[CHART_COLUMNS]
    marks = pd.DataFrame([{"run": r.name, "k": r.recommended_k, "recall": r.row(r.recommended_k)["recall"],
                           "label": f"recommended k = {r.recommended_k}"} for r in budgets])
    models = "models: " + "; ".join(f"{r.name} = {r.model}" for r in budgets)
    return charts.choose_k(frame, marks, all_runs, context=context, models=models, price_text=price_text,
                           money=money).to_dict()
