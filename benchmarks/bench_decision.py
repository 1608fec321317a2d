"""How long the meeting's decision takes: the best run, each run's k to take and the failures at k, computed once
(`evalcore.analyses.decision.decide`) for 10,000 queries x 5 runs x 100 returned docs.

Not a test: prints timings. Usage::

    .venv/bin/python benchmarks/bench_decision.py [--queries 10000] [--runs 5] [--depth 100] [--repeat 3]
    .venv/bin/python benchmarks/bench_decision.py --before 5b262ab [--rounds 2]   # before/after, same machine

Reported separately: ``evaluate`` (reading and scoring the runs, shared with every other surface), the parts of
``decide`` (the headline's paired tests, the failure counts, every run's k budget with all its intervals as
``evalcore budget`` computes it) and ``decide`` itself, with and without a trade-off (the target: under 1 s), then
``decide`` followed by every number a meeting report shows (the k budgets' intervals, stability and stop cost,
which ``decide`` leaves until they are read).

``--before REF`` times the same items on the package as it was at git revision REF (``git archive REF evalcore``
into a temporary folder, in a subprocess), round-robin with the working tree, and prints each item before, after
and their ratio, and whether both gave the same decision (its JSON and every k budget's, number for number). On
this shared 2-core machine the times move with other jobs; the round-robin exposes both sides to the same load.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

import numpy as np

TARGET_S = 1.0
RECORDED_BEFORE = {"decide, no trade-off (the elbow)": 4.1}
"""docs/performance.md, measured 2026-12-01 at 5b262ab (before the decision was made fast)."""

ROOT = Path(__file__).resolve().parents[1]


def runs_of(base, n_runs: int, seed: int = 1) -> list:
    """``n_runs`` runs over the same queries: the base run with a growing share of each query's list shuffled."""
    rng = np.random.default_rng(seed)
    runs = []
    depth = int(base.groupby("query").size().iloc[0])
    for i in range(n_runs):
        run = base.copy()
        shuffled = rng.random(len(run) // depth) < 0.15 * i
        ranks = run["rank"].to_numpy().reshape(-1, depth).copy()
        for row in np.flatnonzero(shuffled):
            ranks[row] = rng.permutation(ranks[row])
        run["rank"] = ranks.ravel()
        runs.append(run.assign(run_name=f"run{i}"))
    return runs


CPU: dict[str, float] = {}
"""The best process CPU seconds (every thread) of each item `best_of` timed, by its wall-time key."""


def best_of(action, repeat: int, key: str | None = None) -> float:
    """Best wall seconds of ``repeat`` calls (and, under ``key`` in `CPU`, the best CPU seconds)."""
    times, cpu = [], []
    for _ in range(repeat):
        start, start_cpu = time.perf_counter(), time.process_time()
        action()
        times.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)
    if key is not None:
        CPU[key] = min(cpu)
    return min(times)


def measure(queries: int, n_runs: int, depth: int, repeat: int, say=print) -> tuple[dict[str, float], dict]:
    """Best-of-``repeat`` seconds of each item, and the decisions made (as JSON-ready values) to compare."""
    from bench_budget import make_data
    from evalcore.analyses.budget import k_budget
    from evalcore.analyses.decision import decide
    from evalcore.analyses.headline import best_run, failure_counts
    from evalcore.analyses.k_settings import BudgetSettings
    from evalcore.metrics.evaluation import evaluate_runs
    from evalcore.readers.runs import read_run
    from evalcore.report.budget import budget_dict

    run, labels, docs_tokens, _ = make_data(queries, depth, 50_000)
    runs = [read_run(r.drop(columns="run_name"), name=r["run_name"].iloc[0]) for r in runs_of(run, n_runs)]
    start = time.perf_counter()
    evaluation = evaluate_runs(runs, labels, k=tuple(range(1, depth + 1)))
    say(f"evaluate: {time.perf_counter() - start:.2f} s ({queries:,} queries x {n_runs} runs x {depth} docs)")

    def shown(decision) -> None:
        """Everything a meeting report reads from the k budgets: intervals, stability, stop cost."""
        for budget in decision.budget:
            _ = (budget.table, budget.stability, budget.stop_cost)

    times: dict[str, float] = {}
    decisions: dict = {}
    settings = {"no trade-off (the elbow)": BudgetSettings(),
                "a recall point's worth": BudgetSettings(price_per_mtok=3, requests_per_month=1e6, value_per_point=500)}
    parts = (("part: the best run (hit@1, paired tests)", lambda: best_run(evaluation)),
             ("part: failures at k = 10", lambda: failure_counts(evaluation, 10)),
             ("part: every run's k budget, all intervals (as evalcore budget)",
              lambda: k_budget(evaluation, docs=docs_tokens, max_k=50, rng=evaluation.seed)))
    for name, action in parts:
        times[name] = best_of(action, repeat, name)
        say(f"  {name}: {times[name]:.2f} s ({CPU[name]:.2f} s CPU)")
    for name, given in settings.items():
        item = f"decide, {name}"
        times[item] = took = best_of(lambda: decide(evaluation, 10, given, docs=docs_tokens), repeat, item)
        decision = decide(evaluation, 10, given, docs=docs_tokens)
        ks = ", ".join(f"{r['name']} k = {r['k']}" for r in decision.to_dict()["runs"])
        say(f"decide, {name}: {took:.2f} s, {CPU[item]:.2f} s CPU (best of {repeat}; the target is {TARGET_S:g} s: "
            f"{took / TARGET_S:.1f}x it); best run {decision.best.best}; {ks}")
        item = f"decide + what a report shows, {name}"
        times[item] = full = best_of(lambda: shown(decide(evaluation, 10, given, docs=docs_tokens)), repeat, item)
        say(f"  decide + the k budgets' intervals, stability and stop cost: {full:.2f} s ({CPU[item]:.2f} s CPU)")
        decisions[name] = {"decision": decision.to_dict(), "budget": budget_dict(decision.budget)}
    return times, decisions


def package_at(revision: str, into: Path) -> Path:
    """The ``evalcore`` package as it was at git ``revision``, extracted under ``into`` (read-only git)."""
    archive = into / "evalcore.tar"
    with open(archive, "wb") as out:
        subprocess.run(["git", "-C", str(ROOT), "archive", "--format=tar", revision, "evalcore"], stdout=out,
                       check=True)
    with tarfile.open(archive) as tar:
        tar.extractall(into / "src", filter="data")
    return into / "src"


def child(args, source: Path) -> dict:
    """One timing round in a fresh interpreter importing ``evalcore`` from ``source``."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(source), str(Path(__file__).parent)]))
    done = subprocess.run([sys.executable, __file__, "--child", "--queries", str(args.queries), "--runs",
                           str(args.runs), "--depth", str(args.depth), "--repeat", str(args.repeat)],
                          env=env, capture_output=True, text=True, check=True)
    return json.loads(done.stdout.splitlines()[-1])


def before_and_after(args) -> None:
    with tempfile.TemporaryDirectory() as folder:
        old = package_at(args.before, Path(folder))
        rounds = {"before": [], "after": []}
        for i in range(args.rounds):  # round-robin: both sides meet the same load
            for side, source in (("before", old), ("after", ROOT)):
                print(f"round {i + 1}: {side} ...", flush=True)
                rounds[side].append(child(args, source))
    best = {side: {item: min(r["times"][item] for r in found) for item in found[0]["times"]}
            for side, found in rounds.items()}
    cpu = {side: {item: min(r["cpu"][item] for r in found) for item in found[0]["cpu"]}
           for side, found in rounds.items()}
    print(f"\n{'item (best of every round)':<64s} {'before':>8s} {'after':>8s} {'ratio':>7s}   "
          f"{'CPU before':>10s} {'after':>7s} {'ratio':>6s}")
    for item, after in best["after"].items():
        before = best["before"].get(item)
        if before is None:
            continue
        used, was = cpu["after"][item], cpu["before"][item]
        print(f"{item:<64s} {before:7.2f}s {after:7.2f}s {before / after:6.1f}x   {was:9.2f}s {used:6.2f}s "
              f"{was / used:5.1f}x")
    same = all(rounds["before"][0]["decisions"] == r["decisions"] for r in rounds["after"])
    print(f"\nthe same decisions before and after (every k, basis, interval, stability, number shown): "
          f"{'yes' if same else 'NO'}")
    for item in ("decide, no trade-off (the elbow)", "decide, a recall point's worth"):
        print(f"{item}: {best['after'][item]:.2f} s, {best['after'][item] / TARGET_S:.1f}x the {TARGET_S:g} s target")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--depth", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--before", metavar="REF", help="also time the package at this git revision, round-robin")
    parser.add_argument("--rounds", type=int, default=2, help="with --before: rounds of each side")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        times, decisions = measure(args.queries, args.runs, args.depth, args.repeat, say=lambda _: None)
        print(json.dumps({"times": times, "cpu": CPU, "decisions": decisions}, allow_nan=True))
        return
    if args.before:
        before_and_after(args)
        return
    times, _ = measure(args.queries, args.runs, args.depth, args.repeat)
    for item, before in RECORDED_BEFORE.items():
        print(f"{item}: {before:.1f} s recorded before (docs/performance.md) -> {times[item]:.2f} s now: "
              f"{before / times[item]:.1f}x faster")


if __name__ == "__main__":
    main()
