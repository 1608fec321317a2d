"""How long `evalcore answers` takes on 100,000 graded rows: 5 runs x 20,000 labeled queries, one ragas CSV per run
(the answer, the contexts and three grades per row), read, joined to the labels by text and summarised.

Not a test: prints timings. Usage::

    .venv/bin/python benchmarks/bench_answers.py [--queries 20000] [--runs 5] [--repeat 1] [--resamples 10000]

Reported separately: ``read grades`` (every grade file, checked value by value, columnar), ``join`` (rows to
labeled queries by text: NFKC, case-folded), ``retrieval`` (the labels and runs read and scored at k, shared with
every other command), ``numbers`` (every run's means with 10,000-resample intervals, every pair's paired comparison
with Holm, the four counts, the diverging queries, the rank correlations). The target: read + join + numbers under
5 s. The data is generated with numpy (seed 0) into a temporary folder. Each attempt ends with the machine's load
average (1, 5, 15 minutes, as ``uptime``): on a shared machine, read the wall times with it.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

from evalcore.analyses.answer_join import join_grades
from evalcore.analyses.answers import answer_study
from evalcore.metrics.evaluation import evaluate_runs
from evalcore.readers.grades import read_grades
from evalcore.readers.labels import read_labels

WORDS = np.array("refund password invoice export account billing team channel admin login sso plan delete "
                 "history archive upload limit storage webhook token".split())


def make_data(folder: Path, n_queries: int, n_runs: int, depth: int = 10, seed: int = 0) -> tuple[Path, list, list]:
    """Labels (one relevant doc a query, with its text), a TREC run and a ragas CSV per run."""
    rng = np.random.default_rng(seed)
    ids = np.char.add("q", np.arange(n_queries).astype(str))
    picked = WORDS[rng.integers(0, len(WORDS), size=(n_queries, 4))]
    texts = np.char.add(np.char.add(picked[:, 0], " "), np.char.add(picked[:, 1], np.char.add(" ", ids)))
    relevant = np.char.add("d", np.arange(n_queries).astype(str))
    labels = folder / "labels.tsv"
    pd.DataFrame({"query": ids, "doc_id": relevant, "grade": 1, "query_text": texts}).to_csv(labels, sep="\t",
                                                                                           index=False)
    runs, grades = [], []
    for r in range(n_runs):
        rank = rng.integers(1, 2 * depth, size=n_queries)  # where the relevant doc lands (past depth: missed)
        docs = np.char.add("x", rng.integers(0, 10 * n_queries, size=(n_queries, depth)).astype(str)).astype(object)
        found = rank <= depth
        docs[np.flatnonzero(found), rank[found] - 1] = relevant[found]
        run = folder / f"run{r}.trec"
        pd.DataFrame({"q": np.repeat(ids, depth), "Q0": "Q0", "doc": docs.ravel(),
                      "rank": np.tile(np.arange(1, depth + 1), n_queries),
                      "score": np.tile(np.linspace(1, 0.1, depth), n_queries), "tag": f"run{r}"}) \
            .to_csv(run, sep=" ", header=False, index=False)
        claims = rng.integers(1, 8, size=n_queries)
        supported = np.minimum(claims, rng.binomial(claims, np.where(found, 0.85, 0.5)))
        frame = pd.DataFrame({
            "user_input": pd.Series(texts).str.upper().str.replace(" ", "  "),  # joined after NFKC, case folding
            "retrieved_contexts": "['a chunk of text, quoted', 'another chunk']",
            "response": "An answer\nover two lines.",
            "reference": "The reference answer.",
            "faithfulness": supported / claims,
            "answer_relevancy": np.clip(rng.normal(0.7, 0.15, n_queries), 0, 1).round(4),
            "context_recall": found.astype(float),
        })
        frame.loc[rng.random(n_queries) < 0.01, "answer_relevancy"] = np.nan  # a few missing grades
        path = folder / f"run{r}.ragas.csv"
        frame.to_csv(path)  # with pandas' unnamed index column, as result.to_pandas().to_csv() writes it
        runs.append(run)
        grades.append((f"run{r}", path))
    return labels, runs, grades


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=20_000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--resamples", type=int, default=10_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        labels_path, run_paths, grade_paths = make_data(Path(tmp), args.queries, args.runs)
        print(f"{args.queries:,} queries x {args.runs} runs = {args.queries * args.runs:,} graded rows "
              f"({sum(p.stat().st_size for _, p in grade_paths) / 1e6:.1f} MB of ragas CSV)")
        print(f"{'':40} {'wall':>8} {'cpu':>8}   (cpu: this process's CPU time, all threads: what a shared "
              "machine's load cannot inflate)")
        for attempt in range(args.repeat):
            times = {}

            def timed(what: str, action):
                wall, cpu = time.perf_counter(), time.process_time()
                result = action()
                times[what] = (time.perf_counter() - wall, time.process_time() - cpu)
                return result

            grades = timed("read grades", lambda: [read_grades(path, run=name) for name, path in grade_paths])
            labels = timed("retrieval: labels", lambda: read_labels(labels_path))
            evaluation = timed("retrieval: runs scored at k = 10", lambda: evaluate_runs(run_paths, labels, k=(10,)))
            joined = timed("join", lambda: join_grades(grades, labels, runs=evaluation.run_names))
            study = timed("numbers", lambda: answer_study(joined, evaluation, k=10, n_resamples=args.resamples))
            for what, (wall, cpu) in times.items():
                print(f"  {what:<38} {wall:7.2f}s {cpu:7.2f}s")
            target = [sum(times[w][i] for w in ("read grades", "join", "numbers")) for i in (0, 1)]
            print(f"  {'read + join + numbers':<38} {target[0]:7.2f}s {target[1]:7.2f}s   (target: under 5 s)   "
                  f"[{len(study.means)} means, {len(study.pairs)} paired comparisons, "
                  f"{len(study.correlation)} correlations]")
            print("  load average: " + ", ".join(f"{v:.2f}" for v in os.getloadavg()))


if __name__ == "__main__":
    main()
