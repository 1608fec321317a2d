"""The Blind judging page's model: the pool of one query (every run's top docs, deduplicated and shuffled) with
each doc's name (its title, else its first line) and text, the queries to judge (flagged ones, then a sampled queries
file's, then the labeled ones), the labels the judgments extend, and what several judges' marks add up to.

From `evalcore.analyses.judging` and `evalcore.analyses.panel`, as plain functions (the view keeps the pool in
`dashboard.caching`); saving a round or one judge's marks, adjudicating, freezing and switching to a version are
writes: `dashboard.saved`. Blind: what a judge is shown of the log (`own_marks`) is only what that person marked;
`panel_status` (agreement, disagreements, every judge's marks) is for the adjudicator and the Integrity page.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from evalcore.analyses.judging import JudgingPool, judging_pool
from evalcore.analyses.panel import (
    JUDGE,
    PanelAgreement,
    agreement_sentence,
    consensus,
    disagreements,
    open_entries,
    panel_agreement,
    read_sampled_queries,
    statistics_table,
)
from evalcore.metrics.dataset import Dataset
from evalcore.readers.sources import open_source
from evalcore.warning_log import plural

from dashboard import loading
from dashboard.loading import DEPTH, Loaded

__all__ = ["DEPTH", "PanelStatus", "evaluated_queries", "first_line", "labels_as_read", "own_marks", "panel_status",
           "pool", "pool_names", "pool_texts", "query_choices", "register", "sampled_queries"]


def evaluated_queries(dataset: Dataset) -> list[str]:
    return loading.evaluated_queries(dataset)


def labels_as_read(dataset: Dataset) -> Loaded:
    """The whole label set as read: a round extends every query's split (the holdout stays in it, sealed)."""
    return loading.labels(dataset.labels)


def register(dataset: Dataset) -> str:
    """Keep a data set that scores another label-set version; its key goes in the URL."""
    return loading.register(dataset)


def sampled_queries(dataset: Dataset) -> Loaded | None:
    """The data set's queries file read as a sample (`evalcore.analyses.panel.read_sampled_queries`: each query's
    text, source, stratum and logged docs), or why it cannot be; None without a queries file."""
    if dataset.queries is None:
        return None
    data = loading.file_bytes(dataset.queries)
    if data is None:
        return Loaded(error=f"{dataset.queries.name}: a file this server no longer holds (upload it again).")
    return loading.attempt(read_sampled_queries, open_source(data, name=dataset.queries.name),
                           format=dataset.queries.format)


def query_choices(dataset: Dataset, flagged: list[str]) -> tuple[list[str], dict[str, str]]:
    """The queries the page offers, in order: flagged for re-judging, then the sampled queries file's (when its
    queries carry a source or a stratum: a sample to judge), then every scored query; and how each is named."""
    scored = evaluated_queries(dataset)
    sample = sampled_queries(dataset)
    sampled: list[str] = []
    names = {q: f"{q} · flagged for re-judging" for q in flagged}
    if sample is not None and sample.ok:
        frame = sample.value.frame
        if frame["source"].notna().any() or frame["stratum"].notna().any():
            sampled = sample.value.queries
            for q in sampled:
                info = sample.value.info(q)
                said = " · ".join(v for v in (info["source"], info["stratum"] and f"stratum {info['stratum']}") if v)
                names.setdefault(q, f"{q} · {said}" if said else q)
    options = list(dict.fromkeys(flagged + sampled + scored))
    return options, {q: names.get(q, q) for q in options}


def pool(dataset: Dataset, query: str, depth: int) -> Loaded:
    """The blind judging pool of ``query``: every run's top ``depth`` docs (and the docs a sampled queries file's log
    gave it), deduplicated and shuffled (seed 0, as ``evalcore judge pool``), against the labels as read (the whole
    set: a round extends every query's split), with the sample's text, source and stratum of the query."""
    loaded = loading.evaluation(dataset)
    whole = loading.labels(dataset.labels)
    if not loaded.ok or not whole.ok:
        return loaded if not loaded.ok else whole
    sample = sampled_queries(dataset)
    info = sample.value.info(query) if sample is not None and sample.ok else {}
    return loading.attempt(judging_pool, [result.run for result in loaded.value.results], whole.value, query,
                           int(depth), extra=info.get("extra", ()), query_text=info.get("query_text"),
                           source=info.get("source"), stratum=info.get("stratum"))


def own_marks(log: pd.DataFrame, who: str, query: str) -> str | None:
    """What a judge is told of the log on a query: when they themselves marked it since its last freeze (None: not
    yet). Nothing about anyone else's marks, nor how many judged a doc relevant."""
    if log.empty:
        return None
    mine = open_entries(log)
    mine = mine[(mine["kind"] == JUDGE) & (mine["who"] == who) & (mine["query"] == query)]
    if mine.empty:
        return None
    return str(mine["at"].iloc[-1])


@dataclass(frozen=True)
class PanelStatus:
    """What several judges' marks on one label set add up to: for the adjudicator (it shows their marks) and, as
    counts and agreement only, for the Integrity page."""

    label_set: str
    judges: tuple[str, ...]
    agreement: PanelAgreement | None
    sentence: str | None  # the agreement in one sentence (None before two judges marked the same pair)
    statistics: pd.DataFrame  # every agreement statistic with its interval
    disagreements: pd.DataFrame  # the open pairs the judges differ on, with each judge's mark
    open_queries: int  # queries marked since their last freeze
    open_pairs: int
    unresolved: int  # tied pairs nobody decided: a freeze waits for them
    freeze: str  # what freezing would do, in words


def panel_status(label_set: str, log: pd.DataFrame, seed: int = 0) -> PanelStatus:
    """The judges' marks on ``label_set`` (`dashboard.saved.panel_marks`) as the page shows them: the agreement with its
    interval (seed ``seed``), the disagreements to adjudicate, and what a freeze would make."""
    if log.empty:
        return PanelStatus(label_set, (), None, None, pd.DataFrame(), pd.DataFrame(), 0, 0, 0,
                           "No judge has saved marks on this label set yet.")
    found = panel_agreement(log, rng=seed)
    differ = disagreements(log)
    final = consensus(log)
    judges = tuple(sorted(log.loc[log["kind"] == JUDGE, "who"].unique()))
    opened = open_entries(log)
    n_open = int(opened["query"].nunique()) if not opened.empty else 0
    if final.marks.empty:
        freeze = "Nothing to freeze: every query judged so far is in a label-set version."
    elif len(final.unresolved):
        freeze = (f"{plural(len(final.unresolved), 'tied pair')} (as many judges said relevant as not) "
                  f"{'waits' if len(final.unresolved) == 1 else 'wait'} for an adjudicator's decision before the "
                  "marks can be frozen.")
    else:
        how = ", ".join(f"{n} {word}" for word, n in final.counts.items() if n)
        freeze = (f"Freezing makes one new label-set version with {plural(len(final.rounds), 'query', 'queries')} "
                  f"and {plural(len(final.marks), 'pair')} ({how}), each query marked blind with its source and "
                  "stratum when its pool came from a sampled queries file.")
    return PanelStatus(label_set, judges, found, agreement_sentence(found) if found is not None else None,
                       statistics_table(found) if found is not None else pd.DataFrame(), differ, n_open,
                       int(final.marks.shape[0] + len(final.unresolved)), int(len(final.unresolved)), freeze)


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
