"""How deep the judgments go, and what a number quoted deeper than that could really be.

Judging only the top 5 of each run and then quoting recall@10 counts every unjudged doc in
ranks 6-10 as non-relevant. This module makes that visible:

* **judged coverage** per run and k: the mean of ``judged@k`` (share of the returned top-k
  docs that carry any judgment), and the **covered depth**: the deepest k whose coverage is at
  least ``min_judged`` (default 0.9) on the queries whose judged depth is known.
* **whose judged depth is known**: a query whose labels mark some doc *judged non-relevant*
  (a grade below the relevance threshold), or whose judged depth was recorded (a blind judging
  round: `judged_depths`). Labels that list only a query's relevant docs say nothing about how
  deep anyone looked: judged@k is then about (relevant docs) / k at any depth. Such queries
  are left out of the covered depth; when no query's depth is known, no k is flagged and the
  rows say "judged depth unknown: labels list only relevant docs" (the bounds still show what
  the unjudged docs could change).
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

from typing import Mapping, Sequence

import numpy as np
import pandas as pd

from ..errors import invalid_parameter
from ..metrics.evaluation import Evaluation, RunResult
from ..metrics.measures import parse_ks
from ..warning_log import EvalWarning, agree, plural
from .blindness import blind_share

BOUND_METRICS = ("recall", "hit", "precision", "ndcg")
DEFAULT_MIN_JUDGED = 0.9
COVERAGE_COLUMNS = ["run", "model", "metric", "k", "mean", "low", "high", "judged", "judged_known", "n_known",
                    "covered_k", "flagged", "note", "n", "labels", "fingerprint"]
DEPTH_UNKNOWN = "judged depth unknown: labels list only relevant docs"


def bound_scores(result: RunResult, ks: Sequence[int], metrics: Sequence[str] = BOUND_METRICS,
                 ) -> dict[str, np.ndarray]:
    """Per-query scores at each of ``ks`` with the unjudged top-k docs counted as relevant: (n_queries, len(ks))
    for each of ``metrics``."""
    ranked = result.ranked
    depth = max(ks)  # the columns past the deepest quoted k change nothing below it
    ranks = np.arange(1, depth + 1, dtype=np.float64)
    grades = ranked.grades[:, :depth]
    unjudged = ranked.returned[:, :depth] & np.isnan(grades)
    relevant = ranked.relevant[:, :depth]
    cols = np.asarray(ks, dtype=np.int64) - 1
    found = np.cumsum(relevant | unjudged, axis=1, dtype=np.int64)[:, cols]
    extra = np.cumsum(unjudged, axis=1, dtype=np.int64)
    out = {}
    if "recall" in metrics:
        n_rel = ranked.index.n_relevant.astype(np.float64)[:, None]
        with np.errstate(divide="ignore", invalid="ignore"):
            out["recall"] = np.where(n_rel + extra[:, cols] > 0, found / (n_rel + extra[:, cols]), 0.0)
    if "hit" in metrics:
        out["hit"] = (found > 0).astype(np.float64)
    if "precision" in metrics:
        out["precision"] = found / ranks[cols]
    if "ndcg" in metrics:
        out["ndcg"] = _bound_ndcg(ranked, grades, unjudged, extra, ks)
    return out


def _bound_ndcg(ranked, grades: np.ndarray, unjudged: np.ndarray, extra: np.ndarray, ks: Sequence[int]) -> np.ndarray:
    """nDCG@k with the unjudged top-k docs given the relevance threshold's gain, in the ranking and in the ideal."""
    depth = grades.shape[1]
    gain = max(float(ranked.index.min_grade), 1.0) if ranked.index.min_grade > 0 else 1.0
    gains = np.where(unjudged, gain, np.where(grades > 0, grades, 0.0))
    discount = 1.0 / np.log2(np.arange(1, depth + 1, dtype=np.float64) + 1.0)
    dcg = np.cumsum(gains * discount, axis=1)
    ideal = ranked.index.gains_sorted
    if ideal.shape[1] < depth:
        ideal = np.pad(ideal, ((0, 0), (0, depth - ideal.shape[1])))
    ideal = ideal[:, :depth]
    ndcg = np.zeros((len(dcg), len(ks)))
    for j, k in enumerate(ks):  # one pass per quoted cutoff over whole columns
        added = np.where(np.arange(k)[None, :] < extra[:, k - 1:k], gain, 0.0)
        merged = -np.sort(-np.concatenate([ideal[:, :k], added], axis=1), axis=1)[:, :k]
        idcg = merged @ discount[:k]
        with np.errstate(divide="ignore", invalid="ignore"):
            ndcg[:, j] = np.where(idcg > 0, dcg[:, k - 1] / idcg, 0.0)
    return ndcg


def depth_known(result: RunResult, judged_depths: Mapping[str, int] | None = None) -> np.ndarray:
    """Per evaluated query: whether its labels tell how deep the judging went (some doc judged non-relevant, or a
    recorded judged depth in ``judged_depths``, query -> depth of a blind judging round)."""
    index = result.ranked.index
    n_docs = max(len(index.doc_ids), 1)
    query_of = np.asarray(index.keys, dtype=np.int64) // n_docs
    known = np.bincount(query_of[index.grades < index.min_grade], minlength=index.n_queries) > 0
    if judged_depths:
        known |= pd.Index(list(map(str, judged_depths))).get_indexer(index.queries) >= 0
    return known


def covered_depth(result: RunResult, min_judged: float = DEFAULT_MIN_JUDGED, *,
                  known: np.ndarray | None = None) -> int | None:
    """The deepest k (0 if none) down to which the mean judged@k of this run stays at least ``min_judged``, over
    the queries whose judged depth is ``known`` (all queries when not given); None when no query's is known."""
    judged = result.scores.judged
    if known is not None:
        if not known.any():
            return None
        judged = judged[known]
    means = judged.mean(axis=0)
    below = np.flatnonzero(means < min_judged)
    return int(below[0]) if len(below) else int(result.depth)


def _depth_note(n_known: int, n: int) -> str:
    if n_known == 0:
        return DEPTH_UNKNOWN
    if n_known < n:
        return (f"covered depth from the {n_known} of {n} queries with a judged non-relevant doc or a recorded judged "
                f"depth; the other {n - n_known} list only relevant docs")
    return ""


def coverage_bounds(evaluation: Evaluation, ks: int | str | Sequence[int] | None = None, *,
                    min_judged: float = DEFAULT_MIN_JUDGED,
                    judged_depths: Mapping[str, int] | None = None,
                    metrics: Sequence[str] = BOUND_METRICS) -> pd.DataFrame:
    """One row per run, bounded metric and k: reported mean, low/high bounds, judged coverage (all queries, and
    the ``n_known`` queries whose judged depth is known), covered depth, flag, note, context."""
    if isinstance(min_judged, bool) or not 0 < float(min_judged) <= 1:
        raise invalid_parameter("min_judged", "a number in (0, 1]", min_judged)
    unknown = [m for m in metrics if m not in BOUND_METRICS]
    if unknown:
        raise invalid_parameter("metrics", f"names from {', '.join(BOUND_METRICS)}", unknown[0])
    chosen = parse_ks(ks if ks is not None else evaluation.ks, evaluation.depth)
    records = []
    for result in evaluation.results:
        high = bound_scores(result, chosen, metrics)
        known = depth_known(result, judged_depths)
        n_known = int(known.sum())
        covered = covered_depth(result, min_judged, known=known)
        judged = result.scores.judged.mean(axis=0)
        judged_known = result.scores.judged[known].mean(axis=0) if n_known else np.full(len(judged), np.nan)
        note = _depth_note(n_known, result.n_queries)
        for name in metrics:
            reported = getattr(result.scores, name).mean(axis=0)
            upper = high[name].mean(axis=0)
            for j, k in enumerate(chosen):
                a, b = float(reported[k - 1]), float(upper[j])
                records.append({
                    "run": result.name, "model": result.model, "metric": f"{name}@{k}", "k": k, "mean": a,
                    "low": min(a, b), "high": max(a, b), "judged": float(judged[k - 1]),
                    "judged_known": float(judged_known[k - 1]), "n_known": n_known, "covered_k": covered,
                    "flagged": covered is not None and k > covered, "note": note, "n": result.n_queries,
                    "labels": evaluation.labels.name, "fingerprint": evaluation.labels.fingerprint,
                })
    frame = pd.DataFrame.from_records(records, columns=COVERAGE_COLUMNS)
    frame["covered_k"] = frame["covered_k"].astype("Int64")
    frame["flagged"] = frame["flagged"].astype(bool)
    return frame


def coverage_warnings(bounds: pd.DataFrame, min_judged: float = DEFAULT_MIN_JUDGED) -> list[EvalWarning]:
    """One warning per run whose quoted k goes deeper than its judgments cover, and one when no query's judged
    depth is known (labels that list only relevant docs: nothing is flagged, the bounds still apply)."""
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
        n, n_known = int(shown["n"]), int(shown["n_known"])
        which = "" if n_known == n else (f" on the {plural(n_known, 'query', 'queries')} whose judged depth "
                                         f"{agree(n_known, 'is', 'are')} known (a judged non-relevant doc or a "
                                         "recorded judged depth)")
        out.append(EvalWarning(
            "judged_depth_exceeded",
            f"run {run} (model {shown['model']}): at least {min_judged:.0%} of the returned docs are judged "
            f"{depth}{which}, but k = {', '.join(map(str, ks))} is quoted; {shown['metric']} could be anywhere from "
            f"{shown['low']:.4f} to {shown['high']:.4f} depending on the unjudged docs (judged@{int(shown['k'])} = "
            f"{shown['judged']:.4f}, n = {n}). Judge a blind pool at depth {max(ks)} before quoting it",
            len(ks)))
    unknown = bounds[bounds["n_known"] == 0]
    if not unknown.empty:
        row = unknown.iloc[0]
        n = int(row["n"])
        out.append(EvalWarning(
            "judged_depth_unknown",
            f"{DEPTH_UNKNOWN} (no doc of the {n} evaluated queries is judged non-relevant and no judged depth is "
            f"recorded), so judged@k cannot tell how deep the judging went and no k is flagged; unjudged docs count "
            f"as non-relevant: the bounds show how far that could move each number. Judge a blind pool at the depth "
            f"you quote", n))
    return out


CAVEAT_COLUMNS = ["run", "model", "metric", "k", "n", "blind_share", "blind_known", "judged", "judged_known",
                  "n_known", "covered_k", "flagged", "note", "low", "high", "labels", "fingerprint"]


def number_caveats(evaluation: Evaluation, k: int | Sequence[int], metric: str = "recall", *,
                   min_judged: float = DEFAULT_MIN_JUDGED,
                   judged_depths: Mapping[str, int] | None = None) -> pd.DataFrame:
    """One row per run (and per k, when several are given), to show beside its ``metric@k``: the share of
    blind-judged queries behind it (``blind_known`` False when the labels have no ``blind`` field) and whether k
    goes deeper than the judgments cover, with the bounds (unjudged top-k docs as non-relevant, and as relevant).
    Every k 1..depth at once costs about what one does: a dashboard computes them once per data set."""

    if metric not in BOUND_METRICS:
        raise invalid_parameter("metric", f"one of {', '.join(BOUND_METRICS)}", metric)
    ks = [int(k)] if isinstance(k, (int, np.integer)) else [int(x) for x in k]
    bounds = coverage_bounds(evaluation, ks, min_judged=min_judged, judged_depths=judged_depths, metrics=(metric,))
    share = blind_share(evaluation).set_index("run")[["blind_share", "n_unknown"]]
    frame = bounds.join(share, on="run")
    frame["blind_known"] = frame["n_unknown"] < frame["n"]
    return frame.reset_index(drop=True)[CAVEAT_COLUMNS]
