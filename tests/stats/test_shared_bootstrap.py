"""The faster shared bootstrap changes no number: budget bands are `evaluate`'s, token counts are per doc.

`k_budget` and `interval_curves` draw the resample stream once and count it through small
integers, the sign flips are drawn ahead on a worker thread, and the budget looks each doc id up
once however many queries return it. These tests pin the user-visible results to the plain
computations they replace.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import evalcore
from evalcore.analyses.budget import k_budget
from evalcore.stats.bootstrap import ExactProducts, count_rows, on_grid, resample_sums
from evalcore.stats.paired import flip_sums

SAMPLE = Path(__file__).resolve().parents[2] / "sample_data"
RUNS = [SAMPLE / "base.trec", SAMPLE / "tuned.trec", SAMPLE / "tuned-256d.trec"]
LABELS = SAMPLE / "labels.tsv"
MAX_K = 12


@pytest.fixture(scope="module")
def budget():
    return k_budget(RUNS, LABELS, SAMPLE / "docs.jsonl", max_k=MAX_K)


@pytest.mark.parametrize("k", [1, 2, 5, 9, 12])
def test_budget_recall_and_hit_bands_are_what_evaluate_prints(budget, k) -> None:
    """The Choose k table's recall@k and hit@k, with their intervals, are `evaluate --k k`'s, digit for digit."""
    summary = evalcore.evaluate_runs(RUNS, LABELS, k=[k]).summary.set_index(["run", "metric"])
    for run in budget:
        row = run.row(k)
        for metric in ("recall", "hit"):
            cli = summary.loc[(run.name, f"{metric}@{k}")]
            assert (row[f"{metric}_ci_low"], row[f"{metric}_ci_high"]) == (cli["ci_low"], cli["ci_high"])
            assert row[metric] == pytest.approx(cli["mean"], abs=1e-15)


def test_a_doc_many_queries_return_is_counted_once_at_its_own_size() -> None:
    """Token curves by hand when one doc sits in every query's ranking and one doc is not in the file."""
    labels = {"q1": ["a"], "q2": ["b"], "q3": ["shared"]}
    run = {"q1": ["shared", "a", "ghost"], "q2": ["b", "shared", "ghost"], "q3": ["shared", "ghost", "c"]}
    docs = pd.DataFrame({"doc_id": ["a", "b", "c", "shared"], "tokens": [10, 20, 30, 100]})
    report = k_budget([run], labels, docs, max_k=3)
    one = report.runs[0]
    # ghost is missing: counted at the median of a, b, c, shared the run returned (10, 20, 30, 100) = 25.
    assert one.token_sources["fallback_tokens"] == 25
    assert one.token_sources["docs"] == {"tokens column": 4, "not in documents": 1}
    # q1: 100, 110, 135; q2: 20, 120, 145; q3: 100, 125, 155.
    assert one.table["tokens_mean"].tolist() == pytest.approx([220 / 3, 355 / 3, 435 / 3])
    warning = next(w for w in report.warnings if w.code == "doc_missing_from_documents")
    assert warning.count == 1 and "3 of 9 retrieved chunks" in warning.message


def test_counts_are_the_plain_bincounts() -> None:
    rng = np.random.default_rng(4)
    draw = rng.integers(0, 300, size=(7, 300), dtype=np.int32)
    expected = np.stack([np.bincount(row, minlength=300) for row in draw]).T.astype(np.float64)
    np.testing.assert_array_equal(count_rows(draw, 300).T, expected)


def test_resampled_sums_and_flips_equal_the_plain_products_of_the_same_stream() -> None:
    """Drawn in blocks, prefetched and shared set-ups give ``counts @ scores`` and ``bits @ scores`` of one plain draw."""
    rng = np.random.default_rng(11)
    n, resamples = 500, 430
    curve = np.minimum(np.cumsum(rng.random((n, 25)) < 0.02, axis=1) / rng.integers(1, 4, size=(n, 1)), 1.0)
    gridded = on_grid(np.column_stack([curve, rng.random((n, 2))]))
    product = ExactProducts(gridded)

    plain = np.random.default_rng(5)
    draw = plain.integers(0, n, size=(resamples, n), dtype=np.int32)
    counts = np.stack([np.bincount(row, minlength=n) for row in draw]).astype(np.float64)
    packed = plain.integers(0, 256, size=(resamples, (n + 7) // 8), dtype=np.uint8)
    bits = np.unpackbits(packed, axis=1, count=n).astype(np.float64)

    shared = np.random.default_rng(5)
    sums = resample_sums(gridded, resamples, shared, block_rows=50, product=product)  # 9 blocks: prefetched
    flips = flip_sums(gridded, resamples, shared, product=product)
    np.testing.assert_array_equal(sums, counts @ gridded)
    np.testing.assert_array_equal(flips, bits @ gridded)


def test_flips_over_several_blocks_are_the_plain_products_block_by_block() -> None:
    """Three blocks of flips (each unpacked on the worker thread while the block before it is multiplied, two buffers
    taking turns): every row is ``bits @ scores`` of the same stream of bytes."""
    n = 1 << 14  # blocks of 256 flips
    gridded = on_grid(np.random.default_rng(3).random((n, 3)) - 0.5)
    flips = flip_sums(gridded, 600, np.random.default_rng(8))
    plain = np.random.default_rng(8)
    for start, rows in ((0, 256), (256, 256), (512, 88)):
        packed = plain.integers(0, 256, size=(rows, n // 8), dtype=np.uint8)
        bits = np.unpackbits(packed, axis=1, count=n).astype(np.float64)
        np.testing.assert_array_equal(flips[start:start + rows], bits @ gridded)
