"""Hostile and broken input is refused with one clear message, in bounded memory, never a crash or a hang."""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
import zlib
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import evalcore
from evalcore import InputError
from evalcore.readers import trec
from evalcore.readers.ids import hash_strings
from evalcore.readers.sources import Source

ROOT = Path(__file__).resolve().parents[2]
LONG = "d" * 2000  # past the default id limit of 1,024 characters


def gzip_of_zeros(megabytes: int, member_mb: int = 64, byte: bytes = b"\x00") -> bytes:
    """A gzip file of ``megabytes`` MB of one byte (zero unless told), as repeated members (small, quick to build)."""
    packer = zlib.compressobj(9, zlib.DEFLATED, 31)
    member = packer.compress(byte * (member_mb << 20)) + packer.flush()
    return member * (megabytes // member_mb)


def parquet_bytes(columns: dict) -> bytes:
    sink = pa.BufferOutputStream()
    pq.write_table(pa.table(columns), sink)
    return sink.getvalue().to_pybytes()


def sidecar(meta: str):
    def build(tmp_path: Path) -> Path:
        (tmp_path / "base.meta.json").write_text(meta)
        (tmp_path / "base.trec").write_text("q1 Q0 a 1 0.5 t\n")
        return tmp_path / "base.trec"
    return build


def fifo(tmp_path: Path) -> Path:
    os.mkfifo(tmp_path / "run.trec")
    return tmp_path / "run.trec"


# (reader, file name or builder, content, where, text, expected): each must name the file, the place, the text.
HOSTILE = [
    # 1. decompression bombs and files past the size limit (EVALCORE_MAX_FILE_MB=8 below)
    ("run", "bomb.trec.gz", gzip_of_zeros(64, 16), "line 1", "\\x00\\x00",
     "expected lines of at most 12,288 bytes (set EVALCORE_MAX_ID_CHARS to allow longer ids)"),
    ("labels", "bomb.qrels", gzip_of_zeros(64, 16), "line 1", "(more than 12,288 bytes)", "lines of at most 12,288"),
    ("run", "lines.trec.gz", gzip.compress(b"q1 Q0 a 1 0.5 t\n" * (9 << 16), mtime=0), None, None,
     "a file that decompresses to at most 8 MB (set EVALCORE_MAX_FILE_MB"),
    ("labels", "long.csv.gz", gzip.compress(b"query,doc_id\nq1,a\n" + b"q2," + b"b" * (2 << 20), mtime=0), "line 3", "q2,bbbb",
     "expected lines of at most 1,048,576 bytes (set EVALCORE_MAX_LINE_MB to allow longer)"),
    ("run", "big.trec", b"q1 Q0 a 1 0.5 t\n" * (9 << 16), None, None, "a file of at most 8 MB"),
    ("run", "cut.trec.gz", gzip.compress(b"q1 Q0 a 1 0.5 t\n" * 1000, mtime=0)[:-20], None, None, "a complete gzip file"),
    ("run", "tail.trec.gz", gzip.compress(b"q1 Q0 a 1 0.5 t\n") + b"junk", None, None, "a complete gzip file"),
    # 2. Parquet: ids that are not text, floats that would merge
    ("run", "bin.parquet", parquet_bytes({"query": ["q1", "q1"], "doc_id": pa.array([b"a", b"\xff\xfe"]),
                                          "rank": [1, 2]}), "row 2", "\ufffd", "UTF-8 text in column 'doc_id'"),
    ("run", "float.parquet", parquet_bytes({"query": ["q1", "q1"], "doc_id": [1e20, 2e20], "rank": [1, 2]}),
     "row 1", "1e+20", "an id that is text or a whole number up to 2**53"),
    ("labels", "half.parquet", parquet_bytes({"query": [1.0, 1.5], "doc_id": ["a", "b"]}), "row 2", "1.5",
     "whole number up to 2**53 in column 'query'"),
    # 3. ids past the length limit
    ("run", "long.trec", f"q1 Q0 a 1 0.9 t\nq1 Q0 {LONG} 2 0.5 t\n", "line 2", "ddd... (2,000 characters)",
     "a doc id of at most 1,024 characters (set EVALCORE_MAX_ID_CHARS"),
    ("run", "longq.trec", f"q1 Q0 a 1 0.9 t\n{LONG} Q0 b 1 0.5 t\n", "line 2", "(2,000 characters)",
     "a query id of at most 1,024"),
    ("run", "long.trec", f"q1\tQ0\ta 1 0.9 t\nq1 Q0 {LONG} 2 0.5 t extra\n", "line 2", "(2,000 characters)",
     "a doc id of at most"),
    ("run", "huge.trec", "q1 Q0 a 1 0.9 t\nq1 Q0 " + "x" * 5_000_000 + " 2 0.5 t\n", "line 2", "xxxxxxxx... (5,000,",
     "(set EVALCORE_MAX_ID_CHARS"),  # the id limit or the line limit, whichever the parser meets first
    ("labels", "long.qrels", f"q1 0 a 1\n\n# note\nq1 0 {LONG} 1\n", "line 4", "(2,000 characters)",
     "a doc id of at most"),
    ("run", "long.csv", f"query,doc_id,rank\nq1,a,1\nq1,{LONG},2\n", "line 3", "(2,000 characters)",
     "a doc id of at most"),
    ("labels", "long.parquet", parquet_bytes({"query": ["q1", "q2"], "doc_id": ["a", LONG]}), "row 2",
     "(2,000 characters)", "a doc id of at most"),
    ("run", "long.json", json.dumps({"q1": ["a", LONG]}), None, "(2,000 characters)", "a doc id of at most"),
    ("labels", "long.jsonl", json.dumps({"query": LONG, "relevant": ["a"]}), None, "(2,000 characters)",
     "a query id of at most"),
    # 4. crashes: sidecar numbers and nesting, devices and pipes
    ("run", sidecar('{"dims": 1e300}'), None, None, "1e+300", "a whole number below 2**53 for 'dims'"),
    ("run", sidecar('{"index_bytes": 9007199254740992}'), None, None, None, "below 2**53 for 'index_bytes'"),
    ("run", sidecar("[" * 100_000 + "]" * 100_000), None, None, None, "valid JSON run metadata (nested too deeply)"),
    ("run", lambda tmp_path: Path("/dev/zero"), None, None, None, "a regular file"),
    ("run", fifo, None, None, None, "a regular file"),
    # 5. accepted when it should not be
    ("run", "empty.trec", "", None, None, "a run with at least one ranked doc"),
    ("run", "blank.trec", "  \n\n \t\n", None, None, "a run with at least one ranked doc"),
    ("run", "empty.json", "{}", None, None, "a run with at least one ranked doc"),
    ("run", "zero.csv", "query,doc_id,rank\nq1,a,1\nq1,b,0\n", "line 3", "q1,b,0",
     "a rank that is a positive whole number in column 'rank'"),
    ("run", "neg.tsv", "query\tdoc_id\trank\nq1\ta\t-1\n", "line 2", r"q1\ta\t-1", "a rank that is a positive"),
    ("run", "half.csv", "query,doc_id,position\nq1,a,1.5\n", "line 2", "q1,a,1.5", "a position that is a whole number"),
    ("run", "zero.csv", "query,doc_id,rank\nq1,a,0\n", "line 2", "q1,a,0", "a rank that is a positive"),
    ("run", "zero.parquet", parquet_bytes({"query": ["q1", "q1"], "doc_id": ["a", "b"], "rank": [1, 0]}), "row 2",
     "rank=0", "a rank that is a positive whole number"),
    # 6. bytes that are not text
    ("run", "bad.trec", b"q1 Q0 a 1 0.5 t\nq1 Q0 \xff\xfe 2 0.4 t\n", "line 2", None, "UTF-8 text"),
    ("run", "noise.trec", np.random.default_rng(0).bytes(3000), "line 1", None, "UTF-8 text"),
]


@pytest.mark.parametrize("kind, name, content, where, text, expected", HOSTILE,
                         ids=[f"{i}-{h[1] if isinstance(h[1], str) else h[1].__name__}" for i, h in enumerate(HOSTILE)])
def test_hostile_input_gets_one_clear_message(tmp_path, monkeypatch, capfd, kind, name, content, where, text,
                                              expected) -> None:
    monkeypatch.setenv("EVALCORE_MAX_FILE_MB", "8")
    monkeypatch.setenv("EVALCORE_MAX_LINE_MB", "1")
    if callable(name):
        path = name(tmp_path)
    else:
        path = tmp_path / name
        path.write_bytes(content if isinstance(content, bytes) else content.encode("utf-8"))
    reader = evalcore.read_labels if kind == "labels" else evalcore.read_run
    with pytest.raises(InputError) as info:
        reader(path)
    message = str(info.value)
    assert "\n" not in message
    assert path.name in message or "meta.json" in message
    assert expected in message
    if where:
        assert f", {where}:" in message
    if text:
        assert text in message
    assert capfd.readouterr().err == ""  # nothing printed before the message (pyarrow's ignored exceptions)


def test_a_line_too_long_for_the_parser_is_refused_before_it_is_read_whole() -> None:
    data = b"q1 Q0 a 1 0.9 t\n" * 100_000 + b"q1 Q0 " + b"x" * 20_000 + b" 2 0.5 t\nq1 Q0 b 3 0.1 t"
    with pytest.raises(InputError, match=r"r.trec, line 100001: expected a run line of at most 12,288 bytes.*"
                                         r"\(20,014 bytes\)"):
        trec._refuse_long_line(Source("r.trec", data))
    trec._refuse_long_line(Source("r.trec", data.replace(b"x" * 20_000, b"x")))  # no long line: nothing to say


def test_gzip_reads_as_gzip_decompress_did(tmp_path) -> None:
    """Several members, zero padding after them, and a file read from bytes or from disk all read the same."""
    one = b"q1 Q0 a 1 0.9 t\n"
    two = b"q1 Q0 b 2 0.5 t\n"
    data = gzip.compress(one) + gzip.compress(two) + bytes(100)
    (tmp_path / "run.trec.gz").write_bytes(data)
    assert evalcore.read_run(tmp_path / "run.trec.gz").ranking("q1") == ["a", "b"]
    assert evalcore.read_run(data, format="trec").ranking("q1") == ["a", "b"]
    assert evalcore.read_labels(gzip.compress(b"q1 0 a 1\n") * 3).judgments.shape[0] == 1


def test_the_limits_are_settings(tmp_path, monkeypatch) -> None:
    path = tmp_path / "run.trec"
    path.write_text(f"q1 Q0 {LONG} 1 0.5 t\n")
    monkeypatch.setenv("EVALCORE_MAX_ID_CHARS", "5000")
    assert evalcore.read_run(path).ranking("q1") == [LONG]
    monkeypatch.setenv("EVALCORE_MAX_FILE_MB", "0.001")
    with pytest.raises(InputError, match=r"a file of at most 0 MB"):
        evalcore.read_run(path)
    monkeypatch.setenv("EVALCORE_MAX_FILE_MB", "lots")
    with pytest.raises(evalcore.UsageError, match="EVALCORE_MAX_FILE_MB"):
        evalcore.read_run(path)


def test_integral_float_ids_keep_their_digits_and_unused_parquet_columns_are_not_read(tmp_path) -> None:
    frame = pd.DataFrame({"query": ["q1", "q1"], "doc_id": [7.0, float(2**53)], "rank": [1, 2],
                          "chunk_text": ["x", "y"]})
    frame.to_parquet(tmp_path / "run.parquet")
    run = evalcore.read_run(tmp_path / "run.parquet")
    assert run.ranking("q1") == ["7", str(2**53)]
    with pytest.raises(InputError, match=r"expected a rank or score column, got 'query,doc_id,chunk_text'"):
        evalcore.read_run(parquet_bytes({"query": ["q"], "doc_id": ["a"], "chunk_text": ["x"]}), format="parquet")


def reference_hash(value: str) -> int:
    """`hash_strings` for one id, in plain Python from its documented definition."""
    data = value.encode("utf-8")
    mask = (1 << 64) - 1
    h = (len(data) * 0x9E3779B97F4A7C15) & mask
    for at in range(0, len(data), 8):
        h = ((h ^ int.from_bytes(data[at:at + 8], "little")) * 0xBF58476D1CE4E5B9) & mask
        h ^= h >> 31
    h ^= h >> 30
    h = (h * 0xBF58476D1CE4E5B9) & mask
    h ^= h >> 27
    h = (h * 0x94D049BB133111EB) & mask
    return h ^ (h >> 31)


def test_hashes_of_mixed_lengths_match_the_reference_and_a_long_id_costs_its_own_length() -> None:
    values = ["", "a", "doc1234", "doc12345", "doc123456", "é" * 9] + [f"d{i}" * (i % 9) for i in range(60)]
    values += ["x" * 300_001, "y" * 4097]
    hashes = hash_strings(pa.array(values, pa.string()))
    assert hashes.tolist() == [reference_hash(v) for v in values]
    many = pa.array([f"doc{i}" for i in range(200_000)] + ["z" * 2_000_000], pa.string())
    hashes = hash_strings(many)  # before: 250,000 steps over all 200,001 rows (minutes); now a fraction of a second
    assert int(hashes[-1]) == reference_hash("z" * 2_000_000)


CHILD = """
import resource, sys
resource.setrlimit(resource.RLIMIT_AS, (1536 << 20, 1536 << 20))
import evalcore
try:
    getattr(evalcore, sys.argv[1])(sys.argv[2])
except evalcore.InputError as exc:
    print(exc)
    sys.exit(2)
except MemoryError:
    sys.exit(3)
"""


def unused_text_column(tmp_path: Path) -> Path:
    """1,500 rows of one 1 MB text, dictionary-encoded: a small file that is 1.5 GB once read."""
    text = pa.DictionaryArray.from_arrays(pa.array(np.zeros(1500, dtype=np.int32)), pa.array(["t" * (1 << 20)]))
    ids = [f"d{i}" for i in range(1500)]
    table = pa.table({"query": ["q1"] * 1500, "doc_id": ids, "rank": np.arange(1, 1501), "chunk_text": text})
    pq.write_table(table, tmp_path / "run.parquet")
    return tmp_path / "run.parquet"


def gzip_bomb(tmp_path: Path) -> Path:
    (tmp_path / "run.trec.gz").write_bytes(gzip_of_zeros(3072))
    return tmp_path / "run.trec.gz"


def gzip_of_newlines(tmp_path: Path) -> Path:
    (tmp_path / "run.trec.gz").write_bytes(gzip_of_zeros(3072, byte=b"\n"))
    return tmp_path / "run.trec.gz"


def long_id_run(tmp_path: Path) -> Path:
    (tmp_path / "run.trec").write_text("q1 Q0 a 1 0.9 t\n" * 1000 + f"q1 Q0 {'x' * 3_000_000} 2 0.5 t\n")
    return tmp_path / "run.trec"


@pytest.mark.parametrize("build, reader, expected", [
    (gzip_bomb, "read_run", "line 1: expected lines of at most 12,288 bytes"),
    (gzip_bomb, "read_labels", "line 1: expected lines of at most 12,288 bytes"),
    (gzip_of_newlines, "read_run", "a file that decompresses to at most 256 MB"),
    (unused_text_column, "read_run", None),
    (long_id_run, "read_run", "line 1001: expected a doc id of at most 1,024 characters"),
])
def test_bombs_are_refused_in_bounded_memory(tmp_path, build, reader, expected) -> None:
    path = build(tmp_path)
    env = dict(os.environ, PYTHONPATH=str(ROOT), EVALCORE_MAX_FILE_MB="256", OPENBLAS_NUM_THREADS="1")
    done = subprocess.run([sys.executable, "-c", CHILD, reader, str(path)], capture_output=True, text=True,
                          env=env, timeout=120)
    assert done.stderr == ""
    if expected is None:  # read: the unused 1.5 GB column was never decompressed
        assert done.returncode == 0
    else:
        assert done.returncode == 2 and expected in done.stdout
