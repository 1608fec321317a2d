"""Hostile input, round three (the readers' items): offsets past any document and of Parquet's uint64 refused by row
through the command line, a bad last line of a large map named by the batch that holds it (never the whole file
read to name it), TSV cells quoted as pandas writes them, a plain file's long line refused as its gzip copy is, and
the id limit's setting checked. Each case's file is written here; the bad-file tables of `test_chunk_maps.py`,
`test_evidence_spans.py` and `test_offsets.py` hold the rest."""

from __future__ import annotations

import gzip
import io
import json
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import evalcore
from evalcore import InputError
from evalcore.readers import arrow_tables, chunks, parquet_files, sources
from evalcore.readers.chunks import read_chunks
from evalcore.readers.sources import _has_long_line
from tests.cli_runner import run_cli
from tests.readers.files import parquet_bytes, write

CEILING = "expected an offset in end of at most 1,099,511,627,776 characters (2**40; no document evalcore reads is longer)"


def scored(tmp_path: Path, labels: Path, chunk_map: Path | None = None):
    run = write(tmp_path, "run.trec", "q1 Q0 a#1 1 0.5 t\nq2 Q0 b#1 1 0.4 t\n")
    extra = ["--chunks", chunk_map] if chunk_map is not None else []
    return run_cli("evaluate", "--labels", labels, "--run", run, *extra)


def one_line(done) -> str:
    assert done.returncode == 2 and "Traceback" not in done.stderr and "internal error" not in done.stderr, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    return lines[0]


# ----------------------------------------------------------------------------- items 1 and 2, through the command line

def test_an_end_near_2_to_the_53_is_refused_by_line_not_an_overflow(tmp_path) -> None:
    labels = write(tmp_path, "labels.tsv", "query\tdoc_id\nq1\ta\nq2\tb\n")
    chunk_map = write(tmp_path, "chunks.csv", "chunk_id,doc_id,start,end\na#1,a,0,20\nb#1,b,0,9000000000000000\n")
    assert one_line(scored(tmp_path, labels, chunk_map)) == (
        f"evalcore: error: {chunk_map}, line 3: {CEILING}, got 'b#1,b,0,9000000000000000'")
    spans = write(tmp_path, "spans.tsv", "query\tdoc_id\tgrade\tstart\tend\nq1\ta\t1\t0\t10\nq2\tb\t1\t0\t9e15\n")
    assert one_line(scored(tmp_path, spans)) == f"evalcore: error: {spans}, line 3: {CEILING}, got 'q2\\tb\\t1\\t0\\t9e15'"


@pytest.mark.parametrize("kind", ["chunks", "labels"])
def test_a_parquet_uint64_offset_is_refused_naming_file_row_and_column(tmp_path, kind) -> None:
    ends = pa.array([20, 2**64 - 1], pa.uint64())
    if kind == "chunks":
        labels = write(tmp_path, "labels.tsv", "query\tdoc_id\nq1\ta\nq2\tb\n")
        path = write(tmp_path, "chunks.parquet", parquet_bytes({"chunk_id": ["a#1", "b#1"], "doc_id": ["a", "b"],
                                                                 "start": pa.array([0, 0], pa.uint64()),
                                                                 "end_char": ends}))
        done, column, shown = scored(tmp_path, labels, path), "end_char", "chunk_id=b#1, doc_id=b, start=0"
    else:
        path = write(tmp_path, "labels.parquet", parquet_bytes({"query": ["q1", "q2"], "doc_id": ["a", "b"],
                                                                 "start": pa.array([0, 0], pa.uint64()), "end": ends}))
        done, column, shown = scored(tmp_path, path), "end", "query=q2, doc_id=b, start=0"
    line = one_line(done)
    assert line.startswith(f"evalcore: error: {path}, row 2: expected an offset in {column} of at most "
                           "1,099,511,627,776 characters") and f"{shown}, {column}=18446744073709551615" in line, line


# ----------------------------------------------------------------------------- item 4: the batch names the bad row

def big_map(rows: int, last: str, sep: str = ",") -> str:
    lines = [sep.join(("chunk_id", "doc_id", "start", "end", "text"))]
    lines += [sep.join((f"d{i // 5}#{i % 5}", f"d{i // 5}", str(10 * (i % 5)), str(10 * (i % 5) + 12), f"t {i}"))
              for i in range(rows)]
    return "\n".join(lines + [last.replace(",", sep)]) + "\n"


LAST = [  # (the bad last line, documents?, what the message says)
    ("z#1,d0,90,40,x", False, "expected start at most end"),
    ("z#1,d0,-2,40,x", False, "expected a whole number of characters in start (0 or more)"),
    ("z#1,d0,0,9e15,x", False, "expected an offset in end of at most"),
    ("z#1,,0,4,x", False, "expected a doc id in column 'doc_id'"),
    ("d3#2,d9,0,4,x", False, "expected each chunk listed once (a chunk belongs to one document at one place), got "
                             "'d3#2 (listed first at line 19)'"),
    ("z#1,d0,0,4,x,extra", False, "expected 5 fields on every line, as in the header"),
    ("z#1,nowhere,0,4,x", True, "expected a doc_id the documents file documents has"),
    ("z#1,d0,0,400,x", True, "expected an end within its document's text (60 characters)"),
]


@pytest.mark.parametrize("sep", [",", "\t"])
@pytest.mark.parametrize("last, documents, expected", LAST, ids=[f"{i}-{c[0]}" for i, c in enumerate(LAST)])
def test_a_bad_last_line_is_named_by_the_batch_reader_without_reading_the_file_whole(tmp_path, monkeypatch, sep, last,
                                                                                    documents, expected) -> None:
    """Many batches (blocks of 4 KB); the message is the whole read's, word for word, while the kept read neither
    reads the file whole nor decodes it to one string (what made memory follow the file)."""
    name = "chunks.csv" if sep == "," else "chunks.tsv"
    rows = 3000
    path = write(tmp_path, name, big_map(rows, last, sep))
    docs = {f"d{i}": "x" * 60 for i in range(rows // 5)} if documents else None
    with pytest.raises(InputError) as whole:
        read_chunks(path, documents=docs)
    monkeypatch.setattr(arrow_tables, "_STREAM_BLOCK", 4096)

    def never(*_, **__):
        raise AssertionError("the map was read whole to name its bad line")

    monkeypatch.setattr(chunks, "parse_file", never)
    monkeypatch.setattr(sources, "read_limited", never)
    monkeypatch.setattr(sources.Source, "text", never)
    with pytest.raises(InputError) as kept:
        read_chunks(path, documents=docs, keep=[["d1#1"]])
    message = str(kept.value)
    assert message == str(whole.value) and expected in message and "\n" not in message
    assert message.startswith(f"{path}, line {rows + 2}: "), message


@pytest.mark.parametrize("fault, expected", [
    ("backwards", "row 41: expected start at most end (character offsets, end exclusive), got 'chunk_id=z#1, "),
    ("no doc", "row 41: expected a doc id in column 'doc_id'"),
    ("empty doc", "row 41: expected a doc id in column 'doc_id'"),
    ("long doc", "row 41: expected a doc id of at most 1,024 characters"),
    ("twice", "row 41: expected each chunk listed once (a chunk belongs to one document at one place), got "
              "'d2#3 (listed first at row 12)'"),
])
def test_a_bad_last_row_of_a_dictionary_parquet_map_is_named_by_its_batch(tmp_path, monkeypatch, fault,
                                                                        expected) -> None:
    chunk_ids = [f"d{i // 4}#{i % 4}" for i in range(40)] + ["d2#3" if fault == "twice" else "z#1"]
    doc_ids = [f"d{i // 4}" for i in range(40)] + [{"no doc": None, "empty doc": "", "long doc": "d" * 2000}.get(fault, "d0")]
    start = [10 * (i % 4) for i in range(40)] + [90 if fault == "backwards" else 0]
    path = write(tmp_path, "chunks.parquet", parquet_bytes(
        {"chunk_id": chunk_ids, "doc_id": pa.array(doc_ids).dictionary_encode(), "start": start,
         "end": [10 * (i % 4) + 12 for i in range(40)] + [40]}, row_group_size=16))
    with pytest.raises(InputError) as whole:
        read_chunks(path)
    monkeypatch.setattr(parquet_files, "_STREAM_BATCH_ROWS", 7)
    monkeypatch.setattr(chunks, "parse_file", lambda *_, **__: pytest.fail("the map was read whole"))
    with pytest.raises(InputError) as kept:
        read_chunks(path, keep=[["d1#1"]])
    assert str(kept.value) == str(whole.value) and expected in str(kept.value), str(kept.value)


def test_a_large_jsonl_map_is_parsed_a_block_at_a_time_and_reads_as_before(tmp_path, monkeypatch) -> None:
    lines = [json.dumps({"chunk_id": f"c{i}", "doc_id": f"d{i // 3}", "start": i % 3, "end": 10}) for i in range(3000)]
    lines.insert(1500, json.dumps({"chunk_id": "x", "doc_id": "d0", "start": 0, "end": 10, "text": "later field"}))
    path = write(tmp_path, "chunks.jsonl", "\n".join(lines) + "\n")
    monkeypatch.setattr(arrow_tables, "_BLOCK", 4096)  # many blocks; a field first seen half way: read whole
    chunked = read_chunks(path)
    assert chunked.n_chunks == 3001 and chunked.text.to_pylist()[1500] == "later field"
    bad = write(tmp_path, "bad.jsonl", "\n".join(lines + ['{"chunk_id": "y", "doc_id": "d0", "start": 5, "end": 1}'])
                + "\n")
    with pytest.raises(InputError, match=r"bad.jsonl, line 3002: expected start at most end"):
        read_chunks(bad)


# ----------------------------------------------------------------------------- item 6: TSV cells quoted as pandas writes

def test_tsv_text_quoted_as_pandas_writes_it_reads_as_pandas_reads_it(tmp_path) -> None:
    texts = ['The enzyme has a "high Km" value.', 'plain', '"', 'say "hi", then "bye"', '""quoted""', '']
    frame = pd.DataFrame({"doc_id": [f"d{i}" for i in range(len(texts))], "title": texts, "text": texts})
    buffer = io.StringIO()
    frame.to_csv(buffer, sep="\t", index=False)
    written = buffer.getvalue()
    assert '"The enzyme has a ""high Km"" value."' in written  # what the file held
    docs = evalcore.read_documents(write(tmp_path, "docs.tsv", written))
    read_back = pd.read_csv(io.StringIO(written), sep="\t", dtype=str, keep_default_na=False)
    assert docs.frame["text"].tolist() == read_back["text"].tolist() == texts
    assert docs.frame["title"].tolist() == [t.strip() for t in texts]

    mapped = pd.DataFrame({"chunk_id": [f"c{i}" for i in range(len(texts))], "doc_id": frame["doc_id"],
                           "text": texts})
    found = read_chunks(write(tmp_path, "chunks.tsv", mapped.to_csv(sep="\t", index=False)))
    assert found.text.to_pylist() == texts
    quoted_id = read_chunks(write(tmp_path, "ids.tsv", 'chunk_id\tdoc_id\ttext\n"c0"\t"d0"\t"a ""b"""\n'))
    assert quoted_id.chunk_ids.tolist() == ['"c0"'] and quoted_id.doc_ids.tolist() == ['"d0"']  # ids as written
    assert quoted_id.text.to_pylist() == ['a "b"']

    labels = write(tmp_path, "labels.tsv", 'query\tdoc_id\tquery_text\n"q1"\td0\t"what is ""Km""?"\nq2\td1\tplain "x"\n')
    read = evalcore.read_labels(labels)
    assert read.judgments["query"].tolist() == ['"q1"', "q2"]
    assert read.query_info["query_text"].tolist() == ['what is "Km"?', 'plain "x"']
    queries = evalcore.read_queries(write(tmp_path, "queries.tsv", '1\t"what is ""Km""?"\n2\t"half quoted" text\n'))
    assert dict(queries) == {"1": 'what is "Km"?', "2": '"half quoted" text'}  # not quoted throughout: as written


# ----------------------------------------------------------------------------- item 11: the smaller ones

@pytest.mark.parametrize("name, reader, content", [
    ("chunks.jsonl", read_chunks, '{"chunk_id": "a", "doc_id": "d"}\n{"chunk_id": "b", "doc_id": "d", "text": "LONG"}\n'),
    ("chunks.csv", read_chunks, "chunk_id,doc_id,text\na,d,x\nb,d,LONG\n"),
    ("chunks.tsv", read_chunks, "chunk_id\tdoc_id\ttext\na\td\tx\nb\td\tLONG\n"),
    ("labels.jsonl", evalcore.read_labels, '{"query": "q", "doc_id": "a"}\n{"query": "q", "doc_id": "LONG"}\n'),
    ("docs.tsv", evalcore.read_documents, "doc_id\ttext\na\tx\nb\tLONG\n"),
    ("queries.jsonl", evalcore.read_queries, '{"_id": "1", "text": "x"}\n{"_id": "2", "text": "LONG"}\n'),
])
def test_a_line_past_the_line_limit_is_refused_plain_as_gzip(tmp_path, monkeypatch, name, reader, content) -> None:
    monkeypatch.setenv("EVALCORE_MAX_LINE_MB", "1")
    data = content.replace("LONG", "x" * (3 << 19)).encode()
    plain, packed = write(tmp_path, name, data), write(tmp_path, name + ".gz", gzip.compress(data))
    messages = []
    for path in (plain, packed):
        with pytest.raises(InputError) as info:
            reader(path)
        messages.append(str(info.value).replace(str(path), "FILE"))
    assert messages[0] == messages[1], messages
    line = 2 if name.endswith(".jsonl") else 3
    assert f"FILE, line {line}: expected lines of at most 1,048,576 bytes (set EVALCORE_MAX_LINE_MB to allow " \
           "longer)" in messages[0]


@pytest.mark.parametrize("setting", ["0.5", "0", "-3", "ten", "inf", "1.5"])
def test_an_id_limit_that_is_no_whole_number_of_1_or_more_is_one_sentence(tmp_path, setting) -> None:
    labels = write(tmp_path, "labels.tsv", "query\tdoc_id\nq1\ta\n")
    done = run_cli("evaluate", "--labels", labels, "--run", write(tmp_path, "run.trec", "q1 Q0 a 1 0.5 t\n"),
                   env={"EVALCORE_MAX_ID_CHARS": setting})
    assert one_line(done) == ("evalcore: error: The setting EVALCORE_MAX_ID_CHARS (an environment variable) must be a "
                              f"whole number of characters, 1 or more; got {setting!r}.")


def test_an_id_limit_written_as_a_whole_float_is_taken(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("EVALCORE_MAX_ID_CHARS", "2e3")
    long = "d" * 1500
    assert evalcore.read_labels(write(tmp_path, "l.tsv", f"query\tdoc_id\nq1\t{long}\n")).judgments["doc_id"][0] == long


@given(st.lists(st.integers(0, 30), max_size=20), st.integers(1, 25), st.booleans())
@settings(max_examples=300, deadline=None)
def test_the_long_line_probe_agrees_with_measuring_every_line(lengths, most, ends_with_newline) -> None:
    """`_has_long_line` looks at a few bytes a window (a plain file is probed, not read): it must find a line past
    the limit exactly when one is there."""
    data = b"\n".join(b"x" * n for n in lengths) + (b"\n" if ends_with_newline else b"")
    assert _has_long_line(data, most) == any(len(line) > most for line in data.split(b"\n"))
