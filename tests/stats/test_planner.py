"""The labelling planner: formulas by hand, cautious sigma, plain-words summary."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from scipy import stats

from evalcore.errors import UsageError
from evalcore.report.compare import plan_summary
from evalcore.stats.intervals import wilson_interval
from evalcore.stats.planner import (
    min_detectable_difference,
    plan,
    queries_needed,
    sigma_upper_limit,
    single_halfwidth,
)


def recall_diffs(n=320, wins=41, losses=9):
    """Per-query recall@1 differences: 41 queries better, 9 worse, the rest tied."""
    d = np.zeros(n)
    d[:wins] = 1.0
    d[wins:wins + losses] = -1.0
    return d


def test_queries_needed_matches_hand_computation():
    # (1.96 + 0.8416)^2 = 7.849; 7.849 * 0.3^2 / 0.05^2 = 282.6; + 2 = 284.6 -> 285
    assert queries_needed(0.05, 0.3) == 285
    assert (stats.norm.ppf(0.975) + stats.norm.ppf(0.8)) ** 2 == pytest.approx(7.85, abs=0.01)
    # a stricter alpha and more power both ask for more queries
    assert queries_needed(0.05, 0.3, alpha=0.01) > 285
    assert queries_needed(0.05, 0.3, power=0.9) > 285


def test_min_detectable_difference_matches_hand_computation():
    assert min_detectable_difference(0.3, 100) == pytest.approx(2.8016 * 0.3 / 10, abs=1e-4)


def test_sigma_upper_limit_is_cautious_and_tightens_with_n():
    assert sigma_upper_limit(0.3, 20) == pytest.approx(0.3 * math.sqrt(19 / stats.chi2.ppf(0.05, 19)))
    uppers = [sigma_upper_limit(0.3, n) for n in (10, 100, 10_000)]
    assert all(u >= 0.3 for u in uppers)
    assert uppers[0] > uppers[1] > uppers[2] and uppers[2] < 0.31


def test_plan_uses_the_upper_sigma_so_it_is_not_optimistic():
    d = recall_diffs()
    p = plan(d, metric="recall@1", target_diff=0.03)
    assert p.sigma == pytest.approx(d.std(ddof=1))
    assert p.sigma_upper > p.sigma
    assert p.min_detectable == pytest.approx(min_detectable_difference(p.sigma_upper, 320))
    assert p.min_detectable > min_detectable_difference(p.sigma, 320)
    assert p.n_needed == queries_needed(0.03, p.sigma_upper)
    # the two formulas agree: detecting today's smallest detectable gap needs today's n (+2)
    assert queries_needed(p.min_detectable, p.sigma_upper) == 320 + 2


def test_summary_reads_out_the_numbers():
    d = recall_diffs()
    scores = np.r_[np.ones(224), np.zeros(96)]  # one model's recall@1 = 0.70
    p = plan(d, metric="recall@1", scores=scores, target_diff=0.03)
    assert plan_summary(p).startswith(
        f"With 320 queries this set can detect differences of about {p.min_detectable * 100:.1f} "
        "points in recall@1 (power 80%, alpha 0.05)."
    )
    assert f"Detecting 3.0 points needs about {p.n_needed:,} queries." in plan_summary(p)
    assert f"known to about +/- {p.halfwidth * 100:.1f} points" in plan_summary(p)
    assert "halving that takes about 1,280 queries (960 more labeled queries)" in plan_summary(p)
    assert p.n_to_halve == 1280


def test_a_goal_already_met_says_so():
    p = plan(recall_diffs(), metric="recall@1", target_diff=0.3)
    assert p.n_needed < 320
    assert "this set already has 320" in plan_summary(p)


def test_single_halfwidth_is_wilson_for_hits_and_normal_otherwise():
    hits = np.r_[np.ones(70), np.zeros(30)]
    assert single_halfwidth(hits) == pytest.approx(wilson_interval(70, 100).halfwidth)
    frac = np.random.default_rng(0).random(400)
    assert single_halfwidth(frac) == pytest.approx(1.959964 * frac.std(ddof=1) / 20, rel=1e-5)


def test_four_times_the_queries_halves_the_interval():
    hits = np.r_[np.ones(70), np.zeros(30)]
    ratio = single_halfwidth(np.tile(hits, 4)) / single_halfwidth(hits)
    assert ratio == pytest.approx(0.5, abs=0.02)


def test_runs_that_never_disagree_give_no_plan_rather_than_a_fake_one():
    p = plan(np.zeros(50), metric="recall@1", target_diff=0.05)
    assert math.isnan(p.min_detectable) and p.n_needed is None
    assert "spread of differences is unknown" in plan_summary(p)
    assert p.to_dict()["min_detectable"] is None


def test_to_dict_is_json_ready():
    found = plan(recall_diffs(), metric="mrr", target_diff=0.05)
    record = found.to_dict()
    assert {"n", "sigma", "sigma_upper", "min_detectable", "n_needed"} <= set(record)
    assert json.loads(json.dumps(record)) == record
    assert "0.0" in plan_summary(found) and "points" not in plan_summary(found)  # mrr in decimals


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"diffs": np.array([0.1])}, "at least 2"),
        ({"diffs": recall_diffs(), "target_diff": 3}, "3 points = 0.03"),
        ({"diffs": recall_diffs(), "alpha": 0}, "The 'alpha' parameter must be"),
        ({"diffs": recall_diffs(), "power": 80}, "The 'power' parameter must be"),
        ({"diffs": recall_diffs(), "scores": np.ones(10)}, "same queries"),
    ],
)
def test_bad_input_raises_a_usage_error(kwargs, message):
    with pytest.raises(UsageError, match=message):
        plan(**kwargs)
