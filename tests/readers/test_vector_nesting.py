"""A vectors JSONL nested thousands of levels deep is refused with one line naming the file and line (issue 24,
item 1): Arrow's JSON reader crashed the whole process (a segmentation fault) on 20 KB nested 10,000 deep, so the
nesting is measured first (`evalcore.readers.nesting`), and that scan is checked against a byte-by-byte reference."""

from __future__ import annotations

import random
import subprocess
import sys
from pathlib import Path

import pytest

from evalcore.errors import VectorFileError
from evalcore.readers.nesting import MAX_NESTING, deepest_line
from evalcore.readers.vectors import read_vectors

ROOT = Path(__file__).resolve().parents[2]
S = ROOT / "sample_data"


def reference(data: bytes, limit: int) -> tuple[int, int, int] | None:
    """Byte by byte: a newline ends a line (and any string in it), an odd run of backslashes escapes the byte after
    it, a quote not escaped opens or closes a string, brackets and braces outside strings nest."""
    line, depth, in_string, escape = 1, 0, False, False
    for offset, byte in enumerate(data):
        char = chr(byte)
        was_escape, escape = escape, False
        if char == "\n":
            line, depth, in_string = line + 1, 0, False
        elif char == "\\":
            escape = not was_escape
        elif char == '"':
            if not was_escape:
                in_string = not in_string
        elif not in_string and char in "[{":
            depth += 1
            if depth > limit:
                return line, depth, offset
        elif not in_string and char in "]}":
            depth -= 1
    return None


def test_the_nesting_scan_agrees_with_the_byte_by_byte_reference_across_block_edges() -> None:
    rng = random.Random(24)
    for _ in range(3000):
        data = bytes(rng.choice(b'[[{{]]}}""\\\\\nab ') for _ in range(rng.randint(0, 90)))
        limit, block = rng.randint(0, 4), rng.randint(1, 12)
        assert deepest_line(data, limit, block) == reference(data, limit), (data, limit, block)


def test_brackets_inside_strings_and_escaped_quotes_do_not_count() -> None:
    ids = '"' + "[" * 300 + '\\"' + "{" * 300 + '"'  # an id of brackets, with an escaped quote inside
    line = '{"id": ' + ids + ', "vector": [1, 2]}\n'
    assert deepest_line(line.encode()) is None
    vectors = read_vectors(line.encode(), name="odd-ids.jsonl")
    assert vectors.ids[0].startswith("[[[") and vectors.dims == 2


def deep(levels: int) -> bytes:
    return b'{"id": "q001", "vector": [0.5, 1]}\n\n' + b'{"id": "q002", "vector": ' + b"[" * levels + b"]" * levels + b"}\n"


CHILD = """
import sys
from pathlib import Path
from evalcore.errors import VectorFileError
from evalcore.readers.vectors import read_vectors
try:
    read_vectors(Path(sys.argv[1]).read_bytes(), name="upload.jsonl")  # as the dashboard reads an upload
except VectorFileError as exc:
    print(exc)
"""


@pytest.mark.parametrize("levels", [10_000, 100_000])
def test_a_deeply_nested_vectors_file_is_one_line_and_exit_2_never_a_crash(tmp_path, levels) -> None:
    path = tmp_path / "queries.jsonl"
    path.write_bytes(deep(levels))
    done = subprocess.run([sys.executable, "-m", "evalcore.cli", "vectors", "--labels", str(S / "labels.tsv"),
                           "--query-vectors", str(path), "--doc-vectors", str(S / "vectors" / "base.docs.npy")],
                          capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert done.returncode == 2, (done.returncode, done.stderr[-500:])  # a crash is -11 (SIGSEGV)
    assert done.stderr.strip() == (f"evalcore: error: {path}, line 3: expected JSON nested at most {MAX_NESTING} "
                                   "levels deep (a vector line has 2: an object holding a list of numbers), got "
                                   "'{\"id\": \"q002\", \"vector\": " + "[" * 35 + "...'")
    uploaded = subprocess.run([sys.executable, "-c", CHILD, str(path)], capture_output=True, text=True, timeout=300,
                              cwd=ROOT)
    assert uploaded.returncode == 0 and uploaded.stdout.startswith("upload.jsonl, line 3: expected JSON nested"), \
        (uploaded.returncode, uploaded.stderr[-500:])


def test_nesting_just_within_the_limit_reaches_the_reader_and_gets_its_own_message() -> None:
    within = b'{"id": "q1", "vector": ' + b"[" * (MAX_NESTING - 1) + b"]" * (MAX_NESTING - 1) + b"}\n"
    assert deepest_line(within) is None
    with pytest.raises(VectorFileError, match="line 1"):  # a list of lists is not a vector: the reader says so
        read_vectors(within, name="q.jsonl")
