"""The Data page's model: the files a data set is made of, read (or why not), the checklist of every file before any
metric (`evalcore.analyses.checklist`), the readers' notes, the run metadata to edit, each run's answer grades (read
and joined to the labeled queries before they are taken: `grades_for`), and the uploads' way in.

Uploads go through `dashboard.loading` (stored in the workspace before anything parses them); a data set made from
them is registered there (its key goes in the URL).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import pandas as pd

from evalcore.analyses.answer_join import join_grades
from evalcore.analyses.checklist import FileEntry, file_checklist, reader_notes
from evalcore.metrics.dataset import Dataset, FileRef, RunSpec, unique_name
from evalcore.readers.grade_parsers import GRADE_FORMATS
from evalcore.warning_log import plural

from dashboard import loading
from dashboard.page_models.answers import TOOLS
from dashboard.loading import (
    CHUNK_FORMAT_CHOICES,
    DOCUMENT_FORMAT_CHOICES,
    QUERY_FORMAT_CHOICES,
    FORMAT_CHOICES,
    WORKSPACE_PROBLEM,
    Loaded,
    chunking_sample,
    chunks,
    documents,
    labels,
    labels_of,
    read_format,
    register,
    run,
    sample_dataset,
    sidecar,
    upload_ref,
)

__all__ = ["CHUNK_FORMAT_CHOICES", "DOCUMENT_FORMAT_CHOICES", "GRADE_FORMAT_CHOICES", "QUERY_FORMAT_CHOICES",
           "FORMAT_CHOICES", "WORKSPACE_PROBLEM", "DataFiles", "GradeUpload", "chunk_map_of", "chunking_sample",
           "chunks", "counts_shown", "documents", "documents_for", "edited_dataset", "files", "grade_format",
           "grades_for", "labels", "labels_of", "queries_text", "read_format", "register", "run", "sample_dataset",
           "sidecar", "unique_name", "upload_ref", "with_metadata", "workspace_opened"]

GRADE_FORMAT_CHOICES = ("detect", *GRADE_FORMATS)
"""The choice beside a grade upload: detect (from the file's content), or the tool that wrote it."""


def grade_format(choice: str | None) -> str | None:
    """The tool a choice beside a grade upload names (None: detect)."""
    return choice if choice in GRADE_FORMATS else None


@dataclass(frozen=True)
class GradeUpload:
    """A grade file read as one run's answers and joined to the data set's scored labeled queries."""

    run: str
    said: str  # one line: the file, its tool, how many rows met a labeled query, the grades it holds
    notes: tuple[str, ...]  # the reader's warnings (missing grades, a byte-order mark removed)


def grades_for(dataset: Dataset, run: str, ref: FileRef, format: str | None = None) -> Loaded:
    """The grade file ``ref`` read as ``run``'s answers (as ``format`` wrote it; None: recognised) and joined to the
    labeled queries the pages score, or the one-line reason it cannot be (a value that is not a grade, a text that
    names two labeled queries, two rows on one query: each naming the file, row and value)."""
    spec = dataset.with_grades(run, ref, format).graded(run)
    read = loading.grades(spec)
    labels, scope = labels_of(dataset), loading.scope(dataset)
    bad = next((found for found in (read, labels, scope) if not found.ok), None)
    if bad is not None:
        return bad
    joined = loading.attempt(join_grades, [read.value], labels.value, scored=list(scope.value.labels.queries),
                             runs=dataset.run_names)
    if not joined.ok:
        return joined
    match = joined.value.matches[0]
    tool = TOOLS.get(read.value.format, read.value.format)
    rows = plural(match.n_rows, "graded row")
    said = (f"{run}: {ref.name} ({tool}) · {match.n_matched:,} of {rows} joined a scored labeled query · grades: "
            + ", ".join(read.value.metrics))
    notes = tuple(w.message.replace("(NaN or empty)", "(empty, or not a number)") for w in read.value.warnings)
    return Loaded(GradeUpload(run, said, notes))  # the reader's words, for a page: no bare "NaN"



def documents_for(dataset: Dataset, ref) -> Loaded:
    """The documents file ``ref`` read, and fit for every chunk map the data set's runs are scored through (each map
    is checked against the documents, and places its chunks in their text), or the first reason it is not."""
    found = documents(ref)
    for spec in dataset.runs:
        if found.ok and spec.chunks is not None:
            mapped = chunks(spec.chunks, ref, spec, dataset.labels)
            found = found if mapped.ok else Loaded(error=mapped.error)
    return found


def chunk_map_of(spec: RunSpec, ref: FileRef, documents_ref: FileRef | None, labels_ref: FileRef | None) -> Loaded:
    """The chunk map ``ref`` read as run ``spec``'s (holding only the chunks that run and the labels name; the run
    read with the map attached, and the labels, are the ones the pages score, so it is read once)."""
    return chunks(ref, documents_ref, replace(spec, chunks=ref), labels_ref)


def queries_text(dataset: Dataset) -> Loaded:
    """The labels with the queries file's text (or why the file cannot give it)."""
    return labels_of(dataset)


def workspace_opened() -> Loaded:
    return loading.workspace()


@dataclass(frozen=True)
class DataFiles:
    """What the page shows about the files loaded."""

    checklist: pd.DataFrame  # one row per file: what it holds and what is odd about it
    checklist_shown: pd.DataFrame  # the same without its notes, each count written out ("1,204"; "–": not counted)
    problem: str | None  # why these files cannot be scored, if they cannot
    notes: list[str]  # the readers' repairs and oddities, one line each
    warnings: pd.DataFrame  # the evaluation's warnings at k
    metadata: pd.DataFrame  # one row per run: model, price, dims, index size (editable)


def _entries(dataset: Dataset) -> tuple[FileEntry, list[FileEntry], FileEntry | None]:
    def entry(name: str, role: str, loaded: Loaded) -> FileEntry:
        return FileEntry(name, role, loaded.value if loaded.ok else None, loaded.error)

    label_entry = entry(dataset.labels.name, "labels", labels(dataset.labels))
    runs = [entry(spec.file.name, f"run {spec.name}", run(spec)) for spec in dataset.runs]
    docs = None
    if dataset.documents is not None:
        docs = entry(dataset.documents.name, "documents", documents(dataset.documents))
    return label_entry, runs, docs


def files(dataset: Dataset, k: int) -> DataFiles:
    """The checklist, notes, warnings and metadata of ``dataset`` at ``k``."""
    label_entry, runs, docs = _entries(dataset)
    deep = loading.evaluation(dataset)
    checklist = file_checklist(label_entry, runs, docs, deep.value if deep.ok else None, k)
    notes = reader_notes([label_entry, *runs, *([docs] if docs is not None else [])])
    return DataFiles(checklist, counts_shown(checklist), deep.error, notes, loading.warnings_frame(dataset, k),
                     run_metadata(dataset))


def counts_shown(checklist: pd.DataFrame) -> pd.DataFrame:
    """The checklist as the page's table: its notes left for the lines below it, every count written with its
    thousands separator, a count that does not apply to the file as "–"."""
    shown = checklist.astype(object)
    for column in [c for c in checklist.columns if c not in ("file", "role", "notes")]:
        shown[column] = [("–" if pd.isna(x) else f"{int(x):,}") for x in checklist[column]]
    return shown.drop(columns=["notes"])


def run_metadata(dataset: Dataset) -> pd.DataFrame:
    """The editable metadata table: one row per run, as the core read it."""
    rows = []
    for spec in dataset.runs:
        loaded = run(spec)
        meta = loaded.value.metadata() if loaded.ok else spec.metadata()
        rows.append({"run": spec.name, "file": spec.file.name, "model": meta.get("model") or "",
                     "price_per_mtok": meta.get("price_per_mtok"), "dims": meta.get("dims"),
                     "index_bytes": meta.get("index_bytes")})
    frame = pd.DataFrame(rows, columns=["run", "file", "model", "price_per_mtok", "dims", "index_bytes"])
    frame["price_per_mtok"] = frame["price_per_mtok"].astype("Float64")
    frame["dims"] = frame["dims"].astype("Int64")
    frame["index_bytes"] = frame["index_bytes"].astype("Int64")
    return frame


def with_metadata(dataset: Dataset, edited: pd.DataFrame) -> Dataset:
    """``dataset`` with the run metadata of the edited table (blank cells keep the file's own)."""
    specs = []
    by_run = {row["run"]: row for row in edited.to_dict(orient="records")}
    for spec in dataset.runs:
        row = by_run.get(spec.name)
        if row is None:
            specs.append(spec)
            continue
        specs.append(replace(spec, model=_cell(row.get("model"), str), price_per_mtok=_cell(row.get("price_per_mtok"), float),
                             dims=_cell(row.get("dims"), int), index_bytes=_cell(row.get("index_bytes"), int)))
    return replace(dataset, runs=tuple(specs), sample=dataset.sample and tuple(specs) == dataset.runs)


def edited_dataset(dataset: Dataset, edited: pd.DataFrame) -> Dataset:
    """``dataset`` as the edited metadata table says: each run with its row's metadata, a run whose row was deleted
    dropped."""
    kept = set(edited["run"])
    changed = with_metadata(dataset, edited)
    return changed.with_runs(tuple(r for r in changed.runs if r.name in kept))


def _cell(value: Any, kind: type) -> Any:
    """An edited cell as a plain Python value (None when blank), so equal edits give equal keys."""
    if value is None or value is pd.NA or (isinstance(value, float) and np.isnan(value)):
        return None
    if kind is str:
        text = str(value).strip()
        return text or None
    try:
        number = float(value)
    except (TypeError, ValueError):
        return str(value)  # the core's reader rejects it with a message naming the field
    return int(number) if kind is int and number.is_integer() else number
