"""Failures: the queries a run misses at k, and what a person does with that list.

* `failure_list` / `missed_queries` - the (run, query) pairs missed at k, with the rank of every
  relevant doc. Two modes (`evalcore.metrics.failure`, the one definition of failed at k):
  ``"any"`` (some relevant doc is outside the top k: recall@k < 1) and ``"none"`` (no relevant
  doc in the top k at all: hit@k = 0).
* `filter_failures` / `sort_failures` / `query_sequence` / `neighbours` - narrow the list by
  run, source or text, order it, and walk through it query by query.

Where each relevant doc landed comes from `evalcore.analyses.landed` (`landed`, built once and
passed as ``where=`` for every k); one query up close and two runs compared from
`evalcore.analyses.drill_down`. Their names are importable from here too, as before the split.

Every table carries its context (docs/metrics.md): ``k``, the run's ``model``, ``n`` (the queries
evaluated), and the label set's ``labels`` name and ``fingerprint``.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Iterable, Sequence

import numpy as np
import pandas as pd

from ..errors import invalid_parameter
from ..metrics.evaluation import Evaluation, RunResult
from ..metrics.failure import FAILURE_MODE, check_mode, failed_at_k
from .drill_down import (
    DISAGREEMENT_COLUMNS,
    MARK_NON_RELEVANT,
    MARK_RELEVANT,
    MARK_UNJUDGED,
    DrillDown,
    disagreements,
    drill_down,
)
from .landed import RANK_COLUMNS, Landed, RunLanded, chosen_results, landed, landed_text, relevant_ranks, source_key

__all__ = [
    "FAILURE_COLUMNS", "SORT_ORDERS", "FailureList", "failure_list", "filter_failures", "missed_queries",
    "neighbours", "query_sequence", "sort_failures",
    # defined in evalcore.analyses.landed and evalcore.analyses.drill_down, importable from here as before
    "RANK_COLUMNS", "Landed", "RunLanded", "landed", "landed_text", "relevant_ranks",
    "DISAGREEMENT_COLUMNS", "MARK_NON_RELEVANT", "MARK_RELEVANT", "MARK_UNJUDGED", "DrillDown", "disagreements",
    "drill_down",
]

SORT_ORDERS: dict[str, str] = {
    "worst": "worst first (least recall at k, then first relevant doc deepest)",
    "query": "query id",
    "first_rank": "first relevant rank, deepest first",
    "source": "source, then worst first",
}

FAILURE_COLUMNS = [
    "run", "model", "query", "query_text", "source", "n_relevant", "found", "recall", "first_rank", "ranks",
    "k", "n", "labels", "fingerprint",
]


# ----------------------------------------------------------------------------- the failure list


@dataclass(frozen=True)
class FailureList:
    """The failure list as positions: which (run, query) pairs are missed at k, and in which order.

    Narrowing (`filtered`), ordering (`ordered`), counting and walking (`queries`) work on integer
    arrays; a table is built only for the rows asked for (`frame`), so a page that shows the
    first 200 of 30,000 misses pays for 200. `missed_queries` is ``failure_list(...).frame()``.
    """

    evaluation: Evaluation
    where: Landed
    k: int
    results: tuple[RunResult, ...]  # the runs the rows can come from, in evaluation order
    run: np.ndarray  # per row: position in ``results``
    query: np.ndarray  # per row: the evaluated query (index into the evaluation's queries)
    found: np.ndarray  # per row: relevant docs in the top k
    recall: np.ndarray  # per row: recall@k

    def __len__(self) -> int:
        return len(self.run)

    def take(self, rows: np.ndarray) -> "FailureList":
        """These rows (positions or a boolean mask), in this order."""
        return replace(self, run=self.run[rows], query=self.query[rows], found=self.found[rows],
                       recall=self.recall[rows])

    def filtered(self, *, runs: Sequence[str] | None = None, sources: Sequence[str] | None = None,
                 text: str | None = None) -> "FailureList":
        """`filter_failures` on positions: some runs, some sources, a literal case-insensitive text."""
        keep = np.ones(len(self), dtype=bool)
        if runs:
            wanted = np.isin(np.array([r.name for r in self.results], dtype=object), list(runs))
            keep &= wanted[self.run]
        per_query = np.ones(len(self.where.queries), dtype=bool)
        if sources:
            per_query &= _source_matches(pd.Series(self.where.query_fields["source"], dtype=object), sources)
        if text and text.strip():
            per_query &= _text_matches(pd.Series(self.where.queries, dtype=object),
                                       pd.Series(self.where.query_fields["query_text"], dtype=object), text)
        keep &= per_query[self.query]
        return self.take(keep)

    def ordered(self, order: str = "worst") -> "FailureList":
        """These rows in one of `SORT_ORDERS` (as `sort_failures`), runs in evaluation order."""
        first = np.stack([self.where.run(r.name).first_depth for r in self.results]) if self.results \
            else np.zeros((0, 0))
        depth = -first[self.run, self.query] if len(self) else np.zeros(0)
        source_key = self.where.source_order[self.query] if order == "source" else None
        return self.take(_sort_index(order, self.run, self.recall, depth, self.where.query_order[self.query],
                                     source_key))

    def per_run(self) -> dict[str, int]:
        """How many rows each run has (every run of the evaluation, 0 included), in evaluation order."""
        counts = np.bincount(self.run, minlength=len(self.results)) if len(self) else np.zeros(len(self.results))
        return {r.name: int(c) for r, c in zip(self.results, counts)}

    def queries(self) -> list[str]:
        """The distinct queries in the order shown: what next / previous walk through."""
        return self.where.queries[pd.unique(self.query)].tolist()

    def frame(self, limit: int | None = None) -> pd.DataFrame:
        """The first ``limit`` rows (all by default) as the table `missed_queries` returns."""
        run, query = self.run[:limit], self.query[:limit]
        names = np.array([r.name for r in self.results], dtype=object)
        first = np.zeros(len(run), dtype=np.float64)
        words = np.empty(len(run), dtype=object)
        for position, result in enumerate(self.results):
            rows = run == position
            if rows.any():
                mine = self.where.run(result.name)
                first[rows] = mine.first_depth[query[rows]]
                words[rows] = mine.words[query[rows]]
        first_rank = pd.array(np.where(np.isfinite(first), first, 0).astype(np.int64), dtype="Int64")
        first_rank[~np.isfinite(first)] = pd.NA
        fields = self.where.query_fields
        return pd.DataFrame({
            "run": names[run], "model": np.array([r.model for r in self.results], dtype=object)[run],
            "query": self.where.queries[query], "query_text": fields["query_text"][query],
            "source": fields["source"][query], "n_relevant": self.where.n_relevant[query],
            "found": self.found[:limit], "recall": self.recall[:limit], "first_rank": first_rank, "ranks": words,
            "k": self.k, "n": np.array([r.n_queries for r in self.results])[run],
            "labels": self.evaluation.labels.name, "fingerprint": self.evaluation.labels.fingerprint,
        })[FAILURE_COLUMNS]

    def query_texts(self, queries: Sequence[str]) -> dict[str, str | None]:
        """What the customer typed for each of ``queries`` (evaluated or not; None when unknown)."""
        at = self.where.query_lookup.get_indexer(list(queries))
        texts = self.where.query_fields["query_text"]
        return {q: (texts[i] if i >= 0 else None) for q, i in zip(queries, at)}


def failure_list(
    evaluation: Evaluation,
    k: int,
    *,
    mode: str = FAILURE_MODE,
    runs: Iterable[str] | None = None,
    where: Landed | None = None,
) -> FailureList:
    """The (run, query) pairs missed at k as a `FailureList`, worst first within each run.

    ``mode="any"``: some relevant doc is outside the top k (recall@k < 1); ``mode="none"``: no
    relevant doc is in the top k at all (hit@k = 0); ``mode="fragment"``: a relevant doc is in the top k but its
    chunks hold under half the evidence. Pass ``where`` (from `landed`) to reuse the k-independent part across
    calls.
    """
    k = evaluation.check_k(k)
    mode = check_mode(mode)
    chosen = chosen_results(evaluation, runs)
    if where is None:
        where = landed(evaluation, [r.name for r in chosen])
    run_rows, query_rows, found_rows, recall_rows = [], [], [], []
    for position, result in enumerate(chosen):
        mine = where.run(result.name)
        found = mine.found_at(k)
        evidence = result.score(f"evidence_recall@{k}") if mode == "fragment" else None
        keep = np.flatnonzero(failed_at_k(found, mine.n_relevant, mode, evidence))
        run_rows.append(np.full(len(keep), position, dtype=np.int64))
        query_rows.append(keep)
        found_rows.append(found[keep])
        recall_rows.append(result.score(f"recall@{k}")[keep])

    def joined(parts: list[np.ndarray], dtype: type) -> np.ndarray:
        return np.concatenate(parts) if parts else np.zeros(0, dtype=dtype)

    rows = FailureList(evaluation, where, k, tuple(chosen), joined(run_rows, np.int64),
                       joined(query_rows, np.int64), joined(found_rows, np.int64), joined(recall_rows, np.float64))
    return rows.ordered("worst")


def missed_queries(
    evaluation: Evaluation,
    k: int,
    *,
    mode: str = FAILURE_MODE,
    runs: Iterable[str] | None = None,
    where: Landed | None = None,
) -> pd.DataFrame:
    """The queries each run misses at k, one row per (run, query), worst first within each run.

    ``mode="any"``: some relevant doc is outside the top k (recall@k < 1); ``mode="none"``: no
    relevant doc is in the top k at all (hit@k = 0). Columns: ``run``, ``model``, ``query``,
    ``query_text``, ``source``, ``n_relevant``, ``found`` (relevant docs in the top k),
    ``recall`` (recall@k), ``first_rank`` (rank of the first relevant doc at any depth, <NA> if
    none was returned), ``ranks`` (where every relevant doc landed: "2, 14, not in its top 100"),
    then the context ``k``, ``n``, ``labels``, ``fingerprint``. Pass ``where`` (from `landed`)
    to reuse the k-independent part across calls. The same rows as `failure_list`, as a table.
    """
    return failure_list(evaluation, k, mode=mode, runs=runs, where=where).frame()


def _sort_index(order: str, run_key: np.ndarray, recall: np.ndarray, depth_key: np.ndarray, query_key: np.ndarray,
                source_key: np.ndarray | None) -> np.ndarray:
    """Row positions in one of `SORT_ORDERS`: runs first, then the order's keys, query id last."""
    if order not in SORT_ORDERS:
        raise invalid_parameter("order", "one of " + ", ".join(SORT_ORDERS), order)
    if order == "worst":
        keys = [run_key, recall, depth_key, query_key]
    elif order == "query":
        keys = [run_key, query_key]
    elif order == "first_rank":
        keys = [run_key, depth_key, query_key]
    else:
        keys = [run_key, source_key, recall, depth_key, query_key]
    return np.lexsort(keys[::-1])


def _source_matches(source: pd.Series, sources: Sequence[str]) -> np.ndarray:
    """Whether each source is one of ``sources`` (None matches ``(not set)``)."""
    return source.astype(object).where(source.notna(), "(not set)").isin(list(sources)).to_numpy()


def _text_matches(ids: pd.Series, texts: pd.Series, text: str) -> np.ndarray:
    """Whether ``text`` is in each query id or text: literal, ignoring case."""
    needle = text.strip().lower()
    in_id = ids.astype(str).str.lower().str.contains(needle, regex=False)
    in_text = texts.fillna("").astype(str).str.lower().str.contains(needle, regex=False)
    return (in_id | in_text).to_numpy()


def sort_failures(frame: pd.DataFrame, order: str = "worst") -> pd.DataFrame:
    """``frame`` (from `missed_queries`) in one of `SORT_ORDERS`, keeping runs in their order.

    ``worst``: least recall at k first, then the first relevant doc deepest (none returned
    deepest of all), then query id.
    """
    if order not in SORT_ORDERS:
        raise invalid_parameter("order", "one of " + ", ".join(SORT_ORDERS), order)
    if frame.empty:
        return frame.reset_index(drop=True)
    run_order = pd.factorize(frame["run"].to_numpy(dtype=object))[0]
    depth_key = -frame["first_rank"].to_numpy(dtype=np.float64, na_value=np.inf)
    query_key = pd.factorize(frame["query"].to_numpy(dtype=object), sort=True)[0]
    recall = frame["recall"].to_numpy(dtype=np.float64)
    by_source = source_key(frame["source"]) if order == "source" else None
    return frame.iloc[_sort_index(order, run_order, recall, depth_key, query_key, by_source)].reset_index(drop=True)


def filter_failures(
    frame: pd.DataFrame,
    *,
    runs: Sequence[str] | None = None,
    sources: Sequence[str] | None = None,
    text: str | None = None,
) -> pd.DataFrame:
    """Rows of ``frame`` for some runs, some sources, and whose query id or text contains ``text``.

    ``text`` is matched literally and case-insensitively (no patterns); an empty selection
    means "no filter". A source of None matches the value ``(not set)``.
    """
    keep = np.ones(len(frame), dtype=bool)
    if runs:
        keep &= frame["run"].isin(list(runs)).to_numpy()
    if sources:
        keep &= _source_matches(frame["source"], sources)
    if text and text.strip():
        keep &= _text_matches(frame["query"], frame["query_text"], text)
    return frame[keep].reset_index(drop=True)


def query_sequence(frame: pd.DataFrame) -> list[str]:
    """The distinct queries of a failure list in the order shown: what next / previous walk through."""
    return pd.unique(frame["query"].to_numpy(dtype=object)).tolist()


def neighbours(sequence: Sequence[str], query: str | None) -> tuple[str | None, str | None]:
    """The queries before and after ``query`` in ``sequence`` (None at either end or if absent)."""
    if query is None or query not in sequence:
        return None, (sequence[0] if sequence else None)
    i = list(sequence).index(query)
    return (sequence[i - 1] if i > 0 else None), (sequence[i + 1] if i + 1 < len(sequence) else None)
