"""``evalcore sample`` on a large generated query log: seconds and peak resident memory (VmHWM).

Writes a UBI ``ubi_queries`` log as JSON lines (Zipf-distributed queries from a pool of distinct ones, typo
variants, a share of zero-result searches, sessions with reformulations within a minute, an email address in a few)
of about ``--gb`` gigabytes, then runs ``evalcore sample`` on it under ``/usr/bin/time -v`` (no address-space cap)
and prints the elapsed time, the peak resident memory and the load average before and after (the machine may be
shared). The log is kept in ``--out`` and reused while its size matches.

    .venv/bin/python benchmarks/bench_sample.py                       # about 1.5 GB, 4 M searches
    .venv/bin/python benchmarks/bench_sample.py --gb 0.1 --out /tmp/s   # a quick try
    .venv/bin/python benchmarks/bench_sample.py --gzip                  # the same log gzip-compressed
    .venv/bin/python benchmarks/bench_sample.py --clicks 0.3            # with ubi_events: a click on 30% of searches

With ``--clicks``, the command also writes the production run (``--production-run``): the logged results and the
clicks of the sampled queries, read by one more scan of the file (two with click events).
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
WORDS = ("reset password account login invoice refund order shipping delivery track cancel subscription plan "
         "pricing team export data import csv api key token error sync mobile app desktop notification email "
         "calendar share folder permission admin billing card update delete restore backup integration slack "
         "webhook limit storage upgrade downgrade trial discount coupon receipt tax address language dark mode "
         "search filter report dashboard chart").split()


def make_log(path: Path, target_bytes: int, distinct: int, seed: int, packed: bool, clicks: float = 0.0) -> int:
    """Write the log (a ``ubi_events`` click after a ``clicks`` share of the searches that found something); the
    number of searches written."""
    rng = np.random.default_rng(seed)
    pool = [" ".join(rng.choice(WORDS, size=rng.integers(1, 5))) + (f" {i}" if i % 3 == 0 else "")
            for i in range(distinct)]
    typos = [q[:len(q) // 2] + q[len(q) // 2 + 1:] if len(q) > 4 else q for q in pool]
    quoted = [json.dumps(q) for q in pool]
    quoted_typos = [json.dumps(q) for q in typos]
    filler = json.dumps({"application": "help-centre", "query_attributes": {"locale": "en-GB", "page": 1,
                                                                            "device": "desktop"}})[1:-1]
    opener = gzip.open if packed else open
    written, searches, clock = 0, 0, 1_740_000_000.0
    with opener(path, "wt", encoding="utf-8") as out:
        while written < target_bytes:
            n = 50_000
            rank = np.minimum(rng.zipf(1.15, size=n), distinct) - 1
            typo = rng.random(n) < 0.08
            zero = rng.random(n) < 0.04
            email = rng.random(n) < 0.003
            client = rng.integers(0, 400_000, size=n)
            gaps = rng.choice([8.0, 25.0, 90.0, 600.0], size=n, p=[0.2, 0.2, 0.3, 0.3])
            hits = rng.integers(1, 10, size=n)
            clicked = rng.random(n) < clicks
            lines = []
            for i in range(n):
                r = int(rank[i])
                text = quoted_typos[r] if typo[i] else quoted[r]
                if email[i]:
                    text = json.dumps(f"{pool[r]} for jane.doe{i}@example.com")
                ids = "[]" if zero[i] else json.dumps([f"doc-{(r * 7 + j) % 5000}" for j in range(int(hits[i]))])
                clock += float(gaps[i]) / 50
                stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(clock)) + "Z"
                lines.append(f'{{"query_id": "q{searches + i}", "user_query": {text}, '
                             f'"query_response_object_ids": {ids}, "client_id": "c{int(client[i]) // 8 + i % 8}", '
                             f'"timestamp": "{stamp}", {filler}}}\n')
                if clicked[i] and not zero[i]:
                    lines.append(f'{{"action_name": "click", "query_id": "q{searches + i}", "event_attributes": '
                                 f'{{"object": {{"object_id": "doc-{(r * 7 + int(hits[i]) - 1) % 5000}"}}, '
                                 f'"position": {{"ordinal": {int(hits[i])}}}}}, "timestamp": "{stamp}"}}\n')
            block = "".join(lines)
            out.write(block)
            written += len(block)
            searches += n
    return searches


def run(path: Path, production: bool = False) -> dict:
    """``evalcore sample`` on ``path`` under /usr/bin/time -v: seconds, peak resident memory, the JSON's counts."""
    before = os.getloadavg()
    started = time.perf_counter()
    extra = ["--production-run", str(path.with_suffix(".production.trec"))] if production else []
    done = subprocess.run(["/usr/bin/time", "-v", str(ROOT / ".venv/bin/evalcore"), "sample", "--log", str(path),
                           "--format", "json", "--seed", "0", *extra], capture_output=True, text=True)
    seconds = time.perf_counter() - started
    if done.returncode:
        sys.exit(f"evalcore sample failed: {done.stderr[-2000:]}")
    peak = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", done.stderr).group(1))
    found = json.loads(done.stdout)
    return {"seconds": round(seconds, 1), "peak_mb": round(peak / 1024), "load_before": [round(x, 2) for x in before],
            "load_after": [round(x, 2) for x in os.getloadavg()], "queries": found["queries"],
            "distinct": found["distinct"], "clusters": found["clusters"],
            "near_duplicates_looked_at": found["near_duplicates"]["looked_at"],
            "pii_queries": found["pii"]["queries"], "sampled": len(found["sample"]),
            "logged_docs": found["logged_docs"],
            "strata": {s["name"]: s["distinct"] for s in found["strata"]}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--gb", type=float, default=1.5, help="size of the log to write (default 1.5)")
    parser.add_argument("--distinct", type=int, default=300_000, help="distinct queries in the pool (default 300,000)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--gzip", action="store_true", help="write the log gzip-compressed")
    parser.add_argument("--clicks", type=float, default=0.0, metavar="SHARE",
                        help="a click event after this share of the searches (default 0: queries only)")
    parser.add_argument("--out", default="/tmp/evalcore-bench-sample", help="folder of the log (kept, reused)")
    args = parser.parse_args()
    folder = Path(args.out)
    folder.mkdir(parents=True, exist_ok=True)
    clicked = f"-clicks{args.clicks:g}" if args.clicks else ""
    path = folder / (f"ubi-{args.gb:g}gb-{args.distinct}-{args.seed}{clicked}.ndjson" + (".gz" if args.gzip else ""))
    if not path.exists():
        started = time.perf_counter()
        searches = make_log(path, int(args.gb * 1e9), args.distinct, args.seed, args.gzip, args.clicks)
        print(f"wrote {path}: {path.stat().st_size / 1e9:.2f} GB on disk, {searches:,} searches, "
              f"{time.perf_counter() - started:.0f} s", file=sys.stderr)
    result = {"log": str(path), "bytes_on_disk": path.stat().st_size, "cores": os.cpu_count(),
              **run(path, production=bool(args.clicks))}
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
