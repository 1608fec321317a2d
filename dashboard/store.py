"""Where the dashboard keeps user files and data sets: the workspace on disk, a memory cache in front.

A data set is a small manifest (which labels file, which runs with which metadata, which
documents file), keyed by a short hash of that manifest. The key is what goes in the URL
(``?data=...``), so a copied link opens the same files, on this server or after a restart.

Every upload is written to the workspace (`evalcore.store.workspace.Workspace.put_file`: hashed once
there, the same bytes stored once, one transaction) before anything parses it. The bytes also
stay in memory, once per content hash, least recently used dropped first when the total passes
a cap; a file dropped from memory is read back from the workspace. Manifests are written as
small JSON files in ``<workspace>/dashboard/datasets/`` (written to a temporary file, then
renamed: atomic), so ``?data=<key>`` survives a restart. Sample files are held in memory only:
they can always be read again from disk (the ``fallback``); a data set that mixes them with
uploads stores them in the workspace when it is registered.

Without a workspace (it could not be opened) the store keeps everything in memory, as before.
One class owns the storage and a lock; every write goes through `put_file` or `put_dataset`.
No Streamlit import: the app makes one shared instance (`dashboard.data.store`).
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
import threading
from collections import OrderedDict
from dataclasses import asdict, dataclass, field, replace
from functools import cached_property
from pathlib import Path
from typing import Callable, Sequence

from evalcore.store.workspace import NotInWorkspace, StoredFile, Workspace, WorkspaceError

DEFAULT_MAX_BYTES = 2 * 1024**3
"""Bytes of user files kept in memory (2 GiB; ``EVALCORE_DASHBOARD_MAX_MB`` overrides)."""

MAX_DATASETS = 64
"""Data set manifests remembered in memory (each is a few hundred bytes; all are kept on disk)."""

MANIFEST_DIR = Path("dashboard") / "datasets"
"""Where, inside the workspace folder, data set manifests are kept."""


@dataclass(frozen=True)
class FileRef:
    """One file the user gave, by name and content hash, and the format it is read with (None: detected from its
    name and content; else one of `evalcore.readers.sources.FORMATS`, the format chosen beside its upload)."""

    name: str
    sha256: str
    size: int
    format: str | None = None

    def as_read(self, format: str | None) -> "FileRef":
        """This file read with ``format`` (None: detect)."""
        return replace(self, format=format)


@dataclass(frozen=True)
class RunSpec:
    """A run file and the metadata to read it with (None = what the file or its sidecar says)."""

    file: FileRef
    name: str
    model: str | None = None
    price_per_mtok: float | None = None
    dims: int | None = None
    index_bytes: int | None = None

    def metadata(self) -> dict:
        return {"model": self.model, "price_per_mtok": self.price_per_mtok, "dims": self.dims,
                "index_bytes": self.index_bytes}


@dataclass(frozen=True)
class Dataset:
    """Everything a view is computed from. Equal manifests have equal keys."""

    labels: FileRef
    runs: tuple[RunSpec, ...]
    documents: FileRef | None = None
    sample: bool = False
    notes: tuple[str, ...] = field(default=(), compare=False)

    @cached_property
    def key(self) -> str:
        """12 hex digits of SHA-256 over the manifest (computed once: every cached view hashes it)."""
        text = json.dumps(self.manifest(), sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]

    def manifest(self) -> dict:
        """The data set as plain JSON values (what its key hashes and what is written to disk). A file read with
        the detected format has no ``format`` entry, so data sets made before the format choice keep their keys."""
        manifest = asdict(self)
        manifest.pop("notes")
        for ref in [manifest["labels"], manifest["documents"], *(r["file"] for r in manifest["runs"])]:
            if ref is not None and ref.get("format") is None:
                ref.pop("format", None)
        return manifest

    @classmethod
    def from_manifest(cls, manifest: dict) -> "Dataset":
        runs = tuple(RunSpec(file=FileRef(**r["file"]), **{k: v for k, v in r.items() if k != "file"})
                     for r in manifest["runs"])
        documents = FileRef(**manifest["documents"]) if manifest.get("documents") else None
        return cls(labels=FileRef(**manifest["labels"]), runs=runs, documents=documents,
                   sample=bool(manifest.get("sample", False)))

    @property
    def files(self) -> list[FileRef]:
        refs = [self.labels, *(r.file for r in self.runs)]
        return refs + ([self.documents] if self.documents is not None else [])

    @property
    def run_names(self) -> list[str]:
        return [r.name for r in self.runs]

    def with_labels(self, ref: FileRef) -> "Dataset":
        return replace(self, labels=ref, sample=False)

    def with_runs(self, runs: tuple[RunSpec, ...]) -> "Dataset":
        return replace(self, runs=runs, sample=False)

    def with_documents(self, ref: FileRef | None) -> "Dataset":
        return replace(self, documents=ref, sample=False)

    def spec_for_upload(self, ref: FileRef, name: str, sidecar: dict | None = None) -> RunSpec:
        """How an uploaded run file is read: the same file under the same name keeps the metadata edited for it
        (model, price, dims), unless a sidecar came along with it; it is read with the format ``ref`` names."""
        existing = next((r for r in self.runs if r.file.sha256 == ref.sha256 and r.name == name), None)
        if existing is not None and sidecar is None:
            return replace(existing, file=ref)
        return RunSpec(file=ref, name=name, **(sidecar or {}))

    def with_uploaded_runs(self, specs: Sequence[RunSpec], sample: "Dataset") -> "Dataset":
        """These runs added to the ones loaded: a run of the same name is replaced, and the sample's runs make way
        for the first runs of the user's own (comparing them with made-up runs means nothing)."""
        sample_files = {r.file.sha256 for r in sample.runs}
        kept = [] if all(r.file.sha256 in sample_files for r in self.runs) else list(self.runs)
        names = {s.name for s in specs}
        return self.with_runs(tuple([r for r in kept if r.name not in names] + list(specs)))

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
        say nothing about the user's docs."""
        own_runs = not {r.file.sha256 for r in self.runs} <= {r.file.sha256 for r in sample.runs}
        if self.documents is not None and self.documents == sample.documents and own_runs:
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


class DatasetStore:
    """User files (bytes by sha256) and data set manifests (by key): kept in ``workspace``, cached in memory.

    ``fallback(ref)`` returns the bytes of a file this store never kept (the sample files, from disk).
    """

    def __init__(self, workspace: Workspace | None = None, max_bytes: int = DEFAULT_MAX_BYTES,
                 max_datasets: int = MAX_DATASETS, fallback: Callable[[FileRef], bytes | None] | None = None) -> None:
        self.workspace = workspace
        self.fallback = fallback
        self._lock = threading.Lock()
        self._blobs: OrderedDict[str, bytes] = OrderedDict()
        self._datasets: OrderedDict[str, Dataset] = OrderedDict()
        self._stored: set[str] = set()  # hashes known to be in the workspace
        self._bytes = 0
        self.max_bytes = max_bytes
        self.max_datasets = max_datasets

    # ------------------------------------------------------------------ files

    def put_file(self, name: str, data: bytes, *, keep: bool = True) -> FileRef:
        """Store ``data`` in the workspace (``keep``, the default; once per content), hold it in memory,
        and return a reference to it under ``name``. The workspace hashes it; nothing hashes it twice."""
        if keep and self.workspace is not None:
            sha = self.workspace.put_file(data, name).sha256
            with self._lock:
                self._stored.add(sha)
        else:
            sha = hashlib.sha256(data).hexdigest()
        self._hold(sha, data)
        return FileRef(name=name, sha256=sha, size=len(data))

    def _hold(self, sha: str, data: bytes) -> None:
        with self._lock:
            if sha in self._blobs:
                self._blobs.move_to_end(sha)
            else:
                self._blobs[sha] = data
                self._bytes += len(data)
                self._evict()

    def has(self, ref: FileRef) -> bool:
        """Whether the bytes of ``ref`` are in memory or known to be in the workspace (no disk read)."""
        with self._lock:
            return ref.sha256 in self._blobs or ref.sha256 in self._stored

    def file(self, ref: FileRef) -> bytes | None:
        """The bytes of ``ref``: from memory, else the workspace, else the fallback; None when nowhere."""
        with self._lock:
            data = self._blobs.get(ref.sha256)
            if data is not None:
                self._blobs.move_to_end(ref.sha256)
                return data
        data = self._from_workspace(ref.sha256)
        if data is None and self.fallback is not None:
            data = self.fallback(ref)
            if data is not None and hashlib.sha256(data).hexdigest() != ref.sha256:
                data = None
        if data is not None:
            self._hold(ref.sha256, data)
        return data

    def _from_workspace(self, sha: str) -> bytes | None:
        if self.workspace is None:
            return None
        try:
            data = self.workspace.read_file(sha)
        except NotInWorkspace:
            with self._lock:
                self._stored.discard(sha)
            return None
        with self._lock:
            self._stored.add(sha)
        return data

    def in_workspace(self, ref: FileRef) -> bool:
        if self.workspace is None:
            return False
        with self._lock:
            if ref.sha256 in self._stored:
                return True
        try:
            self.workspace.file(ref.sha256)
        except NotInWorkspace:
            return False
        with self._lock:
            self._stored.add(ref.sha256)
        return True

    def stored_file(self, ref: FileRef) -> StoredFile:
        """``ref`` as a workspace file record, storing its bytes there first if they are only in memory
        (or on disk, for a sample file). Raises `NotInWorkspace` when the bytes are nowhere."""
        if self.workspace is None:
            raise NotInWorkspace("The dashboard has no workspace to store files in.")
        if self.in_workspace(ref):
            return replace(self.workspace.file(ref.sha256), name=ref.name)
        data = self.file(ref)
        if data is None:
            raise NotInWorkspace(f"The file {ref.name} is no longer held; upload it again.")
        stored = self.workspace.put_file(data, ref.name)
        with self._lock:
            self._stored.add(stored.sha256)
        return replace(stored, name=ref.name)

    def forget_stored(self) -> None:
        """Forget which files the workspace holds (after a deletion; memory copies stay usable)."""
        with self._lock:
            self._stored.clear()

    # ------------------------------------------------------------------ data sets

    def put_dataset(self, dataset: Dataset) -> str:
        """Remember ``dataset`` under its key: in memory and, with a workspace, as a manifest on disk
        (its files stored in the workspace first, so the manifest never names a file it lacks).
        Raises `WorkspaceError` when the workspace cannot take it (it is still held in memory)."""
        key = dataset.key
        with self._lock:
            self._datasets[key] = dataset
            self._datasets.move_to_end(key)
            while len(self._datasets) > self.max_datasets:
                self._datasets.popitem(last=False)
        if self.workspace is not None and not dataset.sample:
            for ref in dataset.files:
                self.stored_file(ref)
            try:
                self._write_manifest(key, dataset.manifest())
            except OSError as exc:
                raise WorkspaceError(f"Cannot write the data set manifest in {self.workspace.location}: "
                                     f"{exc.strerror}.") from None
        return key

    def dataset(self, key: str) -> Dataset | None:
        """The data set ``key`` if its manifest is known and every file it names can still be read."""
        with self._lock:
            dataset = self._datasets.get(key)
        if dataset is None:
            dataset = self._read_manifest(key)
            if dataset is None:
                return None
        if not all(self.has(ref) or self.in_workspace(ref) or self.file(ref) is not None for ref in dataset.files):
            return None
        with self._lock:
            self._datasets[key] = dataset
            self._datasets.move_to_end(key)
            for ref in dataset.files:
                if ref.sha256 in self._blobs:
                    self._blobs.move_to_end(ref.sha256)
            while len(self._datasets) > self.max_datasets:
                self._datasets.popitem(last=False)
        return dataset

    def _manifest_path(self, key: str) -> Path | None:
        if self.workspace is None or not key.isalnum() or len(key) > 64:
            return None
        return self.workspace.location / MANIFEST_DIR / f"{key}.json"

    def _write_manifest(self, key: str, manifest: dict) -> None:
        path = self._manifest_path(key)
        if path is None or path.is_file():
            return
        path.parent.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{key}.", suffix=".tmp")
        try:
            with os.fdopen(handle, "w", encoding="utf-8") as out:
                json.dump(manifest, out, sort_keys=True, indent=1)
                out.flush()
                os.fsync(out.fileno())
            os.replace(temporary, path)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise

    def _read_manifest(self, key: str) -> Dataset | None:
        path = self._manifest_path(key)
        if path is None or not path.is_file():
            return None
        try:
            dataset = Dataset.from_manifest(json.loads(path.read_text(encoding="utf-8")))
        except (OSError, ValueError, TypeError, KeyError):
            return None
        return dataset if dataset.key == key else None

    # ------------------------------------------------------------------ memory

    @property
    def total_bytes(self) -> int:
        return self._bytes

    def _evict(self) -> None:
        # Keep at least the newest file even if it alone passes the cap.
        while self._bytes > self.max_bytes and len(self._blobs) > 1:
            _, data = self._blobs.popitem(last=False)
            self._bytes -= len(data)
