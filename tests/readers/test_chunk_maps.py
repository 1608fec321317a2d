"""Chunk-map files: every format reads to the same map, Arrow all the way, and every bad file gets one line naming
the file, the line (the row, for Parquet) and the text there."""

from __future__ import annotations

import csv
import gzip
import io
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import evalcore
from evalcore import InputError
from evalcore.readers.chunks import chunk_map, chunk_texts, read_chunks
from evalcore.readers.documents import read_documents
from tests.readers.files import parquet_bytes, write

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "sample_data"
ROWS = [("a#1", "a", 0, 5, "Alpha"), ("a#2", "a", 4, 12, "a beta."), ("b#1", "b", 0, 3, "Gam")]
DOCS = {"a": "Alpha beta. Gamma.", "b": "Gamma"}


def as_csv(rows, header="chunk_id,doc_id,start,end,text", sep=",") -> str:
    return header + "\n" + "".join(sep.join(str(v) for v in row) + "\n" for row in rows)


def as_jsonl(rows) -> str:
    names = ("chunk_id", "doc_id", "start", "end", "text")
    return "".join(json.dumps(dict(zip(names, row))) + "\n" for row in rows)


def columns_of(rows) -> dict:
    return {name: [row[i] for row in rows] for i, name in enumerate(("chunk_id", "doc_id", "start", "end", "text"))}



@pytest.mark.parametrize("name, content", [
    ("chunks.csv", as_csv(ROWS)),
    ("chunks.tsv", as_csv(ROWS, "chunk_id\tdoc_id\tstart\tend\ttext", "\t")),
    ("chunks.jsonl", as_jsonl(ROWS)),
    ("chunks.parquet", parquet_bytes(columns_of(ROWS))),
    ("chunks.csv.gz", gzip.compress(as_csv(ROWS).encode(), mtime=0)),
    ("chunks", "\ufeff" + as_csv(ROWS).replace("\n", "\r\n")),  # no ending, a byte-order mark, CRLF
])
def test_every_format_reads_to_the_same_map(tmp_path, name, content) -> None:
    chunks = read_chunks(write(tmp_path, name, content))
    ids, docs, starts, ends, texts = map(list, zip(*ROWS))
    expected = chunk_map(ids, docs, start=starts, end=ends, text=texts)
    assert chunks.fingerprint == expected.fingerprint
    assert chunks.chunk_ids.tolist() == ["a#1", "a#2", "b#1"] and chunks.doc_ids.tolist() == ["a", "b"]
    assert chunks.start.tolist() == [0, 4, 0] and chunks.end.tolist() == [5, 12, 3]
    assert chunks.name == "chunks" and chunks.source == str(tmp_path / name)
    assert isinstance(chunks.chunk_ids.arrow, pa.ChunkedArray)  # ids stay Arrow: no Python string per chunk


def test_aliases_optional_columns_and_ids_as_written(tmp_path) -> None:
    chunks = read_chunks(write(tmp_path, "c.csv", "ID,Parent_ID,page_content,other\n007,d1,Alpha,x\n7,d1,Beta,y\n"))
    assert chunks.chunk_ids.tolist() == ["007", "7"] and chunks.start is None and chunks.has_text
    assert chunks.text.to_pylist() == ["Alpha", "Beta"]
    langchain = read_chunks(write(tmp_path, "c.jsonl", '{"chunk": 1, "doc": 10, "start_index": 0, "end_index": 4}\n'
                                                       '{"chunk": "x", "doc": "10", "start_index": 4, "end_index": 9}\n'))
    assert langchain.chunk_ids.tolist() == ["1", "x"] and langchain.doc_ids.tolist() == ["10"]
    assert langchain.end.tolist() == [4, 9]
    blank = read_chunks(write(tmp_path, "b.csv", "chunk_id,doc_id,start,end\na,d,,\nb,d, 3 ,7.0\n"))
    assert blank.start.tolist() == [-1, 3] and blank.end.tolist() == [-1, 7]


def test_parquet_ids_stored_as_numbers_or_dictionaries_read_as_text(tmp_path) -> None:
    content = parquet_bytes({"chunk_id": pa.array([1, 2, 3]), "doc_id": pa.array(["a", "a", "b"]).dictionary_encode(),
                          "start": pa.array([0.0, 4.0, None]), "end": pa.array([5, 12, None])})
    chunks = read_chunks(write(tmp_path, "c.parquet", content))
    assert chunks.chunk_ids.tolist() == ["1", "2", "3"] and chunks.doc_ids.tolist() == ["a", "b"]
    assert chunks.start.tolist() == [0, 4, -1] and chunks.end.tolist() == [5, 12, -1]


def test_a_data_frame_and_a_chunk_map_are_taken_as_they_are() -> None:
    frame = pd.DataFrame(columns_of(ROWS))
    chunks = read_chunks(frame, name="mine")
    assert chunks.name == "mine" and chunks.n_chunks == 3
    assert read_chunks(chunks) is chunks


def test_documents_place_text_only_chunks_and_size_them(tmp_path) -> None:
    path = write(tmp_path, "c.csv", "chunk_id,doc_id,text\na#1,a,beta\nb#1,b,Gam\nb#2,b,zzz\n")
    chunks = read_chunks(path, documents=DOCS)
    assert chunks.start.tolist() == [6, 0, -1] and chunks.end.tolist() == [10, 3, -1]
    assert [w.code for w in chunks.warnings] == ["chunk_text_not_found"]
    placed = read_chunks(write(tmp_path, "p.csv", as_csv(ROWS)), documents=read_documents(DOCS))
    texts = chunk_texts(placed, np.array(["a#2", "b#1"], dtype=object))
    assert texts.frame["text"].tolist() == ["a beta.", "Gam"]


QUOTED = 'chunk_id,doc_id,start,end,text\na#1,a,0,5,"two\nlines"\na#1,a,4,12,x\n'

BAD = [  # (file name, content, documents?, the message's place, text and what was expected)
    ("c.csv", "doc_id,start,end\na,0,5\n", False, "c.csv, line 1:",
     "expected a chunk id column named one of chunk_id, chunkid, chunk-id, chunk, id, _id, passage_id, "
     "got 'doc_id,start,end'"),
    ("c.tsv", "chunk_id\tstart\na#1\t0\n", False, "c.tsv, line 1:", "expected a doc id column named one of doc_id"),
    ("c.csv", "chunk_id,doc_id\na#1,a\nb#1,b\na#1,c\n", False, "c.csv, line 4:",
     "expected each chunk listed once (a chunk belongs to one document at one place), got 'a#1 (listed first at "
     "line 2)'"),
    ("c.csv", QUOTED, False, "c.csv, line 4:", "got 'a#1 (listed first at line 2)'"),  # a cell over two lines
    ("c.csv", "chunk_id,doc_id,start,end\n\na#1,a,0,5\na#2,a,9,3\n", False, "c.csv, line 4:",
     "expected start at most end (character offsets, end exclusive), got 'a#2,a,9,3'"),
    ("c.csv", "chunk_id,doc_id,start,end\na#1,a,0,5\na#2,a,ten,20\n", False, "c.csv, line 3:",
     "expected a whole number of characters in start (0 or more), got 'a#2,a,ten,20'"),
    ("c.csv", "chunk_id,doc_id,start,end\na#1,a,0,5\na#2,a,-3,20\n", False, "c.csv, line 3:",
     "in start (0 or more), got 'a#2,a,-3,20'"),
    ("c.tsv", "chunk_id\tdoc_id\tstart\tend\na#1\ta\t0\t5.5\n", False, "c.tsv, line 2:",
     "expected a whole number of characters in end (0 or more), got 'a#1\\ta\\t0\\t5.5'"),
    ("c.csv", "chunk_id,doc_id,start,end\na#1,a,0,5\na#2,a,7,\n", False, "c.csv, line 3:",
     "expected both start and end, or neither, on each row, got 'a#2,a,7,'"),
    ("c.csv", "chunk_id,doc_id,start\na#1,a,0\n", False, "c.csv, line 1:",
     "expected both a start and an end column, or neither (the file has 'start' alone), got 'chunk_id,doc_id,start'"),
    ("c.csv", "chunk_id,doc_id\na#1,a\n,a\n", False, "c.csv, line 3:", "expected a chunk id in column 'chunk_id'"),
    ("c.csv", "chunk_id,doc_id\na#1,a\na#2\n", False, "c.csv, line 3:", "expected 2 fields on every line, as in the header"),
    ("c.csv", 'chunk_id,doc_id,text\na#1,a,"x\ny"\n\na#2,a,Hello, world\n', False, "c.csv, line 5:",
     "expected 3 fields on every line, as in the header (chunk_id and doc_id columns, optionally start, end and "
     "text), got 'a#2,a,Hello, world'"),
    ("c.csv", f"chunk_id,doc_id\na#1,a\na#2,{'d' * 2000}\n", False, "c.csv, line 3:",
     "expected a doc id of at most 1,024 characters"),
    ("c.jsonl", '{"chunk_id": "a#1", "doc_id": "a"}\n\n{"chunk_id": "a#2", "doc_id": "a", "start": "x", "end": 4}\n',
     False, "c.jsonl, line 3:", "expected a whole number of characters in start"),
    ("c.jsonl", '{"chunk_id": 3, "doc_id": "a"}\n{"chunk_id": 2.5, "doc_id": "a"}\n', False, "c.jsonl, line 2:",
     "expected an id that is text or a whole number up to 2**53 in column 'chunk_id', got '2.5'"),
    ("c.jsonl", '{"chunk_id": "a#1", "doc_id": "a"}\n{"chunk_id": 2.5, "doc_id": "a"}\n', False, "c.jsonl, line 2:",
     "expected 'chunk_id' as text or a whole number on every line, got '{\"chunk_id\": 2.5"),
    ("c.jsonl", '{"chunk_id": "a#1", "doc_id": "a"}\n[1, 2]\n', False, "c.jsonl, line 2:",
     "expected one JSON object per line"),
    ("c.jsonl", '{"chunk_id": "a#1", "doc_id": "a"}\n{"chunk_id": ' + "[" * 5000 + "\n", False, "c.jsonl, line 2:",
     "expected JSON nested at most 64 levels deep"),
    ("c.parquet", parquet_bytes({"chunk_id": ["a#1", "a#2"], "doc_id": ["a", "a"], "start": [0, 9], "end": [5, 3]}),
     False, "c.parquet, row 2:", "expected start at most end (character offsets, end exclusive), got "
     "'chunk_id=a#2, doc_id=a, start=9, end=3'"),
    ("c.csv", as_csv(ROWS + [("c#1", "c", 0, 1, "x")]), True, "c.csv, line 5:",
     "expected a doc_id the documents file documents has, got 'c#1,c,0,1,x'"),
    ("c.csv", as_csv(ROWS + [("b#2", "b", 3, 6, "ma!")]), True, "c.csv, line 5:",
     "expected an end within its document's text (5 characters), got 'b#2,b,3,6,ma!'"),
    ("c.trec", "q1 Q0 a#1 1 0.5 t\n", False, "c.trec:",
     "expected a chunk map in CSV, TSV, JSONL or Parquet with chunk_id and doc_id columns, got 'trec format'"),
    # hostile input, round three: offsets past any document (item 1), of Parquet's uint64 (item 2), bytes that are
    # not UTF-8 in a Parquet chunk id (item 11)
    ("c.csv", "chunk_id,doc_id,start,end\na#1,a,0,5\na#2,a,0,9000000000000000\n", False, "c.csv, line 3:",
     "expected an offset in end of at most 1,099,511,627,776 characters (2**40; no document evalcore reads is "
     "longer), got 'a#2,a,0,9000000000000000'"),
    ("c.jsonl", '{"chunk_id": "a#1", "doc_id": "a", "start_char": 0, "end_char": 18446744073709551615}\n', False,
     "c.jsonl, line 1:", "expected an offset in end_char of at most 1,099,511,627,776 characters"),
    ("c.parquet", parquet_bytes({"chunk_id": ["a#1", "a#2"], "doc_id": ["a", "a"],
                                 "start": pa.array([0, 0], pa.uint64()), "end": pa.array([5, 2**64 - 1], pa.uint64())}),
     False, "c.parquet, row 2:", "expected an offset in end of at most 1,099,511,627,776 characters (2**40; no "
     "document evalcore reads is longer), got 'chunk_id=a#2, doc_id=a, start=0, end=18446744073709551615'"),
    ("c.parquet", parquet_bytes({"chunk_id": ["a#1", "a#2"], "doc_id": ["a", "a"],
                                 "start": pa.array([0, -1], pa.int8()), "end": pa.array([5, 3], pa.int8())}),
     False, "c.parquet, row 2:", "expected a whole number of characters in start (0 or more)"),
    ("c.parquet", parquet_bytes({"chunk_id": pa.array([b"a#1", b"a#\xff\xfe"]), "doc_id": ["a", "a"]}), False,
     "c.parquet, row 2:", "expected UTF-8 text in column 'chunk_id', got 'a#\ufffd\ufffd'"),
    ("c.parquet", parquet_bytes({"chunk_id": ["a#1", "a#2"], "doc_id": pa.array([b"a", b"\xc3"]),
                                 "text": pa.array([b"ok", b"ok"])}), False,
     "c.parquet, row 2:", "expected UTF-8 text in column 'doc_id'"),
    ("c.parquet", parquet_bytes({"chunk_id": ["a#1", "a#2"], "doc_id": ["a", "a"],
                                 "text": pa.array([b"ok", b"bad \xff"])}), False,
     "c.parquet, row 2:", "expected UTF-8 text in column 'text', got 'bad \ufffd'"),
]


@pytest.mark.parametrize("name, content, documents, place, expected", BAD,
                         ids=[f"{i}-{bad[1][:30]}" for i, bad in enumerate(BAD)])
def test_every_bad_chunk_map_gets_one_line_naming_file_line_and_text(tmp_path, capfd, name, content, documents,
                                                                      place, expected) -> None:
    path = write(tmp_path, name, content)
    with pytest.raises(InputError) as info:
        read_chunks(path, documents=DOCS if documents else None)
    message = str(info.value)
    assert "\n" not in message
    assert message.startswith(f"{path}{place[len(name):]} ") and expected in message, message
    assert capfd.readouterr().err == ""


def test_chunk_map_from_python_names_the_row_and_its_values() -> None:
    with pytest.raises(InputError, match=r"row 2: expected start at most end .*got 'chunk_id b, doc_id x, start 9, "
                                         r"end 3'"):
        chunk_map(["a", "b"], ["x", "x"], start=[0, 9], end=[1, 3])
    with pytest.raises(InputError, match=r"row 1: expected both start and end, or neither"):
        chunk_map(["a"], ["x"], start=[4])
    with pytest.raises(InputError, match=r"row 2: expected a whole number of characters in end .*end 2.5"):
        chunk_map(["a", "b"], ["x", "x"], start=[0, 1], end=[1, 2.5])


def test_the_sample_chunk_maps_read_with_their_documents() -> None:
    docs = read_documents(SAMPLE / "docs.jsonl")
    for name, n in (("sent1", 2581), ("sent3", 1050), ("char400", 859)):
        chunks = read_chunks(SAMPLE / "chunking" / f"{name}.chunks.csv", documents=docs)
        assert chunks.n_chunks == n and chunks.name == f"{name}.chunks" and chunks.has_offsets
        frame = pd.read_csv(SAMPLE / "chunking" / f"{name}.chunks.csv", dtype=str, keep_default_na=False)
        assert chunks.fingerprint == chunk_map(frame["chunk_id"], frame["doc_id"], start=frame["start"],
                                               end=frame["end"], text=frame["text"]).fingerprint


def test_read_chunks_is_part_of_the_package_root() -> None:
    assert evalcore.read_chunks is read_chunks and evalcore.ChunkMap is not None


id_text = st.text(alphabet=st.sampled_from(list('ab9 ,"#\'é中-')), min_size=1, max_size=8).filter(str.strip)
chunk_rows = st.lists(st.tuples(id_text, id_text, st.one_of(st.none(), st.tuples(st.integers(0, 500),
                                                                                     st.integers(0, 500)).map(sorted)),
                                st.text(alphabet=st.sampled_from(list('xy ,"\n\t;é')), max_size=12)),
                      min_size=1, max_size=20, unique_by=lambda row: row[0])


@given(chunk_rows, st.sampled_from(["csv", "tsv", "jsonl"]))
@settings(max_examples=150, deadline=None)
def test_any_map_written_out_reads_back_as_written(rows, fmt) -> None:
    """Ids with commas, quotes and spaces, text over several lines, places given or not: written by Python's own
    csv and json modules (a TSV's text with a quote quoted as they quote it), read back exactly (the fast parsers
    agree with the plain writers)."""
    out = io.StringIO(newline="")
    if fmt == "jsonl":
        for c, d, place, text in rows:
            record = {"chunk_id": c, "doc_id": d, "text": text}
            if place is not None:
                record.update(start=place[0], end=place[1])
            out.write(json.dumps(record) + "\n")
    elif fmt == "tsv":  # ids as written; a text with a quote quoted as pandas writes it (no tab or line break)
        rows = [(c, d, place, text.replace("\t", " ").replace("\n", " ")) for c, d, place, text in rows]
        out.write("chunk_id\tdoc_id\tstart\tend\ttext\n")
        for c, d, place, text in rows:
            cell = '"' + text.replace('"', '""') + '"' if '"' in text else text
            out.write("\t".join([c, d, *map(str, place if place is not None else ("", "")), cell]) + "\n")
    else:
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(["chunk_id", "doc_id", "start", "end", "text"])
        for c, d, place, text in rows:
            writer.writerow([c, d, *(place if place is not None else ("", "")), text])
    chunks = read_chunks(out.getvalue().encode("utf-8"), format=fmt, name="m")
    assert chunks.chunk_ids.tolist() == [r[0] for r in rows]
    assert list(chunks.doc_ids[chunks.doc_of_chunk]) == [r[1] for r in rows]
    none = [-1] * len(rows)  # JSONL without a place on any line has no start and end at all
    assert (chunks.start.tolist() if chunks.start is not None else none) == [r[2][0] if r[2] else -1 for r in rows]
    assert (chunks.end.tolist() if chunks.end is not None else none) == [r[2][1] if r[2] else -1 for r in rows]
    assert chunks.text.to_pylist() == [r[3] for r in rows]
