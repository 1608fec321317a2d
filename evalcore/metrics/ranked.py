"""Line a run up against the labels: the grade of every doc each labeled query got, by rank.

This is the one join between a run and a label set. Everything per query and per k (the
metrics, k budgets, failure drill-downs) reads the matrices built here instead of joining
again. Ids are integer-coded once; the join is a hash lookup over whole arrays.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np
import pandas as pd

from ..errors import InputError, UsageError, invalid_parameter
from ..readers.chunks import ChunkMap
from ..readers.ids import IdArray, to_arrow_strings
from ..readers.labels import LabelSet
from ..readers.runs import Run
from .measures import check_k

ZERO_RELEVANT_POLICIES = ("exclude", "zero")
"""What to do with a labeled query that has no relevant doc: leave it out of every mean
(the default), or keep it with a score of 0 (trec_eval's behaviour)."""


@dataclass(frozen=True)
class LabelIndex:
    """Labels integer-coded for joining: which queries are evaluated, their grades and ideals."""

    labels: LabelSet
    min_grade: float
    queries: np.ndarray  # evaluated query ids, in label-file order
    n_relevant: np.ndarray  # per evaluated query
    n_without_relevant: int  # labeled queries with no doc at or above min_grade
    doc_ids: pd.Index  # every judged doc id
    keys: pd.Index  # query_index * n_docs + doc_code of every judgment (evaluated queries only)
    grades: np.ndarray  # grade of each key
    gains_sorted: np.ndarray  # (n_queries, up to depth) positive grades, best first

    @classmethod
    def build(cls, labels: LabelSet, min_grade: float = 1, zero_relevant: str = "exclude",
              depth: int | None = None) -> "LabelIndex":
        """Code the labels; ``depth`` caps the ideal-gain table at the deepest cutoff needed."""
        if zero_relevant not in ZERO_RELEVANT_POLICIES:
            raise invalid_parameter("zero_relevant", "'exclude' or 'zero'", zero_relevant)
        counts = labels.relevant_counts(min_grade)
        without = int((counts == 0).sum())
        evaluated = counts if zero_relevant == "zero" else counts[counts > 0]
        queries = evaluated.index.to_numpy(dtype=object)
        judgments = labels.judgments
        q_index = pd.Index(queries).get_indexer(judgments["query"])
        keep = q_index >= 0
        doc_codes, doc_ids = pd.factorize(judgments["doc_id"])
        n_docs = max(len(doc_ids), 1)
        keys = q_index[keep].astype(np.int64) * n_docs + doc_codes[keep]
        grades = judgments["grade"].to_numpy(dtype=np.float64)[keep]
        # Ideal ordering for nDCG: each query's positive grades, best first, as deep as asked.
        positive = grades > 0
        q_of, gains = q_index[keep][positive], grades[positive]
        order = np.lexsort((-gains, q_of))
        q_sorted, g_sorted = q_of[order], gains[order]
        counts_per_q = np.bincount(q_sorted, minlength=len(queries))
        starts = np.concatenate([[0], np.cumsum(counts_per_q)[:-1]]).astype(np.int64)
        col = np.arange(len(q_sorted)) - starts[q_sorted]
        width = int(counts_per_q.max()) if len(queries) and len(q_sorted) else 0
        width = min(width, depth) if depth is not None else width
        shallow = col < width
        gains_sorted = np.zeros((len(queries), max(width, 1)))
        gains_sorted[q_sorted[shallow], col[shallow]] = g_sorted[shallow]
        return cls(labels, float(min_grade), queries, evaluated.to_numpy(dtype=np.int64), without,
                   pd.Index(doc_ids), pd.Index(keys), grades, gains_sorted)

    @property
    def n_queries(self) -> int:
        return len(self.queries)

    @cached_property
    def doc_id_strings(self):
        """The judged doc ids as an Arrow string array, for `IdArray.index_in`."""

        return to_arrow_strings(self.doc_ids.to_numpy(dtype=object))


@dataclass(frozen=True)
class RankedGrades:
    """A run's top ``depth`` docs for each evaluated query, with the grades the labels give them.

    Matrices are (n_queries, depth). ``grades`` is NaN where the doc is unjudged or no doc was
    returned at that rank (``returned`` tells which). ``first_relevant`` is the 1-based rank of
    the first relevant doc anywhere in the ranking (0 when none); ``tie_after[:, k-1]`` is True
    when the docs at ranks k and k+1 have equal scores, i.e. the cutoff k splits a tie.

    With a chunk map (``chunks``) the run ranks chunks: each rank holds a chunk, graded as its document, and
    ``first_of_doc`` is True where that chunk is its document's first in the ranking (a document found by several
    chunks counts once: recall, hit and nDCG read only those), and ``label_doc_of_stored`` is, for each of the
    run's stored ids, the labels' doc its chunk's document is (-1: none); a run of documents keeps none (4 bytes a
    run row) and `label_docs` looks up the ids it is asked for.
    """

    run: Run
    index: LabelIndex
    depth: int
    grades: np.ndarray
    returned: np.ndarray
    doc_codes: np.ndarray  # codes into run.doc_ids (one per run row), -1 where nothing was returned
    first_relevant: np.ndarray
    n_returned: np.ndarray  # full ranking length per evaluated query
    in_run: np.ndarray  # bool per evaluated query
    tie_after: np.ndarray
    relevant_rows: pd.DataFrame  # query index, doc code, label doc, 1-based rank of every relevant doc returned
    label_doc_of_stored: np.ndarray | None  # with a chunk map: per stored run id, the labels' doc code, -1 for none
    chunks: ChunkMap | None = None
    first_of_doc: np.ndarray | None = None  # (n_queries, depth) with a chunk map: the document's first chunk
    chunk_row_of_stored: np.ndarray | None = None  # with a chunk map: each stored run id's row in the map

    @property
    def queries(self) -> np.ndarray:
        return self.index.queries

    @property
    def relevant(self) -> np.ndarray:
        """Where the doc (the chunk's document, with a chunk map) is relevant: every chunk of it."""
        return self.grades >= self.index.min_grade  # NaN compares False

    @property
    def relevant_found(self) -> np.ndarray:
        """Where a relevant document is found for the first time in the ranking (recall, hit, nDCG count these)."""
        return self.relevant if self.first_of_doc is None else self.relevant & self.first_of_doc

    def label_docs(self, codes: np.ndarray) -> np.ndarray:
        """The labels' doc code (-1: not judged) for run doc codes (-1 where nothing was returned stays -1)."""
        codes = np.asarray(codes)
        if self.label_doc_of_stored is not None:
            return np.where(codes >= 0, self.label_doc_of_stored[np.maximum(codes, 0)], -1)
        out = np.full(codes.shape, -1, dtype=np.int64)  # a run of documents: these ids looked up, not every row's
        given = codes >= 0
        out[given] = IdArray(self.run.doc_ids.take_arrow(codes[given])).index_in(self.index.doc_id_strings)
        return out

    def chunk_rows(self, codes: np.ndarray) -> np.ndarray:
        """The chunk map's row of run doc codes (only with a chunk map)."""
        return self.chunk_row_of_stored[np.asarray(codes, dtype=np.int64)]

    def doc_ids_of(self, codes: np.ndarray) -> np.ndarray:
        """The document id of run doc codes: the chunk's document with a chunk map, else the id itself."""
        codes = np.asarray(codes, dtype=np.int64)
        if self.chunks is None:
            return np.asarray(self.run.doc_ids[codes], dtype=object)
        return np.asarray(self.chunks.doc_ids[self.chunks.doc_of_chunk[self.chunk_rows(codes)]], dtype=object)


def rank_grades(run: Run, index: LabelIndex, depth: int, chunks: ChunkMap | None = None) -> RankedGrades:
    """Join ``run`` with the labels down to ``depth`` ranks (first relevant rank: any depth). With ``chunks`` the
    run's ids are chunks, each graded as the document the map puts it in."""
    depth = check_k(depth)
    n_q = index.n_queries
    q_of_run_query = pd.Index(index.queries).get_indexer(run.query_ids)
    # Which label doc each stored run id names (-1: none): see IdArray.index_in (hashes, then strings).
    unit_of_stored = chunk_rows = None
    if chunks is None:
        label_doc_of_stored = run.doc_ids.index_in(index.doc_id_strings)
    else:
        chunk_rows, unit_of_stored, label_doc_of_stored = _through_chunks(run, index, chunks, depth)
    label_doc_of_row = label_doc_of_stored[run.doc_codes]
    if chunks is None:
        label_doc_of_stored = None  # 4 bytes a run row, not kept: `label_docs` looks up the few it is asked for

    # Judged rows anywhere in the ranking (for grades and the first relevant rank) ...
    judged_rows = np.flatnonzero(label_doc_of_row >= 0)
    judged_q = q_of_run_query[run.query_codes[judged_rows]]
    judged_rows, judged_q = judged_rows[judged_q >= 0], judged_q[judged_q >= 0]
    judged_docs = label_doc_of_row[judged_rows]
    del label_doc_of_row  # 4 bytes a run row: let go before the arrays of the depth are made
    keys = judged_q.astype(np.int64) * max(len(index.doc_ids), 1) + judged_docs
    hit = index.keys.get_indexer(keys)
    found = hit >= 0
    graded_rows, g_q, graded_docs = judged_rows[found], judged_q[found], judged_docs[found]
    row_grades = index.grades[hit[found]]
    g_pos = run.positions[graded_rows].astype(np.int64)

    # ... and every row within the depth (for what was returned and ties at each cutoff).
    top_rows = np.flatnonzero(run.positions < depth)
    top_q = q_of_run_query[run.query_codes[top_rows]]
    top_rows, top_q = top_rows[top_q >= 0], top_q[top_q >= 0]
    top_pos = run.positions[top_rows].astype(np.int64)

    grades = np.full((n_q, depth), np.nan)
    returned = np.zeros((n_q, depth), dtype=bool)
    doc_codes = np.full((n_q, depth), -1, dtype=np.int32)
    returned[top_q, top_pos] = True
    doc_codes[top_q, top_pos] = run.doc_codes[top_rows]
    in_top = g_pos < depth
    grades[g_q[in_top], g_pos[in_top]] = row_grades[in_top]

    rel = row_grades >= index.min_grade
    first_relevant = np.zeros(n_q, dtype=np.int64)
    if rel.any():
        best = np.full(n_q, np.iinfo(np.int64).max)
        np.minimum.at(best, g_q[rel], g_pos[rel] + 1)
        first_relevant = np.where(best == np.iinfo(np.int64).max, 0, best)
    relevant_rows = pd.DataFrame({"query_index": g_q[rel], "doc_code": run.doc_codes[graded_rows[rel]],
                                  "label_doc": graded_docs[rel], "rank": g_pos[rel] + 1})
    first_of_doc = None
    if chunks is not None:  # a document found by several chunks: its best-ranked chunk stands for it
        relevant_rows = (relevant_rows.sort_values(["query_index", "rank"], kind="stable")
                         .drop_duplicates(["query_index", "label_doc"]).reset_index(drop=True))
        first_of_doc = _first_of_doc(top_q, top_pos, unit_of_stored[run.doc_codes[top_rows]], n_q, depth,
                                     chunks.n_docs)

    in_run = np.zeros(n_q, dtype=bool)
    present = q_of_run_query >= 0
    in_run[q_of_run_query[present]] = True
    n_returned = np.zeros(n_q, dtype=np.int64)
    n_returned[q_of_run_query[present]] = run.lengths[present]

    # The row after each top row belongs to the same query unless the query's list ends there.
    tie_after = np.zeros((n_q, depth), dtype=bool)
    has_next = top_rows + 1 < run.n_rows
    nxt = np.minimum(top_rows + 1, max(run.n_rows - 1, 0))
    tied = has_next & (run.query_codes[nxt] == run.query_codes[top_rows]) & \
        (run.tie_keys[nxt] == run.tie_keys[top_rows])
    tie_after[top_q[tied], top_pos[tied]] = True
    return RankedGrades(run, index, depth, grades, returned, doc_codes, first_relevant, n_returned,
                        in_run, tie_after, relevant_rows, label_doc_of_stored, chunks, first_of_doc, chunk_rows)


def _through_chunks(run: Run, index: LabelIndex, chunks: ChunkMap,
                    depth: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For each of the run's stored ids: its row in the map, the map's document code, and the labels' doc code of
    that document.

    Every chunk the run names must be in the map (a clear error names the first that is not). An id is checked on its
    exact string when its row can change a number: within the depth scored, or a chunk of a labeled document; the
    others (deeper than scored, of an unlabeled document) are taken on their 64-bit hash. Labels that name chunks
    rather than documents are refused: then the chunk is the unit, and no map is needed."""
    label_of_doc = chunks.doc_ids.index_in(index.doc_id_strings)
    candidate = chunks.candidate_rows(run.doc_ids)
    scored = np.zeros(len(run.doc_ids), dtype=bool)
    scored[run.doc_codes[run.positions < depth]] = True
    labeled = np.zeros(len(candidate), dtype=bool)
    if chunks.n_chunks:  # a map kept to the run's chunks may hold none of them
        labeled = (candidate >= 0) & (label_of_doc[chunks.doc_of_chunk[np.maximum(candidate, 0)]] >= 0)
    rows = chunks.rows_of(run.doc_ids, confirm=scored | labeled | (candidate < 0), candidate=candidate)
    missing = np.flatnonzero(rows < 0)
    if len(missing):
        where = run.source or run.name
        absent = len(pd.unique(np.asarray(run.doc_ids[missing], dtype=object)))
        raise InputError(f"every chunk the run names in the chunk map {chunks.source or chunks.name} "
                         f"({absent:,} {'chunk is' if absent == 1 else 'chunks are'} not, for example this one)",
                         source=where, text=str(run.doc_ids[int(missing[0])]))
    unit = chunks.doc_of_chunk[rows]
    if not (label_of_doc >= 0).any() and len(index.doc_ids):
        as_chunks = chunks.chunk_ids.index_in(index.doc_id_strings)
        if (as_chunks >= 0).any():
            named = index.doc_ids[int(as_chunks[as_chunks >= 0][0])]
            raise UsageError(f"The labels name chunks (for example {named!r}), not documents: score them without a "
                             f"chunk map (the chunk is then the unit), or label the documents the map names.")
    return rows, unit, label_of_doc[unit].astype(np.int32)


def _first_of_doc(top_q: np.ndarray, top_pos: np.ndarray, unit: np.ndarray, n_q: int, depth: int,
                  n_units: int) -> np.ndarray:
    """(n_queries, depth): True at each rank that holds the first chunk of its document within the depth."""
    order = np.lexsort((top_pos, top_q))
    keys = top_q[order].astype(np.int64) * max(n_units, 1) + unit[order]
    first = ~pd.Index(keys).duplicated(keep="first")
    out = np.zeros((n_q, depth), dtype=bool)
    out[top_q[order][first], top_pos[order][first]] = True
    return out

