"""Doc ids without a global dictionary: exact strings, NumPy-style indexing, repeats found exactly."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import evalcore
from evalcore.readers import ids as ids_module
from evalcore.readers.ids import IdArray, hash_strings, repeated_rows

from reference import order_scored


def zero_hashes(values: IdArray) -> np.ndarray:
    """Every id hashes to 0: every pair of rows in a query is a collision to be resolved on strings."""
    return np.zeros(len(values), dtype=np.uint64)


def test_id_array_indexes_like_a_numpy_object_array() -> None:
    values = ["d1", "d2", "dé", "d 4", "d1"]
    ids, ref = IdArray(values), np.asarray(values, dtype=object)
    assert len(ids) == 5 and ids[2] == "dé" and ids[-1] == "d1"
    codes = np.array([[4, 0], [2, 3]])
    assert ids[codes].dtype == object and ids[codes].tolist() == ref[codes].tolist()
    mask = np.array([True, False, True, False, True])
    assert ids[mask].tolist() == ref[mask].tolist()
    assert ids[np.array([], dtype=np.int64)].tolist() == []
    assert ids[1:3].tolist() == ["d2", "dé"]
    assert ids[np.array([-1, -5])].tolist() == ["d1", "d1"]
    assert np.asarray(ids).tolist() == values and list(ids) == values
    with pytest.raises(IndexError):
        ids[np.array([5])]
    with pytest.raises(IndexError):
        ids[7]


def test_index_in_finds_exact_strings_only() -> None:
    ids = IdArray(["a", "b", "A", "a ", "c", "b"])
    assert ids.index_in(["b", "a"]).tolist() == [1, 0, -1, -1, -1, 0]
    assert ids.index_in([]).tolist() == [-1] * 6


def test_index_in_and_hashes_agree_across_the_two_halves(monkeypatch) -> None:
    monkeypatch.setattr(ids_module, "_PARALLEL_ROWS", 4)  # force the two-thread path on a small array
    values = [f"doc{i % 7}" + "x" * (i % 3) for i in range(41)]
    chunked = IdArray(pa.chunked_array([pa.array(values[:10]), pa.array(values[10:25]), pa.array(values[25:])]))
    whole = IdArray(values)
    assert chunked.index_in(["doc3", "doc1x"]).tolist() == whole.index_in(["doc3", "doc1x"]).tolist()
    np.testing.assert_array_equal(chunked.hashes(), whole.hashes())


@given(st.lists(st.text(min_size=0, max_size=20), min_size=1, max_size=60))
@settings(max_examples=60, deadline=None)
def test_equal_strings_hash_equal_whatever_the_layout(values) -> None:
    whole = hash_strings(pa.array(values, pa.string()))
    # A slice (non-zero offset) and each string on its own hash the same as in the whole array.
    sliced = hash_strings(pa.array(["pad"] + values, pa.string()).slice(1))
    alone = np.concatenate([hash_strings(pa.array([v], pa.string())) for v in values])
    np.testing.assert_array_equal(whole, sliced)
    np.testing.assert_array_equal(whole, alone)
    for i, a in enumerate(values):
        for j, b in enumerate(values):
            if a == b:
                assert whole[i] == whole[j]


def test_fixed_width_ids_hash_as_variable_width_ones() -> None:
    fixed = [f"doc{i:07d}" for i in range(50)]  # every id 10 bytes: the strided path
    mixed = fixed + ["d"]  # one shorter id: the gather path for the same strings
    np.testing.assert_array_equal(hash_strings(pa.array(fixed))[:50], hash_strings(pa.array(mixed))[:50])
    assert len(set(hash_strings(pa.array(fixed)).tolist())) == 50


def test_repeated_rows_keeps_the_first_copy_per_group() -> None:
    groups = np.array([0, 0, 0, 1, 1, 0])
    ids = IdArray(["a", "b", "a", "a", "a", "b"])
    assert repeated_rows(groups, ids).tolist() == [False, False, True, False, True, True]
    assert repeated_rows(np.array([0, 1, 2]), IdArray(["a", "a", "a"])) is None


def test_a_hash_collision_never_merges_distinct_ids() -> None:
    groups = np.array([0, 0, 0, 0, 1, 1])
    ids = IdArray(["a", "b", "c", "b", "c", "d"])
    mask = repeated_rows(groups, ids, hasher=zero_hashes)
    assert mask.tolist() == [False, False, False, True, False, False]
    assert repeated_rows(np.array([0, 0, 1]), IdArray(["a", "b", "a"]), hasher=zero_hashes) is None


def test_repeated_rows_follows_codes() -> None:
    ids = IdArray(["x", "y", "x"])
    codes = np.array([2, 1, 0])  # rows in another order than stored
    assert repeated_rows(np.array([0, 0, 0]), ids, codes).tolist() == [False, False, True]


run_strategy = st.dictionaries(
    st.sampled_from(["q1", "q2", "q3", "q é"]),
    st.lists(st.tuples(st.sampled_from(["a", "b", "B", "é", "ab", "a b", "d10", "d9"]),
                       st.sampled_from([0.1, 0.5, 0.5, 0.9])), min_size=1, max_size=12),
    min_size=1,
)


@given(run=run_strategy, collide=st.booleans(), interleave=st.booleans())
@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_trec_runs_order_and_deduplicate_like_the_reference(tmp_path, monkeypatch, run, collide, interleave) -> None:
    """Score descending, ties by doc id descending, a repeat keeps its best place: with real
    hashes and with every hash colliding; queries in blocks or interleaved line by line."""
    if collide:
        monkeypatch.setattr(IdArray, "hashes", zero_hashes)
    rows = [(q, d, s) for q, pairs in run.items() for d, s in pairs]
    if interleave:
        rows = sorted(rows, key=lambda r: [p for p in run[r[0]]].index((r[1], r[2])))
    path = tmp_path / "run.trec"
    path.write_text("".join(f"{q.replace(' ', '_')} Q0 {d.replace(' ', '_')} 1 {s} t\n" for q, d, s in rows),
                    encoding="utf-8")
    loaded = evalcore.read_run(path)
    for query, pairs in run.items():
        expected = order_scored([(d.replace(" ", "_"), s) for d, s in pairs])
        assert loaded.ranking(query.replace(" ", "_")) == expected
    first_seen = list(dict.fromkeys(q.replace(" ", "_") for q, _, _ in rows))
    assert loaded.query_ids.tolist() == first_seen
    repeats = sum(len(p) - len({d for d, _ in p}) for p in run.values())
    assert [w.code for w in loaded.warnings] == (["duplicate_doc"] if repeats else [])


def test_a_six_field_comment_line_is_skipped_and_its_query_forgotten(tmp_path) -> None:
    path = tmp_path / "run.trec"
    path.write_text("#c Q0 x 1 1.0 t\nq2 Q0 a 1 0.9 t\nq1 Q0 b 1 0.8 t\nq2 Q0 c 2 0.7 t\n")
    run = evalcore.read_run(path)
    assert run.query_ids.tolist() == ["q2", "q1"]
    assert run.ranking("q2") == ["a", "c"] and run.ranking("q1") == ["b"]


def test_rows_with_extra_fields_join_the_fast_path(tmp_path) -> None:
    path = tmp_path / "run.trec"
    path.write_text("q1 Q0 a 1 0.9 t\nq3 Q0 z 1 0.5 t extra\nq1 Q0 b 2 0.8 t\n")
    run = evalcore.read_run(path)
    assert run.query_ids.tolist() == ["q1", "q3"]
    assert run.ranking("q1") == ["a", "b"] and run.ranking("q3") == ["z"]


def test_run_rows_keep_working_where_doc_ids_are_indexed(tmp_path) -> None:
    path = tmp_path / "run.trec"
    path.write_text("q1 Q0 a 1 0.9 t\nq2 Q0 a 1 0.9 t\nq1 Q0 b 2 0.8 t\n")
    run = evalcore.read_run(path)
    frame = run.to_frame()
    assert frame["doc_id"].tolist() == ["a", "b", "a"] and frame["query"].tolist() == ["q1", "q1", "q2"]
    assert run.doc_ids[run.doc_codes].tolist() == ["a", "b", "a"]


def constant_hashes(chunk) -> np.ndarray:
    return np.full(len(chunk), 12345, dtype=np.uint64)


def test_index_in_confirms_hash_matches_on_the_strings(monkeypatch) -> None:
    monkeypatch.setattr(ids_module, "hash_strings", constant_hashes)  # every id collides with every value
    ids = IdArray(["a", "b", "a", "c"])
    assert ids.index_in(["a"]).tolist() == [0, -1, 0, -1]  # one value: hash path, strings decide
    assert ids.index_in(["c", "a"]).tolist() == [1, -1, 1, 0]  # values collide: the string lookup


@given(st.lists(st.sampled_from(["a", "b", "ab", "é", "d10", "x" * 20]), max_size=30),
       st.lists(st.sampled_from(["a", "ab", "é", "zz", "x" * 20]), unique=True, max_size=4))
@settings(max_examples=60, deadline=None)
def test_index_in_equals_a_dictionary_lookup(rows, values) -> None:
    where = {v: i for i, v in enumerate(values)}
    assert IdArray(rows).index_in(values).tolist() == [where.get(r, -1) for r in rows]


@given(st.lists(st.integers(0, 29), max_size=40))
@settings(max_examples=60, deadline=None)
def test_taking_from_many_chunks_keeps_the_order_asked(index) -> None:
    values = [f"id{i}" for i in range(30)]
    chunked = IdArray(pa.chunked_array([pa.array(values[:7]), pa.array(values[7:8]), pa.array(values[8:30])]))
    assert chunked.take_arrow(np.array(index, dtype=np.int64)).to_pylist() == [values[i] for i in index]
    assert chunked[np.array(index, dtype=np.int64)].tolist() == [values[i] for i in index]


def test_budget_counts_a_doc_two_queries_return_once() -> None:
    """Run doc codes are per row, so the k budget counts docs by id: b (in q1 and q2) is one doc."""
    import pandas as pd

    from evalcore.analyses.budget import k_budget

    docs = pd.DataFrame({"doc_id": ["a", "c", "d"], "tokens": [10, 30, 40]})  # b is missing
    report = k_budget([{"q1": ["a", "b", "c"], "q2": ["b", "d"]}], {"q1": ["a"], "q2": ["d", "e"]}, docs,
                      max_k=3, overhead_tokens=100, price_per_mtok=2.0, requests_per_month=1_000_000)
    warning = next(w for w in report.warnings if w.code == "doc_missing_from_documents")
    assert warning.count == 1 and "1 doc " in warning.message and "2 of 5 retrieved chunks" in warning.message
    assert report.runs[0].token_sources["fallback_tokens"] == 30  # median of a, c, d: 10, 30, 40
