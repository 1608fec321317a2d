"""Chunkings compared at the same prompt cost: the k budget counts a chunk run's tokens from its chunks' own text,
and `at_tokens` takes each run at its largest k within the budget and compares them per query."""

from __future__ import annotations

import pytest

from evalcore.analyses.budget import k_budget
from evalcore.analyses.token_budget import at_tokens
from evalcore.errors import UsageError
from evalcore.metrics.evaluation import evaluate_runs
from evalcore.readers.chunks import chunk_map
from evalcore.readers.documents import read_documents
from evalcore.readers.runs import read_run


def words(n: int) -> str:
    return " ".join(["word"] * n)  # n tokens in o200k_base


def _chunkings(n_queries: int = 40, small_words: int = 5):
    """Two chunkings of the same documents: 'small' (one short chunk per doc, ~5 tokens, found at rank 3) and
    'large' (one long chunk per doc, ~20 tokens, found first)."""
    labels = {f"q{i}": {f"d{i}": 1} for i in range(n_queries)}
    docs = [f"d{i}" for i in range(n_queries)] + ["x", "y"]
    small = chunk_map([f"{d}#s" for d in docs], docs, text=[words(small_words)] * len(docs))
    large = chunk_map([f"{d}#L" for d in docs], docs, text=[words(20)] * len(docs))
    run_small = read_run({q: ["x#s", "y#s", f"d{i}#s"] for i, q in enumerate(labels)}, name="small")
    run_large = read_run({q: [f"d{i}#L", "x#L", "y#L"] for i, q in enumerate(labels)}, name="large")
    evaluation = evaluate_runs([run_small, run_large], labels, 3, chunks={"small": small, "large": large})
    return evaluation


def test_a_chunk_run_costs_its_chunks_own_text():
    evaluation = _chunkings()
    report = k_budget(evaluation, max_k=3, n_resamples=200)
    small, large = report["small"].table, report["large"].table
    assert small["tokens_mean"].tolist() == [5, 10, 15]
    assert large["tokens_mean"].tolist() == [20, 40, 60]
    assert not any(w.code == "chunk_size_assumed" for w in report.warnings)  # every chunk has its text


def test_at_a_token_budget_each_chunking_takes_the_k_it_can_afford():
    evaluation = _chunkings()
    report = k_budget(evaluation, max_k=3, n_resamples=200)
    found = at_tokens(report, evaluation, 21)
    by_name = {r.name: r for r in found.runs}
    assert by_name["small"].k == 3 and by_name["large"].k == 1  # 15 tokens and 20 tokens fit in 21
    assert by_name["small"].value == by_name["large"].value == 1.0
    assert found.comparisons[found.runs[1].name].diff == 0.0
    tight = at_tokens(report, evaluation, 12)
    assert {r.name: r.k for r in tight.runs} == {"small": 2, "large": None}  # the large chunks do not fit at all
    assert tight.best.name == "small" and tight.best.value == 0.0


def test_a_run_behind_says_how_many_chunks_it_needs():
    evaluation = _chunkings(small_words=10)  # two small chunks (20 tokens) miss what one large chunk finds
    report = k_budget(evaluation, max_k=3, n_resamples=200)
    found = at_tokens(report, evaluation, 21)
    behind = found.runs[1]
    assert found.best.name == "large" and behind.name == "small" and behind.k == 2 and behind.reaches_k == 3
    assert found.comparisons["small"].diff == -1.0 and found.comparisons["small"].significant


def test_evidence_at_tokens_needs_evidence():
    evaluation = _chunkings()
    report = k_budget(evaluation, max_k=3, n_resamples=200)
    with pytest.raises(UsageError, match="evidence spans"):
        at_tokens(report, evaluation, 30, metric="evidence_recall")


def test_chunks_placed_in_their_documents_are_sized_from_the_documents_text():
    docs = read_documents({"a": words(30), "b": words(30)})  # "word word ...": 5 characters a word
    mapped = chunk_map(["a#1", "a#2", "b#1"], ["a", "a", "b"], start=[0, 50, 0], end=[49, 149, 24])
    evaluation = evaluate_runs([{"q": ["a#1", "b#1", "a#2"]}], {"q": {"a": 1}}, 3, chunks=mapped)
    table = k_budget(evaluation, docs=docs, max_k=3, n_resamples=200).runs[0].table
    assert table["tokens_mean"].tolist() == [10, 15, 35]  # a#1 is 10 words, b#1 5, a#2 20


def test_one_chunking_alone_within_the_budget_counts_the_queries_behind_its_number():
    # Evidence on half the queries: the sentence's n is the queries with spans, whether one run fits or several.
    import pandas as pd

    from evalcore.readers.labels import read_labels

    n_queries = 40
    labels = read_labels({f"q{i}": {f"d{i}": 1} for i in range(n_queries)})
    labels.spans = pd.DataFrame({"query": [f"q{i}" for i in range(20)], "doc_id": [f"d{i}" for i in range(20)],
                                 "start": 0, "end": 50})
    docs = [f"d{i}" for i in range(n_queries)] + ["x", "y"]
    small = chunk_map([f"{d}#s" for d in docs], docs, start=[0] * len(docs), end=[10] * len(docs),
                      text=[words(5)] * len(docs))
    large = chunk_map([f"{d}#L" for d in docs], docs, start=[0] * len(docs), end=[100] * len(docs),
                      text=[words(20)] * len(docs))
    run_small = read_run({q: [f"d{i}#s", "x#s", "y#s"] for i, q in enumerate(labels.queries)}, name="small")
    run_large = read_run({q: [f"d{i}#L", "x#L", "y#L"] for i, q in enumerate(labels.queries)}, name="large")
    evaluation = evaluate_runs([run_small, run_large], labels, 3, chunks={"small": small, "large": large})
    report = k_budget(evaluation, max_k=3, n_resamples=200)
    alone = at_tokens(report, evaluation, 12, metric="evidence_recall")
    assert [r.k for r in alone.runs] == [2, None] and alone.n == 20
    both = at_tokens(report, evaluation, 21, metric="evidence_recall")
    assert both.best.name == "large" and both.n == 20


def test_chunks_without_text_are_said_to_lack_text_in_their_map_not_to_be_missing_from_a_documents_file():
    mapped = chunk_map(["a#1", "a#2", "b#1"], ["a", "a", "b"], text=[words(4), None, None], name="windows")
    evaluation = evaluate_runs([{"q": ["a#1", "b#1", "a#2"]}], {"q": {"a": 1}}, 3, chunks=mapped)
    report = k_budget(evaluation, max_k=3, n_resamples=200)
    missing = next(w for w in report.warnings if w.code == "doc_missing_from_documents")
    assert "2 chunks returned in the top 3 have no text in the chunk map windows" in missing.message
    assert "documents file" not in missing.message.replace("nor offsets in a documents file", "")
    assert report["run"].table["tokens_mean"].tolist() == [4, 8, 12]  # the two without text at the run's median
