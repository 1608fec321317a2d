"""Peer for bench_evaluate.py: pytrec_eval (trec_eval's C code), end to end.

    python benchmarks/peer_pytrec_eval.py QRELS RUN

Parses both files with pytrec_eval's own parsers, evaluates the same measures evalcore
reports, averages over the evaluated queries and prints one JSON object whose keys use
evalcore's metric names (recall@k, precision@k, hit@k, ndcg@k, mrr).
"""

from __future__ import annotations

import json
import sys

import pytrec_eval

KS = (1, 5, 10)

# pytrec_eval key -> evalcore metric name
NAMES = {"recip_rank": "mrr"}
for _k in KS:
    NAMES[f"recall_{_k}"] = f"recall@{_k}"
    NAMES[f"P_{_k}"] = f"precision@{_k}"
    NAMES[f"success_{_k}"] = f"hit@{_k}"
    NAMES[f"ndcg_cut_{_k}"] = f"ndcg@{_k}"


def main(argv: list[str]) -> int:
    qrels_path, run_path = argv
    with open(qrels_path) as f:
        qrels = pytrec_eval.parse_qrel(f)
    with open(run_path) as f:
        run = pytrec_eval.parse_run(f)
    cutoffs = ",".join(str(k) for k in KS)
    measures = {f"recall.{cutoffs}", f"P.{cutoffs}", f"success.{cutoffs}", f"ndcg_cut.{cutoffs}", "recip_rank"}
    per_query = pytrec_eval.RelevanceEvaluator(qrels, measures).evaluate(run)
    n = len(per_query)
    sums = dict.fromkeys(NAMES, 0.0)
    for scores in per_query.values():
        for key in NAMES:
            sums[key] += scores[key]
    means = {NAMES[key]: (total / n if n else 0.0) for key, total in sums.items()}
    json.dump({"tool": "pytrec_eval", "n_queries": n, "metrics": means}, sys.stdout)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
