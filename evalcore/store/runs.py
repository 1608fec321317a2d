"""Stored runs: each run file with the metadata it was read with, grouped into model lines.

A model *line* groups runs over time: the model string unless the user names a line. The same file, name,
metadata and line are stored once; a run given without its file is stored as a Parquet table of query,
doc_id, rank, score, so it can always be read back.
"""

from __future__ import annotations

import io
import os
import sqlite3
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from ..errors import NotInWorkspace, invalid_parameter
from ..readers.chunks import ChunkMap, read_chunks
from ..readers.runs import Run, read_run
from ..readers.sources import Source
from .database import _check_name, _key, _known, _names, _now, _replace_created, _row, _sha256
from .files import FileStore, StoredFile, _require_file, _store_file


@dataclass(frozen=True)
class StoredRun:
    """One run as stored: its file and the metadata it was read with."""

    id: int
    name: str
    model: str
    line: str
    price_per_mtok: float | None
    dims: int | None
    index_bytes: int | None
    file_sha256: str
    file_name: str
    format: str | None
    n_queries: int
    n_rows: int
    uploaded_at: str
    created: bool = False
    chunks_sha256: str | None = None  # the chunk map the run was scored through (a run of chunks), stored
    chunks_name: str | None = None
    chunks_format: str | None = None
    chunks_fingerprint: str | None = None

    @property
    def ref(self) -> str:
        return f"#{self.id} {self.name}"



class RunStore(FileStore):
    """The workspace's stored runs and model lines (part of `Workspace`)."""

    def _save_run(self, run: Run | Any, *, file: StoredFile | None = None, line: str | None = None,
                 format: str | None = None) -> StoredRun:
        """Store one run with its metadata; the same file, name, metadata and line are stored once.

        ``run`` is a `Run` (pass the stored upload it came from as ``file``; without one the run
        is stored as a Parquet table of query, doc_id, rank, score) or anything `read_run` takes
        (a path or bytes is stored first, then parsed with its sidecar). ``line`` names the model
        line (default: the model string).
        """
        if not isinstance(run, Run):
            if isinstance(run, (bytes, bytearray, str, os.PathLike)) or hasattr(run, "read"):
                file = self._put_file(run)
                run = read_run(run if isinstance(run, (str, os.PathLike)) else self.source(file), format=format)
            else:
                run = read_run(run, format=format)
        payload = _RunPayload.build(run, file, line, format)
        run_id, created = self.write(lambda conn: _ensure_run(conn, payload))
        return _replace_created(self.run(run_id), created)

    def run(self, run_id: int) -> StoredRun:
        return self.read(lambda conn: _run_by_id(conn, int(run_id)))

    def change_marker(self) -> tuple:
        """Counts and last ids of stored runs, evaluations and their links: a cheap value (one query) that
        changes whenever any of them is added or deleted, by this process or another, for callers that keep
        what they read from those tables."""
        return self.read(lambda conn: tuple(conn.execute(
            "SELECT (SELECT COUNT(*) FROM runs), (SELECT MAX(id) FROM runs), (SELECT COUNT(*) FROM evaluations), "
            "(SELECT MAX(id) FROM evaluations), (SELECT COUNT(*) FROM evaluation_runs)").fetchone()))

    def runs(self, line: str | None = None) -> pd.DataFrame:
        """Stored runs (of one model line, or all), oldest first."""
        where, params = ("WHERE r.line = ?", (line,)) if line is not None else ("", ())
        return self._frame(f"""
            SELECT r.id, r.name, r.model, r.line, r.price_per_mtok, r.dims, r.index_bytes, r.file_name,
                   r.file_sha256, r.format, r.n_queries, r.uploaded_at,
                   (SELECT COUNT(*) FROM evaluation_runs er WHERE er.run_id = r.id) AS evaluations
            FROM runs r {where} ORDER BY r.id""", params)

    def load_run(self, run_id: int) -> Run:
        """A stored run read back from its stored file, with the stored metadata."""
        record = self.run(run_id)
        return _load_run(record, self.read_file(record.file_sha256))

    def load_chunks(self, run_id: int) -> ChunkMap | None:
        """The chunk map a stored run was scored through, read back from its stored file (None: a run of docs)."""
        record = self.run(run_id)
        if record.chunks_sha256 is None:
            return None
        return read_chunks(Source(record.chunks_name or "chunks", self.read_file(record.chunks_sha256)),
                           format=record.chunks_format, name=record.chunks_name)

    def lines(self) -> pd.DataFrame:
        """One row per model line: its runs, models, first and latest upload, evaluations."""
        return self._frame("""
            SELECT r.line, COUNT(*) AS runs, GROUP_CONCAT(DISTINCT r.model) AS models,
                   MIN(r.uploaded_at) AS first_upload, MAX(r.uploaded_at) AS latest_upload, MAX(r.id) AS latest_run_id,
                   (SELECT COUNT(DISTINCT er.evaluation_id) FROM evaluation_runs er JOIN runs r2 ON r2.id = er.run_id
                     WHERE r2.line = r.line) AS evaluations
            FROM runs r GROUP BY r.line ORDER BY r.line""")


# ----------------------------------------------------------------------------- helpers (inside a transaction)


@dataclass(frozen=True)
class _RunPayload:
    """A run as the workspace stores it: metadata, the file it was read from (or a table of it)."""

    key: str
    name: str
    model: str
    line: str
    price_per_mtok: float | None
    dims: int | None
    index_bytes: int | None
    file_sha256: str
    file_name: str
    format: str | None
    n_queries: int
    n_rows: int
    content: bytes | None
    chunks_sha256: str | None = None
    chunks_name: str | None = None
    chunks_format: str | None = None
    chunks_fingerprint: str | None = None
    chunks_content: bytes | None = None

    @classmethod
    def build(cls, run: Run, file: StoredFile | None, line: str | None, format: str | None,
              chunks: ChunkMap | None = None, chunks_file: StoredFile | None = None,
              chunks_format: str | None = None) -> "_RunPayload":
        if file is None:
            buffer = io.BytesIO()
            table = run.to_frame()
            if table["score"].isna().any():  # a list-ordered run has no scores: rank alone says the order
                table = table.drop(columns="score")
            table.to_parquet(buffer, index=False)
            content = buffer.getvalue()
            sha, file_name, format = _sha256(content), f"{run.name}.parquet", "parquet"
        else:
            if not isinstance(file, StoredFile):
                raise invalid_parameter("file", "a StoredFile (from Session.store_file)", type(file).__name__)
            content, sha, file_name = None, file.sha256, file.name
        line = run.model if line is None else _check_name(line, "line")
        meta = {"name": run.name, "model": run.model, "line": line, "price_per_mtok": run.price_per_mtok,
                "dims": run.dims, "index_bytes": run.index_bytes, "file": sha, "format": format}
        mapped = {}
        if chunks is not None:  # a run of chunks: the map it was scored through is part of what was stored
            if chunks_file is None:
                chunks_content = _chunk_table(chunks)
                mapped = {"chunks_sha256": _sha256(chunks_content), "chunks_format": "parquet",
                          "chunks_content": chunks_content}
            else:
                mapped = {"chunks_sha256": chunks_file.sha256, "chunks_format": chunks_format}
            mapped.update(chunks_name=chunks.name, chunks_fingerprint=chunks.fingerprint)
            meta["chunks"] = mapped["chunks_sha256"]  # only runs of chunks: the keys of the others do not move
        return cls(_key(meta), run.name, run.model, line, run.price_per_mtok, run.dims, run.index_bytes, sha,
                   file_name, format, run.n_queries, run.n_rows, content, **mapped)


def _ensure_run(conn: sqlite3.Connection, payload: _RunPayload) -> tuple[int, bool]:
    found = conn.execute("SELECT id FROM runs WHERE key = ?", (payload.key,)).fetchone()
    if found:
        return found[0], False
    if payload.content is not None:
        _store_file(conn, payload.file_sha256, len(payload.content), payload.file_name, lambda: iter([payload.content]))
    else:
        _require_file(conn, payload.file_sha256)
    if payload.chunks_content is not None:
        _store_file(conn, payload.chunks_sha256, len(payload.chunks_content), f"{payload.chunks_name}.parquet",
                    lambda: iter([payload.chunks_content]))
    elif payload.chunks_sha256 is not None:
        _require_file(conn, payload.chunks_sha256)
    cursor = conn.execute(
        "INSERT INTO runs (key, name, model, line, price_per_mtok, dims, index_bytes, file_sha256, file_name, format, "
        "n_queries, n_rows, uploaded_at, chunks_sha256, chunks_name, chunks_format, chunks_fingerprint) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (payload.key, payload.name, payload.model, payload.line, payload.price_per_mtok, payload.dims,
         payload.index_bytes, payload.file_sha256, payload.file_name, payload.format, payload.n_queries,
         payload.n_rows, _now(), payload.chunks_sha256, payload.chunks_name, payload.chunks_format,
         payload.chunks_fingerprint))
    return cursor.lastrowid, True


def _run_by_id(conn: sqlite3.Connection, run_id: int) -> StoredRun:
    row = _row(conn, "SELECT * FROM runs WHERE id = ?", (run_id,))
    if row is None:
        raise NotInWorkspace(f"No run with id {run_id} in the workspace. "
                             f"{_known('Runs', _names(conn, 'SELECT id FROM runs ORDER BY id'))}")
    return StoredRun(id=row["id"], name=row["name"], model=row["model"], line=row["line"],
                     price_per_mtok=row["price_per_mtok"], dims=row["dims"], index_bytes=row["index_bytes"],
                     file_sha256=row["file_sha256"], file_name=row["file_name"], format=row["format"],
                     n_queries=row["n_queries"], n_rows=row["n_rows"], uploaded_at=row["uploaded_at"],
                     chunks_sha256=row.get("chunks_sha256"), chunks_name=row.get("chunks_name"),
                     chunks_format=row.get("chunks_format"), chunks_fingerprint=row.get("chunks_fingerprint"))


def _chunk_table(chunks: ChunkMap) -> bytes:
    """A chunk map given without its file, as a Parquet table (chunk_id, doc_id, start, end, text) to store."""
    columns = {"chunk_id": chunks.chunk_ids.arrow, "doc_id": chunks.doc_ids.arrow.take(pa.array(chunks.doc_of_chunk))}
    if chunks.start is not None:
        columns.update(start=pa.array(np.where(chunks.start >= 0, chunks.start, None), pa.int64()),
                       end=pa.array(np.where(chunks.end >= 0, chunks.end, None), pa.int64()))
    if chunks.text is not None:
        columns["text"] = chunks.text
    buffer = io.BytesIO()
    pq.write_table(pa.table(columns), buffer)
    return buffer.getvalue()


def _load_run(record: StoredRun, data: bytes) -> Run:
    return read_run(Source(record.file_name, data), format=record.format, name=record.name, model=record.model,
                    price_per_mtok=record.price_per_mtok, dims=record.dims, index_bytes=record.index_bytes,
                    sidecar=False)
