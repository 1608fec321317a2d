"""Numbers as people read them aloud: metric amounts, p-values, money, size ratios and byte counts.

* **Metric amounts**: shares (recall, hit, precision, judged) in points (0.131 -> "13.1 points"); mrr, ndcg and
  unknown metrics as plain decimals ("0.042"). A rounded zero never keeps its minus sign, and minus signs are ASCII
  so every console can print them.
* **p-values**: ``p < 0.001``, ``p = 0.004``, ``p = 0.21``.
* **Money**: whole dollars from $100, cents from $1, else three significant digits (a per-request cost of $0.0004
  does not print as $0.00).
"""

from __future__ import annotations

import math
import re

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
