"""Bad chunk maps given to the command line again and again: every run must end in the one line and exit 2, never
in an abort ("terminate called without an active exception", exit 134) as the reading thread is torn down.

The aborts came now and then (3 of 141 runs), so one run proves nothing: `test_chunk_rows_threads.py` runs the
command 50 times in one process (then checks that process's own exit), and this script runs it in a fresh process
each time, as a user would::

    .venv/bin/python -m tests.readers.bad_map_exits --runs 200 [--out /tmp/bad-maps]

It prints each exit status seen and how often, and exits 1 when any run did not exit 2 with one line.
"""

from __future__ import annotations

import argparse
import collections
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
ROWS = 60_000
"""Rows of each map: several of the batch reader's blocks, so the reading thread is busy when the error comes."""


def _rows(n: int) -> list[str]:
    return [f"d{i // 10}#{i % 10},d{i // 10},{(i % 10) * 30},{(i % 10) * 30 + 40},some text {i}\n" for i in range(n)]


def bad_maps(folder: Path) -> dict[str, Path]:
    """The bad maps of the issue, and the labels and run they are scored with: a negative start early on, a chunk
    listed twice with two documents, a start past its end on the last line."""
    folder.mkdir(parents=True, exist_ok=True)
    header = "chunk_id,doc_id,start,end,text\n"
    rows = _rows(ROWS)
    negative = rows[:]
    negative[50] = "d5#0,d5,-3,40,some text\n"
    twice = rows + ["d0#1,d99999,0,40,again\n"]
    backwards = rows + ["last#1,d0,90,40,last\n"]
    maps = {"negative": negative, "twice": twice, "backwards": backwards}
    out = {}
    for name, lines in maps.items():
        out[name] = folder / f"{name}.csv"
        out[name].write_text(header + "".join(lines), encoding="utf-8")
    (folder / "labels.tsv").write_text("query\tdoc_id\nq1\td0\nq2\td1\n", encoding="utf-8")
    (folder / "run.trec").write_text("q1 Q0 d0#1 1 0.5 t\nq2 Q0 d1#0 1 0.5 t\n", encoding="utf-8")
    return out


def command(folder: Path, chunk_map: Path) -> list[str]:
    """The command line's arguments that score the run with ``chunk_map``."""
    return ["evaluate", "--labels", str(folder / "labels.tsv"), "--run", str(folder / "run.trec"),
            "--chunks", str(chunk_map)]


def run_once(folder: Path, chunk_map: Path) -> tuple[int, str]:
    """One ``evalcore evaluate`` in its own process: its exit status and stderr."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    done = subprocess.run([sys.executable, "-m", "evalcore.cli", *command(folder, chunk_map)], capture_output=True,
                          text=True, env=env, timeout=300)
    return done.returncode, done.stderr


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=200, help="processes in all, the maps taken in turn")
    parser.add_argument("--out", type=Path, default=None, help="where the maps are written (default: a temp dir)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as temp:
        folder = args.out or Path(temp)
        maps = list(bad_maps(folder).values())
        seen: collections.Counter = collections.Counter()
        wrong = 0
        for i in range(args.runs):
            code, err = run_once(folder, maps[i % len(maps)])
            lines = err.strip().splitlines()
            seen[code] += 1
            if code != 2 or len(lines) != 1 or "internal error" in err:
                wrong += 1
                print(f"run {i + 1} ({maps[i % len(maps)].name}): exit {code}: {err.strip()!r}", flush=True)
        print(f"{args.runs} runs: " + ", ".join(f"exit {code} x{n}" for code, n in sorted(seen.items())) +
              f"; {wrong} not the one line with exit 2")
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
