"""End-to-end benchmark: `evalcore evaluate` against pytrec_eval and ranx on the same files.

    .venv/bin/python benchmarks/bench_evaluate.py                      # 10,000 x 1,000 (~10 M lines)
    .venv/bin/python benchmarks/bench_evaluate.py --queries 500 --depth 100   # quick try
    .venv/bin/python benchmarks/bench_evaluate.py --profile              # evalcore under cProfile

It generates (deterministically, once; reused while the parameters match) a TREC run of
``--queries`` queries x ``--depth`` docs and a TREC qrels file, then runs each tool as its own
subprocess doing the same work end to end: read the qrels and the run from disk, compute
recall, precision, hit (success) and nDCG at 1, 5, 10 and MRR, print the means. evalcore runs
its CLI with its default output (``--format json``: means with 95% intervals, warnings).

Wall time is measured around the subprocess, CPU time (user + sys) from getrusage of the
children (less sensitive to other work on a shared machine); peak RSS by ``/usr/bin/time -v`` (ru_maxrss of the
process) when present, else by polling the process tree's summed RSS with psutil every 20 ms.
Each tool runs ``--repeat`` times (round-robin across tools) and the best time is kept, with
the peak RSS of that run; the 1-minute load average is printed after each run.
Before timing, each tool runs once on a tiny data set (untimed) so numba's on-disk JIT cache
(ranx) and Python's bytecode caches are warm; ``--no-warmup`` skips that.

Targets (from the issue): evalcore's wall time <= 0.5x and its peak memory <= 0.6x those of the
fastest peer. The script reports PASS/MISS; it never fails on a miss (no timing assertions).
"""

from __future__ import annotations

import argparse
import contextlib
import cProfile
import datetime as _dt
import io
import json
import os
import platform
import pstats
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
FORMAT_VERSION = 1
KS = (1, 5, 10)
TAG = "bench"
TIME_TARGET = 0.5
MEMORY_TARGET = 0.6
TIME_BIN = "/usr/bin/time"

COMMON_METRICS = [f"{m}@{k}" for m in ("recall", "precision", "hit", "ndcg") for k in KS] + ["mrr"]


# --------------------------------------------------------------------------------------------
# data generation (vectorised)
# --------------------------------------------------------------------------------------------


def _digits(values: np.ndarray, width: int) -> np.ndarray:
    """ASCII digits of non-negative ints, zero-padded: shape values.shape + (width,), uint8."""
    powers = 10 ** np.arange(width - 1, -1, -1, dtype=np.int64)
    return ((values[..., None] // powers) % 10 + ord("0")).astype(np.uint8)


def _id_widths(queries: int, corpus: int) -> tuple[int, int]:
    return max(5, len(str(queries - 1))), max(7, len(str(corpus - 1)))


@dataclass
class Synthetic:
    docs: np.ndarray  # (queries, depth) doc numbers, ranked best first
    scores: np.ndarray  # (queries, depth) int, strictly decreasing; printed as score / 10_000
    judged_q: np.ndarray  # (n_judgments,) query numbers
    judged_doc: np.ndarray  # (n_judgments,) doc numbers
    judged_grade: np.ndarray  # (n_judgments,) 0, 1 or 2


def synthesize(queries: int, depth: int, corpus: int, seed: int) -> Synthetic:
    """Draw a run and its judgments.

    Every query gets ``2 * depth`` distinct candidate docs (one per corpus bucket, shuffled):
    the first ``depth`` are the ranking, the rest are judged-but-not-retrieved docs. 5-20
    judgments per query are a weighted sample without replacement (Gumbel top-k) over the
    candidates, favouring the top ranks (weight 1/(rank+2)) and giving about a quarter of the
    mass to unretrieved docs, so recall, nDCG and MRR are neither 0 nor 1. Grades are 0 (40%),
    1 (40%) or 2 (20%), with at least one relevant doc per query. Scores strictly decrease, so
    no tie-breaking rule matters.
    """
    pool_size = 2 * depth
    if corpus < pool_size:
        raise SystemExit(f"--corpus ({corpus}) must be at least 2 x --depth ({pool_size})")
    if depth > 850_000:
        raise SystemExit("--depth must be at most 850,000")
    rng = np.random.default_rng(seed)
    bucket = corpus // pool_size
    pool = np.arange(pool_size, dtype=np.int64) * bucket + rng.integers(0, bucket, size=(queries, pool_size))
    pool = rng.permuted(pool, axis=1)

    start = rng.integers(950_000, 1_000_000, size=queries, dtype=np.int64)
    step = rng.integers(1, 850_000 // depth + 1, size=(queries, depth), dtype=np.int64)
    step[:, 0] = 0
    scores = start[:, None] - np.cumsum(step, axis=1)

    max_judged = min(20, pool_size)
    n_judged = rng.integers(min(5, max_judged), max_judged + 1, size=queries)
    position = np.arange(pool_size, dtype=np.float64)
    retrieved_mass = np.log((depth + 2) / 2)  # ~ sum of 1/(rank+2), rank 0..depth-1
    weight = np.where(position < depth, 1.0 / (position + 2.0), retrieved_mass / 3.0 / depth)
    keys = np.log(weight) + rng.gumbel(size=(queries, pool_size))
    top = np.argpartition(-keys, max_judged - 1, axis=1)[:, :max_judged]
    order = np.argsort(-np.take_along_axis(keys, top, axis=1), axis=1, kind="stable")
    top = np.take_along_axis(top, order, axis=1)  # sample order: top[:, :n] is a size-n sample
    del keys

    grade = rng.choice(np.array([0, 1, 2], dtype=np.int64), p=[0.4, 0.4, 0.2], size=(queries, max_judged))
    valid = np.arange(max_judged)[None, :] < n_judged[:, None]
    none_relevant = ~((grade >= 1) & valid).any(axis=1)
    rows = np.flatnonzero(none_relevant)
    grade[rows, (rng.random(rows.size) * n_judged[rows]).astype(np.int64)] = 1

    judged_doc = np.take_along_axis(pool, top, axis=1)
    q_index = np.broadcast_to(np.arange(queries)[:, None], valid.shape)
    return Synthetic(
        docs=np.ascontiguousarray(pool[:, :depth]),
        scores=scores,
        judged_q=q_index[valid],
        judged_doc=judged_doc[valid],
        judged_grade=grade[valid],
    )


def _write_qrels(path: Path, data: Synthetic, qw: int, dw: int) -> None:
    # fixed-width lines: "q00012 0 doc0123456 2\n"
    head = np.frombuffer(b"q", np.uint8)
    mid = np.frombuffer(b" 0 doc", np.uint8)
    n = data.judged_q.size
    parts = [
        np.broadcast_to(head, (n, 1)),
        _digits(data.judged_q, qw),
        np.broadcast_to(mid, (n, mid.size)),
        _digits(data.judged_doc, dw),
        np.broadcast_to(np.frombuffer(b" ", np.uint8), (n, 1)),
        _digits(data.judged_grade, 1),
        np.broadcast_to(np.frombuffer(b"\n", np.uint8), (n, 1)),
    ]
    path.write_bytes(np.concatenate(parts, axis=1).tobytes())


def _write_run(path: Path, data: Synthetic, qw: int, dw: int, chunk: int = 500) -> None:
    # One query's block is the same bytes for every query except the qid, doc id and score
    # digits, so tile a template and scatter those digits in.
    queries, depth = data.docs.shape
    lines, line_start = [], []
    offset = 0
    q_field = b"q" + b"0" * qw
    for rank in range(1, depth + 1):
        line = b"%s Q0 doc%s %d 00.0000 %s\n" % (q_field, b"0" * dw, rank, TAG.encode())
        lines.append(line)
        line_start.append(offset)
        offset += len(line)
    template = np.frombuffer(b"".join(lines), np.uint8)
    line_start = np.asarray(line_start, dtype=np.int64)
    rank_len = np.array([len(str(r)) for r in range(1, depth + 1)], dtype=np.int64)
    qid_pos = line_start[:, None] + 1 + np.arange(qw)  # (depth, qw)
    doc_start = line_start + len(q_field) + len(b" Q0 doc")
    doc_pos = doc_start[:, None] + np.arange(dw)  # (depth, dw)
    score_start = doc_start + dw + 1 + rank_len + 1
    score_pos = score_start[:, None] + np.array([0, 1, 3, 4, 5, 6])  # "dd.dddd"

    with open(path, "wb") as out:
        for lo in range(0, queries, chunk):
            hi = min(queries, lo + chunk)
            nq = hi - lo
            buf = np.tile(template, nq)
            base = (np.arange(nq, dtype=np.int64) * template.size)[:, None, None]
            qdig = _digits(np.arange(lo, hi, dtype=np.int64), qw)  # (nq, qw)
            buf[base + qid_pos[None]] = qdig[:, None, :]
            buf[base + doc_pos[None]] = _digits(data.docs[lo:hi], dw)
            buf[base + score_pos[None]] = _digits(data.scores[lo:hi], 6)
            out.write(buf.tobytes())


def generate(out: Path, queries: int, depth: int, corpus: int, seed: int, force: bool = False) -> tuple[Path, Path]:
    """Write ``run.trec`` and ``qrels.txt`` under ``out`` unless they exist with these parameters."""
    out.mkdir(parents=True, exist_ok=True)
    run_path, qrels_path, params_path = out / "run.trec", out / "qrels.txt", out / "params.json"
    params = {"version": FORMAT_VERSION, "queries": queries, "depth": depth, "corpus": corpus, "seed": seed}
    if not force and run_path.exists() and qrels_path.exists() and params_path.exists():
        try:
            if json.loads(params_path.read_text()) == params:
                print(f"data: reusing {out} ({queries} queries x {depth} docs)")
                return qrels_path, run_path
        except (OSError, ValueError):
            pass
    params_path.unlink(missing_ok=True)
    t0 = time.perf_counter()
    data = synthesize(queries, depth, corpus, seed)
    qw, dw = _id_widths(queries, corpus)
    t1 = time.perf_counter()
    _write_qrels(qrels_path, data, qw, dw)
    _write_run(run_path, data, qw, dw)
    params_path.write_text(json.dumps(params) + "\n")
    t2 = time.perf_counter()
    size_mb = run_path.stat().st_size / 2**20
    print(f"data: generated {queries * depth:,} run lines ({size_mb:,.0f} MiB) and {data.judged_q.size:,} "
          f"judgments in {t2 - t0:.1f} s (draw {t1 - t0:.1f} s, write {t2 - t1:.1f} s) -> {out}")
    return qrels_path, run_path


# --------------------------------------------------------------------------------------------
# measuring subprocesses
# --------------------------------------------------------------------------------------------


@dataclass
class Measurement:
    wall: float
    peak_mib: float
    cpu: float  # user + sys seconds of the process and its children
    returncode: int
    stdout: str
    stderr: str


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _measure_with_time(cmd: list[str]) -> Measurement:
    with tempfile.NamedTemporaryFile("r", suffix=".time", delete=False) as tmp:
        report = tmp.name
    try:
        c0 = _children_cpu()
        t0 = time.perf_counter()
        proc = subprocess.run([TIME_BIN, "-v", "-o", report, *cmd], capture_output=True, text=True)
        wall = time.perf_counter() - t0
        cpu = _children_cpu() - c0
        text = Path(report).read_text()
    finally:
        os.unlink(report)
    match = re.search(r"Maximum resident set size \(kbytes\):\s*(\d+)", text)
    peak = int(match.group(1)) / 1024 if match else float("nan")
    return Measurement(wall, peak, cpu, proc.returncode, proc.stdout, proc.stderr)


def _measure_with_psutil(cmd: list[str]) -> Measurement:
    import psutil

    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        c0 = _children_cpu()
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=out, stderr=err, text=True)
        root = psutil.Process(proc.pid)
        peak = 0
        while proc.poll() is None:
            total = 0
            try:
                for p in [root, *root.children(recursive=True)]:
                    with contextlib.suppress(psutil.Error):
                        total += p.memory_info().rss
            except psutil.Error:
                pass
            peak = max(peak, total)
            time.sleep(0.02)
        wall = time.perf_counter() - t0
        cpu = _children_cpu() - c0
        out.seek(0)
        err.seek(0)
        return Measurement(wall, peak / 2**20, cpu, proc.returncode, out.read(), err.read())


def measure(cmd: list[str], meter: str) -> Measurement:
    return _measure_with_time(cmd) if meter == "time" else _measure_with_psutil(cmd)


# --------------------------------------------------------------------------------------------
# the tools
# --------------------------------------------------------------------------------------------


def _evalcore_bin() -> str:
    candidate = Path(sys.executable).parent / "evalcore"
    return str(candidate) if candidate.exists() else (shutil.which("evalcore") or "evalcore")


def tool_command(tool: str, qrels: Path, run: Path) -> list[str]:
    if tool == "evalcore":
        ks = ",".join(map(str, KS))
        return [_evalcore_bin(), "evaluate", "--labels", str(qrels), "--run", str(run), "--k", ks, "--format", "json"]
    if tool == "pytrec_eval":
        return [sys.executable, str(HERE / "peer_pytrec_eval.py"), str(qrels), str(run)]
    if tool == "ranx":
        return [sys.executable, str(HERE / "peer_ranx.py"), str(qrels), str(run)]
    raise ValueError(tool)


def parse_means(tool: str, stdout: str) -> dict[str, float]:
    obj = json.loads(stdout)
    if tool == "evalcore":
        metrics = obj["runs"][0]["metrics"]
        return {name: float(value["mean"]) for name, value in metrics.items()}
    return {name: float(value) for name, value in obj["metrics"].items()}


@dataclass
class Result:
    tool: str
    walls: list[float] = field(default_factory=list)
    peaks: list[float] = field(default_factory=list)
    cpus: list[float] = field(default_factory=list)
    means: dict[str, float] = field(default_factory=dict)
    error: str | None = None

    @property
    def best(self) -> int:
        return int(np.argmin(self.walls))

    @property
    def wall(self) -> float:
        return self.walls[self.best]

    @property
    def peak(self) -> float:
        return self.peaks[self.best]

    @property
    def cpu(self) -> float:
        return min(self.cpus)


def run_tools(tools: list[str], qrels: Path, run: Path, repeat: int, meter: str) -> list[Result]:
    """Run every tool ``repeat`` times, round-robin, so background load is shared fairly."""
    results = {tool: Result(tool) for tool in tools}
    for i in range(repeat):
        for tool in tools:
            result = results[tool]
            if result.error is not None:
                continue
            m = measure(tool_command(tool, qrels, run), meter)
            if m.returncode != 0:
                result.error = f"exit {m.returncode}: {m.stderr.strip()[-2000:]}"
                print(f"  {tool}: FAILED ({result.error})", flush=True)
                continue
            result.walls.append(m.wall)
            result.peaks.append(m.peak_mib)
            result.cpus.append(m.cpu)
            if not result.means:
                try:
                    result.means = parse_means(tool, m.stdout)
                except (ValueError, KeyError, IndexError) as exc:
                    result.error = f"unreadable output ({exc}): {m.stdout[:500]!r}"
            load = os.getloadavg()[0]
            print(f"  {tool:<12} #{i + 1}: {m.wall:7.2f} s wall {m.cpu:7.2f} s cpu {m.peak_mib:8.0f} MiB  "
                  f"(load avg {load:.2f})", flush=True)
    return list(results.values())


def warm_up(tools: list[str], out: Path, meter: str) -> None:
    qrels, run = generate(out / "warmup", 50, 100, 2_000_000, 1)
    for tool in tools:
        m = measure(tool_command(tool, qrels, run), meter)
        status = "ok" if m.returncode == 0 else f"exit {m.returncode}: {m.stderr.strip()[-500:]}"
        print(f"  warm-up {tool}: {m.wall:.2f} s ({status})", flush=True)


# --------------------------------------------------------------------------------------------
# report
# --------------------------------------------------------------------------------------------


def _versions() -> dict[str, str]:
    from importlib import metadata

    versions = {"python": platform.python_version(), "numpy": np.__version__}
    for dist in ("evalcore", "pandas", "pytrec-eval-terrier", "ranx", "numba"):
        with contextlib.suppress(metadata.PackageNotFoundError):
            versions[dist] = metadata.version(dist)
    return versions


def _cpu() -> str:
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return platform.processor() or "unknown"


def report(results: list[Result], args: argparse.Namespace, meter: str) -> dict:
    ok = [r for r in results if r.error is None and r.walls]
    print()
    print(f"{args.queries:,} queries x {args.depth:,} docs = {args.queries * args.depth:,} run lines; "
          f"best of {args.repeat}; {os.cpu_count()} cores ({_cpu()}); peak RSS via "
          f"{'/usr/bin/time -v' if meter == 'time' else 'psutil polling (20 ms)'}")
    header = f"{'tool':<12} {'wall s':>8} {'cpu s':>8} {'peak MiB':>9} {'recall@10':>10} {'mrr':>8}"
    print(header)
    print("-" * len(header))
    for r in results:
        if r in ok:
            rec, mrr = r.means.get("recall@10", float("nan")), r.means.get("mrr", float("nan"))
            print(f"{r.tool:<12} {r.wall:8.2f} {r.cpu:8.2f} {r.peak:9.0f} {rec:10.4f} {mrr:8.4f}")
        else:
            print(f"{r.tool:<12} {'failed':>8}   {r.error}")

    summary: dict = {
        "date": _dt.datetime.now().astimezone().isoformat(timespec="seconds"),
        "queries": args.queries, "depth": args.depth, "repeat": args.repeat,
        "cores": os.cpu_count(), "cpu": _cpu(), "meter": meter, "versions": _versions(),
        "loadavg_at_end": os.getloadavg(),
        "tools": {r.tool: {"wall_s": r.wall if r in ok else None, "peak_mib": r.peak if r in ok else None,
                           "cpu_s": r.cpu if r in ok else None,
                           "walls": r.walls, "cpus": r.cpus, "peaks_mib": r.peaks, "means": r.means, "error": r.error}
                  for r in results},
    }

    ev = next((r for r in ok if r.tool == "evalcore"), None)
    peers = [r for r in ok if r.tool != "evalcore"]
    if ev and peers:
        fastest = min(peers, key=lambda r: r.wall)
        leanest = min(peers, key=lambda r: r.peak)
        t_ratio, m_ratio = ev.wall / fastest.wall, ev.peak / fastest.peak
        t_ok, m_ok = t_ratio <= TIME_TARGET, m_ratio <= MEMORY_TARGET
        print()
        print(f"evalcore vs fastest peer ({fastest.tool}):")
        print(f"  time   ratio {t_ratio:5.2f}  (target <= {TIME_TARGET})  {'PASS' if t_ok else 'MISS'}")
        print(f"  memory ratio {m_ratio:5.2f}  (target <= {MEMORY_TARGET})  {'PASS' if m_ok else 'MISS'}")
        print(f"  (cpu-time ratio, less sensitive to background load: {ev.cpu / fastest.cpu:.2f})")
        if leanest is not fastest:
            print(f"  (memory ratio vs the leanest peer, {leanest.tool}: {ev.peak / leanest.peak:.2f})")
        summary["ratios"] = {"fastest_peer": fastest.tool, "time_ratio": t_ratio, "memory_ratio": m_ratio,
                             "cpu_ratio": ev.cpu / fastest.cpu,
                             "time_pass": t_ok, "memory_pass": m_ok}

    if ev:
        print()
        print("sanity: max |mean difference| vs evalcore over "
              f"{len(COMMON_METRICS)} metrics ({', '.join(COMMON_METRICS)}):")
        agreement = {}
        for r in peers:
            diffs = {m: abs(r.means[m] - ev.means[m]) for m in COMMON_METRICS if m in r.means and m in ev.means}
            worst = max(diffs, key=diffs.get) if diffs else None
            if worst is None:
                print(f"  {r.tool}: no common metrics")
                continue
            verdict = "agree to 4 decimals" if diffs[worst] < 5e-5 else "DISAGREE"
            print(f"  {r.tool:<12} {diffs[worst]:.2e} (worst: {worst})  {verdict}")
            agreement[r.tool] = {"max_abs_diff": diffs[worst], "worst_metric": worst}
        summary["agreement"] = agreement
    return summary


# --------------------------------------------------------------------------------------------
# profile
# --------------------------------------------------------------------------------------------


def profile_evalcore(qrels: Path, run: Path, top: int, out: Path) -> None:
    from evalcore.cli.main import main as evalcore_main

    argv = tool_command("evalcore", qrels, run)[1:]
    prof = cProfile.Profile()
    sink = io.StringIO()
    t0 = time.perf_counter()
    with contextlib.redirect_stdout(sink):
        prof.enable()
        rc = evalcore_main(argv)
        prof.disable()
    wall = time.perf_counter() - t0
    dump = out / "evalcore.prof"
    prof.dump_stats(dump)
    print(f"\nevalcore in-process under cProfile: exit {rc}, {wall:.2f} s wall (with profiler overhead); "
          f"stats saved to {dump}")
    stats = pstats.Stats(prof)
    print(f"{stats.total_calls:,} calls, {stats.total_tt:.2f} s profiled\n")
    _print_stats(stats, "cumulative", top)
    print()
    _print_stats(stats, "tottime", min(top, 15))


def _short_path(filename: str) -> str:
    """A profile entry's file relative to site-packages or the repo (pandas/core/..., evalcore/...)."""
    for marker in ("site-packages/", "dist-packages/"):
        if marker in filename:
            return filename.split(marker, 1)[1]
    with contextlib.suppress(ValueError):
        return str(Path(filename).resolve().relative_to(HERE.parent))
    return filename


def _print_stats(stats: pstats.Stats, key: str, top: int) -> None:
    column = {"cumulative": 3, "tottime": 2}[key]
    rows = sorted(stats.stats.items(), key=lambda item: item[1][column], reverse=True)[:top]
    print(f"top {len(rows)} by {'cumulative' if key == 'cumulative' else 'own (tottime)'} time")
    print(f"{'ncalls':>9} {'tottime':>8} {'cumtime':>8}  function")
    for (filename, line, func), (cc, nc, tt, ct, _callers) in rows:
        calls = f"{nc}/{cc}" if nc != cc else str(nc)
        where = f"{_short_path(filename)}:{line}({func})" if filename != "~" else func
        print(f"{calls:>9} {tt:8.3f} {ct:8.3f}  {where}")


# --------------------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--queries", type=int, default=10_000, help="queries in the run (default 10,000)")
    parser.add_argument("--depth", type=int, default=1_000, help="docs per query (default 1,000)")
    parser.add_argument("--corpus", type=int, default=2_000_000, help="doc ids drawn from this many (default 2M)")
    parser.add_argument("--seed", type=int, default=0, help="numpy seed of the data (default 0)")
    parser.add_argument("--out", type=Path, default=HERE / "data", help="data folder (default benchmarks/data)")
    parser.add_argument("--force", action="store_true", help="regenerate the data even if it matches")
    parser.add_argument("--repeat", type=int, default=1, help="runs per tool; the best time is kept (default 1)")
    parser.add_argument("--tools", default="evalcore,pytrec_eval,ranx",
                        help="comma separated subset of evalcore,pytrec_eval,ranx")
    parser.add_argument("--meter", choices=("auto", "time", "psutil"), default="auto",
                        help="peak-RSS meter: /usr/bin/time -v or psutil polling (default auto: time if present)")
    parser.add_argument("--no-warmup", action="store_true", help="skip the untimed warm-up on tiny data")
    parser.add_argument("--profile", action="store_true",
                        help="instead of the comparison, run evalcore in-process under cProfile")
    parser.add_argument("--profile-top", type=int, default=25, help="entries of the profile to print (default 25)")
    parser.add_argument("--json", type=Path, default=None, help="also write the results as JSON to this file")
    args = parser.parse_args(argv)

    qrels, run = generate(args.out, args.queries, args.depth, args.corpus, args.seed, force=args.force)
    if args.profile:
        profile_evalcore(qrels, run, args.profile_top, args.out)
        return 0

    meter = args.meter
    if meter == "auto":
        meter = "time" if os.access(TIME_BIN, os.X_OK) else "psutil"
    tools = [t.strip() for t in args.tools.split(",") if t.strip()]
    unknown = set(tools) - {"evalcore", "pytrec_eval", "ranx"}
    if unknown:
        parser.error(f"unknown tools: {', '.join(sorted(unknown))}")
    if not args.no_warmup:
        warm_up(tools, args.out, meter)
    results = run_tools(tools, qrels, run, args.repeat, meter)
    summary = report(results, args, meter)
    if args.json:
        args.json.write_text(json.dumps(summary, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
