"""Reading a data set: the one way both front ends turn a `Dataset` into labels, runs and chunk maps.

The command line builds its data set from its arguments (`from_arguments`: files by path, ``--chunks`` checked
against the runs), the dashboard from uploads (files by content); both then read each part with the functions here,
given ``source_of``, which says where a file's bytes are (`by_path` on the command line; the dashboard's store of
uploads). So a run's metadata, a queries file's text, the ids a chunk map keeps (`ids_to_keep`) and the answer grades
of a run (`read_grade_file`) follow one rule on every surface. Each function reads one part, so the dashboard can keep
each part it has read.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping, Sequence

from ..errors import UsageError
from ..readers.chunks import ChunkMap, ids_to_keep, read_chunks
from ..readers.documents import Documents, read_documents
from ..readers.formats import file_stem
from ..readers.grades import GradeSet, read_grades
from ..readers.labels import LabelSet, check_spans, read_labels
from ..readers.queries import with_query_text
from ..readers.runs import Run, read_run
from ..readers.sources import SourceLike
from .dataset import Dataset, FileRef, GradeSpec, RunSpec

SourceOf = Callable[[FileRef], SourceLike]
"""Where a file's bytes are: a path to read, or the bytes themselves."""


def by_path(ref: FileRef) -> SourceLike:
    """The source of a file given by path (the command line)."""
    if ref.path is None:
        raise ValueError(f"{ref.name}: a file without a path (an upload) needs its store to be read")
    return ref.path


def from_arguments(labels: str | os.PathLike, runs: Sequence[tuple[str | None, str]], *,
                   chunks: Sequence[tuple[str | None, str]] = (), documents: str | os.PathLike | None = None,
                   queries: str | os.PathLike | None = None, labels_format: str | None = None,
                   run_format: str | None = None, documents_format: str | None = None,
                   split: float | None = None) -> Dataset:
    """The data set the command line names: labels, runs as (name or None, path), chunk maps as (run name, path)
    or (None, path) for every run, documents, queries and the split (``--hash-split``'s fraction, None: the labels'
    field). A chunk map named twice for every run, or for a run
    that is not there, is a usage error."""
    specs = [RunSpec(file=FileRef.at(path, run_format), name=name or file_stem(str(path))) for name, path in runs]
    names = [spec.name for spec in specs]
    shared, named = None, {}
    for name, path in chunks:
        if name is None:
            if shared is not None:
                raise UsageError("--chunks FILE (for every run) is given twice; name the run of each: --chunks "
                                 "NAME=FILE.")
            shared = FileRef.at(path)
        elif name not in names:
            raise UsageError(f"--chunks {name}=...: there is no run named {name!r}; runs are: {', '.join(names)}.")
        else:
            named[name] = FileRef.at(path)
    specs = [RunSpec(file=spec.file, name=spec.name, chunks=named.get(spec.name, shared)) for spec in specs]
    return Dataset(labels=FileRef.at(labels, labels_format), runs=tuple(specs),
                   documents=FileRef.at(documents, documents_format) if documents else None,
                   queries=FileRef.at(queries) if queries else None, split=split)


def read_labels_file(ref: FileRef, source_of: SourceOf) -> LabelSet:
    """The labels file as read with the format chosen for it."""
    return read_labels(source_of(ref), format=ref.format)


def labels_of(dataset: Dataset, source_of: SourceOf, labels: LabelSet | None = None) -> LabelSet:
    """The data set's labels (``labels``: already read), each query with its text from the queries file if any."""
    found = labels if labels is not None else read_labels_file(dataset.labels, source_of)
    if dataset.queries is None:
        return found
    return with_query_text(found, source_of(dataset.queries), format=dataset.queries.format)


def read_run_file(spec: RunSpec, source_of: SourceOf) -> Run:
    """One run, named as the data set names it, with the metadata given for it (what is None comes from the file
    or its sidecar)."""
    meta = {key: value for key, value in spec.metadata().items() if value is not None}
    return read_run(source_of(spec.file), format=spec.file.format, name=spec.name, **meta)


def read_documents_file(ref: FileRef, source_of: SourceOf) -> Documents:
    return read_documents(source_of(ref), format=ref.format)


def read_grade_file(spec: GradeSpec, source_of: SourceOf, *, notes: bool = False) -> GradeSet:
    """The answer grades of run ``spec.run``, read as the tool ``spec.format`` wrote them (None: recognised), named
    after the file (``notes``: with each answer and the judge's reasons, as the dashboard shows them)."""
    return read_grades(source_of(spec.file), run=spec.run, format=spec.format, label=file_stem(spec.file.name),
                       notes=notes)


def read_chunk_map(ref: FileRef, source_of: SourceOf, *, ranked: Iterable = (), labels: LabelSet | None = None,
                   documents: Documents | None = None, keep_all: bool = False) -> ChunkMap:
    """A chunk map, keeping only the chunks the runs using it rank (``ranked``: their ``doc_ids``) and the labels
    judge (`ids_to_keep`; ``keep_all``: every chunk), checked against the ``documents`` when given."""
    keep = None if keep_all else ids_to_keep(list(ranked), labels)
    return read_chunks(source_of(ref), format=ref.format, name=file_stem(ref.name), documents=documents, keep=keep)


def chunk_maps_of(dataset: Dataset, runs: Sequence[Run], labels: LabelSet, source_of: SourceOf,
                  documents: Documents | None = None) -> dict[str, ChunkMap]:
    """Each run's chunk map by run name, each file read once for every run that uses it; with the ``documents``, the
    labels' evidence spans are checked against them first (`check_spans`: a span past its document is refused, as a
    chunk past it is)."""
    if documents is not None:
        check_spans(labels, documents)
    specs: Mapping[str, RunSpec] = {spec.name: spec for spec in dataset.runs}
    by_file: dict[FileRef, list[Run]] = {}
    for run in runs:
        spec = specs.get(run.name)
        if spec is not None and spec.chunks is not None:
            by_file.setdefault(spec.chunks, []).append(run)
    read = {ref: read_chunk_map(ref, source_of, ranked=[run.doc_ids for run in using], labels=labels,
                                documents=documents) for ref, using in by_file.items()}
    return {run.name: read[ref] for ref, using in by_file.items() for run in using}
