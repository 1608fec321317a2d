"""Queries files (issue 22, item 6): BEIR's queries.jsonl, MS MARCO's headerless TSV and tables with query_id and
query_text all read to the same texts; merged into labels they fill query_text, and a text that disagrees with the
labels is one line naming both files."""

from __future__ import annotations

import gzip
import json

import pytest

import evalcore
from evalcore import InputError
from evalcore.readers.queries import QueryTexts, read_queries, with_query_text
from tests.readers.files import parquet_bytes, write

TEXTS = {"1": "what is a refund", "2": "reset my password", "07": "sso login loops"}



BEIR = "".join(json.dumps({"_id": q, "text": t, "metadata": {}}) + "\n" for q, t in TEXTS.items())


@pytest.mark.parametrize("name, content", [
    ("queries.jsonl", BEIR),
    ("queries.jsonl.gz", gzip.compress(BEIR.encode(), mtime=0)),
    ("queries.tsv", "query_id\tquery_text\n" + "".join(f"{q}\t{t}\n" for q, t in TEXTS.items())),
    ("queries.dev.tsv", "".join(f"{q}\t{t}\n" for q, t in TEXTS.items())),  # MS MARCO: no header
    ("queries.csv", "qid,query\n" + "".join(f'{q},"{t}"\n' for q, t in TEXTS.items())),
    ("queries.parquet", parquet_bytes({"query": list(TEXTS), "text": list(TEXTS.values())})),
    ("queries.json", json.dumps(TEXTS)),
])
def test_every_shape_reads_to_the_same_texts(tmp_path, name, content) -> None:
    texts = read_queries(write(tmp_path, name, content))
    assert isinstance(texts, QueryTexts) and dict(texts) == TEXTS and list(texts) == ["1", "2", "07"]
    assert texts.place("2") == (2 if name == "queries.dev.tsv" or "json" in name or "parquet" in name else 3)


BAD = [
    ("q.tsv", "query_id\tlang\n1\ten\n", "q.tsv, line 1:",
     "expected a query text column named one of query_text, text, query beside the query id column 'query_id'"),
    ("q.tsv", "query_id\tquery_text\n1\tfirst\n2\t \n", "q.tsv, line 3:",
     "expected a query text in column 'query_text', got '2\\t '"),
    ("q.jsonl", '{"_id": "1", "text": "a"}\n\n{"_id": "2", "text": "b"}\n{"_id": "1", "text": "c"}\n', "q.jsonl, line 4:",
     "expected each query once (it is also on line 1), got '{\"_id\": \"1\", \"text\": \"c\"}'"),
    ("q.csv", "query_id,query_text\n1,a\n,b\n", "q.csv, line 3:", "expected a query id in column 'query_id'"),
    ("q.jsonl", '{"_id": "1", "text": "a"}\n{"_id": "2", "text": ["b"]}\n', "q.jsonl, line 2:",
     "expected 'text' as text or a number"),
    ("q.json", '{"1": "a", "2": 7}', "q.json:", "expected the text of query '2' as a string, got '7'"),
    ("q.trec", "q1 Q0 d1 1 0.5 t\n", "q.trec:",
     "expected a queries file in CSV, TSV, JSON, JSONL or Parquet with query ids and their text, got 'trec format'"),
]


@pytest.mark.parametrize("name, content, place, expected", BAD, ids=[f"{i}-{b[0]}" for i, b in enumerate(BAD)])
def test_every_bad_queries_file_gets_one_line(tmp_path, name, content, place, expected) -> None:
    path = write(tmp_path, name, content)
    with pytest.raises(InputError) as info:
        read_queries(path)
    message = str(info.value)
    assert "\n" not in message
    assert message.startswith(f"{path}{place[len(name):]} ") and expected in message, message


def test_the_texts_fill_the_labels_query_text_and_change_nothing_else(tmp_path) -> None:
    qrels = write(tmp_path, "test.tsv", "query-id\tcorpus-id\tscore\n1\td1\t1\n2\td2\t1\n3\td3\t1\n")
    labels = evalcore.read_labels(qrels)
    queries = write(tmp_path, "queries.jsonl", BEIR)
    merged = with_query_text(labels, queries)
    assert merged.field("query_text").tolist() == ["what is a refund", "reset my password", None]
    assert labels.field("query_text") is None  # the labels given are not changed
    assert merged.fingerprint == labels.fingerprint and merged.judgments is labels.judgments
    codes = {w.code: w for w in merged.warnings}
    assert codes["queries_not_in_labels"].count == 1 and str(queries) in codes["queries_not_in_labels"].message
    assert codes["query_text_missing"].count == 1 and "1 labeled query has no text" in codes["query_text_missing"].message
    assert evalcore.with_query_text(labels, TEXTS).field("query_text").tolist()[:2] == ["what is a refund",
                                                                                         "reset my password"]


def test_a_text_the_labels_give_otherwise_is_an_error_naming_both_files(tmp_path) -> None:
    labels = evalcore.read_labels(write(tmp_path, "labels.tsv", "query\tdoc_id\tquery_text\n1\td1\twhat is a refund \n"
                                                                 "2\td2\treset password\n"))
    queries = write(tmp_path, "queries.jsonl", BEIR)
    with pytest.raises(InputError) as info:
        with_query_text(labels, queries)
    assert str(info.value) == (f"{queries}, line 2: expected the text {tmp_path / 'labels.tsv'} gives query '2': "
                               "'reset password', got 'reset my password'")
    same = with_query_text(labels, {"1": "  what is a refund", "2": "reset password"})  # white space at the ends
    assert same.field("query_text").tolist() == ["what is a refund ", "reset password"]
    assert not [w for w in same.warnings if w.code in ("query_text_missing", "queries_not_in_labels")]
