"""The Sources page's model called directly: the customers-versus-team gap it opens on, each source's numbers ranked,
sources too small to rank last; the same gaps as the core's `segment_gaps` computed here again."""

from __future__ import annotations

import pytest

from evalcore.analyses.segments import segment_gaps
from evalcore.analyses.slices import DEFAULT_MIN_SLICE_N
from evalcore.report.amounts import format_interval
from evalcore.report.headlines import sources_headline

from dashboard import loading
from dashboard.page_models import integrity, sources

RUNS = ("base", "tuned", "tuned-256d")


def core_gaps(dataset, k: int, min_n: int = DEFAULT_MIN_SLICE_N):
    return segment_gaps(loading.evaluation(dataset).value, "source", sources.metrics_at(k), min_n=min_n)


def test_the_page_opens_on_the_cores_gap_between_customers_and_the_team(sample):
    found = sources.by_source(sample, 10, "recall@k", DEFAULT_MIN_SLICE_N, RUNS)
    assert found.ok
    shown, core = found.value, core_gaps(sample, 10)
    assert shown.metric == "recall@10"
    assert shown.headline == sources_headline(core.gaps, "recall@10", list(RUNS), core.min_n)
    assert shown.headline.startswith("Customers' queries score 12 points lower on recall@10 than team-written ones")
    expected = core.gaps[core.gaps["metric"] == "recall@10"].set_index("run")
    assert [line.verdict for line in shown.gaps] == ["lower"] * 3
    base = expected.loc["base"]
    assert shown.gaps[0].sentence == (
        "base: customers' queries score 11.7 points lower on recall@10 than team-written ones (95% CI "
        f"{format_interval(-base['ci_high'], -base['ci_low'], metric='recall', join=' to ')}; n = 182 vs 42).")
    assert integrity.source_gaps(sample, 10, RUNS).value[0] == shown.gaps[0].sentence  # Integrity says the same


def test_each_runs_sources_are_ranked_best_first(sample):
    shown = sources.by_source(sample, 10, "recall@k", DEFAULT_MIN_SLICE_N, RUNS).value
    base = shown.table[shown.table["run"] == "base"]
    assert base["source"].tolist() == ["team_written", "support_ticket", "search_log", "failed_search"]
    assert base["status"].tolist() == [f"rank {i} of 4 on recall@10" for i in range(1, 5)]
    assert base["recall@10"].is_monotonic_decreasing
    per_source = loading.labels(sample.labels).value.field("source")  # the whole file, holdout included
    counts = per_source[per_source.index.isin(loading.evaluation(sample).value.results[0].queries)].value_counts()
    assert dict(zip(base["source"], base["n"])) == counts.to_dict()
    assert sum(base["n"]) == 224
    segment = core_gaps(sample, 10).segments.set_index(["run", "value", "metric"]).loc[("base", "search_log", "mrr")]
    row = base.set_index("source").loc["search_log"]
    assert row["mrr"] == pytest.approx(segment["mean"])
    assert row["mrr 95% CI"] == format_interval(segment["ci_low"], segment["ci_high"])
    assert shown.metrics == sources.metrics_at(10) and list(shown.order)


def test_sources_under_the_fewest_queries_are_too_few_and_listed_last(sample):
    shown = sources.by_source(sample, 10, "mrr", 50, ("base",)).value
    assert shown.metric == "mrr"
    assert shown.table["source"].tolist() == ["support_ticket", "search_log", "failed_search", "team_written"]
    assert shown.table["status"].tolist() == ["rank 1 of 2 on mrr", "rank 2 of 2 on mrr", sources.TOO_FEW,
                                              sources.TOO_FEW]  # 75 and 60 queries ranked; 47 and 42 too few
    assert shown.headline.startswith("Too few queries to compare")


def test_labels_without_a_source_cannot_be_split(make_dataset):
    dataset = make_dataset({"q1": ["d1"], "q2": ["d2"]}, {"one": {"q1": ["d1"], "q2": ["x"]}})
    assert not sources.has_source(dataset)
    assert integrity.source_gaps(dataset, 10, ("one",)) is None
    found = sources.by_source(dataset, 10, "recall@k", 1, ("one",))
    assert not found.ok and "source" in found.error


def test_one_source_has_no_gap_and_says_why(make_dataset):
    relevant = {f"q{i}": [f"d{i}"] for i in range(1, 5)}
    dataset = make_dataset(relevant, {"one": {q: ["x", docs[0]] for q, docs in relevant.items()}},
                           sources={q: "support_ticket" for q in relevant})
    shown = sources.by_source(dataset, 10, "recall@k", 1, ("one",)).value
    assert shown.pair is None and shown.headline is None and shown.gaps == []
    assert shown.note and shown.gap_table.empty
    assert shown.table[["source", "n", "recall@10"]].values.tolist() == [["support_ticket", 4, 1.0]]


def test_k_larger_than_the_lists_splits_what_they_hold(make_dataset):
    relevant = {f"q{i}": [f"d{i}"] for i in range(1, 7)}
    who = {q: ("team_written" if int(q[1:]) <= 3 else "support_ticket") for q in relevant}
    ranked = {q: (docs if who[q] == "team_written" else ["x"]) for q, docs in relevant.items()}
    dataset = make_dataset(relevant, {"one": ranked}, sources=who)
    shown = sources.by_source(dataset, 60, "recall@k", 1, ("one",)).value
    assert shown.metric == "recall@60"
    by_source = shown.table.set_index("source")["recall@60"].to_dict()
    assert by_source == {"team_written": 1.0, "support_ticket": 0.0}
    assert [line.verdict for line in shown.gaps] == ["lower"]
