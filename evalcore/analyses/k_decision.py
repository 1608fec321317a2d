"""The k a person takes to the meeting, from what they said: the recommendation when they gave a trade-off (what a
recall point is worth, or lambda), else the elbow of the recall curve, and what that k keeps and costs.

The rule behind the recommendation (`evalcore.analyses.k_choice`) needs a trade-off between recall and tokens; the
default lambda is a placeholder nobody set, so a decision that rests on it would be evalcore's, not the team's.
Until a trade-off is given the decision is the elbow (where recall stops rising steeply, cost aside), and the page,
the command and the report say that a trade-off is missing. The k budget takes the decision
(`evalcore.analyses.budget`); this module reads it with what that k keeps and costs.
"""

from __future__ import annotations

from dataclasses import dataclass

from .budget_report import RunBudget
from .k_choice import BASIS_ELBOW, BASIS_TRADE_OFF

__all__ = ["BASIS_ELBOW", "BASIS_TRADE_OFF", "KDecision", "k_decision"]


@dataclass(frozen=True)
class KDecision:
    """One run's k and what it keeps: its recall against the reference k, its tokens, and (with a price the person
    set) what it costs per 1,000 requests and per month."""

    run: str
    k: int
    basis: str  # BASIS_TRADE_OFF (a trade-off was given, or the curve has no elbow) or BASIS_ELBOW
    recall: float
    reference_k: int
    reference_recall: float
    tokens: float
    marginal_recall: float  # what the k-th chunk added (recall points as a share)
    price_given: bool
    cost_per_1k_requests: float
    cost_per_month: float | None

    @property
    def share_kept(self) -> float:
        """recall(k) / recall(reference k): how much of the recall of the reference this k keeps."""
        return self.recall / self.reference_recall if self.reference_recall > 0 else 1.0


def k_decision(run: RunBudget) -> KDecision:
    """The decision for one run, as the k budget took it (`RunBudget.recommended_k` by its one rule). Point numbers
    only (`RunBudget.point_row`): it never waits for the budget's bootstrap."""
    k = run.recommended_k
    row = run.point_row(k)
    reference = run.reference_k
    return KDecision(
        run=run.name, k=int(k), basis=run.basis,
        recall=float(row["recall"]), reference_k=int(reference),
        reference_recall=float(run.point_row(reference)["recall"]),
        tokens=float(row["tokens_mean"]), marginal_recall=float(row["marginal_recall"]),
        price_given=run.price_source != "default", cost_per_1k_requests=float(row["cost_per_1k_requests"]),
        cost_per_month=None if run.requests_per_month is None else float(row["cost_per_month"]))
