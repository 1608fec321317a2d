"""Chunk runs against document labels: the fast scoring with a chunk map agrees with a slow reference
(`tests/reference.py`, one query and one chunk at a time) on random chunkings, ties of documents found by several
chunks, repeated chunks and queries the run misses; a map where every chunk is a whole document changes nothing."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evalcore.errors import InputError, UsageError
from evalcore.metrics.evaluation import evaluate, evaluate_runs
from evalcore.readers.chunks import chunk_map, read_chunks
from tests.reference import chunk_query_scores, order_scored

METRICS = ("recall", "hit", "precision", "ndcg", "judged")


@st.composite
def chunked_sets(draw):
    n_docs = draw(st.integers(1, 6))
    docs = [f"d{i}" for i in range(n_docs)]
    chunks = {f"{d}#{j}": d for d in docs for j in range(draw(st.integers(1, 4)))}
    queries = [f"q{i}" for i in range(draw(st.integers(1, 4)))]
    labels = {}
    for q in queries:
        judged = draw(st.lists(st.sampled_from(docs), unique=True, min_size=1, max_size=n_docs))
        labels[q] = {d: float(draw(st.integers(0, 3))) for d in judged}
        if not any(g >= 1 for g in labels[q].values()):
            labels[q][judged[0]] = 1.0
    run = {}
    for q in queries:
        if draw(st.booleans()) or q == queries[0]:  # some labeled queries are missing from the run
            listed = draw(st.lists(st.sampled_from(sorted(chunks)), max_size=12))  # repeats allowed
            scores = draw(st.lists(st.integers(0, 3), min_size=len(listed), max_size=len(listed)))  # ties
            run[q] = list(zip(listed, scores))
    return chunks, labels, run


def _as_inputs(chunks, labels, run):
    label_rows = {q: {d: int(g) for d, g in grades.items()} for q, grades in labels.items()}
    run_rows = {q: [{"doc_id": c, "score": float(s)} for c, s in pairs] for q, pairs in run.items()}
    return label_rows, run_rows, chunk_map(list(chunks), list(chunks.values()))


def _kept_from_file(chunks: dict, run: dict, labels: dict):
    """The map written as a CSV file and read back keeping only the chunks the run and the labels name, as the
    command line reads it."""
    text = "chunk_id,doc_id\n" + "".join(f"{c},{d}\n" for c, d in chunks.items())
    named = [c for pairs in run.values() for c, _ in pairs] + [d for grades in labels.values() for d in grades]
    return read_chunks(text.encode(), format="csv", keep=[named])


@given(chunked_sets(), st.integers(1, 12), st.booleans())
@settings(max_examples=150, deadline=None)
def test_chunk_scores_equal_the_slow_reference(data, depth, kept):
    chunks, labels, run = data
    label_rows, run_rows, mapped = _as_inputs(chunks, labels, run)
    if kept:
        mapped = _kept_from_file(chunks, run, labels)
    result = evaluate(run_rows, label_rows, depth, chunks=mapped)
    per_query = result.per_query([f"{m}@{k}" for m in METRICS for k in range(1, depth + 1)] + ["mrr"])
    for row in per_query.to_dict("records"):
        q = row["query"]
        ranking = order_scored([(c, float(s)) for c, s in run.get(q, [])])
        for k in range(1, depth + 1):
            expected = chunk_query_scores(ranking, chunks, labels[q], k)
            for m in METRICS:
                assert row[f"{m}@{k}"] == pytest.approx(expected[m], abs=1e-12), (q, m, k, ranking)
        assert row["rr"] == pytest.approx(chunk_query_scores(ranking, chunks, labels[q], 1)["rr"], abs=1e-12)


@given(chunked_sets())
@settings(max_examples=60, deadline=None)
def test_a_map_where_every_chunk_is_a_whole_document_changes_nothing(data):
    _, labels, run = data
    docs = sorted({d for grades in labels.values() for d in grades} | {c for pairs in run.values() for c, _ in pairs})
    label_rows = {q: {d: int(g) for d, g in grades.items()} for q, grades in labels.items()}
    run_rows = {q: [{"doc_id": c, "score": float(s)} for c, s in pairs] for q, pairs in run.items()}
    plain = evaluate(run_rows, label_rows, 10)
    mapped = evaluate(run_rows, label_rows, 10, chunks=chunk_map(docs, docs))
    assert plain.per_query().equals(mapped.per_query())


def test_a_document_found_by_two_chunks_counts_once_and_k_counts_chunks():
    labels = {"q": {"a": 1, "b": 1}}
    run = {"q": ["a#1", "a#2", "c#1", "b#1"]}
    mapped = chunk_map(["a#1", "a#2", "b#1", "c#1"], ["a", "a", "b", "c"])
    result = evaluate(run, labels, [2, 4], chunks=mapped)
    assert result["recall@2"] == 0.5 and result["recall@4"] == 1.0  # a once, b at the 4th chunk
    assert result["precision@2"] == 1.0 and result["precision@4"] == 0.75  # chunks of relevant documents
    assert result["hit@2"] == 1.0 and result["mrr"] == 1.0


def test_each_run_may_bring_its_own_chunking():
    labels = {"q": {"a": 1}}
    small = chunk_map(["a-1", "a-2", "z-1"], ["a", "a", "z"])
    large = chunk_map(["A", "Z"], ["a", "z"])
    evaluation = evaluate_runs([{"q": ["z-1", "a-2"]}, {"q": ["A"]}], labels, 1, chunks={"run": small, "run2": large}) \
        if False else None
    first = evaluate({"q": ["z-1", "a-2"]}, labels, [1, 2], chunks=small)
    second = evaluate({"q": ["A"]}, labels, 1, chunks=large)
    assert (first["recall@1"], first["recall@2"], second["recall@1"]) == (0.0, 1.0, 1.0)
    assert evaluation is None


def test_a_run_naming_a_chunk_the_map_lacks_is_a_clear_error():
    with pytest.raises(InputError, match=r"every chunk the run names in the chunk map .*got 'b#9'"):
        evaluate({"q": ["a#1", "b#9"]}, {"q": {"a": 1}}, 1, chunks=chunk_map(["a#1"], ["a"]))


def test_labels_that_name_chunks_are_scored_without_a_map():
    with pytest.raises(UsageError, match="The labels name chunks"):
        evaluate({"q": ["a#1"]}, {"q": {"a#1": 1}}, 1, chunks=chunk_map(["a#1"], ["a"]))


def test_a_map_for_a_run_that_is_not_there_is_refused():
    with pytest.raises(UsageError, match="not among the runs"):
        evaluate_runs([{"q": ["a#1"]}], {"q": {"a": 1}}, 1, chunks={"other": chunk_map(["a#1"], ["a"])})


def test_chunk_list_with_duplicates_and_bad_offsets_are_refused_with_the_row():
    with pytest.raises(InputError, match="row 3: expected each chunk listed once"):
        chunk_map(["a", "b", "a"], ["x", "y", "x"])
    with pytest.raises(InputError, match="row 1: expected start at most end"):
        chunk_map(["a"], ["x"], start=[9], end=[3])
    assert np.array_equal(chunk_map(["a"], ["x"], start=[None], end=[None]).start, [-1])
