"""What the dashboard holds in memory: user files by content hash, and data sets that name them.

A data set is a small manifest (which labels file, which runs with which metadata, which
documents file), keyed by a short hash of that manifest. The key is what goes in the URL
(``?data=...``), so a copied link opens the same files on the same server. The bytes live
here, once per content hash, least recently used dropped first when the total passes a
cap; the sample data set can always be rebuilt from disk.

One class owns the storage and a lock; every write goes through `put_file` or `put_dataset`.
No Streamlit import: the app makes one shared instance (`dashboard.data.store`).
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections import OrderedDict
from dataclasses import asdict, dataclass, field, replace

DEFAULT_MAX_BYTES = 2 * 1024**3
"""Bytes of user files kept in memory (2 GiB; ``EVALCORE_DASHBOARD_MAX_MB`` overrides)."""

MAX_DATASETS = 64
"""Data set manifests remembered (each is a few hundred bytes)."""


@dataclass(frozen=True)
class FileRef:
    """One file the user gave, by name and content hash."""

    name: str
    sha256: str
    size: int


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

    @property
    def key(self) -> str:
        manifest = asdict(self)
        manifest.pop("notes")
        text = json.dumps(manifest, sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]

    @property
    def run_names(self) -> list[str]:
        return [r.name for r in self.runs]

    def with_labels(self, ref: FileRef) -> "Dataset":
        return replace(self, labels=ref, sample=False)

    def with_runs(self, runs: tuple[RunSpec, ...]) -> "Dataset":
        return replace(self, runs=runs, sample=False)

    def with_documents(self, ref: FileRef | None) -> "Dataset":
        return replace(self, documents=ref, sample=False)


class DatasetStore:
    """User files (bytes by sha256) and data set manifests (by key), both least-recently-used."""

    def __init__(self, max_bytes: int = DEFAULT_MAX_BYTES, max_datasets: int = MAX_DATASETS) -> None:
        self._lock = threading.Lock()
        self._blobs: OrderedDict[str, bytes] = OrderedDict()
        self._datasets: OrderedDict[str, Dataset] = OrderedDict()
        self._bytes = 0
        self.max_bytes = max_bytes
        self.max_datasets = max_datasets

    def put_file(self, name: str, data: bytes) -> FileRef:
        """Keep ``data`` (once per content) and return a reference to it under ``name``."""
        sha = hashlib.sha256(data).hexdigest()
        with self._lock:
            if sha in self._blobs:
                self._blobs.move_to_end(sha)
            else:
                self._blobs[sha] = bytes(data)
                self._bytes += len(data)
                self._evict()
        return FileRef(name=name, sha256=sha, size=len(data))

    def file(self, ref: FileRef) -> bytes | None:
        """The bytes of ``ref``, or None when they were dropped to stay under the cap."""
        with self._lock:
            data = self._blobs.get(ref.sha256)
            if data is not None:
                self._blobs.move_to_end(ref.sha256)
            return data

    def put_dataset(self, dataset: Dataset) -> str:
        with self._lock:
            key = dataset.key
            self._datasets[key] = dataset
            self._datasets.move_to_end(key)
            while len(self._datasets) > self.max_datasets:
                self._datasets.popitem(last=False)
            return key

    def dataset(self, key: str) -> Dataset | None:
        """The data set ``key`` if its manifest and every file it names are still held."""
        with self._lock:
            dataset = self._datasets.get(key)
            if dataset is None:
                return None
            refs = [dataset.labels, *(r.file for r in dataset.runs)]
            if dataset.documents is not None:
                refs.append(dataset.documents)
            if any(ref.sha256 not in self._blobs for ref in refs):
                return None
            self._datasets.move_to_end(key)
            for ref in refs:
                self._blobs.move_to_end(ref.sha256)
            return dataset

    @property
    def total_bytes(self) -> int:
        return self._bytes

    def _evict(self) -> None:
        # Keep at least the newest file even if it alone passes the cap.
        while self._bytes > self.max_bytes and len(self._blobs) > 1:
            _, data = self._blobs.popitem(last=False)
            self._bytes -= len(data)
