"""The History page's model called directly: a model line's metrics over its saved runs with their intervals and the
context they carry, the failure ledger's counts, the evaluations offered for the report. The line's rows are built as
`evalcore.store` returns them, from the core's own summary of the sample (`small_data.saved_line`)."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from evalcore.report.amounts import format_interval

from dashboard import loading
from dashboard.page_models import history
from tests.page_models.small_data import saved_line


def test_a_lines_metrics_are_recall_and_mrr_until_the_person_picks(sample):
    frame = saved_line(sample)
    known, main = history.metric_choices(frame)
    assert main == ["recall@1", "recall@10", "mrr"]
    assert set(known) == set(frame["metric"])
    shown = history.line_history(frame, "acme", None)
    assert shown.metrics_main == main and shown.metrics_known == known
    assert set(shown.table["metric"]) == set(main)
    assert len(shown.table) == 2 * len(main)


def test_each_saved_number_keeps_its_interval_and_its_context(sample):
    frame = saved_line(sample)
    shown = history.line_history(frame, "acme", ["recall@10"])
    summary = loading.evaluation(sample).value.at((1, 10)).summary.set_index(["run", "metric"])
    for row in shown.table.to_dict("records"):
        core = summary.loc[(row["run"], "recall@10")]
        assert row["mean"] == pytest.approx(core["mean"])
        assert row["interval"] == format_interval(core["ci_low"], core["ci_high"])
    assert shown.table.set_index("run").loc["tuned", "interval"] == "0.827 – 0.908"
    assert shown.label_set == "labels"
    assert shown.context.startswith("line acme · 2 runs · labels labels v1, v2 · n = 224 queries · 95% intervals")
    assert "v1 labels#aaaa1111, v2 labels#bbbb2222" in shown.context
    assert shown.context.endswith("the label set changed between runs: compare across versions with care")


def test_a_number_saved_without_an_interval_reads_a_dash(sample):
    frame = saved_line(sample)
    frame.loc[frame["metric"] == "mrr", ["ci_low", "ci_high"]] = math.nan
    shown = history.line_history(frame, "acme", ["mrr"])
    assert set(shown.table["interval"]) == {"–"}


def test_one_saved_run_says_no_change_of_labels(sample):
    frame = saved_line(sample)
    one = frame[frame["run"] == "base"]
    shown = history.line_history(one, "acme", None)
    assert shown.context.startswith("line acme · 1 run · labels labels v1 ·")
    assert "changed between runs" not in shown.context


def test_the_ledger_says_how_many_failed_and_how_many_are_open():
    frame = pd.DataFrame({"query": ["q1", "q2", "q3"], "open": [True, False, True], "k": [10, 10, 10]})
    ledger = history.ledger(frame, "labels")
    assert (ledger.n_open, ledger.k) == (2, 10)
    assert ledger.caption.startswith("3 queries failed at some point, 2 open · regressions first")
    assert "(k = 10) · labels labels" in ledger.caption
    empty = history.ledger(frame.iloc[0:0], "labels")
    assert (empty.n_open, empty.k) == (0, None) and empty.caption.startswith("0 queries failed")


def test_the_report_offers_the_newest_evaluation_first():
    assert history.evaluation_ids(pd.DataFrame({"id": [3, 7, 12]})) == [12, 7, 3]


def test_a_fresh_workspace_has_no_saved_evaluation_of_the_sample():
    here = history.in_view(None)
    assert here.dataset.sample and here.name == "the sample data"
    assert here.evaluation_id is None and here.line is None
