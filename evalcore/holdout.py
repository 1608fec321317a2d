"""Tune and holdout: one label set split in two, the holdout sealed until someone reveals it.

Tuning a model (or k, or a prompt) on the same queries it is then reported on makes the
reported number optimistic. A split keeps them apart:

* from the labels file's ``split`` field (``tune`` / ``holdout``), or
* by query hash, when asked (`hash_split`): SHA-256 of the query id, so every machine puts a
  query on the same side without storing anything; ``fraction`` of the queries go to tune.

Holdout numbers are sealed: `select_split` gives the holdout queries only against a `Reveal`,
and a reveal only comes from `Workspace.record_reveal`, which stores who looked, when, at which
label-set version and which runs. Tune numbers are labelled exploratory.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .errors import UsageError, invalid_parameter
from .labels import SPLITS, LabelSet
from .warning_log import EvalWarning, plural

EXPLORATORY = "exploratory (tuning split: fine for choosing, not for reporting)"
SEALED_NOTE = "sealed holdout"


class HoldoutSealed(UsageError):
    """Holdout numbers were asked for without a recorded reveal."""


@dataclass(frozen=True)
class SplitRule:
    """Where the split comes from: the file's ``split`` field, or a hash of the query id."""

    fraction: float | None = None  # None: the file's field; else the share of queries put in tune by hash

    def __post_init__(self) -> None:
        if self.fraction is not None and (isinstance(self.fraction, bool) or not 0 < float(self.fraction) < 1):
            raise invalid_parameter("tune fraction", "a number between 0 and 1 (exclusive)", self.fraction)

    def __str__(self) -> str:
        return "file split field" if self.fraction is None else f"hash split, tune fraction {self.fraction:g}"

    @property
    def key(self) -> str:
        """A short machine form: ``file`` or ``hash:0.3``."""
        return "file" if self.fraction is None else f"hash:{self.fraction:g}"


@dataclass(frozen=True)
class Reveal:
    """A recorded look at the holdout numbers (made only by `Workspace.record_reveal`)."""

    id: int
    label_set: str
    version: int
    fingerprint: str  # of the whole label set, before the split
    rule: str
    runs: tuple[str, ...]
    who: str
    at: str
    views: int  # how many reveals this label set's holdout has had, this one included


@dataclass(frozen=True)
class SplitView:
    """The labels of one side of a split and how to label every number made from them."""

    labels: LabelSet  # only this side's queries
    split: str
    rule: SplitRule
    full_fingerprint: str
    n_queries: int
    n_other: int  # queries on the other side
    n_unassigned: int  # queries the file gives no split (left out of both)
    reveal: Reveal | None = None

    @property
    def note(self) -> str:
        if self.split == "tune":
            return EXPLORATORY
        if self.reveal is None:
            return SEALED_NOTE
        times = "once" if self.reveal.views == 1 else f"{self.reveal.views} times"
        return f"{SEALED_NOTE}, viewed {times} (this view {self.reveal.at[:16].replace('T', ' ')} UTC)"

    @property
    def warnings(self) -> tuple[EvalWarning, ...]:
        if not self.n_unassigned:
            return ()
        return (EvalWarning("split_unassigned",
                            f"{plural(self.n_unassigned, 'labeled query', 'labeled queries')} with no split value "
                            f"in the labels left out of both tune and holdout", self.n_unassigned),)

    def to_dict(self) -> dict:
        out = {"split": self.split, "rule": self.rule.key, "n_queries": self.n_queries, "n_other_side": self.n_other,
               "n_unassigned": self.n_unassigned, "full_fingerprint": self.full_fingerprint, "note": self.note}
        if self.reveal is not None:
            out["reveal"] = {"id": self.reveal.id, "views": self.reveal.views, "at": self.reveal.at,
                             "who": self.reveal.who, "label_set": self.reveal.label_set,
                             "version": self.reveal.version}
        return out


def hash_split(queries, fraction: float) -> np.ndarray:
    """``tune`` or ``holdout`` per query id: SHA-256 of the UTF-8 id, first 8 bytes as a share of 2**64.

    Stable across machines, Python versions and label-set growth: a query never changes side
    when other queries are added.
    """
    rule = SplitRule(fraction)
    ids = [str(q) for q in queries]
    share = np.array([int.from_bytes(hashlib.sha256(q.encode("utf-8")).digest()[:8], "big") for q in ids],
                     dtype=np.float64) / 2.0 ** 64
    return np.where(share < float(rule.fraction), "tune", "holdout").astype(object)


def query_splits(labels: LabelSet, rule: SplitRule) -> pd.Series:
    """The side of every labeled query (None where the file gives none), by ``rule``."""
    if rule.fraction is not None:
        return pd.Series(hash_split(labels.queries, rule.fraction), index=labels.queries, dtype=object)
    values = labels.field("split")
    if values is None:
        raise UsageError(f"The labels {labels.name!r} have no 'split' field; add a split column (tune or holdout) "
                         "or ask for a deterministic hash split (--hash-split FRACTION).")
    return values.astype(object)


def select_split(labels: LabelSet, split: str, rule: SplitRule = SplitRule(), *,
                 reveal: Reveal | None = None) -> SplitView:
    """The labels of one side. The holdout side needs a `Reveal` of this very label set."""
    if split not in SPLITS:
        raise invalid_parameter("split", "'tune' or 'holdout'", split)
    if split == "holdout":
        if reveal is None:
            raise HoldoutSealed("Holdout numbers are sealed: reveal them on purpose (evalcore evaluate ... --split "
                                "holdout --reveal), which records the view in the workspace.")
        if reveal.fingerprint != labels.fingerprint or reveal.rule != rule.key:
            raise HoldoutSealed(f"The reveal #{reveal.id} was for labels #{reveal.fingerprint} ({reveal.rule}), not "
                                f"these (#{labels.fingerprint}, {rule.key}); record a reveal of these labels.")
    sides = query_splits(labels, rule)
    chosen = sides.index[(sides == split).to_numpy()].to_numpy(dtype=object)
    other = int((sides == ("holdout" if split == "tune" else "tune")).sum())
    unassigned = int(sides.isna().sum())
    if not len(chosen):
        raise UsageError(f"The labels {labels.name!r} have no {split} queries ({rule}).")
    keep = labels.judgments["query"].isin(set(chosen.tolist()))
    info = labels.query_info.loc[labels.query_info.index.isin(set(chosen.tolist()))]
    subset = LabelSet(name=labels.name, judgments=labels.judgments[keep].reset_index(drop=True), query_info=info,
                      warnings=labels.warnings, source=labels.source)
    return SplitView(subset, split, rule, labels.fingerprint, len(chosen), other, unassigned, reveal)


def evaluate_split(runs, labels, split: str, rule: SplitRule = SplitRule(), *, reveal: Reveal | None = None,
                   k="1,5,10", **options):
    """Score ``runs`` on one side of the split: ``(evaluation, view)``.

    Run queries on the other side are not "missing from the labels": the warning about run
    queries without labels counts only those the whole label set lacks.
    """
    import dataclasses

    from .evaluation import evaluate_runs
    from .labels import read_labels
    from .runs import read_run

    full = read_labels(labels)
    loaded = [read_run(r) for r in runs]
    view = select_split(full, split, rule, reveal=reveal)
    evaluation = evaluate_runs(loaded, view.labels, k, **options)
    known = pd.Index(full.queries)
    results = []
    for result in evaluation.results:
        kept = [w for w in result.warnings if w.code != "query_not_in_labels"]
        unlabeled = int((known.get_indexer(result.run.query_ids) < 0).sum())
        if unlabeled:
            kept.append(EvalWarning("query_not_in_labels",
                                    f"run {result.name}: {plural(unlabeled, 'query', 'queries')} in the run "
                                    f"{'has no labels and is' if unlabeled == 1 else 'have no labels and are'} ignored",
                                    unlabeled))
        results.append(dataclasses.replace(result, warnings=tuple(kept)))
    evaluation = dataclasses.replace(evaluation, results=tuple(results),
                                     warnings=evaluation.warnings + view.warnings)
    return evaluation, view
