"""Every way the bootstrap sums a column is the plain ``counts @ scores`` of the same draw, to the last bit.

`evalcore.stats.bootstrap` counts the draw one resample per ``np.bincount`` (a few at once when they are short, or
straight into a float64 buffer), multiplies columns that are all
narrow (small multiples of a power of two) in float32, and sums a few narrow columns by gathering packed words
instead of counting. The references here are the plain computations: one
``np.bincount`` per resample, float64 counts times the gridded scores.
"""

from __future__ import annotations

import numpy as np
import pytest

from evalcore.stats.bootstrap import (
    ExactProducts,
    PackedColumns,
    count_rows,
    integer_units,
    on_grid,
    resample_sums,
)
from evalcore.stats.intervals import bca_bounds
from evalcore.stats.paired import compare_runs, flip_sums


def plain_counts(draw: np.ndarray, n: int) -> np.ndarray:
    """One bincount per resample, as float64: the reference every path must equal."""
    return np.stack([np.bincount(row, minlength=n) for row in draw]).astype(np.float64)


def plain_units(column: np.ndarray) -> tuple[float, float]:
    """The largest power of two dividing every value, found value by value with Python integers."""
    lowest = None
    for value in column.tolist():
        if value == 0:
            continue
        mantissa, power = np.frexp(value)
        whole = int(abs(mantissa) * 2**53)
        bit = power - 53 + (whole & -whole).bit_length() - 1
        lowest = bit if lowest is None else min(lowest, bit)
    unit = 1.0 if lowest is None else 2.0**lowest
    return unit, float(np.abs(column).max()) / unit


def mixed_columns(n: int, seed: int) -> np.ndarray:
    """Every kind of column a report sums: recall curves, 0/1 hits, paired differences, quarter steps, token curves
    (large, each query adding a chunk at every k), a zero column, free floats."""
    rng = np.random.default_rng(seed)
    relevant = rng.integers(1, 4, size=(n, 1))
    recall = np.minimum(np.cumsum(rng.random((n, 12)) < 0.02, axis=1) / relevant, 1.0)
    hits = (rng.random((n, 3)) < 0.5).astype(np.float64)
    tokens = 60_000 + np.cumsum(rng.integers(20, 900, size=(n, 10)), axis=1).astype(np.float64)
    halves = np.cumsum(rng.integers(1, 60, size=(n, 4)), axis=1) / 2
    return np.column_stack([recall, hits, hits[:, :1] - hits[:, 1:], rng.integers(-3, 9, size=(n, 1)) / 4, tokens,
                            recall[:, ::-1], halves, np.zeros((n, 1)), rng.random((n, 2)), tokens * 1e4])


@pytest.mark.parametrize("n, rows", [(7, 5), (300, 13), (2_000, 4), (70_000, 3)])
def test_counts_are_one_bincount_per_resample(n: int, rows: int) -> None:
    draw = np.random.default_rng(n).integers(0, n, size=(rows, n), dtype=np.int32)
    counts = count_rows(draw, n)
    assert counts.dtype == (np.uint16 if n < 1 << 16 else np.uint32)
    np.testing.assert_array_equal(counts, plain_counts(draw, n))
    widened = np.empty((rows, n))  # counted straight into a matrix product's float64 buffer
    assert count_rows(draw, n, out=widened) is widened
    np.testing.assert_array_equal(widened, plain_counts(draw, n))


def test_integer_units_are_found_value_by_value() -> None:
    rng = np.random.default_rng(2)
    columns = np.column_stack([rng.integers(0, 2, 40), rng.integers(-3, 9, 40) / 4, np.zeros(40),
                               rng.integers(0, 5_000, 40) * 8.0, on_grid(rng.random((40, 2))),
                               on_grid(rng.integers(1, 4, 40)[:, None] / 3), rng.integers(0, 9, 40) * 2.0**-30])
    unit, top = integer_units(columns)
    for j in range(columns.shape[1]):
        assert (unit[j], top[j]) == plain_units(columns[:, j]), j
    # Values finer than their column's largest value's 53-bit step: never narrow, said as an infinite top.
    assert integer_units(np.array([[1.0], [2.0**-60]]))[1][0] == np.inf


@pytest.mark.parametrize("n", [9, 400, 3_000])
def test_every_kind_of_column_sums_as_the_plain_product(n: int) -> None:
    gridded = on_grid(mixed_columns(n, seed=n))
    product = ExactProducts(gridded)
    assert product.needs_float64_counts and (n < 400 or len(product.curve))
    resamples = 230
    sums = resample_sums(gridded, resamples, np.random.default_rng(5), block_rows=50)
    draw = np.random.default_rng(5).integers(0, n, size=(resamples, n), dtype=np.int32)
    counts = plain_counts(draw, n)
    np.testing.assert_array_equal(sums, counts @ gridded)
    # The float64 layout (the sign flips' and `evalcore.analyses.curves`' way in) gives the same sums.
    out = np.empty((resamples, gridded.shape[1]))
    product(np.ascontiguousarray(counts.T), out)
    np.testing.assert_array_equal(out, counts @ gridded)
    bits = np.unpackbits(np.random.default_rng(6).integers(0, 256, size=(resamples, (n + 7) // 8), dtype=np.uint8),
                         axis=1, count=n).astype(np.float64)
    np.testing.assert_array_equal(flip_sums(gridded, resamples, np.random.default_rng(6), product=product),
                                  bits @ gridded)


@pytest.mark.parametrize("n", [5, 800, 10_000])
def test_few_narrow_columns_are_summed_by_gathering_packed_words(n: int) -> None:
    rng = np.random.default_rng(n)
    hits = (rng.random((n, 5)) < 0.4).astype(np.float64)
    differences = on_grid(hits[:, :1] - hits[:, 1:])  # the best run against four others on hit@1
    packed = PackedColumns.of(differences)
    assert packed is not None and len(packed.words) == 1
    sums = resample_sums(differences, 150, np.random.default_rng(3), block_rows=40)
    draw = np.random.default_rng(3).integers(0, n, size=(150, n), dtype=np.int32)
    np.testing.assert_array_equal(sums, plain_counts(draw, n) @ differences)
    # Alone (gathered) or beside columns that must be counted: the same sums.
    company = on_grid(np.column_stack([differences, rng.random((n, 1))]))
    assert PackedColumns.of(company) is None
    np.testing.assert_array_equal(resample_sums(company, 150, np.random.default_rng(3))[:, :4], sums)


def test_columns_that_cannot_be_packed_are_counted() -> None:
    rng = np.random.default_rng(4)
    assert PackedColumns.of(on_grid(rng.random((100, 1)))) is None  # free floats: not narrow
    assert PackedColumns.of(on_grid((rng.random((100, 30)) < 0.5).astype(float))) is None  # too many for 2 words


def test_the_best_runs_paired_intervals_are_the_plain_bootstrap() -> None:
    """The headline's comparison on hit@1 (gathered packed words) has the BCa bounds of plain counted resamples."""
    n, resamples = 600, 300
    rng = np.random.default_rng(8)
    hits = (rng.random((n, 4)) < [0.6, 0.55, 0.5, 0.3]).astype(np.float64)
    found = compare_runs({f"run{j}": {"hit@1": hits[:, j]} for j in range(4)}, ["hit@1"], baseline="run0",
                         n_resamples=resamples, rng=9)
    differences = on_grid(hits[:, 1:] - hits[:, :1])
    draw = np.random.default_rng(9).integers(0, n, size=(resamples, n), dtype=np.int32)
    deviations = (plain_counts(draw, n) @ differences - differences.sum(axis=0)) / n
    low, high, _ = bca_bounds(differences, deviations, 0.95)
    assert [c.run for c in found] == ["run1", "run2", "run3"]
    assert [c.ci_low for c in found] == low.tolist() and [c.ci_high for c in found] == high.tolist()


@pytest.mark.parametrize("n", [50, 2_000])
def test_many_narrow_columns_are_multiplied_in_float32_from_the_counts(n: int) -> None:
    rng = np.random.default_rng(n)
    hits = (rng.random((n, 31)) < 0.5).astype(np.float64)
    narrow = on_grid(np.column_stack([hits[:, :1] - hits[:, 1:], rng.integers(-4, 5, size=(n, 3)) / 8]))
    product = ExactProducts(narrow)
    assert not product.needs_float64_counts and PackedColumns.of(narrow) is None  # too many to pack
    sums = resample_sums(narrow, 170, np.random.default_rng(2), block_rows=60)
    draw = np.random.default_rng(2).integers(0, n, size=(170, n), dtype=np.int32)
    np.testing.assert_array_equal(sums, plain_counts(draw, n) @ narrow)
