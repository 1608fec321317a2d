"""The tables a meeting report is built from: the leaderboard, the failures at k and where every number came from.

Failures come either from the workspace's ledger (`ledger_failures`: status, tags, notes and
regressions as of each run) or, without a workspace, straight from the evaluation
(`untracked_failures`: the queries each run misses at k). `default_provenance` says where the
inputs came from when there is no workspace: file names and their SHA-256. `page_one_failures` is the share of the
top failures the report's first page has room for, long texts cut.
"""

from __future__ import annotations

import hashlib
import os
from datetime import datetime, timezone
from pathlib import Path
from typing import Sequence

import numpy as np
import pandas as pd

from ..analyses.failures import missed_queries
from ..metrics.evaluation import Evaluation
from ..store.workspace import Workspace

FAILURE_COLUMNS = [
    "run", "model", "line", "query", "query_text", "source", "status", "regressed", "first_rank", "n_returned",
    "n_relevant",
    "since", "tags", "note", "k", "n", "labels", "labels_version", "fingerprint",
]
"""Columns of `MeetingReport.failures` and of the failures CSV."""

UNTRACKED = "untracked"
"""Status of a failure when the evaluation is not in a workspace (no ledger to say more)."""

PAGE_ONE_FAILURES = 15
"""At most this many top failures on the report's first page, shared among the runs (at least one each)."""

PAGE_ONE_ROWS = 21
"""The first page's room in table rows and list lines beside the headlines: each run takes one in the leaderboard and
one in the failure counts; its top failures share what is left (`page_one_room`)."""

PAGE_ONE_TEXT = {"run": 20, "query": 16, "query_text": 48, "since": 20, "tags": 24, "note": 32}
"""The most characters of each user-text column of the first page's failures (longer ones are cut, ending in "…")."""

_STATUS_ORDER = {"regressed": 0, "new": 1, "known": 2, UNTRACKED: 3, "won't fix": 4, "fixed": 5}


def default_provenance(evaluation: Evaluation) -> dict:
    """Where the numbers came from when there is no workspace: file names and their SHA-256."""
    labels = evaluation.labels
    return {
        "evaluation": None,
        "labels": {"name": labels.name, "version": None, "fingerprint": labels.fingerprint,
                   "n_labeled": labels.n_queries, "n_evaluated": evaluation.results[0].n_queries,
                   "file": labels.source, "sha256": _file_sha(labels.source), "change": None},
        "runs": [{"name": r.name, "model": r.model, "line": r.model, "file": r.run.source,
                  "sha256": _file_sha(r.run.source), "uploaded_at": None, "price_per_mtok": r.run.price_per_mtok,
                  "dims": r.run.dims, "index_bytes": r.run.index_bytes, "n_queries": r.run.n_queries,
                  "run_id": None} for r in evaluation.results],
        **_split_provenance(evaluation),
    }


def _split_provenance(evaluation: Evaluation) -> dict:
    """``{"split": ...}`` when the numbers are on one side of a tune/holdout split (or all queries, revealed)."""
    split = getattr(evaluation, "split", None)
    if split is None or split.split is None:
        return {}
    return {"split": {**split.to_dict(), "headline": split.headline}}


def _returned(result) -> pd.Series:
    """How many docs (or chunks) ``result``'s run returned for each evaluated query; 0: the query is not in the run.
    With the first relevant rank it says where the relevant docs landed (`evalcore.analyses.landed.landed_text`)."""
    return pd.Series(result.ranked.n_returned, index=result.ranked.queries)


def untracked_failures(evaluation: Evaluation, k: int, provenance: dict | None = None) -> pd.DataFrame:
    """The queries each run misses at k (no relevant doc in the top k), without a ledger."""

    provenance = provenance or default_provenance(evaluation)
    missed = missed_queries(evaluation, k, mode="none")
    model_lines = {r["name"]: r.get("line") or r["model"] for r in provenance["runs"]}
    returned = pd.concat({r.name: _returned(r) for r in evaluation.results}) if evaluation.results else pd.Series()
    n_returned = returned.reindex(pd.MultiIndex.from_arrays([missed["run"], missed["query"]])).to_numpy() \
        if len(missed) else []
    frame = pd.DataFrame({
        "run": missed["run"], "model": missed["model"], "line": missed["run"].map(model_lines),
        "query": missed["query"],
        "query_text": missed["query_text"], "source": missed["source"], "status": UNTRACKED, "regressed": False,
        "first_rank": missed["first_rank"], "n_returned": n_returned, "n_relevant": missed["n_relevant"],
        "since": None, "tags": "",
        "note": "", "k": k, "n": missed["n"], "labels": missed["labels"],
        "labels_version": provenance["labels"].get("version"), "fingerprint": missed["fingerprint"],
    })
    return frame[FAILURE_COLUMNS]


def ledger_failures(workspace: Workspace, saved, computed: Evaluation, k: int) -> pd.DataFrame:
    """This evaluation's misses at k, each with its ledger status, tags and note as of its run."""
    outcomes = workspace.outcomes(saved.id)
    frames = []
    for stored, result in zip(saved.runs, computed.results):
        mine = outcomes[outcomes["run_id"] == stored.id]
        ranks = mine["first_rank"].to_numpy(dtype=np.float64, na_value=np.inf)
        missed = mine[ranks > k]
        ledger = workspace.archive.ledger(stored.line, labels=saved.labels.name, k=k, as_of=stored.id,
                                          include_passing=True).set_index("query")
        keys = missed["query"]
        since = ledger["first_failed_run_id"].reindex(keys).astype("Int64")
        since_name = ledger["first_failed_run"].reindex(keys)
        frames.append(pd.DataFrame({
            "run": stored.name, "model": stored.model, "line": stored.line, "query": keys.to_numpy(),
            "query_text": ledger["query_text"].reindex(keys).to_numpy(dtype=object),
            "source": ledger["source"].reindex(keys).to_numpy(dtype=object),
            "status": ledger["status_label"].reindex(keys).fillna("").to_numpy(dtype=object),
            "regressed": ledger["regressed_now"].reindex(keys).fillna(False).to_numpy(dtype=bool)
            & (ledger["last_run_id"].reindex(keys).to_numpy() == stored.id),
            "first_rank": mine["first_rank"][ranks > k].to_numpy(),
            "n_returned": _returned(result).reindex(keys).to_numpy(),
            "n_relevant": missed["n_relevant"].to_numpy(),
            "since": [None if pd.isna(i) else f"#{int(i)} {n}" for i, n in zip(since, since_name)],
            "tags": ledger["tags"].reindex(keys).fillna("").to_numpy(dtype=object),
            "note": ledger["note"].reindex(keys).fillna("").to_numpy(dtype=object),
            "k": k, "n": result.n_queries, "labels": saved.labels.name, "labels_version": saved.labels.version,
            "fingerprint": saved.labels.fingerprint,
        }))
    frame = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame({c: [] for c in FAILURE_COLUMNS})
    frame["first_rank"] = pd.array(frame["first_rank"], dtype="Int64")
    return frame[FAILURE_COLUMNS]


def order_failures(frame: pd.DataFrame) -> pd.DataFrame:
    """Runs in their order; within each, regressions first, then by status, deepest first relevant doc first."""
    if frame.empty:
        return frame.reset_index(drop=True)
    keys = pd.DataFrame({
        "run": pd.factorize(frame["run"])[0],
        "regressed": ~frame["regressed"].astype(bool).to_numpy(),
        "status": frame["status"].map(lambda s: _STATUS_ORDER.get(s, 9)).to_numpy(),
        "depth": -pd.array(frame["first_rank"], dtype="Float64").to_numpy(dtype=np.float64, na_value=np.inf),
        "query": frame["query"].astype(str).to_numpy(),
    }, index=frame.index)
    order = keys.sort_values(list(keys.columns), kind="stable").index
    return frame.loc[order].reset_index(drop=True)


def page_one_room(runs: int, per_run: int, taken: int = 0) -> int:
    """How many top failures of each run the first page shows: ``per_run``, fewer when the runs are many (at least
    one each; `PAGE_ONE_ROWS`, `PAGE_ONE_FAILURES`) or other lines take ``taken`` rows (the answer grades' sentence)."""
    runs = max(1, runs)
    return min(per_run, max(1, min(PAGE_ONE_FAILURES, PAGE_ONE_ROWS - 2 * runs - taken) // runs))


def page_one_failures(top: pd.DataFrame, runs: Sequence[str], room: int) -> tuple[pd.DataFrame, bool]:
    """The rows of ``top`` (each run's top failures, in order) the first page shows: the first ``room`` of each run
    (`page_one_room`), their long texts cut (`PAGE_ONE_TEXT`); and whether anything was left out or cut, so that the
    appendix lists them in full."""
    kept = pd.concat([top[top["run"] == run].head(room) for run in runs]) if len(runs) else top.head(0)
    shown = kept.copy()
    for column, limit in PAGE_ONE_TEXT.items():
        shown[column] = [clipped(value, limit) for value in kept[column]]
    cut = len(kept) < len(top) or any(a != _plain(b) for c in PAGE_ONE_TEXT for a, b in zip(shown[c], kept[c]))
    return shown.reset_index(drop=True), cut


def clipped(value: object, limit: int) -> str:
    """User text on one line (any stretch of whitespace as one space), at most ``limit`` characters; cut, it ends in
    "…"."""
    text = _plain(value)
    return text if len(text) <= limit else text[:limit - 1].rstrip() + "…"


def _plain(value: object) -> str:
    if value is None or (isinstance(value, float) and np.isnan(value)) or value is pd.NA:
        return ""
    return " ".join(str(value).split())


def leaderboard(evaluation: Evaluation, metrics: Sequence[str], k: int, provenance: dict) -> pd.DataFrame:
    """One row per run, best recall@k first: each metric's mean and interval, n, the label set and the run's costs."""
    summary = evaluation.summary
    runs = {r["name"]: r for r in provenance["runs"]}
    rows = []
    for result in evaluation.results:
        mine = summary[summary["run"] == result.name].set_index("metric")
        meta = runs.get(result.name, {})
        row = {"run": result.name, "model": result.model, "line": meta.get("line") or result.model}
        for metric in metrics:
            record = mine.loc[metric]
            row[metric] = float(record["mean"])
            row[f"{metric}_ci_low"] = float(record["ci_low"])
            row[f"{metric}_ci_high"] = float(record["ci_high"])
        row.update({"n": result.n_queries, "note": mine["note"].iloc[0], "labels": provenance["labels"]["name"],
                    "labels_version": provenance["labels"].get("version"),
                    "fingerprint": evaluation.labels.fingerprint, "level": evaluation.level,
                    "price_per_mtok": meta.get("price_per_mtok"), "dims": meta.get("dims"),
                    "index_bytes": meta.get("index_bytes")})
        rows.append(row)
    frame = pd.DataFrame(rows)
    key = f"recall@{k}"
    frame = frame.sort_values([key, "mrr"], ascending=False, kind="stable").reset_index(drop=True)
    frame.insert(0, "rank", np.arange(1, len(frame) + 1))
    return frame


def _file_sha(path: object) -> str | None:
    if not isinstance(path, (str, os.PathLike)) or not Path(path).is_file():
        return None
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def now() -> str:
    """The current UTC time, to the second (ISO 8601)."""
    return datetime.now(timezone.utc).isoformat(timespec="seconds")
