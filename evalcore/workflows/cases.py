"""Add cases: new or corrected labeled queries, kept as a new version of a label set (earlier versions unchanged)."""

from __future__ import annotations

import os
from dataclasses import dataclass

from ..access import Actor, require
from ..readers.labels import read_labels
from ..store.workspace import LabelVersion, StoredFile, Workspace


@dataclass(frozen=True)
class AddedCases:
    """The version the cases made (``created`` False when the set already had every case) and the stored file."""

    version: LabelVersion
    file: StoredFile


def add_cases(workspace: Workspace, label_set: str, source: str | os.PathLike | bytes, *, actor: Actor,
              format: str | None = None, note: str | None = None, name: str | None = None) -> AddedCases:
    """Store the cases file as given, read it as labels, and add its cases to ``label_set`` (an owner's action: a
    new label-set version; logged under ``actor.who`` when a version is made)."""
    require(actor, "manage_label_versions")
    stored = workspace.put_file(source, name=name)
    cases = read_labels(source, format=format)
    version = workspace.add_cases(label_set, cases, note=note, file=stored)
    if version.created:
        workspace.record_event(actor.who, "label-set version", version.ref, f"{version.change} (from {stored.name})")
    return AddedCases(version, stored)
