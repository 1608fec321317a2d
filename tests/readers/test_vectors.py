"""Vector files: every format reads to the same matrix and ids; each usual mistake gets one exact message naming
the file and the row (or line), and a bad file changes nothing already read."""

from __future__ import annotations

import io
import json

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from evalcore.errors import InputError, VectorFileError
from evalcore.readers.labels import read_labels
from evalcore.readers.vectors import check_dimensions, labeled_only, read_vectors


def npy(matrix) -> bytes:
    sink = io.BytesIO()
    np.save(sink, np.asarray(matrix))
    return sink.getvalue()


def parquet(ids, vectors, id_name="id", vector_name="vector", vector_type=None) -> bytes:
    sink = pa.BufferOutputStream()
    column = pa.array(vectors, type=vector_type) if vector_type else pa.array(vectors)
    pq.write_table(pa.table({id_name: ids, vector_name: column}), sink)
    return sink.getvalue().to_pybytes()


def jsonl(*records) -> str:
    return "".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in records)


GOOD = np.array([[0.5, -1.0, 2.0], [1.0, 0.0, -0.25]], dtype=np.float32)


@pytest.mark.parametrize("name, content", [
    ("docs.parquet", parquet(["a", "b"], GOOD.tolist())),
    ("docs.parquet", parquet(["a", "b"], GOOD.tolist(), "doc_id", "embedding", pa.list_(pa.float32(), 3))),
    ("docs.jsonl", jsonl({"id": "a", "vector": GOOD[0].tolist()}, "", {"id": "b", "vector": GOOD[1].tolist()})),
    ("docs.jsonl.gz", None),
    ("docs.npy", npy(GOOD)),
    ("docs.npy", npy(GOOD.astype(np.float64))),
])
def test_every_format_reads_the_same_float32_matrix(tmp_path, name, content) -> None:
    path = tmp_path / name
    if content is None:
        import gzip
        path.write_bytes(gzip.compress(jsonl({"id": "a", "vector": GOOD[0].tolist()},
                                             {"id": "b", "vector": GOOD[1].tolist()}).encode()))
    else:
        path.write_bytes(content if isinstance(content, bytes) else content.encode())
    if name.endswith(".npy"):
        (tmp_path / "docs.ids.txt").write_text("a\nb\n")
    vectors = read_vectors(path)
    assert vectors.ids.tolist() == ["a", "b"]
    assert vectors.matrix.dtype == np.float32 and vectors.matrix.flags.c_contiguous
    assert np.array_equal(vectors.matrix, GOOD)


def test_jsonl_integer_ids_keep_their_digits(tmp_path) -> None:
    path = tmp_path / "q.jsonl"
    path.write_text(jsonl({"id": 7, "vector": [1, 2]}, {"id": "007", "vector": [1, 2]}))
    assert read_vectors(path).ids.tolist() == ["7", "007"]


# (file name, content, ids file content or None, the exact message after "<file>")
BAD = [
    ("uneven.jsonl", jsonl({"id": "a", "vector": [1, 2, 3]}, "", {"id": "b", "vector": [1, 2]}), None,
     ", line 3: expected 3 numbers in every vector, as in line 1, got '2 numbers'"),
    ("uneven.parquet", parquet(["a", "b", "c"], [[1.0, 2.0], [1.0, 2.0], [3.0]]), None,
     ", row 3: expected 2 numbers in every vector, as in row 1, got '1 number'"),
    ("nan.jsonl", jsonl({"id": "a", "vector": [1, 2]}, {"id": "b", "vector": [1, 1e39]}), None,
     ", line 2: expected finite numbers in every vector (no NaN or infinity, and within float32's range), "
     "got 'inf at position 2'"),
    ("nan.npy", npy([[1.0, 2.0], [np.nan, 0.0]]), "a\nb\n",
     ", row 2: expected finite numbers in every vector (no NaN or infinity, and within float32's range), "
     "got 'nan at position 1'"),
    ("nan.parquet", parquet(["a", "b"], [[1.0, 2.0], [3.0, float("inf")]]), None,
     ", row 2: expected finite numbers in every vector (no NaN or infinity, and within float32's range), "
     "got 'inf at position 2'"),
    ("dup.jsonl", jsonl({"id": "a", "vector": [1]}, {"id": "b", "vector": [2]}, {"id": "a", "vector": [3]}), None,
     ", line 3: expected each id once (it is also on line 1), got 'a'"),
    ("dup.npy", npy([[1.0], [2.0], [3.0]]), "x\ny\ny\n", ", row 3: expected each id once (it is also on row 2), got 'y'"),
    ("empty.jsonl", "", None, ": expected at least one vector"),
    ("blank.jsonl", "\n\n", None, ": expected at least one vector"),
    ("empty.parquet", parquet(pa.array([], pa.string()), pa.array([], pa.list_(pa.float32()))), None,
     ": expected at least one vector"),
    ("empty.npy", npy(np.zeros((0, 4), dtype=np.float32)), "", ": expected at least one vector"),
    ("shape.npy", npy(np.zeros(4, dtype=np.float32)), "a\n", ": expected a 2-D .npy matrix of numbers (one row per "
     "id), got 'shape (4,), dtype float32'"),
    ("short.npy", npy(np.zeros((3, 2), dtype=np.float32)), "a\nb\n",
     ": expected one id per line for each of the 3 rows of {npy}, got '2 lines'"),
    ("noids.npy", npy(np.zeros((3, 2), dtype=np.float32)), False,
     ": expected an ids file beside the .npy matrix (NAME.ids.txt or NAME.ids, one id per line), or the ids file "
     "given with it"),
    ("text.jsonl", jsonl({"id": "a", "vector": [1, 2]}, {"id": "b", "vector": [1, "x"]}), None,
     ", line 2: expected a vector of numbers, got \"'x'\""),
    ("shape.jsonl", jsonl({"id": "a", "vector": [1, 2]}, {"name": "b", "values": [1, 2]}), None,
     ', line 2: expected {"id": ..., "vector": [numbers, ...]} on each line, got \'{"name": "b", "values": [1, 2]}\''),
    ("broken.jsonl", '{"id": "a", "vector": [1, 2]}\n{"id": "b", "vector": [1, 2\n', None,
     ", line 2: expected one JSON object per line (Expecting ',' delimiter), got '{\"id\": \"b\", \"vector\": [1, 2'"),
    ("cols.parquet", parquet(["a"], [[1.0]], "name", "vector"), None,
     ": expected an id column (id, _id, doc_id, ...) and a vector column (vector, embedding, embeddings, ...), "
     "got 'name, vector'"),
]


@pytest.mark.parametrize("name, content, ids, expected", BAD, ids=[b[0] for b in BAD])
def test_bad_vector_files_get_one_exact_message(tmp_path, name, content, ids, expected) -> None:
    path = tmp_path / name
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    if ids is not None and ids is not False:
        (tmp_path / (name[:-4] + ".ids.txt")).write_text(ids)
    with pytest.raises(VectorFileError) as info:
        read_vectors(path)
    message = str(info.value)
    assert isinstance(info.value, InputError)  # every front end already explains an InputError beside the upload
    if "one id per line for each" in expected:
        assert message == f"{tmp_path / (name[:-4] + '.ids.txt')}{expected.format(npy=path)}"
    else:
        assert message == f"{path}{expected}"


def test_query_and_doc_checks_name_the_file_and_keep_what_was_read(tmp_path) -> None:
    docs = read_vectors(parquet(["a", "b"], GOOD.tolist()), name="docs.parquet")
    queries = read_vectors(jsonl({"id": "q1", "vector": [1.0, 2.0]}).encode(), name="queries.jsonl")
    with pytest.raises(VectorFileError) as info:
        check_dimensions(queries, docs)
    assert str(info.value) == ("queries.jsonl, row 1: expected query vectors with as many numbers as the doc vectors "
                               "(3 in docs.parquet), got '2 numbers'")
    labels = read_labels(b"q9 0 a 1\nq8 0 b 1\n", name="labels.qrels")
    with pytest.raises(VectorFileError) as info:
        labeled_only(queries, labels.queries, labels.name)
    assert str(info.value) == ("queries.jsonl, row 1: expected query ids that match the labeled queries of "
                               "labels.qrels (none of the 1 does; labeled queries look like 'q9'), got 'q1'")
    assert np.array_equal(docs.matrix, GOOD)  # the doc vectors read before are untouched
    both = read_vectors(jsonl({"id": "q9", "vector": [1, 2, 3]}, {"id": "x", "vector": [0, 0, 1]}).encode(),
                        name="q.jsonl")
    kept, warnings = labeled_only(both, labels.queries, labels.name)
    assert kept.ids.tolist() == ["q9"]
    assert [w.code for w in warnings] == ["unlabeled_query_vectors", "labeled_query_without_vector"]
