"""The presenter view's model: the Failures page's list, in its order, and one failure told in plain words
(`evalcore.analyses.failure_story`) for a shared screen."""

from __future__ import annotations

import streamlit as st

from evalcore.analyses.failure_story import failure_story
from evalcore.store.datasets import Dataset

from dashboard import computed, loading
from dashboard.loading import HASH, Loaded
from dashboard.page_models import failures

INSTEAD = 2
"""What came instead: the first entries shown of each run's list above the relevant doc (the rest are counted)."""


def sequence(dataset: Dataset, k: int, mode: str, runs: tuple[str, ...], sources: tuple[str, ...], text: str,
             order: str) -> list[str]:
    """The queries the Failures page lists with these selections, in its order (what the arrow keys walk)."""
    known = set(failures.source_values(dataset))
    missed = failures.missed_at_k(dataset, k, mode, runs, tuple(s for s in sources if s in known), text, order)
    return missed.sequence if missed is not None else []


def is_evaluated(dataset: Dataset, query: str) -> bool:
    return query in set(loading.evaluated_queries(dataset))


@st.cache_resource(max_entries=128, show_spinner=False, hash_funcs=HASH)
def story(dataset: Dataset, query: str, k: int, runs: tuple[str, ...], mode: str) -> Loaded:
    """One failure for the presenter view: the drill-down, told in plain words."""
    loaded = computed.drill_down(dataset, query, k, runs)
    if not loaded.ok:
        return loaded
    return loading.attempt(failure_story, loaded.value, mode=mode, instead=INSTEAD, chars=170, instead_chars=90)


drill_down = failures.drill_down
scores_shown = failures.scores_shown
