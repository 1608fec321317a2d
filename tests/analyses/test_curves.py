"""All-k intervals and comparisons (evalcore.analyses.curves) equal the per-k CLI numbers exactly.

The dashboard answers a change of k from `interval_curves`; a reader who runs
``evalcore evaluate --k 1,k`` or ``evalcore compare`` must see the very same numbers.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import evalcore
from evalcore.analyses.budget import k_budget
from evalcore.analyses.compare import compare_evaluation
from evalcore.analyses.curves import interval_curves, warnings_at
from evalcore.stats.bootstrap import on_grid, resample_sums
from evalcore.stats.intervals import mean_intervals
from evalcore.report.compare import comparison_dict, comparison_text

SAMPLE = Path(__file__).resolve().parents[2] / "sample_data"
RUNS = [SAMPLE / "base.trec", SAMPLE / "tuned.trec", SAMPLE / "tuned-256d.trec"]
LABELS = SAMPLE / "labels.tsv"
DEPTH = 20
KS = (1, 2, 5, 10, 20)


@pytest.fixture(scope="module")
def deep():
    return evalcore.evaluate_runs(RUNS, LABELS, k=DEPTH)


@pytest.fixture(scope="module")
def curves(deep):
    return interval_curves(deep, metrics=("recall", "hit", "precision", "ndcg", "judged"))


@pytest.mark.parametrize("k", KS)
def test_summary_at_every_k_is_the_evaluate_summary(curves, k):
    cli = evalcore.evaluate_runs(RUNS, LABELS, k=[1, k]).summary
    pd.testing.assert_frame_equal(curves.summary((1, k)), cli, check_exact=True)


@pytest.mark.parametrize("k", KS)
@pytest.mark.parametrize("baseline", ["base", "tuned"])
def test_comparison_at_every_k_is_the_compare_command(curves, k, baseline):
    per_k = evalcore.evaluate_runs(RUNS, LABELS, k=[1, k])
    metrics = list(dict.fromkeys(["recall@1", f"recall@{k}", "mrr"]))
    cli = compare_evaluation(per_k, metrics, baseline=baseline)
    mine = curves.comparison(k, baseline)
    assert comparison_dict(mine) == comparison_dict(cli)
    assert comparison_text(mine) == comparison_text(cli)


def test_recall_only_curves_give_the_same_recall_rows(deep, curves):
    small = interval_curves(deep, metrics=("recall",))
    full = curves.summary((1, 7))
    expected = full[full["metric"].isin(["recall@1", "recall@7", "mrr"])].reset_index(drop=True)
    pd.testing.assert_frame_equal(small.summary((1, 7)), expected, check_exact=True)
    assert comparison_dict(small.comparison(7, "base")) == comparison_dict(curves.comparison(7, "base"))


@pytest.mark.parametrize("k", [1, 3, 20])
def test_warnings_at_k_are_those_of_evaluate_at_k(deep, k):
    cli = evalcore.evaluate_runs(RUNS, LABELS, k=[1, k]).all_warnings
    assert [w.to_dict() for w in warnings_at(deep, (1, k))] == [w.to_dict() for w in cli]


def test_k_budget_recall_intervals_are_the_evaluate_intervals(deep, curves):
    report = k_budget(deep, chunk_tokens=200, max_k=DEPTH)
    for run in report:
        for k in (1, 4, 9, 20):
            row = run.row(k)
            mine = curves.summary((1, k)).set_index(["run", "metric"]).loc[(run.name, f"recall@{k}")]
            assert (row["recall_ci_low"], row["recall_ci_high"]) == (mine["ci_low"], mine["ci_high"])
            assert row["recall"] == pytest.approx(mine["mean"], abs=1e-15)


def test_a_column_gets_exactly_the_same_interval_alone_or_in_company():
    rng = np.random.default_rng(3)
    scores = np.minimum(np.cumsum(rng.random((400, 30)) < 0.05, axis=1) / rng.integers(1, 4, size=(400, 1)), 1)
    together = mean_intervals(scores, n_resamples=2000)
    for j in (4, 17, 29):
        assert mean_intervals(scores[:, [j]], n_resamples=2000)[0] == together[j]


def test_curve_sums_through_increments_equal_dense_sums():
    rng = np.random.default_rng(8)
    curve = np.minimum(np.cumsum(rng.random((3000, 40)) < 0.01, axis=1) / 3, 1.0)
    noise = rng.random((3000, 3))
    gridded = on_grid(np.column_stack([curve, noise, curve[:, ::-1]]))
    together = resample_sums(gridded, 300, np.random.default_rng(1))
    for j in (0, 10, 39, 41, 60):
        alone = resample_sums(gridded[:, [j]], 300, np.random.default_rng(1))
        np.testing.assert_array_equal(together[:, j], alone[:, 0])


def test_a_deep_evaluation_listed_at_k_equals_evaluating_at_k() -> None:
    """`Evaluation.at` (what the dashboard saves and audits) gives the CLI's rows and warnings for --k 1,5."""
    deep = evalcore.evaluate_runs([SAMPLE / "base.trec", SAMPLE / "tuned.trec"], SAMPLE / "labels.tsv", k=100)
    direct = evalcore.evaluate_runs([SAMPLE / "base.trec", SAMPLE / "tuned.trec"], SAMPLE / "labels.tsv", k=[1, 5])
    listed = deep.at([1, 5])
    assert listed.ks == (1, 5)
    pd.testing.assert_frame_equal(listed.summary, direct.summary)
    assert [w.to_dict() for w in listed.all_warnings] == [w.to_dict() for w in direct.all_warnings]
    with pytest.raises(evalcore.errors.UsageError, match="between 1 and 100 \\(the depth this evaluation was scored to\\)"):
        deep.at([1, 101])
