"""Blind judging: pool every run's top docs for a query, hide where they came from, record a person's marks.

A judge who sees a ranking judges that ranking. The pool shown here is the union of the top
``depth`` docs of every run, deduplicated and shuffled with a seed (stable for a query, so a
reload shows the same order), with no rank, score or run attached. The marks become a new
label-set version (`Workspace.save_blind_judgments`): every pooled doc graded 1 (relevant) or 0
(judged non-relevant), the query marked ``blind``, the judged depth recorded; older versions
never change. Raising the depth is how coverage is extended before quoting a deeper k.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Mapping, Sequence

import numpy as np
import pandas as pd

from ..errors import UsageError, invalid_parameter
from ..readers.labels import LabelSet
from ..readers.runs import Run

MAX_POOL_DEPTH = 1000


SAMPLE_INFO = ("source", "stratum")
"""What a sampled queries file says of a query, carried by its pool from the pool file to the new labels."""


@dataclass(frozen=True)
class JudgingPool:
    """The docs to judge for one query, in a shuffled order that reveals no rank or run."""

    query: str
    query_text: str | None
    docs: tuple[str, ...]
    depth: int
    seed: int
    n_runs: int  # how many runs were pooled (not which doc came from which)
    labels: str
    fingerprint: str
    source: str | None = None  # where the query came from (a sampled queries file's source column)
    stratum: str | None = None  # the stratum it was sampled from

    def to_frame(self, texts: Mapping[str, str] | None = None) -> pd.DataFrame:
        """One row per doc to judge (``relevant`` left empty for the person), ready for CSV or a page."""
        frame = pd.DataFrame({"query": self.query, "query_text": self.query_text or "", "doc_id": list(self.docs),
                              "pool_depth": self.depth, "labels": self.labels, "fingerprint": self.fingerprint})
        if texts is not None:
            frame.insert(3, "text", [texts.get(d, "") for d in self.docs])
        if self.source or self.stratum:  # a sampled query: where it came from travels with its pool, to its labels
            for at, column in enumerate(SAMPLE_INFO, start=2):
                frame.insert(at, column, getattr(self, column) or "")
        frame["relevant"] = ""
        return frame


def _query_seed(query: str, seed: int) -> int:
    digest = hashlib.sha256(f"{seed}\x00{query}".encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big")


def judging_pool(runs: Sequence[Run], labels: LabelSet, query: str, depth: int = 10, *, seed: int = 0,
                 extra: Sequence[str] = (), query_text: str | None = None, source: str | None = None,
                 stratum: str | None = None) -> JudgingPool:
    """The union of every run's top ``depth`` docs for ``query`` and the ``extra`` docs (a log's results and clicks),
    deduplicated and shuffled. ``query_text``, ``source``, ``stratum``: what a sampled queries file says of a query
    the labels may not hold (the labels' own text is used when not given)."""
    if isinstance(depth, bool) or not isinstance(depth, (int, np.integer)) or not 1 <= depth <= MAX_POOL_DEPTH:
        raise invalid_parameter("depth", f"an integer from 1 to {MAX_POOL_DEPTH}", depth)
    if not runs:
        raise UsageError("A judging pool needs at least one run.")
    query = str(query)
    docs: list[str] = []
    for run in runs:
        docs.extend(run.ranking(query)[:depth])
    docs.extend(str(d) for d in extra if str(d).strip())
    unique = sorted(set(docs))  # order first forgotten, then shuffled: nothing of the rankings survives
    if not unique:
        raise UsageError(f"No run has any result for query {query!r}; nothing to judge.")
    order = np.random.default_rng(_query_seed(query, seed)).permutation(len(unique))
    text = labels.field("query_text")
    if not query_text and text is not None and query in text.index and isinstance(text[query], str):
        query_text = text[query]
    return JudgingPool(query, query_text or None, tuple(unique[i] for i in order), int(depth), int(seed), len(runs),
                       labels.name, labels.fingerprint, source or None, stratum or None)


_YES = {"1", "true", "yes", "y", "relevant", "r"}
_NO = {"0", "false", "no", "n", "not relevant", "non-relevant", "nonrelevant", "x"}


def parse_mark(value: object, where: str) -> bool:
    """A person's mark: yes/no, true/false, 1/0, relevant/not relevant."""
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    text = str(value).strip().lower()
    if text in _YES:
        return True
    if text in _NO:
        return False
    raise UsageError(f"{where}: expected a mark of relevant (yes, 1, true) or not (no, 0, false), got {str(value)!r}.")


def marks_to_labels(pool: JudgingPool, marks: Mapping[str, object]) -> LabelSet:
    """The marks as judgments (1 relevant, 0 judged non-relevant) of one blind query; every pooled doc is needed."""
    missing = [d for d in pool.docs if d not in marks]
    extra = [d for d in marks if d not in set(pool.docs)]
    if missing:
        raise UsageError(f"Query {pool.query!r}: {len(missing)} pooled docs have no mark ({', '.join(missing[:5])}"
                         f"{', ...' if len(missing) > 5 else ''}); a blind judgment covers the whole pool.")
    if extra:
        raise UsageError(f"Query {pool.query!r}: marks for docs not in the pool ({', '.join(map(str, extra[:5]))}).")
    grades = [1.0 if parse_mark(marks[d], f"query {pool.query!r}, doc {d!r}") else 0.0 for d in pool.docs]
    judgments = pd.DataFrame({"query": pool.query, "doc_id": list(pool.docs), "grade": grades})
    info = {"blind": [True]}
    for column, value in (("query_text", pool.query_text), ("source", pool.source), ("stratum", pool.stratum)):
        if value:  # a sampled query keeps where it came from, so Sources splits the new version by it
            info[column] = [value]
    query_info = pd.DataFrame(info, index=pd.Index([pool.query], name="query"), dtype=object)
    return LabelSet(name=pool.labels, judgments=judgments, query_info=query_info)


def read_marks(frame: pd.DataFrame, where: str) -> tuple[JudgingPool, dict[str, object]]:
    """A filled-in pool file (see `JudgingPool.to_frame`) back as its pool and the marks."""
    needed = {"query", "doc_id", "pool_depth", "relevant"}
    lacking = needed - set(frame.columns)
    if lacking:
        raise UsageError(f"{where}: expected the columns of a judging pool (query, doc_id, pool_depth, relevant); "
                         f"missing {', '.join(sorted(lacking))}.")
    queries = frame["query"].astype(str).unique()
    if len(queries) != 1:
        raise UsageError(f"{where}: expected the pool of one query, got {len(queries)} queries.")
    depths = pd.to_numeric(frame["pool_depth"], errors="coerce").unique()
    if len(depths) != 1 or not np.isfinite(depths[0]) or depths[0] < 1:
        raise UsageError(f"{where}: expected one pool_depth (an integer >= 1) for the whole pool.")
    empty = frame["relevant"].isna() | (frame["relevant"].astype(str).str.strip() == "")
    if empty.any():
        row = int(np.flatnonzero(empty.to_numpy())[0]) + 2
        raise UsageError(f"{where}, line {row}: expected a mark in the relevant column (yes or no), got ''.")
    text = frame["query_text"].astype(str).iloc[0] if "query_text" in frame.columns else None
    labels = str(frame["labels"].iloc[0]) if "labels" in frame.columns else ""
    fingerprint = str(frame["fingerprint"].iloc[0]) if "fingerprint" in frame.columns else ""
    docs = tuple(frame["doc_id"].astype(str))
    kept = {c: str(frame[c].iloc[0]) for c in SAMPLE_INFO
            if c in frame.columns and pd.notna(frame[c].iloc[0]) and str(frame[c].iloc[0]).strip()}
    pool = JudgingPool(str(queries[0]), text or None, docs, int(depths[0]), 0, 0, labels, fingerprint, **kept)
    return pool, dict(zip(docs, frame["relevant"].tolist()))
