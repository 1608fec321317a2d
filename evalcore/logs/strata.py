"""Strata of a query log and the seeded, stratified sample of queries to label.

Each query (a group of near-duplicates, `evalcore.logs.near_duplicates`) falls in one stratum, the first that fits:

1. **zero-result**: its results are known on at least one logged search, and every such search found nothing;
2. **reformulated** (when the log has sessions and times): on at least half of its logged searches with a session
   and a time, the next query of that session, within a minute, was a different one: the customer tried again;
3. by frequency, thirds of the logged volume: queries ranked by how often they were logged (equally often: by
   text), **head** are those whose first logged search falls in the first third of all logged queries (the few
   typed most often), **torso** the second third, **tail** the last (the many typed once or twice).

The sample takes ``n`` queries: by default the planner's (`planned_size`: the queries needed to detect a
difference of ``target_diff`` between two models); queries the labels already hold are left out and counted
against it. ``proportional`` allocation gives each stratum a share of ``n`` by its logged volume (what customers
meet); ``equal`` the same number each; either rounded by largest remainders and capped at what a stratum holds,
the rest going to the others. Within a stratum every query is equally likely; the draw is numpy's, seeded
(``seed``), so the same log, labels and seed give the same sample.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import invalid_parameter
from ..stats.planner import queries_needed

HEAD, TORSO, TAIL, ZERO, REFORMULATED = "head", "torso", "tail", "zero-result", "reformulated"
STRATA = (HEAD, TORSO, TAIL, ZERO, REFORMULATED)
"""Every stratum, in the order they are reported and drawn."""
ALLOCATIONS = ("proportional", "equal")
DEFAULT_TARGET_DIFF = 0.05
"""The difference the default sample size is planned to detect: 5 points of recall between two models."""
PLANNING_SIGMA = 0.35
"""The spread of per-query differences between two models the plan assumes: the sample data's two embedding models
differ by 0.36 per query on recall@5 (at the planner's upper limit), and a log has no runs yet to measure its own."""
REFORMULATED_SHARE = 0.5
"""The share of a query's timed searches that must be followed by another query for it to count as reformulated."""


@dataclass(frozen=True)
class Plan:
    """The sample size and where it came from: ``needed`` (the planner's, or None when ``n`` was given), the
    labeled queries counted against it, and the difference planned for."""

    n: int
    needed: int | None
    labeled: int
    target_diff: float | None
    sigma: float | None

    def to_dict(self) -> dict:
        return {"n": self.n, "needed": self.needed, "labeled": self.labeled, "target_diff": self.target_diff,
                "sigma": self.sigma, "alpha": 0.05 if self.needed is not None else None,
                "power": 0.8 if self.needed is not None else None}


def planned_size(n: int | None, labeled: int, target_diff: float | None = None) -> Plan:
    """``n`` when given, else the planner's queries needed to detect ``target_diff`` (default 5 points) at alpha
    0.05 and power 0.8, less the ``labeled`` queries the labels already hold."""
    if n is not None:
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
            raise invalid_parameter("n", "a whole number of queries, 1 or more", n)
        return Plan(int(n), None, labeled, None, None)
    diff = DEFAULT_TARGET_DIFF if target_diff is None else target_diff
    needed = queries_needed(diff, PLANNING_SIGMA)
    return Plan(max(needed - labeled, 0), needed, labeled, diff, PLANNING_SIGMA)


def assign_strata(count: np.ndarray, known: np.ndarray, empty: np.ndarray, timed: np.ndarray,
                  reformulated: np.ndarray, *, results: bool, sessions: bool) -> np.ndarray:
    """The stratum index (into `STRATA`) of each query from its counts (see the module docs); queries are indexed
    in the order of their text, which breaks ties in count."""
    count = np.asarray(count, dtype=np.int64)
    total = int(count.sum())
    order = np.lexsort((np.arange(len(count)), -count))
    ranked = count[order]
    before = np.empty_like(count)
    before[order] = np.cumsum(ranked) - ranked  # the volume of the queries ranked ahead
    band = np.minimum((3 * before) // max(total, 1), 2)
    stratum = band.astype(np.int8)
    if sessions:
        again = (timed > 0) & (reformulated >= REFORMULATED_SHARE * timed)
        stratum[again] = STRATA.index(REFORMULATED)
    if results:
        nothing = (known > 0) & (empty == known)
        stratum[nothing] = STRATA.index(ZERO)
    return stratum


def listed_strata(*, results: bool, sessions: bool) -> tuple[str, ...]:
    """The strata a log can have: zero-result only when results are known, reformulated only with sessions."""
    return tuple(s for s in STRATA if (s != ZERO or results) and (s != REFORMULATED or sessions))


def allocate(available: dict[str, int], volume: dict[str, int], n: int, how: str) -> dict[str, int]:
    """How many queries each stratum gives: ``n`` shared by ``volume`` (``proportional``) or evenly (``equal``),
    by largest remainders (ties in `STRATA` order), each capped at ``available`` with the rest shared again."""
    if how not in ALLOCATIONS:
        raise invalid_parameter("allocate", "proportional or equal", how)
    taken = {name: 0 for name in available}
    open_ = [name for name in available if available[name] > 0]
    left = min(n, sum(available.values()))
    while left > 0 and open_:
        weights = np.array([volume[s] if how == "proportional" else 1 for s in open_], dtype=float)
        if weights.sum() <= 0:
            weights = np.ones(len(open_))
        quota = left * weights / weights.sum()
        share = np.floor(quota).astype(int)
        for i in np.argsort(-(quota - share), kind="stable")[: left - int(share.sum())]:
            share[i] += 1
        capped = [(s, available[s] - taken[s]) for s, k in zip(open_, share) if k >= available[s] - taken[s]]
        if not capped:
            for s, k in zip(open_, share):
                taken[s] += int(k)
            break
        for s, room in capped:
            taken[s] += room
            left -= room
        open_ = [s for s in open_ if s not in dict(capped)]
    return taken


def draw(stratum: np.ndarray, eligible: np.ndarray, count: np.ndarray, quota: dict[str, int],
         seed: int) -> np.ndarray:
    """The queries drawn (indices, in `STRATA` order, most frequent first within a stratum): in each stratum,
    ``quota`` of its ``eligible`` queries, each equally likely. The queries are indexed in the order of their
    text; the candidates are ordered by count, then text, before the seeded draw, so the file's order does not
    matter."""
    rng = np.random.default_rng(seed)
    chosen = []
    for index, name in enumerate(STRATA):
        k = quota.get(name, 0)
        candidates = np.flatnonzero((stratum == index) & eligible)
        if not len(candidates) or not k:
            continue
        ordered = candidates[np.lexsort((candidates, -count[candidates]))]
        chosen.extend(ordered[np.sort(rng.choice(len(ordered), size=k, replace=False))].tolist())
    return np.array(chosen, dtype=np.int64)
