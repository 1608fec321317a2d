"""Bad logs end in one plain line or a correct result, never a traceback or a memory blow-up: ten million
identical queries, a line nested 100,000 deep, a query of 10 MB, two formats mixed in one file. Run as a user
would, in a new process, its peak memory measured."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
GB_KB = 1 << 20


MEASURED = """
import os, subprocess, sys
child = subprocess.Popen(sys.argv[2:])
_, status, usage = os.wait4(child.pid, 0)
with open(sys.argv[1], "w") as out:
    out.write(str(usage.ru_maxrss))
sys.exit(os.waitstatus_to_exitcode(status))
"""
"""Runs a command and writes its peak resident memory (kB). A small process of its own starts it: a child's peak
counts the memory of the process it was started from, so started straight from a test worker of 1.5 GB it would
read 1.5 GB whatever it used."""


def sample(*args: object) -> subprocess.CompletedProcess:
    """``evalcore sample`` in a new process, with ``peak_kb``: that process's own peak resident memory."""
    with tempfile.TemporaryDirectory() as folder:
        peak = os.path.join(folder, "peak")
        done = subprocess.run([sys.executable, "-c", MEASURED, peak, sys.executable, "-m", "evalcore.cli", "sample",
                               *map(str, args)], capture_output=True, text=True, cwd=ROOT, timeout=600)
        with open(peak) as measured:
            done.peak_kb = int(measured.read())
    return done


def one_line_error(done: subprocess.CompletedProcess, *needles: str) -> None:
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("evalcore: error: "), done.stderr
    assert "Traceback" not in done.stderr
    for needle in needles:
        assert needle in lines[0], lines[0]


def test_ten_million_identical_queries_stay_fast_and_bounded(tmp_path) -> None:
    log = tmp_path / "same.csv"
    with open(log, "wb") as out:
        out.write(b"query\n" + b"Reset my password\n" * 10_000_000)
    done = sample("--log", log, "--format", "json")
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout)
    assert (found["queries"], found["distinct"], found["clusters"]) == (10_000_000, 1, 1)
    assert [r["query"] for r in found["sample"]] == ["reset my password"]
    assert found["sample"][0]["count"] == 10_000_000
    assert done.peak_kb < GB_KB  # about 6 s and 409 MB on a 2-core machine (benchmarks/bench_sample.py measures)


def test_a_line_nested_100000_deep_is_named(tmp_path) -> None:
    log = tmp_path / "deep.jsonl"
    log.write_text('{"user_query": "a"}\n{"user_query": "b"}\n' + '{"a":' * 100_000 + "1" + "}" * 100_000 + "\n",
                   encoding="utf-8")
    deep = sample("--log", log)
    one_line_error(deep, "deep.jsonl, line 3: expected")
    nested = tmp_path / "deep_query.jsonl"
    nested.write_text('{"user_query": "a"}\n{"user_query": ' + "[" * 100_000 + "]" * 100_000 + "}\n",
                      encoding="utf-8")
    deeper = sample("--log", nested)
    one_line_error(deeper, "deep_query.jsonl, line 2: expected")
    assert max(deep.peak_kb, deeper.peak_kb) < GB_KB


@pytest.mark.parametrize("layout", ["csv", "jsonl"])
def test_a_query_of_10_mb_is_counted_and_left_out(tmp_path, layout: str) -> None:
    huge = "x" * 10_000_000
    log = tmp_path / f"huge.{layout}"
    if layout == "csv":
        log.write_text(f"query\nrefund policy\n{huge}\nrefund policy\n", encoding="utf-8")
    else:
        log.write_text("\n".join(json.dumps({"query": q}) for q in ("refund policy", huge, "refund policy")) + "\n",
                       encoding="utf-8")
    done = sample("--log", log, "--format", "json")
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout)
    assert found["queries"] == 2 and found["read"]["too_long"] == 1
    assert "query_too_long" in [w["code"] for w in found["warnings"]]
    assert len(done.stdout) < 10_000


@pytest.mark.parametrize(("lines", "needle"), [
    ('{"user_query": "a"}\n{"user_query": "b"}\nquery,session\nfoo,s1\n', "mixed.log, line 3: expected OpenSearch UBI"),
    ('{"user_query": "a"}\n\n{"attributes.input.value": "x", "span_kind": "RETRIEVER"}\n',
     "mixed.log, line 3: expected a line of OpenSearch UBI queries"),
    ('query,session\nfoo,s1\n{"user_query": "a", "b": 1}\n', "mixed.log, line 3: expected a plain table of queries"),
    ('{"query": "a"}\n{"action_name": "click", "query_id": "1"}\n', "mixed.log, line 2: expected a line of a plain"),
    ('ubi_queries\t{"user_query": "a"}\n{"user_query": "b"}\n', "mixed.log, line 2: expected a JSON object after"),
])
def test_two_formats_mixed_in_one_file_stop_at_the_first_line_of_the_other(tmp_path, lines: str,
                                                                          needle: str) -> None:
    log = tmp_path / "mixed.log"
    log.write_text(lines, encoding="utf-8")
    one_line_error(sample("--log", log), needle)


def test_a_file_that_is_no_log_says_what_a_log_is(tmp_path) -> None:
    event = '{"action_name": "click", "query_id": "1"}\n'
    for name, content in (("empty.csv", ""), ("other.csv", "a,b\n1,2\n"), ("events.jsonl", event)):
        log = tmp_path / name
        log.write_text(content, encoding="utf-8")
        one_line_error(sample("--log", log), name)
    one_line_error(sample("--log", tmp_path), "a file, not a directory")
    one_line_error(sample("--log", "/dev/zero"), "a regular file")
