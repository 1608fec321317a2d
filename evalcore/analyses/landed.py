"""Where each relevant doc landed: its rank in every run, for every evaluated query (no k in it).

Everything here reads the `RankedGrades` an `Evaluation` already holds (the one join between a
run and the labels), so nothing is joined twice and every count agrees with the metrics.
`landed` builds, once, the long table of `relevant_ranks` and the same per run as arrays; the
failure list (`evalcore.analyses.failures`) and the drill-down (`evalcore.analyses.drill_down`)
read it for every k (their ``where=``).

Where a relevant doc landed, in words (`landed_text`): ``rank 14`` when the run returned it (at
any depth), ``not in its top N`` (`not_returned`) when the run returned N docs for the query without it,
``query not in run`` when the run has no ranking for the query (it scores 0, docs/metrics.md). These are the
one wording for where a relevant doc landed: say it through `landed_text` and `not_returned`, never anew.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Iterable

import numpy as np
import pandas as pd

from ..errors import UsageError
from ..metrics.evaluation import Evaluation, RunResult

RANK_COLUMNS = ["run", "query", "doc_id", "grade", "rank", "n_returned", "in_run"]


def chosen_results(evaluation: Evaluation, runs: Iterable[str] | None) -> list[RunResult]:
    """The results of ``runs`` (all when None), in evaluation order; a usage error names an unknown run."""
    if runs is None:
        return list(evaluation.results)
    wanted = list(runs)
    known = set(evaluation.run_names)
    unknown = [r for r in wanted if r not in known]
    if unknown:
        raise UsageError(f"No run named {unknown[0]!r}; runs are: {', '.join(evaluation.run_names)}.")
    return [r for r in evaluation.results if r.name in set(wanted)]


def runs_for_mode(evaluation: Evaluation, mode: str, runs: Iterable[str] | None = None) -> tuple[str, ...]:
    """The runs of ``runs`` (default: every run) a meaning of failure applies to: all of them, except that a fragment
    needs evidence (chunks placed in their documents, labels with evidence spans): then those of ``runs`` that have
    it, or every run that has it when none of ``runs`` does."""
    chosen = tuple(r.name for r in chosen_results(evaluation, runs))
    if mode != "fragment":
        return chosen
    known = [r.name for r in evaluation.results if r.scores.has_evidence]
    return tuple(r for r in chosen if r in known) or tuple(known)


NOT_RETURNED = "not in its top "
"""How a relevant doc the run did not return is said, before the run's depth (`not_returned`)."""
NOT_IN_RUN = "query not in run"
"""How a query the run has no ranking for is said."""


def not_returned(depth: int) -> str:
    """``not in its top 100``: a relevant doc the run did not return, with how many docs it returned."""
    return f"{NOT_RETURNED}{int(depth)}"


def landed_text(rank: object, n_returned: int, in_run: bool) -> str:
    """``rank 14``, ``not in its top 100`` or ``query not in run``: where one relevant doc landed."""
    if not in_run:
        return NOT_IN_RUN
    if rank is None or pd.isna(rank):
        return not_returned(n_returned)
    return f"rank {int(rank)}"


@dataclass(frozen=True)
class RunLanded:
    """Where one run put the relevant docs: per relevant-doc row and per evaluated query."""

    name: str
    query_index: np.ndarray  # per row: the evaluated query (index into the evaluation's queries)
    rank: np.ndarray  # per row: 1-based rank at any depth, inf when the run did not return the doc
    n_relevant: np.ndarray  # per query
    first_rank: pd.api.extensions.ExtensionArray  # per query, Int64, <NA> when no relevant doc was returned
    words: np.ndarray  # per query: "2, 14, not in its top 100"

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
        return source_key(pd.Series(self.query_fields["source"], dtype=object))

    def run(self, name: str) -> RunLanded:
        if name not in self.runs:
            raise UsageError(f"No run named {name!r} in these ranks; runs are: {', '.join(self.runs)}.")
        return self.runs[name]


def landed(evaluation: Evaluation, runs: Iterable[str] | None = None) -> Landed:
    """Where each run (or each of ``runs``) put each relevant doc of each evaluated query."""
    frames, per_run = [], {}
    for result in chosen_results(evaluation, runs):
        ranked = result.ranked
        index = ranked.index
        n_docs = max(len(index.doc_ids), 1)
        keys = np.asarray(index.keys, dtype=np.int64)
        relevant = index.grades >= index.min_grade
        rel_keys = keys[relevant]
        q_index = rel_keys // n_docs
        label_doc = rel_keys % n_docs
        # Relevant docs the run returned (with a chunk map: each document's best-ranked chunk), by the labels' code.
        rows = ranked.relevant_rows
        returned_keys = rows["query_index"].to_numpy(np.int64) * n_docs + rows["label_doc"].to_numpy(np.int64)
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
                         np.char.add(NOT_RETURNED, n_returned.astype(str)))
        words = np.where(in_run, words, NOT_IN_RUN).astype(object)
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
    return Landed(frame, per_run, query_fields(evaluation, queries), np.asarray(queries, dtype=object))


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
    """Words joined per query ("2, 14, not in its top 100"); rows are grouped by query already."""
    out = np.full(n_q, "", dtype=object)
    if len(words) == 0:
        return out
    starts = np.flatnonzero(np.r_[True, q_index[1:] != q_index[:-1]])
    joined = np.add.reduceat(words + ", ", starts)  # string concatenation per query, in C
    out[q_index[starts]] = pd.Series(joined, dtype=object).str.slice(0, -2).to_numpy(dtype=object)
    return out


def query_fields(evaluation: Evaluation, queries: np.ndarray) -> dict[str, np.ndarray]:
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


def fields_at(evaluation: Evaluation, where: Landed, queries: np.ndarray, rows: np.ndarray) -> dict[str, np.ndarray]:
    """Per-query fields of ``queries`` (rows ``rows`` of the evaluated queries), from ``where`` when it has them."""
    if where.query_fields:
        return {name: values[rows] for name, values in where.query_fields.items()}
    return query_fields(evaluation, queries)


def source_key(source: pd.Series) -> np.ndarray:
    """Sort positions of sources, queries without one last."""
    return pd.factorize(source.astype(object).where(source.notna(), "\uffff").to_numpy(dtype=object), sort=True)[0]
