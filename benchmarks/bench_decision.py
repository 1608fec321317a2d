"""How long the meeting's decision takes: the best run, each run's k to take and the failures at k, computed once
(`evalcore.analyses.decision.decide`) for 10,000 queries x 5 runs x 100 returned docs.

Not a test: prints timings. Usage::

    .venv/bin/python benchmarks/bench_decision.py [--queries 10000] [--runs 5] [--depth 100] [--repeat 3]

Reported separately: ``evaluate`` (reading and scoring the runs, shared with every other surface) and ``decide``
(from the `Evaluation`: the headline's paired tests, every run's k budget with its 10,000-resample intervals,
stability and stop cost, and the failure counts), with and without a trade-off. The target: ``decide`` under 1 s.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from bench_budget import make_data
from evalcore.analyses.budget import k_budget
from evalcore.analyses.decision import decide
from evalcore.analyses.headline import best_run, failure_counts
from evalcore.analyses.k_settings import BudgetSettings
from evalcore.metrics.evaluation import evaluate_runs
from evalcore.readers.runs import read_run


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


def best_of(action, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        action()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--depth", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    run, labels, docs_tokens, _ = make_data(args.queries, args.depth, 50_000)
    runs = [read_run(r.drop(columns="run_name"), name=r["run_name"].iloc[0]) for r in runs_of(run, args.runs)]
    start = time.perf_counter()
    evaluation = evaluate_runs(runs, labels, k=tuple(range(1, args.depth + 1)))
    print(f"evaluate: {time.perf_counter() - start:.2f} s ({args.queries:,} queries x {args.runs} runs x "
          f"{args.depth} docs)")
    parts = (("the best run (hit@1, paired tests)", lambda: best_run(evaluation)),
             ("failures at k = 10", lambda: failure_counts(evaluation, 10)),
             ("every run's k budget", lambda: k_budget(evaluation, docs=docs_tokens, max_k=50, rng=evaluation.seed)))
    for name, action in parts:
        print(f"  part: {name}: {best_of(action, args.repeat):.2f} s")
    for name, settings in (("no trade-off (the elbow)", BudgetSettings()),
                           ("a recall point's worth", BudgetSettings(price_per_mtok=3, requests_per_month=1e6,
                                                                     value_per_point=500))):
        took = best_of(lambda: decide(evaluation, 10, settings, docs=docs_tokens), args.repeat)
        decision = decide(evaluation, 10, settings, docs=docs_tokens)
        ks = ", ".join(f"{r['name']} k = {r['k']}" for r in decision.to_dict()["runs"])
        print(f"decide, {name}: {took:.2f} s (best of {args.repeat}; the target is 1 s: {took:.1f}x it); best run "
              f"{decision.best.best}; {ks}")


if __name__ == "__main__":
    main()
