"""The vectorised metrics equal a slow reference on generated inputs, and obey invariants."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import evalcore
from evalcore.metrics.measures import CUTOFF_MEASURES

from reference import mean_scores, order_scored, query_scores

DOCS = [f"d{i}" for i in range(12)]
QUERIES = [f"q{i}" for i in range(6)]

labels_strategy = st.dictionaries(
    st.sampled_from(QUERIES),
    st.dictionaries(st.sampled_from(DOCS), st.sampled_from([-1, 0, 0, 1, 1, 2, 3]), min_size=1, max_size=6),
    min_size=1,
)
# Scores from a tiny set so ties (and ties across cutoffs) are common; docs may repeat.
run_strategy = st.dictionaries(
    st.sampled_from(QUERIES + ["unlabeled"]),
    st.lists(st.tuples(st.sampled_from(DOCS), st.sampled_from([0.1, 0.5, 0.5, 0.9, 1.0])), min_size=1, max_size=15),
    min_size=1,
)


def run_frame(run: dict[str, list[tuple[str, float]]]) -> pd.DataFrame:
    rows = [(q, d, s) for q, pairs in run.items() for d, s in pairs]
    return pd.DataFrame(rows, columns=["query", "doc_id", "score"])


def has_relevant(labels: dict, min_grade: float) -> bool:
    return any(g >= min_grade for grades in labels.values() for g in grades.values())


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(labels=labels_strategy, run=run_strategy, k=st.integers(1, 8), min_grade=st.sampled_from([1, 2]))
def test_fast_equals_reference(labels, run, k, min_grade) -> None:
    if not has_relevant(labels, min_grade):
        return
    result = evalcore.evaluate(run_frame(run), labels, k=k, min_grade=min_grade)
    rankings = {q: order_scored(pairs) for q, pairs in run.items()}
    expected_means = mean_scores(rankings, labels, k, min_grade)
    for name in CUTOFF_MEASURES:
        assert result[f"{name}@{k}"] == pytest.approx(expected_means[name], abs=1e-12), name
    assert result["mrr"] == pytest.approx(expected_means["rr"], abs=1e-12)
    per_query = result.per_query().set_index("query")
    for query in per_query.index:
        expected = query_scores(rankings.get(query, []), labels[query], k, min_grade)
        assert per_query.loc[query, f"recall@{k}"] == pytest.approx(expected["recall"], abs=1e-12)
        assert per_query.loc[query, f"ndcg@{k}"] == pytest.approx(expected["ndcg"], abs=1e-12)
        assert per_query.loc[query, "rr"] == pytest.approx(expected["rr"], abs=1e-12)


@settings(max_examples=150, deadline=None)
@given(labels=labels_strategy, run=run_strategy)
def test_invariants(labels, run) -> None:
    if not has_relevant(labels, 1):
        return
    result = evalcore.evaluate(run_frame(run), labels, k=10)
    recall = result.scores.recall
    hit = result.scores.hit
    # recall@k never decreases as k grows, per query
    assert (np.diff(recall, axis=1) >= -1e-15).all()
    # hit@k >= recall@k, and MRR <= hit@depth
    assert (hit >= recall - 1e-15).all()
    assert result["mrr"] <= np.mean(result.ranked.first_relevant > 0) + 1e-15  # MRR <= hit@infinity
    for matrix in (recall, hit, result.scores.precision, result.scores.ndcg, result.scores.judged):
        assert ((matrix >= 0) & (matrix <= 1 + 1e-12)).all()


@settings(max_examples=80, deadline=None)
@given(labels=labels_strategy, run=run_strategy, seed=st.integers(0, 2**32 - 1))
def test_query_order_does_not_change_the_mean(labels, run, seed) -> None:
    if not has_relevant(labels, 1):
        return
    frame = run_frame(run)
    shuffled = frame.sample(frac=1.0, random_state=np.random.RandomState(seed % 2**32))
    label_items = list(labels.items())
    np.random.default_rng(seed).shuffle(label_items)
    a = evalcore.evaluate(frame, labels, k=5)
    b = evalcore.evaluate(shuffled, dict(label_items), k=5)
    for measure in a.measures:
        assert a[measure] == pytest.approx(b[measure], abs=1e-12)


def test_trec_file_matches_reference(tmp_path) -> None:
    rng = np.random.default_rng(7)
    labels = {f"q{i}": {f"d{j}": int(rng.integers(0, 3)) for j in rng.choice(40, 8, replace=False)}
              for i in range(30)}
    lines, pairs = [], {}
    for i in range(30):
        scores = np.round(rng.random(25), 2)  # rounding makes ties
        docs = rng.choice(40, 25, replace=False)
        pairs[f"q{i}"] = [(f"d{d}", float(s)) for d, s in zip(docs, scores)]
        lines += [f"q{i} Q0 d{d} {r + 1} {s:.2f} tag" for r, (d, s) in enumerate(zip(docs, scores))]
    path = tmp_path / "run.trec"
    path.write_text("\n".join(lines) + "\n")
    result = evalcore.evaluate(path, labels, k=(3, 10))
    rankings = {q: order_scored(p) for q, p in pairs.items()}
    for k in (3, 10):
        expected = mean_scores(rankings, labels, k)
        for name in CUTOFF_MEASURES:
            assert result[f"{name}@{k}"] == pytest.approx(expected[name], abs=1e-12)
    assert result["mrr"] == pytest.approx(mean_scores(rankings, labels, 3)["rr"], abs=1e-12)
