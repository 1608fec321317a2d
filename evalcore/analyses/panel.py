"""Judging by several people: each judge's marks kept apart, their agreement, the disagreements to adjudicate, and the
marks a freeze puts into a new label-set version.

A pool (`evalcore.analyses.judging.judging_pool`) can be judged by several people, none of whom sees another's marks.
What they marked is a log (`Workspace.panel_marks`: one row per entry and doc; ``kind`` judge, adjudication or
frozen); everything here reads it:

* **Open** entries are those after a query's last freeze: what the next freeze decides on.
* Each judge's **latest** mark of a (query, doc) pair counts (marking a pool again replaces the earlier marks).
* **Agreement** (`panel_agreement`) is over every judge's latest marks, frozen or not: percent agreement, Cohen's kappa
  (two judges), Fleiss' kappa, Krippendorff's alpha, each with a bootstrap interval over queries
  (`evalcore.stats.reliability`).
* **Disagreements** are the open pairs whose judges differ; an adjudicator's mark decides one.
* **Consensus**: the adjudicated mark where given, else the majority; a tie nobody decided leaves the pair
  unresolved, and a freeze is refused until it is decided.

A sampled queries file (``query_id, query_text, source, stratum``, as ``evalcore sample --output`` writes it; optional
``logged_doc_ids`` and ``clicked_doc_ids``, doc ids separated by ``;``) says where each query came from: the freeze
records its ``source`` and ``stratum`` with the query, so the Sources page sets the customers' queries against the
team's on the new version.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ..errors import UsageError
from ..readers.arrow_tables import id_column, read_arrow_table, text_column
from ..readers.formats import open_as
from ..readers.labels import LabelSet
from ..readers.queries import read_queries
from ..readers.query_parsers import ID_ALIASES
from ..readers.sources import SourceLike
from ..safe_text import unsafe_cell
from ..stats.intervals import DEFAULT_RESAMPLES
from ..stats.reliability import ALPHA, COHEN, FLEISS, PERCENT, Reliability, reliability, strength

JUDGE, ADJUDICATION, FROZEN = "judge", "adjudication", "frozen"
"""The kinds of entry in the log of several judges' marks."""

SAMPLE_COLUMNS = ("source", "stratum", "logged_doc_ids", "clicked_doc_ids")
"""The columns of a sampled queries file read beside its query id and text."""

_NUMBERS = {2: "Two", 3: "Three", 4: "Four", 5: "Five", 6: "Six", 7: "Seven", 8: "Eight", 9: "Nine", 10: "Ten"}


@dataclass(frozen=True)
class SampledQueries:
    """A sampled queries file: each query's text, source, stratum and the docs its log gave (``frame``, by query)."""

    name: str
    frame: pd.DataFrame  # index query; query_text, source, stratum, extra (tuple of doc ids)

    @property
    def queries(self) -> list[str]:
        return self.frame.index.tolist()

    def info(self, query: str) -> dict:
        """``query_text``, ``source``, ``stratum`` and ``extra`` of one query (empty for a query the file lacks)."""
        if query not in self.frame.index:
            return {}
        row = self.frame.loc[query]
        return {**{c: row[c] if isinstance(row[c], str) else None for c in ("query_text", "source", "stratum")},
                "extra": tuple(row["extra"])}


def read_sampled_queries(source: SourceLike, *, format: str | None = None, name: str | None = None) -> SampledQueries:
    """A queries file with ``query_id`` and ``query_text`` and, when it has them, ``source``, ``stratum``,
    ``logged_doc_ids`` and ``clicked_doc_ids`` (any format `read_queries` takes; JSON has only ids and text)."""
    texts = read_queries(source, format=format, name=name)
    frame = pd.DataFrame({"query_text": texts.texts}, index=texts.texts.index)
    columns = {c: pd.Series(None, index=frame.index, dtype=object) for c in SAMPLE_COLUMNS}
    src, fmt = open_as(source, format)
    if fmt in ("csv", "tsv", "parquet", "jsonl"):
        found = read_arrow_table(src, fmt, ID_ALIASES + SAMPLE_COLUMNS, "query_id and query_text columns")
        id_name = found.column(ID_ALIASES, "query id")
        ids = id_column(found, id_name, "a query id").to_pylist()
        undo = unsafe_cell if fmt == "csv" else str  # a CSV evalcore wrote: its formula-safe cells back as written
        for column in SAMPLE_COLUMNS:
            present = found.column((column,), column, required=False)
            if present is None or present == id_name:
                continue
            values = [None if v is None or not str(v).strip() else undo(str(v).strip())
                      for v in text_column(found, present).to_pylist()]
            columns[column] = pd.Series(values, index=pd.Index(ids, dtype=object), dtype=object).reindex(frame.index)
    extra = [tuple(d.strip() for part in (logged, clicked) if isinstance(part, str) for d in part.split(";")
                   if d.strip()) for logged, clicked in zip(columns["logged_doc_ids"], columns["clicked_doc_ids"])]
    frame = frame.assign(source=columns["source"], stratum=columns["stratum"], extra=extra)
    frame.index.name = "query"
    return SampledQueries(texts.name, frame)


# ----------------------------------------------------------------------------- the log


def open_entries(log: pd.DataFrame) -> pd.DataFrame:
    """The rows after each query's last freeze (what the next freeze decides on), frozen rows themselves left out."""
    if log.empty:
        return log
    frozen = log[log["kind"] == FROZEN].groupby("query")["entry"].max()
    last = log["query"].map(frozen).fillna(-1).to_numpy()
    return log[(log["entry"].to_numpy() > last) & (log["kind"] != FROZEN).to_numpy()]


def latest_marks(log: pd.DataFrame, kind: str = JUDGE) -> pd.DataFrame:
    """Each person's latest mark of each (query, doc) pair among the rows of ``kind``: query, doc_id, who, relevant
    (in the order the pairs were first marked)."""
    rows = log[log["kind"] == kind]
    if rows.empty:
        return pd.DataFrame(columns=["query", "doc_id", "who", "relevant"])
    order = rows.drop_duplicates(["query", "doc_id"])[["query", "doc_id"]].reset_index(drop=True)
    newest = rows.sort_values("entry", kind="stable").drop_duplicates(["query", "doc_id", "who"], keep="last")
    placed = order.reset_index().merge(newest[["query", "doc_id", "who", "relevant"]], on=["query", "doc_id"])
    return placed.sort_values(["index", "who"], kind="stable").drop(columns="index").reset_index(drop=True)


def mark_table(marks: pd.DataFrame) -> tuple[pd.DataFrame, list[str], np.ndarray]:
    """Latest marks as (pairs: query, doc_id), the judges in name order, and a (pairs, judges) array of 1.0
    (relevant), 0.0 (not) and NaN (not marked by that judge)."""
    judges = sorted(marks["who"].astype(str).unique().tolist())
    pairs = marks.drop_duplicates(["query", "doc_id"])[["query", "doc_id"]].reset_index(drop=True)
    wide = marks.assign(mark=marks["relevant"].astype(float)).pivot_table(
        index=["query", "doc_id"], columns="who", values="mark", aggfunc="last")
    wide = wide.reindex(pd.MultiIndex.from_frame(pairs)).reindex(columns=judges)
    return pairs, judges, wide.to_numpy(dtype=np.float64)


# ----------------------------------------------------------------------------- agreement


@dataclass(frozen=True)
class PanelAgreement:
    """How far the judges agree, over every judge's latest marks."""

    judges: tuple[str, ...]
    n_pairs: int  # pairs two or more judges marked (what agreement is computed on)
    n_queries: int  # the queries those pairs belong to (what the bootstrap resamples)
    n_single: int  # pairs only one judge marked (they say nothing about agreement)
    complete: bool  # every one of those pairs was marked by every judge
    statistics: dict[str, Reliability] = field(default_factory=dict)

    @property
    def headline(self) -> Reliability:
        """Cohen's kappa for two judges, Fleiss' for more, when every pair was marked by every judge; else
        Krippendorff's alpha (made for marks that are missing)."""
        if self.complete and len(self.judges) == 2 and COHEN in self.statistics:
            return self.statistics[COHEN]
        return self.statistics[FLEISS if self.complete else ALPHA]

    @property
    def percent(self) -> Reliability:
        return self.statistics[PERCENT]


def panel_agreement(log: pd.DataFrame, *, level: float = 0.95, n_resamples: int = DEFAULT_RESAMPLES,
                    rng: np.random.Generator | int | None = None) -> PanelAgreement | None:
    """The agreement of the judges in ``log`` (`evalcore.stats.reliability.reliability` over their latest marks,
    resampling queries); None until two judges have marked the same pair."""
    marks = latest_marks(log)
    if marks.empty or marks["who"].nunique() < 2:
        return None
    pairs, judges, values = mark_table(marks)
    counted = (~np.isnan(values)).sum(axis=1)
    shared = counted >= 2
    if not shared.any():
        return None
    found = reliability(values, pairs["query"].to_numpy(dtype=object), level=level, n_resamples=n_resamples, rng=rng)
    return PanelAgreement(tuple(judges), int(shared.sum()), int(pairs["query"][shared].nunique()),
                          int((counted == 1).sum()), bool((counted[shared] == len(judges)).all()), found)


def agreement_sentence(found: PanelAgreement) -> str:
    """The agreement in one sentence: ``Two judges agreed on 87% of pairs; kappa 0.71 (substantial), 95% interval
    0.62-0.79``, with what it was computed on."""
    people = _NUMBERS.get(len(found.judges), str(len(found.judges)))
    share = found.percent.value
    agreed = "agreed" if len(found.judges) == 2 else "all agreed"
    head = found.headline
    word = "alpha" if head.statistic == ALPHA else "kappa"
    opening = f"{people} judges {agreed} on {share:.0%} of the pairs they both marked" if len(found.judges) == 2 \
        else f"{people} judges {agreed} on {share:.0%} of the pairs two or more of them marked"
    if not np.isfinite(head.value):
        measure = f"{word} cannot be computed ({head.note})"
    else:
        measure = f"{word} {head.value:.2f} ({strength(head.value)})"
        if np.isfinite(head.low):
            measure += f", {head.level:.0%} interval {_interval(head.low, head.high)}"
        elif head.note:
            measure += f", no interval ({head.note})"
    return (f"{opening}; {measure} ({head.statistic}; n = {found.n_pairs:,} pairs of {found.n_queries:,} "
            f"{'query' if found.n_queries == 1 else 'queries'}).")


def _interval(low: float, high: float) -> str:
    return f"{low:.2f}-{high:.2f}" if low >= 0 else f"{low:.2f} to {high:.2f}"


def statistics_table(found: PanelAgreement) -> pd.DataFrame:
    """Every statistic with its interval, what it is computed on and Landis and Koch's word (one row each)."""
    rows = []
    for stat in found.statistics.values():
        rows.append({"statistic": stat.statistic, "value": stat.value, "ci_low": stat.low, "ci_high": stat.high,
                     "strength": "" if stat.statistic == PERCENT else strength(stat.value), "pairs": stat.n_units,
                     "queries": stat.n_groups, "level": stat.level, "resamples": stat.n_resamples, "seed": stat.seed,
                     "note": stat.note or ""})
    return pd.DataFrame(rows)


# ----------------------------------------------------------------------------- disagreements and the consensus


def disagreements(log: pd.DataFrame) -> pd.DataFrame:
    """The open pairs whose judges differ: query, doc_id, how many marked it relevant and not, each judge's mark,
    and the adjudicator's decision when one was made (``decided``: relevant, not relevant or empty)."""
    columns = ["query", "doc_id", "relevant", "not_relevant", "marks", "tied", "decided", "decided_by", "query_text"]
    opened = open_entries(log)
    marks = latest_marks(opened)
    if marks.empty:
        return pd.DataFrame(columns=columns)
    decided = _decided(opened)
    texts = opened.dropna(subset=["query_text"]).groupby("query")["query_text"].last()
    rows = []
    for (query, doc), group in marks.groupby(["query", "doc_id"], sort=False):
        yes = int(group["relevant"].sum())
        no = len(group) - yes
        if not yes or not no:
            continue
        said = "; ".join(f"{who}: {'relevant' if mark else 'not relevant'}"
                         for who, mark in zip(group["who"], group["relevant"]))
        made = decided.loc[(query, doc)] if (query, doc) in decided.index else None
        rows.append({"query": query, "doc_id": doc, "relevant": yes, "not_relevant": no, "marks": said,
                     "tied": yes == no, "decided": "" if made is None else ("relevant" if made["relevant"]
                                                                            else "not relevant"),
                     "decided_by": "" if made is None else made["who"], "query_text": texts.get(query, "")})
    return pd.DataFrame(rows, columns=columns)


@dataclass(frozen=True)
class Consensus:
    """What a freeze would put into the new version: the final mark of every open pair, each query's round, and the
    tied pairs nobody decided (a freeze is refused while there are any)."""

    marks: pd.DataFrame  # query, doc_id, relevant, how, n_judges
    rounds: list[dict]  # per query: query, depth, n_docs, n_relevant, judges, marks, query_text, source, stratum
    unresolved: pd.DataFrame  # query, doc_id: tied and not adjudicated
    counts: dict[str, int]  # pairs decided unanimously, by majority, by an adjudicator, by one judge alone


def consensus(log: pd.DataFrame) -> Consensus:
    """The open pairs' final marks: the adjudicated mark where given, else the majority of the judges' latest marks."""
    opened = open_entries(log)
    marks = latest_marks(opened)
    decided = _decided(opened)["relevant"]
    rows, tied = [], []
    counts = {"unanimous": 0, "majority": 0, "adjudicated": 0, "one judge": 0}
    for (query, doc), group in marks.groupby(["query", "doc_id"], sort=False):
        yes, n = int(group["relevant"].sum()), len(group)
        if (query, doc) in decided.index:
            relevant, how = bool(decided[(query, doc)]), "adjudicated"
        elif n == 1:
            relevant, how = bool(yes), "one judge"
        elif yes in (0, n):
            relevant, how = bool(yes), "unanimous"
        elif 2 * yes != n:
            relevant, how = 2 * yes > n, "majority"
        else:
            tied.append((query, doc))
            continue
        counts[how] += 1
        rows.append((query, doc, relevant, how, n))
    final = pd.DataFrame(rows, columns=["query", "doc_id", "relevant", "how", "n_judges"])
    rounds = []
    for query, group in final.groupby("query", sort=False):
        mine = opened[opened["query"] == query]
        judged = mine[mine["kind"] == JUDGE]
        info = {c: _last(mine[c]) for c in ("query_text", "source", "stratum")}
        rounds.append({"query": query, "depth": int(judged["depth"].max()), "n_docs": len(group),
                       "n_relevant": int(group["relevant"].sum()), "judges": sorted(judged["who"].unique().tolist()),
                       "marks": dict(zip(group["doc_id"], group["relevant"].astype(bool))), **info})
    return Consensus(final, rounds, pd.DataFrame(tied, columns=["query", "doc_id"]), counts)


def _decided(opened: pd.DataFrame) -> pd.DataFrame:
    """The latest adjudication of each open pair (relevant, who), by (query, doc_id)."""
    rows = opened[opened["kind"] == ADJUDICATION].sort_values("entry", kind="stable")
    return rows.drop_duplicates(["query", "doc_id"], keep="last").set_index(["query", "doc_id"])[["relevant", "who"]]


def _last(values: pd.Series) -> str | None:
    present = values.dropna()
    present = present[present.astype(str).str.strip() != ""]
    return str(present.iloc[-1]) if len(present) else None


def consensus_labels(found: Consensus, name: str) -> LabelSet:
    """The final marks as judgments of blind queries (1 relevant, 0 judged non-relevant), each query with its text,
    source and stratum when known: the cases a freeze adds to the label set ``name``."""
    if found.marks.empty:
        raise UsageError("Nothing to freeze: no judge has marked a pool of this label set since its last freeze.")
    judgments = pd.DataFrame({"query": found.marks["query"].astype(str), "doc_id": found.marks["doc_id"].astype(str),
                              "grade": found.marks["relevant"].astype(float)})
    queries = [r["query"] for r in found.rounds]
    info = {"blind": [True] * len(queries)}
    for column in ("query_text", "source", "stratum"):
        values = [r.get(column) for r in found.rounds]
        if any(v is not None for v in values):
            info[column] = values
    return LabelSet(name=name, judgments=judgments,
                    query_info=pd.DataFrame(info, index=pd.Index(queries, name="query"), dtype=object))
