"""The Choose k page's numbers: `evalcore.analyses.budget.k_budget` for every run and k, and its chart.

Keyed on content hashes as `dashboard.data` is; the chart is built once per data set, settings and runs
(`dashboard.charts.choose_k`), and k only moves its rule. `k_window` is the k range the chart opens on.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from concurrent.futures import Future, ThreadPoolExecutor
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


_BUDGETS: "OrderedDict[tuple[str, str], Future]" = OrderedDict()
_BUDGETS_LOCK = threading.Lock()
_BUDGETS_POOL = ThreadPoolExecutor(max_workers=1, thread_name_prefix="evalcore-budget")
_BUDGETS_KEPT = 16


def _done(value: data.Loaded) -> Future:
    future: Future = Future()
    future.set_result(value)
    return future


def _future(dataset: Dataset, settings: BudgetSettings) -> Future:
    """The computation for ``dataset`` and ``settings``, started once in a background thread (keyed by content).
    The evaluation and documents are read here, in the page's thread, from their caches."""
    from evalcore.analyses.budget import k_budget

    key = (dataset.key, repr(settings))
    with _BUDGETS_LOCK:
        future = _BUDGETS.get(key)
    if future is not None:
        return future
    loaded = data.evaluation(dataset)
    docs = data.documents(dataset.documents) if dataset.documents is not None else None
    doc_value = docs.value if docs is not None and docs.ok else None
    with _BUDGETS_LOCK:
        future = _BUDGETS.get(key)
        if future is None:
            future = _BUDGETS[key] = _done(loaded) if not loaded.ok else _BUDGETS_POOL.submit(
                data.load, k_budget, loaded.value, docs=doc_value, max_k=data.DEPTH,
                price_per_mtok=settings.price_per_mtok, requests_per_month=settings.requests_per_month,
                overhead_tokens=settings.overhead_tokens, lam=settings.lam, chunk_tokens=settings.chunk_tokens)
            while len(_BUDGETS) > _BUDGETS_KEPT:
                _BUDGETS.popitem(last=False)
        else:
            _BUDGETS.move_to_end(key)
    return future


def budget(dataset: Dataset, settings: BudgetSettings) -> data.Loaded:
    """`evalcore.analyses.budget.k_budget` for every run, k = 1..`DEPTH` (k-independent: the k control only reads
    it). Computed once per data set and settings, shared by every visitor."""
    future = _future(dataset, settings)
    if not future.done():
        with st.spinner("Counting prompt tokens and resampling the recall curves…"):
            return future.result()
    return future.result()


def default_settings(dataset: Dataset) -> BudgetSettings:
    """The settings of a first visit: every input at its default (300-token chunks when the documents cannot size
    them)."""
    return BudgetSettings(chunk_tokens=None if has_chunk_sizes(dataset) else DEFAULT_CHUNK_TOKENS)


def prepare(dataset: Dataset) -> None:
    """Start the first visit's Choose k numbers in the background (the Overview calls this after its first chart),
    so that page opens on numbers already computed."""
    _future(dataset, default_settings(dataset))


DEFAULT_CHUNK_TOKENS = 300
"""The chunk size assumed when the documents file has neither text nor token counts."""


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
