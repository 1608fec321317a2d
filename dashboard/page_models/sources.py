"""The Sources page's model: every metric split by ``source`` and the customers-versus-team gap.

Keyed on content hashes as `dashboard.loading` is, over the same all-k evaluation, so changing k or the page never
re-reads or re-scores a file. The numbers come from `evalcore.analyses.segments`.
"""

from __future__ import annotations

import streamlit as st

from evalcore.errors import EvalcoreError
from evalcore.analyses.segments import segment_gaps
from evalcore.analyses.slices import DEFAULT_MIN_SLICE_N, slice_metrics

from evalcore.store.datasets import Dataset

from dashboard import loading
from dashboard.loading import HASH, Loaded

FIELD = "source"

METRICS = ("recall@k", "recall@1", "hit@k", "precision@k", "ndcg@k", "judged@k", "mrr")
"""The metrics the page splits, as written with the chosen k left open; `at_k` fills it in."""


def at_k(metric: str, k: int) -> str:
    return metric.replace("@k", f"@{int(k)}")


def metrics_at(k: int) -> list[str]:
    """Every metric of the page at ``k`` (recall@1 once when k = 1)."""
    return list(dict.fromkeys(at_k(m, k) for m in METRICS))


@st.cache_data(max_entries=16, show_spinner=False, hash_funcs=HASH)
def has_source(dataset: Dataset) -> bool:
    """Whether the labels carry a ``source`` field (a column, or a key in JSONL)."""
    loaded = loading.labels(dataset.labels)
    return loaded.ok and loaded.value.field(FIELD) is not None


@st.cache_data(max_entries=32, show_spinner="Splitting every metric by source…", hash_funcs=HASH)
def _slices(dataset: Dataset, k: int) -> Loaded:
    """`slice_metrics` by ``source`` at ``k``: the per-source bootstrap, the same whatever the minimum n."""
    loaded = loading.evaluation(dataset)
    if not loaded.ok:
        return loaded
    try:
        return Loaded(slice_metrics(loaded.value, FIELD, metrics_at(k)))
    except EvalcoreError as exc:
        return Loaded(error=str(exc))


@st.cache_data(max_entries=64, show_spinner=False, hash_funcs=HASH)
def source_gaps(dataset: Dataset, k: int, min_n: int = DEFAULT_MIN_SLICE_N) -> Loaded:
    """`evalcore.analyses.segments.segment_gaps` by ``source`` for every metric at ``k``, or the message why not."""
    slices = _slices(dataset, k)
    if not slices.ok:
        return slices
    try:
        return Loaded(segment_gaps(loading.evaluation(dataset).value, FIELD, metrics_at(k), min_n=int(min_n),
                                        slices=slices.value))
    except EvalcoreError as exc:
        return Loaded(error=str(exc))
