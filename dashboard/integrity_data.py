"""The Integrity and Blind judging pages' numbers: the audit, the numbers a recorded reveal unseals, a judging pool.

Keyed on content hashes as `dashboard.data` is, over its all-k evaluation; every number comes from
`evalcore.analyses.audit`, `evalcore.metrics.split` and `evalcore.analyses.judging`. Recording a reveal,
flagging and saving a judging round are writes: `dashboard.saved`.
"""

from __future__ import annotations

import streamlit as st

from evalcore.analyses.audit import audit
from evalcore.analyses.judging import JudgingPool, judging_pool
from evalcore.metrics.split import Reveal, SplitRule, scoring_labels

from dashboard import data
from dashboard.store import Dataset

POOL_DEPTH = 10
"""The depth the audit's pooling table looks at (each run's top 10)."""


@st.cache_resource(max_entries=32, show_spinner="Auditing the labels…", hash_funcs=data.HASH)
def audit_at(dataset: Dataset, k: int) -> data.Loaded:
    """`evalcore.analyses.audit.audit` of the scored labels at ``--k 1,k``, suspects at k (shared, never changed)."""
    loaded = data.evaluation(dataset)
    if not loaded.ok:
        return loaded
    return data.load(audit, loaded.value.at(sorted({1, int(k)})), pool_depth=POOL_DEPTH, suspect_k=int(k))


@st.cache_resource(max_entries=16, show_spinner="Scoring the revealed queries…",
                   hash_funcs={**data.HASH, Reveal: lambda r: r.id})
def revealed_at(dataset: Dataset, split: str, reveal: Reveal, k: int) -> data.Loaded:
    """The numbers on the holdout (or all queries) at ``--k 1,k``, against a reveal recorded in the workspace."""
    full = data.labels(dataset.labels)
    if not full.ok:
        return full
    runs = [r.value for r in data.runs_of(dataset)]
    return data.load(lambda: scoring_labels(full.value, SplitRule(), reveal, split).evaluate(runs, sorted({1, int(k)})))


@st.cache_resource(max_entries=64, show_spinner=False, hash_funcs=data.HASH)
def pool(dataset: Dataset, query: str, depth: int) -> data.Loaded:
    """The blind judging pool of ``query``: every run's top ``depth`` docs, deduplicated and shuffled (seed 0, as
    ``evalcore judge pool``), against the labels as read (the whole set: a round extends every query's split)."""
    loaded = data.evaluation(dataset)
    whole = data.labels(dataset.labels)
    if not loaded.ok or not whole.ok:
        return loaded if not loaded.ok else whole
    return data.attempt(judging_pool, [result.run for result in loaded.value.results], whole.value, query, int(depth))


def pool_texts(dataset: Dataset, judged: JudgingPool) -> dict[str, str | None] | None:
    """Each pooled doc's text from the documents file (None without one)."""
    if dataset.documents is None:
        return None
    docs = data.documents(dataset.documents)
    return {d: docs.value.text(d) for d in judged.docs} if docs.ok else None
