"""What a smaller or approximate index loses against exact search of the same vectors, query by query.

Both numbers come from two runs alone (the index's and the exact float32 search's at the same dims and
similarity) and the labels, so a pair of saved runs gives them again:

- **neighbour recall** at k: of the exact search's top k, the share the index's top k also holds (1 when it
  returns every one); its mean over the queries and its 5th percentile, the tail: sorted from worst, the value of
  query ceil(5% x n), so 5% of the queries keep at most that share;
- **lost queries** at k: queries where a relevant doc that exact search put in its top k is missing from the
  index's top k: the answer the customer had and no longer gets. Counted over the evaluated queries (those with a
  relevant doc), with a Wilson interval on the share.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..readers.labels import LabelSet
from ..readers.runs import Run
from ..stats.intervals import Interval, wilson_interval

TAIL = 0.05
"""The tail of neighbour recall: its 5th percentile."""


@dataclass(frozen=True)
class IndexLoss:
    """One index against exact search at ``k``: neighbour recall per query, the lost queries (label order), and the
    queries they are counted over."""

    k: int
    exact: str
    neighbor_recall: pd.Series  # per query searched and evaluated, label order
    lost: tuple[str, ...]
    n: int
    level: float = 0.95

    @property
    def mean(self) -> float:
        return float(self.neighbor_recall.mean()) if len(self.neighbor_recall) else 1.0

    @property
    def p5(self) -> float:
        return tail(self.neighbor_recall.to_numpy())

    @property
    def lost_interval(self) -> Interval:
        return wilson_interval(len(self.lost), max(self.n, 1), self.level)

    def to_dict(self) -> tuple[dict, dict]:
        """(``neighbor_recall``, ``lost_queries``) as the JSON output holds them, each with its k."""
        interval = self.lost_interval
        return ({"k": self.k, "mean": self.mean, "p5": self.p5},
                {"k": self.k, "count": len(self.lost), "n": self.n, "share": len(self.lost) / max(self.n, 1),
                 "ci_low": float(interval.low), "ci_high": float(interval.high), "queries": list(self.lost)})


def tail(values: np.ndarray, share: float = TAIL) -> float:
    """The value of the ceil(share x n)-th smallest of ``values`` (1 when there are none)."""
    if not len(values):
        return 1.0
    place = max(1, math.ceil(share * len(values)))
    return float(np.partition(np.asarray(values, dtype=np.float64), place - 1)[place - 1])


def index_loss(run: Run, exact: Run, labels: LabelSet, k: int, evaluated: np.ndarray, *, min_grade: float = 1,
               level: float = 0.95) -> IndexLoss:
    """``run`` against ``exact`` at ``k`` over the ``evaluated`` queries (their order is kept)."""
    index_top, exact_top = _top(run, k), _top(exact, k)
    searched = pd.Index(evaluated)[pd.Index(evaluated).isin(exact_top["query"].unique())]
    both = exact_top.merge(index_top.assign(kept=True), on=["query", "doc_id"], how="left")
    both["kept"] = both["kept"].fillna(False).astype(bool)
    recall = both.groupby("query", sort=False)["kept"].mean().reindex(searched).astype(np.float64)
    judged = labels.judgments
    relevant = judged.loc[judged["grade"] >= min_grade, ["query", "doc_id"]].astype(object).drop_duplicates()
    answers = both[~both["kept"]].merge(relevant, on=["query", "doc_id"])
    order = np.asarray(evaluated, dtype=object)
    lost = tuple(order[np.isin(order, answers["query"].to_numpy(dtype=object))].tolist())
    return IndexLoss(int(k), exact.name, recall, lost, int(len(order)), level)


def _top(run: Run, k: int) -> pd.DataFrame:
    """(query, doc_id) of each query's top ``k`` in ``run``, ids as text."""
    rows = np.flatnonzero(run.positions < k)  # the top k of every query, before any id becomes text
    return pd.DataFrame({"query": run.query_ids[run.query_codes[rows]], "doc_id": run.doc_ids[run.doc_codes[rows]]},
                        dtype=object)
