"""The statistics behind `evalcore answers`: Spearman's rho inside resamples (from counts, no sorting; every way it
is computed) against scipy on the resampled data itself, Cohen's kappa against a plain loop, one draw serving
columns with gaps, and paired differences summed through their grades exactly as the full product sums them."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import spearmanr

from evalcore.stats.agreement import cohen_kappa, kappa_interval
from evalcore.stats.bootstrap import count_rows, on_grid
from evalcore.stats.intervals import bca_intervals, mean_intervals
from evalcore.stats.paired import paired_differences
from evalcore.stats.rank_correlation import SpearmanDraws, mid_ranks, spearman, spearman_intervals
from evalcore.stats.subset_draw import DifferenceProducts, subset_deviations, subset_intervals

scores = st.lists(st.sampled_from([0.0, 0.25, 0.5, 1.0]), min_size=2, max_size=40) | \
    st.lists(st.floats(0, 1), min_size=2, max_size=40)


def _scipy(x, y) -> float:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return float(spearmanr(x, y).statistic)


@settings(max_examples=150, deadline=None)
@given(scores, scores, st.integers(0, 2**32 - 1))
def test_spearman_inside_each_resample_is_scipys_on_the_resampled_queries(x, y, seed) -> None:
    n = min(len(x), len(y))
    x, y = np.array(x[:n]), np.array(y[:n])
    draw = np.random.default_rng(seed).integers(0, n, size=(6, n), dtype=np.int32)
    found = SpearmanDraws([(x, y, np.ones(n, dtype=bool))], len(draw), every_pair=True)
    found.add(count_rows(draw, n), 0)
    rhos = found.draws[:, 0]
    for row, rho in zip(draw, rhos):
        expected = _scipy(x[row], y[row])
        assert (np.isnan(expected) and np.isnan(rho)) or rho == pytest.approx(expected, abs=1e-9)
    expected = _scipy(x, y)
    assert (np.isnan(expected) and np.isnan(spearman(x, y))) or spearman(x, y) == pytest.approx(expected, abs=1e-12)


def test_mid_ranks_and_the_interval_of_one_draw() -> None:
    assert list(mid_ranks([0.5, 0.1, 0.5, 0.9])) == [2.5, 1.0, 2.5, 4.0]
    rng = np.random.default_rng(0)
    x = rng.integers(0, 4, 200) / 3
    y = x + rng.normal(0, 0.5, 200)
    (found,) = spearman_intervals([(x, y)], n_resamples=300, rng=7)
    draw = np.random.default_rng(7).integers(0, 200, size=(300, 200), dtype=np.int32)
    expected = np.percentile([_scipy(x[row], y[row]) for row in draw], [2.5, 97.5])
    assert (found.low, found.high) == pytest.approx(tuple(expected), abs=1e-9) and found.seed == 7
    assert found.low < found.rho < found.high and found.n == 200


def test_spearman_of_a_subset_reads_only_its_drawn_queries() -> None:
    rng = np.random.default_rng(2)
    x, y, used = rng.random(50), rng.integers(0, 3, 50) / 2, rng.random(50) < 0.6
    draw = rng.integers(0, 50, size=(20, 50), dtype=np.int32)
    found = SpearmanDraws([(x, y, used)], 20)
    found.add(count_rows(draw, 50).astype(float), 0)
    for row, rho in zip(draw, found.draws[:, 0]):
        picked = row[used[row]]
        expected = _scipy(x[picked], y[picked])
        assert (np.isnan(expected) and np.isnan(rho)) or rho == pytest.approx(expected, abs=1e-9)


def _reference_kappa(a, b, weights) -> float:
    cats = sorted(set(a) | set(b))
    k, n = len(cats), len(a)
    table = [[0] * k for _ in range(k)]
    for u, v in zip(a, b):
        table[cats.index(u)][cats.index(v)] += 1
    rows = [sum(r) for r in table]
    cols = [sum(table[i][j] for i in range(k)) for j in range(k)]

    def w(i, j):
        return abs(i - j) / (k - 1) if weights == "linear" and k > 1 else float(i != j)

    observed = sum(w(i, j) * table[i][j] for i in range(k) for j in range(k)) / n
    expected = sum(w(i, j) * rows[i] * cols[j] for i in range(k) for j in range(k)) / n / n
    return float("nan") if expected == 0 else 1 - observed / expected


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.sampled_from([0, 0.5, 1]), st.sampled_from([0, 0.5, 1])), min_size=1, max_size=30),
       st.sampled_from(["none", "linear"]))
def test_kappa_is_the_plain_definition(pairs, weights) -> None:
    a, b = [p[0] for p in pairs], [p[1] for p in pairs]
    expected = _reference_kappa(a, b, weights)
    got = cohen_kappa(a, b, weights)
    assert (np.isnan(expected) and np.isnan(got)) or got == pytest.approx(expected, abs=1e-12)


def test_kappa_interval_and_its_edges() -> None:
    rng = np.random.default_rng(1)
    a = rng.integers(0, 2, 150).astype(float)
    b = np.where(rng.random(150) < 0.85, a, 1 - a)
    found = kappa_interval(a, b, rng=0, n_resamples=500)
    assert found.low < found.kappa < found.high and found.n == 150 and found.categories == (0.0, 1.0)
    same = kappa_interval([1, 1, 1], [1, 1, 1])
    assert np.isnan(same.kappa) and "same grade" in same.note


def test_one_draw_for_columns_with_and_without_gaps() -> None:
    rng = np.random.default_rng(3)
    full = np.column_stack([rng.random(120), rng.integers(0, 2, 120), rng.integers(0, 5, 120) / 4 - 0.5])
    gappy = full[:, 0].copy()
    gappy[rng.random(120) < 0.3] = np.nan
    values = np.column_stack([full, gappy])
    deviations = subset_deviations(values, 300, np.random.default_rng(9))
    found = subset_intervals(values[:, :2], deviations[:, :2], 0.95, 300, 9)
    assert found == mean_intervals(full[:, :2], 0.95, 300, 9)  # exactly the house's, gaps elsewhere or not
    diffs = subset_intervals(values[:, 2:3], deviations[:, 2:3], 0.95, 300, 9, wilson=False)
    assert diffs == bca_intervals(full[:, 2:3], 0.95, 300, 9)
    draw = np.random.default_rng(9).integers(0, 120, size=(300, 120), dtype=np.int32)
    own = gappy[~np.isnan(gappy)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = np.nanmean(gappy[draw], axis=1) - own.mean()
    assert deviations[:, 3] == pytest.approx(expected, abs=1e-12, nan_ok=True)
    assert subset_intervals(np.full((3, 1), np.nan), None, 0.95, 300, 9) == [None]


def _kinds(rng: np.random.Generator, n: int) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Score pairs that take each of the ways a resample's rho is computed (few or many values, ties or none)."""
    binary = (rng.random(n) < 0.5) * 1.0
    return {
        "few x few": (rng.integers(0, 5, n) / 4, rng.integers(0, 3, n) / 2),
        "few x few, many cells": (rng.integers(0, 30, n) / 29, rng.integers(0, 40, n) / 39),
        "binary x continuous": (binary, rng.random(n)),
        "continuous x binary": (rng.random(n), binary),
        "few x tied": (rng.integers(0, 5, n) / 4, rng.random(n).round(2)),
        "binary x tied within and across": (binary, rng.integers(0, 90, n) / 89),
        "continuous x continuous": (rng.random(n), rng.random(n)),
        "tied x continuous": (rng.random(n).round(2), rng.random(n)),
    }


@pytest.mark.parametrize("kind", list(_kinds(np.random.default_rng(0), 10)))
def test_every_way_of_ranking_resamples_is_scipys_on_the_resampled_queries(kind) -> None:
    rng = np.random.default_rng(11)
    n = 240
    x, y = _kinds(rng, n)[kind]
    used = rng.random(n) < 0.9
    draw = rng.integers(0, n, size=(40, n), dtype=np.int32)
    found = SpearmanDraws([(x, y, used)], 40)
    found.add(count_rows(draw, n), 0)  # small whole numbers, as the shared draw hands them over
    for row, rho in zip(draw, found.draws[:, 0]):
        picked = row[used[row]]
        assert rho == pytest.approx(_scipy(x[picked], y[picked]), abs=1e-12)
    assert found.points[0] == pytest.approx(_scipy(x[used], y[used]), abs=1e-12)


def test_reading_blocks_beside_the_caller_gives_the_draws_of_reading_them_in_turn() -> None:
    rng = np.random.default_rng(12)
    n = 300
    kinds = _kinds(rng, n)
    pairs = [(x, y, rng.random(n) < 0.9) for x, y in kinds.values()]
    blocks = [rng.integers(0, n, size=(rows, n), dtype=np.int32) for rows in (30, 30, 30, 30)]
    in_turn, beside = SpearmanDraws(pairs, 100), SpearmanDraws(pairs, 100)  # the last block is read in part
    start = 0
    with beside.beside() as each_block:
        for draw in blocks:
            counts = count_rows(draw, n, out=np.empty(draw.shape))  # float64, refilled by the caller
            in_turn.add(counts, start)
            each_block(counts, start)
            counts[:] = -1  # the next block's counts: read beside only from the copy taken
            start += len(draw)
    assert np.array_equal(in_turn.draws, beside.draws, equal_nan=True)
    assert np.isfinite(beside.draws).all() and beside.draws.shape == (100, len(pairs))


def test_hinted_products_are_the_full_product_to_the_last_bit() -> None:
    rng = np.random.default_rng(5)
    n = 400
    grades = rng.integers(0, 8, (n, 3)) / 7
    grades[rng.random((n, 3)) < 0.02] = np.nan
    both = ~np.isnan(grades[:, 0]) & ~np.isnan(grades[:, 1])
    diff = np.full(n, np.nan)
    diff[both] = paired_differences(grades[both, 1], grades[both, 0])  # on the grid, as `answer_study` makes them
    wrong = np.where(both, grades[:, 2] - grades[:, 0], np.nan)  # hinted as column 1 - column 0: not so, kept dense
    values = np.column_stack([grades, diff, wrong])
    hints = [None, None, None, (0, 1), (0, 1)]
    with_hints = subset_deviations(values, 500, np.random.default_rng(3), differences=hints)
    without = subset_deviations(values, 500, np.random.default_rng(3))
    assert np.array_equal(with_hints, without, equal_nan=True)
    gridded = on_grid(np.nan_to_num(values))
    product = DifferenceProducts(gridded[:, 3:], gridded[:, :3], [(0, 1), (0, 1)])
    assert [j for j, _, _ in product.derived] == [0]  # the true hint is used, the false one is not
    bits = rng.integers(0, 2, (n, 64)).astype(np.float64)
    out = np.empty((64, 2))
    product(bits, out)
    assert np.array_equal(out, bits.T @ gridded[:, 3:])
