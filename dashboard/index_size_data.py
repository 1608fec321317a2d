"""The Index size page's data: the models' vectors (the sample's three, or uploaded), the search of every variant and
its report against the full vectors, and a variant's run added to the loaded runs.

A study (one model's variants searched and scored) is kept per content: the labels file's hash, the vector files'
hashes, the dims, precisions, similarity and k. It is computed outside Streamlit's cache so the page can show a
progress bar while it searches; a finished study is kept (the last `KEEP` of them) for every session. A variant
added to the runs becomes a TREC file in the store, exactly like an uploaded run: Overview, Choose k and Failures
show it, the URL names the new data set, and a reload or a copied link keeps it.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import pandas as pd
import streamlit as st

from evalcore.analyses.index_size import IndexSizeReport, index_size_report, scoped_queries
from evalcore.errors import EvalcoreError
from evalcore.readers.vectors import check_dimensions, read_vectors
from evalcore.report.index_size import index_size_points
from evalcore.vectors.runs import search_runs, trec_text
from evalcore.vectors.variants import PRECISIONS, plan_variants

from dashboard import data
from dashboard.store import Dataset, FileRef, RunSpec, unique_name

SAMPLE_MODELS = ("base", "tuned", "tuned-256d")
"""The sample runs whose vectors ship in ``sample_data/vectors/`` (NAME.queries.npy, NAME.docs.npy, with ids)."""
DIMS_CHOICES = ("full", "1024", "768", "512", "384", "256", "128", "64", "32", "16")
DEFAULT_DIMS = ("full", "128", "64")
DEFAULT_PRECISIONS = PRECISIONS
VECTORS_DIR = Path("dashboard") / "vectors"
"""Where, inside the workspace folder, the manifests of uploaded models are kept (one small JSON file per key)."""
KEEP = 12
"""Finished studies kept in memory (each holds the runs of its variants)."""


@dataclass(frozen=True)
class VectorModel:
    """One model's query and doc vectors (ids files for .npy matrices), named as its runs will be."""

    name: str
    model: str
    queries: FileRef
    docs: FileRef
    query_ids: FileRef | None = None
    doc_ids: FileRef | None = None
    sample: bool = False

    @property
    def key(self) -> tuple:
        return (self.name, self.model, *(None if f is None else f.sha256 for f in
                                          (self.queries, self.docs, self.query_ids, self.doc_ids)))


@st.cache_resource(show_spinner=False)
def _sample_models(location: str) -> tuple[VectorModel, ...]:
    store = data.store()
    out = []
    for name in SAMPLE_MODELS:
        refs = {}
        for part in ("queries.npy", "queries.ids.txt", "docs.npy", "docs.ids.txt"):
            path = f"vectors/{name}.{part}"
            refs[part] = store.put_file(path, (data.SAMPLE_DIR / path).read_bytes(), keep=False)
        meta = json.loads((data.SAMPLE_DIR / f"{name}.meta.json").read_text(encoding="utf-8"))
        out.append(VectorModel(name, meta["model"], refs["queries.npy"], refs["docs.npy"], refs["queries.ids.txt"],
                               refs["docs.ids.txt"], sample=True))
    return tuple(out)


def sample_models(dataset: Dataset) -> tuple[VectorModel, ...]:
    """The sample's three models, when the data set's labels are the sample's (their queries are theirs)."""
    if dataset.labels.sha256 != data.sample_dataset().labels.sha256:
        return ()
    return _sample_models(str(data.workspace_location()))


@st.cache_resource(max_entries=16, show_spinner="Reading the vectors…", hash_funcs=data.HASH)
def vectors(ref: FileRef, ids: FileRef | None = None) -> data.Loaded:
    """One vectors file read (float32), or the one-line message naming the file and row."""
    def read():
        raw = data.file_bytes(ref)
        if raw is None:
            raise EvalcoreError(f"{ref.name}: this server no longer holds the file (upload it again)")
        id_bytes = data.file_bytes(ids) if ids is not None else None
        return read_vectors(raw, ids=id_bytes, name=ref.name)
    return data.load(read)


def check_model(model: VectorModel) -> data.Loaded:
    """Both files of a model read and of the same dimensions (the dims, or the first problem)."""
    queries, docs = vectors(model.queries, model.query_ids), vectors(model.docs, model.doc_ids)
    for loaded in (queries, docs):
        if not loaded.ok:
            return loaded
    return data.attempt(lambda: check_dimensions(queries.value, docs.value) or docs.value.dims)


RESCORE_CANDIDATES = 400
"""With rescoring on: the binary index's top 400 candidates per query are rescored with the float vectors (4x the
dashboard's depth of 100)."""


@st.cache_resource(show_spinner=False)
def _studies() -> tuple[OrderedDict, threading.Lock]:
    return OrderedDict(), threading.Lock()


def cached_study(dataset: Dataset, model: VectorModel, dims: Sequence[str], precisions: Sequence[str],
                 similarity: str, k: int, rescore: int = 0) -> data.Loaded | None:
    """The study if it was already computed (None: it must be searched)."""
    found, lock = _studies()
    with lock:
        return found.get(_study_key(dataset, model, dims, precisions, similarity, k, rescore))


def study(dataset: Dataset, model: VectorModel, dims: Sequence[str], precisions: Sequence[str], similarity: str,
          k: int, rescore: int = 0, progress: Callable[[float, str], None] | None = None) -> data.Loaded:
    """One model's variants searched for every scored query (to the dashboard's depth) and reported against its
    full vectors at recall@k (with recall@1 and MRR beside it): a `Study` (its `IndexSizeReport` and warnings),
    or the problem. ``rescore`` (0: none): each binary variant also rescored with the float vectors of its top
    ``rescore`` candidates."""
    key = _study_key(dataset, model, dims, precisions, similarity, k, rescore)
    found, lock = _studies()
    with lock:
        if key in found:
            return found[key]
    loaded = data.attempt(_compute, dataset, model, tuple(dims), tuple(precisions), similarity, int(k), int(rescore),
                          progress)
    with lock:
        found[key] = loaded
        while len(found) > KEEP:
            found.popitem(last=False)
    return loaded


def _study_key(dataset, model, dims, precisions, similarity, k, rescore=0) -> tuple:
    """A study depends on the labels (not the runs loaded): adding a variant to the runs keeps every study."""
    labels = dataset.labels
    return ((labels.sha256, labels.format), model.key, tuple(dims), tuple(precisions), similarity, int(k),
            int(rescore))


@dataclass(frozen=True)
class Study:
    """One model's report and what its query vectors left out (warnings shown beside it)."""

    report: IndexSizeReport
    warnings: tuple


def _compute(dataset: Dataset, model: VectorModel, dims: tuple, precisions: tuple, similarity: str, k: int,
             rescore: int, progress) -> Study:
    scope = data.scope(dataset)
    labels = data.labels(dataset.labels)
    for loaded in (labels, scope):
        if not loaded.ok:
            raise EvalcoreError(loaded.error)
    queries, docs = vectors(model.queries, model.query_ids), vectors(model.docs, model.doc_ids)
    for loaded in (queries, docs):
        if not loaded.ok:
            raise EvalcoreError(loaded.error)
    check_dimensions(queries.value, docs.value)
    chosen, warnings = scoped_queries(queries.value, labels.value, scope.value)
    kept = [d for d in dims if d == "full" or int(d) < docs.value.dims] or ["full"]
    variants = plan_variants(docs.value.dims, kept, list(precisions) or ["float32"], rescore=rescore,
                             depth=data.DEPTH)
    found = search_runs(chosen, docs.value, variants, similarity=similarity, depth=data.DEPTH, model=model.model,
                        prefix=f"{model.name}-", progress=progress)
    report = index_size_report(found, scope.value, (1, k) if k > 1 else (1,), metric=f"recall@{k}")
    return Study(report, tuple(warnings))


def points(reports: dict[str, IndexSizeReport]) -> pd.DataFrame:
    """Every model's variants for the frontier chart and the table (`evalcore.report.index_size.index_size_points`),
    ``name`` the model on the page."""
    return pd.concat([index_size_points(report).assign(name=name) for name, report in reports.items()],
                     ignore_index=True)


def variant_dataset(dataset: Dataset, report: IndexSizeReport, run_name: str) -> Dataset:
    """The data set with one variant's run added to its runs, as an uploaded TREC file (stored like an upload)."""
    item = next(v for v in report.variants if v.name == run_name)
    name = unique_name(item.name, dataset.run_names)
    ref = data.store().put_file(f"{name}.trec", trec_text(item.run).encode("utf-8"))
    spec = RunSpec(file=ref, name=name, model=item.run.model, dims=item.variant.dims, index_bytes=item.index_bytes)
    return dataset.with_runs(tuple(dataset.runs) + (spec,))


@st.cache_resource(show_spinner=False)
def _remembered(location: str) -> dict:
    """Uploaded models by key, per workspace: a team's keys never name another team's models."""
    return {}


def remember_models(models: Sequence[VectorModel]) -> str:
    """A short key for the uploaded models (what the URL holds as ``vectors``), their manifest kept in the
    workspace folder (``dashboard/vectors/KEY.json``: a reload or a copied link finds them, and the workspace's
    clean-up keeps the vector files it names); held in memory when the workspace cannot be written."""
    manifest = [{"name": m.name, "model": m.model, **{part: None if ref is None else asdict(ref) for part, ref in
                                                      (("queries", m.queries), ("docs", m.docs),
                                                       ("query_ids", m.query_ids), ("doc_ids", m.doc_ids))}}
                for m in models if not m.sample]
    text = json.dumps(manifest, sort_keys=True, separators=(",", ":"))
    key = hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]
    _remembered(str(data.workspace_location()))[key] = tuple(m for m in models if not m.sample)
    workspace = data.store().workspace
    if workspace is not None and not getattr(workspace, "read_only", False):
        folder = Path(workspace.location) / VECTORS_DIR
        try:
            folder.mkdir(parents=True, exist_ok=True)
            handle, temporary = tempfile.mkstemp(dir=folder, suffix=".tmp")
            with os.fdopen(handle, "w", encoding="utf-8") as out:
                out.write(text)
            os.replace(temporary, folder / f"{key}.json")
        except OSError:
            pass  # held in memory: the page works until the server restarts
    return key


def remembered_models(key: str | None) -> tuple[VectorModel, ...]:
    """The uploaded models a ``vectors`` key names (none for an unknown key)."""
    if not key or not all(c in "0123456789abcdef" for c in str(key)):
        return ()
    found = _remembered(str(data.workspace_location())).get(key)
    if found is not None:
        return found
    workspace = data.store().workspace
    path = Path(workspace.location) / VECTORS_DIR / f"{key}.json" if workspace is not None else None
    if path is None or not path.is_file():
        return ()
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
        models = tuple(VectorModel(m["name"], m["model"], *(None if m[p] is None else FileRef(**m[p]) for p in
                                                            ("queries", "docs", "query_ids", "doc_ids")))
                       for m in manifest)
    except (OSError, ValueError, KeyError, TypeError):
        return ()
    _remembered(str(data.workspace_location()))[key] = models
    return models


def upload_model(name: str, queries, docs, query_ids=None, doc_ids=None) -> data.Loaded:
    """A model from uploaded files (stored like every upload before they are read), checked; or the problem."""
    refs = [None if f is None else data.upload_ref(f) for f in (queries, docs, query_ids, doc_ids)]
    model = VectorModel(name.strip() or refs[1].name.split(".")[0], name.strip() or refs[1].name.split(".")[0],
                        refs[0], refs[1], refs[2], refs[3])
    checked = check_model(model)
    return data.Loaded(model) if checked.ok else checked
