"""Reveal the holdout: the one way holdout numbers are unsealed, recorded in the workspace and counted."""

from __future__ import annotations

from typing import Sequence

from ..access import Actor
from ..metrics.split import Reveal, SplitRule
from ..readers.labels import LabelSet
from ..store.workspace import StoredFile, Workspace
from .acting import action


@action("reveal_holdout")
def reveal_holdout(workspace: Workspace, labels: LabelSet, runs: Sequence[tuple[str, str]], *, actor: Actor,
                   rule: SplitRule = SplitRule(), label_set: str | None = None,
                   labels_file: StoredFile | None = None) -> Reveal:
    """Record a look at the holdout of ``labels`` (the whole set, both sides) with the ``runs`` (name, model) shown.

    The labels are saved as a version of ``label_set`` (default their own name) first, with the stored file they
    were read from when given, so the reveal names the exact version and file. Only an owner may reveal
    (`NotPermitted` otherwise, before anything is stored); the reveal records ``actor.who``.
    """
    return workspace._record_reveal(labels, rule=rule.key, runs=list(runs), name=label_set, who=actor.who,
                                   file=labels_file)  # the reveal and its event: one transaction
