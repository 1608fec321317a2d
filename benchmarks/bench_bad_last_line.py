"""Peak memory of `evalcore evaluate` refusing a large chunk map whose last line is bad (a start past its end).

Not a test: prints numbers for people to read. Usage::

    .venv/bin/python benchmarks/bench_bad_last_line.py                       # 5 M rows CSV, 3 M JSONL, 1.9 M Parquet
    .venv/bin/python benchmarks/bench_bad_last_line.py --csv-rows 10000000 --formats csv
    .venv/bin/python benchmarks/bench_bad_last_line.py --csv-rows 200000 --jsonl-rows 100000 --parquet-rows 100000

Each map is generated once per size into ``--out`` (chunk ``doc0012345#7`` is the 8th window of its document, 10 a
document, with a short text; the Parquet map's ``doc_id`` and ``text`` are dictionary pages, its text 1,000
characters a row, so the file is small and the column decodes to about 1 GB per million rows). The command line
scores a run of two chunks against two labels with each map, in its own process: **peak MB** is that process's
high-water mark of resident memory (``VmHWM`` in ``/proc/self/status``) above what it held once evalcore was imported
(the mark is reset there through ``/proc/self/clear_refs``; no address-space cap is set), **s** the command's time.
The message it printed and its exit status are shown beside them.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv
import pyarrow.parquet as pq

ROOT = Path(__file__).resolve().parents[1]
CHILD = """
import contextlib, io, json, sys, time
def status(key):
    for line in open('/proc/self/status'):
        if line.startswith(key):
            return int(line.split()[1]) // 1024
from evalcore.cli import main
import evalcore.readers.chunks, evalcore.metrics.evaluation  # what the command imports anyway
idle = status('VmRSS')
try:
    with open('/proc/self/clear_refs', 'w') as marks:
        marks.write('5')  # the high-water mark starts again from here
    reset = True
except OSError:
    reset = False
err = io.StringIO()
start = time.perf_counter()
with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
    code = main(sys.argv[1:])
seconds = time.perf_counter() - start
print(json.dumps({"code": code, "seconds": seconds, "peak_mb": status('VmHWM') - idle, "idle_mb": idle,
                  "reset": reset, "message": err.getvalue().strip()}))
"""


def _table(n: int, text_chars: int | None = None) -> pa.Table:
    """``n`` chunks, 10 a document, windows of 400 characters stepping 300; the last row's start past its end."""
    index = np.arange(n)
    doc = pa.array(np.char.add("doc", np.char.zfill((index // 10).astype(str), 7)))
    chunk = pc.binary_join_element_wise(doc, pa.array((index % 10).astype(str)), "#")
    start = (index % 10) * 300
    end = start + 400
    start[-1], end[-1] = 900, 400  # the bad last line
    if text_chars is None:
        text = pc.binary_join_element_wise(pa.array(np.full(n, "text of chunk")), pa.array(index.astype(str)), " ")
    else:  # a dictionary of 1,000 long texts: small on disk, large decoded
        values = pa.array([f"{i:04d}" + "t" * (text_chars - 4) for i in range(1000)])
        text = pa.DictionaryArray.from_arrays(pa.array((index % 1000).astype(np.int32)), values)
        doc = doc.dictionary_encode()
    return pa.table({"chunk_id": chunk, "doc_id": doc, "start": start, "end": end, "text": text})


def make(out: Path, fmt: str, n: int) -> Path:
    """The map of ``n`` rows in ``fmt`` (written once per size)."""
    path = out / f"bad-last-{n}.{fmt}"
    if path.exists():
        return path
    out.mkdir(parents=True, exist_ok=True)
    if fmt == "parquet":
        pq.write_table(_table(n, text_chars=1000), path, row_group_size=250_000, compression="zstd")
    elif fmt == "jsonl":
        table = _table(n)
        with open(path, "w", encoding="utf-8") as handle:
            for at in range(0, n, 500_000):
                for row in table.slice(at, 500_000).to_pylist():
                    handle.write(json.dumps(row) + "\n")
    else:
        table = _table(n)
        with open(path, "wb") as handle:
            handle.write(b"chunk_id,doc_id,start,end,text\n")
            pacsv.write_csv(table, handle, write_options=pacsv.WriteOptions(include_header=False,
                                                                           quoting_style="none"))
    return path


def measure(out: Path, chunk_map: Path) -> dict:
    """``evalcore evaluate`` with ``chunk_map`` in a fresh process: exit status, message, seconds, peak MB."""
    (out / "labels.tsv").write_text("query\tdoc_id\nq1\tdoc0000000\nq2\tdoc0000001\n", encoding="utf-8")
    (out / "run.trec").write_text("q1 Q0 doc0000000#1 1 0.5 t\nq2 Q0 doc0000001#0 1 0.5 t\n", encoding="utf-8")
    argv = ["evaluate", "--labels", str(out / "labels.tsv"), "--run", str(out / "run.trec"), "--chunks",
            str(chunk_map)]
    done = subprocess.run([sys.executable, "-c", CHILD, *argv], capture_output=True, text=True, cwd=ROOT,
                          timeout=3600)
    if done.returncode != 0:
        raise SystemExit(f"the child failed ({done.returncode}): {done.stderr.strip()[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--csv-rows", type=int, default=5_000_000)
    parser.add_argument("--jsonl-rows", type=int, default=3_000_000)
    parser.add_argument("--parquet-rows", type=int, default=1_900_000)
    parser.add_argument("--formats", default="csv,jsonl,parquet", help="comma-separated: csv, jsonl, parquet")
    parser.add_argument("--out", type=Path, default=Path("/tmp/evalcore-bad-last-line"))
    args = parser.parse_args(argv)
    rows = {"csv": args.csv_rows, "jsonl": args.jsonl_rows, "parquet": args.parquet_rows}
    print(f"{'map':<34} {'MB on disk':>10} {'exit':>4} {'s':>7} {'peak MB':>8}  message")
    worst = 0
    for fmt in args.formats.split(","):
        path = make(args.out, fmt.strip(), rows[fmt.strip()])
        found = measure(args.out, path)
        worst = max(worst, found["peak_mb"])
        mark = "" if found["reset"] else " (no reset: above idle from the start)"
        print(f"{path.name:<34} {path.stat().st_size / 2**20:>10,.0f} {found['code']:>4} {found['seconds']:>7.2f} "
              f"{found['peak_mb']:>8,}  {found['message'][:160]}{mark}", flush=True)
    print(f"largest peak above idle: {worst:,} MB (the bound: 1,024 MB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
