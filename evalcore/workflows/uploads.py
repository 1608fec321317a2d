"""Record uploads: labels as a label-set version and runs as stored runs, the dashboard's side of an upload.

The dashboard stores uploaded bytes before anything parses them and then records what they are here; uploading
is an editor's action, and each recorded upload is logged under the person's name.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..access import Actor, require
from ..readers.labels import LabelSet
from ..readers.runs import Run
from ..store.workspace import LabelVersion, StoredFile, StoredRun, Workspace


def record_upload(workspace: Workspace, *, actor: Actor, labels: LabelSet | None = None,
                  labels_file: StoredFile | None = None,
                  runs: Sequence[tuple[Run, StoredFile, str | None]] = ()) -> tuple[LabelVersion | None,
                                                                                     list[StoredRun]]:
    """Save ``labels`` (read from ``labels_file``) as a version of their set and each of ``runs`` (run, stored file,
    format read with) as a stored run; returns the version (None without labels) and the stored runs. An editor's
    action (`NotPermitted` otherwise, before anything is written); what was new is logged."""
    require(actor, "upload")
    version = workspace.save_labels(labels, file=labels_file) if labels is not None else None
    if version is not None and version.created:
        workspace.record_event(actor.who, "upload", f"label set {version.ref}", labels_file.name if labels_file
                               else "")
    stored = []
    for run, file, format in runs:
        saved = workspace.save_run(run, file=file, format=format)
        stored.append(saved)
        if saved.created:
            workspace.record_event(actor.who, "upload", f"run {saved.ref}", f"model {saved.model}, file {file.name}")
    return version, stored
