"""Evidence metrics: how much of the text a person marked as the answer the top k chunks bring into the prompt.

Labels may carry evidence spans: character ranges of a relevant document's text (``start``, ``end``; 0-based, end
exclusive) that hold the answer. Several spans of one (query, document) are one judgment: overlapping spans count
once. With a chunk map that places each chunk in its document's text, for each query and k:

* ``evidence_recall@k``: the share of the query's evidence characters inside the union of the top k chunks;
* ``evidence_precision@k``: the share of the top k chunks' characters (their union: overlapping chunks count each
  character once) that are evidence; 0 when the top k hold no character.

A query without spans has no evidence numbers (NaN here; left out of the evidence means). Everything is whole-array:
the characters are never listed, only the elementary segments between every chunk and span boundary of each
(query, document), each with the first rank at which a chunk covers it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..readers.chunks import ChunkMap
from .ranked import RankedGrades



@dataclass(frozen=True)
class EvidenceScores:
    """Per evaluated query and k (column k-1): NaN for queries without evidence spans."""

    recall: np.ndarray
    precision: np.ndarray
    has_spans: np.ndarray  # (n_queries,) bool


def merged_spans(spans: pd.DataFrame) -> pd.DataFrame:
    """``spans`` (query, doc_id, start, end) with the overlapping or touching spans of each (query, doc) merged."""
    if spans.empty:
        return spans.assign(start=spans["start"].astype(np.int64), end=spans["end"].astype(np.int64))
    frame = spans.sort_values(["query", "doc_id", "start", "end"], kind="stable").reset_index(drop=True)
    group = (frame["query"] != frame["query"].shift()) | (frame["doc_id"] != frame["doc_id"].shift())
    reach = frame.groupby(group.cumsum())["end"].cummax()
    new = group | (frame["start"] > reach.groupby(group.cumsum()).shift())
    block = new.cumsum()
    return (frame.groupby(block, sort=False)
            .agg(query=("query", "first"), doc_id=("doc_id", "first"), start=("start", "min"), end=("end", "max"))
            .reset_index(drop=True))


def evidence_scores(ranked: RankedGrades, spans: pd.DataFrame, chunk_start: np.ndarray,
                    chunk_end: np.ndarray) -> EvidenceScores:
    """Evidence recall and precision at every k of one chunk run. ``spans`` are the labels' evidence (query, doc_id,
    start, end); ``chunk_start``/``chunk_end`` the place of each map chunk in its document (-1: unknown, which
    counts as no character)."""
    chunks: ChunkMap = ranked.chunks
    n_q, depth = ranked.grades.shape
    merged = merged_spans(spans)
    q_of = pd.Index(ranked.queries).get_indexer(merged["query"])
    keep = q_of >= 0
    merged, q_of = merged[keep], q_of[keep]
    ev_doc = _map_docs(chunks, merged["doc_id"].to_numpy(dtype=object))  # -1: a document the map does not know
    ev_start, ev_end = merged["start"].to_numpy(np.int64), merged["end"].to_numpy(np.int64)
    total = np.bincount(q_of, weights=(ev_end - ev_start).astype(np.float64), minlength=n_q)
    has_spans = np.bincount(q_of, minlength=n_q) > 0

    # Every chunk in the top `depth` with a place in its document: (query, rank, document, start, end).
    q_idx, pos = np.nonzero(ranked.returned)
    rows = ranked.chunk_rows(ranked.doc_codes[q_idx, pos])
    c_start, c_end = chunk_start[rows], chunk_end[rows]
    placed = (c_start >= 0) & (c_end > c_start)
    q_idx, pos, c_doc = q_idx[placed], pos[placed], chunks.doc_of_chunk[rows[placed]]
    c_start, c_end = c_start[placed], c_end[placed]

    n_docs = max(chunks.n_docs, 1) + 1
    unknown = n_docs - 1  # the group of evidence in documents the map does not know
    c_group = q_idx.astype(np.int64) * n_docs + c_doc
    e_group = q_of.astype(np.int64) * n_docs + np.where(ev_doc >= 0, ev_doc, unknown)
    # Elementary segments: between every boundary of each group, the distinct (group, offset) pairs in order.
    n_c, n_e = len(c_group), len(e_group)
    bound_group, bound_at, place = _boundaries(np.concatenate([c_group, c_group, e_group, e_group]),
                                               np.concatenate([c_start, c_end, ev_start, ev_end]))
    seg_group, seg_start = bound_group[:-1], bound_at[:-1]
    seg_len = np.where(bound_group[1:] == seg_group, bound_at[1:] - seg_start, 0)
    n_seg = len(seg_len)
    first_rank = np.full(n_seg, depth, dtype=np.int64)  # depth: not covered within the depth
    if n_c:
        seg, by = _expand(place[:n_c], place[n_c:2 * n_c], pos)
        np.minimum.at(first_rank, seg, by)
    evidence = np.zeros(n_seg, dtype=bool)
    if n_e:
        seg, _ = _expand(place[2 * n_c:2 * n_c + n_e], place[2 * n_c + n_e:], np.zeros(n_e, dtype=np.int64))
        evidence[seg] = True
    seg_query = seg_group // n_docs
    covered = first_rank < depth
    cell = seg_query[covered] * depth + first_rank[covered]
    chars = np.bincount(cell, weights=seg_len[covered].astype(np.float64), minlength=n_q * depth)
    ev_chars = np.bincount(cell[evidence[covered]], weights=seg_len[covered][evidence[covered]].astype(np.float64),
                           minlength=n_q * depth)
    chars = np.cumsum(chars.reshape(n_q, depth), axis=1)
    ev_chars = np.cumsum(ev_chars.reshape(n_q, depth), axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        recall = np.where(has_spans[:, None], np.where(total[:, None] > 0, ev_chars / total[:, None], 0.0), np.nan)
        precision = np.where(has_spans[:, None], np.where(chars > 0, ev_chars / chars, 0.0), np.nan)
    return EvidenceScores(recall, precision, has_spans)


def _boundaries(group: np.ndarray, offset: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The distinct (group, offset) pairs in order (their groups, their offsets) and the position among them of each
    pair given. One int64 key per pair (group x scale + offset) when every key fits, which is the usual case; else a
    sort on both columns, so no sum overflows however many groups or however large the offsets."""
    if not len(group):
        return group, offset, np.zeros(0, dtype=np.int64)
    scale = int(offset.max()) + 1
    if (int(group.max()) + 1) * scale < 1 << 62:  # Python integers: the test itself cannot overflow
        keys, place = np.unique(group * np.int64(scale) + offset, return_inverse=True)
        return keys // scale, keys % scale, place.reshape(-1)
    order = np.lexsort((offset, group))
    by_group, by_offset = group[order], offset[order]
    new = np.r_[True, (by_group[1:] != by_group[:-1]) | (by_offset[1:] != by_offset[:-1])]
    place = np.empty(len(group), dtype=np.int64)
    place[order] = np.cumsum(new) - 1
    return by_group[new], by_offset[new], place


def _expand(lo: np.ndarray, hi: np.ndarray, value: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Every index in each range [lo, hi), with its range's value beside it (whole arrays, no loop)."""
    counts = np.maximum(hi - lo, 0)
    total = int(counts.sum())
    if not total:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    starts = np.repeat(lo - np.concatenate([[0], np.cumsum(counts)[:-1]]), counts)
    return starts + np.arange(total), np.repeat(value, counts)



def _map_docs(chunks: ChunkMap, doc_ids: np.ndarray) -> np.ndarray:
    """The map's code of each of ``doc_ids`` (-1 where the map has no chunk of that document)."""
    distinct = pd.Index(pd.unique(doc_ids))
    slot_of_map_doc = chunks.doc_ids.index_in(distinct)  # per map document: its place among `distinct`, or -1
    map_doc_of_slot = np.full(len(distinct), -1, dtype=np.int64)
    known = np.flatnonzero(slot_of_map_doc >= 0)
    map_doc_of_slot[slot_of_map_doc[known]] = known
    return map_doc_of_slot[distinct.get_indexer(doc_ids)]
