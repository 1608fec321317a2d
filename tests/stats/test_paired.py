"""Paired comparisons: exact tests equal brute force, Holm by hand, verdicts a PM can trust."""

from __future__ import annotations

import itertools
import json

import numpy as np
import pytest
from scipy import stats

from evalcore.errors import UsageError
from evalcore.stats.intervals import bca_intervals, mean_intervals
from evalcore.report.compare import comparison_record, comparison_verdict
from evalcore.stats.paired import compare_runs, holm, mcnemar_midp, paired_p_value, paired_t_p

REQUIRED_KEYS = {
    "baseline", "run", "metric", "diff", "ci_low", "ci_high", "p_value", "p_adjusted",
    "significant", "wins", "ties", "losses", "n", "verdict",
}


def brute_force_midp(diffs) -> float:
    """Two-sided sign-flip mid-p by listing every sign pattern of the non-zero differences."""
    nonzero = [d for d in diffs if d != 0]
    observed = abs(sum(nonzero))
    greater = equal = 0
    for signs in itertools.product([1, -1], repeat=len(nonzero)):
        t = abs(sum(s * abs(d) for s, d in zip(signs, nonzero)))
        if np.isclose(t, observed, rtol=0, atol=1e-9):
            equal += 1
        elif t > observed:
            greater += 1
    return (greater + 0.5 * equal) / 2 ** len(nonzero)


def correlated_pair(n_both, only_tuned, only_base, n_neither):
    """0/1 scores: both hit, only the tuned run hits, only the base run hits, neither."""
    base = np.array([1] * n_both + [0] * only_tuned + [1] * only_base + [0] * n_neither, float)
    tuned = np.array([1] * n_both + [1] * only_tuned + [0] * only_base + [0] * n_neither, float)
    return base, tuned


# ------------------------------------------------------------------------------- tests


@pytest.mark.parametrize(
    "diffs",
    [
        [0.5, 1.0, 1.0, 0.0, 0.0],
        [0.25, -0.5, 0.75, 1 / 3, -1 / 6, 0.5, 0.1],
        [0.2, -0.2, 0.4, -0.4, 0.6, 0.05, 0.3, -0.15, 0.25, 0.5, -0.35, 0.45],
        [0.3, 0.3, -0.6],  # observed sum 0
        [0.7],
    ],
)
def test_exact_sign_flip_matches_brute_force(diffs):
    p, test = paired_p_value(np.array(diffs))
    assert test in ("sign-flip exact mid-p", "mcnemar exact mid-p")
    assert p == pytest.approx(brute_force_midp(diffs), abs=1e-12)


@pytest.mark.parametrize(("wins", "losses"), [(1, 0), (5, 1), (3, 3), (2, 9), (9, 4), (0, 12)])
def test_mcnemar_closed_form_matches_brute_force(wins, losses):
    diffs = [1] * wins + [-1] * losses + [0] * 5
    assert mcnemar_midp(wins, losses) == pytest.approx(brute_force_midp(diffs), abs=1e-12)
    p, test = paired_p_value(np.array(diffs, float))
    assert p == pytest.approx(brute_force_midp(diffs), abs=1e-12)
    assert test == "mcnemar exact mid-p"


def test_no_differing_query_means_p_is_one():
    # Formally the mid-p of an empty test is 0.5; "no evidence at all" is reported as 1.
    assert mcnemar_midp(0, 0) == 1.0
    assert paired_p_value(np.zeros(30)) == (1.0, "none (all ties)")


def test_mcnemar_closed_form_works_at_any_n():
    p, test = paired_p_value(np.array([1.0] * 450 + [-1.0] * 380 + [0.0] * 5000))
    assert test == "mcnemar exact mid-p"
    assert 0.01 < p < 0.03  # normal approximation: z = 70 / sqrt(830) = 2.43 -> 0.015


def test_mid_p_halves_the_tie_with_the_observed_pattern():
    assert paired_p_value(np.array([0.0, 0.4, 0.0]))[0] == pytest.approx(0.5)  # one change: p 1 with plain exact


def test_random_sign_flips_approach_the_exact_value():
    diffs = np.random.default_rng(2).normal(0.05, 0.2, size=16)
    exact, _ = paired_p_value(diffs)
    approx, test = paired_p_value(diffs, n_resamples=20_000, rng=0, exact_max=0)
    assert test == "sign-flip monte carlo mid-p"
    assert approx == pytest.approx(exact, abs=0.01)


def test_t_test_cross_check_matches_scipy():
    rng = np.random.default_rng(3)
    a, b = rng.random(40), rng.random(40)
    assert paired_t_p(b - a) == pytest.approx(stats.ttest_rel(b, a).pvalue)
    assert np.isnan(paired_t_p(np.array([0.3])))


def test_holm_matches_hand_example():
    np.testing.assert_allclose(holm([0.01, 0.04, 0.03, 0.005]), [0.03, 0.06, 0.06, 0.02])


def test_holm_is_monotone_never_below_raw_and_capped():
    p = np.random.default_rng(4).random(30) ** 3
    adjusted = holm(p)
    order = np.argsort(p)
    assert (np.diff(adjusted[order]) >= 0).all()
    assert (adjusted >= p).all() and (adjusted <= 1).all()
    assert holm([0.02]).tolist() == [0.02]


# ------------------------------------------------------------------------------- the seed's claims


def test_twelve_queries_092_vs_071_could_be_luck():
    base = np.array([1, 1, 1, 1, 1, 1, 1, 1, 0.5, 0, 0, 0])  # 8.5 / 12 = 0.71
    tuned = np.array([1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0.0])  # 11 / 12 = 0.92
    (c,) = compare_runs({"base": {"recall@5": base}, "tuned": {"recall@5": tuned}}, ["recall@5"], baseline="base")
    assert c.diff == pytest.approx(2.5 / 12)
    assert not c.significant and c.p_value > 0.05
    said = comparison_verdict(c)
    assert said.startswith("tuned leads base on recall@5 by 20.8 points") and "but that could be luck" in said
    assert "indistinguishable" not in said  # its interval excludes zero: the words must not contradict it
    assert "Only 12 queries: treat as a rough guide" in comparison_verdict(c)
    assert not c.reliable


def test_300_queries_13_point_gap_is_significant():
    base, tuned = correlated_pair(200, 45, 6, 49)
    (c,) = compare_runs({"base": {"recall@1": base}, "tuned": {"recall@1": tuned}}, ["recall@1"], baseline="base")
    assert c.diff == pytest.approx(0.13)
    assert c.significant and c.p_value < 0.001
    assert (c.wins, c.losses, c.ties, c.n) == (45, 6, 249, 300)
    assert c.test == "mcnemar exact mid-p"
    assert 0.08 < c.ci_low < 0.13 < c.ci_high < 0.18
    assert comparison_verdict(c).startswith("tuned beats base on recall@1 by 13.0 points (95% CI ")
    assert "p < 0.001; 45 wins, 6 losses, 249 ties; n = 300)." in comparison_verdict(c)
    assert c.reliable


def test_a_worse_run_is_called_worse_with_a_positive_gap():
    base, tuned = correlated_pair(200, 6, 45, 49)
    (c,) = compare_runs({"base": {"hit@1": base}, "tuned": {"hit@1": tuned}}, ["hit@1"], baseline="base")
    assert c.diff == pytest.approx(-0.13)
    assert comparison_verdict(c).startswith("tuned is worse than base on hit@1 by 13.0 points (95% CI ")
    low_text = comparison_verdict(c).split("95% CI ")[1].split(" to ")[0]
    assert float(low_text) > 0


def test_mrr_gaps_are_plain_decimals_and_identical_runs_say_so():
    rng = np.random.default_rng(6)
    base = rng.choice([1, 0.5, 1 / 3, 0], size=200)
    better = np.where(rng.random(200) < 0.3, 1.0, base)
    scores = {"base": {"mrr": base}, "better": {"mrr": better}, "copy": {"mrr": base.copy()}}
    better_c, copy_c = compare_runs(scores, ["mrr"], baseline="base", n_resamples=2000)
    assert better_c.significant and better_c.test == "sign-flip monte carlo mid-p"
    assert f"by {better_c.diff:.3f} (" in comparison_verdict(better_c) and "points" not in comparison_verdict(better_c)
    assert copy_c.p_value == 1.0 and not copy_c.significant
    assert (copy_c.ci_low, copy_c.ci_high) == (0.0, 0.0)
    assert comparison_verdict(copy_c) == "base and copy score the same on mrr on all 200 queries."


def test_paired_interval_is_narrower_than_separate_intervals_for_correlated_runs():
    base, tuned = correlated_pair(200, 45, 6, 49)
    (c,) = compare_runs({"base": {"recall@1": base}, "tuned": {"recall@1": tuned}}, ["recall@1"])
    separate = mean_intervals(np.column_stack([base, tuned]))
    assert c.ci_high - c.ci_low < 0.6 * sum(i.high - i.low for i in separate)
    same_draw = bca_intervals((tuned - base)[:, None])[0]  # seed 0 both times
    assert (c.ci_low, c.ci_high) == (same_draw.low, same_draw.high)


# ------------------------------------------------------------------------------- all pairs, Holm


def _three_runs(n=120):
    rng = np.random.default_rng(8)
    a = (rng.random(n) < 0.6).astype(float)
    b = np.where(rng.random(n) < 0.15, 1.0, a)
    c = np.where(rng.random(n) < 0.3, 1.0, a)
    frac = {name: np.clip(x * 0.8 + rng.random(n) * 0.2, 0, 1) for name, x in zip("abc", (a, b, c))}
    return {name: {"hit@1": x, "ndcg@10": frac[name]} for name, x in zip("abc", (a, b, c))}


def test_all_pairs_are_compared_with_holm_across_the_call():
    out = compare_runs(_three_runs(), ["hit@1", "ndcg@10"], n_resamples=2000)
    assert [(c.baseline, c.run, c.metric) for c in out] == [
        ("a", "b", "hit@1"), ("a", "b", "ndcg@10"), ("a", "c", "hit@1"),
        ("a", "c", "ndcg@10"), ("b", "c", "hit@1"), ("b", "c", "ndcg@10"),
    ]
    np.testing.assert_allclose([c.p_adjusted for c in out], holm([c.p_value for c in out]))
    assert all(c.n_comparisons == 6 for c in out)
    assert all(c.significant == (c.p_adjusted < 0.05) for c in out)
    assert any("after Holm" in comparison_verdict(c) for c in out)


def test_same_seed_same_numbers_other_seed_other_bootstrap():
    first = compare_runs(_three_runs(), ["hit@1", "ndcg@10"], baseline="a", n_resamples=2000)
    again = compare_runs(_three_runs(), ["hit@1", "ndcg@10"], baseline="a", n_resamples=2000, rng=0)
    other = compare_runs(_three_runs(), ["hit@1", "ndcg@10"], baseline="a", n_resamples=2000, rng=1)
    assert first == again and first[0].seed == 0
    assert [c.p_value for c in other][::2] == [c.p_value for c in first][::2]  # McNemar: exact
    assert (other[1].ci_low, other[1].ci_high) != (first[1].ci_low, first[1].ci_high)
    assert other[1].ci_low == pytest.approx(first[1].ci_low, abs=0.01)


def test_to_dict_has_the_promised_keys_and_is_json_ready():
    out = compare_runs(_three_runs(), ["hit@1"], baseline="a", n_resamples=500)
    numbers = out[0].to_dict()
    assert set(numbers) >= REQUIRED_KEYS - {"verdict"} and numbers["interval_note"] is None
    record = comparison_record(out[0])  # the JSON entry: the verdict where the interval's note is
    assert set(record) >= REQUIRED_KEYS and list(record) == [k.replace("interval_note", "verdict") for k in numbers]
    assert json.loads(json.dumps(record)) == record


# ------------------------------------------------------------------------------- validation


@pytest.mark.parametrize(
    ("scores", "metrics", "baseline", "message"),
    [
        ({"a": {"m": [1, 0, 1]}, "b": {"m": [1, 0]}}, ["m"], None, "same queries in the same order"),
        ({"a": {"m": [1, 0]}, "b": {"m": [1, 0]}}, ["m"], "c", "The 'baseline' parameter must be"),
        ({"a": {"m": []}, "b": {"m": []}}, ["m"], None, "no queries"),
        ({"a": {"m": [1, 0]}, "b": {"x": [1, 0]}}, ["m"], None, "Run 'b' has no per-query scores"),
        ({"a": {"m": [1, 0]}}, ["m"], None, "at least two run"),
        ({"a": {"m": [1, 0]}, "b": {"m": [1, 0]}}, [], None, "non-empty list"),
        ({"a": {"m": [1, np.nan]}, "b": {"m": [1, 0]}}, ["m"], None, "NaN"),
    ],
)
def test_bad_input_raises_a_clear_usage_error(scores, metrics, baseline, message):
    with pytest.raises(UsageError, match=message):
        compare_runs(scores, metrics, baseline=baseline)


def test_alpha_is_checked():
    with pytest.raises(UsageError, match="The 'alpha' parameter must be"):
        compare_runs(_three_runs(), ["hit@1"], alpha=5)


def test_an_interval_that_excludes_zero_is_never_called_indistinguishable():
    # The test and the interval can disagree (few differing queries, or Holm): the sentence says the lead could be
    # luck and why, instead of "indistinguishable ... the interval excludes zero" in one row.
    from evalcore.report.compare import comparison_verdict
    from evalcore.stats.paired import Comparison

    def made(p_value: float, p_adjusted: float, n_comparisons: int) -> Comparison:
        return Comparison(baseline="base", run="tuned", metric="recall@5", diff=0.04, ci_low=0.01, ci_high=0.08,
                          p_value=p_value, p_adjusted=p_adjusted, significant=False, wins=6, ties=210, losses=1,
                          n=217, interval_note=None, test="sign-flip", t_test_p=p_value, level=0.95, alpha=0.05,
                          reliable=True, n_comparisons=n_comparisons, n_resamples=10_000, seed=0)

    few = comparison_verdict(made(0.12, 0.12, 1))
    assert "indistinguishable" not in few and few.startswith("tuned leads base on recall@5 by 4.0 points")
    assert "could be luck: the interval excludes zero, yet only 7 of the 217 queries differ" in few
    holm = comparison_verdict(made(0.03, 0.09, 3))
    assert "indistinguishable" not in holm and "does not survive correcting for 3 comparisons" in holm
