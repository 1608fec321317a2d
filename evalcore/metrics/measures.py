"""Metric names that round-trip: ``recall@5`` parses to a `Measure` and prints back the same.

One registry holds what each metric means (including its trap), so CLI help, docs and the
dashboard's tooltips all say the same thing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from ..errors import invalid_parameter

CUTOFF_MEASURES = ("recall", "hit", "precision", "ndcg", "judged")
"""Measures that take a cutoff k, in the order reports list them."""
EVIDENCE_MEASURES = ("evidence_recall", "evidence_precision")
"""Cutoff measures of the evidence inside the chunks (labels with spans, a chunk map with offsets): listed after the
others, only where they can be computed, averaged over the queries with evidence spans."""

DESCRIPTIONS: dict[str, str] = {
    "recall": "Share of a query's relevant docs found in the top k (one of two found = 0.5), "
    "averaged over queries. Not the same as hit@k.",
    "hit": "1 if any relevant doc is in the top k, else 0, averaged over queries "
    "(trec_eval success_k). A query with four relevant docs and one found counts as a hit.",
    "precision": "Relevant docs in the top k divided by k, even when fewer than k were returned.",
    "ndcg": "Discounted gain of the top k (gain = the raw grade, discount 1/log2(rank+1)) over "
    "the best possible ordering of the labels.",
    "judged": "Share of the docs returned in the top k that carry any judgment. Low values mean "
    "the labels do not reach as deep as the number being quoted.",
    "mrr": "Mean over queries of 1 / rank of the first relevant doc; a query with no relevant "
    "doc returned scores 0, it is never skipped.",
    "evidence_recall": "Share of the query's evidence characters (the spans a person marked in the relevant "
    "documents) inside the top k chunks, averaged over the queries with evidence. A chunk can be relevant and "
    "still hold little of the answer.",
    "evidence_precision": "Share of the top k chunks' characters that are evidence (overlapping chunks count each "
    "character once), averaged over the queries with evidence: what the prompt spends on the answer.",
}

_ALIASES = {
    "recall": "recall", "r": "recall",
    "hit": "hit", "success": "hit", "hits": "hit",
    "precision": "precision", "p": "precision",
    "ndcg": "ndcg", "ndcg_cut": "ndcg",
    "judged": "judged",
    "mrr": "mrr", "rr": "mrr", "recip_rank": "mrr",
    "evidence_recall": "evidence_recall", "evidence_precision": "evidence_precision",
}
_PATTERN = re.compile(r"^\s*([a-z_]+)\s*(?:[@_]\s*(\d+))?\s*$", re.IGNORECASE)


@dataclass(frozen=True, order=True)
class Measure:
    """A metric and its cutoff: ``Measure("recall", 5)`` is ``recall@5``; MRR has no cutoff."""

    name: str
    k: int | None = None

    def __str__(self) -> str:
        return self.name if self.k is None else f"{self.name}@{self.k}"

    @property
    def per_query_name(self) -> str:
        """Column name in per-query tables: the mean ``mrr`` is the mean of per-query ``rr``."""
        return "rr" if self.name == "mrr" else str(self)

    @property
    def description(self) -> str:
        return DESCRIPTIONS[self.name]

    @classmethod
    def parse(cls, text: "str | Measure") -> "Measure":
        """Parse ``recall@5``, ``P@10``, ``success_1``, ``mrr``; raise a usage error otherwise."""
        if isinstance(text, Measure):
            return text
        match = _PATTERN.match(str(text))
        name = _ALIASES.get(match.group(1).lower()) if match else None
        if name is None:
            raise invalid_parameter(
                "metric", "one of recall@k, hit@k, precision@k, ndcg@k, judged@k, mrr, evidence_recall@k or "
                "evidence_precision@k", text
            )
        k = match.group(2)
        if name == "mrr":
            if k is not None:
                raise invalid_parameter("metric", "mrr without a cutoff (it uses the whole ranking)", text)
            return cls("mrr")
        if k is None or int(k) < 1:
            raise invalid_parameter("metric", f"{name}@k with an integer k >= 1", text)
        return cls(name, int(k))


MAX_K = 10_000
"""Deepest cutoff accepted: per-query matrices are queries x k, so a typo like 1e9 must not
exhaust memory. Rankings shorter than k are fine (what was returned is used)."""


def parse_ks(value: "int | str | list[int] | tuple[int, ...]", depth: int | None = None) -> tuple[int, ...]:
    """Cutoffs from ``5``, ``"1,5,10"`` or ``[1, 5, 10]``: sorted, unique, each >= 1 (and, with ``depth``, each
    within the depth an evaluation was scored to, checked as `check_k` checks one k)."""
    if isinstance(value, str):
        parts = [p.strip() for p in value.split(",") if p.strip()]
    elif isinstance(value, int):
        parts = [value]
    else:
        parts = list(value)
    ks = []
    for part in parts:
        text = str(part).strip()
        if isinstance(part, bool) or not text.isdigit() or not 1 <= int(text) <= MAX_K:
            raise invalid_parameter("k", f"a comma-separated list of integers from 1 to {MAX_K:,}", value)
        ks.append(int(text))
    if not ks:
        raise invalid_parameter("k", "at least one integer >= 1", value)
    ks = sorted(set(ks))
    if depth is not None:
        check_k(ks[-1], depth)
    return tuple(ks)


def default_measures(ks: tuple[int, ...], evidence: bool = False) -> list[Measure]:
    """What a report lists by default: every cutoff measure at each k, then MRR (then, with ``evidence``, the
    evidence measures at each k)."""
    listed = [Measure(name, k) for name in CUTOFF_MEASURES for k in ks] + [Measure("mrr")]
    return listed + ([Measure(name, k) for name in EVIDENCE_MEASURES for k in ks] if evidence else [])


def check_k(k: object, depth: int | None = None, *, name: str = "k") -> int:
    """The one check of a single cutoff: an integer from 1 to ``depth`` (the depth an evaluation was scored to),
    or to `MAX_K` when no depth applies. Every module that takes one k goes through here, so the rule and its
    message are the same on every surface."""
    upper = MAX_K if depth is None else int(depth)
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or not 1 <= int(k) <= upper:
        where = "" if depth is None else " (the depth this evaluation was scored to)"
        raise invalid_parameter(name, f"an integer between 1 and {upper:,}{where}", k)
    return int(k)
