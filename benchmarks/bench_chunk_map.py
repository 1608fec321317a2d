"""How long reading a chunk map of 5 million chunks takes, and the peak memory it costs, in every format.

Not a test: prints timings. Usage::

    .venv/bin/python benchmarks/bench_chunk_map.py [--chunks 5000000] [--repeat 3] [--out /tmp/chunkmap]

The map is generated once per size (seed-free: chunk ``doc0012345#7`` is the 8th window of its document, 10
chunks a document, windows of 400 characters stepping 300) as CSV, TSV, gzip CSV, JSONL and Parquet in ``--out``.
Each file is read by `evalcore.read_chunks` in its own subprocess, so each peak is its own: **s** is the read
(best of ``--repeat``), **peak MB** the process's peak resident memory above what it held before reading (its
high-water mark from ``/proc/self/status``, so nothing is sampled).
"""

from __future__ import annotations

import argparse
import gzip
import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv
import pyarrow.parquet as pq

CHILD = """
import sys, time
def status(key):
    for line in open('/proc/self/status'):
        if line.startswith(key):
            return int(line.split()[1]) // 1024
import evalcore
before = status('VmRSS')
start = time.perf_counter()
chunks = evalcore.read_chunks(sys.argv[1])
seconds = time.perf_counter() - start
print(seconds, status('VmHWM') - before, len(chunks))
"""


def make(out: Path, n: int) -> dict[str, Path]:
    """The map in every format (written once per size)."""
    out.mkdir(parents=True, exist_ok=True)
    files = {fmt: out / f"chunks-{n}.{fmt}" for fmt in ("csv", "tsv", "csv.gz", "jsonl", "parquet")}
    if all(path.exists() for path in files.values()):
        return files
    index = np.arange(n)
    doc = pa.array(np.char.add("doc", np.char.zfill((index // 10).astype(str), 7)))
    chunk = pc.binary_join_element_wise(doc, pa.array((index % 10).astype(str)), "#")
    start = (index % 10) * 300
    table = pa.table({"chunk_id": chunk, "doc_id": doc, "start": start, "end": start + 400})
    for fmt, delimiter in (("csv", ","), ("tsv", "\t")):
        with open(files[fmt], "wb") as out_file:
            out_file.write(delimiter.join(table.column_names).encode() + b"\n")  # pyarrow would quote the names
            pacsv.write_csv(table, out_file, write_options=pacsv.WriteOptions(
                include_header=False, delimiter=delimiter, quoting_style="none"))
    with open(files["csv"], "rb") as plain, gzip.open(files["csv.gz"], "wb", compresslevel=3) as packed:
        shutil.copyfileobj(plain, packed)
    with open(files["jsonl"], "w", encoding="utf-8") as lines:
        for batch in table.to_batches(1 << 16):
            lines.writelines(json.dumps(row) + "\n" for row in batch.to_pylist())
    pq.write_table(table, files["parquet"])
    return files


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--chunks", type=int, default=5_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--out", type=Path, default=Path("/tmp/evalcore-bench-chunk-map"))
    args = parser.parse_args()
    files = make(args.out, args.chunks)
    print(f"{args.chunks:,} chunks; best of {args.repeat}")
    print(f"{'format':<8} {'file MB':>8} {'s':>6} {'peak MB':>8}")
    for fmt, path in files.items():
        runs = []
        for _ in range(args.repeat):
            done = subprocess.run([sys.executable, "-c", CHILD, str(path)], capture_output=True, text=True,
                                  check=True)
            seconds, peak, count = done.stdout.split()
            assert int(count) == args.chunks
            runs.append((float(seconds), int(peak)))
        seconds, peak = min(runs)
        print(f"{fmt:<8} {path.stat().st_size / 2**20:>8.0f} {seconds:>6.2f} {peak:>8,}")


if __name__ == "__main__":
    main()
