"""The Failures page's model (and the presenter view's, which walks the same list) called directly: how many queries
each run fails at k, the list in its order, the runs compared; counted again here from the core's per-query scores."""

from __future__ import annotations

import evalcore
import numpy as np
import pytest

from evalcore.analyses import failures as core_failures
from evalcore.analyses.headline import best_run, failure_counts
from evalcore.metrics.split import scoring_labels
from evalcore.report.headlines import failures_headline

from dashboard import loading
from dashboard.page_models import failures, present

RUNS = ("base", "tuned", "tuned-256d")


def hits_at(k: int) -> dict[str, dict[str, float]]:
    """Each run's hit@k per scored query, from the sample's files scored by the core as ``evaluate --k 1,k``."""
    labels = scoring_labels(evalcore.read_labels(loading.SAMPLE_DIR / "labels.tsv"))
    runs = [evalcore.read_run(loading.SAMPLE_DIR / f"{name}.trec", name=name) for name in RUNS]
    evaluation = labels.evaluate(runs, k=(1, k))
    return {r.name: dict(zip(r.queries.tolist(), r.score(f"hit@{k}").tolist())) for r in evaluation.results}


def test_the_failure_counts_are_the_queries_with_nothing_relevant_in_the_top_k(sample):
    missed = failures.missed_at_k(sample, 10, "none", RUNS, (), "", "worst")
    hits = hits_at(10)
    expected = {run: sum(1 for hit in per_query.values() if hit == 0) for run, per_query in hits.items()}
    assert expected == {"base": 22, "tuned": 22, "tuned-256d": 25}
    assert missed.counts.startswith("base: 22 of 224 queries found nothing relevant at k = 10; tuned: 22 of 224")
    assert missed.table.per_run() == expected
    failed = {(run, q) for run, per_query in hits.items() for q, hit in per_query.items() if hit == 0}
    assert set(zip(missed.table.frame()["run"], missed.table.frame()["query"])) == failed
    assert len(missed.shown) == len(failed) and missed.more is None  # 69 rows: all on the page


def test_the_headline_is_the_cores_failure_counts_in_words(sample):
    said = failures.headline(sample, 10, "none", RUNS)
    evaluation = loading.evaluation(sample).value
    assert said == failures_headline(failure_counts(evaluation, 10, mode="none", runs=list(RUNS)))
    assert said.startswith("At k = 10, 22 of 224 queries (10%) found nothing relevant with base")


def test_the_list_runs_in_run_order_worst_first_and_the_presenter_walks_it(sample):
    missed = failures.missed_at_k(sample, 10, "any", RUNS, (), "", "worst")
    frame = missed.table.frame()
    blocks = list(dict.fromkeys(frame["run"]))
    assert blocks == list(RUNS)
    for run in RUNS:
        recall = frame.loc[frame["run"] == run, "recall"].to_numpy()
        assert np.all(np.diff(recall) >= 0), f"{run}: least recall first"
    evaluation = loading.evaluation(sample).value
    core = core_failures.failure_list(evaluation, 10, mode="any").ordered("worst")
    assert missed.sequence == core.queries()
    assert present.sequence(sample, 10, "any", RUNS, (), "", "worst") == missed.sequence
    first = missed.shown.iloc[0]
    assert first["found"] == f"{int(frame.iloc[0]['found'])} of {int(frame.iloc[0]['n_relevant'])}"


def test_a_source_filter_counts_only_its_queries(sample):
    everything = failures.missed_at_k(sample, 10, "none", RUNS, (), "", "worst")
    customers = failures.missed_at_k(sample, 10, "none", RUNS, ("support_ticket",), "", "worst")
    assert set(customers.shown["source"]) == {"support_ticket"}
    assert 0 < len(customers.table) < len(everything.table)
    assert customers.counts.endswith("Only the queries matching the filters above are counted.")
    assert "support_ticket" in failures.source_values(sample)


def test_runs_compared_counts_what_one_gets_and_the_other_misses(sample):
    compared = failures.runs_compared(sample, 10, "tuned", "base", "none", (), "")
    hits = hits_at(10)
    tuned_only = sum(1 for q in hits["tuned"] if hits["tuned"][q] == 1 and hits["base"][q] == 0)
    base_only = sum(1 for q in hits["tuned"] if hits["base"][q] == 1 and hits["tuned"][q] == 0)
    assert compared.caption.startswith(f"tuned gets {tuned_only} queries that base misses; base gets {base_only}")
    assert int((compared.frame["gets"] == "tuned").sum()) == tuned_only
    ranked = failures.ranked_runs(sample, RUNS)
    found = best_run(loading.evaluation(sample).value, list(RUNS))
    assert ranked == (found.best, *(c.run for c in found.comparisons)) == ("tuned", "tuned-256d", "base")


def test_a_run_that_finds_nothing_fails_every_query(make_dataset):
    relevant = {f"q{i}": [f"d{i}"] for i in range(1, 5)}
    dataset = make_dataset(relevant, {"finds": relevant, "nothing": {q: ["x1", "x2"] for q in relevant}})
    missed = failures.missed_at_k(dataset, 10, "none", ("finds", "nothing"), (), "", "worst")
    assert missed.table.per_run() == {"finds": 0, "nothing": 4}
    assert "nothing: 4 of 4 queries found nothing relevant at k = 10" in missed.counts
    assert set(missed.shown["first_rank"]) == {"not in its top 2"}
    assert set(missed.shown["found"]) == {"0 of 1"}


def test_one_query_missed_by_one_run_is_a_list_of_one(make_dataset):
    dataset = make_dataset({"q1": ["d1"]}, {"first": {"q1": ["d1"]}, "second": {"q1": ["x1", "x2", "d1"]}})
    missed = failures.missed_at_k(dataset, 2, "none", ("first", "second"), (), "", "worst")
    assert missed.sequence == ["q1"]
    assert missed.shown[["run", "first_rank"]].values.tolist() == [["second", "3"]]
    assert failures.selected_row(missed.shown, "q1") == [0] and failures.selected_row(missed.shown, "q9") == []


def test_tied_runs_miss_the_same_queries_and_compare_to_nothing(make_dataset):
    relevant = {f"q{i}": [f"d{i}"] for i in range(1, 7)}
    ranked = {q: (["x"] if int(q[1:]) % 3 == 0 else docs) for q, docs in relevant.items()}
    dataset = make_dataset(relevant, {"one": ranked, "other": ranked})
    missed = failures.missed_at_k(dataset, 5, "none", ("one", "other"), (), "", "worst")
    assert missed.table.per_run() == {"one": 2, "other": 2}
    assert missed.sequence == ["q3", "q6"]
    compared = failures.runs_compared(dataset, 5, "one", "other", "none", (), "")
    assert compared.frame.empty and compared.caption.startswith("one gets 0 queries that other misses; other gets 0")


@pytest.mark.parametrize("k", [3, 50])
def test_k_larger_than_the_lists_misses_what_they_never_returned(make_dataset, k):
    relevant = {"q1": ["d1"], "q2": ["d2"], "q3": ["d3"]}
    dataset = make_dataset(relevant, {"short": {"q1": ["x", "y", "d1"], "q2": ["d2"], "q3": ["x", "y"]}})
    missed = failures.missed_at_k(dataset, k, "none", ("short",), (), "", "worst")
    assert missed.sequence == ["q3"]
    assert f"short: 1 of 3 queries found nothing relevant at k = {k}" in missed.counts
