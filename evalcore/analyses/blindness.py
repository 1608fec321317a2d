"""Judges who saw the rankings: how much of each number rests on blind labels, and pooling bias.

A judge who marks docs while looking at one system's ranking judges that system's results
(its near misses become "judged non-relevant", its finds "relevant"), and the labels then
favour the system that was looked at. Labels carry a per-query ``blind`` field
(docs/formats.md). This module reports:

* `blind_share` - per run, the share of the queries (and of the judgments) behind its numbers
  that were judged blind;
* `blind_metrics` - every metric on the blind-judged queries only, with its own n and interval;
* `pooling` - per run, the share of the judged docs that sit in its top ``depth``, and of the
  judged *non-relevant* docs found in only one run's top ``depth``, the share that are this
  run's. Non-relevant judgments are the fingerprint of pooling: nobody judges a doc
  non-relevant without having seen it somewhere;
* `blindness_warnings` - when non-blind labels dominate, and when the judged docs come mostly
  from one run's top results.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd

from ..errors import invalid_parameter
from ..metrics.evaluation import Evaluation
from ..metrics.measures import Measure
from ..warning_log import EvalWarning, plural
from .slices import slice_metrics

DEFAULT_POOL_DEPTH = 10
MAX_NON_BLIND_SHARE = 0.5
"""Warn when more than this share of the evaluated queries were judged non-blind."""


def pool_dominance(n_runs: int) -> float:
    """Warn when one run holds at least this share of the non-relevant judgments only one run retrieved:
    1.5 times its even share, at least a half and at most three quarters (0.75 for 2 runs, 0.5 for 3 or more)."""
    return min(0.75, max(0.5, 1.5 / max(n_runs, 1)))

MIN_POOL_EVIDENCE = 10


def _blind_flags(evaluation: Evaluation) -> np.ndarray | None:
    """True / False / None per evaluated query, or None when the labels have no ``blind`` field."""
    values = evaluation.labels.field("blind")
    if values is None:
        return None
    return values.reindex(evaluation.results[0].queries).to_numpy(dtype=object)


def blind_share(evaluation: Evaluation) -> pd.DataFrame:
    """One row per run: blind queries and judgments behind its numbers, with n, model and label set."""
    flags = _blind_flags(evaluation)
    labels = evaluation.labels
    judgments = labels.judgments
    records = []
    for result in evaluation.results:
        queries = result.queries
        n = len(queries)
        if flags is None:
            n_blind = n_known = 0
            j_blind = j_total = 0
        else:
            values = pd.Series(flags, dtype=object)
            is_blind = values.map({True: True, False: False}).fillna(False).to_numpy(dtype=bool)
            n_blind, n_known = int(is_blind.sum()), int(values.notna().sum())
            blind_queries = set(np.asarray(queries, dtype=object)[is_blind].tolist())
            in_eval = judgments["query"].isin(set(queries.tolist()))
            j_total = int(in_eval.sum())
            j_blind = int((in_eval & judgments["query"].isin(blind_queries)).sum())
        records.append({
            "run": result.name, "model": result.model, "n": n, "n_blind": n_blind, "n_not_blind": n_known - n_blind,
            "n_unknown": n - n_known, "blind_share": (n_blind / n) if n else 0.0,
            "judgments": j_total, "blind_judgments": j_blind,
            "blind_judgment_share": (j_blind / j_total) if j_total else 0.0,
            "labels": labels.name, "fingerprint": labels.fingerprint,
        })
    return pd.DataFrame.from_records(records)


def blind_metrics(evaluation: Evaluation, measures: Sequence[str | Measure] | None = None, *,
                  min_n: int = 30) -> pd.DataFrame:
    """Every metric on the blind-judged queries only (the ``blind = true`` slice), with its own n and interval."""

    if evaluation.labels.field("blind") is None:
        return pd.DataFrame()
    rows = slice_metrics(evaluation, "blind", measures, min_n=min_n)
    return rows[rows["value"] == "true"].drop(columns=["field", "value"]).reset_index(drop=True)


def pooling(evaluation: Evaluation, depth: int = DEFAULT_POOL_DEPTH) -> pd.DataFrame:
    """Per run: how many judged docs (all, and non-relevant) sit in its top ``depth``, and its share of the
    non-relevant judgments no other run retrieved that deep."""
    if isinstance(depth, bool) or not isinstance(depth, (int, np.integer)) or depth < 1:
        raise invalid_parameter("pool depth", "an integer >= 1", depth)
    first = evaluation.results[0]
    index = first.ranked.index
    n_docs = max(len(index.doc_ids), 1)
    nonrel = index.grades < index.min_grade
    per_run = []
    for result in evaluation.results:
        ranked = result.ranked
        d = min(int(depth), ranked.depth)
        codes = ranked.doc_codes[:, :d]
        q_idx = np.broadcast_to(np.arange(codes.shape[0])[:, None], codes.shape)
        ok = codes >= 0
        label_code = ranked.label_docs(codes[ok])  # a chunk stands for its document
        keys = q_idx[ok].astype(np.int64) * n_docs + label_code
        keys = keys[label_code >= 0]
        hit = index.keys.get_indexer(keys)
        seen = np.zeros(len(index.keys), dtype=bool)
        seen[hit[hit >= 0]] = True
        per_run.append((result, d, seen))
    stacked = np.vstack([seen for _, _, seen in per_run])
    exclusive = stacked.sum(axis=0) == 1
    excl_nonrel_total = int((exclusive & nonrel).sum())
    records = []
    for result, d, seen in per_run:
        mine = int((seen & exclusive & nonrel).sum())
        records.append({
            "run": result.name, "model": result.model, "depth": d, "judged": len(seen),
            "judged_in_top": int(seen.sum()), "judged_in_top_share": float(seen.mean()) if len(seen) else 0.0,
            "nonrelevant": int(nonrel.sum()), "nonrelevant_in_top": int((seen & nonrel).sum()),
            "nonrelevant_in_top_share": float((seen & nonrel).sum() / nonrel.sum()) if nonrel.sum() else 0.0,
            "exclusive_nonrelevant": mine,
            "exclusive_nonrelevant_share": (mine / excl_nonrel_total) if excl_nonrel_total else 0.0,
            "n": result.n_queries, "labels": evaluation.labels.name, "fingerprint": evaluation.labels.fingerprint,
        })
    return pd.DataFrame.from_records(records)


def blindness_warnings(evaluation: Evaluation, *, depth: int = DEFAULT_POOL_DEPTH,
                       share: pd.DataFrame | None = None, pools: pd.DataFrame | None = None) -> list[EvalWarning]:
    """Warnings when non-blind labels dominate, and when judged docs come mostly from one run's top results."""
    out = []
    share = blind_share(evaluation) if share is None else share
    if evaluation.labels.field("blind") is None:
        n = int(share["n"].iloc[0])
        out.append(EvalWarning("blind_unknown", f"the labels have no 'blind' field: nobody can tell whether the "
                               f"judges of these {plural(n, 'query', 'queries')} saw a system's ranking", n))
    else:
        row = share.iloc[0]
        not_blind = int(row["n_not_blind"]) + int(row["n_unknown"])
        if not_blind / max(int(row["n"]), 1) > MAX_NON_BLIND_SHARE:
            out.append(EvalWarning(
                "non_blind_dominant",
                f"{plural(not_blind, 'query', 'queries')} of {int(row['n'])} ({not_blind / row['n']:.0%}) were not "
                "judged blind (judges may have seen a ranking); compare the blind-only numbers", not_blind))
    pools = pooling(evaluation, depth) if pools is None else pools
    if len(pools) >= 2:
        total = int(pools["exclusive_nonrelevant"].sum())
        top = pools.sort_values("exclusive_nonrelevant_share", ascending=False).iloc[0]
        if total >= MIN_POOL_EVIDENCE and top["exclusive_nonrelevant_share"] >= pool_dominance(len(pools)):
            out.append(EvalWarning(
                "pooled_from_one_run",
                f"run {top['run']}: {int(top['exclusive_nonrelevant'])} of the {total} judged non-relevant docs that "
                f"only one run returns in its top {int(top['depth'])} are this run's "
                f"({top['exclusive_nonrelevant_share']:.0%}); the labels look pooled from its results, which favours "
                "it. Judge a blind pool of every run's top results", int(top["exclusive_nonrelevant"])))
    elif len(pools) == 1:
        top = pools.iloc[0]
        if int(top["nonrelevant"]) >= MIN_POOL_EVIDENCE and top["nonrelevant_in_top_share"] >= 0.8:
            out.append(EvalWarning(
                "pooled_from_one_run",
                f"run {top['run']}: {int(top['nonrelevant_in_top'])} of the {int(top['nonrelevant'])} judged "
                f"non-relevant docs are in its top {int(top['depth'])}; the labels may have been pooled from this "
                "run's results", int(top["nonrelevant_in_top"])))
    return out
