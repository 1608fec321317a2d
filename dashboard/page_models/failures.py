"""The Failures page's model: what was missed at k (the list, its counts in one sentence per run), runs compared,
and one query up close (the drill-down), from `evalcore.analyses.failures` over the all-k evaluation. One definition
of "missed at k" (`evalcore.metrics.failure`) for the page, the presenter view, the report and the ledger. Plain
functions: what was missed and where each relevant doc landed come through `dashboard.caching`, and the view keeps
what these return there.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from evalcore.analyses import failures as core_failures
from evalcore.analyses.landed import not_returned
from evalcore.metrics.failure import MISS_MODES, MISS_NAMES
from evalcore.report.headlines import failures_headline
from evalcore.metrics.dataset import Dataset
from evalcore.warning_log import plural

from dashboard import caching, loading
from dashboard.loading import Loaded

MAX_ROWS = 200
"""Rows sent to the browser per table (worst first; filters narrow it); the CSV has them all."""
LIST_COLUMNS = ["run", "query", "query_text", "source", "found", "recall", "first_rank", "ranks"]
COMPARE_COLUMNS = ["query", "query_text", "gets", "misses", "recall_gets", "recall_misses", "ranks_gets",
                   "ranks_misses", "source"]


@dataclass(frozen=True)
class MissedAtK:
    """The list of (run, query) pairs missed at k for the runs shown, filtered and in the chosen order."""

    table: core_failures.FailureList  # every row (the CSV)
    sequence: list[str]  # the distinct queries in list order: next / previous walk them
    counts: str  # one sentence: per run, how many queries were missed at k
    caption: str  # what a row is, with k, n, models and labels
    shown: pd.DataFrame  # the first `MAX_ROWS` rows as the page shows them
    more: str | None  # how many rows are left out of the table, when some are


def source_values(dataset: Dataset) -> list[str]:
    """The ``source`` values of the labeled queries (``(not set)`` where a query has none)."""
    loaded = loading.labels(dataset.labels)
    if not loaded.ok:
        return []
    values = loaded.value.field("source")
    if values is None:
        return []
    return sorted({str(x) if x is not None and not pd.isna(x) else "(not set)" for x in values.tolist()})


def has_evidence(dataset: Dataset) -> bool:
    """Whether a run here can be scored on evidence (labels with spans, chunks placed in their documents): then a
    query can fail as a fragment too."""
    loaded = loading.evaluation(dataset)
    return loaded.ok and any(r.scores.has_evidence for r in loaded.value.results)


def headline(dataset: Dataset, k: int, mode: str, runs: tuple[str, ...]) -> str | None:
    """The page's headline (`evalcore.report.headlines.failures_headline`) for the runs shown, before any filter:
    the run failing the fewest queries at k, the others beside it, and what a larger k would rescue (the decision's
    failures at k, `evalcore.analyses.decision`: the report's and the ledger's count in the one meaning)."""
    decision = caching.decision(dataset, runs)
    if decision is None or not decision.failure_runs(mode):
        return None
    return failures_headline(decision.failures_at(k, mode))


def evaluated_queries(dataset: Dataset) -> list[str]:
    """Every query the pages score (those a link may open)."""
    return loading.evaluated_queries(dataset)


def rows_shown(table: core_failures.FailureList, limit: int, columns: list[str]) -> pd.DataFrame:
    """The first ``limit`` rows of the failure list as the page shows them: "1 of 2" relevant found, the first
    relevant rank in words where a run returned none (as its ``ranks`` say it: "not in its top 100", or "query not in
    run"), a missing source as "(not set)"."""
    shown = table.frame(limit=limit)
    first = shown["first_rank"].astype("Float64")
    return shown.assign(
        found=shown["found"].astype(str) + " of " + shown["n_relevant"].astype(str),
        first_rank=[str(int(r)) if not pd.isna(r) else str(words).split(", ")[0]
                    for r, words in zip(first.tolist(), shown["ranks"])],
        source=shown["source"].astype(object).where(shown["source"].notna(), "(not set)"),
    )[columns]


def missed_at_k(dataset: Dataset, k: int, mode: str, runs: tuple[str, ...], sources: tuple[str, ...], text: str,
                order: str) -> MissedAtK | None:
    """The page's list (None when the files cannot be scored: the header says why)."""
    rows = caching.missed(dataset, k, mode)
    if rows is None:
        return None
    evaluation = loading.evaluation(dataset).value
    n = evaluation.results[0].n_queries
    labels = evaluation.labels
    model = {r.name: r.model for r in evaluation.results}
    table = rows.filtered(runs=list(runs), sources=list(sources), text=text).ordered(order)
    sequence = table.queries()
    per_run = table.per_run()
    counted = [run for run in runs if run in per_run] or list(per_run)
    counts = ("; ".join(f"{run}: {per_run.get(run, 0):,} of {n:,} queries {MISS_NAMES[mode]} at k = {k}"
                        for run in counted) + "."
              + (" Only the queries matching the filters above are counted." if sources or text else ""))
    caption = (f"{plural(len(table), 'row')} ({plural(len(sequence), 'distinct query', 'distinct queries')}), each a "
               f"query that {MISS_MODES[mode]} · k = {k} · n = {n:,} queries per run · labels "
               f"{labels.name}#{labels.fingerprint} · " + "; ".join(f"{r} = {model[r]}" for r in counted))
    more = (f"Showing the first {MAX_ROWS:,} of {len(table):,} rows in this order; narrow the list with the filters, "
            "or download the CSV for all of them.") if len(table) > MAX_ROWS else None
    return MissedAtK(table, sequence, counts, caption, rows_shown(table, MAX_ROWS, LIST_COLUMNS), more)


def selected_row(shown: pd.DataFrame, query: str | None) -> list[int]:
    """The row of ``query`` in the table shown (to select it), or none."""
    if query is None:
        return []
    return np.flatnonzero(shown["query"].to_numpy(dtype=object) == query)[:1].tolist()


@dataclass(frozen=True)
class RunsCompared:
    """The queries one run gets and another misses, biggest gap first."""

    frame: pd.DataFrame  # every row (the CSV)
    shown: pd.DataFrame
    caption: str
    more: str | None


def runs_compared(dataset: Dataset, k: int, a: str, b: str, mode: str, sources: tuple[str, ...],
                  text: str) -> RunsCompared:
    """The queries ``a`` gets and ``b`` misses at k and the other way round, filtered, biggest gap first."""
    loaded = loading.evaluation(dataset)
    evaluation = loaded.value
    table = core_failures.disagreements(evaluation, k, a, b, mode=mode, where=caching.landed(dataset))
    diffs = core_failures.filter_failures(table, sources=list(sources), text=text)
    n = evaluation.results[0].n_queries
    labels = evaluation.labels
    model = {r.name: r.model for r in evaluation.results}
    a_gets = int((diffs["gets"] == a).sum())
    caption = (f"{a} gets {a_gets:,} queries that {b} misses; {b} gets {len(diffs) - a_gets:,} that {a} misses "
               f"('gets' = {'a relevant doc' if mode == 'none' else 'every relevant doc'} in the top k) · biggest gap "
               f"first · k = {k} · n = {n:,} · {a} = {model[a]}; {b} = {model[b]} · labels "
               f"{labels.name}#{labels.fingerprint}")
    more = (f"Showing the first {MAX_ROWS:,} of {len(diffs):,} queries (biggest gap first); narrow them with the "
            "filters, or download the CSV for all of them.") if len(diffs) > MAX_ROWS else None
    return RunsCompared(diffs, diffs.head(MAX_ROWS)[COMPARE_COLUMNS], caption, more)


def drill_down(dataset: Dataset, query: str, k: int, runs: tuple[str, ...]) -> Loaded:
    """One query up close (`evalcore.analyses.failures.drill_down`), or why not."""
    return caching.drill_down(dataset, query, k, runs)


def scores_shown(drill: core_failures.DrillDown) -> pd.DataFrame:
    """The drill-down's per-run scores as a table for people: the first relevant rank in words where a run returned
    none (`evalcore.analyses.landed.not_returned`: "not in its top 100"), never a blank or None."""
    shown = drill.scores.copy()
    ranks = shown["first_rank"].astype(object)
    shown["first_rank"] = [f"{int(r)}" if r is not None and not pd.isna(r) else not_returned(int(n))
                           for r, n in zip(ranks, shown["n_returned"])]
    return shown


def register(dataset: Dataset) -> str:
    """Keep ``dataset`` (a label-set version switched to) and return the key its link names."""
    return loading.register(dataset)


def ranked_runs(dataset: Dataset, runs: tuple[str, ...]) -> tuple[str, ...]:
    """The runs shown, best first (the Overview's order: hit@1, then the closest to the best): "Runs compared" opens
    on the best against the next best."""
    found = caching.decision(dataset, runs).best
    return (found.best, *(c.run for c in found.comparisons))
