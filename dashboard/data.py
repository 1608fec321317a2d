"""The dashboard's one data module: files in, `evalcore` results out, each computed once per content.

Pages call these functions and render what comes back; no number is computed anywhere else.
Every cached function is keyed on content hashes (a `FileRef` by its sha256, a `Dataset` by
the hash of its manifest), so changing k, the page or a filter never re-reads a file, and
the same upload in two sessions is read once.

Core objects (labels, runs, evaluations) are cached with ``st.cache_resource``: they are large
(a 100 MB run is ~2 M rows of arrays) and never modified after they are built, so every
session shares one copy instead of unpickling a copy on every rerun. Tables a page might
reshape (summaries, failure lists) are cached with ``st.cache_data``, which hands each caller
its own copy.

Errors: the core raises `EvalcoreError` with a message naming the file, line and text. Here
they become a `Loaded` with ``error`` set, which pages show beside the upload; nothing
already loaded is replaced by a file that failed.
"""

from __future__ import annotations

import gc
import json
import os
import threading
from collections import OrderedDict
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Sequence

import numpy as np
import pandas as pd
import streamlit as st

import evalcore
from evalcore.analyses import failures as core_failures
from evalcore.analyses.compare import ComparisonReport
from evalcore.errors import EvalcoreError, InputError
from evalcore.readers.runs import META_FIELDS, sidecar_path
from evalcore.readers.sources import Source, open_source
from evalcore.store.workspace import Workspace, default_location

from dashboard.store import DEFAULT_MAX_BYTES, Dataset, DatasetStore, FileRef, RunSpec

ROOT = Path(__file__).resolve().parents[1]
SAMPLE_DIR = Path(os.environ.get("EVALCORE_SAMPLE_DIR", ROOT / "sample_data"))
SAMPLE_FILES = {"labels": "labels.tsv", "runs": ("base.trec", "tuned.trec", "tuned-256d.trec"),
                "documents": "docs.jsonl"}

DEPTH = 100
"""Ranks the dashboard scores every run to: k can be chosen from 1 to this."""

DEFAULT_K = 10

HASH = {Dataset: lambda d: d.key, FileRef: lambda f: (f.name, f.sha256), RunSpec: repr}
"""How cached functions hash the data set objects: by content (a data set by its manifest's key)."""
_HASH = HASH


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
    """The workspace folder: ``EVALCORE_WORKSPACE``, else the per-user default (read on every call, so a
    test that sets the variable gets its own workspace)."""
    return default_location()


@st.cache_resource(show_spinner=False)
def _open_workspace(location: str) -> Loaded:
    try:
        return Loaded(Workspace(location))
    except EvalcoreError as exc:
        return Loaded(error=f"{exc} Uploads are kept in memory only until the server restarts.")


def workspace() -> Loaded:
    """The one shared `Workspace` (or why there is none): every session writes through the same object."""
    return _open_workspace(str(workspace_location()))


@st.cache_resource(show_spinner=False)
def _store(location: str) -> DatasetStore:
    limit = os.environ.get("EVALCORE_DASHBOARD_MAX_MB")
    opened = _open_workspace(location)
    return DatasetStore(opened.value if opened.ok else None,
                        max_bytes=int(limit) * 1024**2 if limit else DEFAULT_MAX_BYTES, fallback=_disk_bytes)


def store() -> DatasetStore:
    """The one store of user files and data set manifests that every session shares (over the workspace)."""
    return _store(str(workspace_location()))


def _disk_path(ref: FileRef) -> Path | None:
    """Sample files can always be read again from disk."""
    path = SAMPLE_DIR / ref.name
    return path if path.is_file() else None


def _disk_bytes(ref: FileRef) -> bytes | None:
    path = _disk_path(ref)
    return path.read_bytes() if path is not None else None


def file_bytes(ref: FileRef) -> bytes | None:
    return store().file(ref)


@st.cache_resource(show_spinner=False)
def _sample_dataset(location: str) -> Dataset:
    def put(name: str) -> FileRef:
        return _store(location).put_file(name, (SAMPLE_DIR / name).read_bytes(), keep=False)

    runs = []
    for name in SAMPLE_FILES["runs"]:
        meta = {}
        sidecar = sidecar_path(SAMPLE_DIR / name)
        if sidecar.is_file():
            raw = json.loads(sidecar.read_text(encoding="utf-8-sig"))
            meta = {k: raw[k] for k in META_FIELDS if k in raw}
        runs.append(RunSpec(file=put(name), name=Source(name, b"").stem, **meta))
    dataset = Dataset(labels=put(SAMPLE_FILES["labels"]), runs=tuple(runs),
                      documents=put(SAMPLE_FILES["documents"]), sample=True)
    _store(location).put_dataset(dataset)
    return dataset


def sample_dataset() -> Dataset:
    """The sample data set from ``sample_data/``: labels, three runs with their sidecars, documents.

    Held in memory only (it can always be read again from disk): showing it writes nothing."""
    return _sample_dataset(str(workspace_location()))


def resolve(key: str | None) -> tuple[Dataset, str | None]:
    """The data set a URL names, or the sample with a note saying why the named one is not here."""
    sample = sample_dataset()
    if not key or key == sample.key:
        return sample, None
    dataset = store().dataset(key)
    if dataset is None:
        where = f"the workspace {workspace_location()}" if workspace().ok else "this server's memory"
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
        key = store().put_dataset(dataset)
    except EvalcoreError as exc:
        st.session_state["data.workspace_error"] = (f"Could not keep this data set in the workspace ({exc}); it is "
                                                    "held in memory until the server restarts.")
        return dataset.key
    problem = _record(dataset)
    if problem:
        st.session_state["data.workspace_error"] = problem
    return key


@st.cache_resource(show_spinner=False)
def _recorded_labels(location: str) -> set[str]:
    """Labels files this server has already recorded as a label-set version (saving one again costs ~0.3 s
    for 30,000 queries and changes nothing)."""
    return set()


def forget_recorded() -> None:
    """After a deletion: record labels again when they next come up (their label set may be gone)."""
    _recorded_labels(str(workspace_location())).clear()
    store().forget_stored()


def _record(dataset: Dataset) -> str | None:
    if dataset.sample or store().workspace is None:
        return None
    ws = store().workspace
    sample_files = {ref.sha256 for ref in sample_dataset().files}
    recorded = _recorded_labels(str(ws.location))
    try:
        if dataset.labels.sha256 not in sample_files and dataset.labels.sha256 not in recorded:
            loaded = labels(dataset.labels)
            if loaded.ok:
                ws.save_labels(loaded.value, file=store().stored_file(dataset.labels))
                recorded.add(dataset.labels.sha256)
        for spec in dataset.runs:
            if spec.file.sha256 in sample_files:
                continue
            loaded = run(spec)
            if loaded.ok:
                ws.save_run(loaded.value, file=store().stored_file(spec.file))
    except EvalcoreError as exc:
        return f"Could not record the upload in the workspace: {exc}"
    return None


def upload_ref(uploaded: Any) -> FileRef:
    """Store an uploaded file once per upload, in the workspace before anything parses it (hashing 100 MB on
    every rerun would be slow). A workspace error is shown as a message; the bytes are then held in memory."""
    memo = st.session_state.setdefault("data.upload_refs", {})
    key = getattr(uploaded, "file_id", None) or id(uploaded)
    ref = memo.get(key)
    if ref is None or not store().has(ref):
        data = uploaded.getvalue()
        ref = store().put_file(uploaded.name, data, keep=False)  # hashed and held in memory: it can be parsed now
        if store().workspace is not None:  # written to the workspace while it is parsed (~0.7 s for 100 MB)
            with _STORING_LOCK:
                _STORING[ref.sha256] = _STORE_POOL.submit(store().put_file, uploaded.name, data)
        memo[key] = ref
    return ref


_STORE_POOL = ThreadPoolExecutor(max_workers=1, thread_name_prefix="evalcore-store")
_STORING: dict[str, Future] = {}  # sha256 -> the workspace write of an upload, running beside its parse
_STORING_LOCK = threading.Lock()


def _wait_stored(dataset: Dataset) -> None:
    """Wait for the workspace writes of ``dataset``'s uploads; a failure is kept for the Data page to show (the
    bytes stay in memory, and registering the data set tries the workspace once more)."""
    for ref in dataset.files:
        with _STORING_LOCK:
            future = _STORING.pop(ref.sha256, None)
        if future is None:
            continue
        try:
            future.result()
        except EvalcoreError as exc:
            st.session_state["data.workspace_error"] = f"Could not store {ref.name} in the workspace: {exc}"


def _source(ref: FileRef) -> Source:
    data = file_bytes(ref)
    if data is None:
        raise InputError("a file this server still holds (upload it again)", source=ref.name)
    return open_source(data, name=ref.name)


# ----------------------------------------------------------------------------- parsing, once per content


def _load(fn, *args, **kwargs) -> Loaded:
    try:
        loaded = Loaded(fn(*args, **kwargs))
    except EvalcoreError as exc:
        return Loaded(error=str(exc))
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


@st.cache_resource(max_entries=16, show_spinner="Reading the labels file…", hash_funcs=_HASH)
def labels(ref: FileRef) -> Loaded:
    return _load(lambda: evalcore.read_labels(_source(ref)))


@st.cache_resource(max_entries=32, show_spinner="Reading a run file…", hash_funcs=_HASH)
def run(spec: RunSpec) -> Loaded:
    meta = {k: v for k, v in spec.metadata().items() if v is not None}
    return _load(lambda: evalcore.read_run(_source(spec.file), name=spec.name, **meta))


@st.cache_resource(max_entries=8, show_spinner="Reading the documents file…", hash_funcs=_HASH)
def documents(ref: FileRef) -> Loaded:
    return _load(lambda: evalcore.read_documents(_source(ref)))


def sidecar(ref: FileRef) -> Loaded:
    """A ``<run>.meta.json`` uploaded beside runs: ``{"model": ..., "price_per_mtok": ...}``."""
    try:
        value = json.loads(_source(ref).text())
    except ValueError as exc:
        return Loaded(error=str(InputError(f"valid JSON run metadata ({exc})", source=ref.name)))
    except EvalcoreError as exc:
        return Loaded(error=str(exc))
    if not isinstance(value, dict):
        return Loaded(error=str(InputError('a JSON object like {"model": ..., "price_per_mtok": ...}',
                                           source=ref.name)))
    return Loaded({k: value[k] for k in META_FIELDS if k in value})


def runs_of(dataset: Dataset) -> list[Loaded]:
    return [run(spec) for spec in dataset.runs]


# ----------------------------------------------------------------------------- evaluation


@st.cache_resource(max_entries=16, show_spinner=False, hash_funcs=_HASH)
def scope(dataset: Dataset) -> Loaded:
    """The labels every page scores (`evalcore.metrics.split.scoring_labels`): with a tune/holdout split, the tune
    queries only, the holdout sealed (the Integrity page reveals it, recorded in the workspace)."""
    from evalcore.metrics.split import scoring_labels

    label_set = labels(dataset.labels)
    return _load(scoring_labels, label_set.value) if label_set.ok else label_set


def _core_inputs(dataset: Dataset) -> tuple[Any, list[Any]]:
    label_set = scope(dataset)
    if not label_set.ok:
        raise EvalcoreError(label_set.error)
    loaded = runs_of(dataset)
    bad = next((r for r in loaded if not r.ok), None)
    if bad is not None:
        raise EvalcoreError(bad.error)
    return label_set.value, [r.value for r in loaded]


@st.cache_resource(max_entries=8, show_spinner="Scoring every run…", hash_funcs=_HASH)
def evaluation(dataset: Dataset) -> Loaded:
    """Every run scored to `DEPTH` ranks: per-query scores for every k from 1 to 100 (on the tune split when the
    labels carry one; the evaluation names its split)."""
    def build():
        split, runs = _core_inputs(dataset)
        return split.evaluate(runs, k=DEPTH)
    return _load(build)


MORE_METRICS = ("recall", "hit", "precision", "ndcg", "judged")
"""Every cutoff metric: what the Overview shows with "every metric" on. Without it, recall@k and MRR."""


_CURVES: "OrderedDict[tuple[str, bool], Future]" = OrderedDict()
_CURVES_LOCK = threading.Lock()
_CURVES_POOL = ThreadPoolExecutor(max_workers=1, thread_name_prefix="evalcore-curves")
_CURVES_KEPT = 4


def _curves_future(dataset: Dataset, more: bool) -> Future | None:
    """The all-k computation for ``dataset``, started once in a background thread (keyed by content)."""
    from evalcore.analyses.curves import interval_curves

    key = (dataset.key, bool(more))
    with _CURVES_LOCK:
        future = _CURVES.get(key)
        if future is not None:
            _CURVES.move_to_end(key)
            return future
    loaded = evaluation(dataset)
    if not loaded.ok:
        return None
    with _CURVES_LOCK:
        future = _CURVES.get(key)
        if future is None:
            future = _CURVES_POOL.submit(_load, interval_curves, loaded.value,
                                         metrics=MORE_METRICS if more else ("recall",), max_k=DEPTH)
            _CURVES[key] = future
            while len(_CURVES) > _CURVES_KEPT:
                _CURVES.popitem(last=False)
    return future


def curves(dataset: Dataset, more: bool = False, *, wait: bool = True) -> Loaded | None:
    """`evalcore.analyses.curves.interval_curves` once per data set: intervals and comparisons at every k 1..`DEPTH`.

    Changing k then only looks numbers up; they equal ``evalcore evaluate --k 1,k`` and
    ``evalcore compare`` at that k exactly. ``more`` adds hit, precision, nDCG and judged
    (precision@k and judged@k change at almost every k, so they cost more). Each entry keeps
    the resampled sums paired tests need, about 16 MB per run with 10,000 queries, so few are kept.

    The computation runs in a background thread (seconds for 10,000 queries x 5 runs), so a
    page does not wait on every k to show one: with ``wait=False`` this returns None until it
    is done, and the page computes the one k it shows directly (`summary`, `comparison`).
    """
    future = _curves_future(dataset, more)
    if future is None:
        return evaluation(dataset)
    if not wait and not future.done():
        return None
    return future.result()


def curves_if_ready(dataset: Dataset, more: bool = False) -> Loaded | None:
    """`curves` if they are computed already, else None; never starts them (the Overview starts them after its
    first chart, so that chart does not share the CPU with them)."""
    with _CURVES_LOCK:
        future = _CURVES.get((dataset.key, bool(more)))
    return future.result() if future is not None and future.done() else None


@st.cache_resource(max_entries=64, show_spinner=False, hash_funcs=_HASH)
def summary(dataset: Dataset, k: int, more: bool = False) -> pd.DataFrame:
    """`Evaluation.summary` at ``--k 1,k`` (recall and MRR rows only unless ``more``; shared, never changed).

    Looked up in `curves` once they are ready; until then computed for this k alone from the
    deep evaluation (the same numbers: one bootstrap draw per seed, whatever the columns).
    """
    loaded = curves_if_ready(dataset, more)
    if loaded is not None:
        return loaded.value.summary((1, int(k))) if loaded.ok else pd.DataFrame()
    deep = evaluation(dataset)
    return summary_at(deep.value, k, more) if deep.ok else pd.DataFrame()


def summary_at(deep: Any, k: int, more: bool = False) -> pd.DataFrame:
    """`summary` for one k without the curves: the deep evaluation listed at ``--k 1,k``."""
    frame = deep.at((1, int(k))).summary
    if not more:
        frame = frame[frame["metric"].map(lambda m: m.split("@")[0] in ("recall", "mrr"))].reset_index(drop=True)
    return frame


@st.cache_resource(max_entries=64, show_spinner=False, hash_funcs=_HASH)
def comparison(dataset: Dataset, k: int, baseline: str) -> ComparisonReport | None:
    """Every run against ``baseline`` on recall@1, recall@k and MRR (paired, Holm-corrected), from `curves`.

    This waits for the curves (they hold the resampled sums the tests need; computing the tests
    for one k beside them would do the same work twice). The page shows it below its first chart."""
    deep = evaluation(dataset)
    if not deep.ok or len(deep.value.results) < 2:
        return None
    loaded = curves(dataset)
    return loaded.value.comparison(int(k), baseline) if loaded.ok else None


def _warnings_at(dataset: Dataset, k: int) -> tuple[Any, ...] | None:
    """The warnings ``evaluate --k 1,k`` prints, from the evaluation scored to `DEPTH` (no re-scoring)."""
    from evalcore.analyses.curves import warnings_at

    loaded = evaluation(dataset)
    return warnings_at(loaded.value, (1, int(k))) if loaded.ok else None


@st.cache_data(max_entries=64, show_spinner=False, hash_funcs=_HASH)
def warnings_frame(dataset: Dataset, k: int) -> pd.DataFrame:
    found = _warnings_at(dataset, k)
    if found is None:
        return pd.DataFrame(columns=["code", "count", "message"])
    rows = [w.to_dict() for w in found]
    return pd.DataFrame(rows, columns=["code", "count", "message"])


# ----------------------------------------------------------------------------- failures


@st.cache_resource(max_entries=8, show_spinner="Finding where every relevant doc landed…", hash_funcs=_HASH)
def landed(dataset: Dataset) -> core_failures.Landed | None:
    """Where each run put each relevant doc (k-independent; computed once per data set)."""
    loaded = evaluation(dataset)
    return core_failures.landed(loaded.value) if loaded.ok else None


@st.cache_resource(max_entries=64, show_spinner=False, hash_funcs=_HASH)
def missed(dataset: Dataset, k: int, mode: str) -> core_failures.FailureList | None:
    """The (run, query) pairs missed at k, as positions (`evalcore.analyses.failures.FailureList`; shared, never changed)."""
    loaded = evaluation(dataset)
    if not loaded.ok:
        return None
    return core_failures.failure_list(loaded.value, k, mode=mode, where=landed(dataset))


@st.cache_data(max_entries=64, show_spinner=False, hash_funcs=_HASH)
def disagreements(dataset: Dataset, k: int, a: str, b: str, mode: str) -> pd.DataFrame:
    loaded = evaluation(dataset)
    if not loaded.ok:
        return pd.DataFrame(columns=core_failures.DISAGREEMENT_COLUMNS)
    return core_failures.disagreements(loaded.value, k, a, b, mode=mode, where=landed(dataset))


@st.cache_resource(max_entries=128, show_spinner=False, hash_funcs=_HASH)
def drill_down(dataset: Dataset, query: str, k: int, runs: tuple[str, ...]) -> Loaded:
    loaded = evaluation(dataset)
    if not loaded.ok:
        return loaded
    docs = documents(dataset.documents) if dataset.documents else None
    doc_value = docs.value if docs is not None and docs.ok else None
    return _load(core_failures.drill_down, loaded.value, query, k, documents=doc_value, runs=list(runs),
                 where=landed(dataset))


@st.cache_data(max_entries=16, show_spinner=False, hash_funcs=_HASH)
def evaluated_queries(dataset: Dataset) -> list[str]:
    loaded = evaluation(dataset)
    return loaded.value.results[0].queries.tolist() if loaded.ok else []


# ----------------------------------------------------------------------------- the checklist


def _count(warnings: Sequence[Any], code: str, run_name: str | None = None) -> int:
    total = 0
    for w in warnings:
        if w.code == code and (run_name is None or w.message.startswith(f"run {run_name}:")):
            total += int(w.count)
    return total


def checklist(dataset: Dataset, k: int) -> pd.DataFrame:
    """One row per file, before any metric: what it holds and what is odd about it.

    Counts come from the readers and from the core's evaluation warnings at ``--k 1,k`` and at
    the depth the dashboard scores to (for rankings shorter than the largest k).
    """
    rows = []
    label_set = labels(dataset.labels)
    deep = evaluation(dataset)
    at_k = Loaded(_warnings_at(dataset, k)) if deep.ok else deep
    if label_set.ok:
        ls = label_set.value
        relevant = ls.relevant_counts(deep.value.min_grade if deep.ok else 1)
        rows.append({
            "file": dataset.labels.name, "role": "labels", "queries": ls.n_queries, "docs": len(ls.judgments),
            "labeled queries missing from run": None, "run queries without labels": None,
            "duplicates": _count(ls.warnings, "duplicate_judgment"),
            f"rankings shorter than {DEPTH}": None, f"ties across k=1 or k={k}": None,
            "notes": f"{int((relevant == 0).sum())} queries with no relevant doc; fingerprint {ls.fingerprint}",
        })
    else:
        rows.append({"file": dataset.labels.name, "role": "labels", "notes": label_set.error})
    for spec, loaded in zip(dataset.runs, runs_of(dataset)):
        if not loaded.ok:
            rows.append({"file": spec.file.name, "role": f"run {spec.name}", "notes": loaded.error})
            continue
        r = loaded.value
        at = at_k.value if at_k.ok else ()
        dp = deep.value.all_warnings if deep.ok else ()
        rows.append({
            "file": spec.file.name, "role": f"run {spec.name}", "queries": r.n_queries, "docs": r.n_rows,
            "labeled queries missing from run": _count(at, "query_missing_from_run", r.name) if at_k.ok else None,
            "run queries without labels": _count(at, "query_not_in_labels", r.name) if at_k.ok else None,
            "duplicates": _count(r.warnings, "duplicate_doc"),
            f"rankings shorter than {DEPTH}": _count(dp, "short_ranking", r.name) if deep.ok else None,
            f"ties across k=1 or k={k}": _count(at, "tie_across_cutoff", r.name) if at_k.ok else None,
            "notes": f"model {r.model}",
        })
    if dataset.documents is not None:
        docs = documents(dataset.documents)
        if docs.ok:
            d = docs.value
            kinds = " and ".join(x for x, ok in (("text", d.has_text), ("token counts", d.has_tokens)) if ok)
            rows.append({"file": dataset.documents.name, "role": "documents", "docs": len(d),
                         "duplicates": _count(d.warnings, "duplicate_document"), "notes": f"has {kinds}"})
        else:
            rows.append({"file": dataset.documents.name, "role": "documents", "notes": docs.error})
    frame = pd.DataFrame(rows)
    for column in frame.columns:
        if column not in ("file", "role", "notes"):
            frame[column] = pd.array(frame[column], dtype="Int64") if len(frame) else frame[column]
    return frame


def file_warnings(dataset: Dataset) -> list[str]:
    """Repairs and oddities the readers reported (BOM removed, CRLF, duplicates), one line each."""
    out = []
    for loaded in [labels(dataset.labels), *runs_of(dataset)]:
        if loaded.ok:
            out.extend(w.message for w in loaded.value.warnings)
    if dataset.documents is not None:
        docs = documents(dataset.documents)
        if docs.ok:
            out.extend(w.message for w in docs.value.warnings)
    return out


# ----------------------------------------------------------------------------- run metadata


def run_metadata(dataset: Dataset) -> pd.DataFrame:
    """The editable metadata table of the Data page: one row per run, as the core read it."""
    rows = []
    for spec, loaded in zip(dataset.runs, runs_of(dataset)):
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


@st.cache_resource(max_entries=128, show_spinner=False, hash_funcs=_HASH)
def failure_list(dataset: Dataset, k: int, mode: str, runs: tuple[str, ...], sources: tuple[str, ...], text: str,
                 order: str) -> core_failures.FailureList | None:
    """The Failures page's list: missed at k, for the runs shown, filtered and in the chosen order (positions: the
    page builds a table only for the rows it shows)."""
    rows = missed(dataset, k, mode)
    return None if rows is None else rows.filtered(runs=list(runs), sources=list(sources), text=text).ordered(order)


@st.cache_data(max_entries=64, show_spinner=False, hash_funcs=_HASH)
def disagreement_list(dataset: Dataset, k: int, a: str, b: str, mode: str, sources: tuple[str, ...],
                      text: str) -> pd.DataFrame:
    table = disagreements(dataset, k, a, b, mode)
    return core_failures.filter_failures(table, sources=list(sources), text=text)


@st.cache_data(max_entries=16, show_spinner=False, hash_funcs=_HASH)
def source_values(dataset: Dataset) -> list[str]:
    """The ``source`` values of the labeled queries (``(not set)`` where a query has none)."""
    loaded = labels(dataset.labels)
    if not loaded.ok:
        return []
    values = loaded.value.field("source")
    if values is None:
        return []
    return sorted({str(x) if x is not None and not pd.isna(x) else "(not set)" for x in values.tolist()})


# ----------------------------------------------------------------------------- choosing k


@dataclass(frozen=True)
class BudgetSettings:
    """What the person sets on the Choose k page; None = the core's default."""

    price_per_mtok: float | None = None
    requests_per_month: float | None = None
    overhead_tokens: int = 0
    lam: float | None = None
    chunk_tokens: int | None = None


@st.cache_resource(max_entries=32, show_spinner="Counting prompt tokens and resampling the recall curves…",
                   hash_funcs={**_HASH, BudgetSettings: repr})
def budget(dataset: Dataset, settings: BudgetSettings) -> Loaded:
    """`evalcore.analyses.budget.k_budget` for every run, k = 1..`DEPTH` (k-independent: the k control only reads it)."""
    from evalcore.analyses.budget import k_budget

    loaded = evaluation(dataset)
    if not loaded.ok:
        return loaded
    docs = documents(dataset.documents) if dataset.documents is not None else None
    doc_value = docs.value if docs is not None and docs.ok else None
    return _load(k_budget, loaded.value, docs=doc_value, max_k=DEPTH, price_per_mtok=settings.price_per_mtok,
                 requests_per_month=settings.requests_per_month, overhead_tokens=settings.overhead_tokens,
                 lam=settings.lam, chunk_tokens=settings.chunk_tokens)


def has_chunk_sizes(dataset: Dataset) -> bool:
    """Whether the documents file can size chunks (text or token counts)."""
    if dataset.documents is None:
        return False
    docs = documents(dataset.documents)
    return docs.ok and (docs.value.has_text or docs.value.has_tokens)


# ----------------------------------------------------------------------------- caveats beside each number


@st.cache_resource(max_entries=8, show_spinner=False, hash_funcs=_HASH)
def _caveats_every_k(dataset: Dataset) -> dict[int, dict[str, dict]]:
    """`evalcore.analyses.coverage.number_caveats` for every k 1..DEPTH at once (about the cost of one k), per data set:
    k -> run -> its row (a k change is a lookup; shared, never changed)."""
    from evalcore.analyses.coverage import number_caveats

    loaded = evaluation(dataset)
    if not loaded.ok:
        return {}
    every = number_caveats(loaded.value, range(1, min(r.depth for r in loaded.value.results) + 1))
    out: dict[int, dict[str, dict]] = {}
    for row in every.to_dict("records"):
        out.setdefault(int(row["k"]), {})[row["run"]] = row
    return out


def caveats(dataset: Dataset, k: int) -> dict[str, dict]:
    """Per run, what to know about its recall@k: the share of blind labels behind it, and whether k goes deeper
    than the judgments cover, with bounds (`evalcore.analyses.coverage.number_caveats` on the scored evaluation)."""
    return _caveats_every_k(dataset).get(int(k), {})


CAVEAT_HELP = {
    "blind share": "Share of this row's n queries whose labels were judged blind (without seeing any system's "
                   "ranking; the labels' blind field). Empty: the labels have no blind field.",
    "judged depth": "Whether k goes deeper than the judgments cover: covered to k = the deepest k where at least 90% "
                    "of the returned docs are judged, on the queries whose judged depth is known (a doc judged "
                    "non-relevant, as a blind judging round records). Labels listing only relevant docs leave it "
                    "unknown.",
    "bounds": "When k goes deeper than judged: recall@k with the unjudged docs of the top k counted as non-relevant "
              "(the number shown) and as relevant.",
}


def caveat_cells(row: dict | None, k: int) -> dict:
    """The Overview's cells for one run's row of `caveats`: blind share, judged depth at k, bounds when flagged."""
    if row is None:
        return {}
    covered = None if pd.isna(row["covered_k"]) else int(row["covered_k"])
    reach = "under 90% judged even at k = 1" if covered == 0 else f"covered to k = {covered}"
    if row["flagged"]:
        depth = f"deeper than judged ({reach})"
    elif covered is None:
        depth = "unknown: labels list only relevant docs"
    else:
        depth = f"within judged depth ({reach})"
    return {"blind share": float(row["blind_share"]) if row["blind_known"] else None,
            f"recall@{k} judged depth": depth,
            f"recall@{k} bounds": f"{row['low']:.3f} – {row['high']:.3f}" if row["flagged"] else None}
