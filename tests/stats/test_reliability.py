"""Agreement of several judges (`evalcore.stats.reliability`) against published worked examples and against slow,
obviously correct references written from the definitions: pairwise for Krippendorff's alpha, per unit for Fleiss,
from the 2x2 table for Cohen; the bootstrap against a loop over the very same draws of queries."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evalcore.stats.reliability import ALPHA, COHEN, FLEISS, PERCENT, fleiss_kappa, krippendorff_alpha, reliability, \
    strength

N = np.nan

# Wikipedia, "Fleiss' kappa", worked example: 10 subjects, 14 raters, 5 categories; P = 0.378, P_e = 0.213, kappa 0.210.
WIKIPEDIA_FLEISS = np.array([[0, 0, 0, 0, 14], [0, 2, 6, 4, 2], [0, 0, 3, 5, 6], [0, 3, 9, 2, 0], [2, 2, 8, 1, 1],
                             [7, 7, 0, 0, 0], [3, 2, 6, 3, 0], [2, 5, 3, 2, 2], [6, 5, 2, 1, 0], [0, 2, 2, 3, 7]])

# Krippendorff (2011), "Computing Krippendorff's alpha-reliability", nominal data, four observers, missing values
# (unit 12 has one value and is not pairable): alpha = 0.743.
KRIPPENDORFF = np.array([[1, 2, 3, 3, 2, 1, 4, 1, 2, N, N, N],
                         [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, N, 3],
                         [N, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, N],
                         [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, N]]).T


# ----------------------------------------------------------------------------- slow references, from the definitions


def alpha_slow(units: np.ndarray) -> float:
    """1 - D_o / D_e, each a mean of pairwise disagreements: within units (each unit's pairs weighted 1 / (m_u - 1)),
    and between every two pairable values anywhere."""
    values = [[v for v in row if not np.isnan(v)] for row in units]
    values = [row for row in values if len(row) >= 2]
    pooled = [v for row in values for v in row]
    n = len(pooled)
    within = sum(sum(a != b for a, b in itertools.permutations(row, 2)) / (len(row) - 1) for row in values) / n
    between = sum(a != b for a, b in itertools.permutations(pooled, 2)) / (n * (n - 1))
    return 1 - within / between if between else float("nan")


def fleiss_slow(units: np.ndarray) -> float:
    """Units every judge marked: mean agreeing share of ordered judge pairs, against the chance of a match."""
    rows = [row for row in units if not np.isnan(row).any()]
    r = units.shape[1]
    agreeing = [sum(a == b for a, b in itertools.permutations(row, 2)) / (r * (r - 1)) for row in rows]
    pooled = [v for row in rows for v in row]
    chance = sum((pooled.count(c) / len(pooled)) ** 2 for c in set(pooled))
    return (np.mean(agreeing) - chance) / (1 - chance) if chance < 1 else float("nan")


def cohen_slow(units: np.ndarray) -> float:
    rows = [row for row in units if not np.isnan(row).any()]
    a, b = [r[0] for r in rows], [r[1] for r in rows]
    observed = np.mean([x == y for x, y in zip(a, b)])
    chance = sum(a.count(c) / len(a) * b.count(c) / len(b) for c in set(a) | set(b))
    return (observed - chance) / (1 - chance) if chance < 1 else float("nan")


def percent_slow(units: np.ndarray) -> float:
    rows = [[v for v in row if not np.isnan(v)] for row in units]
    rows = [row for row in rows if len(row) >= 2]
    return float(np.mean([len(set(row)) == 1 for row in rows]))


SLOW = {PERCENT: percent_slow, COHEN: cohen_slow, FLEISS: fleiss_slow, ALPHA: alpha_slow}


# ----------------------------------------------------------------------------- published examples


def test_fleiss_kappa_matches_wikipedias_worked_example() -> None:
    assert round(fleiss_kappa(WIKIPEDIA_FLEISS), 3) == 0.210
    raters = np.array([np.repeat(np.arange(5), row) for row in WIKIPEDIA_FLEISS], dtype=float)  # 10 x 14 marks
    assert fleiss_slow(raters) == pytest.approx(fleiss_kappa(WIKIPEDIA_FLEISS), abs=1e-12)


def test_krippendorffs_alpha_matches_the_textbook_example_with_missing_marks() -> None:
    assert round(krippendorff_alpha(KRIPPENDORFF), 3) == 0.743
    assert alpha_slow(KRIPPENDORFF) == pytest.approx(krippendorff_alpha(KRIPPENDORFF), abs=1e-12)


def test_cohens_kappa_of_the_classic_two_by_two_example() -> None:
    # 50 proposals: both yes 20, A yes B no 5, A no B yes 10, both no 15 -> p_o 0.7, p_e 0.5, kappa 0.4.
    a = np.r_[np.ones(25), np.zeros(25)]
    b = np.r_[np.ones(20), np.zeros(5), np.ones(10), np.zeros(15)]
    found = reliability(np.column_stack([a, b]), np.arange(50), n_resamples=1000, rng=0)
    assert found[COHEN].value == pytest.approx(0.4) and found[PERCENT].value == pytest.approx(0.7)
    assert strength(found[COHEN].value) == "fair" and strength(0.71) == "substantial" and strength(-0.1) == "poor"


# ----------------------------------------------------------------------------- against the references


@st.composite
def panels(draw):
    judges = draw(st.integers(2, 4))
    units = draw(st.integers(2, 25))
    values = np.array(draw(st.lists(st.lists(st.sampled_from([0.0, 1.0, 2.0, N]), min_size=judges,
                                             max_size=judges), min_size=units, max_size=units)))
    groups = np.array(draw(st.lists(st.integers(0, 5), min_size=units, max_size=units)))
    return values, groups


@settings(max_examples=150, deadline=None)
@given(panels())
def test_every_statistic_is_its_definition(panel) -> None:
    values, groups = panel
    found = reliability(values, groups, n_resamples=200, rng=1)
    for name, stat in found.items():
        expected = SLOW[name](values) if stat.n_units else float("nan")
        if np.isnan(expected):
            assert np.isnan(stat.value), name
        else:
            assert stat.value == pytest.approx(expected, abs=1e-9), name
    assert (COHEN in found) == (values.shape[1] == 2)


def test_the_interval_resamples_queries_with_the_houses_draw() -> None:
    """The same draw of queries (``rng.integers(0, n, (B, n))`` over the queries judged), each resample's units put
    together and measured from the definitions: the same percentiles."""
    gen = np.random.default_rng(7)
    queries = 12
    groups = np.repeat(np.arange(queries), gen.integers(2, 6, queries))
    truth = gen.integers(0, 2, len(groups)).astype(float)
    values = np.column_stack([np.where(gen.random(len(groups)) < 0.8, truth, 1 - truth) for _ in range(3)])
    values[gen.random(values.shape) < 0.1] = N
    b = 300
    found = reliability(values, groups, n_resamples=b, rng=11)
    names = np.unique(groups[(~np.isnan(values)).sum(axis=1) >= 2])
    draws = np.random.default_rng(11).integers(0, len(names), size=(b, len(names)), dtype=np.int32)
    for name in (PERCENT, FLEISS, ALPHA):
        resampled = []
        for row in draws:
            units = np.concatenate([values[groups == names[i]] for i in row])
            resampled.append(SLOW[name](units))
        resampled = np.array(resampled)
        kept = resampled[np.isfinite(resampled)]
        low, high = np.percentile(kept, [2.5, 97.5])
        assert (found[name].low, found[name].high) == pytest.approx((low, high), abs=1e-9), name
        assert found[name].n_groups <= queries


def test_pairs_of_one_query_move_together_in_the_interval() -> None:
    """Resampling queries, not pairs: judges who agree on whole queries and disagree on whole others (their pairs
    move together) get a wider interval as 5 queries of 10 pairs than the same marks as 50 queries of 1."""
    a = np.tile([0.0, 1.0], 25)
    b = np.where(np.arange(50) < 35, a, 1 - a)  # the last query and a half disagree throughout
    values = np.column_stack([a, b])
    few = reliability(values, np.arange(50) // 10, rng=0)[COHEN]
    many = reliability(values, np.arange(50), rng=0)[COHEN]
    assert few.value == many.value and (few.n_groups, many.n_groups) == (5, 50)
    assert few.high - few.low > many.high - many.low


def test_undefined_statistics_say_why() -> None:
    same = np.ones((6, 2))
    found = reliability(same, np.arange(6), n_resamples=100, rng=0)
    assert found[PERCENT].value == 1.0
    for name in (COHEN, FLEISS, ALPHA):
        assert np.isnan(found[name].value) and "every mark is the same" in found[name].note
    one = reliability(np.array([[1.0, 0.0], [1.0, 1.0]]), np.array(["q1", "q1"]), n_resamples=100, rng=0)
    assert one[ALPHA].note == "only 1 query: no interval can be estimated" and np.isnan(one[ALPHA].low)
    alone = reliability(np.array([[1.0, N], [N, 0.0]]), np.array(["q1", "q2"]), n_resamples=100, rng=0)
    assert all(r.n_units == 0 and r.note == "no units to compare" for r in alone.values())
