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


def chunk_query_scores(ranking: list[str], doc_of: dict[str, str], grades: dict[str, float], k: int,
                       min_grade: float = 1) -> dict[str, float]:
    """Every metric at cutoff k for one query whose ranking lists chunks (in order, without repeats): k counts
    chunks, relevance is the chunk's document's, and a document found by several chunks counts once (for recall,
    hit, nDCG and the reciprocal rank; precision counts each chunk of a relevant document, judged each chunk of a
    judged one)."""
    relevant = {d for d, g in grades.items() if g >= min_grade}
    top = ranking[:k]
    docs_found = {doc_of[c] for c in top if doc_of[c] in relevant}
    recall = len(docs_found) / len(relevant) if relevant else 0.0
    hit = 1.0 if docs_found else 0.0
    precision = sum(1 for c in top if doc_of[c] in relevant) / k
    seen: set[str] = set()
    dcg = 0.0
    for i, chunk in enumerate(top):
        doc = doc_of[chunk]
        if doc not in seen:
            dcg += max(grades.get(doc, 0.0), 0.0) / math.log2(i + 2)
            seen.add(doc)
    ideal = sorted((g for g in grades.values() if g > 0), reverse=True)[:k]
    idcg = sum(g / math.log2(i + 2) for i, g in enumerate(ideal))
    ndcg = dcg / idcg if idcg > 0 else 0.0
    judged = sum(1 for c in top if doc_of[c] in grades) / len(top) if top else 0.0
    rr = 0.0
    for i, chunk in enumerate(ranking):
        if doc_of[chunk] in relevant:
            rr = 1.0 / (i + 1)
            break
    return {"recall": recall, "hit": hit, "precision": precision, "ndcg": ndcg, "judged": judged, "rr": rr}


def evidence_query_scores(ranking: list[str], place: dict[str, tuple[str, int, int]],
                          spans: list[tuple[str, int, int]], k: int) -> tuple[float, float]:
    """Evidence recall and precision at k for one query, with sets of characters: ``place`` gives each chunk's
    (document, start, end), ``spans`` the query's evidence as (document, start, end)."""
    evidence = {(doc, c) for doc, start, end in spans for c in range(start, end)}
    covered = {(place[chunk][0], c) for chunk in ranking[:k] for c in range(place[chunk][1], place[chunk][2])}
    found = len(evidence & covered)
    return (found / len(evidence) if evidence else 0.0), (found / len(covered) if covered else 0.0)


def kneedle(curve: list[float]) -> int | None:
    """Kneedle as the paper draws it, one curve at a time: scale both axes to [0, 1], take the k farthest above the
    diagonal (the first on ties), none for a flat curve or one that never rises above the line."""
    depth = len(curve)
    if depth < 3 or max(curve) - min(curve) <= 1e-12:
        return None
    best, best_gap = None, 1e-12
    for i, y in enumerate(curve):
        gap = (y - min(curve)) / (max(curve) - min(curve)) - i / (depth - 1)
        if gap > best_gap:
            best, best_gap = i + 1, gap
    return best
