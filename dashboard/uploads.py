"""The dashboard's user files: their bytes held in memory in front of the workspace, and the data sets they make.

Every upload is written to the workspace through the uploader's session (`evalcore.workflows.Session.store_file`:
their role checked, hashed once there, the same bytes stored once, stored and recorded in one transaction) before
anything parses it. The bytes also stay in memory, once per content hash,
least recently used dropped first when the total passes a cap; a file dropped from memory is read back from the
workspace. A data set (`evalcore.metrics.dataset.Dataset`) is kept as a manifest in the workspace's database
(`Session.store_view`), so ``?data=<key>`` survives a restart. Sample files are held in memory only: they can
always be read again from disk (the ``fallback``); a data set that mixes them with uploads stores them in the
workspace when it is registered.

Without a workspace (it could not be opened) everything is kept in memory, until the server restarts. One class owns
the memory and a lock; nothing here writes a file of its own, and every write to the workspace goes through the
``session`` the caller passes (without one, or when the person may not upload, bytes are only held in memory). No
Streamlit import: the app makes one shared instance
(`dashboard.loading.uploads`).
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from dataclasses import replace
from typing import Callable

from evalcore.metrics.dataset import Dataset, FileRef
from evalcore.store.workspace import NotInWorkspace, StoredFile, Workspace, WorkspaceError
from evalcore.workflows.session import Session

DEFAULT_MAX_BYTES = 2 * 1024**3
"""Bytes of user files kept in memory (2 GiB; ``EVALCORE_DASHBOARD_MAX_MB`` overrides)."""

MAX_DATASETS = 64
"""Data set manifests remembered in memory (each is a few hundred bytes; all are kept in the workspace)."""


class Uploads:
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

    def add_file(self, name: str, data: bytes, *, session: Session | None = None) -> FileRef:
        """Hold ``data`` in memory and return a reference to it under ``name``; with a ``session`` whose person may
        upload, store it in the workspace too (once per content: the workspace hashes it, nothing hashes it
        twice)."""
        if session is not None and self.workspace is not None and session.may("upload"):
            sha = session.store_file(data, name).sha256
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

    def stored_file(self, ref: FileRef, session: Session) -> StoredFile:
        """``ref`` as a workspace file record, storing its bytes there first (through ``session``) if they are only
        in memory (or on disk, for a sample file). Raises `NotInWorkspace` when the bytes are nowhere,
        `NotPermitted` when they must be stored and the person may not upload."""
        if self.workspace is None:
            raise NotInWorkspace("The dashboard has no workspace to store files in.")
        if self.in_workspace(ref):
            try:
                return replace(self.workspace.file(ref.sha256), name=ref.name)
            except NotInWorkspace:  # stored by a change that was then rolled back (refused, or failed later)
                with self._lock:
                    self._stored.discard(ref.sha256)
        data = self.file(ref)
        if data is None:
            raise NotInWorkspace(f"The file {ref.name} is no longer held; upload it again.")
        stored = session.store_file(data, ref.name)
        with self._lock:
            self._stored.add(stored.sha256)
        return replace(stored, name=ref.name)

    def forget_stored(self) -> None:
        """Forget which files the workspace holds (after a deletion; memory copies stay usable)."""
        with self._lock:
            self._stored.clear()

    # ------------------------------------------------------------------ data sets

    def put_dataset(self, dataset: Dataset, session: Session | None = None) -> str:
        """Remember ``dataset`` under its key: in memory and, with a ``session`` whose person may upload, as a
        manifest in the workspace (its files stored there first, so the manifest never names a file it lacks; all
        in one transaction). Raises `WorkspaceError` when the workspace cannot take it (it is still held in
        memory)."""
        key = dataset.key
        self._remember(key, dataset)
        if session is not None and self.workspace is not None and not dataset.sample and session.may("upload"):
            def keep() -> None:
                for ref in dataset.files:
                    self.stored_file(ref, session)
                session.store_view("dataset", key, dataset.manifest())

            session.workspace.atomic(keep)
        return key

    def dataset(self, key: str) -> Dataset | None:
        """The data set ``key`` if its manifest is known and every file it names can still be read."""
        with self._lock:
            dataset = self._datasets.get(key)
        if dataset is None:
            dataset = self._stored_dataset(key)
            if dataset is None:
                return None
        if not all(self.has(ref) or self.in_workspace(ref) or self.file(ref) is not None for ref in dataset.files):
            return None
        self._remember(key, dataset)
        with self._lock:
            for ref in dataset.files:
                if ref.sha256 in self._blobs:
                    self._blobs.move_to_end(ref.sha256)
        return dataset

    def latest_dataset(self, sample: Dataset) -> Dataset | None:
        """The data set loaded last with labels and runs of its own (the team's current data: not half ``sample``),
        from the workspace's manifests, else from this server's memory; None while only the sample was shown."""
        if self.workspace is not None:
            try:
                keys = self.workspace.manifest_keys("dataset")
            except WorkspaceError:
                keys = []
        else:
            with self._lock:
                keys = list(reversed(self._datasets))
        for key in keys:
            dataset = self.dataset(key)
            if dataset is not None and not dataset.sample and dataset.runs and dataset.half_sample(sample) is None:
                return dataset
        return None

    def _remember(self, key: str, dataset: Dataset) -> None:
        with self._lock:
            self._datasets[key] = dataset
            self._datasets.move_to_end(key)
            while len(self._datasets) > self.max_datasets:
                self._datasets.popitem(last=False)

    def _stored_dataset(self, key: str) -> Dataset | None:
        if self.workspace is None or not key.isalnum() or len(key) > 64:
            return None
        try:
            dataset = Dataset.from_manifest(self.workspace.manifest("dataset", key))
        except (WorkspaceError, TypeError, KeyError, AttributeError):
            return None
        return dataset if dataset.key == key else None

    # ------------------------------------------------------------------ memory

    def _evict(self) -> None:
        # Keep at least the newest file even if it alone passes the cap.
        while self._bytes > self.max_bytes and len(self._blobs) > 1:
            _, data = self._blobs.popitem(last=False)
            self._bytes -= len(data)
