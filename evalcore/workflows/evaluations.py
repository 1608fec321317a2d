"""Save an evaluation: the numbers, the files they came from, and each run's model line for the failure ledger.

Numbers on one side of a tune/holdout split are saved under that side's label-set name (``NAME:tune``), with
the split named in the evaluation's note, whichever front end saves them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

from ..access import Actor
from ..metrics.evaluation import Evaluation
from ..metrics.split import side_name
from ..store.ledger import LineChanges
from ..store.workspace import SavedEvaluation, StoredFile, Workspace
from .acting import action


@dataclass(frozen=True)
class SavedRound:
    """What saving did: the saved evaluation (``created`` False when an identical one was already there) and, per
    saved run, what changed on its model line since the line's previous run."""

    saved: SavedEvaluation
    changes: tuple[LineChanges, ...]


@action("save_evaluation")
def save_evaluation(workspace: Workspace, evaluation: Evaluation, *, actor: Actor, k: int | None = None,
                    labels_file: StoredFile | None = None, run_files: Mapping[str, StoredFile] | None = None,
                    lines: Mapping[str, str] | None = None, label_set: str | None = None,
                    run_format: str | Mapping[str, str | None] | None = None,
                    chunk_files: Mapping[str, StoredFile] | None = None,
                    chunks_format: Mapping[str, str | None] | None = None) -> SavedRound:
    """Save ``evaluation`` at ``k`` (default its largest k) with the stored files it was read from.

    ``lines`` maps run names to model lines (default: each run's own name); ``run_format`` is the format override
    the run files were read with: one for all, or one per run name; ``chunk_files`` and ``chunks_format`` the stored
    chunk maps of runs of chunks, by run name. With a split, ``label_set`` (default
    the labels' own name) becomes the side's name and the note says which queries of which full set were scored.
    ``actor`` must be an editor or owner (`NotPermitted` otherwise, before anything is stored); a new save is logged
    under their name.
    """
    split = evaluation.split if evaluation.split is not None and evaluation.split.split is not None else None
    note = None
    if split is not None:
        label_set = side_name(label_set, split.split, split.rule) if label_set else None
        note = (f"{split.headline}: {split.n_queries:,} of {len(split.full_queries):,} queries of "
                f"{split.full_name}#{split.full_fingerprint} ({split.rule})")
    saved = workspace._save_evaluation(evaluation, k=k, labels_file=labels_file, run_files=run_files,
                                      lines={run: line for run, line in (lines or {}).items() if line},
                                      label_set=label_set, run_format=run_format, note=note,
                                      chunk_files=chunk_files, chunks_format=chunks_format)
    if saved.created:
        workspace._record_event(actor.who, "save evaluation", f"evaluation {saved.id}", saved.describe())
    changes = tuple(workspace.archive.changes(run.line, run_id=run.id, labels=saved.labels.name, k=saved.k)
                    for run in saved.runs)
    return SavedRound(saved, changes)
