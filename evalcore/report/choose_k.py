"""The Choose k decision in words: the headline every surface opens on (the page, ``evalcore budget``, the meeting
report), and chunkings compared at a prompt budget. One builder, so each says the same sentence from the same
numbers."""

from __future__ import annotations

from ..analyses.decision import Decision
from ..analyses.k_decision import BASIS_ELBOW, KDecision
from ..analyses.token_budget import AtTokens
from ..safe_text import md_table, text_table
from .amounts import format_interval, format_p, money

MAX_RUNS_IN_HEADLINE = 3


def _clause(decision: KDecision, first: bool) -> str:
    """One run's k with what it keeps and costs: in full for the first run named, short for the others."""
    kept = (f"{decision.share_kept:.0%} of the recall of k = {decision.reference_k}" if first
            else f"{decision.share_kept:.0%}") if decision.k < decision.reference_k else f"recall {decision.recall:.0%}"
    tokens = f"{decision.tokens:,.0f} prompt tokens" if first else f"{decision.tokens:,.0f} tokens"
    cost = ""
    if decision.price_given:
        cost = f", {money(decision.cost_per_1k_requests)}" + (" per 1,000 requests" if first else "")
        if decision.cost_per_month is not None:
            cost += f" or {money(decision.cost_per_month)} a month" if first else ""
    return f"k = {decision.k} for {decision.run} ({kept}, {tokens}{cost})"


def decision_sentence(decisions: list[KDecision]) -> str:
    """The runs' k in one sentence: "Recall flattens at k = 9 for base (89% of the recall of k = 50, 825 prompt
    tokens) and k = 14 for tuned (94%, 1,281 tokens)." (the elbow: no trade-off given), or "With your numbers, k = 8
    for tuned (97% of the recall of k = 50, 724 prompt tokens, $1.81 per 1,000 requests)." (the recommendation)."""
    clauses = [_clause(d, i == 0) for i, d in enumerate(decisions)]
    listed = clauses[0] if len(clauses) == 1 else ", ".join(clauses[:-1]) + " and " + clauses[-1]
    elbow = all(d.basis == BASIS_ELBOW for d in decisions)
    lead = "Recall flattens at " if elbow else "With your numbers, "
    return lead + listed + "."


def choose_k_headline(decision: Decision) -> str:
    """The Choose k page's opening sentences (and ``evalcore budget``'s first lines, and the meeting report's): each
    run's k to take (the decision's) with what it keeps and costs, then what the person has not said yet, if
    anything."""
    decisions = [decision.k_to_take(run) for run in decision.runs[:MAX_RUNS_IN_HEADLINE]]
    text = decision_sentence(decisions)
    if any(d.basis == BASIS_ELBOW for d in decisions):
        text += " Say what a recall point is worth to you for a k that weighs what the tokens cost."
    elif not decisions[0].price_given:
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
            unsettled = compared.ci_low > 0 or compared.ci_high < 0  # the interval says a gap the test does not
            verdict = (f" ({'could be luck' if unsettled else 'indistinguishable'}, {format_p(compared.p_adjusted)})"
                       if not compared.significant
                       else f" (behind, {format_p(compared.p_adjusted)})")
        parts.append(f"{run.name} with k = {run.k} {run.value:.0%}{verdict}")
        if compared is not None and compared.significant and run.reaches_k is not None and run.reaches_k > run.k:
            behind.append(f"{run.name} needs k = {run.reaches_k} to match {best.name}")
    text = ", ".join(parts)
    if behind:
        text += "; " + "; ".join(behind)
    return text + f" (n = {found.n:,} queries)."


def chunking_headline(found: AtTokens, budget_from: str | None = None) -> str:
    """The chunking and the k to take in one line, then the comparison at the budget that backs it: "Take char400
    with k = 4 (or sent3 with k = 6: indistinguishable at this budget). At about 300 prompt tokens, ...".
    ``budget_from`` says where the budget came from when the person did not give it."""
    best = found.best
    backing = at_tokens_sentence(found)
    if budget_from:
        backing = backing.replace(f"At about {found.tokens:,.0f} prompt tokens",
                                  f"At about {found.tokens:,.0f} prompt tokens ({budget_from})", 1)
    if best is None:
        return backing
    tied = [r for r in found.runs[1:] if r.k is not None and r.name in found.comparisons
            and not found.comparisons[r.name].significant]
    lead = f"Take {best.name} with k = {best.k}"
    if tied:
        others = " or ".join(f"{r.name} with k = {r.k}" for r in tied)
        lead += f" (or {others}: indistinguishable at this budget)"
    return f"{lead}. {backing}"


def at_tokens_dict(found: AtTokens) -> dict:
    """``evalcore compare --at-tokens N --format json``: the budget, each run at its k, the comparisons and the
    sentence."""
    return {
        "at_tokens": found.tokens, "metric": found.metric, "n": found.n, "sentence": at_tokens_sentence(found),
        "runs": [{"name": r.name, "model": r.model, "k": r.k, "tokens_mean": r.tokens_mean, "mean": r.value,
                  "ci_low": r.ci_low, "ci_high": r.ci_high, "reaches_k": r.reaches_k,
                  "vs_best": None if r.name not in found.comparisons else {
                      "diff": found.comparisons[r.name].diff, "ci_low": found.comparisons[r.name].ci_low,
                      "ci_high": found.comparisons[r.name].ci_high,
                      "p_adjusted": found.comparisons[r.name].p_adjusted,
                      "significant": found.comparisons[r.name].significant}}
                 for r in found.runs],
    }


def at_tokens_text(found: AtTokens, markdown: bool = False) -> str:
    """``evalcore compare --at-tokens N`` for people: the sentence, then a row per run."""
    label = "recall" if found.metric == "recall" else "evidence recall"
    header = ["run", "k", "tokens", label, "95% CI", "vs best", "p (Holm)", "model"]
    body = []
    for r in found.runs:
        vs = found.comparisons.get(r.name)
        body.append([r.name, "-" if r.k is None else str(r.k),
                     "-" if r.tokens_mean is None else f"{r.tokens_mean:,.0f}",
                     "-" if r.value is None else f"{r.value:.3f}",
                     format_interval(r.ci_low, r.ci_high, join="-", missing="-"),
                     "best" if r is found.best else ("-" if vs is None else f"{vs.diff:+.3f}"),
                     "-" if vs is None else format_p(vs.p_adjusted).removeprefix("p ").removeprefix("= "),
                     r.model])
    title = f"at {found.tokens:,.0f} mean prompt tokens, n = {found.n:,} queries"
    table = md_table(title, header, body) if markdown else text_table(header, body, right={1, 2, 3, 5}, title=title)
    return f"{at_tokens_sentence(found)}\n\n{table}\n"
