"""A slow, obviously-correct implementation of docs/metrics.md, one query at a time, for the tests.

Written from the SPEC's table with plain Python lists and no vectorisation, so that the fast
code can be checked against something a reader can verify line by line.
"""

from __future__ import annotations

import math


def order_scored(pairs: list[tuple[str, float]]) -> list[str]:
    """TREC order: score descending, ties by doc id descending; a repeated doc keeps its best place."""
    ranked = sorted(pairs, key=lambda p: (p[1], p[0]), reverse=True)
    seen, out = set(), []
    for doc, _ in ranked:
        if doc not in seen:
            seen.add(doc)
            out.append(doc)
    return out


def query_scores(ranking: list[str], grades: dict[str, float], k: int, min_grade: float = 1) -> dict[str, float]:
    """Every metric at cutoff k for one query; ``ranking`` is already in order, without repeats."""
    relevant = {d for d, g in grades.items() if g >= min_grade}
    top = ranking[:k]
    found = sum(1 for d in top if d in relevant)
    recall = found / len(relevant) if relevant else 0.0
    hit = 1.0 if found > 0 else 0.0
    precision = found / k
    dcg = sum(max(grades.get(d, 0.0), 0.0) / math.log2(i + 2) for i, d in enumerate(top))
    ideal = sorted((g for g in grades.values() if g > 0), reverse=True)[:k]
    idcg = sum(g / math.log2(i + 2) for i, g in enumerate(ideal))
    ndcg = dcg / idcg if idcg > 0 else 0.0
    judged = sum(1 for d in top if d in grades) / len(top) if top else 0.0
    rr = 0.0
    for i, d in enumerate(ranking):
        if d in relevant:
            rr = 1.0 / (i + 1)
            break
    return {"recall": recall, "hit": hit, "precision": precision, "ndcg": ndcg, "judged": judged, "rr": rr}


def mean_scores(
    rankings: dict[str, list[str]], labels: dict[str, dict[str, float]], k: int, min_grade: float = 1
) -> dict[str, float]:
    """Means over labeled queries with at least one relevant doc; a query missing from the run scores 0."""
    evaluated = [q for q, g in labels.items() if any(v >= min_grade for v in g.values())]
    totals: dict[str, float] = {}
    for query in evaluated:
        scores = query_scores(rankings.get(query, []), labels[query], k, min_grade)
        for name, value in scores.items():
            totals[name] = totals.get(name, 0.0) + value
    return {name: value / len(evaluated) for name, value in totals.items()}
