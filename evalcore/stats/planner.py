"""How many labelled queries are enough: what this set can detect, and what more would buy.

Everything comes from the per-query differences between two runs (``run - baseline`` on one
metric) that the set already has, using the normal approximation of a paired test:

* smallest detectable difference at n queries:
  ``d_min = (z[1 - alpha/2] + z[power]) * sigma / sqrt(n)``;
* queries needed to detect a difference ``d``:
  ``n = (z[1 - alpha/2] + z[power])^2 * sigma^2 / d^2 + 2``, rounded up (7.85 sigma^2/d^2 + 2
  at alpha 0.05 and power 0.8; the +2 is the usual allowance for estimating sigma).

**sigma is taken at its one-sided upper confidence limit** (95% by default):
``s * sqrt((n - 1) / chi2.ppf(1 - confidence, n - 1))``, so the plan errs on the side of
asking for more labels rather than promising more than the set can deliver.

The planner also states how precisely a single model's mean is known at this n (the Wilson
half-width for 0/1 scores, the normal ``z * s / sqrt(n)`` otherwise) and that halving that
half-width takes about four times as many queries (width shrinks as 1 / sqrt(n)).

Differences are on the metric's own 0..1 scale: "3 points" of recall is ``target_diff=0.03``.
The plan in plain words is `evalcore.report.compare.plan_summary`'s.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import asdict, dataclass

import numpy as np
from scipy.special import chdtri, ndtri  # not scipy.stats: 0.4 s more to import on a cold dashboard

from ..errors import UsageError, invalid_parameter
from .intervals import check_level, wilson_interval


@dataclass(frozen=True)
class Plan:
    """What a labelled set can tell apart, and how many queries a named goal needs."""

    metric: str | None
    n: int
    sigma: float
    sigma_upper: float
    sigma_confidence: float
    alpha: float
    power: float
    min_detectable: float
    target_diff: float | None
    n_needed: int | None
    level: float
    halfwidth: float | None
    n_to_halve: int | None

    def to_dict(self) -> dict[str, object]:
        """Plain types, NaN as None so the result is valid JSON."""
        out = asdict(self)
        return {k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in out.items()}


def _probability(value: float, name: str, example: str) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not 0 < value < 1:
        raise invalid_parameter(name, f"a number strictly between 0 and 1, such as {example}", value)
    return float(value)


def _z_sum(alpha: float, power: float) -> float:
    return float(ndtri(1 - alpha / 2) + ndtri(power))


def _per_query(values: object, name: str, minimum: int) -> np.ndarray:
    try:
        array = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError):
        raise invalid_parameter(name, "numeric per-query values", type(values).__name__) from None
    if array.ndim != 1 or array.size < minimum:
        raise invalid_parameter(
            name, f"a 1-D array of at least {minimum} per-query values", f"shape {array.shape}"
        )
    if not np.isfinite(array).all():
        raise UsageError(f"The {name!r} parameter must hold finite numbers only.")
    return array


def sigma_upper_limit(sigma: float, n: int, confidence: float = 0.95) -> float:
    """One-sided upper confidence limit of a standard deviation ``sigma`` estimated from n values."""
    confidence = _probability(confidence, "confidence", "0.95")
    if isinstance(n, bool) or not isinstance(n, numbers.Integral) or n < 2:
        raise invalid_parameter("n", "an integer >= 2", n)
    if not sigma >= 0:
        raise invalid_parameter("sigma", "a number >= 0", sigma)
    return float(sigma * math.sqrt((n - 1) / chdtri(n - 1, confidence)))


def min_detectable_difference(sigma: float, n: int, alpha: float = 0.05, power: float = 0.8) -> float:
    """Smallest true difference a paired two-sided test at ``alpha`` finds with ``power``."""
    alpha = _probability(alpha, "alpha", "0.05")
    power = _probability(power, "power", "0.8")
    if isinstance(n, bool) or not isinstance(n, numbers.Integral) or n < 1:
        raise invalid_parameter("n", "an integer >= 1", n)
    return _z_sum(alpha, power) * sigma / math.sqrt(n)


def queries_needed(diff: float, sigma: float, alpha: float = 0.05, power: float = 0.8) -> int:
    """Queries needed to detect a true difference ``diff`` (0..1 scale) with ``power``."""
    alpha = _probability(alpha, "alpha", "0.05")
    power = _probability(power, "power", "0.8")
    if isinstance(diff, bool) or not isinstance(diff, numbers.Real) or not 0 < diff <= 1:
        raise invalid_parameter(
            "target_diff", "a difference on the metric's 0..1 scale, > 0 and <= 1 (3 points = 0.03)", diff
        )
    # The tiny slack stops float noise (322.0000000001) from asking for one more query.
    return math.ceil(_z_sum(alpha, power) ** 2 * sigma**2 / diff**2 + 2 - 1e-9)


def single_halfwidth(scores: np.ndarray, level: float = 0.95) -> float:
    """Half-width of one model's interval at its observed mean and n.

    Wilson for 0/1 scores (what `evalcore.stats.intervals.mean_intervals` reports), the normal
    ``z * s / sqrt(n)`` otherwise (close to the bootstrap's width, without resampling).
    """
    x = _per_query(scores, "scores", 1)
    level = check_level(level)
    if ((x == 0) | (x == 1)).all():
        return wilson_interval(int(x.sum()), x.size, level).halfwidth
    if x.size < 2:
        return float("nan")
    return float(ndtri(0.5 + level / 2) * x.std(ddof=1) / math.sqrt(x.size))


def plan(
    diffs: np.ndarray,
    *,
    metric: str | None = None,
    scores: np.ndarray | None = None,
    target_diff: float | None = None,
    alpha: float = 0.05,
    power: float = 0.8,
    level: float = 0.95,
    sigma_confidence: float = 0.95,
) -> Plan:
    """Plan labelling from observed per-query differences between two runs on ``metric``.

    ``scores`` (one model's per-query scores on the same metric) adds the single-model
    half-width; ``target_diff`` (0..1 scale) adds the queries needed to detect it.
    """
    d = _per_query(diffs, "diffs", 2)
    alpha = _probability(alpha, "alpha", "0.05")
    power = _probability(power, "power", "0.8")
    level = check_level(level)
    n = int(d.size)
    sigma = float(d.std(ddof=1))
    sigma_u = sigma_upper_limit(sigma, n, sigma_confidence)
    detectable = min_detectable_difference(sigma_u, n, alpha, power) if sigma > 0 else float("nan")
    needed = None
    if target_diff is not None:
        needed = queries_needed(target_diff, sigma_u, alpha, power)  # validates target_diff
        needed = needed if sigma > 0 else None
    halfwidth = None
    if scores is not None:
        if np.asarray(scores).size != n:
            raise UsageError(
                f"'scores' and 'diffs' must cover the same queries: got "
                f"{np.asarray(scores).size} scores and {n} differences."
            )
        halfwidth = single_halfwidth(scores, level)

    return Plan(
        metric=metric, n=n, sigma=sigma, sigma_upper=sigma_u,
        sigma_confidence=float(sigma_confidence), alpha=alpha, power=power,
        min_detectable=detectable, target_diff=None if target_diff is None else float(target_diff),
        n_needed=needed, level=level, halfwidth=halfwidth,
        n_to_halve=4 * n if halfwidth is not None else None,
    )
