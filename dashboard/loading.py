"""Loading: files in, `evalcore` objects out, each read once per content.

This module opens the workspace and the uploads in front of it (`dashboard.uploads`), resolves data sets (the
sample, uploads, links), parses the files, and scores every run to `DEPTH` (the labels every page scores: `scope`).
What each page derives from that evaluation is in its page model (`dashboard.page_models`), and the results several
pages share, computed in the background, in `dashboard.computed`. Writes go through `dashboard.saved`
(`evalcore.workflows`).
Every cached function is keyed on content hashes (a `FileRef` by its sha256, a `Dataset` by
the hash of its manifest), so changing k, the page or a filter never re-reads a file, and
the same upload in two sessions is read once.

Core objects (labels, runs, evaluations) are cached with ``st.cache_resource``: they are large
(a 100 MB run is ~2 M rows of arrays) and never modified after they are built, so every
session shares one copy instead of unpickling a copy on every rerun. Tables a page might
reshape (summaries, failure lists) are cached with ``st.cache_data``, which hands each caller
its own copy.

Errors: the core raises `EvalcoreError` with a message naming the file, line and text. Here
(`attempt`) they become a `Loaded` with ``error`` set, which pages show beside the upload; nothing
already loaded is replaced by a file that failed.
"""

from __future__ import annotations

import gc
import os
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import pandas as pd
import streamlit as st

from evalcore.analyses.curves import warnings_at
from evalcore.errors import EvalcoreError, InputError
from evalcore.metrics.split import SplitRule, scoring_labels
from evalcore.readers.runs import read_sidecar, sidecar_path
from evalcore.readers.formats import FORMATS, file_stem, formats_for
from evalcore.readers.sources import Source, open_source
from evalcore.metrics.dataset import Dataset, FileRef, GradeSpec, RunSpec
from evalcore.metrics.dataset_reading import labels_of as dataset_labels
from evalcore.readers.labels import check_spans
from evalcore.metrics.dataset_reading import (
    read_chunk_map,
    read_documents_file,
    read_grade_file,
    read_labels_file,
    read_run_file,
)
from evalcore.store.workspace import Workspace, default_location
from evalcore.workflows.session import Session

from dashboard import access_ui, jobs, state
from dashboard.uploads import DEFAULT_MAX_BYTES, Uploads

ROOT = Path(__file__).resolve().parents[1]
SAMPLE_DIR = Path(os.environ.get("EVALCORE_SAMPLE_DIR", ROOT / "sample_data"))
SAMPLE_FILES = {"labels": "labels.tsv", "runs": ("base.trec", "tuned.trec", "tuned-256d.trec"),
                "documents": "docs.jsonl",
                "grades": {"base": "answers/base.deepeval.json", "tuned": "answers/tuned.deepeval.json"}}
"""The sample: labels, three runs (each with its sidecar), documents, and an LLM judge's grades of the answers written
from base's and tuned's top chunks (DeepEval's file; `scripts/sample_answers.py` says how they were made)."""
CHUNKING_SAMPLE = {"labels": "chunking/labels.tsv", "runs": ("sent1", "sent3", "char400"), "documents": "docs.jsonl"}
"""The sample's documents chunked three ways (one sentence, three sentences, 400-character windows), a run and a
chunk map per chunking (``chunking/NAME.trec``, ``chunking/NAME.chunks.csv``), labels with evidence spans."""

DEPTH = 100
"""Ranks the dashboard scores every run to: k can be chosen from 1 to this."""

DEFAULT_K = 10

HASH = {Dataset: lambda d: d.key, FileRef: lambda f: (f.name, f.sha256, f.format), RunSpec: repr,
        GradeSpec: lambda g: (g.file.name, g.file.sha256, g.run, g.format)}
"""How cached functions hash the data set objects: by content (a data set by its manifest's key; a file by name,
content and the format it is read with, so a file read as CSV and the same file detected are two results)."""


@dataclass(frozen=True)
class Loaded:
    """A core object, or the one-line message that explains why there is none."""

    value: Any = None
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None


# ----------------------------------------------------------------------------- files and data sets


def workspace_location() -> Path:
    """The workspace folder: the signed-in person's team workspace when the server's ``[evalcore]`` roles name one
    (`dashboard.access_ui.workspace_folder`: teams sharing a server never see each other's data), else
    ``EVALCORE_WORKSPACE``, else the per-user default (read on every call, so a test that sets the variable gets
    its own workspace)."""
    return access_ui.workspace_folder() or default_location()


SERVER_WORKSPACE = "the server's workspace"
"""What the browser calls the workspace folder: its path is the server's business (the command line and the server
log name it), never shown to a visitor."""


def unnamed(message: str) -> str:
    """``message`` with the workspace folder's path (and any path inside it) said as "the server's workspace".

    The core's messages name the folder (``The workspace /srv/ws is busy``, ``No label set named 'x' in the
    workspace /srv/ws``); every message the dashboard shows passes through here (`attempt`, `layout.error`)."""
    location = workspace_location()
    spellings = sorted({str(location), str(location.expanduser()), str(location.expanduser().resolve())},
                       key=len, reverse=True)
    for spelling in spellings:
        if spelling != str(location.expanduser().resolve()) and not spelling.startswith("/"):
            continue  # a relative spelling ("data") would match inside words; its absolute form is enough
        # Whole paths only: not inside a longer name (/srv/ws2), not a word that merely contains it.
        path = r"(?<![\w./-])" + re.escape(spelling) + r"(?:/[^\s:;,'\"]*[^\s:;,'\".])?(?![\w-])"
        message = re.sub(r"\b([Tt])he workspace (file |folder )?" + path,
                         lambda m: f"{m[1]}he server's workspace" + (f" {m[2].strip()}" if m[2] else ""), message)
        message = re.sub(r"\bWorkspace " + path, "The server's workspace", message)
        message = re.sub(r"\bworkspace " + path, SERVER_WORKSPACE, message)
        message = re.sub(path, SERVER_WORKSPACE, message)
    return message


@st.cache_resource(show_spinner=False)
def _open_workspace(location: str) -> Loaded:
    print(f"evalcore dashboard: the workspace is {location}", file=sys.stderr, flush=True)  # the server log says where
    try:
        return Loaded(Workspace(location))
    except EvalcoreError as exc:
        return Loaded(error=unnamed(f"{exc} Uploads are kept in memory only until the server restarts."))


def workspace() -> Loaded:
    """The one shared `Workspace` (or why there is none): every session writes through the same object."""
    return _open_workspace(str(workspace_location()))


@st.cache_resource(show_spinner=False)
def _uploads(location: str) -> Uploads:
    limit = os.environ.get("EVALCORE_DASHBOARD_MAX_MB")
    opened = _open_workspace(location)
    return Uploads(opened.value if opened.ok else None,
                   max_bytes=int(limit) * 1024**2 if limit else DEFAULT_MAX_BYTES, fallback=_disk_bytes)


def uploads() -> Uploads:
    """The one holder of user files and data set manifests that every session shares (over the workspace)."""
    return _uploads(str(workspace_location()))


def session() -> Session | None:
    """The door through which the person using this page changes the workspace (`evalcore.workflows.Session`: their
    role checked, every change recorded under their name); None when there is no workspace."""
    opened = workspace()
    return Session(opened.value, access_ui.actor()) if opened.ok else None


def _disk_path(ref: FileRef) -> Path | None:
    """Sample files can always be read again from disk."""
    path = SAMPLE_DIR / ref.name
    return path if path.is_file() else None


def _disk_bytes(ref: FileRef) -> bytes | None:
    path = _disk_path(ref)
    return path.read_bytes() if path is not None else None


def file_bytes(ref: FileRef) -> bytes | None:
    return uploads().file(ref)


@st.cache_resource(show_spinner=False)
def _sample_dataset(location: str) -> Dataset:
    def put(name: str) -> FileRef:
        return _uploads(location).add_file(name, (SAMPLE_DIR / name).read_bytes())

    runs = []
    for name in SAMPLE_FILES["runs"]:
        meta = {}
        beside = sidecar_path(SAMPLE_DIR / name)
        if beside.is_file():
            meta = read_sidecar(beside)
        runs.append(RunSpec(file=put(name), name=file_stem(name), **meta))
    grades = tuple(GradeSpec(put(path), run) for run, path in SAMPLE_FILES["grades"].items()
                   if (SAMPLE_DIR / path).is_file())
    dataset = Dataset(labels=put(SAMPLE_FILES["labels"]), runs=tuple(runs),
                      documents=put(SAMPLE_FILES["documents"]), sample=True, grades=grades)
    _uploads(location).put_dataset(dataset)
    return dataset


def sample_dataset() -> Dataset:
    """The sample data set from ``sample_data/``: labels, three runs with their sidecars, documents, and the answer
    grades of two of the runs (when the sample folder has them).

    Held in memory only (it can always be read again from disk): showing it writes nothing."""
    return _sample_dataset(str(workspace_location()))


@st.cache_resource(show_spinner=False)
def _chunking_sample(location: str) -> Dataset:
    def put(name: str) -> FileRef:
        return _uploads(location).add_file(name, (SAMPLE_DIR / name).read_bytes())

    runs = tuple(RunSpec(file=put(f"chunking/{name}.trec"), name=name, chunks=put(f"chunking/{name}.chunks.csv"))
                 for name in CHUNKING_SAMPLE["runs"])
    dataset = Dataset(labels=put(CHUNKING_SAMPLE["labels"]), runs=runs, documents=put(CHUNKING_SAMPLE["documents"]),
                      sample=True)
    _uploads(location).put_dataset(dataset)
    return dataset


def chunking_sample() -> Dataset:
    """The chunking sample: the sample's documents chunked three ways, each chunking's run and chunk map, labels with
    evidence spans (held in memory only, as the sample is)."""
    return _chunking_sample(str(workspace_location()))


def current_dataset() -> Dataset:
    """What the root address shows: the data set loaded last with labels and runs of its own (the workspace's
    current data), else the sample."""
    sample = sample_dataset()
    return uploads().latest_dataset(sample) or sample


def resolve(key: str | None) -> tuple[Dataset, str | None]:
    """The data set a URL names (none named: `current_dataset`), or the sample with a note saying why the named one
    is not here."""
    sample = sample_dataset()
    if not key:
        return current_dataset(), None
    if key == sample.key:
        return sample, None
    if key == chunking_sample().key:
        return chunking_sample(), None
    dataset = uploads().dataset(key)
    if dataset is None:
        where = SERVER_WORKSPACE if workspace().ok else "this server's memory"
        return sample, (f"The link names data set {key}, which this server no longer holds: it is not in {where} "
                        "(its files were deleted, or it was uploaded to another workspace). Showing the sample data; "
                        "upload the files again to see that view.")
    return dataset, None


def register(dataset: Dataset) -> str:
    """Remember ``dataset`` (its key goes in the URL) and record its uploaded labels and runs in the workspace.

    Uploaded labels become a version of a label set named after the file, each uploaded run a
    stored run with the metadata it is read with (its model line: the model string), so
    ``evalcore workspace list`` shows them. A workspace error is kept for the Data page to show.
    """
    _wait_stored(dataset)
    try:
        key = uploads().put_dataset(dataset, session())
    except EvalcoreError as exc:
        state.remember(WORKSPACE_PROBLEM, f"Could not keep this data set in the workspace ({unnamed(str(exc))}); it "
                                          "is held in memory until the server restarts.")
        return dataset.key
    problem = _record(dataset)
    if problem:
        state.remember(WORKSPACE_PROBLEM, problem)
    return key


@st.cache_resource(show_spinner=False)
def _recorded_labels(location: str) -> set[str]:
    """Labels files this server has already recorded as a label-set version (saving one again costs ~0.3 s
    for 30,000 queries and changes nothing)."""
    return set()


def forget_recorded() -> None:
    """After a deletion: record labels again when they next come up (their label set may be gone)."""
    _recorded_labels(str(workspace_location())).clear()
    uploads().forget_stored()


def _record(dataset: Dataset) -> str | None:
    """Record the uploaded labels and runs of ``dataset`` (`evalcore.workflows.record_upload`: an editor's action,
    logged under the person's name); the sample files are never recorded."""
    visitor = session()
    if dataset.sample or uploads().workspace is None or visitor is None or not visitor.may("upload"):
        return None  # a viewer uploads nothing (the uploads are disabled); a version they switch to is saved already
    ws = uploads().workspace
    sample_files = {ref.sha256 for ref in sample_dataset().files}
    recorded = _recorded_labels(str(ws.location))
    try:
        labels_set = labels_file = None
        if dataset.labels.sha256 not in sample_files and dataset.labels.sha256 not in recorded:
            loaded = labels(dataset.labels)
            if loaded.ok:
                labels_set, labels_file = loaded.value, uploads().stored_file(dataset.labels, visitor)
        runs = []
        for spec in dataset.runs:
            if spec.file.sha256 in sample_files:
                continue
            loaded = run(spec)
            if loaded.ok:
                runs.append((loaded.value, uploads().stored_file(spec.file, visitor), spec.file.format))
        samples = sample_files | {ref.sha256 for ref in chunking_sample().files}
        documents = (uploads().stored_file(dataset.documents, visitor) if dataset.documents is not None
                     and dataset.documents.sha256 not in samples else None)
        maps = [(spec.name, uploads().stored_file(spec.chunks, visitor)) for spec in dataset.runs
                if spec.chunks is not None and spec.chunks.sha256 not in samples]
        graded = [(spec.run, uploads().stored_file(spec.file, visitor)) for spec in dataset.grades
                  if spec.file.sha256 not in samples]
        if labels_set is None and not runs and documents is None and not maps and not graded:
            return None
        visitor.record_upload(labels=labels_set, labels_file=labels_file, runs=runs, documents=documents,
                              chunk_maps=maps, grades=graded)
        if labels_set is not None:
            recorded.add(dataset.labels.sha256)
    except EvalcoreError as exc:
        return unnamed(f"Could not record the upload in the workspace: {exc}")
    return None


def upload_ref(uploaded: Any, format: str | None = None) -> FileRef:
    """Store an uploaded file once per upload, in the workspace before anything parses it (hashing 100 MB on
    every rerun would be slow), and refer to it as read with ``format`` (None: detect; see `read_format`). A
    workspace error is shown as a message; the bytes are then held in memory."""
    memo = state.memo("data.upload_refs")
    key = getattr(uploaded, "file_id", None) or id(uploaded)
    ref = memo.get(key)
    if ref is None or not uploads().has(ref):
        data = uploaded.getvalue()
        ref = uploads().add_file(uploaded.name, data)  # hashed and held in memory: it can be parsed now
        visitor = session()
        if visitor is not None and visitor.may("upload"):  # stored while it is parsed (~0.7 s for 100 MB)
            jobs.run_once("store", ref.sha256, lambda: uploads().add_file(uploaded.name, data, session=visitor))
        memo[key] = ref
    return ref.as_read(format)


DETECT = "detect"
FORMAT_CHOICES = (DETECT, *FORMATS)
"""The format choice beside each upload: detect (from the file's name and first lines), or one the readers take."""
DOCUMENT_FORMAT_CHOICES = (DETECT, *formats_for("documents"))
"""The documents reader takes tables and JSON lines (no TREC, no single JSON document)."""
CHUNK_FORMAT_CHOICES = (DETECT, *formats_for("chunks"))
QUERY_FORMAT_CHOICES = (DETECT, *formats_for("queries"))


def read_format(choice: str | None) -> str | None:
    """The format a choice beside an upload names: None for detect (or anything the readers do not take)."""
    return choice if choice in FORMATS else None


WORKSPACE_PROBLEM = "data.workspace_error"
"""Where a workspace problem met while storing or registering an upload waits for the Data page to show it."""


def _wait_stored(dataset: Dataset) -> None:
    """Wait for the workspace writes of ``dataset``'s uploads; a failure is kept for the Data page to show (the
    bytes stay in memory, and registering the data set tries the workspace once more)."""
    for ref in dataset.files:
        future = jobs.take("store", ref.sha256)
        if future is None:
            continue
        try:
            future.result()
        except EvalcoreError as exc:
            state.remember(WORKSPACE_PROBLEM, unnamed(f"Could not store {ref.name} in the workspace: {exc}"))


def _source(ref: FileRef) -> Source:
    data = file_bytes(ref)
    if data is None:
        raise InputError("a file this server still holds (upload it again)", source=ref.name)
    return open_source(data, name=ref.name)


# ----------------------------------------------------------------------------- parsing, once per content


def attempt(fn: Callable[..., Any], *args, **kwargs) -> Loaded:
    """``fn(*args, **kwargs)`` as a `Loaded`: the value, or the core's one-line message.

    The one place the dashboard turns the core's typed errors (`evalcore.errors.EvalcoreError` and its
    subclasses) into words; pages show ``error`` beside the action with `dashboard.layout.failed`."""
    try:
        return Loaded(fn(*args, **kwargs))
    except EvalcoreError as exc:
        return Loaded(error=unnamed(str(exc)))


def load(fn: Callable[..., Any], *args, **kwargs) -> Loaded:
    """`attempt` for what is read or computed once and kept: the garbage collector is then kept off it."""
    loaded = attempt(fn, *args, **kwargs)
    if loaded.ok:
        _settle()
    return loaded


def _settle() -> None:
    """Keep Python's garbage collector off the data just loaded.

    A loaded data set is millions of long-lived objects; without this, the collector walks
    them all every few reruns (about 0.1 s each time with five 10,000-query runs), which is
    most of what changing k would cost. Freezing moves what exists now out of its reach;
    the data are still freed by reference counting when the caches drop them.
    """
    gc.collect()
    gc.freeze()


@st.cache_resource(max_entries=16, show_spinner="Reading the labels file…", hash_funcs=HASH)
def labels(ref: FileRef) -> Loaded:
    return load(read_labels_file, ref, _source)


@st.cache_resource(max_entries=32, show_spinner="Reading a run file…", hash_funcs=HASH)
def run(spec: RunSpec) -> Loaded:
    return load(read_run_file, spec, _source)


@st.cache_resource(max_entries=8, show_spinner="Reading the documents file…", hash_funcs=HASH)
def documents(ref: FileRef) -> Loaded:
    return load(read_documents_file, ref, _source)


@st.cache_resource(max_entries=16, show_spinner="Reading a grade file…", hash_funcs=HASH)
def grades(spec: GradeSpec) -> Loaded:
    """The answer grades of run ``spec.run`` (`evalcore.readers.grades`, with each answer and the judge's reasons),
    or the one-line message naming the file, row and value."""
    return load(read_grade_file, spec, _source, notes=True)


@st.cache_resource(max_entries=16, show_spinner="Reading a chunk map…", hash_funcs=HASH)
def chunks(ref: FileRef, documents_ref: FileRef | None = None, spec: RunSpec | None = None,
           labels_ref: FileRef | None = None) -> Loaded:
    """A chunk map (checked against the documents file when there is one, which also places chunks given by their
    text), or the one-line message naming the file and line. With the run ``spec`` it is the map of (its
    ``chunks`` being ``ref``), only the chunks that run names, and the ids the labels ``labels_ref`` name, are
    held (`read_chunks` with ``keep``, as the command line reads it: every row is still checked, the map's counts
    and fingerprint are the whole file's, and labels that name chunks rather than documents are recognised)."""
    def read():
        docs = documents(documents_ref) if documents_ref is not None else None
        if docs is not None and not docs.ok:
            docs = None  # the documents' own problem is shown beside them
        ranked = run(spec) if spec is not None else None
        labeled = labels(labels_ref) if labels_ref is not None else None
        return read_chunk_map(ref, _source, ranked=[ranked.value.doc_ids] if ranked is not None and ranked.ok else [],
                              labels=labeled.value if labeled is not None and labeled.ok else None,
                              documents=docs.value if docs is not None else None,
                              keep_all=ranked is None or not ranked.ok)
    return load(read)


@st.cache_resource(max_entries=16, show_spinner=False, hash_funcs=HASH)
def labels_of(dataset: Dataset) -> Loaded:
    """The data set's labels as read, with each query's text from its queries file when it has one."""
    found = labels(dataset.labels)
    if not found.ok or dataset.queries is None:
        return found
    return load(dataset_labels, dataset, _source, found.value)


def sidecar(ref: FileRef) -> Loaded:
    """A ``<run>.meta.json`` uploaded beside runs (`evalcore.readers.runs.read_sidecar`: ``{"model": ...,
    "price_per_mtok": ...}`` checked), or the one-line message naming the file."""
    return attempt(lambda: read_sidecar(_source(ref), name=ref.name))


def runs_of(dataset: Dataset) -> list[Loaded]:
    return [run(spec) for spec in dataset.runs]


# ----------------------------------------------------------------------------- evaluation


@st.cache_resource(max_entries=16, show_spinner=False, hash_funcs=HASH)
def scope(dataset: Dataset) -> Loaded:
    """The labels every page scores (`evalcore.metrics.split.scoring_labels`): with a tune/holdout split (the labels'
    field, or the data set's hash split), the tune queries only, the holdout sealed (the Integrity page reveals it,
    recorded in the workspace)."""
    label_set = labels_of(dataset)
    return load(scoring_labels, label_set.value, SplitRule(dataset.split)) if label_set.ok else label_set


def _core_inputs(dataset: Dataset) -> tuple[Any, list[Any], dict[str, Any]]:
    label_set = scope(dataset)
    if not label_set.ok:
        raise EvalcoreError(label_set.error)
    loaded = runs_of(dataset)
    maps = {spec.name: chunks(spec.chunks, dataset.documents, spec, dataset.labels) for spec in dataset.runs
            if spec.chunks is not None}
    docs = documents(dataset.documents) if maps and dataset.documents is not None else None
    read = labels_of(dataset) if docs is not None and docs.ok else None
    if read is not None and read.ok:
        check_spans(read.value, docs.value)  # a span past its document is refused, as the command line refuses it
    bad = next((r for r in [*loaded, *maps.values()] if not r.ok), None)
    if bad is not None:
        raise EvalcoreError(bad.error)
    return label_set.value, [r.value for r in loaded], {name: found.value for name, found in maps.items()}


@st.cache_resource(max_entries=8, show_spinner="Scoring every run…", hash_funcs=HASH)
def evaluation(dataset: Dataset) -> Loaded:
    """Every run scored to `DEPTH` ranks: per-query scores for every k from 1 to 100 (on the tune split when the
    labels carry one; the evaluation names its split)."""
    def build():
        split, runs, maps = _core_inputs(dataset)
        return split.evaluate(runs, k=DEPTH, chunks=maps or None)
    return load(build)



def warnings_at_k(dataset: Dataset, k: int) -> tuple[Any, ...] | None:
    """The warnings ``evaluate --k 1,k`` prints, from the evaluation scored to `DEPTH` (no re-scoring)."""
    loaded = evaluation(dataset)
    return warnings_at(loaded.value, (1, k)) if loaded.ok else None


@st.cache_data(max_entries=64, show_spinner=False, hash_funcs=HASH)
def warnings_frame(dataset: Dataset, k: int) -> pd.DataFrame:
    found = warnings_at_k(dataset, k)
    if found is None:
        return pd.DataFrame(columns=["code", "count", "message"])
    rows = [w.to_dict() for w in found]
    return pd.DataFrame(rows, columns=["code", "count", "message"])


@st.cache_data(max_entries=16, show_spinner=False, hash_funcs=HASH)
def evaluated_queries(dataset: Dataset) -> list[str]:
    loaded = evaluation(dataset)
    return loaded.value.results[0].queries.tolist() if loaded.ok else []
