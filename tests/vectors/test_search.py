"""Exact search from vectors equals a brute-force reference that sorts every doc; the smaller indexes equal slow
per-query references of the same quantization; index sizes equal the documented formula."""

from __future__ import annotations

import math

import numpy as np
import pytest

from evalcore import read_run
from evalcore.metrics.split import scoring_labels
from evalcore.readers.vectors import Vectors
from evalcore.vectors import search
from evalcore.vectors.runs import search_runs, trec_text
from evalcore.vectors.search import tie_ranks
from evalcore.vectors.variants import Variant, plan_variants
from tests.vectors.planted import planted, ranked

DEPTH = 30


def _unit(matrix: np.ndarray) -> np.ndarray:
    m = matrix.astype(np.float64)
    return m / np.linalg.norm(m, axis=1, keepdims=True)


def _recalls(rankings: dict[str, list[str]], labels, k: int) -> np.ndarray:
    relevant = labels.judgments.groupby("query")["doc_id"].apply(set)
    return np.array([len(set(rankings.get(q, [])[:k]) & relevant[q]) / len(relevant[q]) for q in relevant.index])


def _evaluated(runs, labels, k):
    evaluation = scoring_labels(labels).evaluate(runs, k)
    return {r.name: r.score(f"recall@{k}") for r in evaluation.results}, evaluation


@pytest.fixture(params=["one block", "many blocks"])
def blocks(request, monkeypatch):
    """The search in one block, and in many small ones (queries and docs both split: 7 x 12 blocks)."""
    if request.param == "many blocks":
        monkeypatch.setattr(search, "QUERY_BLOCK", 9)
        monkeypatch.setattr(search, "BLOCK_BYTES", 4 * 9 * 130)
    return request.param


@pytest.mark.parametrize("similarity", ["cosine", "dot"])
def test_full_and_truncated_float32_recall_equals_sorting_every_doc(similarity, blocks) -> None:
    queries, docs, labels = planted()
    variants = plan_variants(docs.dims, "full,24,8", "float32", depth=DEPTH)
    found = search_runs(queries, docs, variants, similarity=similarity, depth=DEPTH)
    scored, _ = _evaluated([f.run for f in found], labels, 10)
    for item in found:
        d = item.variant.dims
        q, x = queries.matrix[:, :d].astype(np.float64), docs.matrix[:, :d].astype(np.float64)
        if similarity == "cosine":
            q, x = _unit(q), _unit(x)
        reference = {}
        for i, query in enumerate(queries.ids):
            scores = x @ q[i]
            rows = ranked(scores, docs.ids, DEPTH)
            reference[query] = [docs.ids[r] for r in rows]
            got = item.run.ranking(query)
            assert len(got) == DEPTH
            # the same docs in the same order, up to float32 rounding of near-equal scores
            position = {doc: j for j, doc in enumerate(docs.ids)}
            np.testing.assert_allclose(scores[[position[g] for g in got]], scores[rows], atol=1e-5)
        for k in (1, 5, 10):
            assert np.array_equal(_recalls(reference, labels, k), _evaluated([item.run], labels, k)[0][item.name])
    means = {f.name: float(np.mean(scored[f.name])) for f in found}
    assert means["float32-full"] > means["float32-8"]  # the planted structure: truncation to 8 dims costs recall


def test_ties_are_broken_by_doc_id_descending_as_runs_are(monkeypatch) -> None:
    base = np.array([[1, 0, 0], [0, 1, 0], [0.5, 0.5, 0]], dtype=np.float32)
    docs = Vectors("docs.npy", np.array(["a", "c", "b", "e", "d", "f"], dtype=object),
                   np.repeat(base[:1], 6, axis=0) * np.array([[1], [1], [1], [1], [1], [0.5]], dtype=np.float32))
    queries = Vectors("q.npy", np.array(["q1"], dtype=object), base[:1].copy())
    found = search_runs(queries, docs, plan_variants(3, depth=3), similarity="dot", depth=3)
    assert found[0].run.ranking("q1") == ["e", "d", "c"]  # five tie at 1.0: the three largest ids, descending
    monkeypatch.setattr(search, "BLOCK_BYTES", 4)  # one doc per block after the first 12: ties met block by block
    many = [f"x{i:02d}" for i in range(40)]
    spread = Vectors("docs.npy", np.array(many, dtype=object), np.ones((40, 3), dtype=np.float32))
    again = search_runs(queries, spread, plan_variants(3, depth=3), similarity="dot", depth=3)
    assert again[0].run.ranking("q1") == ["x39", "x38", "x37"]
    text = trec_text(found[0].run)
    assert read_run(text.encode(), format="trec").ranking("q1") == ["e", "d", "c"]  # written and read back: same


def _quantized(x: np.ndarray) -> np.ndarray:
    """int8 as documented, written the slow way: per-dimension range, 255 steps, read back."""
    lo, hi = x.min(axis=0).astype(np.float32), x.max(axis=0).astype(np.float32)
    step = ((hi - lo) / np.float32(255)).astype(np.float32)
    step[step == 0] = 1
    out = np.empty_like(x, dtype=np.float64)
    for i in range(x.shape[0]):
        code = np.clip(np.rint((x[i] - lo) / step), 0, 255) - 128
        out[i] = lo.astype(np.float64) + step.astype(np.float64) * (code + 128)
    return out


@pytest.mark.parametrize("dims", [48, 16])
def test_int8_equals_a_slow_reference_of_the_same_quantization(dims, blocks) -> None:
    queries, docs, labels = planted(seed=1)
    variant = Variant(dims, "int8", docs.dims)
    found = search_runs(queries, docs, plan_variants(docs.dims, [dims], "int8", depth=DEPTH), depth=DEPTH)
    item = next(f for f in found if f.variant == variant)
    x = _unit(docs.matrix[:, :dims]).astype(np.float32)
    q = _unit(queries.matrix[:, :dims])
    read_back = _quantized(x)
    reference = {}
    position = {doc: j for j, doc in enumerate(docs.ids)}
    for i, query in enumerate(queries.ids):
        scores = read_back @ q[i]
        rows = ranked(scores, docs.ids, DEPTH)
        reference[query] = [docs.ids[r] for r in rows]
        got = item.run.ranking(query)
        np.testing.assert_allclose(scores[[position[g] for g in got]], scores[rows], atol=1e-5)
    assert np.array_equal(_recalls(reference, labels, 10), _evaluated([item.run], labels, 10)[0][item.name])


@pytest.mark.parametrize("dims, rescore", [(48, 0), (20, 0), (20, 120)])
def test_binary_equals_a_slow_hamming_reference(dims, rescore, blocks) -> None:
    queries, docs, _ = planted(seed=2)
    found = search_runs(queries, docs, plan_variants(docs.dims, [dims], "binary", rescore=rescore, depth=DEPTH),
                        depth=DEPTH)
    item = found[-1]
    assert item.variant == Variant(dims, "binary", docs.dims, rescore)
    doc_bits = docs.matrix[:, :dims] > 0
    x = _unit(docs.matrix[:, :dims])
    for i, query in enumerate(queries.ids):
        query_bits = queries.matrix[i, :dims] > 0
        hamming = np.array([int((doc_bits[j] != query_bits).sum()) for j in range(docs.n)])
        scores = dims - 2.0 * hamming
        if not rescore:
            rows = ranked(scores, docs.ids, DEPTH)
            assert item.run.ranking(query) == [docs.ids[r] for r in rows]  # integers: exactly the same list
            assert np.array_equal(item.run.scores[item.run.starts[i]:item.run.starts[i] + DEPTH], scores[rows])
        else:
            candidates = ranked(scores, docs.ids, rescore)
            floats = x[candidates] @ _unit(queries.matrix[i:i + 1, :dims])[0]
            order = ranked(floats, docs.ids[candidates], DEPTH)
            expected = [docs.ids[candidates[j]] for j in order]
            got = item.run.ranking(query)
            position = {docs.ids[c]: j for j, c in enumerate(candidates)}
            assert set(got) <= set(docs.ids[candidates])
            np.testing.assert_allclose(floats[[position[g] for g in got]], floats[order], atol=1e-5)
            assert len(got) == len(expected) == DEPTH


def test_index_sizes_equal_the_formula() -> None:
    queries, docs, _ = planted(n_docs=300, n_queries=5, dims=40)
    ids = sum(len(d.encode("utf-8")) for d in docs.ids) + 8 * docs.n
    found = search_runs(queries, docs, plan_variants(40, "full,20,13", "float32,int8,binary", rescore=50, depth=10),
                        depth=10)
    sizes = {f.name: f.index_bytes for f in found}
    assert sizes["float32-full"] == 300 * 40 * 4 + ids
    assert sizes["float32-20"] == 300 * 20 * 4 + ids
    assert sizes["int8-full"] == 300 * 40 + 8 * 40 + ids
    assert sizes["int8-13"] == 300 * 13 + 8 * 13 + ids
    assert sizes["binary-full"] == 300 * 5 + ids
    assert sizes["binary-13"] == 300 * math.ceil(13 / 8) + ids
    assert sizes["binary-13-rescored-50"] == sizes["binary-13"]
    for item in found:  # the run carries its size and dims, as a sidecar would give them
        assert item.run.index_bytes == item.index_bytes and item.run.dims == item.variant.dims


def test_the_one_key_sort_orders_as_the_three_key_rule_including_signed_zeros() -> None:
    rng = np.random.default_rng(3)
    n = 5000
    values = rng.choice(np.array([0.0, -0.0, 1.5, -1.5, 2e-38, -2e-38, 3.0, np.float32(1e30)], dtype=np.float32), n)
    rows = rng.integers(0, 7, n)
    docs = rng.integers(0, 300, n)
    ranks = tie_ranks(np.array([f"d{i:03d}" for i in range(300)], dtype=object))
    got = search._rule_order(rows, docs, values, 7, ranks)
    expected = np.lexsort((ranks[docs], -(values + np.float32(0)), rows))
    key = list(zip(rows[got], -values[got], ranks[docs][got]))
    assert key == list(zip(rows[expected], -values[expected], ranks[docs][expected]))


def test_unit_length_vectors_are_searched_without_a_copy_and_others_are_not_changed() -> None:
    queries, docs, labels = planted(n_docs=300, n_queries=10, dims=16)
    unit = search.normalise_rows(docs.matrix)
    assert search.unit_rows(unit) is unit  # exported normalised: no second doc matrix
    raw = docs.matrix.copy()
    normalised = search.unit_rows(docs.matrix)
    assert normalised is not docs.matrix and np.array_equal(docs.matrix, raw)  # the file's matrix is untouched
    first = search_runs(queries, docs, plan_variants(16, depth=10), depth=10)[0].run
    again = search_runs(queries, Vectors("docs.npy", docs.ids, unit), plan_variants(16, depth=10), depth=10)[0].run
    assert [first.ranking(q) for q in queries.ids] == [again.ranking(q) for q in queries.ids]


def test_a_zero_query_is_named_by_its_line_in_a_jsonl_file_after_unlabeled_rows_are_left_out() -> None:
    """Issue 24, item 10: the place survives the rows left out before the search (`Vectors.subset`)."""
    from evalcore.errors import VectorFileError
    from evalcore.readers.vectors import labeled_only, read_vectors

    queries = read_vectors(b'{"id": "q0", "vector": [1, 0]}\n\n{"id": "q1", "vector": [0.5, 1]}\n'
                           b'{"id": "q2", "vector": [0, 0]}\n', name="queries.jsonl")
    docs = read_vectors(b'{"id": "a", "vector": [1, 0]}\n{"id": "b", "vector": [0, 0]}\n', name="docs.jsonl")
    kept, _ = labeled_only(queries, ["q1", "q2"], "labels.tsv")
    with pytest.raises(VectorFileError) as refused:
        search_runs(kept, docs, plan_variants(2, depth=1), depth=1)
    assert str(refused.value).startswith("queries.jsonl, line 4: expected a query vector with a number other than 0")
    [found] = search_runs(kept.subset(np.array([True, False])), docs, plan_variants(2, depth=1), depth=1)
    assert found.n_docs == 1 and [w.code for w in found.warnings] == ["zero_doc_vectors"]
    assert "(line 2; first id 'b')" in found.warnings[0].message
