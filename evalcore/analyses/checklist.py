"""The file checklist: one row per input file, before any metric, with what it holds and what is odd about it.

A person uploading labels, runs and documents first wants to know the files were read as meant: how many queries
and docs each holds, the labeled queries a run lacks, run queries nobody labeled, duplicates, rankings shorter
than the depth scored, ties across the cutoffs. Every count comes from the readers' and the evaluation's warnings;
a run's warnings are found by the run they carry (`EvalWarning.run`), never by reading their sentences.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import pandas as pd

from ..metrics.evaluation import Evaluation
from ..warning_log import EvalWarning
from .curves import warnings_at

CHECKLIST_NOTE_COLUMNS = ("file", "role", "notes")


@dataclass(frozen=True)
class FileEntry:
    """One input file as it was read: its name, its role (``labels``, ``run NAME``, ``documents``) and the object
    the reader made of it, or the reader's one-line message when it could not be read."""

    file: str
    role: str
    value: Any = None
    error: str | None = None


def count(warnings: Sequence[EvalWarning], code: str, run: str | None = None) -> int:
    """The total count of the warnings with ``code`` (those about ``run`` only, when given)."""
    return sum(int(w.count) for w in warnings if w.code == code and (run is None or w.run == run))


def file_checklist(labels: FileEntry, runs: Sequence[FileEntry], documents: FileEntry | None,
                   evaluation: Evaluation | None, k: int) -> pd.DataFrame:
    """One row per file: labels, each run, the documents. ``evaluation`` is every run scored to its depth (None
    when the files cannot be scored); the run columns count the warnings ``evaluate --k 1,k`` gives, and rankings
    shorter than that depth."""
    depth = evaluation.depth if evaluation is not None else None
    at_k = warnings_at(evaluation, (1, int(k))) if evaluation is not None else None
    deep = evaluation.all_warnings if evaluation is not None else None
    short = f"rankings shorter than {depth}" if depth is not None else "rankings shorter than the depth scored"
    ties = f"ties across k=1 or k={k}"
    rows = []
    if labels.value is not None:
        ls = labels.value
        relevant = ls.relevant_counts(evaluation.min_grade if evaluation is not None else 1)
        rows.append({"file": labels.file, "role": labels.role, "queries": ls.n_queries, "docs": len(ls.judgments),
                     "labeled queries missing from run": None, "run queries without labels": None,
                     "duplicates": count(ls.warnings, "duplicate_judgment"), short: None, ties: None,
                     "notes": f"{int((relevant == 0).sum())} queries with no relevant doc; fingerprint "
                              f"{ls.fingerprint}"})
    else:
        rows.append({"file": labels.file, "role": labels.role, "notes": labels.error})
    for entry in runs:
        if entry.value is None:
            rows.append({"file": entry.file, "role": entry.role, "notes": entry.error})
            continue
        run = entry.value
        scored = at_k is not None
        rows.append({
            "file": entry.file, "role": entry.role, "queries": run.n_queries, "docs": run.n_rows,
            "labeled queries missing from run": count(at_k, "query_missing_from_run", run.name) if scored else None,
            "run queries without labels": count(at_k, "query_not_in_labels", run.name) if scored else None,
            "duplicates": count(run.warnings, "duplicate_doc"),
            short: count(deep, "short_ranking", run.name) if scored else None,
            ties: count(at_k, "tie_across_cutoff", run.name) if scored else None,
            "notes": f"model {run.model}",
        })
    if documents is not None:
        if documents.value is not None:
            docs = documents.value
            kinds = ", ".join(x for x, ok in (("titles", docs.has_title), ("text", docs.has_text),
                                              ("token counts", docs.has_tokens)) if ok)
            rows.append({"file": documents.file, "role": documents.role, "docs": len(docs),
                         "duplicates": count(docs.warnings, "duplicate_document"), "notes": f"has {kinds}"})
        else:
            rows.append({"file": documents.file, "role": documents.role, "notes": documents.error})
    frame = pd.DataFrame(rows)
    for column in frame.columns:
        if column not in CHECKLIST_NOTE_COLUMNS:
            frame[column] = pd.array(frame[column], dtype="Int64")
    return frame


def reader_notes(entries: Sequence[FileEntry]) -> list[str]:
    """Repairs and oddities the readers reported (BOM removed, CRLF, duplicates), one line each, file by file."""
    return [w.message for entry in entries if entry.value is not None for w in entry.value.warnings]
