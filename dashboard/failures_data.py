"""The Failures page's numbers: what was missed at k, runs compared, one query up close; and the presenter
view's one failure told in plain words (`story`).

Keyed on content hashes as `dashboard.data` is, over its all-k evaluation; every list comes from
`evalcore.analyses.failures` (one definition of failed at k: `evalcore.metrics.failure`).
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from evalcore.analyses import failures as core_failures
from evalcore.analyses.failure_story import failure_story

from dashboard import data
from dashboard.store import Dataset


@st.cache_resource(max_entries=8, show_spinner="Finding where every relevant doc landed…", hash_funcs=data.HASH)
def landed(dataset: Dataset) -> core_failures.Landed | None:
    """Where each run put each relevant doc (k-independent; computed once per data set)."""
    loaded = data.evaluation(dataset)
    return core_failures.landed(loaded.value) if loaded.ok else None


@st.cache_resource(max_entries=64, show_spinner=False, hash_funcs=data.HASH)
def missed(dataset: Dataset, k: int, mode: str) -> core_failures.FailureList | None:
    """The (run, query) pairs missed at k, as positions (`evalcore.analyses.failures.FailureList`; shared, never
    changed)."""
    loaded = data.evaluation(dataset)
    if not loaded.ok:
        return None
    return core_failures.failure_list(loaded.value, k, mode=mode, where=landed(dataset))


@st.cache_data(max_entries=64, show_spinner=False, hash_funcs=data.HASH)
def disagreements(dataset: Dataset, k: int, a: str, b: str, mode: str) -> pd.DataFrame:
    loaded = data.evaluation(dataset)
    if not loaded.ok:
        return pd.DataFrame(columns=core_failures.DISAGREEMENT_COLUMNS)
    return core_failures.disagreements(loaded.value, k, a, b, mode=mode, where=landed(dataset))


@st.cache_resource(max_entries=128, show_spinner=False, hash_funcs=data.HASH)
def drill_down(dataset: Dataset, query: str, k: int, runs: tuple[str, ...]) -> data.Loaded:
    loaded = data.evaluation(dataset)
    if not loaded.ok:
        return loaded
    docs = data.documents(dataset.documents) if dataset.documents else None
    doc_value = docs.value if docs is not None and docs.ok else None
    return data.load(core_failures.drill_down, loaded.value, query, k, documents=doc_value, runs=list(runs),
                     where=landed(dataset))


@st.cache_resource(max_entries=128, show_spinner=False, hash_funcs=data.HASH)
def story(dataset: Dataset, query: str, k: int, runs: tuple[str, ...], mode: str) -> data.Loaded:
    """One failure for the presenter view (`evalcore.analyses.failure_story`): the drill-down, told in plain words."""
    loaded = drill_down(dataset, query, k, runs)
    if not loaded.ok:
        return loaded
    return data.attempt(failure_story, loaded.value, mode=mode, instead=3, chars=260, instead_chars=90)


@st.cache_resource(max_entries=128, show_spinner=False, hash_funcs=data.HASH)
def failure_list(dataset: Dataset, k: int, mode: str, runs: tuple[str, ...], sources: tuple[str, ...], text: str,
                 order: str) -> core_failures.FailureList | None:
    """The Failures page's list: missed at k, for the runs shown, filtered and in the chosen order (positions: the
    page builds a table only for the rows it shows)."""
    rows = missed(dataset, k, mode)
    return None if rows is None else rows.filtered(runs=list(runs), sources=list(sources), text=text).ordered(order)


@st.cache_data(max_entries=64, show_spinner=False, hash_funcs=data.HASH)
def disagreement_list(dataset: Dataset, k: int, a: str, b: str, mode: str, sources: tuple[str, ...],
                      text: str) -> pd.DataFrame:
    table = disagreements(dataset, k, a, b, mode)
    return core_failures.filter_failures(table, sources=list(sources), text=text)


@st.cache_data(max_entries=16, show_spinner=False, hash_funcs=data.HASH)
def source_values(dataset: Dataset) -> list[str]:
    """The ``source`` values of the labeled queries (``(not set)`` where a query has none)."""
    loaded = data.labels(dataset.labels)
    if not loaded.ok:
        return []
    values = loaded.value.field("source")
    if values is None:
        return []
    return sorted({str(x) if x is not None and not pd.isna(x) else "(not set)" for x in values.tolist()})


def scores_shown(drill: core_failures.DrillDown) -> pd.DataFrame:
    """The drill-down's per-run scores as a table for people: the first relevant rank in words where a run returned
    none ("none in its 100"), never a blank or None."""
    shown = drill.scores.copy()
    ranks = shown["first_rank"].astype(object)
    shown["first_rank"] = [f"{int(r)}" if r is not None and not pd.isna(r) else f"none in its {int(n)}"
                           for r, n in zip(ranks, shown["n_returned"])]
    return shown


def rows_shown(table: core_failures.FailureList, limit: int, columns: list[str]) -> pd.DataFrame:
    """The first ``limit`` rows of the failure list as the page shows them: "1 of 2" relevant found, the first
    relevant rank in words where a run returned none ("none returned"), a missing source as "(not set)"."""
    shown = table.frame(limit=limit)
    first = shown["first_rank"].astype("Float64")
    return shown.assign(
        found=shown["found"].astype(str) + " of " + shown["n_relevant"].astype(str),
        first_rank=[str(int(r)) if not pd.isna(r) else "none returned" for r in first.tolist()],
        source=shown["source"].astype(object).where(shown["source"].notna(), "(not set)"),
    )[columns]
