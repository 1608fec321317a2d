"""Peer for bench_evaluate.py: ranx (numba), end to end.

    python benchmarks/peer_ranx.py QRELS RUN

Loads both files with ``Qrels.from_file`` / ``Run.from_file`` (kind "trec"), evaluates the same
measures evalcore reports with ``ranx.evaluate`` and prints one JSON object whose keys use
evalcore's metric names (recall@k, precision@k, hit@k, ndcg@k, mrr).

ranx's ``ndcg`` uses the raw grade as gain (Jarvelin), like trec_eval's ``ndcg_cut``;
``hit_rate`` is trec_eval's ``success``.
"""

from __future__ import annotations

import json
import sys

from ranx import Qrels, Run, evaluate

KS = (1, 5, 10)

# ranx metric -> evalcore metric name
NAMES = {"mrr": "mrr"}
for _k in KS:
    NAMES[f"recall@{_k}"] = f"recall@{_k}"
    NAMES[f"precision@{_k}"] = f"precision@{_k}"
    NAMES[f"hit_rate@{_k}"] = f"hit@{_k}"
    NAMES[f"ndcg@{_k}"] = f"ndcg@{_k}"


def main(argv: list[str]) -> int:
    qrels_path, run_path = argv
    qrels = Qrels.from_file(qrels_path, kind="trec")
    run = Run.from_file(run_path, kind="trec")
    scores = evaluate(qrels, run, list(NAMES))
    means = {NAMES[key]: float(value) for key, value in scores.items()}
    json.dump({"tool": "ranx", "n_queries": len(run), "metrics": means}, sys.stdout)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
