"""Record uploads: labels as a label-set version, runs as stored runs, and documents, chunk maps and answer-grade files
as stored files named in the record, the dashboard's side of an upload.

The dashboard stores uploaded bytes before anything parses them and then records what they are here; uploading
is an editor's action, and each recorded upload is logged under the person's name, once (the same file uploaded
again, or a data set naming it registered again, adds nothing to the record).
"""

from __future__ import annotations

from collections.abc import Sequence

from ..access import Actor
from ..readers.labels import LabelSet
from ..readers.runs import Run
from ..store.workspace import LabelVersion, StoredFile, StoredRun, Workspace
from .acting import action

UPLOAD = "upload"
"""The action every recorded upload is logged as."""


def documents_subject(file: StoredFile) -> str:
    """What the record calls an uploaded documents file: ``documents docs.jsonl #3f2a9c0d1e7b``."""
    return f"documents {file.name} #{file.short}"


def chunk_map_subject(run_name: str, file: StoredFile) -> str:
    """What the record calls an uploaded chunk map of a run: ``chunk map of sent3: sent3.chunks.csv #3f2a9c0d1e7b``."""
    return f"chunk map of {run_name}: {file.name} #{file.short}"


def grades_subject(run_name: str, file: StoredFile) -> str:
    """What the record calls an uploaded grade file of a run's answers: ``answer grades of tuned: ragas.csv
    #3f2a9c0d1e7b``."""
    return f"answer grades of {run_name}: {file.name} #{file.short}"


@action(UPLOAD)
def record_upload(workspace: Workspace, *, actor: Actor, labels: LabelSet | None = None,
                  labels_file: StoredFile | None = None,
                  runs: Sequence[tuple[Run, StoredFile, str | None]] = (),
                  documents: StoredFile | None = None,
                  chunk_maps: Sequence[tuple[str, StoredFile]] = (),
                  grades: Sequence[tuple[str, StoredFile]] = ()) -> tuple[LabelVersion | None, list[StoredRun]]:
    """Save ``labels`` (read from ``labels_file``) as a version of their set and each of ``runs`` (run, stored file,
    format read with) as a stored run; log ``documents``, each of ``chunk_maps`` (the run it maps, its stored
    file) and each of ``grades`` (the run whose answers it grades, its stored file) as uploaded. Returns the version
    (None without labels) and the stored runs. An editor's action (`NotPermitted` otherwise, before anything is
    written); what was new is logged."""
    version = workspace._save_labels(labels, file=labels_file) if labels is not None else None
    if version is not None and version.created:
        workspace._record_event(actor.who, UPLOAD, f"label set {version.ref}", labels_file.name if labels_file
                               else "")
    stored = []
    for run, file, format in runs:
        saved = workspace._save_run(run, file=file, format=format)
        stored.append(saved)
        if saved.created:
            workspace._record_event(actor.who, UPLOAD, f"run {saved.ref}", f"model {saved.model}, file {file.name}")
    files = ([(documents_subject(documents), documents)] if documents is not None else []) + [
        (chunk_map_subject(run_name, file), file) for run_name, file in chunk_maps] + [
        (grades_subject(run_name, file), file) for run_name, file in grades]
    if files:
        logged = set(workspace.events(action=UPLOAD)["subject"].astype(str))
        for subject, file in files:
            if subject not in logged:
                workspace._record_event(actor.who, UPLOAD, subject, f"file {file.name}, {file.size:,} bytes, sha256 "
                                                                   f"{file.sha256}")
                logged.add(subject)
    return version, stored
