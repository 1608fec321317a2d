"""Evidence spans in labels: several rows of one (query, doc) are one judgment with several spans, every format says
the same, a bad span gets one line naming the file and the line, and the fingerprint follows the spans (while labels
without spans keep theirs)."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pytest

import evalcore
from evalcore import InputError
from evalcore.metrics.split import scoring_labels
from evalcore.readers.chunks import read_chunks
from evalcore.readers.labels import check_spans
from evalcore.store.workspace import Workspace
from cli_runner import run_cli
from tests.readers.files import parquet_bytes, write

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "sample_data"
ROWS = [("q1", "d1", 1, 0, 10), ("q1", "d1", 1, 40, 55), ("q1", "d2", 0, None, None), ("q2", "d3", 2, 5, 9)]


def tsv(rows, header="query\tdoc_id\tgrade\tstart\tend") -> str:
    return header + "\n" + "".join("\t".join("" if v is None else str(v) for v in row) + "\n" for row in rows)


def jsonl(rows) -> str:
    out = []
    for query, doc, grade, start, end in rows:
        record = {"query": query, "doc_id": doc, "grade": grade}
        if start is not None:
            record.update(start=start, end=end)
        out.append(json.dumps(record) + "\n")
    return "".join(out)


def parquet(rows) -> bytes:
    return parquet_bytes(dict(zip(("query", "doc_id", "grade", "start", "end"), map(list, zip(*rows)))))



@pytest.mark.parametrize("name, content", [
    ("labels.tsv", tsv(ROWS)),
    ("labels.csv", tsv(ROWS).replace("\t", ",")),
    ("labels.jsonl", jsonl(ROWS)),
    ("labels.parquet", parquet(ROWS)),
    ("shuffled.tsv", tsv([ROWS[3], ROWS[1], ROWS[2], ROWS[0]])),
])
def test_rows_of_one_judgment_are_one_judgment_with_every_span(tmp_path, name, content) -> None:
    labels = evalcore.read_labels(write(tmp_path, name, content))
    judgments = labels.judgments.sort_values(["query", "doc_id"]).values.tolist()
    assert judgments == [["q1", "d1", 1.0], ["q1", "d2", 0.0], ["q2", "d3", 2.0]]
    spans = labels.spans.sort_values(["query", "doc_id", "start"]).values.tolist()
    assert spans == [["q1", "d1", 0, 10], ["q1", "d1", 40, 55], ["q2", "d3", 5, 9]]
    assert not labels.warnings  # one judgment, not a duplicate
    assert labels.fingerprint == evalcore.read_labels(write(tmp_path, "a.tsv", tsv(ROWS))).fingerprint
    assert list(labels.spans.columns) == ["query", "doc_id", "start", "end"]


def test_a_data_frame_carries_spans_and_a_file_without_any_has_none(tmp_path) -> None:
    frame = pd.DataFrame(ROWS, columns=["query", "doc_id", "grade", "start", "end"])
    assert len(evalcore.read_labels(frame).spans) == 3
    blank = evalcore.read_labels(write(tmp_path, "b.tsv", tsv([r[:3] + (None, None) for r in ROWS])))
    assert blank.spans is None and len(blank.judgments) == 3
    assert [w.code for w in blank.warnings] == ["duplicate_judgment"]  # without spans: the old rule


def test_the_fingerprint_follows_the_spans_and_labels_without_spans_keep_theirs(tmp_path) -> None:
    plain = evalcore.read_labels(write(tmp_path, "p.tsv", tsv([r[:3] + (None, None) for r in ROWS])))
    without = evalcore.read_labels(write(tmp_path, "w.tsv", "query\tdoc_id\tgrade\nq1\td1\t1\nq1\td2\t0\nq2\td3\t2\n"))
    assert plain.fingerprint == without.fingerprint
    spanned = evalcore.read_labels(write(tmp_path, "s.tsv", tsv(ROWS)))
    assert spanned.fingerprint != without.fingerprint
    moved = [ROWS[0], ("q1", "d1", 1, 40, 56)] + ROWS[2:]
    assert evalcore.read_labels(write(tmp_path, "m.tsv", tsv(moved))).fingerprint != spanned.fingerprint
    repeated = ROWS + [ROWS[1]]  # the same span twice is the same evidence
    assert evalcore.read_labels(write(tmp_path, "r.tsv", tsv(repeated))).fingerprint == spanned.fingerprint
    assert evalcore.read_labels(SAMPLE / "labels.tsv").fingerprint == "109ae50aeaba"  # quoted in tests and docs


BAD = [  # (file name, content, the place, what the message says)
    ("l.tsv", tsv([ROWS[0], ("q1", "d1", 2, 40, 55)]), "l.tsv, line 3:",
     "expected the same grade on every row of one judgment with evidence spans (query 'q1', doc 'd1' has grade 1 "
     "at line 2), got 'q1\\td1\\t2\\t40\\t55'"),
    ("l.tsv", tsv([ROWS[0], ("q1", "d1", 0, None, None)]), "l.tsv, line 3:",
     "(query 'q1', doc 'd1' has grade 1 at line 2)"),
    ("l.tsv", tsv([ROWS[0], ("q1", "d2", 1, 30, 20)]), "l.tsv, line 3:",
     "expected start at most end (character offsets, end exclusive), got 'q1\\td2\\t1\\t30\\t20'"),
    ("l.csv", "query,doc_id,start,end\nq1,d1,0,5\nq1,d2,-4,5\n", "l.csv, line 3:",
     "expected a whole number of characters in start (0 or more), got 'q1,d2,-4,5'"),
    ("l.csv", "query,doc_id,start,end\nq1,d1,0,5\n\nq1,d2,0,2.5\n", "l.csv, line 4:",
     "expected a whole number of characters in end (0 or more), got 'q1,d2,0,2.5'"),
    ("l.csv", "query,doc_id,start,end\nq1,d1,0,5\nq1,d2,,7\n", "l.csv, line 3:",
     "expected both start and end, or neither, on each row, got 'q1,d2,,7'"),
    ("l.csv", "query,doc_id,grade,start\nq1,d1,1,0\n", "l.csv, line 1:",
     "expected both a start and an end column, or neither (the file has 'start' alone)"),
    ("l.jsonl", '{"query": "q1", "doc_id": "d1", "start": 0, "end": 5}\n\n'
                '{"query": "q1", "doc_id": "d2", "start": "x", "end": 5}\n', "l.jsonl, line 3:",
     "expected a whole number of characters in start (0 or more), got '{\"query\": \"q1\", \"doc_id\": \"d2\""),
    ("l.jsonl", '{"query": "q1", "relevant": ["d1"], "start": 0, "end": 5}\n', "l.jsonl, line 1:",
     'expected "start" and "end" with a "doc_id" (a "relevant" list has no place for spans)'),
    ("l.parquet", parquet([ROWS[0], ("q1", "d1", 3, 1, 2)]), "l.parquet, row 2:",
     "expected the same grade on every row of one judgment with evidence spans (query 'q1', doc 'd1' has grade 1 "
     "at row 1)"),
    ("l.csv", "query,doc_id,grade,start,end\nq1,d1,1,0,5\nq1,d2,1,5,5\n", "l.csv, line 3:",
     "expected start below end (an evidence span of at least one character; end exclusive), got 'q1,d2,1,5,5'"),
    ("l.jsonl", '{"query": "q1", "doc_id": "d1", "start": 7, "end": 7}\n', "l.jsonl, line 1:",
     "expected start below end (an evidence span of at least one character; end exclusive)"),
    # hostile input, round three: an end past any document (item 1), a Parquet uint64 of 2**64 - 1 (item 2), spans
    # and per-query fields together in JSONL (its rows were lost: an internal error)
    ("l.tsv", tsv([ROWS[0], ("q2", "d3", 1, 0, 9_000_000_000_000_000)]), "l.tsv, line 3:",
     "expected an offset in end of at most 1,099,511,627,776 characters (2**40; no document evalcore reads is "
     "longer), got 'q2\\td3\\t1\\t0\\t9000000000000000'"),
    ("l.jsonl", '{"query": "q1", "doc_id": "d1", "start": 0, "end": 18446744073709551615}\n', "l.jsonl, line 1:",
     "expected an offset in end of at most 1,099,511,627,776 characters"),
    ("l.parquet", parquet_bytes({"query": ["q1", "q2"], "doc_id": ["d1", "d2"], "start": pa.array([0, 0], pa.uint64()),
                                 "end": pa.array([5, 2**64 - 1], pa.uint64())}), "l.parquet, row 2:",
     "expected an offset in end of at most 1,099,511,627,776 characters (2**40; no document evalcore reads is "
     "longer), got 'query=q2, doc_id=d2, start=0, end=18446744073709551615'"),
    ("l.jsonl", '{"query": "q1", "doc_id": "d1", "grade": 1, "start": 0, "end": 5, "split": "tune"}\n'
                '{"query": "q1", "doc_id": "d1", "grade": 2, "start": 7, "end": 9}\n', "l.jsonl, line 2:",
     "expected the same grade on every row of one judgment with evidence spans (query 'q1', doc 'd1' has grade 1 "
     "at line 1)"),
]


@pytest.mark.parametrize("name, content, place, expected", BAD, ids=[f"{i}-{b[0]}" for i, b in enumerate(BAD)])
def test_every_bad_span_gets_one_line_naming_file_and_line(tmp_path, name, content, place, expected) -> None:
    path = write(tmp_path, name, content)
    with pytest.raises(InputError) as info:
        evalcore.read_labels(path)
    message = str(info.value)
    assert "\n" not in message
    assert message.startswith(f"{path}{place[len(name):]} ") and expected in message, message


DOCUMENTS = {"d1": "x" * 85, "d2": "y" * 20, "d3": "z" * 9}
PAST = [  # (file name, content, the place, what the message says): spans past their document's text (item 10)
    ("l.tsv", tsv([ROWS[0], ("q1", "d2", 1, 0, 5000)]), "l.tsv, line 3:",
     "expected an end within its document's text (20 characters), got 'query q1, doc d2, start 0, end 5000'"),
    ("l.csv", tsv([ROWS[0], ROWS[2], ("q1", "d1", 1, 80, 86)]).replace("\t", ",").replace("\n", "\n\n", 1),
     "l.csv, line 5:", "expected an end within its document's text (85 characters), got 'query q1, doc d1, start 80, "
     "end 86'"),
    ("l.jsonl", jsonl([ROWS[0], ("q2", "d3", 2, 5, 10)]), "l.jsonl, line 2:",
     "expected an end within its document's text (9 characters), got 'query q2, doc d3, start 5, end 10'"),
    ("l.parquet", parquet([ROWS[0], ("q2", "d3", 2, 0, 10)]), "l.parquet, row 2:",
     "expected an end within its document's text (9 characters)"),
]


@pytest.mark.parametrize("name, content, place, expected", PAST, ids=[f"{i}-{b[0]}" for i, b in enumerate(PAST)])
def test_a_span_past_its_documents_text_is_refused_when_the_documents_are_given(tmp_path, name, content, place,
                                                                                expected) -> None:
    path = write(tmp_path, name, content)
    labels = evalcore.read_labels(path)  # alone, nothing says how long a document is
    for refuse in (lambda: evalcore.read_labels(path, documents=DOCUMENTS), lambda: check_spans(labels, DOCUMENTS)):
        with pytest.raises(InputError) as info:
            refuse()
        message = str(info.value)
        assert "\n" not in message
        assert message.startswith(f"{path}{place[len(name):]} ") and expected in message, message


def test_spans_within_their_documents_or_of_documents_not_given_are_accepted(tmp_path) -> None:
    path = write(tmp_path, "l.tsv", tsv(ROWS + [("q3", "elsewhere", 1, 0, 5000)]))
    labels = evalcore.read_labels(path, documents=DOCUMENTS)
    assert len(labels.spans) == 4 and check_spans(labels, DOCUMENTS) is labels
    moved = evalcore.read_labels(write(tmp_path, "m.tsv", tsv([("q1", "d1", 1, 0, 200)])))
    moved.spans = moved.spans.iloc[:0]  # spans set from Python: no line to name, nothing to refuse here
    assert check_spans(moved, DOCUMENTS) is moved
    tokens_only = evalcore.read_documents(pd.DataFrame({"doc_id": ["d1"], "tokens": [3]}))
    assert check_spans(evalcore.read_labels(write(tmp_path, "t.tsv", tsv([("q1", "d1", 1, 0, 200)]))),
                       tokens_only).spans is not None  # no text: no length to hold a span to


def test_the_sample_chunkings_score_as_the_independent_check_says() -> None:
    """sample_data/README.md's figures (plain pandas and sets over the written files) from the files read here."""
    labels = evalcore.read_labels(SAMPLE / "chunking" / "labels.tsv")
    docs = evalcore.read_documents(SAMPLE / "docs.jsonl")
    expected = {"sent1": (0.6495, 0.4458), "sent3": (0.7021, 0.6585), "char400": (0.7292, 0.7174)}
    for name, (recall, evidence) in expected.items():
        chunks = read_chunks(SAMPLE / "chunking" / f"{name}.chunks.csv", documents=docs)
        result = evalcore.evaluate(evalcore.read_run(SAMPLE / "chunking" / f"{name}.trec"), labels, k=5,
                                   chunks=chunks)
        assert (round(result["recall@5"], 4), round(result["evidence_recall@5"], 4)) == (recall, evidence), name


def test_each_side_of_the_split_keeps_the_evidence_of_its_queries() -> None:
    labels = evalcore.read_labels(SAMPLE / "chunking" / "labels.tsv")
    tune = scoring_labels(labels).labels
    assert set(tune.spans["query"]) <= set(tune.queries) and 0 < len(tune.spans) < len(labels.spans)


def test_a_workspace_keeps_the_spans_of_a_label_set(tmp_path) -> None:
    ws = Workspace(tmp_path / "ws")
    labels = evalcore.read_labels(SAMPLE / "chunking" / "labels.tsv")
    version = ws._save_labels(labels, name="chunking")
    loaded = ws.load_labels("chunking")
    assert loaded.fingerprint == labels.fingerprint == version.fingerprint
    pd.testing.assert_frame_equal(loaded.spans, labels.spans)
    assert not ws._save_labels(labels, name="chunking").created
    ws._add_cases("chunking", [{"query": "q001", "relevant": ["billing-invoices-02"]}])  # a new judgment
    pd.testing.assert_frame_equal(ws.load_labels("chunking").spans, labels.spans)
    ws._add_cases("chunking", [{"query": "q001", "relevant": ["data-retention-06"], "grade": 2}])  # regraded
    kept = ws.load_labels("chunking").spans
    assert len(kept) == len(labels.spans) - 2 and "data-retention-06" not in set(kept[kept["query"] == "q001"].doc_id)
    plain = evalcore.read_labels(SAMPLE / "labels.tsv")
    assert ws._save_labels(plain, name="plain").fingerprint == plain.fingerprint


def test_the_command_line_exits_2_with_the_one_line(tmp_path) -> None:
    labels = write(tmp_path, "labels.tsv", tsv([ROWS[0], ("q1", "d1", 2, 40, 55)]))
    run = write(tmp_path, "run.trec", "q1 Q0 d1 1 0.5 t\n")
    out = run_cli("evaluate", "--labels", labels, "--run", run)
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert out.stderr.strip() == (f"evalcore: error: {labels}, line 3: expected the same grade on every row of one judgment "
                                  "with evidence spans (query 'q1', doc 'd1' has grade 1 at line 2), got "
                                  "'q1\\td1\\t2\\t40\\t55'")


def test_spans_only_on_the_side_not_scored_leave_the_evidence_out() -> None:
    # The holdout's spans are sealed with it: the tune side scores without evidence, and says nothing about it.
    labels = pd.DataFrame({"query": ["q1", "q2"], "doc_id": ["a", "c"], "grade": [1, 1], "split": ["tune", "holdout"],
                           "start": [None, 0], "end": [None, 5]})
    chunks = read_chunks(pd.DataFrame({"chunk_id": ["a#1", "c#1"], "doc_id": ["a", "c"], "start": [0, 0],
                                       "end": [10, 10]}))
    tune = scoring_labels(evalcore.read_labels(labels))
    evaluation = tune.evaluate([{"q1": ["a#1"], "q2": ["c#1"]}], (1, 5), chunks=chunks)
    metrics = set(evaluation.summary["metric"])
    assert "recall@5" in metrics and not any(m.startswith("evidence") for m in metrics)
    table = evalcore.k_budget(evaluation, max_k=3)[evaluation.results[0].name].table
    assert "evidence_recall" not in table.columns
