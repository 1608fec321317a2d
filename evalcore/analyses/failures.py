"""Failures: the queries a run misses at k, where each relevant doc landed, and one query up close.

Everything here reads the `RankedGrades` an `Evaluation` already holds (the one join between a
run and the labels), so nothing is joined twice and every count agrees with the metrics:

* `landed` / `relevant_ranks` - one row per run, evaluated query and relevant doc, with the
  doc's rank in that run (any depth; empty when the run did not return it). It does not depend
  on k, so a front end builds it once (`landed`) and passes it to the functions below for
  every k (``where=``).
* `missed_queries` - the (run, query) pairs missed at k, with the rank of every relevant doc.
  Two modes: ``"any"`` (some relevant doc is outside the top k: recall@k < 1) and ``"none"``
  (no relevant doc in the top k at all: hit@k = 0).
* `filter_failures` / `sort_failures` / `query_sequence` - what a person does with that list:
  narrow it by run, source or text, order it, and walk through it query by query.
* `drill_down` - one query: what the customer typed, each relevant doc with its text, and
  each run's ranked list with every doc marked relevant / judged non-relevant / unjudged,
  and where each relevant doc landed ("rank 14", "not in top 100").
* `disagreements` - queries one run gets at k and another misses, biggest gap first.

Where a relevant doc landed, in words: ``rank 14`` when the run returned it (at any depth),
``not in top N`` when the run returned N docs for the query without it, ``query not in run``
when the run has no ranking for the query (it scores 0, SPEC.md §2).

Every table carries its context (SPEC.md §3): ``k``, the run's ``model``, ``n`` (the queries
evaluated), and the label set's ``labels`` name and ``fingerprint``.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Iterable, Sequence

import numpy as np
import pandas as pd

from ..errors import UsageError, invalid_parameter
from ..metrics.evaluation import Evaluation, RunResult
from ..metrics.failure import check_mode, failed_at_k
from ..readers.documents import Documents

MARK_RELEVANT = "relevant"
MARK_NON_RELEVANT = "judged non-relevant"
MARK_UNJUDGED = "unjudged"

SORT_ORDERS: dict[str, str] = {
    "worst": "worst first (least recall at k, then first relevant doc deepest)",
    "query": "query id",
    "first_rank": "first relevant rank, deepest first",
    "source": "source, then worst first",
}

RANK_COLUMNS = ["run", "query", "doc_id", "grade", "rank", "n_returned", "in_run"]
FAILURE_COLUMNS = [
    "run", "model", "query", "query_text", "source", "n_relevant", "found", "recall", "first_rank", "ranks",
    "k", "n", "labels", "fingerprint",
]
DISAGREEMENT_COLUMNS = [
    "query", "query_text", "source", "gets", "misses", "recall_gets", "recall_misses", "gap",
    "first_rank_gets", "first_rank_misses", "ranks_gets", "ranks_misses", "model_gets", "model_misses",
    "k", "n", "labels", "fingerprint",
]


# ----------------------------------------------------------------------------- checks


def _chosen_results(evaluation: Evaluation, runs: Iterable[str] | None) -> list[RunResult]:
    if runs is None:
        return list(evaluation.results)
    wanted = list(runs)
    known = set(evaluation.run_names)
    unknown = [r for r in wanted if r not in known]
    if unknown:
        raise UsageError(f"No run named {unknown[0]!r}; runs are: {', '.join(evaluation.run_names)}.")
    return [r for r in evaluation.results if r.name in set(wanted)]


# ----------------------------------------------------------------------------- where relevant docs landed


def landed_text(rank: object, n_returned: int, in_run: bool) -> str:
    """``rank 14``, ``not in top 100`` or ``query not in run``: where one relevant doc landed."""
    if not in_run:
        return "query not in run"
    if rank is None or pd.isna(rank):
        return f"not in top {int(n_returned)}"
    return f"rank {int(rank)}"


@dataclass(frozen=True)
class RunLanded:
    """Where one run put the relevant docs: per relevant-doc row and per evaluated query."""

    name: str
    query_index: np.ndarray  # per row: the evaluated query (index into the evaluation's queries)
    rank: np.ndarray  # per row: 1-based rank at any depth, inf when the run did not return the doc
    n_relevant: np.ndarray  # per query
    first_rank: pd.api.extensions.ExtensionArray  # per query, Int64, <NA> when no relevant doc was returned
    words: np.ndarray  # per query: "2, 14, not in top 100"

    def found_at(self, k: int) -> np.ndarray:
        """Relevant docs each query has in the top k."""
        return np.bincount(self.query_index, weights=self.rank <= k, minlength=len(self.n_relevant)).astype(np.int64)

    @cached_property
    def first_depth(self) -> np.ndarray:
        """``first_rank`` as floats, inf where no relevant doc was returned (for sorting and gathering)."""
        return self.first_rank.to_numpy(dtype=np.float64, na_value=np.inf)


@dataclass(frozen=True)
class Landed:
    """Where every run put every relevant doc (no k in it): build once with `landed`, reuse for every k.

    ``frame`` is the long table of `relevant_ranks`; ``runs`` holds the same per run as arrays.
    """

    frame: pd.DataFrame
    runs: dict[str, RunLanded]
    query_fields: dict[str, np.ndarray] = field(default_factory=dict)  # query_text, source, ... per evaluated query
    queries: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=object))  # the evaluated queries

    @cached_property
    def n_relevant(self) -> np.ndarray:
        """Relevant docs per evaluated query (the labels' count, the same for every run)."""
        return next(iter(self.runs.values())).n_relevant if self.runs else np.zeros(len(self.queries), dtype=np.int64)

    @cached_property
    def query_lookup(self) -> pd.Index:
        """The evaluated queries as an index: a query id's position."""
        return pd.Index(self.queries, dtype=object)

    @cached_property
    def query_order(self) -> np.ndarray:
        """Each evaluated query's position among the query ids sorted."""
        return pd.factorize(self.queries, sort=True)[0]

    @cached_property
    def source_order(self) -> np.ndarray:
        """Each evaluated query's position among the sources sorted, queries without one last."""
        return _source_key(pd.Series(self.query_fields["source"], dtype=object))

    def run(self, name: str) -> RunLanded:
        if name not in self.runs:
            raise UsageError(f"No run named {name!r} in these ranks; runs are: {', '.join(self.runs)}.")
        return self.runs[name]


def landed(evaluation: Evaluation, runs: Iterable[str] | None = None) -> Landed:
    """Where each run (or each of ``runs``) put each relevant doc of each evaluated query."""
    frames, per_run = [], {}
    for result in _chosen_results(evaluation, runs):
        ranked = result.ranked
        index = ranked.index
        n_docs = max(len(index.doc_ids), 1)
        keys = np.asarray(index.keys, dtype=np.int64)
        relevant = index.grades >= index.min_grade
        rel_keys = keys[relevant]
        q_index = rel_keys // n_docs
        label_doc = rel_keys % n_docs
        # Relevant docs the run returned, re-coded from the run's doc codes to the labels' ones.
        rows = ranked.relevant_rows
        run_codes = rows["doc_code"].to_numpy()
        used = np.unique(run_codes)
        label_of_used = index.doc_ids.get_indexer(result.run.doc_ids[used])
        label_code = label_of_used[np.searchsorted(used, run_codes)]
        returned_keys = rows["query_index"].to_numpy(np.int64) * n_docs + label_code
        where = pd.Index(returned_keys).get_indexer(rel_keys)
        row_ranks = rows["rank"].to_numpy(np.float64)
        rank = (np.where(where >= 0, row_ranks[np.maximum(where, 0)], np.inf) if len(row_ranks)
                else np.full(len(rel_keys), np.inf))  # the run returned no relevant doc at all
        doc_ids = index.doc_ids.to_numpy(dtype=object)[label_doc]
        order = np.lexsort((label_doc, rank, q_index))  # per query, best-ranked first
        q_index, rank, doc_ids = q_index[order], rank[order], doc_ids[order]
        grades = index.grades[relevant][order]
        n_returned = ranked.n_returned[q_index]
        in_run = ranked.in_run[q_index]

        finite = np.isfinite(rank)
        words = np.where(finite, np.where(finite, rank, 0).astype(np.int64).astype(str),
                         np.char.add("not in top ", n_returned.astype(str)))
        words = np.where(in_run, words, "query not in run").astype(object)
        first = ranked.first_relevant
        first_rank = pd.array(first, dtype="Int64")
        first_rank[first == 0] = pd.NA
        per_run[result.name] = RunLanded(result.name, q_index, rank, index.n_relevant, first_rank,
                                         _joined(words, q_index, result.n_queries))
        rank_column = pd.array(np.where(np.isfinite(rank), rank, 0).astype(np.int64), dtype="Int64")
        rank_column[~np.isfinite(rank)] = pd.NA
        frames.append(pd.DataFrame({
            "run": result.name, "query": index.queries[q_index], "doc_id": doc_ids, "grade": grades,
            "rank": rank_column, "n_returned": n_returned, "in_run": in_run, "query_index": q_index,
        }))
    frame = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame({c: [] for c in RANK_COLUMNS})
    queries = evaluation.results[0].queries if evaluation.results else np.zeros(0, dtype=object)
    return Landed(frame, per_run, _query_fields(evaluation, queries), np.asarray(queries, dtype=object))


def relevant_ranks(evaluation: Evaluation, runs: Iterable[str] | None = None) -> pd.DataFrame:
    """One row per run, evaluated query and relevant doc: the doc's 1-based rank in that run.

    ``rank`` is an integer at any depth the run returned, <NA> when the run did not return the
    doc; ``n_returned`` is the length of the query's ranking; ``in_run`` is False when the run
    has no ranking for the query; ``query_index`` is the query's position in the evaluation.
    Rows come run by run, queries in evaluation order, each query's docs best-ranked first
    (docs not returned last). k does not enter.
    """
    return landed(evaluation, runs).frame


def _joined(words: np.ndarray, q_index: np.ndarray, n_q: int) -> np.ndarray:
    """Words joined per query ("2, 14, not in top 100"); rows are grouped by query already."""
    out = np.full(n_q, "", dtype=object)
    if len(words) == 0:
        return out
    starts = np.flatnonzero(np.r_[True, q_index[1:] != q_index[:-1]])
    joined = np.add.reduceat(words + ", ", starts)  # string concatenation per query, in C
    out[q_index[starts]] = pd.Series(joined, dtype=object).str.slice(0, -2).to_numpy(dtype=object)
    return out


def _query_fields(evaluation: Evaluation, queries: np.ndarray) -> dict[str, np.ndarray]:
    """``query_text``, ``source``, ``split`` and ``blind`` of ``queries`` (None where absent)."""
    info = evaluation.labels.query_info
    aligned = info.reindex(pd.Index(queries, dtype=object)) if len(info.columns) else None
    out = {}
    for name in ("query_text", "source", "split", "blind"):
        if aligned is None or name not in aligned.columns:
            out[name] = np.full(len(queries), None, dtype=object)
        else:
            column = aligned[name].astype(object)
            out[name] = column.where(column.notna(), None).to_numpy(dtype=object)
    return out


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
    mode: str = "any",
    runs: Iterable[str] | None = None,
    where: Landed | None = None,
) -> FailureList:
    """The (run, query) pairs missed at k as a `FailureList`, worst first within each run.

    ``mode="any"``: some relevant doc is outside the top k (recall@k < 1); ``mode="none"``: no
    relevant doc is in the top k at all (hit@k = 0). Pass ``where`` (from `landed`) to reuse the
    k-independent part across calls.
    """
    k = evaluation.check_k(k)
    mode = check_mode(mode)
    chosen = _chosen_results(evaluation, runs)
    if where is None:
        where = landed(evaluation, [r.name for r in chosen])
    run_rows, query_rows, found_rows, recall_rows = [], [], [], []
    for position, result in enumerate(chosen):
        mine = where.run(result.name)
        found = mine.found_at(k)
        keep = np.flatnonzero(failed_at_k(found, mine.n_relevant, mode))
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
    mode: str = "any",
    runs: Iterable[str] | None = None,
    where: Landed | None = None,
) -> pd.DataFrame:
    """The queries each run misses at k, one row per (run, query), worst first within each run.

    ``mode="any"``: some relevant doc is outside the top k (recall@k < 1); ``mode="none"``: no
    relevant doc is in the top k at all (hit@k = 0). Columns: ``run``, ``model``, ``query``,
    ``query_text``, ``source``, ``n_relevant``, ``found`` (relevant docs in the top k),
    ``recall`` (recall@k), ``first_rank`` (rank of the first relevant doc at any depth, <NA> if
    none was returned), ``ranks`` (where every relevant doc landed: "2, 14, not in top 100"),
    then the context ``k``, ``n``, ``labels``, ``fingerprint``. Pass ``where`` (from `landed`)
    to reuse the k-independent part across calls. The same rows as `failure_list`, as a table.
    """
    return failure_list(evaluation, k, mode=mode, runs=runs, where=where).frame()


def _fields_at(evaluation: Evaluation, where: Landed, queries: np.ndarray, rows: np.ndarray) -> dict[str, np.ndarray]:
    """Per-query fields of ``queries`` (rows ``rows`` of the evaluated queries), from ``where`` when it has them."""
    if where.query_fields:
        return {name: values[rows] for name, values in where.query_fields.items()}
    return _query_fields(evaluation, queries)


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


def _source_key(source: pd.Series) -> np.ndarray:
    """Sort positions of sources, queries without one last."""
    return pd.factorize(source.astype(object).where(source.notna(), "\uffff").to_numpy(dtype=object), sort=True)[0]


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
    source_key = _source_key(frame["source"]) if order == "source" else None
    return frame.iloc[_sort_index(order, run_order, recall, depth_key, query_key, source_key)].reset_index(drop=True)


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


# ----------------------------------------------------------------------------- one query up close


@dataclass(frozen=True)
class DrillDown:
    """One evaluated query: what was asked, what is relevant, and what every run returned.

    ``relevant``: one row per relevant doc (``doc_id``, ``grade``, ``text``) with one column
    per run saying where it landed ("rank 14", "not in top 100", "query not in run").
    ``landed``: the same as a long table (``run``, ``doc_id``, ``rank``, ``landed``, ``in_top_k``).
    ``rankings``: one row per run and rank down to ``depth``: ``doc_id``, ``grade``, ``mark``
    (relevant / judged non-relevant / unjudged), ``in_top_k``, ``text``.
    ``scores``: per run ``recall@k``, ``hit@k`` and ``rr`` for this query.
    """

    query: str
    query_text: str | None
    source: str | None
    split: str | None
    blind: bool | None
    k: int
    depth: int
    runs: tuple[str, ...]
    models: dict[str, str]
    relevant: pd.DataFrame
    landed: pd.DataFrame
    rankings: pd.DataFrame
    scores: pd.DataFrame
    labels: str
    fingerprint: str
    judged_non_relevant: int = 0
    notes: tuple[str, ...] = field(default=())

    def ranking(self, run: str) -> pd.DataFrame:
        """The ranked list of one run (rank, doc_id, grade, mark, in_top_k, text)."""
        if run not in self.runs:
            raise UsageError(f"No run named {run!r} in this drill-down; runs are: {', '.join(self.runs)}.")
        return self.rankings[self.rankings["run"] == run].drop(columns="run").reset_index(drop=True)

    def to_dict(self) -> dict:
        """Plain types for JSON: the query, its relevant docs with where they landed, each ranking."""
        def records(frame: pd.DataFrame) -> list[dict]:
            plain = frame.astype(object).where(frame.notna(), None)
            return plain.to_dict(orient="records")
        return {
            "query": self.query, "query_text": self.query_text, "source": self.source, "split": self.split,
            "blind": self.blind, "k": self.k, "depth": self.depth, "models": dict(self.models),
            "labels": {"name": self.labels, "fingerprint": self.fingerprint},
            "relevant": records(self.relevant), "landed": records(self.landed),
            "rankings": {run: records(self.ranking(run)) for run in self.runs},
            "scores": records(self.scores), "notes": list(self.notes),
        }


def _doc_texts(documents: Documents | None, doc_ids: np.ndarray) -> np.ndarray:
    if documents is None or not documents.has_text:
        return np.full(len(doc_ids), None, dtype=object)
    texts = documents.frame["text"].reindex(pd.Index(doc_ids, dtype=object))
    return texts.astype(object).where(texts.notna(), None).to_numpy(dtype=object)


def drill_down(
    evaluation: Evaluation,
    query: str,
    k: int,
    *,
    documents: Documents | None = None,
    runs: Iterable[str] | None = None,
    depth: int | None = None,
    where: Landed | None = None,
) -> DrillDown:
    """Everything about one evaluated query at cutoff k, for every run (or ``runs``).

    ``depth`` limits the ranked lists (default: the evaluation's depth). With ``documents``
    each doc carries its text; without, ``text`` is empty. Raises a usage error for a query
    that is not evaluated (not labeled, or with no relevant doc).
    """
    k = evaluation.check_k(k)
    chosen = _chosen_results(evaluation, runs)
    if not chosen:
        raise UsageError("A drill-down needs at least one run.")
    queries = chosen[0].queries
    hits = np.flatnonzero(queries == query)
    if not len(hits):
        raise UsageError(f"Query {query!r} is not evaluated: it is not in the labels or has no relevant doc.")
    qi = int(hits[0])
    limit = min(r.depth for r in chosen) if depth is None else int(depth)
    if limit < 1:
        raise invalid_parameter("depth", "an integer >= 1", depth)
    limit = min(limit, min(r.depth for r in chosen))

    ranks = (where or landed(evaluation, [r.name for r in chosen])).frame
    mine = ranks[(ranks["query_index"] == qi).to_numpy() & ranks["run"].isin([r.name for r in chosen]).to_numpy()]
    mine = mine.reset_index(drop=True)
    spots = mine[["run", "doc_id", "rank"]].copy()
    spots["landed"] = [landed_text(r, n, i) for r, n, i in
                        zip(mine["rank"], mine["n_returned"], mine["in_run"])]
    spots["in_top_k"] = (mine["rank"].to_numpy(dtype=np.float64, na_value=np.inf) <= k)

    first = mine[mine["run"] == chosen[0].name]
    docs = first["doc_id"].to_numpy(dtype=object)
    relevant = pd.DataFrame({"doc_id": docs, "grade": first["grade"].to_numpy()})
    for result in chosen:
        spot = spots[spots["run"] == result.name].set_index("doc_id")["landed"]
        relevant[result.name] = spot.reindex(docs).to_numpy(dtype=object)
    relevant["text"] = _doc_texts(documents, docs)

    frames, scores, notes = [], [], []
    min_grade = chosen[0].ranked.index.min_grade
    for result in chosen:
        ranked = result.ranked
        shown = ranked.returned[qi, :limit]
        n_shown = int(shown.sum())
        codes = ranked.doc_codes[qi, :n_shown]
        grades = ranked.grades[qi, :n_shown]
        marks = np.where(np.isnan(grades), MARK_UNJUDGED,
                         np.where(grades >= min_grade, MARK_RELEVANT, MARK_NON_RELEVANT)).astype(object)
        doc_ids = result.run.doc_ids[codes] if n_shown else np.array([], dtype=object)
        frames.append(pd.DataFrame({
            "run": result.name,
            "rank": np.arange(1, n_shown + 1),
            "doc_id": doc_ids.astype(object),
            "grade": grades,
            "mark": marks,
            "in_top_k": np.arange(1, n_shown + 1) <= k,
            "text": _doc_texts(documents, doc_ids),
        }))
        if not ranked.in_run[qi]:
            notes.append(f"run {result.name} has no ranking for this query; it scores 0 on every metric")
        scores.append({"run": result.name, "model": result.model, f"recall@{k}": float(result.score(f"recall@{k}")[qi]),
                       f"hit@{k}": float(result.score(f"hit@{k}")[qi]), "rr": float(result.score("mrr")[qi]),
                       "first_rank": int(ranked.first_relevant[qi]) or None, "n_returned": int(ranked.n_returned[qi])})

    judgments = evaluation.labels.judgments
    mine_j = judgments[judgments["query"] == query]
    non_relevant = int((mine_j["grade"] < min_grade).sum())
    info = {name: values[0] for name, values in _query_fields(evaluation, np.array([query], dtype=object)).items()}
    blind = info["blind"]
    return DrillDown(
        query=str(query), query_text=info["query_text"], source=info["source"], split=info["split"],
        blind=None if blind is None else bool(blind), k=k, depth=limit, runs=tuple(r.name for r in chosen),
        models={r.name: r.model for r in chosen}, relevant=relevant, landed=spots.reset_index(drop=True),
        rankings=pd.concat(frames, ignore_index=True), scores=pd.DataFrame(scores),
        labels=evaluation.labels.name, fingerprint=evaluation.labels.fingerprint,
        judged_non_relevant=non_relevant, notes=tuple(notes),
    )


# ----------------------------------------------------------------------------- runs compared


def disagreements(
    evaluation: Evaluation,
    k: int,
    a: str,
    b: str,
    *,
    mode: str = "any",
    where: Landed | None = None,
) -> pd.DataFrame:
    """Queries one of two runs gets at k and the other misses, biggest disagreement first.

    "Gets" follows ``mode``: with ``"any"`` a run gets a query when every relevant doc is in
    its top k, with ``"none"`` when at least one is. One row per query where exactly one run
    gets it: ``gets`` / ``misses`` name the runs, ``recall_*`` their recall@k, ``gap`` the
    difference (``recall_gets - recall_misses``), ``first_rank_*`` and ``ranks_*`` where
    their relevant docs landed. Ordered by ``gap``, then by how much deeper the missing run
    put its first relevant doc (none returned counts as deepest).
    """
    k = evaluation.check_k(k)
    mode = check_mode(mode)
    if a == b:
        raise UsageError(f"Pick two different runs to compare; got {a!r} twice.")
    ra, rb = evaluation[a], evaluation[b]
    if where is None:
        where = landed(evaluation, [a, b])
    pa, pb = where.run(a), where.run(b)
    found_a, found_b = pa.found_at(k), pb.found_at(k)
    gets_a, gets_b = ~failed_at_k(found_a, pa.n_relevant, mode), ~failed_at_k(found_b, pb.n_relevant, mode)
    rec_a, rec_b = ra.score(f"recall@{k}"), rb.score(f"recall@{k}")
    keep = np.flatnonzero(gets_a != gets_b)
    a_wins = gets_a[keep]
    queries = ra.queries[keep]
    fields = _fields_at(evaluation, where, queries, keep)

    def pick(when_a: np.ndarray, when_b: np.ndarray) -> np.ndarray:
        return np.where(a_wins, when_a[keep], when_b[keep])

    first_a = pa.first_rank.to_numpy(dtype=np.float64, na_value=np.nan)
    first_b = pb.first_rank.to_numpy(dtype=np.float64, na_value=np.nan)
    table = pd.DataFrame({
        "query": queries,
        "query_text": fields["query_text"],
        "source": fields["source"],
        "gets": np.where(a_wins, a, b).astype(object),
        "misses": np.where(a_wins, b, a).astype(object),
        "recall_gets": pick(rec_a, rec_b),
        "recall_misses": pick(rec_b, rec_a),
        "first_rank_gets": pd.array(pick(first_a, first_b), dtype="Float64").astype("Int64"),
        "first_rank_misses": pd.array(pick(first_b, first_a), dtype="Float64").astype("Int64"),
        "ranks_gets": pick(pa.words, pb.words),
        "ranks_misses": pick(pb.words, pa.words),
        "model_gets": np.where(a_wins, ra.model, rb.model).astype(object),
        "model_misses": np.where(a_wins, rb.model, ra.model).astype(object),
    })
    table["gap"] = table["recall_gets"] - table["recall_misses"]
    table["k"] = k
    table["n"] = ra.n_queries
    table["labels"] = evaluation.labels.name
    table["fingerprint"] = evaluation.labels.fingerprint
    if table.empty:
        return table[DISAGREEMENT_COLUMNS]
    deep = (table["first_rank_misses"].astype("Float64").fillna(np.inf)
            - table["first_rank_gets"].astype("Float64").fillna(np.inf)).astype(np.float64)
    deep = np.nan_to_num(deep.to_numpy(), nan=0.0, posinf=1e9)
    sorter = pd.DataFrame({"gap": -table["gap"].to_numpy(), "deep": -deep, "query": table["query"].astype(str)})
    order = sorter.sort_values(["gap", "deep", "query"], kind="stable").index.to_numpy()
    return table.iloc[order][DISAGREEMENT_COLUMNS].reset_index(drop=True)
