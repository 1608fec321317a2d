"""The Choose k decision in words: the headline every surface opens on (the page, ``evalcore budget``, the meeting
report), and chunkings compared at a prompt budget. One builder, so each says the same sentence from the same
numbers."""

from __future__ import annotations

from ..analyses.budget_report import BudgetReport
from ..analyses.k_decision import BASIS_ELBOW, KDecision, k_decision
from ..analyses.token_budget import AtTokens
from .amounts import format_p, money

MAX_RUNS_IN_HEADLINE = 3


def decision_sentence(decision: KDecision) -> str:
    """One run's k in a sentence: what it keeps of the reference k's recall, for how many prompt tokens and (with a
    price the person set) what it costs.

    "tuned: k = 6 keeps 97% of the recall of k = 50 for 540 prompt tokens ($0.54 per 1,000 requests at your
    price)"; without a trade-off the k is the elbow and the sentence says so."""
    what = (f"recall flattens at k = {decision.k} (the elbow)" if decision.basis == BASIS_ELBOW
            else f"k = {decision.k}")
    keeps = ("keeping" if decision.basis == BASIS_ELBOW else "keeps")
    if decision.k >= decision.reference_k:
        kept = f"recall {decision.recall:.0%}"
    else:
        kept = f"{keeps} {decision.share_kept:.0%} of the recall of k = {decision.reference_k}"
    if decision.basis == BASIS_ELBOW and decision.k >= decision.reference_k:
        kept = f"at recall {decision.recall:.0%}"
    cost = ""
    if decision.price_given:
        cost = f" ({money(decision.cost_per_1k_requests)} per 1,000 requests"
        if decision.cost_per_month is not None:
            cost += f", {money(decision.cost_per_month)} a month"
        cost += " at your price)"
    joiner = ", " if decision.basis == BASIS_ELBOW else " "
    return f"{decision.run}: {what}{joiner}{kept} for {decision.tokens:,.0f} prompt tokens{cost}"


def choose_k_headline(report: BudgetReport, runs: list[str] | None = None) -> str:
    """The Choose k page's opening sentences (and ``evalcore budget``'s first lines, and the meeting report's): each
    run's k with what it keeps and costs, then what is missing for a recommendation, if anything."""
    chosen = [report[name] for name in (runs or [r.name for r in report])][:MAX_RUNS_IN_HEADLINE]
    decisions = [k_decision(run) for run in chosen]
    text = "; ".join(decision_sentence(d) for d in decisions) + "."
    if any(d.basis == BASIS_ELBOW for d in decisions):
        text += (" That is where recall stops rising steeply, cost aside: say what a recall point is worth to you "
                 "(with your price and requests a month) for a recommendation that weighs the tokens.")
    if not chosen[0].price_source != "default":
        text += " Set your LLM's price to see what the prompt costs."
    return text


def at_tokens_sentence(found: AtTokens) -> str:
    """Chunkings at one prompt budget in a sentence: "At about 1,000 prompt tokens, sent3 with k = 5 holds 84% of the
    evidence, char400 with k = 4 82% (indistinguishable, p = 0.41); sent1 needs k = 12"."""
    what = "finds" if found.metric == "recall" else "holds"
    of = "of the relevant documents" if found.metric == "recall" else "of the evidence"
    best = found.best
    if best is None:
        return f"No run fits even one chunk in {found.tokens:,.0f} prompt tokens."
    parts = [f"At about {found.tokens:,.0f} prompt tokens, {best.name} with k = {best.k} {what} {best.value:.0%} {of}"]
    behind = []
    for run in found.runs[1:]:
        if run.k is None:
            behind.append(f"{run.name} does not fit one chunk")
            continue
        compared = found.comparisons.get(run.name)
        verdict = ""
        if compared is not None:
            verdict = (f" (indistinguishable, {format_p(compared.p_adjusted)})" if not compared.significant
                       else f" (behind, {format_p(compared.p_adjusted)})")
        parts.append(f"{run.name} with k = {run.k} {run.value:.0%}{verdict}")
        if compared is not None and compared.significant and run.reaches_k is not None and run.reaches_k > run.k:
            behind.append(f"{run.name} needs k = {run.reaches_k} to match {best.name}")
    text = ", ".join(parts)
    if behind:
        text += "; " + "; ".join(behind)
    return text + f" (n = {found.n:,} queries)."
