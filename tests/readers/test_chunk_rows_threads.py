"""The chunk map's reading thread and the file's reader are stopped on every way out of a batch read (issue "Hostile
input, round three", item 3): a bad map once left the reader suspended in a generator held by a reference cycle,
to be torn down as the interpreter exited, and now and then the process aborted after the right message
("terminate called without an active exception", exit 134)."""

from __future__ import annotations

import gc
import os
import subprocess
import sys
import threading
import types
from pathlib import Path

import pyarrow as pa
import pytest

from evalcore import InputError
from evalcore.readers import arrow_tables, parquet_files
from evalcore.readers.chunks import read_chunks
from tests.readers.bad_map_exits import bad_maps, command
from tests.readers.files import parquet_bytes, write

ROOT = Path(__file__).resolve().parents[2]


def suspended_batch_readers() -> list[types.GeneratorType]:
    """Batch generators (`delimited_batches`, `parquet_batches`) begun and not finished: each holds an open reader
    (no garbage collection first: a reader left to it is the fault)."""
    return [g for g in gc.get_objects() if isinstance(g, types.GeneratorType) and g.gi_code.co_name == "batches"
            and g.gi_frame is not None and g.gi_frame.f_lasti >= 0]


def reading_threads() -> list[str]:
    return [t.name for t in threading.enumerate() if t.name.startswith("evalcore-chunk-map")]


class ClosedReaders:
    """`pyarrow.csv.open_csv` watched: every reader opened, and which were closed."""

    def __init__(self, real) -> None:
        self.real, self.opened, self.closed = real, 0, 0

    def __call__(self, *args, **kwargs):
        reader = self.real(*args, **kwargs)
        self.opened += 1
        watcher = self

        class Watched:
            def __iter__(self):
                return iter(reader)

            def close(self) -> None:
                watcher.closed += 1
                reader.close()

        return Watched()


def test_every_bad_csv_map_leaves_no_thread_and_no_open_reader(tmp_path, monkeypatch) -> None:
    watched = ClosedReaders(arrow_tables.pacsv.open_csv)
    monkeypatch.setattr(arrow_tables.pacsv, "open_csv", watched)
    for name, path in bad_maps(tmp_path).items():
        with pytest.raises(InputError) as info:
            read_chunks(path, keep=[["d0#1"], ["d1#0"]])
        assert str(path) in str(info.value), name
        assert reading_threads() == [] and suspended_batch_readers() == [], name
    assert watched.opened >= 3 and watched.closed == watched.opened  # the twice map is read twice: both closed


def test_a_bad_parquet_map_leaves_no_thread_and_no_open_reader(tmp_path, monkeypatch) -> None:
    monkeypatch.setattr(parquet_files, "_STREAM_BATCH_ROWS", 4)
    rows = 40
    starts = list(range(rows))
    starts[5] = -1  # in the second batch of ten: the reading thread has the next one in hand
    path = write(tmp_path, "chunks.parquet", parquet_bytes({
        "chunk_id": [f"c{i}" for i in range(rows)], "doc_id": pa.array([f"d{i // 4}" for i in range(rows)]),
        "start": pa.array(starts, pa.int64()), "end": pa.array([s + 50 for s in range(rows)], pa.int64())}))
    with pytest.raises(InputError, match=r"chunks.parquet, row 6: expected a whole number of characters in start"):
        read_chunks(path, keep=[["c1"]])
    assert reading_threads() == [] and suspended_batch_readers() == []


CHILD = """
import sys
from pathlib import Path
from tests.cli_runner import run_cli
from tests.readers.bad_map_exits import bad_maps, command
folder = Path(sys.argv[1])
maps = list(bad_maps(folder).values())
for i in range(int(sys.argv[2])):
    done = run_cli(*command(folder, maps[i % len(maps)]))
    lines = done.stderr.strip().splitlines()
    if done.returncode != 2 or len(lines) != 1 or "internal error" in done.stderr:
        print(f"run {i + 1}: exit {done.returncode}: {done.stderr!r}")
        sys.exit(1)
print("all refused")
"""


def test_fifty_bad_maps_in_one_process_each_exit_2_and_the_process_exits_cleanly(tmp_path) -> None:
    """50 refusals through the command line in one process, then that process's own exit: every reader made along
    the way must be gone by then (the aborts came at the exit). `tests/readers/bad_map_exits.py` runs 200 such
    commands, each in a process of its own."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    done = subprocess.run([sys.executable, "-c", CHILD, str(tmp_path), "50"], capture_output=True, text=True,
                          env=env, cwd=ROOT, timeout=600)
    assert done.returncode == 0, (done.returncode, done.stdout[-2000:], done.stderr[-2000:])
    assert done.stdout.strip() == "all refused" and "terminate" not in done.stderr and done.stderr == ""


def test_the_command_line_refuses_each_bad_map_with_one_line(tmp_path) -> None:
    from tests.cli_runner import run_cli

    for name, path in bad_maps(tmp_path).items():
        done = run_cli(*command(tmp_path, path))
        assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1, (name, done.stderr)
        assert done.stderr.startswith(f"evalcore: error: {path}, line "), done.stderr
