"""Failure listing and drill-downs agree with a slow, obviously-correct reading of the same files."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

import evalcore
from evalcore import UsageError
from evalcore.safe_text import to_csv
from evalcore.analyses.failures import (
    FAILURE_COLUMNS, MARK_NON_RELEVANT, MARK_RELEVANT, MARK_UNJUDGED, SORT_ORDERS, disagreements, drill_down,
    filter_failures, landed, landed_text, missed_queries, neighbours, query_sequence, relevant_ranks, sort_failures,
)

SEED_LABELS = {"refund timing": {"policy-refunds": 1, "faq-returns": 1},
               "reset my password": {"acct-recovery": 1},
               "enterprise sso": {"pricing-enterprise": 1}}
SEED_RUN = {"refund timing": ["policy-refunds", "faq-shipping", "faq-returns"],
            "reset my password": ["faq-login", "acct-recovery", "policy-privacy"],
            "enterprise sso": ["faq-login", "policy-refunds", "pricing-enterprise"]}


def seed_evaluation(depth: int = 5) -> evalcore.Evaluation:
    run = evalcore.read_run(SEED_RUN, name="seed")
    return evalcore.evaluate_runs([run], SEED_LABELS, k=depth)


def test_seed_example_misses_at_k1() -> None:
    ev = seed_evaluation()
    table = missed_queries(ev, 1, mode="any")
    assert list(table.columns) == FAILURE_COLUMNS
    assert set(table["query"]) == {"refund timing", "reset my password", "enterprise sso"}
    row = table.set_index("query").loc["refund timing"]
    assert (row["n_relevant"], row["found"], row["recall"], row["first_rank"], row["ranks"]) == (2, 1, 0.5, 1, "1, 3")
    assert table.set_index("query").loc["enterprise sso", "ranks"] == "3"
    # "No relevant doc in the top k at all" drops the query that found one of its two docs.
    none = missed_queries(ev, 1, mode="none")
    assert set(none["query"]) == {"reset my password", "enterprise sso"}
    # At k = 3 everything is found.
    assert missed_queries(ev, 3, mode="any").empty
    # Context travels with every row (docs/metrics.md).
    assert set(table["k"]) == {1} and set(table["n"]) == {3} and set(table["model"]) == {"seed"}
    assert set(table["fingerprint"]) == {ev.labels.fingerprint}


def test_worst_first_order() -> None:
    ev = seed_evaluation()
    order = missed_queries(ev, 1, mode="any")["query"].tolist()
    # recall 0 before recall 0.5; among recall 0 the deeper first relevant doc first.
    assert order == ["enterprise sso", "reset my password", "refund timing"]


def random_case(seed: int, n_queries: int = 40, n_docs: int = 30, depth: int = 12):
    rng = np.random.default_rng(seed)
    labels_rows, runs = [], {}
    for q in range(n_queries):
        judged = rng.choice(n_docs, size=rng.integers(1, 6), replace=False)
        for d in judged:
            labels_rows.append((f"q{q}", f"d{d}", int(rng.choice([0, 1, 2], p=[0.4, 0.4, 0.2]))))
    for name in ("a", "b"):
        ranking = {}
        for q in range(n_queries):
            if rng.random() < 0.1:
                continue  # the run has no ranking for this query
            length = int(rng.integers(3, depth + 6))
            ranking[f"q{q}"] = [f"d{d}" for d in rng.choice(n_docs, size=min(length, n_docs), replace=False)]
        runs[name] = ranking
    labels = pd.DataFrame(labels_rows, columns=["query", "doc_id", "grade"])
    return labels, runs


def slow_ranks(labels: pd.DataFrame, ranking: dict, query: str) -> list[tuple[str, object]]:
    relevant = labels[(labels["query"] == query) & (labels["grade"] >= 1)]["doc_id"].tolist()
    listed = ranking.get(query)
    out = []
    for doc in relevant:
        if listed is None:
            out.append((doc, "query not in run"))
        elif doc in listed:
            out.append((doc, listed.index(doc) + 1))
        else:
            out.append((doc, f"not in its top {len(listed)}"))
    return out


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("k", [1, 3, 10])
def test_missed_queries_match_a_slow_reading(seed: int, k: int) -> None:
    labels, runs = random_case(seed)
    ev = evalcore.evaluate_runs([evalcore.read_run(r, name=n) for n, r in runs.items()], labels, k=12)
    where = landed(ev)
    for mode in ("any", "none"):
        table = missed_queries(ev, k, mode=mode, where=where)
        for name, ranking in runs.items():
            expected = {}
            for query in ev.results[0].queries:
                spots = slow_ranks(labels, ranking, query)
                found = sum(1 for _, r in spots if isinstance(r, int) and r <= k)
                missed = found < len(spots) if mode == "any" else found == 0
                if missed:
                    ordered = sorted(spots, key=lambda x: (not isinstance(x[1], int),
                                                            x[1] if isinstance(x[1], int) else 0, x[0]))
                    words = ", ".join(str(r) for _, r in ordered)
                    expected[query] = (len(spots), found, words)
            mine = table[table["run"] == name]
            got = {row.query: (row.n_relevant, row.found, row.ranks) for row in mine.itertuples()}
            assert got == expected, (name, mode)
            # recall in the table is the evaluation's own recall@k
            scores = dict(zip(ev[name].queries, ev[name].score(f"recall@{k}")))
            assert all(scores[row.query] == row.recall for row in mine.itertuples())


def test_missed_queries_agree_with_metrics() -> None:
    labels, runs = random_case(7, n_queries=80)
    ev = evalcore.evaluate_runs([evalcore.read_run(r, name=n) for n, r in runs.items()], labels, k=12)
    for k in (1, 5, 12):
        for result in ev:
            any_missed = missed_queries(ev, k, mode="any", runs=[result.name])
            none_found = missed_queries(ev, k, mode="none", runs=[result.name])
            assert len(any_missed) == int((result.score(f"recall@{k}") < 1).sum())
            assert len(none_found) == int((result.score(f"hit@{k}") == 0).sum())
            assert set(none_found["query"]) <= set(any_missed["query"])


def test_relevant_doc_below_the_evaluated_depth_keeps_its_rank() -> None:
    labels = {"q": {"x": 1}}
    run = {"q": [f"d{i}" for i in range(7)] + ["x", "d8"]}
    ev = evalcore.evaluate_runs([evalcore.read_run(run, name="r")], labels, k=5)
    ranks = relevant_ranks(ev)
    assert ranks["rank"].tolist() == [8] and ranks["n_returned"].tolist() == [9]
    assert missed_queries(ev, 5, mode="any")["ranks"].tolist() == ["8"]


def test_query_absent_from_run_and_ids_stay_strings() -> None:
    labels = {"007": ["a"], "7": ["b"]}
    run = {"7": ["b", "c"]}
    ev = evalcore.evaluate_runs([evalcore.read_run(run, name="r")], labels, k=3)
    table = missed_queries(ev, 1, mode="any").set_index("query")
    assert list(table.index) == ["007"]
    assert table.loc["007", "ranks"] == "query not in run"
    assert pd.isna(table.loc["007", "first_rank"])
    dd = drill_down(ev, "007", 1)
    assert dd.relevant["r"].tolist() == ["query not in run"]
    assert dd.ranking("r").empty and dd.notes


def test_landed_text() -> None:
    assert landed_text(14, 100, True) == "rank 14"
    assert landed_text(None, 100, True) == "not in its top 100"
    assert landed_text(pd.NA, 50, True) == "not in its top 50"
    assert landed_text(None, 0, False) == "query not in run"


def test_drill_down_marks_every_doc() -> None:
    labels = pd.DataFrame({"query": ["q", "q", "q", "q"], "doc_id": ["r1", "r2", "n1", "r3"], "grade": [2, 1, 0, 1],
                           "query_text": ["how do I <b>reset</b> **it**"] * 4, "source": ["support_ticket"] * 4})
    run = {"q": ["n1", "u1", "r2", "u2", "r1"]}
    other = {"q": ["r1", "r2"]}
    docs = evalcore.read_documents({"r1": "first relevant", "n1": "=not relevant", "u1": "unjudged"})
    ev = evalcore.evaluate_runs([evalcore.read_run(run, name="a"), evalcore.read_run(other, name="b")], labels, k=10)
    dd = drill_down(ev, "q", 3, documents=docs)
    assert dd.query_text == "how do I <b>reset</b> **it**" and dd.source == "support_ticket"
    a = dd.ranking("a")
    assert a["mark"].tolist() == [MARK_NON_RELEVANT, MARK_UNJUDGED, MARK_RELEVANT, MARK_UNJUDGED, MARK_RELEVANT]
    assert a["in_top_k"].tolist() == [True, True, True, False, False]
    assert a["text"].tolist()[:2] == ["=not relevant", "unjudged"] and a["text"].isna().sum() == 2
    relevant = dd.relevant.set_index("doc_id")
    assert relevant.loc["r1", "a"] == "rank 5" and relevant.loc["r1", "b"] == "rank 1"
    assert relevant.loc["r3", "a"] == "not in its top 5" and relevant.loc["r3", "b"] == "not in its top 2"
    assert relevant.loc["r1", "text"] == "first relevant"
    assert dd.judged_non_relevant == 1
    scores = dd.scores.set_index("run")
    assert scores.loc["a", "recall@3"] == pytest.approx(1 / 3) and scores.loc["b", "rr"] == 1.0
    json.dumps(dd.to_dict(), allow_nan=False)  # plain types, no NaN
    with pytest.raises(UsageError):
        drill_down(ev, "not a query", 3)
    with pytest.raises(UsageError):
        dd.ranking("zzz")


def test_disagreements_biggest_first() -> None:
    labels = {"q1": ["x"], "q2": ["x", "y"], "q3": ["x"], "q4": ["x"]}
    a = {"q1": ["x"], "q2": ["x", "y"], "q3": ["o1", "o2", "o3", "o4", "o5", "x"], "q4": ["x"]}
    b = {"q1": ["o1", "o2", "o3", "x"], "q2": ["x", "o1", "y"], "q3": ["x"], "q4": ["x"]}
    ev = evalcore.evaluate_runs([evalcore.read_run(a, name="a"), evalcore.read_run(b, name="b")], labels, k=5)
    table = disagreements(ev, 2, "a", "b", mode="any")
    # Full gaps first, the one whose missing run buried the doc deepest (rank 6 vs rank 4) first.
    assert table["query"].tolist() == ["q3", "q1", "q2"]
    by_query = table.set_index("query")
    assert (by_query.loc["q3", "gets"], by_query.loc["q3", "misses"]) == ("b", "a")
    assert by_query.loc["q3", "ranks_misses"] == "6" and by_query.loc["q1", "first_rank_misses"] == 4
    assert by_query.loc["q2", "gap"] == pytest.approx(0.5)
    assert table["gap"].is_monotonic_decreasing
    none_mode = disagreements(ev, 2, "a", "b", mode="none")
    assert none_mode["query"].tolist() == ["q3", "q1"]
    with pytest.raises(UsageError):
        disagreements(ev, 1, "a", "a")


def test_filters_sort_and_walk() -> None:
    labels = pd.DataFrame({"query": ["q1", "q2", "q3"], "doc_id": ["x", "x", "x"], "grade": [1, 1, 1],
                           "query_text": ["make.com (zapier)", "Reset PASSWORD", "=cmd|calc"],
                           "source": ["search_log", "support_ticket", ""]})
    run = {"q1": ["o", "x"], "q2": ["o", "o2", "x"], "q3": ["o"]}
    ev = evalcore.evaluate_runs([evalcore.read_run(run, name="r")], labels, k=5)
    table = missed_queries(ev, 1, mode="any")
    assert filter_failures(table, text="make.com (")["query"].tolist() == ["q1"]  # literal, not a pattern
    assert filter_failures(table, text="password")["query"].tolist() == ["q2"]  # case-insensitive
    assert filter_failures(table, text="Q3")["query"].tolist() == ["q3"]  # ids match too
    assert filter_failures(table, sources=["(not set)"])["query"].tolist() == ["q3"]
    assert filter_failures(table, runs=["zzz"]).empty
    assert sort_failures(table, "query")["query"].tolist() == ["q1", "q2", "q3"]
    assert sort_failures(table, "first_rank")["query"].tolist() == ["q3", "q2", "q1"]
    sequence = query_sequence(table)
    assert neighbours(sequence, sequence[1]) == (sequence[0], sequence[2])
    assert neighbours(sequence, None) == (None, sequence[0])
    # Exported, the formula-looking query text is neutralised.
    assert "'=cmd|calc" in to_csv(table)


def test_bad_parameters() -> None:
    ev = seed_evaluation(depth=5)
    for bad in (0, 6, "3", True):
        with pytest.raises(UsageError):
            missed_queries(ev, bad)
    with pytest.raises(UsageError):
        missed_queries(ev, 1, mode="some")
    with pytest.raises(UsageError):
        missed_queries(ev, 1, runs=["nope"])
    with pytest.raises(UsageError):
        sort_failures(missed_queries(ev, 1), "best")


def test_sample_data_failures_are_consistent() -> None:
    from pathlib import Path
    root = Path(__file__).resolve().parents[2] / "sample_data"
    ev = evalcore.evaluate_runs([root / "base.trec", root / "tuned.trec"], root / "labels.tsv", k=100)
    where = landed(ev)
    for k in (1, 10, 100):
        table = missed_queries(ev, k, mode="any", where=where)
        for result in ev:
            assert (table["run"] == result.name).sum() == int((result.score(f"recall@{k}") < 1).sum())
    query = missed_queries(ev, 10, where=where)["query"].iloc[0]
    docs = evalcore.read_documents(root / "docs.jsonl")
    dd = drill_down(ev, query, 10, documents=docs, where=where)
    assert dd.relevant.equals(drill_down(ev, query, 10, documents=docs).relevant)
    assert len(dd.ranking("base")) == 100 and dd.relevant["text"].notna().all()


def test_a_run_that_answers_none_of_the_labeled_queries_still_has_a_failure_list() -> None:
    """Query ids that match no label: every relevant doc is 'query not in run', not a crash."""
    run = evalcore.read_run({"some other query": ["policy-refunds"]}, name="elsewhere")
    ev = evalcore.evaluate_runs([run], SEED_LABELS, k=5)
    where = landed(ev)
    assert len(where.frame) == 4 and where.frame["rank"].isna().all()
    assert set(missed_queries(ev, 5, where=where)["query"]) == set(SEED_LABELS)


def _slow_view(table: pd.DataFrame, runs=None, sources=None, text=None, order: str = "worst") -> list[tuple]:
    """(run, query) pairs of ``table`` narrowed and ordered by hand, from the words of SORT_ORDERS and the page."""
    run_position = {r: i for i, r in enumerate(dict.fromkeys(table["run"]))}
    rows = []
    for row in table.itertuples():
        source = row.source if isinstance(row.source, str) else "(not set)"
        needle = (text or "").strip().lower()
        if runs and row.run not in runs or sources and source not in sources:
            continue
        if needle and needle not in row.query.lower() and needle not in (row.query_text or "").lower():
            continue
        depth = -np.inf if pd.isna(row.first_rank) else -float(row.first_rank)  # none returned: deepest of all
        by_source = row.source if isinstance(row.source, str) else "\uffff"  # no source: last
        keys = {"worst": (row.recall, depth, row.query), "query": (row.query,), "first_rank": (depth, row.query),
                "source": (by_source, row.recall, depth, row.query)}[order]
        rows.append(((run_position[row.run], *keys), (row.run, row.query)))
    return [pair for _, pair in sorted(rows)]


@pytest.mark.parametrize("seed", [3, 4])
def test_failure_list_positions_agree_with_the_table(seed: int) -> None:
    """The dashboard narrows, orders and walks the list as positions (`FailureList`): every view of it must be the
    table the frame functions give, row for row, and the order a person reads in SORT_ORDERS (checked by hand)."""
    from evalcore.analyses.failures import failure_list

    labels, runs = random_case(seed, n_queries=60)
    labels["query_text"] = labels["query"].map(lambda q: f"How do I {q.upper()} (again)?")
    labels["source"] = labels["query"].map(lambda q: None if q.endswith("3") else ("chat" if len(q) % 2 else "log"))
    ev = evalcore.evaluate_runs([evalcore.read_run(r, name=n) for n, r in runs.items()], labels, k=12)
    where = landed(ev)
    for mode in ("any", "none"):
        rows = failure_list(ev, 4, mode=mode, where=where)
        table = missed_queries(ev, 4, mode=mode, where=where)
        pd.testing.assert_frame_equal(rows.frame(), table)
        pd.testing.assert_frame_equal(rows.frame(limit=5), table.head(5))
        for filters in ({}, {"runs": ["b"]}, {"sources": ["chat", "(not set)"]}, {"text": "q1"},
                        {"text": " (AGAIN) "}, {"runs": ["a"], "sources": ["log"], "text": "how"}):
            for order in SORT_ORDERS:
                mine = rows.filtered(**filters).ordered(order)
                expected = sort_failures(filter_failures(table, **filters), order)
                pd.testing.assert_frame_equal(mine.frame(), expected)
                assert list(zip(expected["run"], expected["query"])) == _slow_view(table, **filters, order=order)
                assert len(mine) == len(expected)
                assert mine.queries() == query_sequence(expected)
    opened = failure_list(ev, 4, where=where)
    asked = ["q1", "no such query"]
    assert opened.query_texts(asked) == {"q1": "How do I Q1 (again)?", "no such query": None}
    with pytest.raises(UsageError):
        opened.ordered("best")
    # Nothing left after a filter, or nothing missed: the same columns, the numbers typed as in a list with rows.
    numbers = ["n_relevant", "found", "recall", "first_rank", "k", "n"]
    seed = seed_evaluation()
    for empty, full in ((opened.filtered(text="no query has this").frame(), table),
                        (missed_queries(seed, 3), missed_queries(seed, 1))):
        assert list(empty.columns) == FAILURE_COLUMNS and empty.empty and not full.empty
        assert empty[numbers].dtypes.astype(str).tolist() == full[numbers].dtypes.astype(str).tolist()
