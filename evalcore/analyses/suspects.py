"""Suspicious labels: queries every run misses while the runs agree on another doc.

When several different systems all miss a query at k, and all put the same doc (unjudged, or
judged non-relevant) near the top, the label is as likely to be wrong as every system. These
are "check the label" candidates. Flagging one (`Workspace.flag_for_rejudging`) queues it for
blind re-judging; a label is never edited in place from a ranked view, because the person
editing would be looking at the rankings (see `judging` for the blind judging pool).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..errors import UsageError
from ..metrics.evaluation import Evaluation
from ..metrics.measures import check_k

DEFAULT_AGREE_DEPTH = 3
SUSPECT_COLUMNS = ["query", "query_text", "source", "doc_id", "doc_label", "ranks", "mean_rank", "other_agreed",
                   "relevant", "k",
                   "agree_depth", "n_runs", "models", "n", "labels", "fingerprint"]


def label_suspects(evaluation: Evaluation, k: int, *, agree_depth: int = DEFAULT_AGREE_DEPTH) -> pd.DataFrame:
    """Queries every run misses at ``k`` (no relevant doc in the top k) whose runs all put one doc that is not
    labeled relevant in their top ``agree_depth``: one row per query with its best-agreed doc (lowest mean rank;
    ``other_agreed`` counts further docs all runs share that high), most agreed first."""
    if len(evaluation.results) < 2:
        raise UsageError("Label suspects need at least two runs: a doc is suspicious when different systems "
                         "agree on it.")
    k = evaluation.check_k(k)
    agree_depth = check_k(agree_depth, evaluation.depth, name="agree_depth")
    results = evaluation.results
    missed = np.logical_and.reduce([r.scores.hit[:, k - 1] == 0 for r in results])
    labels = evaluation.labels
    if not missed.any():
        return pd.DataFrame(columns=SUSPECT_COLUMNS)
    rows = np.flatnonzero(missed)
    parts = []
    for pos, result in enumerate(results):
        codes = result.ranked.doc_codes[rows, :agree_depth]
        grades = result.ranked.grades[rows, :agree_depth]
        q = np.broadcast_to(rows[:, None], codes.shape)
        rank = np.broadcast_to(np.arange(1, agree_depth + 1)[None, :], codes.shape)
        ok = codes >= 0
        parts.append(pd.DataFrame({"q": q[ok], "doc_id": result.ranked.doc_ids_of(codes[ok]),
                                   "grade": grades[ok], "run": pos, "rank": rank[ok]}))
    top = pd.concat(parts, ignore_index=True)
    top = top[~(top["grade"] >= results[0].ranked.index.min_grade)]  # only docs not labeled relevant
    counts = top.groupby(["q", "doc_id"], sort=False)["run"].transform("nunique")
    agreed = top[counts == len(results)]
    if agreed.empty:
        return pd.DataFrame(columns=SUSPECT_COLUMNS)
    queries = results[0].queries
    names = [r.name for r in results]
    grouped = agreed.sort_values(["q", "run"]).groupby(["q", "doc_id"], sort=False)
    frame = grouped.agg(grade=("grade", "first"), mean_rank=("rank", "mean"),
                        ranks=("rank", lambda r: ", ".join(f"{names[i]} {v}" for i, v in
                                                           zip(agreed.loc[r.index, "run"], r)))).reset_index()
    judgments = labels.judgments
    relevant = judgments[judgments["grade"] >= results[0].ranked.index.min_grade]
    rel_by_query = relevant.groupby("query", sort=False)["doc_id"].agg(lambda d: ", ".join(d))
    text = labels.field("query_text")
    source = labels.field("source")
    frame["query"] = queries[frame["q"].to_numpy()]
    frame["query_text"] = (text.reindex(frame["query"]).to_numpy() if text is not None else None)
    frame["source"] = (source.reindex(frame["query"]).to_numpy() if source is not None else None)
    frame["doc_label"] = np.where(frame["grade"].isna(), "unjudged",
                                  "judged non-relevant (grade " + frame["grade"].map("{:g}".format) + ")")
    frame["relevant"] = rel_by_query.reindex(frame["query"]).to_numpy()
    frame["k"] = k
    frame["agree_depth"] = agree_depth
    frame["n_runs"] = len(results)
    frame["models"] = ", ".join(f"{r.name}={r.model}" for r in results)
    frame["n"] = results[0].n_queries
    frame["labels"] = labels.name
    frame["fingerprint"] = labels.fingerprint
    frame = frame.sort_values(["mean_rank", "q"], kind="stable")
    frame["other_agreed"] = frame.groupby("q")["doc_id"].transform("size") - 1
    frame = frame.drop_duplicates("q", keep="first").reset_index(drop=True)  # the best-agreed doc of each query
    return frame[SUSPECT_COLUMNS]
