"""The Overview's model called directly: the best run named, each run's hit@1, recall@k and MRR with their intervals,
the paired comparison; the same numbers as the core's ``evaluate --k 1,k`` and ``compare`` on the scored queries."""

from __future__ import annotations

import evalcore
import pytest

from evalcore.analyses.compare import compare_evaluation
from evalcore.analyses.headline import best_run, headline_means
from evalcore.metrics.split import scoring_labels
from evalcore.report.amounts import format_interval
from evalcore.report.headlines import best_run_line, overview_evidence

from dashboard import loading
from dashboard.page_models import overview

SAMPLE = loading.SAMPLE_DIR


def core_evaluation(k: int):
    """The sample scored as ``evalcore evaluate --k 1,k`` scores it: the files read again, the tune split."""
    labels = scoring_labels(evalcore.read_labels(SAMPLE / "labels.tsv"))
    runs = [evalcore.read_run(SAMPLE / f"{name}.trec", name=name) for name in ("base", "tuned", "tuned-256d")]
    return labels.evaluate(runs, k=(1, k))


def test_the_sample_opens_on_tuned_the_run_the_core_names_best(sample):
    runs = tuple(sample.run_names)
    said = overview.headline(sample, runs)
    found = best_run(loading.evaluation(sample).value, list(runs))
    assert found.best == "tuned"
    assert said.best == best_run_line(found) == "Best run: tuned (acme-embed-large-v2-kestrel-ft)."
    assert said.evidence == overview_evidence(found)
    assert "66% of queries" in said.evidence and "n = 224 queries" in said.evidence
    assert len(said.details) == 2  # tuned against each other run


@pytest.mark.parametrize("k", [1, 10])
def test_each_runs_numbers_are_the_cores_at_that_k(sample, k):
    runs = tuple(sample.run_names)
    shown = overview.overview(sample, k, runs, False, False)
    core = core_evaluation(k).summary.set_index(["run", "metric"])
    assert shown.k == k
    assert shown.metrics == list(dict.fromkeys(["hit@1", "recall@1", f"recall@{k}", "mrr"]))
    assert shown.table["run"].tolist() == list(runs)
    for row in shown.table.to_dict("records"):
        for metric in ("recall@1", f"recall@{k}", "mrr"):
            expected = core.loc[(row["run"], metric)]
            assert row[metric] == pytest.approx(expected["mean"], abs=1e-12)
            assert row[f"{metric} 95% CI"] == format_interval(expected["ci_low"], expected["ci_high"])
        assert row["n"] == 224 and row["k"] == k
    hits = headline_means(loading.evaluation(sample).value, list(runs))
    assert shown.table.set_index("run")["hit@1"].to_dict() == pytest.approx({r: i.point for r, i in hits.items()})


def test_the_runs_shown_are_the_rows_and_the_chart_keeps_every_run(sample):
    shown = overview.overview(sample, 10, ("tuned",), False, False)
    assert shown.table["run"].tolist() == ["tuned"]
    assert set(shown.export["run"]) == {"tuned"}
    assert "tuned = acme-embed-large-v2-kestrel-ft" in shown.chart["title"]["subtitle"]


def test_every_check_adds_its_columns_at_k(sample):
    shown = overview.overview(sample, 10, tuple(sample.run_names), False, True)
    assert {"blind share", "recall@10 judged depth", "recall@10 bounds"} <= set(shown.table.columns)
    assert set(shown.help) >= {"blind share", "recall@10 judged depth", "recall@10 bounds"}


def test_the_paired_comparison_is_the_cores_compare(sample):
    runs = tuple(sample.run_names)
    compared = overview.comparison(sample, 10, "base", runs)
    core = compare_evaluation(core_evaluation(10), ["recall@1", "recall@10", "mrr"], baseline="base")
    expected = {(c.run, c.metric): c for c in core.comparisons}
    assert len(compared.counts) == len(expected) == 6
    for row in compared.counts.to_dict("records"):
        c = expected[row["run"], row["metric"]]
        assert (row["wins"], row["ties"], row["losses"]) == (c.wins, c.ties, c.losses)
        assert row["difference"] == pytest.approx(c.diff, abs=1e-12)
        assert row["95% CI"] == f"{c.ci_low:+.3f} to {c.ci_high:+.3f}"
    tuned_r1 = next(v for v in compared.verdicts if v.text.startswith("tuned beats base on recall@1"))
    assert tuned_r1.kind == "better"


def test_one_query_makes_a_table_with_n_1_and_names_no_winner(make_dataset):
    dataset = make_dataset({"q1": ["d1"]}, {"first": {"q1": ["d1", "x1"]}, "second": {"q1": ["x1", "d1"]}})
    shown = overview.overview(dataset, 1, ("first", "second"), False, False)
    table = shown.table.set_index("run")
    assert table.loc["first", "recall@1"] == 1.0 and table.loc["second", "recall@1"] == 0.0
    assert table["n"].tolist() == [1, 1]
    said = overview.headline(dataset, ("first", "second"))
    found = best_run(loading.evaluation(dataset).value, ["first", "second"])
    assert not found.clear and said.best == best_run_line(found)
    assert said.best.startswith("No clear best run: first and second are within chance")


def test_a_run_that_finds_nothing_scores_zero_with_an_interval_above_it(make_dataset):
    relevant = {f"q{i}": [f"d{i}"] for i in range(1, 6)}
    dataset = make_dataset(relevant, {"finds": {q: docs for q, docs in relevant.items()},
                                      "nothing": {q: ["x1", "x2"] for q in relevant}})
    table = overview.overview(dataset, 10, ("finds", "nothing"), False, False).table.set_index("run")
    assert table.loc["nothing", "recall@10"] == 0.0 and table.loc["nothing", "mrr"] == 0.0
    assert table.loc["nothing", "recall@10 95% CI"].startswith("0.000 – ")
    assert table.loc["finds", "recall@10"] == 1.0


def test_two_identical_runs_tie_and_no_difference_is_claimed(make_dataset):
    relevant = {f"q{i}": [f"d{i}"] for i in range(1, 9)}
    ranked = {q: ["x1", docs[0]] if int(q[1:]) % 2 else [docs[0]] for q, docs in relevant.items()}
    dataset = make_dataset(relevant, {"one": ranked, "other": ranked})
    compared = overview.comparison(dataset, 10, "one", ("one", "other"))
    assert [v.kind for v in compared.verdicts] == ["no clear difference"] * 3
    assert compared.counts["wins"].tolist() == [0, 0, 0] and compared.counts["losses"].tolist() == [0, 0, 0]
    said = overview.headline(dataset, ("one", "other"))
    assert "the very same ones" in said.evidence


def test_k_larger_than_the_lists_counts_what_they_hold(make_dataset):
    relevant = {"q1": ["d1"], "q2": ["d2"], "q3": ["d3"]}
    dataset = make_dataset(relevant, {"short": {"q1": ["x", "d1"], "q2": ["d2"], "q3": ["x", "y"]}})
    at_2 = overview.overview(dataset, 2, ("short",), False, False).table.iloc[0]
    at_50 = overview.overview(dataset, 50, ("short",), False, False).table.iloc[0]
    assert at_50["recall@50"] == at_2["recall@2"] == pytest.approx(2 / 3)
    assert at_50["k"] == 50
