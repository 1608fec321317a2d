"""Do several judges agree? Percent agreement, Cohen's kappa (two judges), Fleiss' kappa (several) and
Krippendorff's alpha (any number, marks missing), each with a percentile bootstrap interval over queries.

The input is one row per unit (a (query, doc) pair) and one column per judge, NaN where a judge gave no mark, and
the group (query) of each unit. Every statistic is a ratio of sums over units, so each query contributes a few sums
(its table of mark pairs, its coincidences) and a bootstrap resample of queries is a weighted sum of those: exact,
fast, and from the house's one resample stream (`evalcore.stats.bootstrap.resample_sums`).

* **Percent agreement**: of the units at least two judges marked, the share where every judge who marked it gave
  the same mark.
* **Cohen's kappa** (exactly two judges; the units both marked): ``(p_o - p_e) / (1 - p_e)``, ``p_o`` the share
  of units where they agree, ``p_e`` the share chance gives from each judge's own mix of marks
  (`evalcore.stats.agreement.kappa_from_tables`).
* **Fleiss' kappa** (Fleiss 1971; the units every judge marked, ``r >= 2`` judges): ``(P - P_e) / (1 - P_e)``
  with ``P`` the mean over units of ``sum_c n_c (n_c - 1) / (r (r - 1))`` (``n_c`` judges gave mark ``c``) and
  ``P_e = sum_c p_c**2`` (``p_c`` the share of all marks that are ``c``).
* **Krippendorff's alpha**, nominal (Krippendorff 2011): ``1 - (n - 1) * sum_{c != k} o_ck / sum_{c != k} n_c n_k``
  over the coincidence matrix ``o_ck = sum_u n_uc (n_uk - [c = k]) / (m_u - 1)`` of the units with ``m_u >= 2``
  marks (a unit one judge marked says nothing about agreement), ``n_c`` its margins, ``n`` its total.
* **Undefined** (NaN, with a note): a kappa when chance agreement is 1 (every mark the same), alpha when the
  expected disagreement is 0, any statistic without units.
* **The interval**: the percentile bootstrap over the queries (never over pairs: the docs of one query are judged
  together, by the same person in the same frame of mind, so they are not independent). Resamples where the
  statistic is undefined are left out; fewer than half kept gives no interval, and says so.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import invalid_parameter
from .agreement import defined_percentiles, disagreement_weights, kappa_from_tables
from .bootstrap import on_grid, resample_sums
from .intervals import DEFAULT_RESAMPLES, check_level, check_resamples, resolve_rng

PERCENT = "percent agreement"
COHEN = "Cohen's kappa"
FLEISS = "Fleiss' kappa"
ALPHA = "Krippendorff's alpha"

STRENGTH = ((0.0, "poor"), (0.2, "slight"), (0.4, "fair"), (0.6, "moderate"), (0.8, "substantial"),
            (1.0, "almost perfect"))
"""Landis and Koch (1977): the word for a kappa up to each bound (below 0: poor)."""


@dataclass(frozen=True)
class Reliability:
    """One agreement statistic over ``n_units`` units of ``n_groups`` queries, with its percentile interval."""

    statistic: str
    value: float
    low: float
    high: float
    n_units: int
    n_groups: int
    level: float
    n_resamples: int
    seed: int | None
    note: str | None = None


def strength(value: float) -> str:
    """Landis and Koch's word for a kappa or alpha: poor (below 0), slight, fair, moderate, substantial, almost
    perfect; empty for NaN."""
    if not np.isfinite(value):
        return ""
    if value < 0:
        return "poor"
    return next(word for bound, word in STRENGTH[1:] if value <= bound + 1e-12)


def fleiss_kappa(counts: np.ndarray) -> float:
    """Fleiss' kappa of a (units, categories) table of how many judges gave each mark (every row the same total)."""
    counts = np.asarray(counts, dtype=np.float64)
    totals = counts.sum(axis=1)
    if counts.ndim != 2 or not len(counts) or totals[0] < 2 or not np.all(totals == totals[0]):
        raise invalid_parameter("counts", "a (units, categories) table with the same number (>= 2) of marks per unit",
                                counts.shape)
    return float(_fleiss(*_fleiss_sums(counts)))


def krippendorff_alpha(values: np.ndarray) -> float:
    """Krippendorff's alpha (nominal) of a (units, judges) table of marks, NaN where a judge gave none."""
    codes, k = _codes(values)
    return float(_alpha(_coincidences(_counts(codes, k)).sum(axis=0)))


def reliability(values: np.ndarray, groups: np.ndarray, *, level: float = 0.95,
                n_resamples: int = DEFAULT_RESAMPLES,
                rng: np.random.Generator | int | None = None) -> dict[str, Reliability]:
    """Every statistic that applies to ``values`` (units x judges, NaN missing) grouped by ``groups`` (each unit's
    query): percent agreement and Krippendorff's alpha always, Cohen's kappa with two judges, Fleiss' kappa with
    two or more (on the units every judge marked); each with its bootstrap interval over the groups (module docs)."""
    level = check_level(level)
    n_resamples = check_resamples(n_resamples)
    generator, seed = resolve_rng(rng)
    codes, k = _codes(values)
    groups = np.asarray(groups)
    if groups.shape != (codes.shape[0],):
        raise invalid_parameter("groups", "one group (query) per unit", groups.shape)
    counts = _counts(codes, k)
    pairable = counts.sum(axis=1) >= 2
    codes, counts, groups = codes[pairable], counts[pairable], groups[pairable]
    names, group = np.unique(groups, return_inverse=True) if len(groups) else (np.array([]), np.zeros(0, int))
    n_judges = codes.shape[1]
    parts = _parts(codes, counts, k)
    columns = np.concatenate([p[1] for p in parts], axis=1)
    per_group = np.zeros((len(names), columns.shape[1]))
    np.add.at(per_group, group, columns)
    spans, start = {}, 0
    for name, block, _ in parts:
        spans[name] = slice(start, start + block.shape[1])
        start += block.shape[1]
    units = {name: int(n) for name, _, n in parts}
    draws = None
    if len(names) >= 2:
        draws = resample_sums(on_grid(per_group), n_resamples, generator)
    found = {}
    for name, statistic in _statistics(k, n_judges).items():
        if statistic is None:
            continue
        point = float(statistic(per_group[:, spans[name]].sum(axis=0)[None, :])[0])
        low = high = float("nan")
        note = None
        if not units[name]:
            note = "no units to compare"
        elif not np.isfinite(point):
            note = "undefined: every mark is the same"
        elif draws is None:
            note = "only 1 query: no interval can be estimated"
        else:
            low, high, note = defined_percentiles(statistic(draws[:, spans[name]]), level, "it",
                                                  "too few queries whose marks differ to resample it")
        n_groups = len(names) if name in (PERCENT, ALPHA) else int(np.unique(group[_subset(codes, name)]).size)
        found[name] = Reliability(name, point, low, high, units[name], n_groups, level, n_resamples, seed, note)
    return found


# ----------------------------------------------------------------------------- the sums behind each statistic


def _codes(values: np.ndarray) -> tuple[np.ndarray, int]:
    """Marks as category codes 0..k-1 (-1 where missing) and k."""
    values = np.asarray(values, dtype=np.float64)
    if values.ndim != 2 or values.shape[1] < 2 or np.isinf(values).any():
        raise invalid_parameter("values", "a (units, judges) table of marks for two judges or more, NaN where missing",
                                values.shape)
    present = ~np.isnan(values)
    categories = np.unique(values[present])
    codes = np.full(values.shape, -1, dtype=np.int64)
    codes[present] = np.searchsorted(categories, values[present])
    return codes, max(len(categories), 1)


def _counts(codes: np.ndarray, k: int) -> np.ndarray:
    """(units, k): how many judges gave each mark."""
    counts = np.zeros((codes.shape[0], k))
    for column in codes.T:
        marked = column >= 0
        counts[np.flatnonzero(marked), column[marked]] += 1
    return counts


def _coincidences(counts: np.ndarray) -> np.ndarray:
    """(units, k, k): each unit's coincidences ``n_uc (n_uk - [c = k]) / (m_u - 1)`` (zero below 2 marks)."""
    m = counts.sum(axis=1)
    pairs = counts[:, :, None] * counts[:, None, :] - counts[:, :, None] * np.eye(counts.shape[1])[None]
    return np.where((m >= 2)[:, None, None], pairs / np.maximum(m - 1, 1)[:, None, None], 0.0)


def _subset(codes: np.ndarray, name: str) -> np.ndarray:
    """The units a statistic is computed on: every pairable unit, or those every judge marked (Cohen, Fleiss)."""
    if name in (COHEN, FLEISS):
        return (codes >= 0).all(axis=1)
    return np.ones(codes.shape[0], dtype=bool)


def _parts(codes: np.ndarray, counts: np.ndarray, k: int) -> list[tuple[str, np.ndarray, int]]:
    """Per statistic: its per-unit columns (summed per query, then resampled) and how many units it uses."""
    m = counts.sum(axis=1)
    agree = (counts.max(axis=1, initial=0) == m).astype(np.float64)
    parts = [(PERCENT, np.column_stack([agree, np.ones_like(agree)]), len(agree))]
    complete = _subset(codes, COHEN)
    if codes.shape[1] == 2:
        cells = np.zeros((len(codes), k * k))
        rows = np.flatnonzero(complete)
        cells[rows, codes[rows, 0] * k + codes[rows, 1]] = 1
        parts.append((COHEN, cells, int(complete.sum())))
    full = np.where(complete[:, None], counts, 0.0)
    r = codes.shape[1]
    agreement = np.where(complete, ((full ** 2).sum(axis=1) - r) / (r * (r - 1)), 0.0)
    parts.append((FLEISS, np.column_stack([agreement, complete.astype(np.float64), full]), int(complete.sum())))
    parts.append((ALPHA, _coincidences(counts).reshape(len(counts), k * k), len(counts)))
    return parts


def _statistics(k: int, n_judges: int) -> dict:
    """Per statistic: the function of its summed columns (rows: the point, or each resample)."""
    weights = disagreement_weights(k, "none")

    def percent(sums: np.ndarray) -> np.ndarray:
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(sums[:, 1] > 0, sums[:, 0] / sums[:, 1], np.nan)

    def cohen(sums: np.ndarray) -> np.ndarray:
        return kappa_from_tables(sums.reshape(-1, k, k), weights)

    def fleiss(sums: np.ndarray) -> np.ndarray:
        return _fleiss(sums[:, 0], sums[:, 1], sums[:, 2:], n_judges)

    def alpha(sums: np.ndarray) -> np.ndarray:
        return _alpha(sums.reshape(-1, k, k))

    return {PERCENT: percent, COHEN: cohen if n_judges == 2 else None, FLEISS: fleiss, ALPHA: alpha}


def _fleiss_sums(counts: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    r = int(counts.sum(axis=1)[0])
    agreement = ((counts ** 2).sum(axis=1) - r) / (r * (r - 1))
    return agreement.sum(), np.float64(len(counts)), counts.sum(axis=0), r


def _fleiss(agreement: np.ndarray, n_units: np.ndarray, category: np.ndarray, r: int) -> np.ndarray:
    """Fleiss' kappa from the summed per-unit agreement, the unit count and the marks per category."""
    agreement, n_units, category = np.asarray(agreement), np.asarray(n_units), np.asarray(category)
    with np.errstate(invalid="ignore", divide="ignore"):
        observed = agreement / n_units
        shares = category / (n_units * r)[..., None]
        chance = (shares ** 2).sum(axis=-1)
        kappa = (observed - chance) / (1 - chance)
    return np.where((n_units > 0) & (chance < 1 - 1e-12), kappa, np.nan)


def _alpha(coincidences: np.ndarray) -> np.ndarray:
    """Nominal alpha of each (k, k) coincidence matrix in ``coincidences`` (..., k, k)."""
    margins = coincidences.sum(axis=-1)
    n = margins.sum(axis=-1)
    off = 1 - np.eye(coincidences.shape[-1])
    observed = (coincidences * off).sum(axis=(-2, -1))
    expected = np.einsum("...c,...k,ck->...", margins, margins, off)
    with np.errstate(invalid="ignore", divide="ignore"):
        alpha = 1 - (n - 1) * observed / expected
    return np.where(expected > 1e-12, alpha, np.nan)
