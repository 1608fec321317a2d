"""Tune and holdout: one label set split in two, the holdout sealed until someone reveals it.

Tuning a model (or k, or a prompt) on the same queries it is then reported on makes the
reported number optimistic. A split keeps them apart:

* from the labels file's ``split`` field (``tune`` / ``holdout``), or
* by query hash, when asked (`hash_split`): SHA-256 of the query id, so every machine puts a
  query on the same side without storing anything; ``fraction`` of the queries go to tune.

Holdout numbers are sealed: `select_split` gives the holdout queries (or all queries) only
against a `Reveal`, and a reveal only comes from `Workspace.record_reveal`, which stores who
looked, when, at which label-set version and which runs. Tune numbers are labelled exploratory.

Every front end (each CLI command that scores, every dashboard page) gets its labels from
`scoring_labels`: labels with a split are scored on the tune side unless a recorded reveal asks
for the holdout or all queries, so numbers that include the holdout never appear by default.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Sequence

import numpy as np
import pandas as pd

from ..errors import HoldoutSealed, UsageError, invalid_parameter
from ..readers.labels import LabelSet, read_labels
from ..timestamps import minute
from ..warning_log import EvalWarning, plural
from .evaluation import Evaluation, evaluate_runs

EXPLORATORY = "exploratory (tuning split: fine for choosing, not for reporting)"
SEALED_NOTE = "sealed holdout"


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


SCOPES = ("tune", "holdout", "all")
"""What a front end may be asked to score: one side of the split, or every query (``all``; needs a reveal)."""


@dataclass(frozen=True, eq=False)
class SplitView:
    """The labels a front end scores and which split every number made from them is on.

    ``split`` is ``tune``, ``holdout``, ``all`` (both sides, the holdout revealed) or None: the
    labels carry no split and are scored whole, as they always were. ``labels`` holds only the
    scored queries; for one side it is named ``NAME:tune`` / ``NAME:holdout`` (with a hash split
    ``NAME:tune@hash0.3``), so every table, export and saved evaluation made from it names its
    split, and its fingerprint is that of the side (``full_fingerprint`` is the whole set's).
    """

    labels: LabelSet  # only the scored queries
    split: str | None
    rule: SplitRule
    full_name: str
    full_fingerprint: str
    full_queries: np.ndarray = field(repr=False)  # every labeled query of the whole set
    n_queries: int  # scored queries
    n_other: int  # queries on the other side (0 for all and for no split)
    n_unassigned: int  # queries the file gives no split (left out of tune and of holdout)
    n_holdout: int = 0  # holdout queries in the whole set
    reveal: Reveal | None = None

    @property
    def sealed(self) -> int:
        """Holdout queries left out of these numbers and still sealed."""
        return self.n_holdout if self.split == "tune" else 0

    def _seen(self) -> str:
        if self.reveal is None:
            return "sealed"
        times = "once" if self.reveal.views == 1 else f"{self.reveal.views} times"
        return f"revealed {minute(self.reveal.at)}, viewed {times}"

    @property
    def label(self) -> str:
        """How every number on these labels is named: ``tune (exploratory)``, ``holdout (revealed ...)``,
        ``all queries (holdout revealed ...)``; empty without a split."""
        if self.split is None:
            return ""
        if self.split == "tune":
            return "tune (exploratory)"
        if self.split == "holdout":
            return f"holdout ({self._seen()})"
        return f"all queries (holdout {self._seen()})"

    @property
    def note(self) -> str:
        """The longer wording for titles."""
        if self.split == "tune":
            return EXPLORATORY
        if self.split is None:
            return ""
        if self.reveal is None:
            return SEALED_NOTE
        times = "once" if self.reveal.views == 1 else f"{self.reveal.views} times"
        what = SEALED_NOTE if self.split == "holdout" else f"tune and {SEALED_NOTE} together"
        return f"{what}, viewed {times} (this view {minute(self.reveal.at)})"

    @property
    def headline(self) -> str:
        """One line for a page header or a command's first line: ``tune split (exploratory) · 224 holdout queries
        sealed``."""
        if self.split is None:
            return ""
        if self.split == "tune":
            sealed = plural(self.sealed, "holdout query", "holdout queries") if self.sealed else "no holdout queries"
            return f"tune split (exploratory) · {sealed} sealed"
        if self.split == "holdout":
            return f"holdout split ({self._seen()})"
        return f"all queries, tune and holdout ({'holdout ' + self._seen()})"

    @property
    def warnings(self) -> tuple[EvalWarning, ...]:
        if not self.n_unassigned or self.split in (None, "all"):
            return ()
        return (EvalWarning("split_unassigned",
                            f"{plural(self.n_unassigned, 'labeled query', 'labeled queries')} with no split value "
                            f"in the labels left out of both tune and holdout", self.n_unassigned),)

    def to_dict(self) -> dict:
        out = {"split": self.split, "label": self.label, "rule": self.rule.key, "n_queries": self.n_queries,
               "n_other_side": self.n_other, "n_unassigned": self.n_unassigned, "n_holdout_sealed": self.sealed,
               "full_labels": self.full_name, "full_fingerprint": self.full_fingerprint, "note": self.note}
        if self.reveal is not None:
            out["reveal"] = {"id": self.reveal.id, "views": self.reveal.views, "at": self.reveal.at,
                             "who": self.reveal.who, "label_set": self.reveal.label_set,
                             "version": self.reveal.version}
        return out

    def evaluate(self, runs: Sequence, k: int | str | Sequence[int] = "1,5,10", **options) -> "Evaluation":
        """Score ``runs`` on these labels: an `Evaluation` that carries this view (``evaluation.split``).

        Run queries on the other side are not "missing from the labels": the warning about run
        queries without labels counts only those the whole label set lacks.
        """
        return evaluate_runs(runs, self.labels, k, split=self, **options)


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


def _check_reveal(labels: LabelSet, rule: SplitRule, reveal: Reveal | None, split: str) -> None:
    if reveal is None:
        how = "--split holdout --reveal" if split == "holdout" else "--split all --reveal"
        raise HoldoutSealed(f"Holdout numbers are sealed: reveal them on purpose (evalcore evaluate ... {how}, or "
                            "the Reveal button on the dashboard's Integrity page), which records the view in the "
                            "workspace.")
    if reveal.fingerprint != labels.fingerprint or reveal.rule != rule.key:
        raise HoldoutSealed(f"The reveal #{reveal.id} was for labels #{reveal.fingerprint} ({reveal.rule}), not "
                            f"these (#{labels.fingerprint}, {rule.key}); record a reveal of these labels.")


def side_name(name: str, split: str, rule: SplitRule) -> str:
    suffix = f":{split}" if rule.fraction is None else f":{split}@hash{rule.fraction:g}"
    return name if name.endswith(suffix) else name + suffix


def select_split(labels: LabelSet, split: str, rule: SplitRule = SplitRule(), *,
                 reveal: Reveal | None = None) -> SplitView:
    """The labels of one side (``tune`` or ``holdout``), or of ``all`` queries. Holdout and all need a `Reveal`
    of this very label set and rule."""
    if split not in SCOPES:
        raise invalid_parameter("split", "'tune', 'holdout' or 'all'", split)
    if split != "tune":
        _check_reveal(labels, rule, reveal, split)
    sides = query_splits(labels, rule)
    is_tune, is_holdout = (sides == "tune").to_numpy(), (sides == "holdout").to_numpy()
    n_tune, n_holdout = int(is_tune.sum()), int(is_holdout.sum())
    unassigned = int(sides.isna().sum())
    full_queries = np.asarray(labels.queries, dtype=object)
    if split == "all":
        return SplitView(labels, "all", rule, labels.name, labels.fingerprint, full_queries, labels.n_queries, 0,
                         unassigned, n_holdout, reveal)
    chosen = sides.index[is_tune if split == "tune" else is_holdout].to_numpy(dtype=object)
    if not len(chosen):
        hint = (f" (its {n_holdout:,} holdout queries are sealed: reveal them with --split holdout --reveal)"
                if split == "tune" and n_holdout else "")
        raise UsageError(f"The labels {labels.name!r} have no {split} queries ({rule}){hint}.")
    wanted = set(chosen.tolist())
    keep = labels.judgments["query"].isin(wanted)
    info = labels.query_info.loc[labels.query_info.index.isin(wanted)]
    spans = labels.spans
    if spans is not None:  # the evidence of the side's queries goes with them
        spans = spans[spans["query"].isin(wanted)].reset_index(drop=True)
    subset = LabelSet(name=side_name(labels.name, split, rule), judgments=labels.judgments[keep].reset_index(drop=True),
                      query_info=info, warnings=labels.warnings, source=labels.source, spans=spans)
    other = n_holdout if split == "tune" else n_tune
    return SplitView(subset, split, rule, labels.name, labels.fingerprint, full_queries, len(chosen), other,
                     unassigned, n_holdout, reveal)


def scoring_labels(labels: LabelSet, rule: SplitRule | None = None, reveal: Reveal | None = None,
                   split: str | None = None) -> SplitView:
    """The labels a front end may score: every command and page goes through this, so the holdout leaks nowhere.

    * Labels without a ``split`` field (and no hash ``rule``): the whole set, unchanged (``split`` None).
    * Labels with a split (the field, or ``rule`` with a fraction): the tune queries only, labelled
      exploratory, unless ``split`` asks for ``holdout`` or ``all`` queries, which need a ``reveal``
      recorded in the workspace (`Workspace.record_reveal`); without one, `HoldoutSealed`.
    """
    rule = rule or SplitRule()
    if split is not None and split not in SCOPES:
        raise invalid_parameter("split", "'tune', 'holdout' or 'all'", split)
    if rule.fraction is None and labels.field("split") is None:
        if split is not None:
            query_splits(labels, rule)  # raises: no split field, ask for a hash split
        full_queries = np.asarray(labels.queries, dtype=object)
        return SplitView(labels, None, rule, labels.name, labels.fingerprint, full_queries, labels.n_queries, 0, 0)
    return select_split(labels, split or "tune", rule, reveal=reveal)


def evaluate_split(runs, labels, split: str, rule: SplitRule = SplitRule(), *, reveal: Reveal | None = None,
                   k="1,5,10", **options):
    """Score ``runs`` on one side of the split (or ``all``): ``(evaluation, view)``."""
    view = select_split(read_labels(labels), split, rule, reveal=reveal)
    return view.evaluate(runs, k, **options), view
