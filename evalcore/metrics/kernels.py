"""Per-query metric kernels: whole matrices in, (n_queries, depth) score matrices out.

Every cutoff metric is computed for every k from 1 to the depth in one pass of cumulative
sums over the ranked-grades matrix; means, intervals, comparisons and slices all start from
these per-query arrays. Semantics are docs/metrics.md.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .ranked import RankedGrades


@dataclass(frozen=True)
class PerQueryScores:
    """Scores per evaluated query: column ``k-1`` of each matrix is the metric at cutoff k."""

    recall: np.ndarray
    hit: np.ndarray
    precision: np.ndarray
    ndcg: np.ndarray
    judged: np.ndarray
    rr: np.ndarray  # (n_queries,)
    evidence_recall: np.ndarray | None = None  # with evidence spans and placed chunks: NaN for queries without
    evidence_precision: np.ndarray | None = None

    @property
    def has_evidence(self) -> bool:
        return self.evidence_recall is not None

    def column(self, name: str, k: int | None) -> np.ndarray:
        """The per-query scores of ``name@k`` (``k`` is None for ``mrr``)."""
        if name == "mrr":
            return self.rr
        return getattr(self, name)[:, k - 1]


def score_queries(ranked: RankedGrades) -> PerQueryScores:
    """All metrics, all cutoffs 1..depth, for every evaluated query of one run.

    With a chunk map a rank holds a chunk graded as its document: recall, hit and nDCG count each document once
    (at its first chunk), precision counts every chunk of a relevant document, judged every chunk of a judged one."""
    depth = ranked.depth
    ranks = np.arange(1, depth + 1, dtype=np.float64)
    found = np.cumsum(ranked.relevant_found, axis=1, dtype=np.int64)
    n_rel = ranked.index.n_relevant.astype(np.float64)[:, None]
    with np.errstate(divide="ignore", invalid="ignore"):
        recall = np.where(n_rel > 0, found / n_rel, 0.0)
    hit = (found > 0).astype(np.float64)
    relevant_chunks = found if ranked.first_of_doc is None else np.cumsum(ranked.relevant, axis=1, dtype=np.int64)
    precision = relevant_chunks / ranks

    grades = ranked.grades
    counted = grades if ranked.first_of_doc is None else np.where(ranked.first_of_doc, grades, np.nan)
    gains = np.where(counted > 0, counted, 0.0)  # NaN (unjudged) > 0 is False: no gain
    discount = 1.0 / np.log2(ranks + 1.0)
    dcg = np.cumsum(gains * discount, axis=1)
    ideal = ranked.index.gains_sorted
    if ideal.shape[1] < depth:
        ideal = np.pad(ideal, ((0, 0), (0, depth - ideal.shape[1])))
    idcg = np.cumsum(ideal[:, :depth] * discount, axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        ndcg = np.where(idcg > 0, dcg / idcg, 0.0)

    judged_found = np.cumsum(~np.isnan(grades) & ranked.returned, axis=1, dtype=np.int64)
    shown = np.cumsum(ranked.returned, axis=1, dtype=np.int64)
    with np.errstate(divide="ignore", invalid="ignore"):
        judged = np.where(shown > 0, judged_found / shown, 0.0)

    first = ranked.first_relevant
    rr = np.where(first > 0, 1.0 / np.maximum(first, 1), 0.0)
    return PerQueryScores(recall, hit, precision, ndcg, judged, rr)
