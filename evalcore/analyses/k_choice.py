"""Where recall stops paying: the rule that picks k, the smooth fit it reads, the elbow, and how stable the pick is.

Pure functions over recall and token curves (NumPy arrays over k = 1..K), so `evalcore.analyses.budget`
applies the same rule to the point estimate and to every bootstrap resample at once.

**The recommended k** maximises ``100 * recall(k) - lambda * tokens(k) / 1000``, smallest k
on ties: ``lambda`` is the recall points (1 point = 0.01 recall) the user would give up to
save 1,000 prompt tokens on every request; equivalently the chunk at k is worth adding
while it gains more than ``lambda`` points per 1,000 tokens it adds. ``lambda`` is, in this
order: ``lam`` as given; or derived as (monthly cost of 1,000 more tokens per request) /
(``value_per_point``, what one recall point is worth per month), i.e.
``price_per_mtok * requests_per_month / 1000 / value_per_point``; or the default
`DEFAULT_LAMBDA` = 10 points per 1,000 tokens: a typical 100-300 token chunk must add at
least 1-3 recall points to be worth carrying in every prompt. (At 1 point per 1,000 tokens
almost any gain pays for a chunk, so the pick sits at the largest k and says nothing.) The
mean recall curve is a step curve, and on small label sets its steps are mostly noise, which
makes the argmax jump. So below
`FIT_BELOW_QUERIES` (300) queries the rule is applied to a smooth saturating fit,
``recall(k) ~ a - b * k**-d`` (b >= 0, least squares over k = 1..K, d profiled on a fine
grid so the fit is closed-form and vectorised); from 300 queries on, to the raw curve. The
fit is reported either way (``recall_fit`` column, ``rule["fit"]``), and the rule with all
its parameters travels with the answer (``rule``).

**The elbow** (``kneedle_k``) is the plain Kneedle point of the raw recall@k curve
(Satopaa et al. 2011, without its sensitivity threshold): scale k and recall to [0, 1] and
take the k farthest above the diagonal. It ignores cost; None when the curve is flat or never bends.

**One rule at a time** (`BASIS_ELBOW`, `BASIS_TRADE_OFF`): the k to take is the elbow until the person gives a
trade-off (``lam``, or what a recall point is worth with the monthly requests), then the rule above. The default
``lambda`` is a placeholder nobody set, so no surface shows the rule's pick before a trade-off is given; with
no elbow (a flat curve, or fewer than 3 values of k) the rule's pick is taken and said to be so.

**Stability.** The rule in force (the elbow, or the trade-off) is re-applied to ``n_resamples`` bootstrap resamples of the queries
(default 10,000 as for every interval; the same shared draw as the intervals, from ``rng``):
``stability`` gives the range holding the middle 80% of the resampled picks ("k = 12; 83% of resamples between
10 and 14"), the share at exactly the k taken and the distribution of picks. The
pick is marked ``unstable`` when there are fewer than `MIN_STABLE_QUERIES` (100) queries or
when that 80% range is wider than the k itself.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import invalid_parameter

DEFAULT_LAMBDA = 10.0
"""Recall points that 1,000 more prompt tokens per request must buy, when nothing else is said."""

FIT_BELOW_QUERIES = 300
"""Below this many queries the rule reads a smooth saturating fit of the recall curve."""

MIN_STABLE_QUERIES = 100
"""Below this many queries the recommended k is marked unstable whatever the resamples say."""

STABILITY_LEVEL = 0.8
"""Share of resampled picks the reported k range holds (the middle 80%)."""

RULE_NAME = "max_recall_minus_lambda_tokens"
BASIS_ELBOW = "elbow"
"""The k to take is the elbow: no trade-off between recall and tokens was given."""
BASIS_TRADE_OFF = "trade-off"
"""The k to take is the rule's pick at the person's trade-off (or, with no elbow, at the default lambda)."""
FIT_MODEL = "a - b * k**-d"

_FIT_EXPONENTS = np.geomspace(0.02, 5.0, 240)
_TIE_POINTS = 1e-6


@dataclass(frozen=True)
class SaturatingFit:
    """Least-squares fits ``a - b * k**-d`` of one or more curves (one row each)."""

    a: np.ndarray
    b: np.ndarray
    d: np.ndarray
    curves: np.ndarray  # (n_curves, K) fitted values at k = 1..K
    rmse: np.ndarray  # root mean squared residual, on the curve's own scale


def fit_saturating(curves: np.ndarray, ceiling: float = 1.0) -> SaturatingFit:
    """Fit ``y(k) ~ a - b * k**-d`` (b >= 0, a <= ``ceiling``) to each row of ``curves``, k = 1..K.

    For a fixed d the model is linear in (a, b), so d is profiled over a fine log grid
    (0.02 to 5) and (a, b) solved in closed form, on the boundary ``a = ceiling`` when the
    free solution would saturate above it (recall cannot pass 1): all rows at once, no
    iterative optimiser. Needs K >= 3; a row that never rises gets b = 0 (its mean).
    """
    y = np.atleast_2d(np.asarray(curves, dtype=np.float64))
    n_curves, depth = y.shape
    if depth < 3:
        raise invalid_parameter("curves", "curves over at least 3 values of k", f"{depth}")
    k = np.arange(1, depth + 1, dtype=np.float64)
    basis = k[:, None] ** -_FIT_EXPONENTS[None, :]  # (K, D)
    zbar = basis.mean(axis=0)
    zc = basis - zbar
    szz = (zc**2).sum(axis=0)
    ybar = y.mean(axis=1)
    yc = y - ybar[:, None]
    syy = (yc**2).sum(axis=1)
    szy = yc @ zc  # (n_curves, D)
    # Free least squares per d; a slope that makes the curve fall is clipped to b = 0.
    b_free = np.maximum(-szy / szz, 0.0)
    a_free = ybar[:, None] + b_free * zbar
    sse_free = syy[:, None] - np.where(szy < 0, szy**2 / szz, 0.0)
    # On the boundary a = ceiling: ceiling - y ~ b * z, least squares through the origin.
    gap = ceiling - y
    szu = gap @ basis
    s00 = (basis**2).sum(axis=0)
    b_edge = np.maximum(szu / s00, 0.0)
    sse_edge = (gap**2).sum(axis=1)[:, None] - np.where(szu > 0, szu**2 / s00, 0.0)
    free = a_free <= ceiling
    sse = np.where(free, sse_free, sse_edge)
    best = np.argmin(sse, axis=1)
    rows = np.arange(n_curves)
    use_free = free[rows, best]
    a = np.where(use_free, a_free[rows, best], ceiling)
    b = np.where(use_free, b_free[rows, best], b_edge[rows, best])
    fitted = a[:, None] - b[:, None] * basis[:, best].T
    rmse = np.sqrt(np.maximum(sse[rows, best], 0.0) / depth)
    return SaturatingFit(a, b, _FIT_EXPONENTS[best], fitted, rmse)


def pick_k(recall: np.ndarray, tokens: np.ndarray, lam: float) -> np.ndarray:
    """The k maximising ``100 * recall(k) - lam * tokens(k) / 1000`` along the last axis.

    ``recall`` (0..1) and ``tokens`` (mean prompt tokens) are (..., K); ties (within 1e-6
    points) go to the smallest k, the cheaper one. Returns 1-based k, shape (...,).
    """
    value = 100.0 * np.asarray(recall, dtype=np.float64) - lam * np.asarray(tokens, dtype=np.float64) / 1000.0
    top = value.max(axis=-1, keepdims=True)
    return np.argmax(value >= top - _TIE_POINTS, axis=-1) + 1


def kneedle_k(curve: np.ndarray) -> int | None:
    """The plain Kneedle elbow of a rising curve over k = 1..K, or None.

    k and the curve are scaled to [0, 1]; the elbow is the k where the curve lies farthest
    above the diagonal. None when K < 3, the curve is flat, or it never rises above the line.
    """
    k = int(kneedle_ks(np.asarray(curve, dtype=np.float64)[None, :])[0])
    return k or None


def kneedle_ks(curves: np.ndarray) -> np.ndarray:
    """`kneedle_k` of every row of ``curves`` (n, K) at once: 1-based k, 0 where a row has no elbow."""
    y = np.asarray(curves, dtype=np.float64)
    n, depth = y.shape
    if depth < 3:
        return np.zeros(n, dtype=np.int64)
    low, high = y.min(axis=1, keepdims=True), y.max(axis=1, keepdims=True)
    span = high - low
    flat = span[:, 0] <= 1e-12
    with np.errstate(invalid="ignore", divide="ignore"):
        diff = (y - low) / np.where(flat[:, None], 1.0, span) - np.arange(depth) / (depth - 1)
    best = np.argmax(diff, axis=1)
    bends = diff[np.arange(n), best] > 1e-12
    return np.where(bends & ~flat, best + 1, 0).astype(np.int64)


def pick_stability(picks: np.ndarray, recommended: int, n: int, n_resamples: int, seed: int) -> dict:
    """How stable the recommended k is: the range of the middle `STABILITY_LEVEL` of the resampled ``picks``,
    the share at the recommendation, the distribution of picks, and whether (and why) it is unstable."""
    tail = (1 - STABILITY_LEVEL) / 2
    low = int(np.quantile(picks, tail, method="inverted_cdf"))
    high = int(np.quantile(picks, 1 - tail, method="inverted_cdf"))
    share = float(np.mean((picks >= low) & (picks <= high)))
    values, counts = np.unique(picks, return_counts=True)
    reasons = []
    if n < MIN_STABLE_QUERIES:
        reasons.append(f"only {n} queries (fewer than {MIN_STABLE_QUERIES})")
    if high - low > recommended:
        reasons.append(f"the middle {STABILITY_LEVEL:.0%} of resampled picks spans {low} to {high}, wider than "
                       f"k = {recommended} itself")
    return {
        "low_k": low, "high_k": high, "share": share, "level": STABILITY_LEVEL,
        "share_at_recommended": float(np.mean(picks == recommended)),
        "unstable": bool(reasons), "reason": "; ".join(reasons) or None,
        "n_resamples": n_resamples, "seed": seed,
        "picks": [{"k": int(v), "share": float(c) / len(picks)} for v, c in zip(values, counts)],
    }
