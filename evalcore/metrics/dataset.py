"""The inputs of an evaluation as one value: a `Dataset` (labels, runs with their metadata and chunk maps,
documents, queries), and the `VectorModel` an index-size study starts from.

A data set carries its tune/holdout split rule (``split``: None, the labels' own ``split`` field; a fraction, the
share of queries put in tune by a hash of the query id, `evalcore.metrics.split.SplitRule`), so every page and
command scores the same side of the same split. A data set may carry answer grades (`GradeSpec`: a grade file and the run whose answers it grades), which
`evalcore.analyses.answers` sets beside the runs' retrieval; a data set without them keeps the key it always had.

Both front ends build one: the command line from its arguments (`evalcore.metrics.dataset_reading.from_arguments`:
files by path), the dashboard from uploads (files by content). Both read it the same way
(`evalcore.metrics.dataset_reading`). A data set's key is a short hash of its manifest (the plain JSON value
`manifest()` returns), so equal contents have equal keys: the key is what a link carries (``?data=KEY``) and what
the workspace keeps its manifest under. Uploaded files are named by content (`FileRef`: name, SHA-256, size, and the
format chosen to read it with); a file given by path on the command line carries its ``path`` too, which no
manifest or key includes.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Sequence

from ..errors import invalid_parameter


def content_key(manifest: object) -> str:
    """12 hex digits of SHA-256 over ``manifest`` as canonical JSON: the key of a data set or a set of models."""
    text = json.dumps(manifest, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]


@dataclass(frozen=True)
class FileRef:
    """One file the user gave, by name and content hash, and the format it is read with (None: detected from its
    name and content; else one of `evalcore.readers.formats.FORMATS`, the format chosen beside its upload)."""

    name: str
    sha256: str
    size: int
    format: str | None = None
    path: str | None = field(default=None, compare=False, repr=False)

    @classmethod
    def at(cls, path: str | os.PathLike, format: str | None = None) -> "FileRef":
        """A file given by path (the command line): read from there, never hashed here, never in a manifest."""
        return cls(name=str(path), sha256="", size=0, format=format, path=str(path))

    def as_read(self, format: str | None) -> "FileRef":
        """This file read with ``format`` (None: detect)."""
        return replace(self, format=format)

    def manifest(self) -> dict:
        """The file as a manifest names it (its content, never a path)."""
        found = {"name": self.name, "sha256": self.sha256, "size": self.size}
        return found if self.format is None else {**found, "format": self.format}


@dataclass(frozen=True)
class RunSpec:
    """A run file and the metadata to read it with (None = what the file or its sidecar says), and the chunk map
    of its chunking when the run ranks chunks."""

    file: FileRef
    name: str
    model: str | None = None
    price_per_mtok: float | None = None
    dims: int | None = None
    index_bytes: int | None = None
    chunks: FileRef | None = None

    def metadata(self) -> dict:
        return {"model": self.model, "price_per_mtok": self.price_per_mtok, "dims": self.dims,
                "index_bytes": self.index_bytes}


@dataclass(frozen=True)
class GradeSpec:
    """An answer-grade file (`evalcore.readers.grades`) and the run whose answers it grades, read as the tool
    ``format`` wrote it (one of `evalcore.readers.grade_parsers.GRADE_FORMATS`; None: recognised from its content)."""

    file: FileRef
    run: str
    format: str | None = None

    def manifest(self) -> dict:
        found = {"file": self.file.manifest(), "run": self.run}
        return found if self.format is None else {**found, "format": self.format}

    @classmethod
    def from_manifest(cls, manifest: dict) -> "GradeSpec":
        return cls(file=FileRef(**manifest["file"]), run=manifest["run"], format=manifest.get("format"))


@dataclass(frozen=True)
class Dataset:
    """Everything a view is computed from. Equal manifests have equal keys."""

    labels: FileRef
    runs: tuple[RunSpec, ...]
    documents: FileRef | None = None
    sample: bool = False
    notes: tuple[str, ...] = field(default=(), compare=False)
    queries: FileRef | None = None
    grades: tuple[GradeSpec, ...] = ()
    split: float | None = None  # None: the labels' split field; else the share of queries hashed into tune

    def __post_init__(self) -> None:
        if self.split is not None and (isinstance(self.split, bool) or not 0 < float(self.split) < 1):
            raise invalid_parameter("tune fraction", "a number between 0 and 1 (exclusive)", self.split)

    @cached_property
    def key(self) -> str:
        """12 hex digits of SHA-256 over the manifest (computed once: every cached view hashes it)."""
        return content_key(self.manifest())

    def manifest(self) -> dict:
        """The data set as plain JSON values (what its key hashes and what is written to disk). A file read with
        the detected format has no ``format`` entry, so data sets made before the format choice keep their keys."""
        def named(ref: FileRef | None) -> dict | None:
            return None if ref is None else ref.manifest()

        runs = []
        for spec in self.runs:
            run = {"file": spec.file.manifest(), "name": spec.name, **spec.metadata()}
            if spec.chunks is not None:  # runs without a chunk map keep the keys they had before maps
                run["chunks"] = spec.chunks.manifest()
            runs.append(run)
        manifest = {"labels": self.labels.manifest(), "runs": runs, "documents": named(self.documents),
                    "sample": self.sample}
        if self.queries is not None:  # data sets made before queries files keep their keys
            manifest["queries"] = self.queries.manifest()
        if self.grades:  # so do data sets without answer grades
            manifest["grades"] = [spec.manifest() for spec in self.grades]
        if self.split is not None:  # and data sets split by the labels' own field
            manifest["split"] = float(self.split)
        return manifest

    @classmethod
    def from_manifest(cls, manifest: dict) -> "Dataset":
        """The data set a stored manifest describes (raises KeyError or TypeError on anything else)."""
        runs = tuple(RunSpec(file=FileRef(**r["file"]), chunks=FileRef(**r["chunks"]) if r.get("chunks") else None,
                             **{k: v for k, v in r.items() if k not in ("file", "chunks")})
                     for r in manifest["runs"])
        documents = FileRef(**manifest["documents"]) if manifest.get("documents") else None
        queries = FileRef(**manifest["queries"]) if manifest.get("queries") else None
        grades = tuple(GradeSpec.from_manifest(g) for g in manifest.get("grades") or ())
        return cls(labels=FileRef(**manifest["labels"]), runs=runs, documents=documents,
                   sample=bool(manifest.get("sample", False)), queries=queries, grades=grades,
                   split=manifest.get("split"))

    @property
    def files(self) -> list[FileRef]:
        refs = [self.labels, *(r.file for r in self.runs), *(r.chunks for r in self.runs if r.chunks is not None)]
        return refs + [ref for ref in (self.documents, self.queries) if ref is not None] + [g.file for g in self.grades]

    @property
    def run_names(self) -> list[str]:
        return [r.name for r in self.runs]

    def with_labels(self, ref: FileRef) -> "Dataset":
        return replace(self, labels=ref, sample=False)

    def with_runs(self, runs: tuple[RunSpec, ...]) -> "Dataset":
        """These runs instead; a run's answer grades stay while its file does (a new file of that run ranks other
        chunks, so the answers graded were not its answers)."""
        files = {r.name: r.file.sha256 for r in runs}
        before = {r.name: r.file.sha256 for r in self.runs}
        grades = tuple(g for g in self.grades if g.run in files and files[g.run] == before.get(g.run))
        return replace(self, runs=runs, grades=grades, sample=False)

    def graded(self, run: str) -> GradeSpec | None:
        """The grade file of ``run``'s answers, if it has one."""
        return next((g for g in self.grades if g.run == run), None)

    def with_grades(self, run: str, ref: FileRef | None, format: str | None = None) -> "Dataset":
        """The data set with ``run``'s answers graded by the file ``ref`` (read as ``format``; None: recognised), in
        place of any grade file it had; ``ref`` None: without grades."""
        others = tuple(g for g in self.grades if g.run != run)
        added = () if ref is None else (GradeSpec(ref, run, format),)
        order = {name: i for i, name in enumerate(self.run_names)}
        grades = tuple(sorted(others + added, key=lambda g: order.get(g.run, len(order))))
        return replace(self, grades=grades, sample=False)

    def with_split(self, fraction: float | None) -> "Dataset":
        """The labels split by a hash of the query id, ``fraction`` of the queries in tune (None: by the labels' own
        ``split`` field, or not at all when they have none)."""
        return replace(self, split=None if fraction is None else float(fraction))  # the same files: still the sample

    def with_documents(self, ref: FileRef | None) -> "Dataset":
        return replace(self, documents=ref, sample=False)

    def with_queries(self, ref: FileRef | None) -> "Dataset":
        return replace(self, queries=ref, sample=False)

    def with_chunks(self, run: str, ref: FileRef | None) -> "Dataset":
        """The data set with run ``run`` scored through the chunk map ``ref`` (None: without one)."""
        return self.with_runs(tuple(replace(r, chunks=ref) if r.name == run else r for r in self.runs))

    def spec_for_upload(self, ref: FileRef, name: str, sidecar: dict | None = None) -> RunSpec:
        """How an uploaded run file is read: the same file under the same name keeps the metadata edited for it
        (model, price, dims), unless a sidecar came along with it; it is read with the format ``ref`` names."""
        existing = next((r for r in self.runs if r.file.sha256 == ref.sha256 and r.name == name), None)
        if existing is not None and sidecar is None:
            return replace(existing, file=ref)
        # A new file under a run's name keeps that run's chunk map (a new retrieval over the same chunking).
        same_name = next((r for r in self.runs if r.name == name), None)
        return RunSpec(file=ref, name=name, chunks=same_name.chunks if same_name else None, **(sidecar or {}))

    def with_uploaded_runs(self, specs: Sequence[RunSpec], sample: "Dataset") -> "Dataset":
        """These runs added to the ones loaded: a run of the same name is replaced where it stands, and the sample's
        runs make way for the first runs of the user's own (comparing them with made-up runs means nothing)."""
        sample_files = {r.file.sha256 for r in sample.runs}
        kept = [] if all(r.file.sha256 in sample_files for r in self.runs) else list(self.runs)
        by_name = {s.name: s for s in specs}
        replaced = [by_name.pop(r.name, r) for r in kept]
        return self.with_runs(tuple(replaced + list(by_name.values())))

    def half_sample(self, sample: "Dataset") -> str | None:
        """"labels" when the user's own labels sit with the sample's runs, "runs" when the user's runs sit with the
        sample's labels (the numbers then mean nothing yet), else None."""
        sample_runs = {r.file.sha256 for r in sample.runs}
        runs_are_sample = bool(self.runs) and {r.file.sha256 for r in self.runs} <= sample_runs
        labels_are_sample = self.labels.sha256 == sample.labels.sha256
        if runs_are_sample and not labels_are_sample:
            return "labels"
        if labels_are_sample and not runs_are_sample:
            return "runs"
        return None

    def fitted_to(self, sample: "Dataset") -> "Dataset":
        """Without the sample's documents once a run is the user's own: the sample's chunk texts and token counts
        say nothing about the user's docs. Runs scored through chunk maps keep them: each map was checked against
        these documents and places its chunks in their text (the chunking sample is such a set)."""
        own_runs = not {r.file.sha256 for r in self.runs} <= {r.file.sha256 for r in sample.runs}
        mapped = any(r.chunks is not None for r in self.runs)
        if self.documents is not None and self.documents == sample.documents and own_runs and not mapped:
            return self.with_documents(None)
        return self


def unique_name(stem: str, taken: Sequence[str]) -> str:
    """``base``, then ``base (2)``, ``base (3)``: run names must be distinct."""
    if stem not in taken:
        return stem
    i = 2
    while f"{stem} ({i})" in taken:
        i += 1
    return f"{stem} ({i})"


@dataclass(frozen=True)
class VectorModel:
    """One model's query and doc vectors (ids files beside .npy matrices), named as its runs will be."""

    name: str
    model: str
    queries: FileRef
    docs: FileRef
    query_ids: FileRef | None = None
    doc_ids: FileRef | None = None
    sample: bool = False

    PARTS = ("queries", "docs", "query_ids", "doc_ids")

    @property
    def key(self) -> tuple:
        return (self.name, self.model, *(None if f is None else f.sha256 for f in self.files_or_none))

    @property
    def files_or_none(self) -> tuple[FileRef | None, ...]:
        return tuple(getattr(self, part) for part in self.PARTS)

    def manifest(self) -> dict:
        return {"name": self.name, "model": self.model,
                **{part: None if ref is None else _as_before(ref) for part, ref in zip(self.PARTS, self.files_or_none)}}

    @classmethod
    def from_manifest(cls, manifest: dict) -> "VectorModel":
        """The model a stored manifest entry describes (raises KeyError or TypeError on anything else)."""
        refs = [None if manifest[part] is None else FileRef(**manifest[part]) for part in cls.PARTS]
        return cls(manifest["name"], manifest["model"], *refs)


def models_manifest(models: Sequence[VectorModel]) -> list[dict]:
    """The uploaded models of ``models`` as one manifest (the sample's are left out: they are always at hand)."""
    return [m.manifest() for m in models if not m.sample]


def _as_before(ref: FileRef) -> dict:
    """A vector file as model manifests have always named it (the format entry kept, even when None)."""
    return {**ref.manifest(), "format": ref.format}
