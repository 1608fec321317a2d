"""The one door to change a workspace: a `Session` bound to the person acting.

Each front end builds one per command (the CLI, for the person at the terminal) or per signed-in visitor (the
dashboard), and changes the workspace only through it: storing a file or a saved view, recording an upload, saving
an evaluation, revealing the holdout, flagging and judging (alone, or by several people: marks, adjudication, the
freeze), adding label-set versions, editing the failure ledger, deleting, sweeping unreferenced files. Every method
checks the person's role first (`evalcore.access.require`: `NotPermitted` before anything is written) and stores the
change together with the event that records it, in one transaction (`Workspace.atomic`): a process killed between
the two leaves neither. Reading needs no session: use the `Workspace` itself (``session.workspace``).
"""

from __future__ import annotations

import os
from collections.abc import Collection, Mapping, Sequence
from typing import Any

from ..access import Actor, require
from ..analyses.judging import JudgingPool
from ..errors import NotPermitted
from ..metrics.evaluation import Evaluation
from ..metrics.split import Reveal, SplitRule
from ..readers.labels import LabelSet
from ..readers.runs import Run
from ..store.events import append_event
from ..store.ledger import LedgerEntry
from ..store.workspace import Deletion, LabelVersion, Orphans, StoredFile, StoredRun, Workspace
from .cases import AddedCases, add_cases, add_production_miss
from .deletion import delete
from .evaluations import SavedRound, save_evaluation
from .holdout import reveal_holdout
from .ledger import edit_entry
from .rejudging import Flagged, adjudicate, flag_for_rejudging, freeze_panel, save_judging_round, save_marks
from .uploads import record_upload

STORE_FILE = "store file"
SAVE_VIEW = "save view"
SWEEP = "remove unreferenced files"
"""The actions the record names for the writes that are not a workflow of their own."""

_VIEW_WORDS = {"dataset": "data set", "vector_models": "vector models"}


class Session:
    """``Session(workspace, actor)``: every change ``actor`` makes to ``workspace``, checked and recorded."""

    def __init__(self, workspace: Workspace, actor: Actor) -> None:
        if not isinstance(actor, Actor):
            raise NotPermitted("Refused to open a session on the workspace: no person is named for it (every change "
                               "records who made it).")
        self.workspace = workspace
        self.actor = actor

    def __repr__(self) -> str:
        return f"Session({self.workspace!r}, {self.actor.who!r})"

    def may(self, action: str) -> bool:
        """Whether the person may take ``action`` (an `evalcore.access.ACTIONS` key) here, the workspace writable."""
        return self.actor.may(action) and not self.workspace.read_only

    # ------------------------------------------------------------------ files and saved views

    def store_file(self, source: bytes | str | os.PathLike | Any, name: str | None = None) -> StoredFile:
        """Store a file's bytes (content-addressed: the same bytes once); a file new to the workspace is recorded
        as stored by this person. An editor's action."""
        require(self.actor, "upload")

        def change() -> StoredFile:
            stored = self.workspace._put_file(source, name)
            if stored.created:
                append_event_now(self.workspace, self.actor.who, STORE_FILE, f"file {stored.name} #{stored.short}",
                                 f"{stored.size:,} bytes, sha256 {stored.sha256}")
            return stored

        return self.workspace.atomic(change)

    def store_view(self, kind: str, key: str, body: Any) -> None:
        """Keep a saved view (``kind`` "dataset" or "vector_models": which stored files make it up) under ``key``;
        a new one is recorded. An editor's action (every file it names must be stored first)."""
        require(self.actor, "upload")

        def change() -> None:
            new = self.workspace.manifest(kind, key) is None
            self.workspace._put_manifest(kind, key, body)
            if new:
                append_event_now(self.workspace, self.actor.who, SAVE_VIEW, f"{_VIEW_WORDS.get(kind, kind)} {key}")

        self.workspace.atomic(change)

    def record_upload(self, *, labels: LabelSet | None = None, labels_file: StoredFile | None = None,
                      runs: Sequence[tuple[Run, StoredFile, str | None]] = (), documents: StoredFile | None = None,
                      chunk_maps: Sequence[tuple[str, StoredFile]] = (),
                      grades: Sequence[tuple[str, StoredFile]] = ()) -> tuple[LabelVersion | None, list[StoredRun]]:
        """Uploaded labels and runs kept as a label-set version and stored runs; documents, chunk maps and answer-grade
        files logged (`evalcore.workflows.uploads.record_upload`)."""
        return record_upload(self.workspace, actor=self.actor, labels=labels, labels_file=labels_file,
                             runs=runs, documents=documents, chunk_maps=chunk_maps, grades=grades)

    # ------------------------------------------------------------------ evaluations and label sets

    def save_evaluation(self, evaluation: Evaluation, **options: Any) -> SavedRound:
        """Keep ``evaluation`` with its files (`evalcore.workflows.evaluations.save_evaluation`; same options)."""
        return save_evaluation(self.workspace, evaluation, actor=self.actor, **options)

    def reveal_holdout(self, labels: LabelSet, runs: Sequence[tuple[str, str]], *, rule: SplitRule = SplitRule(),
                       label_set: str | None = None, labels_file: StoredFile | None = None) -> Reveal:
        """Unseal the holdout on purpose, recorded (`evalcore.workflows.holdout.reveal_holdout`)."""
        return reveal_holdout(self.workspace, labels, runs, actor=self.actor, rule=rule, label_set=label_set,
                                      labels_file=labels_file)

    def flag_for_rejudging(self, labels: LabelSet, queries: Sequence[str], **options: Any) -> Flagged:
        """Queue queries for blind re-judging (`evalcore.workflows.rejudging.flag_for_rejudging`; same options)."""
        return flag_for_rejudging(self.workspace, labels, queries, actor=self.actor, **options)

    def save_judging_round(self, label_set: str, pool: JudgingPool, marks: Mapping[str, bool], *,
                           base: LabelSet | None = None, base_file: StoredFile | None = None) -> LabelVersion:
        """A blind judging round as a new label-set version (`evalcore.workflows.rejudging.save_judging_round`)."""
        return save_judging_round(self.workspace, label_set, pool, marks, actor=self.actor, base=base,
                                            base_file=base_file)

    def save_marks(self, label_set: str, pool: JudgingPool, marks: Mapping[str, object]) -> int:
        """This person's marks on a pool, kept apart from other judges' (`evalcore.workflows.rejudging.save_marks`)."""
        return save_marks(self.workspace, label_set, pool, marks, actor=self.actor)

    def adjudicate(self, label_set: str, query: str, decisions: Mapping[str, object], *, note: str = "") -> int:
        """Decide pairs the judges disagree on (`evalcore.workflows.rejudging.adjudicate`)."""
        return adjudicate(self.workspace, label_set, query, decisions, actor=self.actor, note=note)

    def freeze_panel(self, label_set: str, *, base: LabelSet | None = None,
                     base_file: StoredFile | None = None) -> LabelVersion:
        """The judges' marks as one new label-set version (`evalcore.workflows.rejudging.freeze_panel`)."""
        return freeze_panel(self.workspace, label_set, actor=self.actor, base=base, base_file=base_file)

    def add_cases(self, label_set: str, source: str | os.PathLike | bytes, *, format: str | None = None,
                  note: str | None = None, name: str | None = None) -> AddedCases:
        """Add or correct labeled cases as a new version (`evalcore.workflows.cases.add_cases`)."""
        return add_cases(self.workspace, label_set, source, actor=self.actor, format=format, note=note,
                               name=name)

    def add_production_miss(self, label_set: str, query: str, query_text: str, doc_ids: Sequence[str], *,
                            known_docs: Collection[str] | None = None, **options: Any) -> AddedCases:
        """One query seen failing in production as a new version (`evalcore.workflows.cases.add_production_miss`)."""
        return add_production_miss(self.workspace, label_set, query, query_text, doc_ids, actor=self.actor,
                                         known_docs=known_docs, **options)

    def edit_entry(self, current: LedgerEntry, *, status: str | None, tags: Sequence[str], note: str) -> list[str]:
        """Change a failure-ledger entry (`evalcore.workflows.ledger.edit_entry`); returns what changed."""
        return edit_entry(self.workspace, current, actor=self.actor, status=status, tags=tags, note=note)

    # ------------------------------------------------------------------ deleting

    def plan_deletion(self, kind: str, key: str | int) -> Deletion:
        """What deleting would remove (nothing is changed; anyone may look)."""
        return self.workspace._delete(kind, key, dry_run=True)

    def delete(self, kind: str, key: str | int) -> Deletion:
        """Delete a label set, run, evaluation or file, recorded (`evalcore.workflows.deletion.delete`)."""
        return delete(self.workspace, kind, key, actor=self.actor)

    def remove_orphans(self, *, older_than: float, dry_run: bool = False) -> Orphans:
        """Remove stored files nothing references (older than ``older_than`` seconds); a sweep that removed
        something is recorded. An owner's action (a dry run only reads, and anyone may run it)."""
        if dry_run:
            return self.workspace._remove_orphans(older_than=older_than, dry_run=True)
        require(self.actor, "delete")

        def change() -> Orphans:
            found = self.workspace._remove_orphans(older_than=older_than)
            if found.files or found.stray_blocks:
                append_event_now(self.workspace, self.actor.who, SWEEP, f"{len(found.files)} files",
                                 f"{found.size:,} bytes; {found.stray_blocks} blocks without a file")
            return found

        return self.workspace.atomic(change)


def append_event_now(workspace: Workspace, who: str, action: str, subject: str, detail: str = "") -> int:
    """Append one event inside the transaction in progress (`Workspace.atomic`), so it is stored with its change."""
    return workspace.write(lambda conn: append_event(conn, who, action, subject, detail))
