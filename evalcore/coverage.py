"""How deep the judgments go, and what a number quoted deeper than that could really be.

Judging only the top 5 of each run and then quoting recall@10 counts every unjudged doc in
ranks 6-10 as non-relevant. This module makes that visible:

* **judged coverage** per run and k: the mean of ``judged@k`` (share of the returned top-k
  docs that carry any judgment), and the **covered depth**: the deepest k whose coverage is at
  least ``min_judged`` (default 0.9).
* **bounds** for recall, hit, precision and nDCG at each k: the reported number (unjudged docs
  in the run's top k counted as non-relevant) next to the same metric with those unjudged docs
  counted as relevant (gain = the relevance threshold for nDCG). Docs the run did not return
  in its top k keep their labels. ``low`` / ``high`` are the smaller and larger of the two
  means (for recall, hit and precision the reported number is always the lower one; for nDCG
  relevant unjudged docs also raise the ideal, so either can be larger).
* a k is **flagged** when it goes deeper than the covered depth.

Everything is computed over the `RankedGrades` matrices for all k at once (cumulative sums).
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd

from .errors import invalid_parameter
from .evaluation import Evaluation, RunResult
from .measures import parse_ks
from .warning_log import EvalWarning

BOUND_METRICS = ("recall", "hit", "precision", "ndcg")
DEFAULT_MIN_JUDGED = 0.9
COVERAGE_COLUMNS = ["run", "model", "metric", "k", "mean", "low", "high", "judged", "covered_k", "flagged", "n",
                    "labels", "fingerprint"]


def bound_scores(result: RunResult, ks: Sequence[int]) -> dict[str, np.ndarray]:
    """Per-query scores at each of ``ks`` with the unjudged top-k docs counted as relevant: (n_queries, len(ks))."""
    ranked = result.ranked
    depth = ranked.depth
    ranks = np.arange(1, depth + 1, dtype=np.float64)
    unjudged = ranked.returned & np.isnan(ranked.grades)
    relevant = ranked.relevant
    found = np.cumsum(relevant | unjudged, axis=1, dtype=np.int64)
    extra = np.cumsum(unjudged, axis=1, dtype=np.int64)
    n_rel = ranked.index.n_relevant.astype(np.float64)[:, None]
    with np.errstate(divide="ignore", invalid="ignore"):
        recall = np.where(n_rel + extra > 0, found / (n_rel + extra), 0.0)
    hit = (found > 0).astype(np.float64)
    precision = found / ranks

    gain = max(float(ranked.index.min_grade), 1.0) if ranked.index.min_grade > 0 else 1.0
    grades = ranked.grades
    gains = np.where(unjudged, gain, np.where(grades > 0, grades, 0.0))
    discount = 1.0 / np.log2(ranks + 1.0)
    dcg = np.cumsum(gains * discount, axis=1)
    ideal = ranked.index.gains_sorted
    if ideal.shape[1] < depth:
        ideal = np.pad(ideal, ((0, 0), (0, depth - ideal.shape[1])))
    ideal = ideal[:, :depth]
    cols = np.asarray(ks, dtype=np.int64) - 1
    ndcg = np.zeros((len(dcg), len(cols)))
    for j, k in enumerate(ks):  # one pass per quoted cutoff over whole columns
        added = np.where(np.arange(k)[None, :] < extra[:, k - 1:k], gain, 0.0)
        merged = -np.sort(-np.concatenate([ideal[:, :k], added], axis=1), axis=1)[:, :k]
        idcg = merged @ discount[:k]
        with np.errstate(divide="ignore", invalid="ignore"):
            ndcg[:, j] = np.where(idcg > 0, dcg[:, k - 1] / idcg, 0.0)
    return {"recall": recall[:, cols], "hit": hit[:, cols], "precision": precision[:, cols], "ndcg": ndcg}


def covered_depth(result: RunResult, min_judged: float = DEFAULT_MIN_JUDGED) -> int:
    """The deepest k (0 if none) down to which the mean judged@k of this run stays at least ``min_judged``."""
    means = result.scores.judged.mean(axis=0)
    below = np.flatnonzero(means < min_judged)
    return int(below[0]) if len(below) else int(result.depth)


def coverage_bounds(evaluation: Evaluation, ks: int | str | Sequence[int] | None = None, *,
                    min_judged: float = DEFAULT_MIN_JUDGED) -> pd.DataFrame:
    """One row per run, bounded metric and k: reported mean, low/high bounds, judged coverage, flag, context."""
    if isinstance(min_judged, bool) or not 0 < float(min_judged) <= 1:
        raise invalid_parameter("min_judged", "a number in (0, 1]", min_judged)
    chosen = parse_ks(ks) if ks is not None else evaluation.ks
    records = []
    for result in evaluation.results:
        too_deep = [k for k in chosen if k > result.depth]
        if too_deep:
            raise invalid_parameter("k", f"at most the evaluated depth {result.depth}", too_deep[0])
        high = bound_scores(result, chosen)
        covered = covered_depth(result, min_judged)
        judged = result.scores.judged.mean(axis=0)
        for name in BOUND_METRICS:
            reported = getattr(result.scores, name).mean(axis=0)
            upper = high[name].mean(axis=0)
            for j, k in enumerate(chosen):
                a, b = float(reported[k - 1]), float(upper[j])
                records.append({
                    "run": result.name, "model": result.model, "metric": f"{name}@{k}", "k": k, "mean": a,
                    "low": min(a, b), "high": max(a, b), "judged": float(judged[k - 1]), "covered_k": covered,
                    "flagged": k > covered, "n": result.n_queries, "labels": evaluation.labels.name,
                    "fingerprint": evaluation.labels.fingerprint,
                })
    return pd.DataFrame.from_records(records, columns=COVERAGE_COLUMNS)


def coverage_warnings(bounds: pd.DataFrame, min_judged: float = DEFAULT_MIN_JUDGED) -> list[EvalWarning]:
    """One warning per run whose quoted k goes deeper than its judgments cover."""
    out = []
    if bounds.empty:
        return out
    for run, rows in bounds.groupby("run", sort=False):
        flagged = rows[rows["flagged"]]
        if flagged.empty:
            continue
        ks = sorted(set(flagged["k"].tolist()))
        covered = int(rows["covered_k"].iloc[0])
        deepest = flagged[flagged["k"] == max(ks)]
        shown = deepest[deepest["metric"].str.startswith("recall@")].iloc[0]
        depth = (f"only down to k = {covered}" if covered else "not even at k = 1")
        out.append(EvalWarning(
            "judged_depth_exceeded",
            f"run {run} (model {shown['model']}): at least {min_judged:.0%} of the returned docs are judged "
            f"{depth}, but k = {', '.join(map(str, ks))} is quoted; {shown['metric']} could be anywhere from "
            f"{shown['low']:.4f} to {shown['high']:.4f} depending on the unjudged docs (judged@{int(shown['k'])} = "
            f"{shown['judged']:.4f}, n = {int(shown['n'])}). Judge a blind pool at depth {max(ks)} before quoting it",
            len(ks)))
    return out
