"""Re-judging: queue suspicious labels for a blind look, save a blind judging round as a new label version, and judge
by several people (each person's marks kept apart, disagreements adjudicated, the result frozen as one version).

Labels are never edited in place: flagged queries wait in the queue of the whole label set as read (so a new
version keeps every query and its split), and a judging round becomes a new version with the query marked blind.
Several judges: `save_marks` keeps one person's marks (the session's actor) apart from everyone else's, `adjudicate`
records an adjudicator's decision on pairs the judges disagree on, `freeze_panel` makes the new version
(`evalcore.analyses.panel.consensus`: the adjudicated mark where given, else the majority).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Mapping, Sequence

import pandas as pd

from ..access import Actor
from ..analyses.judging import JudgingPool, marks_to_labels, parse_mark
from ..analyses.panel import ADJUDICATION, JUDGE, consensus, consensus_labels, disagreements
from ..errors import UsageError
from ..readers.labels import LabelSet
from ..store.workspace import LabelVersion, StoredFile, Workspace
from .acting import action

MANUAL_REASON = "flagged from evalcore audit"
"""The reason recorded for a query flagged by hand, when no suspect explains it."""


@dataclass(frozen=True)
class Flagged:
    """The label-set version the queue belongs to and the queue entry of each flagged query, in order."""

    version: LabelVersion
    entries: tuple[tuple[str, int], ...]  # (query, queue entry id)


def suspect_reason(row: Mapping, k: int, agree_depth: int) -> str:
    """Why a suspect was flagged, in the words the queue shows."""
    return (f"every run misses at k = {k} while all put {row['doc_id']} ({row['doc_label']}) in their top "
            f"{agree_depth}: {row['ranks']}")


@action("judge")
def flag_for_rejudging(workspace: Workspace, labels: LabelSet, queries: Sequence[str], *, actor: Actor,
                       scored: Sequence[str] | None = None, suspects: pd.DataFrame | None = None,
                       suspect_k: int | None = None, agree_depth: int | None = None, label_set: str | None = None,
                       labels_file: StoredFile | str | os.PathLike | None = None,
                       scored_name: str | None = None) -> Flagged:
    """Save ``labels`` (the whole set as read) as a version, then queue each of ``queries`` for blind re-judging.

    Only queries that were scored (``scored``: the tune side, or every query after a reveal; default every
    labeled query; ``scored_name``: what the error calls them, e.g. ``NAME:tune``, default the labels' name) can
    be flagged. A query among the audit's ``suspects`` is queued with the doc every run agreed on and why; any
    other with `MANUAL_REASON`. ``labels_file`` is the stored file the labels were read from, or its path (stored
    once the queries are checked, so a refused flag stores nothing). An editor's action (`NotPermitted` otherwise),
    logged under ``actor.who``.
    """
    allowed = set(labels.queries.tolist() if scored is None else scored)
    unknown = [q for q in queries if q not in allowed]
    if unknown:
        raise UsageError(f"{unknown[0]!r}: no such query in the labels {scored_name or labels.name!r} (of "
                         f"{len(allowed):,} scored queries, only those can be flagged).")
    if labels_file is not None and not isinstance(labels_file, StoredFile):
        labels_file = workspace._put_file(labels_file)
    version = workspace._save_labels(labels, name=label_set, file=labels_file)
    entries = []
    for query in queries:
        doc, reason = None, MANUAL_REASON
        if suspects is not None and not suspects.empty and (suspects["query"] == query).any():
            row = suspects[suspects["query"] == query].iloc[0]
            doc, reason = row["doc_id"], suspect_reason(row, suspect_k, agree_depth)
        entries.append((query, workspace._flag_for_rejudging(version.name, query, reason=reason, doc_id=doc,
                                                            who=actor.who)))
    workspace._record_event(actor.who, "flag for re-judging", version.ref, ", ".join(q for q, _ in entries))
    return Flagged(version, tuple(entries))


@action("judge")
def save_judging_round(workspace: Workspace, label_set: str, pool: JudgingPool, marks: Mapping[str, bool], *,
                       actor: Actor, base: LabelSet | None = None,
                       base_file: StoredFile | None = None) -> LabelVersion:
    """A blind judging round of ``pool`` (every doc marked relevant or not) as a new version of ``label_set``.

    ``base``: the labels the round extends, saved first as a version of ``label_set`` when the workspace does not
    hold them yet (a dashboard session judging the labels it loaded); the command line judges a saved set. An
    editor's action (`NotPermitted` otherwise, before anything is written); the round names ``actor.who`` as its judge.
    """
    missing = [doc for doc in pool.docs if doc not in marks]
    if missing:
        raise UsageError(f"A blind judgment covers the whole pool: {len(missing)} of {len(pool.docs)} docs are not "
                         f"marked (first: {missing[0]!r}).")
    if base is not None:
        label_set = workspace._save_labels(base, name=label_set, file=base_file).name
    version = workspace._save_blind_judgments(label_set, marks_to_labels(pool, marks), query=pool.query,
                                             depth=pool.depth, who=actor.who)
    workspace._record_event(actor.who, "judging round", version.ref,
                           f"{pool.query} judged blind at depth {pool.depth} ({len(pool.docs)} docs)")
    return version


@action("judge")
def save_marks(workspace: Workspace, label_set: str, pool: JudgingPool, marks: Mapping[str, object], *,
               actor: Actor) -> int:
    """``actor``'s marks on every doc of ``pool``, kept apart from every other judge's (blind: nobody's marks are
    shown to another judge); marking the same pool again replaces the person's earlier marks. No version is made
    until the panel is frozen (`freeze_panel`). An editor's action; returns the entry id."""
    missing = [doc for doc in pool.docs if doc not in marks]
    if missing:
        raise UsageError(f"A blind judgment covers the whole pool: {len(missing)} of {len(pool.docs)} docs are not "
                         f"marked (first: {missing[0]!r}).")
    extra = [doc for doc in marks if doc not in set(pool.docs)]
    if extra:
        raise UsageError(f"Query {pool.query!r}: marks for docs not in the pool ({', '.join(map(str, extra[:5]))}).")
    given = {doc: parse_mark(marks[doc], f"query {pool.query!r}, doc {doc!r}") for doc in pool.docs}
    entry = workspace._save_panel_marks(label_set, pool.query, given, kind=JUDGE, who=actor.who, depth=pool.depth,
                                        query_text=pool.query_text, source=pool.source, stratum=pool.stratum)
    workspace._record_event(actor.who, "judge marks", f"{label_set}: {pool.query}",
                            f"{len(pool.docs)} docs judged blind at depth {pool.depth}, kept apart from other judges")
    return entry


@action("manage_label_versions")
def adjudicate(workspace: Workspace, label_set: str, query: str, decisions: Mapping[str, object], *, actor: Actor,
               note: str = "") -> int:
    """An adjudicator's marks on pairs of ``query`` the judges disagree on (``decisions``: {doc: relevant}); the
    latest decision on a pair counts when the panel is frozen. An owner's action (it overrides judges' marks)."""
    differ = disagreements(workspace.panel_marks(label_set))
    open_pairs = set(differ.loc[differ["query"] == str(query), "doc_id"])
    if not decisions:
        raise UsageError("Nothing to adjudicate: give a decision for at least one pair.")
    stray = [doc for doc in decisions if doc not in open_pairs]
    if stray:
        raise UsageError(f"Query {query!r}, doc {stray[0]!r}: the judges do not disagree on it (or it was frozen "
                         "already); only their open disagreements are adjudicated.")
    given = {doc: parse_mark(mark, f"query {query!r}, doc {doc!r}") for doc, mark in decisions.items()}
    entry = workspace._save_panel_marks(label_set, query, given, kind=ADJUDICATION, who=actor.who, depth=0,
                                        note=note)
    workspace._record_event(actor.who, "adjudicate", f"{label_set}: {query}",
                            f"{len(given)} disagreements decided" + (f": {note}" if note else ""))
    return entry


@action("manage_label_versions")
def freeze_panel(workspace: Workspace, label_set: str, *, actor: Actor, base: LabelSet | None = None,
                 base_file: StoredFile | None = None) -> LabelVersion:
    """Every open query the judges marked, as one new version of ``label_set``: each pair's adjudicated mark, else
    the majority (refused, nothing written, while a tie is undecided), each query marked blind with its text, source
    and stratum when the pool carried them, a judging round per query. ``base``: the labels to save first when the
    workspace lacks them. An owner's action."""
    found = consensus(workspace.panel_marks(label_set))
    if not found.unresolved.empty:
        first = found.unresolved.iloc[0]
        raise UsageError(f"{len(found.unresolved)} pairs are tied (as many judges marked them relevant as not) and no "
                         f"adjudicator has decided them (first: query {first['query']!r}, doc {first['doc_id']!r}): "
                         "decide them first.")
    judged = consensus_labels(found, label_set)
    if base is not None:
        label_set = workspace._save_labels(base, name=label_set, file=base_file).name
    version = workspace._freeze_panel(label_set, judged, found.rounds, who=actor.who)
    judges = sorted({who for r in found.rounds for who in r["judges"]})
    counts = ", ".join(f"{n} {how}" for how, n in found.counts.items() if n)
    workspace._record_event(actor.who, "freeze judging panel", version.ref,
                            f"{len(found.rounds)} queries, {len(found.marks)} pairs ({counts}); judges "
                            f"{', '.join(judges)}")
    return version
