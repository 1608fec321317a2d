"""Every format of docs/formats.md reads to the same labels and runs; awkward files read; bad files fail clearly."""

from __future__ import annotations

import gzip
import io
import json

import pandas as pd
import pytest

import evalcore
from evalcore import InputError
from evalcore.readers.runs import read_sidecar

SEED_LABELS = {"refund timing": {"policy-refunds": 1, "faq-returns": 1},
               "reset my password": {"acct-recovery": 1},
               "enterprise sso": {"pricing-enterprise": 1}}
SEED_RUN = {"refund timing": ["policy-refunds", "faq-shipping", "faq-returns"],
            "reset my password": ["faq-login", "acct-recovery", "policy-privacy"],
            "enterprise sso": ["faq-login", "policy-refunds", "pricing-enterprise"]}

# Labels in every format, all meaning the same three queries (ids without spaces where the format needs it).
LABEL_FILES = {
    "qrels.trec": "q1 0 A 1\nq1 0 B 1\nq1 0 X 0\nq2 0 C 2\n",
    "qrels.txt": "# comment\n\nq1\t0\tA\t1\r\nq1 0 B 1\nq1 0 X 0\nq2  0  C  2   \n",
    "beir.tsv": "query-id\tcorpus-id\tscore\nq1\tA\t1\nq1\tB\t1\nq1\tX\t0\nq2\tC\t2\n",
    "labels.csv": "qid,docid,relevance\nq1,A,1\nq1,B,1\nq1,X,0\nq2,C,2\n",
    "labels.json": json.dumps({"q1": {"A": 1, "B": 1, "X": 0}, "q2": {"C": 2}}),
    "labels.jsonl": "\n".join(json.dumps(r) for r in [
        {"query": "q1", "doc_id": "A", "grade": 1}, {"query": "q1", "doc_id": "B", "grade": 1},
        {"query": "q1", "doc_id": "X", "grade": 0}, {"query": "q2", "doc_id": "C", "grade": 2}]),
}


def normalised(labels: evalcore.LabelSet) -> list[tuple[str, str, float]]:
    return sorted(map(tuple, labels.judgments[["query", "doc_id", "grade"]].itertuples(index=False)))


@pytest.mark.parametrize("name", sorted(LABEL_FILES))
def test_every_label_format_reads_the_same(tmp_path, name) -> None:
    path = tmp_path / name
    path.write_text(LABEL_FILES[name], encoding="utf-8")
    labels = evalcore.read_labels(path)
    assert normalised(labels) == [("q1", "A", 1.0), ("q1", "B", 1.0), ("q1", "X", 0.0), ("q2", "C", 2.0)]
    assert labels.fingerprint == evalcore.read_labels(tmp_path / name).fingerprint


def test_fingerprint_ignores_format_and_order(tmp_path) -> None:
    fingerprints = set()
    for name, text in LABEL_FILES.items():
        (tmp_path / name).write_text(text)
        fingerprints.add(evalcore.read_labels(tmp_path / name).fingerprint)
    assert len(fingerprints) == 1
    other = evalcore.read_labels({"q1": {"A": 1}})
    assert other.fingerprint not in fingerprints


def test_parquet_and_gzip_and_bom(tmp_path) -> None:
    frame = pd.DataFrame({"query": ["007", "7"], "doc_id": ["A", "B"], "grade": [1, 1]})
    frame.to_parquet(tmp_path / "labels.parquet")
    labels = evalcore.read_labels(tmp_path / "labels.parquet")
    assert sorted(labels.queries) == ["007", "7"]  # ids stay strings: "007" and "7" differ
    (tmp_path / "qrels.txt.gz").write_bytes(gzip.compress(b"\xef\xbb\xbf007 0 A 1\r\n7 0 B 1\r\n"))
    gz = evalcore.read_labels(tmp_path / "qrels.txt.gz")
    assert sorted(gz.queries) == ["007", "7"]
    assert {w.code for w in gz.warnings} == {"file_repaired"}
    assert any("byte-order mark" in w.message for w in gz.warnings)


def test_per_query_fields_are_kept(tmp_path) -> None:
    path = tmp_path / "labels.tsv"
    path.write_text("query\tdoc_id\tgrade\tquery_text\tsource\tblind\tsplit\n"
                    "q1\tA\t1\tpw reset\tsupport_ticket\ttrue\ttune\n"
                    "q1\tZ\t0\tpw reset\tsupport_ticket\ttrue\ttune\n"
                    "q2\tB\t1\thow to reset a password\tteam_written\tno\tholdout\n")
    labels = evalcore.read_labels(path)
    assert labels.field("query_text").tolist() == ["pw reset", "how to reset a password"]
    assert labels.field("source").tolist() == ["support_ticket", "team_written"]
    assert labels.field("blind").tolist() == [True, False]
    assert labels.field("split").tolist() == ["tune", "holdout"]
    assert labels.relevant_counts().tolist() == [1, 1]
    assert len(labels.judgments) == 3  # the explicit non-relevant judgment is kept


RUN_FILES = {
    "run.trec": "q1 Q0 B 1 0.9 sys\nq1 Q0 A 2 0.8 sys\nq2 Q0 C 1 0.7 sys\n",
    "run.csv": "query,doc_id,rank\nq1,B,1\nq1,A,2\nq2,C,1\n",
    "run.tsv": "qid\tdocid\tscore\nq1\tA\t0.8\nq1\tB\t0.9\nq2\tC\t0.7\n",
    "run.json": json.dumps({"q1": ["B", "A"], "q2": ["C"]}),
    "scored.json": json.dumps({"q1": [{"doc_id": "A", "score": 0.8}, {"doc_id": "B", "score": 0.9}],
                               "q2": [{"doc_id": "C", "score": 0.7}]}),
    "run.jsonl": '{"query": "q1", "ranked": ["B", "A"]}\n{"query": "q2", "ranked": ["C"]}\n',
}


@pytest.mark.parametrize("name", sorted(RUN_FILES))
def test_every_run_format_reads_the_same(tmp_path, name) -> None:
    path = tmp_path / name
    path.write_text(RUN_FILES[name])
    run = evalcore.read_run(path)
    assert run.ranking("q1") == ["B", "A"]
    assert run.ranking("q2") == ["C"]
    assert run.name == path.stem


def test_trec_order_ignores_the_rank_column_and_breaks_ties_by_doc_id_descending(tmp_path) -> None:
    path = tmp_path / "run.trec"
    path.write_text("q Q0 a 1 0.5 t\nq Q0 c 2 0.5 t\nq Q0 b 3 0.9 t\nq Q0 c 4 0.1 t\n")
    run = evalcore.read_run(path)
    assert run.ranking("q") == ["b", "c", "a"]  # duplicate c keeps its best place
    assert [w.code for w in run.warnings] == ["duplicate_doc"]


def test_sidecar_metadata_and_overrides(tmp_path) -> None:
    (tmp_path / "base.trec").write_text("q Q0 a 1 0.5 tagname\n")
    run = evalcore.read_run(tmp_path / "base.trec")
    assert run.model == "tagname"  # the TREC run tag by default
    (tmp_path / "base.meta.json").write_text(json.dumps({"model": "embed-v1", "price_per_mtok": 0.02,
                                                         "dims": 768, "index_bytes": 1000}))
    run = evalcore.read_run(tmp_path / "base.trec")
    assert (run.model, run.price_per_mtok, run.dims, run.index_bytes) == ("embed-v1", 0.02, 768, 1000)
    assert evalcore.read_run(tmp_path / "base.trec", model="other").model == "other"


def test_one_sidecar_reader_for_a_path_bytes_or_an_upload(tmp_path) -> None:
    meta = {"model": "embed-v1", "price_per_mtok": "0.02", "dims": 768.0, "index_bytes": None, "note": "ignored"}
    text = json.dumps(meta).encode()
    (tmp_path / "base.meta.json").write_bytes(b"\xef\xbb\xbf" + text.replace(b", ", b",\r\n"))
    (tmp_path / "gz.meta.json").write_bytes(gzip.compress(text))
    expected = {"model": "embed-v1", "price_per_mtok": 0.02, "dims": 768, "index_bytes": None}
    assert read_sidecar(tmp_path / "base.meta.json") == expected  # a BOM and CRLF lines read as elsewhere
    assert read_sidecar(tmp_path / "gz.meta.json") == expected
    assert read_sidecar(text, name="upload.meta.json") == expected
    assert read_sidecar(io.BytesIO(text)) == expected
    bad = [(b"{", "valid JSON run metadata (Expecting property name"), (b"[1]", "a JSON object like"),
           (b'{"dims": -1}', "a non-negative number for 'dims', got '-1'"),
           (b'{"price_per_mtok": "cheap"}', "a number for 'price_per_mtok', got \"'cheap'\""),
           (b"\xff", "valid JSON run metadata ('utf-8' codec can't decode byte 0xff")]
    for content, message in bad:
        with pytest.raises(InputError) as caught:
            read_sidecar(content, name="x.meta.json")
        assert str(caught.value).startswith("x.meta.json: expected ") and message in str(caught.value)


def test_documents_formats(tmp_path) -> None:
    (tmp_path / "docs.jsonl").write_text('{"doc_id": "a", "text": "Refunds take 5 days."}\n')
    (tmp_path / "docs.csv").write_text("doc_id,tokens\na,7\n")
    assert evalcore.read_documents(tmp_path / "docs.jsonl").text("a") == "Refunds take 5 days."
    assert evalcore.read_documents(tmp_path / "docs.csv").frame.loc["a", "tokens"] == 7


def test_documents_titles_are_optional_in_every_format(tmp_path) -> None:
    """A title column (or field) names each doc wherever a person reads it; without one, docs have no title."""
    (tmp_path / "docs.jsonl").write_text('{"doc_id": "a", "title": "Refunds: timing", "text": "Refunds take 5 days."}\n'
                                         '{"doc_id": "b", "title": "", "text": "No title here."}\n')
    (tmp_path / "docs.tsv").write_text("doc_id\tDoc_Title\ttext\na\tRefunds: timing\tRefunds take 5 days.\n")
    pd.DataFrame({"doc_id": ["a"], "heading": ["Refunds: timing"], "tokens": [7]}).to_parquet(tmp_path / "docs.parquet")
    for name in ("docs.jsonl", "docs.tsv", "docs.parquet"):
        docs = evalcore.read_documents(tmp_path / name)
        assert docs.has_title and docs.title("a") == "Refunds: timing", name
    assert evalcore.read_documents(tmp_path / "docs.jsonl").title("b") is None  # an empty title is no title
    untitled = evalcore.read_documents({"a": "Refunds take 5 days."})
    assert not untitled.has_title and untitled.title("a") is None


# A table of malformed files: each must name the file, the line and the offending text.
MALFORMED = [
    ("labels", "qrels.trec", "q1 0 A 1\nq1 0 B\n", "line 2", "q1 0 B", "4 whitespace-separated fields"),
    ("labels", "qrels.trec", "q1 0 A 1\n\n# note\nq1 0 B high\n", "line 4", "q1 0 B high", "a number"),
    ("labels", "labels.csv", "query,doc_id,grade\nq1,A,1\nq1,,1\n", "line 3", "q1,,1", "a doc id"),
    ("labels", "labels.csv", "question,doc_id\nq1,A\n", "line 1", "question,doc_id", "a query column"),
    ("labels", "labels.tsv", "a\tb\tc\nq1\tA\t1\n", "line 1", r"a\tb\tc", "--labels-format"),
    ("labels", "labels.tsv", "query\tdoc_id\tblind\nq1\tA\tmaybe\n", "line 2", "maybe", "true or false"),
    ("labels", "labels.tsv", "query\tdoc_id\tsplit\nq1\tA\ttest\n", "line 2", "test", "'tune' or 'holdout'"),
    ("labels", "labels.json", '{"q1": ["A",\n "B"\n', "line 3", "", "valid JSON"),
    ("labels", "labels.json", '{"q1": {"A": "high"}}', None, "high", "numeric grade"),
    ("labels", "labels.jsonl", '{"query": "q1", "relevant": ["A"]}\n{"query": "q2"}\n', "line 2", '{"query": "q2"}',
     '"relevant" list'),
    ("labels", "labels.jsonl", '{"query": "q1", "relevant": ["A"]}\nnot json\n', "line 2", "not json", "JSON object"),
    ("run", "run.trec", "q1 Q0 A 1 0.5 t\nq1 Q0 B 2 t\n", "line 2", "q1 Q0 B 2 t", "6 whitespace-separated"),
    ("run", "run.trec", "q1 Q0 A 1 0.5 t\nq1 Q0 B 2 abc t\n", "line 2", "abc", "a number in the score column"),
    ("run", "run.csv", "query,doc_id\nq1,A\n", "line 1", "query,doc_id", "a rank or score column"),
    ("run", "run.csv", "query,doc_id,rank\nq1,A,1\nq1,B,second\n", "line 3", "q1,B,second", "rank column"),
    ("run", "run.jsonl", '{"query": "q1", "ranked": "A"}\n', "line 1", '"ranked": "A"', '"ranked"'),
    ("run", "run.json", '["A", "B"]', None, "list", "a JSON object"),
    ("labels", "qrels.trec", b"q1 0 A 1\nq1 0 \xff\xfe 1\n", "line 2", "", "UTF-8 text"),
    ("labels", "labels.csv", "query,doc_id,grade\n", None, None, "at least one judgment"),
]


@pytest.mark.parametrize("kind, name, content, where, text, expected", MALFORMED,
                         ids=[f"{m[1]}-{m[5][:20]}" for m in MALFORMED])
def test_malformed_files_get_one_clear_message(tmp_path, kind, name, content, where, text, expected) -> None:
    path = tmp_path / name
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content)
    reader = evalcore.read_labels if kind == "labels" else evalcore.read_run
    with pytest.raises(InputError) as info:
        reader(path)
    message = str(info.value)
    assert "\n" not in message
    assert name in message or "labels" in message
    assert expected in message
    if where:
        assert where in message
    if text:
        assert text in message


def test_missing_file_is_an_input_error(tmp_path) -> None:
    with pytest.raises(InputError, match="expected an existing file"):
        evalcore.read_run(tmp_path / "nope.trec")


def test_explicit_format_overrides_detection(tmp_path) -> None:
    path = tmp_path / "data.dat"
    path.write_text('{"q1": ["A"]}')
    assert evalcore.read_labels(path, format="json").queries.tolist() == ["q1"]
    with pytest.raises(evalcore.UsageError, match="format"):
        evalcore.read_labels(path, format="xml")


def test_headerless_trec_files_load_whatever_their_extension(tmp_path) -> None:
    """Public qrels are often shared as ``.tsv`` with no header and a tab and a space mixed (``1<TAB> 0 31715818<TAB>1``):
    a number where a column name would be means TREC, not a mangled header."""
    qrels = tmp_path / "test.tsv"
    qrels.write_text("1\t 0 31715818\t1\n1\t 0 31715819\t0\n2\t 0 555\t1\n")
    labels = evalcore.read_labels(qrels)
    assert normalised(labels) == [("1", "31715818", 1.0), ("1", "31715819", 0.0), ("2", "555", 1.0)]
    run = tmp_path / "run.csv"
    run.write_text("1 Q0 31715818 1 9.5 bm25\n2 Q0 555 1 3 bm25\n")
    assert evalcore.read_run(run).model == "bm25"


# Regressions found in review: each once read silently wrong.

def test_null_ids_in_parquet_are_errors_not_other_docs(tmp_path) -> None:
    pd.DataFrame({"query": ["q1", "q1"], "doc_id": [None, "a"], "rank": [1, 2]}).to_parquet(tmp_path / "r.parquet")
    with pytest.raises(InputError, match=r"r.parquet, row 1: expected a doc id"):
        evalcore.read_run(tmp_path / "r.parquet")


def test_jsonl_labels_accept_the_grade_aliases(tmp_path) -> None:
    path = tmp_path / "labels.jsonl"
    path.write_text('{"query": "q1", "doc_id": "a", "relevance": 0}\n{"qid": "q1", "docid": "b", "label": 2}\n')
    labels = evalcore.read_labels(path)
    assert normalised(labels) == [("q1", "a", 0.0), ("q1", "b", 2.0)]


@pytest.mark.parametrize("score", ["nan", "inf", "-inf", "N/A"])
def test_non_finite_scores_are_errors(tmp_path, score) -> None:
    path = tmp_path / "run.trec"
    path.write_text(f"q1 Q0 a 1 0.5 t\nq1 Q0 b 2 {score} t\n")
    with pytest.raises(InputError, match=r"line 2: expected a number in the score column"):
        evalcore.read_run(path)


def test_non_finite_json_numbers_are_errors(tmp_path) -> None:
    (tmp_path / "run.json").write_text('{"q1": [{"doc_id": "a", "score": NaN}]}')
    with pytest.raises(InputError, match="valid JSON"):
        evalcore.read_run(tmp_path / "run.json")
    (tmp_path / "labels.json").write_text('{"q1": {"a": 1e999}}')
    with pytest.raises(InputError, match="finite numeric grade"):
        evalcore.read_labels(tmp_path / "labels.json")


def test_a_malformed_line_deep_in_a_large_run_is_found(tmp_path) -> None:
    good = "".join(f"q{i} Q0 d{j} {j} {1 - j / 100:.2f} t\n" for i in range(400) for j in range(1, 11))
    path = tmp_path / "run.trec"
    path.write_text(good + "q9999 Q0  5.0 t\n")  # doc id missing, hidden by a doubled space
    with pytest.raises(InputError, match=r"line 4001: expected 6 whitespace-separated fields"):
        evalcore.read_run(path)


def test_first_line_too_short_names_the_line(tmp_path) -> None:
    path = tmp_path / "l3.qrels"
    path.write_text("q1 a 1\n")
    with pytest.raises(InputError, match=r"l3.qrels, line 1: expected 4 whitespace-separated fields.*'q1 a 1'"):
        evalcore.read_labels(path)


def test_trec_extension_is_trusted_for_ids_that_look_like_headers(tmp_path) -> None:
    (tmp_path / "qq.qrels").write_text("query-1 0 doc-1 1\n")
    (tmp_path / "qq.trec").write_text("query-1 Q0 doc.7 1 0.5 t\n")
    assert evalcore.evaluate(tmp_path / "qq.trec", tmp_path / "qq.qrels", k=1)["recall@1"] == 0.0


def test_json_runs_reject_non_string_doc_ids(tmp_path) -> None:
    (tmp_path / "run.json").write_text('{"q1": [null, "a"]}')
    with pytest.raises(InputError, match="doc ids as strings"):
        evalcore.read_run(tmp_path / "run.json")


def test_jsonl_run_query_on_two_lines_is_an_error(tmp_path) -> None:
    path = tmp_path / "run.jsonl"
    path.write_text('{"query": "q1", "ranked": ["a"]}\n{"query": "q1", "ranked": ["b"]}\n')
    with pytest.raises(InputError, match="line 2: expected each query on one line only"):
        evalcore.read_run(path)


def test_ids_keep_their_spaces(tmp_path) -> None:
    (tmp_path / "labels.csv").write_text("query,doc_id\n refund timing ,d1\n")
    (tmp_path / "run.json").write_text('{" refund timing ": ["d1"]}')
    assert evalcore.evaluate(tmp_path / "run.json", tmp_path / "labels.csv", k=1)["recall@1"] == 1.0


def test_k_beyond_the_limit_is_a_usage_error() -> None:
    with pytest.raises(evalcore.UsageError, match="'k' parameter"):
        evalcore.evaluate({"q": ["a"]}, {"q": ["a"]}, k=10**10)


def test_fingerprint_sees_full_precision_grades_and_id_boundaries() -> None:
    fp = lambda labels: evalcore.read_labels(labels).fingerprint  # noqa: E731
    assert fp({"q1": {"d": 1.0}}) != fp({"q1": {"d": 1.0000001}})
    assert fp({"a\tb": {"c": 1}}) != fp({"a": {"b\tc": 1}})


def test_a_query_repeated_in_a_json_object_is_an_error(tmp_path) -> None:
    (tmp_path / "labels.json").write_text('{"q1": ["a"], "q2": ["b"], "q1": ["c"]}')
    with pytest.raises(InputError, match="'q1' appears twice"):
        evalcore.read_labels(tmp_path / "labels.json")


def test_slices_keep_values_as_written() -> None:
    from evalcore.analyses.slices import slice_metrics

    labels = pd.DataFrame({"query": ["q1", "q2", "q3"], "doc_id": ["a", "b", "c"],
                           "source": ["Support", "support", None], "blind": [True, False, True]})
    ev = evalcore.evaluate_runs([{"q1": ["a"], "q2": ["x"], "q3": ["c"]}], labels, k=1)
    by_source = slice_metrics(ev, "source", ["recall@1"], min_n=2)
    assert sorted(by_source["value"]) == ["(not set)", "Support", "support"]
    assert by_source["small"].all()
    assert sorted(slice_metrics(ev, "blind", ["recall@1"])["value"]) == ["false", "true"]


def test_a_quoted_cell_over_two_lines_does_not_shift_later_line_numbers(tmp_path) -> None:
    path = tmp_path / "labels.csv"
    path.write_text('query,doc_id,grade,query_text\nq1,d1,1,"pw reset\nfrom a ticket"\n\nq2,d2,1,plain\nq3,d3,x,bad\n')
    with pytest.raises(InputError, match=r"labels.csv, line 6: expected a number in the grade column.*'q3,d3,x,bad'"):
        evalcore.read_labels(path)


def test_a_bad_cell_inside_a_multi_line_row_names_its_first_line(tmp_path) -> None:
    path = tmp_path / "labels.csv"
    path.write_text('query,doc_id,grade,query_text\nq1,d1,1,ok\nq2,d2,x,"two\nlines"\n')
    with pytest.raises(InputError, match=r"line 3: .*q2,d2,x,\"two\\nlines\""):
        evalcore.read_labels(path)


def test_two_splits_for_one_query_is_an_error_naming_both_lines(tmp_path) -> None:
    path = tmp_path / "labels.tsv"
    path.write_text("query\tdoc_id\tsplit\nq1\tA\ttune\nq2\tB\tholdout\nq1\tC\tholdout\n")
    with pytest.raises(InputError, match=r"line 4: expected one split per query \(query 'q1' is 'tune' at line 2\)"):
        evalcore.read_labels(path)
    jsonl = tmp_path / "labels.jsonl"
    jsonl.write_text('{"query": "q1", "doc_id": "A", "split": "tune"}\n\n{"query": "q1", "doc_id": "B", "split": "holdout"}\n')
    with pytest.raises(InputError, match=r"labels.jsonl, line 3: expected one split per query"):
        evalcore.read_labels(jsonl)


def test_conflicting_per_query_fields_are_settled_with_a_warning(tmp_path) -> None:
    path = tmp_path / "labels.tsv"
    path.write_text("query\tdoc_id\tquery_text\tsource\tblind\n"
                    "q1\tA\tpw reset\tsearch_log\ttrue\n"
                    "q1\tB\tpw  reset!\tsearch_log\tfalse\n"
                    "q2\tC\tinvoice\tteam_written\ttrue\n")
    labels = evalcore.read_labels(path)
    assert labels.field("query_text").tolist() == ["pw reset", "invoice"]  # the first value
    assert labels.field("blind").tolist() == [False, True]  # one judgment made after seeing rankings: not blind
    messages = {w.message.split(" values")[0].split()[-1]: w.message for w in labels.warnings
                if w.code == "query_field_conflict"}
    assert set(messages) == {"query_text", "blind"}  # source agrees on every row: no warning
    assert "'pw reset' at line 2 and 'pw  reset!' at line 3" in messages["query_text"]
    assert "counted as not blind" in messages["blind"]
    jsonl = tmp_path / "labels.jsonl"
    jsonl.write_text('{"query": "q1", "doc_id": "A", "blind": true}\n{"query": "q1", "doc_id": "B", "blind": false}\n'
                     '{"query": "q2", "doc_id": "C"}\n')
    from_jsonl = evalcore.read_labels(jsonl)
    blind = from_jsonl.field("blind")
    assert blind.iloc[0] is False and pd.isna(blind.iloc[1])  # q2 never says
    assert [w.code for w in from_jsonl.warnings] == ["query_field_conflict"]


def test_table_files_read_only_the_columns_evalcore_uses(tmp_path) -> None:
    run = tmp_path / "run.csv"
    run.write_text('query,doc_id,rank,chunk_text\nq1,A,1,"a long, quoted chunk"\nq1,B,2,more text\n')
    parsed = evalcore.read_run(run)
    assert parsed.n_queries == 1 and len(parsed.doc_ids) == 2
    labels = tmp_path / "labels.csv"
    labels.write_text("qid,doc,notes,source\nq1,A,judged by ana,search_log\n")
    assert evalcore.read_labels(labels).field("source").tolist() == ["search_log"]
    missing = tmp_path / "norank.csv"
    missing.write_text("query,doc_id,chunk_text\nq1,A,x\n")
    # The message still lists every column the file has, also those not read.
    with pytest.raises(InputError, match=r"expected a rank or score column, got 'query,doc_id,chunk_text'"):
        evalcore.read_run(missing)
    nodoc = tmp_path / "nodoc.tsv"
    nodoc.write_text("query\tpassage\tgrade\nq1\tA\t1\n")
    with pytest.raises(InputError, match=r"got 'query\\tpassage\\tgrade'"):
        evalcore.read_labels(nodoc)


@pytest.mark.parametrize("how", ["file", "gzip", "bytes", "slow path"])
def test_a_run_tag_column_that_is_not_one_name_is_said_and_a_sidecar_names_the_model(tmp_path, how,
                                                                                      monkeypatch) -> None:
    """Some exported runs put a doc id or a number in the 6th field: the model would be named after the first
    line's; the reader says so (the file's first and last tags compared, read from its end) unless a sidecar or
    the caller names the model."""
    lines = [f"q1 Q0 d{i} {i} {10 - i}.5 {4843291 + i}" for i in range(1, 4)]
    if how == "slow path":  # the line-naming reader, which reads what pyarrow's fast path cannot
        monkeypatch.setattr("evalcore.readers.run_parsers.read_trec_run_arrow", lambda source: None)
    text = "\n".join(lines) + "\n"
    path = tmp_path / "reranked.trec"
    source = {"file": path, "gzip": tmp_path / "reranked.trec.gz", "bytes": text.encode(), "slow path": path}[how]
    path.write_text(text)
    (tmp_path / "reranked.trec.gz").write_bytes(gzip.compress(text.encode()))
    run = evalcore.read_run(source, name="reranked")
    said = [w for w in run.warnings if w.code == "run_tag_varies"]
    assert run.model == "4843292" and len(said) == 1
    assert "'4843292' on the first line" in said[0].message and "'4843294' on the last" in said[0].message
    assert ".meta.json sidecar" in said[0].message
    assert not [w for w in evalcore.read_run(source, name="reranked", model="rerank-v2").warnings
                if w.code == "run_tag_varies"]
    if how == "file":
        (tmp_path / "reranked.meta.json").write_text('{"model": "rerank-v2"}')
        named = evalcore.read_run(path)
        assert named.model == "rerank-v2" and not [w for w in named.warnings if w.code == "run_tag_varies"]
    steady = evalcore.read_run("".join(line.rsplit(" ", 1)[0] + " bm25\n" for line in lines).encode(), name="b")
    assert steady.model == "bm25" and not [w for w in steady.warnings if w.code == "run_tag_varies"]
