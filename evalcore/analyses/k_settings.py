"""The k decision's settings: what a person can set on the command line, the Choose k page or in Python, and every
default, declared once here (light to import: the CLI's help shows them without loading the budget's code)."""

from __future__ import annotations

from dataclasses import dataclass

from ..stats.intervals import DEFAULT_RESAMPLES
from .k_choice import DEFAULT_LAMBDA
from .tokens import DEFAULT_TOKENIZER

DEFAULT_MAX_K = 50
STOP_REFERENCE_K = 50
"""What "stopping at k" is measured against, on every surface (command, page, report): recall and prompt tokens
at k = 50, or at the table's largest k when it is shorter, or at the k to take when that is deeper."""
DEFAULT_PRICE_PER_MTOK = 1.00
"""Generator input price used when none is given: $1.00 per million tokens (a placeholder)."""
DEFAULT_CHUNK_TOKENS = 300
"""The size of every chunk when no documents file can size them and the person gave none."""

DEFAULT_BUDGET_RESAMPLES = DEFAULT_RESAMPLES
"""10,000, as `evaluate`: recall@k and its interval are the same numbers in every report."""

__all__ = ["DEFAULT_BUDGET_RESAMPLES", "DEFAULT_CHUNK_TOKENS", "DEFAULT_LAMBDA", "DEFAULT_MAX_K", "DEFAULT_PRICE_PER_MTOK",
           "DEFAULT_TOKENIZER", "STOP_REFERENCE_K", "BudgetSettings"]


@dataclass(frozen=True)
class BudgetSettings:
    """What a person sets for the k decision, on the command line, the Choose k page or in Python; None = the default
    declared in this module (every front end takes its defaults from here)."""

    max_k: int = DEFAULT_MAX_K
    price_per_mtok: float | None = None
    requests_per_month: float | None = None
    overhead_tokens: int = 0
    chunk_tokens: int | None = None
    tokenizer: str = DEFAULT_TOKENIZER
    lam: float | None = None
    value_per_point: float | None = None
    level: float = 0.95
    n_resamples: int = DEFAULT_BUDGET_RESAMPLES
