"""Time `mean_intervals` on 10,000 queries x 250 columns (5 runs x 50 metric columns).

The scores are simulated to look like a real report: hit@k is 0/1 (Wilson), recall@k,
precision@k, ndcg@k and judged@k are fractional (BCa bootstrap), rankings stop at 100 docs so
the larger cutoffs repeat columns, and the five runs share query difficulty.

    .venv/bin/python benchmarks/bench_intervals.py
"""

from __future__ import annotations

import time

import numpy as np

from evalcore.stats.intervals import mean_intervals

N_QUERIES = 10_000
N_RUNS = 5
KS = (1, 2, 3, 5, 10, 20, 50, 100, 200, 1000)
DEPTH = 100  # docs returned per query


def simulated_scores(seed: int = 0) -> np.ndarray:
    """(N_QUERIES, N_RUNS * 50) per-query scores: 5 measures x 10 cutoffs per run."""
    rng = np.random.default_rng(seed)
    n_relevant = rng.choice([1, 2, 3, 4], size=N_QUERIES, p=[0.6, 0.25, 0.1, 0.05])
    grades = rng.integers(1, 4, size=(N_QUERIES, 4))
    difficulty = rng.beta(2, 2, size=N_QUERIES)  # shared by every run
    columns = []
    for run in range(N_RUNS):
        skill = 0.05 + 0.3 * difficulty[:, None] * (0.8 + 0.1 * run)
        ranks = rng.geometric(np.clip(skill, 0.01, 1.0), size=(N_QUERIES, 4)).astype(float)
        present = np.arange(4)[None, :] < n_relevant[:, None]
        ranks[~present | (ranks > DEPTH)] = np.inf
        other_judged = rng.integers(1, 3 * DEPTH, size=(N_QUERIES, 6)).astype(float)
        judged_ranks = np.concatenate([ranks, other_judged], axis=1)
        gains = np.where(present, grades, 0)
        ideal = -np.sort(-gains, axis=1)
        for k in KS:
            found = ranks <= k
            hits = found.sum(axis=1)
            dcg = (np.where(found, gains, 0) / np.log2(np.minimum(ranks, 1e9) + 1)).sum(axis=1)
            cut = np.arange(1, 5)[None, :] <= k
            idcg = (np.where(cut, ideal, 0) / np.log2(np.arange(2, 6))[None, :]).sum(axis=1)
            shown = min(k, DEPTH)
            columns += [
                (hits > 0).astype(float),  # hit@k
                hits / n_relevant,  # recall@k
                hits / k,  # precision@k
                dcg / idcg,  # ndcg@k
                np.minimum((judged_ranks <= shown).sum(axis=1), shown) / shown,  # judged@k
            ]
    return np.column_stack(columns)


def main() -> None:
    scores = simulated_scores()
    binary = ((scores == 0) | (scores == 1)).all(axis=0).sum()
    distinct = len({scores[:, j].tobytes() for j in range(scores.shape[1])})
    print(
        f"{scores.shape[0]:,} queries x {scores.shape[1]} columns "
        f"({binary} all 0/1 -> Wilson, {distinct} distinct columns)"
    )
    times = []
    for _ in range(3):
        start = time.perf_counter()
        intervals = mean_intervals(scores, n_resamples=10_000, rng=0)
        times.append(time.perf_counter() - start)
    methods = {m: sum(i.method == m for i in intervals) for m in ("wilson", "bca", "constant")}
    print(f"methods: {methods}")
    print(f"mean_intervals, 10,000 resamples: best {min(times):.2f} s, runs {', '.join(f'{t:.2f}' for t in times)} s")


if __name__ == "__main__":
    main()
