"""The Blind judging page's model: the pool of one query (every run's top docs, deduplicated and shuffled) with
each doc's name (its title, else its first line) and text, the queries to judge, and the labels the judgments
extend.

From `evalcore.analyses.judging`, as plain functions (the view keeps the pool in `dashboard.caching`); saving a round
and switching to a version are writes: `dashboard.saved`.
"""

from __future__ import annotations

from evalcore.analyses.judging import JudgingPool, judging_pool
from evalcore.metrics.dataset import Dataset

from dashboard import loading
from dashboard.loading import DEPTH, Loaded

__all__ = ["DEPTH", "evaluated_queries", "first_line", "labels_as_read", "pool", "pool_names", "pool_texts",
           "register"]


def evaluated_queries(dataset: Dataset) -> list[str]:
    return loading.evaluated_queries(dataset)


def labels_as_read(dataset: Dataset) -> Loaded:
    """The whole label set as read: a round extends every query's split (the holdout stays in it, sealed)."""
    return loading.labels(dataset.labels)


def register(dataset: Dataset) -> str:
    """Keep a data set that scores another label-set version; its key goes in the URL."""
    return loading.register(dataset)


def pool(dataset: Dataset, query: str, depth: int) -> Loaded:
    """The blind judging pool of ``query``: every run's top ``depth`` docs, deduplicated and shuffled (seed 0, as
    ``evalcore judge pool``), against the labels as read (the whole set: a round extends every query's split)."""
    loaded = loading.evaluation(dataset)
    whole = loading.labels(dataset.labels)
    if not loaded.ok or not whole.ok:
        return loaded if not loaded.ok else whole
    return loading.attempt(judging_pool, [result.run for result in loaded.value.results], whole.value, query, int(depth))


def pool_texts(dataset: Dataset, judged: JudgingPool) -> dict[str, str | None] | None:
    """Each pooled doc's text from the documents file (None without one)."""
    if dataset.documents is None:
        return None
    docs = loading.documents(dataset.documents)
    return {d: docs.value.text(d) for d in judged.docs} if docs.ok else None


def pool_names(dataset: Dataset, judged: JudgingPool) -> dict[str, str]:
    """What each pooled doc is called beside its id: its title from the documents file, else the start of its first
    line of text (`NAME_CHARS` at most); empty without a documents file or when the doc has neither."""
    if dataset.documents is None:
        return {d: "" for d in judged.docs}
    docs = loading.documents(dataset.documents)
    if not docs.ok:
        return {d: "" for d in judged.docs}
    return {d: docs.value.title(d) or first_line(docs.value.text(d)) for d in judged.docs}


NAME_CHARS = 90
"""The longest name a pooled doc gets from its text when the documents file gives it no title."""


def first_line(text: str | None, limit: int = NAME_CHARS) -> str:
    """The first non-blank line of ``text``, whitespace collapsed, cut after a word at ``limit`` characters (then
    ending in "…"); empty for no text."""
    text = text if isinstance(text, str) else ""
    line = next((" ".join(part.split()) for part in text.splitlines() if part.strip()), "")
    if len(line) <= limit:
        return line
    cut = line[:limit + 1].rsplit(" ", 1)[0] if " " in line[:limit + 1] else line[:limit]
    return cut.rstrip(" ,.;:-") + "…"
