"""Numbers as people read them aloud: metric amounts, p-values, money, size ratios and byte counts.

* **Metric amounts**: shares (recall, hit, precision, judged) in points (0.131 -> "13.1 points"); mrr, ndcg and
  unknown metrics as plain decimals ("0.042"). A rounded zero never keeps its minus sign, and minus signs are ASCII
  so every console can print them.
* **p-values**: ``p < 0.001``, ``p = 0.004``, ``p = 0.21``.
* **Money**: whole dollars from $100, cents from $1, else three significant digits (a per-request cost of $0.0004
  does not print as $0.00).
* **Intervals**: `format_interval`, the one way an interval is written, in a table cell (``0.480 – 0.580``), a CLI
  table (``0.480-0.580``), beside its mean (``0.5300 (0.4800 to 0.5800)``) or in a sentence (``3.7 to 12.4``).
"""

from __future__ import annotations

import math
import re
from typing import Callable

_SHARE_METRICS = {"recall", "r", "hit", "hits", "success", "precision", "p", "judged", "accuracy"}
_METRIC_BASE = re.compile(r"^\s*([a-z]+)", re.IGNORECASE)


def is_share_metric(metric: str) -> bool:
    """True for metrics read as percentages (recall, hit, precision, judged), so in points."""
    match = _METRIC_BASE.match(metric)
    return bool(match) and match.group(1).lower() in _SHARE_METRICS


def format_amount(metric: str, value: float, *, unit: bool = True) -> str:
    """``13.1 points`` for share metrics, ``0.042`` for the others (``unit=False`` drops 'points')."""
    if is_share_metric(metric):
        text = f"{value * 100:.1f}"
        text = "0.0" if text == "-0.0" else text
        return f"{text} points" if unit else text
    text = f"{value:.3f}"
    return "0.000" if text == "-0.000" else text


def format_interval(low: float | None, high: float | None, *, digits: int = 3, join: str = " – ",
                    metric: str | None = None, number: Callable[[float], str] | None = None,
                    mean: float | None = None, missing: str = "–") -> str:
    """An interval as people read it: ``0.480 – 0.580`` (each end to ``digits`` decimals, joined by ``join``).

    ``metric`` writes each end as `format_amount` does without its unit (``3.7 to 12.4`` for a share in points);
    ``number`` writes each end (and the mean) any other way (``+0.012``, ``5.1%``). With ``mean`` the interval follows
    it in brackets: ``0.5300 (0.4800 to 0.5800)``. A missing end (None or NaN) reads ``missing``."""
    if number is None:
        number = (lambda value: format_amount(metric, value, unit=False)) if metric else (
            lambda value: f"{value:.{digits}f}")
    gone = low is None or high is None or _is_nan(low) or _is_nan(high)
    text = missing if gone else f"{number(low)}{join}{number(high)}"
    return text if mean is None else f"{number(mean)} ({text})"


def _is_nan(value: float) -> bool:
    try:
        return math.isnan(value)
    except TypeError:  # pandas' NA
        return True


def format_p(p: float) -> str:
    """``p < 0.001``, ``p = 0.004``, ``p = 0.21``."""
    if p < 0.001:
        return "p < 0.001"
    if p < 0.01:
        return f"p = {p:.3f}"
    return f"p = {p:.2f}"


def money(value: float | None, cents: bool = False) -> str:
    """Dollars for a table cell: whole dollars from $100, cents from $1 (or always with ``cents``),
    else three significant digits so small per-request costs do not print as $0.00; "-" for no number."""
    if value is None or not math.isfinite(value):
        return "-"
    if abs(value) >= 100 and not cents:
        return f"${value:,.0f}"
    if abs(value) >= 1 or (cents and abs(value) >= 0.01) or value == 0:
        return f"${value:,.2f}"
    return f"${value:.3g}"


def times(ratio: float) -> str:
    """``96x``, ``3.8x``, ``1.0x``."""
    return f"{ratio:,.0f}x" if ratio >= 10 else f"{ratio:.1f}x"


def human_bytes(size: int) -> str:
    """``1.2 MB``, ``310 kB``, ``512 B`` (decimal units)."""
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if size >= scale:
            return f"{size / scale:.3g} {unit}"
    return f"{size} B"
