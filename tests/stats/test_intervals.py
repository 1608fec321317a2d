"""Intervals on per-query means: right values, right coverage, reproducible, fast path = slow path."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats
from scipy.special import ndtr, ndtri

from evalcore.errors import UsageError
from evalcore.stats.bootstrap import resample_deviations
from evalcore.stats.intervals import (
    MIN_RELIABLE_QUERIES,
    bca_intervals,
    mean_interval,
    mean_intervals,
    wilson_interval,
)

RR_VALUES = np.array([1.0, 0.5, 1 / 3, 0.25, 0.0])


def rr_like(n: int, seed: int) -> np.ndarray:
    """Discrete, skewed per-query scores like reciprocal ranks."""
    return np.random.default_rng(seed).choice(RR_VALUES, size=n, p=[0.45, 0.2, 0.1, 0.05, 0.2])


# ------------------------------------------------------------------------------- Wilson


def test_wilson_matches_hand_computed_value():
    interval = wilson_interval(8, 10, 0.95)
    assert interval.point == pytest.approx(0.8)
    assert interval.low == pytest.approx(0.4902, abs=1e-4)
    assert interval.high == pytest.approx(0.9433, abs=1e-4)
    assert interval.method == "wilson"
    assert interval.n_resamples is None and interval.seed is None


def test_wilson_stays_inside_0_1_and_keeps_width_at_the_edges():
    none, every = wilson_interval(0, 40), wilson_interval(40, 40)
    assert none.low == 0.0 and 0 < none.high < 0.15
    assert every.high == 1.0 and 0.85 < every.low < 1.0


def test_wilson_is_narrower_at_higher_n_and_lower_level():
    assert wilson_interval(80, 100).halfwidth < wilson_interval(8, 10).halfwidth
    assert wilson_interval(80, 100, 0.8).halfwidth < wilson_interval(80, 100, 0.95).halfwidth


def test_wilson_covers_about_95_percent_by_simulation():
    true_p, n = 0.8, 50
    successes = np.random.default_rng(0).binomial(n, true_p, size=400)
    covered = [wilson_interval(int(k), n).low <= true_p <= wilson_interval(int(k), n).high for k in successes]
    assert 0.91 <= np.mean(covered) <= 0.985


# ------------------------------------------------------------------------------- BCa


def test_bca_covers_about_95_percent_on_a_skewed_population():
    rng = np.random.default_rng(1)
    covered = []
    for sample in range(400):
        x = rng.exponential(scale=1.0, size=60)  # true mean 1, strongly right-skewed
        interval = mean_interval(x, n_resamples=1000, rng=sample)
        assert interval.method == "bca"
        covered.append(interval.low <= 1.0 <= interval.high)
    assert 0.90 <= np.mean(covered) <= 0.975


def test_bca_equals_slow_reference_computation_on_the_same_draw():
    """Vectorised counts x matrix, closed-form jackknife and quantiles vs the textbook loops."""
    x = rr_like(30, seed=3)
    n, n_resamples, seed, level = x.size, 2000, 7, 0.9

    idx = np.random.default_rng(seed).integers(0, n, size=(n_resamples, n), dtype=np.int32)
    means = x[idx].mean(axis=1)
    point = x.mean()
    tie = np.isclose(means, point, rtol=0, atol=1e-9)
    z0 = ndtri(((means < point) & ~tie).mean() + 0.5 * tie.mean())
    jack = np.array([np.delete(x, i).mean() for i in range(n)])
    u = jack.mean() - jack
    accel = (u**3).sum() / (6 * (u**2).sum() ** 1.5)
    z = ndtri([(1 - level) / 2, (1 + level) / 2])
    probs = ndtr(z0 + (z0 + z) / (1 - accel * (z0 + z)))
    low, high = np.quantile(means, probs)

    interval = mean_interval(x, level=level, n_resamples=n_resamples, rng=seed)
    assert interval.method == "bca"
    assert interval.point == pytest.approx(point)
    assert interval.low == pytest.approx(low, abs=1e-5)
    assert interval.high == pytest.approx(high, abs=1e-5)


def test_bca_agrees_with_scipy_bootstrap():
    x = np.random.default_rng(5).lognormal(0, 0.8, size=200) / 10
    ours = mean_interval(x, n_resamples=10_000, rng=0)
    theirs = stats.bootstrap((x,), np.mean, method="BCa", n_resamples=10_000, rng=1).confidence_interval
    width = ours.high - ours.low
    assert ours.low == pytest.approx(theirs.low, abs=0.05 * width)
    assert ours.high == pytest.approx(theirs.high, abs=0.05 * width)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from([0.0, 0.2, 0.5, 1 / 3, 0.75, 1.0]), min_size=2, max_size=40))
def test_interval_holds_the_mean_and_stays_within_the_data(values):
    x = np.array(values)
    interval = mean_interval(x, n_resamples=300, rng=0)
    assert 0 <= interval.low <= interval.point <= interval.high <= 1
    assert interval.point == pytest.approx(x.mean())
    (boot,) = bca_intervals(x[:, None], n_resamples=300, rng=0)  # a resampled mean stays in range
    assert x.min() <= boot.low <= boot.point <= boot.high <= x.max()


# ------------------------------------------------------------------------------- choices


def test_method_follows_the_column():
    n = 80
    binary = (np.arange(n) % 3 == 0).astype(float)
    fractional = rr_like(n, seed=0)
    constant = np.full(n, 0.4)
    all_hits = np.ones(n)
    wilson, bca, flat, perfect = mean_intervals(
        np.column_stack([binary, fractional, constant, all_hits]), n_resamples=500
    )
    assert wilson.method == "wilson" and bca.method == "bca"
    assert (flat.method, flat.low, flat.high, flat.reliable) == ("constant", 0.4, 0.4, False)
    assert perfect.method == "wilson" and perfect.high == 1.0 and perfect.low < 1.0
    assert wilson.reliable and bca.reliable


def test_differences_always_get_the_bootstrap():
    diffs = (np.arange(100) % 4 == 0).astype(float)  # 0/1 values, but a difference
    assert bca_intervals(diffs[:, None], n_resamples=500)[0].method == "bca"


def test_small_sets_are_flagged_not_hidden():
    (interval,) = mean_intervals(rr_like(12, seed=2)[:, None], n_resamples=500)
    assert not interval.reliable
    assert interval.note.startswith("only 12 queries: treat as a rough guide")
    big = mean_intervals(rr_like(MIN_RELIABLE_QUERIES, seed=2)[:, None], n_resamples=500)[0]
    assert big.reliable and big.note is None


def test_a_single_query_gives_a_degenerate_unreliable_interval():
    (frac,) = mean_intervals(np.array([[0.5]]))
    assert (frac.low, frac.point, frac.high) == (0.5, 0.5, 0.5)
    assert not frac.reliable and "1 query" in frac.note
    (hit,) = mean_intervals(np.array([[1.0]]))
    assert hit.method == "wilson" and not hit.reliable and hit.low < 0.5


def test_any_subset_of_rows_works_for_slices():
    scores = np.column_stack([rr_like(300, seed=s) for s in range(3)])
    rows = np.arange(300) % 7 == 0
    sliced = mean_intervals(scores[rows], n_resamples=500)
    assert [i.n for i in sliced] == [int(rows.sum())] * 3
    assert [i.point for i in sliced] == pytest.approx(list(scores[rows].mean(axis=0)))


# ------------------------------------------------------------------------------- reproducibility


def _mixed(n: int = 120) -> np.ndarray:
    return np.column_stack([rr_like(n, 0), (rr_like(n, 1) == 1).astype(float), rr_like(n, 2)])


def test_same_seed_same_numbers_and_default_seed_is_recorded():
    first = mean_intervals(_mixed(), n_resamples=1000)
    again = mean_intervals(_mixed(), n_resamples=1000, rng=0)
    assert first == again
    assert first[0].seed == 0 and first[0].n_resamples == 1000


def test_other_seed_moves_bootstrap_bounds_but_not_wilson():
    seed0 = mean_intervals(_mixed(), n_resamples=1000, rng=0)
    seed1 = mean_intervals(_mixed(), n_resamples=1000, rng=1)
    assert seed1[1] == seed0[1]  # Wilson: no randomness
    assert (seed1[0].low, seed1[0].high) != (seed0[0].low, seed0[0].high)
    assert seed1[0].low == pytest.approx(seed0[0].low, abs=0.03)
    assert seed1[0].seed == 1


def test_passed_generator_is_used_and_its_seed_left_unknown():
    from_gen = mean_intervals(_mixed(), n_resamples=1000, rng=np.random.default_rng(0))
    assert from_gen[0].seed is None
    assert from_gen[0].low == mean_intervals(_mixed(), n_resamples=1000, rng=0)[0].low


def test_one_shared_draw_a_column_gets_the_same_interval_alone_or_in_company():
    scores = _mixed()
    together = mean_intervals(np.column_stack([scores, scores[:, 0]]), n_resamples=1000)
    alone = mean_intervals(scores[:, [2]], n_resamples=1000)
    # Equal up to float32 summation order, which BLAS picks by matrix shape.
    assert together[2].low == pytest.approx(alone[0].low, abs=1e-6)
    assert together[2].high == pytest.approx(alone[0].high, abs=1e-6)
    assert together[3] == together[0]  # duplicate column, resampled once


def test_drawing_in_blocks_does_not_change_the_draw():
    centred = _mixed(50) - _mixed(50).mean(axis=0)
    whole = resample_deviations(centred, 300, np.random.default_rng(4))
    pieces = resample_deviations(centred, 300, np.random.default_rng(4), block_rows=7)
    np.testing.assert_array_equal(whole, pieces)


# ------------------------------------------------------------------------------- validation


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"scores": np.array([[0.5, np.nan]])}, "finite"),
        ({"scores": np.array([0.5, 0.7])}, "2-D"),
        ({"scores": np.empty((0, 3))}, "at least one query"),
        ({"scores": np.ones((5, 1)), "level": 95}, "The 'level' parameter must be"),
        ({"scores": np.ones((5, 1)), "n_resamples": 10}, "The 'n_resamples' parameter must be"),
        ({"scores": np.ones((5, 1)), "rng": "zero"}, "The 'rng' parameter must be"),
    ],
)
def test_bad_input_raises_a_usage_error(kwargs, message):
    with pytest.raises(UsageError, match=message):
        mean_intervals(**kwargs)


def test_wilson_rejects_impossible_counts():
    with pytest.raises(UsageError, match="'successes'"):
        wilson_interval(11, 10)


def test_to_dict_is_json_ready():
    record = mean_intervals(_mixed(), n_resamples=500)[0].to_dict()
    assert set(record) >= {"point", "low", "high", "level", "method", "n", "n_resamples", "seed", "reliable"}
    assert json.loads(json.dumps(record)) == record
