"""The dashboard's one cache of computed results: what is kept across reruns and sessions, and how long.

Page models (`dashboard.page_models`) and the shared results (`dashboard.computed`) are plain functions and import no
Streamlit, so a page's numbers can be computed and tested without a running app. This module wraps them in Streamlit's
caches: the shared results by name below (each a plain call of `dashboard.computed` or the core, kept by content), a
page's own values with `kept` (the view, or the page model for a part it reuses, asks for ``kept(fn)(...)``), and what
a page remembers for every session with `held`. Files read and parsed are kept where they are read,
`dashboard.loading` (files in, objects out).

Keys are content hashes (`HASH`): a data set by its manifest's key, a file by its sha256, settings by their repr, so
changing k, the page or a filter never re-reads or re-scores a file. ``st.cache_resource`` keeps one shared copy of
what is never changed after it is built; ``st.cache_data`` (``copies=True``) hands each caller its own copy of a table
a page might reshape.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from concurrent.futures import Future
from typing import Any, Callable, TypeVar

import streamlit as st

from evalcore.analyses import failures as core_failures
from evalcore.analyses.compare import ComparisonReport
from evalcore.analyses.decision import Decision
from evalcore.analyses.k_settings import BudgetSettings
from evalcore.analyses.slices import slice_metrics
from evalcore.metrics.split import Reveal
from evalcore.metrics.dataset import Dataset
from evalcore.vectors.index_spec import index_memory_budget

from dashboard import computed, loading
from dashboard.loading import Loaded

HASH = {**loading.HASH, BudgetSettings: repr, Reveal: lambda r: r.id}
"""How kept functions hash their arguments: data sets and files by content, settings by what they say, a reveal by
its id in the workspace."""

F = TypeVar("F", bound=Callable[..., Any])
_WRAPPED: dict[tuple, Any] = {}


def kept(fn: F, *, entries: int | None = 64, spinner: bool | str = False, copies: bool = False) -> F:
    """``fn`` kept by its arguments (`HASH`), the last ``entries`` results, for every session: called again with
    the same arguments it returns the value kept. ``spinner``: what the page says while it computes; ``copies``: each
    caller gets its own copy (for tables a page might change), else every caller shares one value."""
    key = (fn, entries, spinner, copies)
    found = _WRAPPED.get(key)
    if found is None:
        cache = st.cache_data if copies else st.cache_resource
        found = _WRAPPED[key] = cache(fn, max_entries=entries, show_spinner=spinner, hash_funcs=HASH)
    return found


@st.cache_resource(show_spinner=False)
def _held(name: str, location: str) -> dict:
    return {}


def held(name: str) -> dict:
    """A dict every session of this workspace shares, for the server's life (``name``: whose it is): what a page
    remembers between visits, e.g. uploaded vector models by their key. A team's dict never holds another's."""
    return _held(name, str(loading.workspace_location()))


def waited(future: Future, message: str) -> Any:
    """The result of a background job (`dashboard.jobs`), saying ``message`` while the page waits for it."""
    if not future.done():
        with st.spinner(message):
            return future.result()
    return future.result()


# ----------------------------------------------------------------------------- results several pages share


@st.cache_resource(max_entries=64, show_spinner=False, hash_funcs=HASH)
def summary(dataset: Dataset, k: int, more: bool = False):
    """`dashboard.computed.summary`, shared and never changed."""
    return computed.summary(dataset, k, more)


@st.cache_resource(max_entries=64, show_spinner=False, hash_funcs=HASH)
def comparison(dataset: Dataset, k: int, baseline: str) -> ComparisonReport | None:
    """`dashboard.computed.comparison` (waits for the all-k curves)."""
    return computed.comparison(dataset, k, baseline)


@st.cache_resource(max_entries=8, show_spinner=False, hash_funcs=HASH)
def caveats_every_k(dataset: Dataset) -> dict[int, dict[str, dict]]:
    """`dashboard.computed.caveats_every_k`: each run's checks at every k, once per data set."""
    return computed.caveats_every_k(dataset)


def budget(dataset: Dataset, settings: BudgetSettings) -> Loaded:
    """`evalcore.analyses.budget.k_budget` for every run, k = 1..`DEPTH` (`dashboard.computed.budget_job`: computed
    once per data set and settings, in the background, shared by every visitor)."""
    return waited(computed.budget_job(dataset, settings), "Counting prompt tokens and resampling the recall curves…")


def decision(dataset: Dataset, runs: tuple[str, ...], settings: BudgetSettings | None = None) -> Decision | None:
    """The meeting's answers for the runs shown under ``settings`` (default: none said yet), one
    `evalcore.analyses.decision.Decision` shared by every page and visitor: the Overview's best run, Choose k's k to
    take and chunking, the Failures page's counts. Each answer is computed when a page first reads it (the k budget
    from `budget`, where the relevant docs landed from `landed`). None when the files cannot be scored."""
    return _decision(dataset, tuple(runs), settings or BudgetSettings())


@st.cache_resource(max_entries=64, show_spinner=False, hash_funcs=HASH)
def _decision(dataset: Dataset, runs: tuple[str, ...], settings: BudgetSettings) -> Decision | None:
    loaded = loading.evaluation(dataset)
    if not loaded.ok:
        return None
    return Decision(loaded.value, settings, runs=runs, budget=lambda: budget(dataset, settings).value,
                    where=lambda: landed(dataset))


@st.cache_resource(max_entries=8, show_spinner="Finding where every relevant doc landed…", hash_funcs=HASH)
def landed(dataset: Dataset) -> core_failures.Landed | None:
    """Where each run put each relevant doc (`dashboard.computed.landed`; k-independent, once per data set)."""
    return computed.landed(dataset)


@st.cache_resource(max_entries=64, show_spinner=False, hash_funcs=HASH)
def missed(dataset: Dataset, k: int, mode: str) -> core_failures.FailureList | None:
    """The (run, query) pairs missed at k (`dashboard.computed.missed`; shared, never changed)."""
    return computed.missed(dataset, k, mode, landed(dataset))


@st.cache_resource(max_entries=128, show_spinner=False, hash_funcs=HASH)
def drill_down(dataset: Dataset, query: str, k: int, runs: tuple[str, ...]) -> Loaded:
    """One query up close (`dashboard.computed.drill_down`)."""
    return computed.drill_down(dataset, query, k, runs, landed(dataset))


@st.cache_resource(max_entries=32, show_spinner="Setting the answer grades beside retrieval…", hash_funcs=HASH)
def answers(dataset: Dataset, k: int) -> Loaded | None:
    """`dashboard.computed.answers`: the answer grades beside retrieval at k (None without grades), shared and never
    changed (Answers, Overview, Present)."""
    return computed.answers(dataset, k)


@st.cache_data(max_entries=32, show_spinner="Splitting every metric by source…", hash_funcs=HASH)
def slices(dataset: Dataset, field: str, metrics: tuple[str, ...]) -> Loaded:
    """`evalcore.analyses.slices.slice_metrics` by ``field`` (the per-slice bootstrap, the same whatever the fewest
    queries a slice needs to be ranked), or the message why not: Sources and Integrity split by source."""
    loaded = loading.evaluation(dataset)
    return loading.attempt(slice_metrics, loaded.value, field, list(metrics)) if loaded.ok else loaded


# ----------------------------------------------------------------------------- built approximate indexes


INDEX_BUILDS = 4
"""Built approximate indexes kept for every session: the last 4 used, and together within the index memory budget
(`evalcore.vectors.index_spec.index_memory_budget`), since each may take up to that budget."""


class BuiltIndexes:
    """Built indexes by key (`evalcore.vectors.ann_runs.BuildStore`: the model's files and the build's parameters),
    the last ``entries`` used and at most ``budget`` bytes written out together (the newest is always kept: it was
    built within the budget)."""

    def __init__(self, entries: int = INDEX_BUILDS, budget: int | None = None) -> None:
        self.entries = entries
        self.budget = budget
        self._kept: OrderedDict[tuple, tuple] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: tuple) -> tuple | None:
        with self._lock:
            found = self._kept.get(key)
            if found is not None:
                self._kept.move_to_end(key)
            return found

    def __setitem__(self, key: tuple, value: tuple) -> None:
        """Keep ``value`` (index, build seconds, bytes written out), forgetting the least recently used over the
        bounds."""
        budget = self.budget if self.budget is not None else index_memory_budget()
        with self._lock:
            self._kept[key] = value
            self._kept.move_to_end(key)
            while len(self._kept) > 1 and (len(self._kept) > self.entries or
                                           sum(int(v[2]) for v in self._kept.values()) > budget):
                self._kept.popitem(last=False)

    def __len__(self) -> int:
        return len(self._kept)


@st.cache_resource(show_spinner=False)
def _built_indexes() -> BuiltIndexes:
    return BuiltIndexes()


def built_indexes() -> BuiltIndexes:
    """The server's one store of built approximate indexes (`BuiltIndexes`, bounded), shared by every session."""
    return _built_indexes()
