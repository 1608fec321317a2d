"""A chunk map read keeping only the chunks the runs name (``read_chunks(keep=...)``, what the command line does):
the same numbers, the same fingerprint and counts as the whole file, and every row still checked, so a bad row the
runs never name is refused with the same line as when the map is read whole."""

from __future__ import annotations

import gzip
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import evalcore
from evalcore import InputError
from evalcore.readers import chunk_rows, parquet_files
from evalcore.readers.chunks import read_chunks
from evalcore.readers.documents import read_documents
from tests.readers.files import parquet_bytes, write
from tests.readers.test_chunk_maps import BAD, DOCS, ROWS, as_csv, as_jsonl, columns_of

ROOT = Path(__file__).resolve().parents[2]
CHUNKING = ROOT / "sample_data" / "chunking"
DICTIONARY_DOCS = {"chunk_id": [f"d{i // 4}#{i % 4}" for i in range(40)],
                   "doc_id": pa.array([f"d{i // 4}" for i in range(40)]).dictionary_encode(),
                   "start": [10 * (i % 4) for i in range(40)], "end": [10 * (i % 4) + 12 for i in range(40)]}


@pytest.mark.parametrize("name, content", [
    ("chunks.csv", as_csv(ROWS)),
    ("chunks.tsv", as_csv(ROWS, "chunk_id\tdoc_id\tstart\tend\ttext", "\t")),
    ("chunks.jsonl", as_jsonl(ROWS)),  # no batch reader: read whole, the same map
    ("chunks.parquet", parquet_bytes(columns_of(ROWS))),
    ("chunks.csv.gz", gzip.compress(as_csv(ROWS).encode(), mtime=0)),
    ("chunks", "\ufeff" + as_csv(ROWS).replace("\n", "\r\n")),  # no ending, a byte-order mark, CRLF
])
def test_a_kept_map_holds_the_named_chunks_and_reports_the_whole_file(tmp_path, name, content) -> None:
    path = write(tmp_path, name, content)
    whole = read_chunks(path)
    kept = read_chunks(path, keep=[["a#2", "not-in-the-map"]])
    if name != "chunks.jsonl":
        assert kept.chunk_ids.tolist() == ["a#2"] and kept.doc_ids.tolist() == ["a"]
        assert kept.start.tolist() == [4] and kept.end.tolist() == [12] and kept.text.to_pylist() == ["a beta."]
    assert (kept.chunks_in_file, kept.docs_in_file) == (whole.chunks_in_file, whole.docs_in_file) == (3, 2)
    assert kept.fingerprint == whole.fingerprint and kept.ref == whole.ref
    assert kept.source == whole.source and kept.name == whole.name
    assert [w.code for w in kept.warnings] == [w.code for w in whole.warnings]  # a repaired file says so either way


def test_chunks_placed_by_their_text_count_the_unplaced_among_those_the_runs_name(tmp_path) -> None:
    rows = [("a#1", "a", "", "", "Alpha"), ("a#2", "a", "", "", "not there"), ("b#1", "b", "", "", "nor this")]
    path = write(tmp_path, "chunks.csv", as_csv(rows))
    whole = read_chunks(path, documents=DOCS)
    kept = read_chunks(path, documents=DOCS, keep=[["a#1", "a#2"]])
    assert [w.count for w in whole.warnings] == [2] and [w.count for w in kept.warnings] == [1]
    assert "1 chunk the runs name is not found" in kept.warnings[0].message
    assert kept.start.tolist() == [0, -1] and kept.end.tolist() == [5, -1]


def test_a_parquet_map_in_many_batches_with_dictionary_doc_ids(tmp_path, monkeypatch) -> None:
    monkeypatch.setattr(parquet_files, "_STREAM_BATCH_ROWS", 3)  # 14 batches, a chunk's doc from a dictionary
    path = write(tmp_path, "chunks.parquet", parquet_bytes(DICTIONARY_DOCS, row_group_size=16))
    whole = read_chunks(path)
    kept = read_chunks(path, keep=[["d9#3", "d0#0", "d5#1"]])
    assert sorted(kept.chunk_ids.tolist()) == ["d0#0", "d5#1", "d9#3"] and kept.chunks_in_file == 40
    assert kept.docs_in_file == 10 and kept.fingerprint == whole.fingerprint
    rows = kept.rows_of(evalcore.readers.ids.IdArray(["d5#1", "d9#3", "nowhere"]))
    assert [kept.doc_ids[kept.doc_of_chunk[r]] for r in rows[:2]] == ["d5", "d9"] and rows[2] == -1
    assert kept.start[rows[0]] == 10 and kept.end[rows[1]] == 42


def test_a_chunk_listed_twice_in_rows_no_run_names_is_refused_across_batches(tmp_path, monkeypatch) -> None:
    monkeypatch.setattr(parquet_files, "_STREAM_BATCH_ROWS", 3)
    columns = {name: list(values) if not isinstance(values, pa.Array) else values.to_pylist()
               for name, values in DICTIONARY_DOCS.items()}
    for values in columns.values():
        values.append(values[1])  # row 41 repeats row 2, eleven batches later
    path = write(tmp_path, "chunks.parquet", parquet_bytes(columns))
    with pytest.raises(InputError) as whole:
        read_chunks(path)
    with pytest.raises(InputError) as kept:
        read_chunks(path, keep=[["d9#3"]])
    assert str(kept.value) == str(whole.value)
    assert "row 41: expected each chunk listed once" in str(kept.value) and "listed first at row 2" in str(kept.value)


@pytest.mark.parametrize("name, content, documents, place, expected", BAD,
                         ids=[f"{i}-{bad[1][:30]}" for i, bad in enumerate(BAD)])
def test_every_bad_map_is_refused_with_the_same_line_when_kept(tmp_path, name, content, documents, place,
                                                              expected) -> None:
    path = write(tmp_path, name, content)
    with pytest.raises(InputError) as whole:
        read_chunks(path, documents=DOCS if documents else None)
    with pytest.raises(InputError) as kept:
        read_chunks(path, documents=DOCS if documents else None, keep=[["a#1"], ["no-such-chunk"]])
    assert str(kept.value) == str(whole.value)


@pytest.mark.parametrize("run", ["sent1", "sent3", "char400"])
def test_the_sample_chunkings_score_the_same_kept_or_whole(run) -> None:
    labels = evalcore.read_labels(CHUNKING / "labels.tsv")
    ranked = evalcore.read_run(CHUNKING / f"{run}.trec")
    docs = read_documents(ROOT / "sample_data" / "docs.jsonl")
    whole = read_chunks(CHUNKING / f"{run}.chunks.csv", documents=docs)
    kept = read_chunks(CHUNKING / f"{run}.chunks.csv", documents=docs,
                       keep=[ranked.doc_ids, labels.judgments["doc_id"].unique()])
    assert kept.n_chunks <= whole.n_chunks and kept.chunks_in_file == whole.n_chunks
    assert kept.ref == whole.ref
    by_whole = evalcore.evaluate(ranked, labels, k=[1, 5, 20], chunks=whole)
    by_kept = evalcore.evaluate(ranked, labels, k=[1, 5, 20], chunks=kept)
    assert "evidence_recall@5" in {str(m) for m in by_kept.measures}
    pd.testing.assert_frame_equal(by_kept.per_query(), by_whole.per_query())


def test_two_documents_whose_ids_share_a_hash_stay_two_documents(tmp_path, monkeypatch) -> None:
    real = chunk_rows.hash_strings

    def colliding(values):  # "b" hashes as "a" does: only the strings tell them apart
        hashes = real(values)
        same = np.asarray(pa.compute.equal(values, "b").to_numpy(zero_copy_only=False), dtype=bool)
        hashes[same] = real(pa.array(["a"]))[0]
        return hashes

    monkeypatch.setattr(chunk_rows, "hash_strings", colliding)
    path = write(tmp_path, "chunks.csv", as_csv(ROWS))
    kept = read_chunks(path, keep=[["b#1", "a#2", "a#1"]])
    assert kept.chunk_ids.tolist() == ["a#1", "a#2", "b#1"]  # the file's order
    assert [kept.doc_ids[code] for code in kept.doc_of_chunk] == ["a", "a", "b"]


def test_a_parquet_map_is_read_in_place_never_copied_whole_into_memory(tmp_path, monkeypatch) -> None:
    path = write(tmp_path, "chunks.parquet", parquet_bytes(DICTIONARY_DOCS))

    def copied_whole(*_, **__):
        raise AssertionError("the Parquet file was read whole into memory")

    monkeypatch.setattr(evalcore.readers.sources, "read_limited", copied_whole)
    kept = read_chunks(path, keep=[["d9#3"]])
    assert kept.chunk_ids.tolist() == ["d9#3"] and kept.warnings == ()


@pytest.mark.parametrize("start, end", [(" 4", "12 "), ("4.0", "12"), ("", ""), ("0004", "12")])
def test_offsets_written_loosely_are_read_as_the_whole_read_reads_them(tmp_path, start, end) -> None:
    rows = [("a#1", "a", 0, 5, "Alpha"), ("a#2", "a", start, end, "a beta."), ("b#1", "b", 0, 3, "Gam")]
    path = write(tmp_path, "chunks.csv", as_csv(rows))
    whole, kept = read_chunks(path), read_chunks(path, keep=[["a#2"]])
    row = int(kept.rows_of(evalcore.readers.ids.IdArray(["a#2"]))[0])
    assert (kept.start[row], kept.end[row]) == (whole.start[1], whole.end[1]) == ((4, 12) if start else (-1, -1))
    assert kept.fingerprint == whole.fingerprint


@pytest.mark.parametrize("start", ["0x4", "99999999999999999999"])
def test_an_offset_that_is_not_a_plain_whole_number_is_refused_with_its_line_kept_or_whole(tmp_path, start) -> None:
    rows = [("a#1", "a", 0, 5, "Alpha"), ("a#2", "a", start, 12, "a beta."), ("b#1", "b", 0, 3, "Gam")]
    path = write(tmp_path, "chunks.csv", as_csv(rows))
    with pytest.raises(InputError) as whole:
        read_chunks(path)
    with pytest.raises(InputError) as kept:
        read_chunks(path, keep=[["a#2"]])
    assert str(kept.value) == str(whole.value) and "line 3" in str(whole.value) and start in str(whole.value)


def test_documents_a_parquet_dictionary_holds_but_no_row_names_are_not_counted(tmp_path) -> None:
    table = pa.table({"chunk_id": ["a#1", "a#2", "b#1"],
                      "doc_id": pd.Categorical(["a", "a", "b"], categories=["a", "b", "unused"])})
    path = tmp_path / "chunks.parquet"
    pq.write_table(table, path)
    whole, kept = read_chunks(path), read_chunks(path, keep=[["a#2"]])
    assert whole.docs_in_file == kept.docs_in_file == 2 and kept.fingerprint == whole.fingerprint


def test_a_map_kept_for_no_chunk_at_all_finds_none(tmp_path) -> None:
    kept = read_chunks(write(tmp_path, "chunks.csv", as_csv(ROWS)), keep=[[]])
    assert kept.n_chunks == 0 and kept.chunks_in_file == 3
    assert kept.candidate_rows(evalcore.readers.ids.IdArray(["a#1"])).tolist() == [-1]
