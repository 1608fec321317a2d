"""Evidence recall and precision against a slow reference built from sets of characters, on random chunkings with
overlapping windows, repeated chunks of one document, chunks the ranking leaves out, and queries with several
evidence spans in several documents (some overlapping, some in documents no chunk covers)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evalcore.metrics.evaluation import evaluate, evaluate_runs
from evalcore.metrics.evidence import evidence_scores, merged_spans
from evalcore.readers.chunks import chunk_map
from tests.reference import evidence_query_scores, order_scored


@st.composite
def chunked_evidence(draw):
    docs = [f"d{i}" for i in range(draw(st.integers(1, 4)))]
    length = {d: draw(st.integers(5, 40)) for d in docs}
    place = {}
    for d in docs:
        for j in range(draw(st.integers(1, 4))):
            start = draw(st.integers(0, length[d] - 1))
            end = draw(st.integers(start + 1, length[d]))
            place[f"{d}#{j}"] = (d, start, end)  # windows may overlap, repeat and leave gaps
    queries = [f"q{i}" for i in range(draw(st.integers(1, 3)))]
    spans, labels = {}, {}
    for q in queries:
        spans[q] = []
        if draw(st.booleans()) or q == queries[0]:
            for _ in range(draw(st.integers(1, 4))):
                d = draw(st.sampled_from(docs + ["elsewhere"]))
                top = length.get(d, 30)
                start = draw(st.integers(0, top - 1))
                spans[q].append((d, start, draw(st.integers(start, top))))
        labels[q] = {d: 1 for d, _, _ in spans[q]} or {docs[0]: 1}
    run = {q: [(c, float(draw(st.integers(0, 3)))) for c in draw(st.lists(st.sampled_from(sorted(place)),
                                                                               max_size=8))]
           for q in queries}
    return place, spans, labels, run


@given(chunked_evidence(), st.integers(1, 8))
@settings(max_examples=200, deadline=None)
def test_evidence_scores_equal_sets_of_characters(data, depth):
    place, spans, labels, run = data
    ids = list(place)
    mapped = chunk_map(ids, [place[c][0] for c in ids], start=[place[c][1] for c in ids],
                       end=[place[c][2] for c in ids])
    run_rows = {q: [{"doc_id": c, "score": s} for c, s in pairs] for q, pairs in run.items()}
    result = evaluate(run_rows, labels, depth, chunks=mapped)
    frame = pd.DataFrame([(q, d, s, e) for q, found in spans.items() for d, s, e in found],
                         columns=["query", "doc_id", "start", "end"])
    scores = evidence_scores(result.ranked, frame, mapped.start, mapped.end)
    for i, q in enumerate(result.queries):
        ranking = order_scored(run.get(q, []))
        for k in range(1, depth + 1):
            if not spans[q]:
                assert np.isnan(scores.recall[i, k - 1]) and np.isnan(scores.precision[i, k - 1])
                continue
            recall, precision = evidence_query_scores(ranking, place, spans[q], k)
            assert scores.recall[i, k - 1] == pytest.approx(recall, abs=1e-12), (q, k, ranking, spans[q])
            assert scores.precision[i, k - 1] == pytest.approx(precision, abs=1e-12), (q, k, ranking, spans[q])


def test_overlapping_spans_of_one_judgment_count_once():
    spans = pd.DataFrame({"query": ["q", "q", "q"], "doc_id": ["a", "a", "b"], "start": [0, 5, 3], "end": [10, 12, 4]})
    merged = merged_spans(spans)
    assert merged[["doc_id", "start", "end"]].values.tolist() == [["a", 0, 12], ["b", 3, 4]]


def test_a_worked_example_of_overlapping_chunks():
    """docs/metrics.md's example: evidence 40..60 of doc a; chunk a#1 = 0..50, a#2 = 30..80 (they overlap 30..50)."""
    mapped = chunk_map(["a#1", "a#2"], ["a", "a"], start=[0, 30], end=[50, 80])
    result = evaluate({"q": ["a#1", "a#2"]}, {"q": {"a": 1}}, 2, chunks=mapped)
    scores = evidence_scores(result.ranked, pd.DataFrame({"query": ["q"], "doc_id": ["a"], "start": [40], "end": [60]}),
                             mapped.start, mapped.end)
    assert scores.recall[0].tolist() == [0.5, 1.0]  # 40..50 of 40..60, then all of it
    assert scores.precision[0].tolist() == [10 / 50, 20 / 80]  # the union 0..80 counts each character once


def test_the_drill_down_marks_the_evidence_inside_each_chunk():
    from evalcore.analyses.drill_down import drill_down
    from evalcore.readers.documents import read_documents
    from evalcore.readers.labels import read_labels

    text = "Refunds take five days. Ask billing. Duplicate charges are refunded at once."
    docs = read_documents({"a": text, "b": "Nothing here."})
    mapped = chunk_map(["a#1", "a#2", "b#1"], ["a", "a", "b"], start=[0, 24, 0], end=[36, 76, 13])
    labels = read_labels({"q": {"a": 1}})
    labels.spans = pd.DataFrame({"query": ["q", "q"], "doc_id": ["a", "a"], "start": [0, 37], "end": [23, 76]})
    evaluation = evaluate_runs([{"q": ["b#1", "a#2", "a#1"]}], labels, 3, chunks=mapped)
    dd = drill_down(evaluation, "q", 2, documents=docs)
    rows = dd.ranking("run").set_index("chunk_id")
    assert rows.loc["a#2", "doc_id"] == "a" and rows.loc["a#2", "text"] == text[24:76]
    assert rows.loc["a#2", "evidence"] == [(13, 52)]  # 37..76 of the document, inside the chunk at 24
    assert rows.loc["a#1", "evidence"] == [(0, 23)] and rows.loc["b#1", "evidence"] == []
    assert dd.scores["evidence_recall@2"].iloc[0] == pytest.approx(39 / 62)  # 37..76 found of 0..23 + 37..76


@given(st.lists(st.tuples(st.integers(0, 6), st.integers(0, 9)), min_size=1, max_size=30), st.booleans())
@settings(max_examples=150, deadline=None)
def test_the_boundaries_are_the_distinct_pairs_in_order_however_large(pairs, huge):
    """`_boundaries` on one int64 key per pair, and on both columns when keys would not fit int64 (offsets near the
    readers' ceiling in millions of (query, document) groups): the same distinct pairs, each pair's place among
    them."""
    from evalcore.metrics.evidence import _boundaries
    from evalcore.readers.offsets import MAX_OFFSET

    shift = (1 << 30, MAX_OFFSET - 10) if huge else (0, 0)  # keys past 2**62: the path that sorts on both columns
    group = np.array([g + shift[0] for g, _ in pairs], dtype=np.int64)
    offset = np.array([o + shift[1] for _, o in pairs], dtype=np.int64)
    groups, offsets, place = _boundaries(group, offset)
    distinct = sorted(set(zip(group.tolist(), offset.tolist())))
    assert list(zip(groups.tolist(), offsets.tolist())) == distinct
    assert [distinct[p] for p in place.tolist()] == list(zip(group.tolist(), offset.tolist()))


def test_offsets_near_the_ceiling_in_millions_of_groups_score_without_overflow():
    """Round three, item 1: 3,000 queries x 3,001 documents x offsets near 2**40 made (group x scale + offset) pass
    int64, and the evaluation stopped with "ValueError: 'list' argument must have no negative elements"."""
    from evalcore.readers.offsets import MAX_OFFSET

    n = 3000
    top = MAX_OFFSET
    mapped = chunk_map([f"c{i}" for i in range(n)] + ["spare"], [f"d{i}" for i in range(n)] + ["d-spare"],
                       start=[top - 100] * n + [0], end=[top] * n + [1])
    labels = {f"q{i}": {f"d{i}": 1} for i in range(n)}
    result = evaluate({f"q{i}": [f"c{i}"] for i in range(n)}, labels, 1, chunks=mapped)
    spans = pd.DataFrame({"query": list(labels), "doc_id": [f"d{i}" for i in range(n)], "start": [top - 50] * n,
                          "end": [top] * n})
    scores = evidence_scores(result.ranked, spans, mapped.start, mapped.end)
    assert np.all(scores.recall[:, 0] == 1.0) and np.all(scores.precision[:, 0] == 0.5)
