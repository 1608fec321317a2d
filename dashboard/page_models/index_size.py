"""The Index size page's model: the models' vectors (the sample's three, or uploaded), the study of every variant
(`evalcore.analyses.index_study.index_size_study`, the same as ``evalcore vectors``), its frontier points, a
variant's run added to the loaded runs, and the approximate index: a sweep of one index type's search setting
(ef or nprobe) as SPECs, the same study with them, and a lost query opened in Failures beside exact search.

Plain functions: vector files read and the sample's models are kept in `dashboard.caching`. A study is kept per
content (the labels file's hash, the vector files' hashes, the settings) as a finished job (`dashboard.jobs`): it is
computed in the page's thread so the page can show a progress bar, then shared by every session. Built approximate
indexes are kept too, by the vector files' hashes and the SPEC's build (`_Builds`, in a bounded store): a sweep that
gains a value searches the index already built. A sweep is checked before it is built (`check_sweep`: the ranges
``evalcore vectors`` takes and the memory budget), and built only for a person who may (``refused``). Uploaded
models are kept as a manifest in the workspace's database (``?vectors=KEY``). A variant added to the runs becomes a
TREC file in the workspace, exactly like an uploaded run: Overview, Choose k and Failures show it, the URL names the
new data set, and a reload or a copied link keeps it.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence

import pandas as pd

from evalcore.analyses.index_choice import index_choice
from evalcore.analyses.index_size import IndexSizeReport
from evalcore.analyses.index_study import IndexSizeSettings, IndexSizeStudy, check_indexes, index_size_study
from evalcore.errors import EvalcoreError, WorkspaceError
from evalcore.readers.runs import read_sidecar
from evalcore.readers.vectors import check_dimensions, read_vectors
from evalcore.report.amounts import times
from evalcore.report.index_size import index_choice_line, index_size_points
from evalcore.metrics.dataset import Dataset, FileRef, RunSpec, VectorModel, content_key, models_manifest, unique_name
from evalcore.vectors.index_spec import KINDS, MOST_DIGITS
from evalcore.vectors.runs import trec_text
from evalcore.vectors.variants import PRECISIONS
from evalcore.warning_log import plural

from dashboard import caching, jobs, loading
from dashboard.loading import DEPTH, Loaded

SAMPLE_MODELS = ("base", "tuned", "tuned-256d")
"""The sample runs whose vectors ship in ``sample_data/vectors/`` (NAME.queries.npy, NAME.docs.npy, with ids)."""
DIMS_CHOICES = ("full", "1024", "768", "512", "384", "256", "128", "64", "32", "16")
DEFAULT_DIMS = ("full", "128", "64")
DEFAULT_PRECISIONS = PRECISIONS
KEEP = 12
"""Finished studies kept in memory (each holds the runs of its variants)."""


def _sample_models(location: str) -> tuple[VectorModel, ...]:
    """The sample's three models, their files held for the workspace at ``location`` (kept once per workspace)."""
    store = loading.uploads()
    out = []
    for name in SAMPLE_MODELS:
        refs = {}
        for part in ("queries.npy", "queries.ids.txt", "docs.npy", "docs.ids.txt"):
            path = f"vectors/{name}.{part}"
            refs[part] = store.add_file(path, (loading.SAMPLE_DIR / path).read_bytes())
        meta = read_sidecar(loading.SAMPLE_DIR / f"{name}.meta.json")
        out.append(VectorModel(name, meta["model"], refs["queries.npy"], refs["docs.npy"], refs["queries.ids.txt"],
                               refs["docs.ids.txt"], sample=True))
    return tuple(out)


def _sample_real_dims() -> dict[str, int]:
    return {name: int(json.loads((loading.SAMPLE_DIR / f"{name}.meta.json").read_text(encoding="utf-8"))["dims"])
            for name in SAMPLE_MODELS}


def real_dims(model: VectorModel) -> int | None:
    """The real model's dimensions when ``model`` is one of the sample's (whose vectors are smaller stand-ins)."""
    return _sample_real_dims().get(model.name) if model.sample else None


def stand_ins(models: Sequence[VectorModel], shown: dict[str, int]) -> str | None:
    """The sentence saying the sample's vectors are smaller stand-ins (``shown``: each model's vectors' dims on this
    page), or None when no sample model is shown or none is a stand-in."""
    real = _sample_real_dims()
    pairs = [(m.name, shown[m.name], real[m.name]) for m in models
             if m.sample and m.name in shown and m.name in real and shown[m.name] != real[m.name]]
    if not pairs:
        return None
    listed = "; ".join(f"{name}: {plural(ours, 'number')} here, {theirs:,} in the real model"
                       for name, ours, theirs in pairs)
    return ("The sample's vectors are small stand-ins, made so this page answers in seconds: each model's vectors "
            f"here are shorter than the real model's, which the Data page names ({listed}). Sizes and speeds on "
            "this page are those of the stand-ins; your own vectors, uploaded below, are measured as they are.")


def sample_models(dataset: Dataset) -> tuple[VectorModel, ...]:
    """The sample's three models, when the data set's labels are the sample's (their queries are theirs)."""
    if dataset.labels.sha256 != loading.sample_dataset().labels.sha256:
        return ()
    return caching.kept(_sample_models, entries=None)(str(loading.workspace_location()))


def vectors(ref: FileRef, ids: FileRef | None = None) -> Loaded:
    """One vectors file read (float32), or the one-line message naming the file and row; read once per content
    (`dashboard.caching`)."""
    return caching.kept(read_vectors_file, entries=16, spinner="Reading the vectors…")(ref, ids)


def read_vectors_file(ref: FileRef, ids: FileRef | None = None) -> Loaded:
    """One vectors file read (float32) with its ids file, or the one-line message naming the file and row."""
    def read():
        raw = loading.file_bytes(ref)
        if raw is None:
            raise EvalcoreError(f"{ref.name}: this server no longer holds the file (upload it again)")
        id_bytes = loading.file_bytes(ids) if ids is not None else None
        return read_vectors(raw, ids=id_bytes, name=ref.name)
    return loading.load(read)


def check_model(model: VectorModel) -> Loaded:
    """Both files of a model read and of the same dimensions (the dims, or the first problem)."""
    queries, docs = vectors(model.queries, model.query_ids), vectors(model.docs, model.doc_ids)
    for loaded in (queries, docs):
        if not loaded.ok:
            return loaded
    return loading.attempt(lambda: check_dimensions(queries.value, docs.value) or docs.value.dims)


RESCORE_CANDIDATES = 400
"""With rescoring on: the binary index's top 400 candidates per query are rescored with the float vectors (4x the
dashboard's depth of 100)."""


def settings_for(dims: Sequence[str], precisions: Sequence[str], similarity: str, k: int,
                 rescore: int = 0) -> IndexSizeSettings:
    """The study's settings from the page's controls: every variant searched to the dashboard's depth, reported at
    recall@k (with recall@1 and MRR beside it)."""
    return IndexSizeSettings(dims=tuple(dims) or ("full",), precisions=tuple(precisions) or ("float32",),
                             similarity=similarity, depth=DEPTH, rescore=int(rescore),
                             k=(1, k) if k > 1 else (1,), metric=f"recall@{k}")


def _study_key(dataset: Dataset, model: VectorModel, settings: IndexSizeSettings) -> tuple:
    """A study depends on the labels (not the runs loaded): adding a variant to the runs keeps every study."""
    return (dataset.labels.sha256, dataset.labels.format), model.key, repr(settings)


def cached_study(dataset: Dataset, model: VectorModel, settings: IndexSizeSettings) -> Loaded | None:
    """The study if it was already computed (None: it must be searched)."""
    found = jobs.started("index_study", _study_key(dataset, model, settings))
    return found.result() if found is not None and found.done() else None


def study(dataset: Dataset, model: VectorModel, settings: IndexSizeSettings,
          progress: Callable[[float, str], None] | None = None, *, refused: str | None = None) -> Loaded:
    """One model's variants searched for every scored query and reported against its full vectors: an
    `IndexSizeStudy`, or the problem. Computed here (the page shows ``progress``), then kept for every session.
    ``refused``: why this person may not build approximate indexes (`evalcore.access.ACTIONS` ``build_index``): a
    study that would build one is then not computed, and that sentence is the problem (one already kept is shown)."""
    found = cached_study(dataset, model, settings)
    if found is not None:
        return found
    if refused and settings.indexes:
        return Loaded(error=refused)
    loaded = loading.attempt(_compute, dataset, model, settings, progress)
    jobs.put("index_study", _study_key(dataset, model, settings), KEEP, loaded)
    return loaded


class _Builds:
    """Built indexes of one model's doc vectors, kept by the files' hashes and the build's key in the server's one
    bounded store (`dashboard.caching.built_indexes`: the last few, within the index memory budget)."""

    def __init__(self, model: VectorModel) -> None:
        self.model = model.key

    def get(self, key: tuple) -> tuple | None:
        return caching.built_indexes().get((self.model, key))

    def __setitem__(self, key: tuple, value: tuple) -> None:
        caching.built_indexes()[(self.model, key)] = value


def _compute(dataset: Dataset, model: VectorModel, settings: IndexSizeSettings, progress) -> IndexSizeStudy:
    scope, labels = loading.scope(dataset), loading.labels(dataset.labels)
    queries, docs = vectors(model.queries, model.query_ids), vectors(model.docs, model.doc_ids)
    for loaded in (labels, scope, queries, docs):
        if not loaded.ok:
            raise EvalcoreError(loaded.error)
    return index_size_study(labels.value, scope.value, queries.value, docs.value, settings, model=model.model,
                            prefix=f"{model.name}-", progress=progress, builds=_Builds(model))


def take(report: IndexSizeReport) -> str:
    """The index to take from one study, in the sentence ``evalcore vectors`` opens on
    (`evalcore.analyses.index_choice`)."""
    return index_choice_line(index_choice(report))


def take_line(reports: dict[str, IndexSizeReport]) -> str:
    """The index to take, first on the page: for one model, the sentence of `take`; for several, one line naming
    each model's (each model's sentence follows under its name), so the chart stays on the first screen."""
    if len(reports) == 1:
        return take(next(iter(reports.values())))
    picks = []
    for name, report in reports.items():
        choice = index_choice(report)
        picks.append(f"{name}: the full vectors" if choice.is_reference else
                     f"{name}: {choice.take.variant.words} ({times(choice.ratio)} smaller)")
    metric = next(iter(reports.values())).metric
    return f"Take the smallest index no worse than the full vectors on {metric}: " + "; ".join(picks) + "."


def points(reports: dict[str, IndexSizeReport]) -> pd.DataFrame:
    """Every model's variants for the frontier chart and the table (`evalcore.report.index_size.index_size_points`),
    ``name`` the model on the page."""
    return pd.concat([index_size_points(report).assign(name=name) for name, report in reports.items()],
                     ignore_index=True)


VARIANT_COLUMNS = {"name": "model name", "variant": "variant", "dims": "dims", "precision": "precision",
                   "index_mb": "index MB", "ratio": "x smaller", "metric": "metric", "mean": "mean", "ci_low": "ci_low",
                   "ci_high": "ci_high", "n": "n", "model": "model", "frontier": "frontier"}
"""The variants table's columns (from `points`) and what the page calls them."""


def variants_table(frame: pd.DataFrame, labels_ref: str) -> pd.DataFrame:
    """Every variant of every model shown (``frame``: `points`) as the page's table, the labels beside n."""
    table = frame[list(VARIANT_COLUMNS)].rename(columns=VARIANT_COLUMNS)
    table.insert(table.columns.get_loc("n") + 1, "labels", labels_ref)
    return table


def full_vectors(model: VectorModel, report: IndexSizeReport, k: int) -> str:
    """What a model's full vectors are and score, the reference of its variants: ``full vectors 64 dims (the
    sample's stand-in for 1,024), recall@10 0.612``."""
    dims, real, metric = report.reference.variant.dims, real_dims(model), f"recall@{k}"
    stand_in = f" (the sample's stand-in for {real:,})" if real and real != dims else ""
    return f"full vectors {dims} dims{stand_in}, {metric} {report.metrics(report.reference)[metric]['mean']:.3f}"


def owner_of(frame: pd.DataFrame, run_name: str) -> str:
    """The model (its name on the page) whose variant the run ``run_name`` of ``frame`` (`points`) is."""
    return str(frame.loc[frame["run"] == run_name, "name"].iloc[0])


def variant_dataset(dataset: Dataset, report: IndexSizeReport, run_name: str) -> Dataset:
    """The data set with one variant's run added to its runs, as an uploaded TREC file (stored like an upload)."""
    item = next(v for v in report.variants if v.name == run_name)
    name = unique_name(item.name, dataset.run_names)
    ref = loading.uploads().add_file(f"{name}.trec", trec_text(item.run).encode("utf-8"), session=loading.session())
    spec = RunSpec(file=ref, name=name, model=item.run.model, dims=item.variant.dims, index_bytes=item.index_bytes)
    return dataset.with_runs(tuple(dataset.runs) + (spec,))


def _remembered() -> dict:
    """Uploaded models by key, per workspace: a team's keys never name another team's models."""
    return caching.held("index_size.models")


def remember_models(models: Sequence[VectorModel]) -> str:
    """A short key for the uploaded models (what the URL holds as ``vectors``), their manifest kept in the
    workspace's database (a reload or a copied link finds them, and the clean-up of unused files keeps the vector
    files it names); held in memory when the workspace cannot take it."""
    manifest = models_manifest(models)
    key = content_key(manifest)
    _remembered()[key] = tuple(m for m in models if not m.sample)
    door = loading.session()
    if door is not None and door.may("upload"):
        try:
            door.store_view("vector_models", key, manifest)
        except WorkspaceError:
            pass  # held in memory: the page works until the server restarts
    return key


def remembered_models(key: str | None) -> tuple[VectorModel, ...]:
    """The uploaded models a ``vectors`` key names (none for an unknown key)."""
    if not key or not all(c in "0123456789abcdef" for c in str(key)):
        return ()
    found = _remembered().get(key)
    if found is not None:
        return found
    workspace = loading.uploads().workspace
    if workspace is None:
        return ()
    try:
        models = tuple(VectorModel.from_manifest(m) for m in workspace.manifest("vector_models", key) or ())
    except (WorkspaceError, KeyError, TypeError):
        return ()
    _remembered()[key] = models
    return models


def upload_model(name: str, queries, docs, query_ids=None, doc_ids=None) -> Loaded:
    """A model from uploaded files (stored like every upload before they are read), checked; or the problem."""
    refs = [None if f is None else loading.upload_ref(f) for f in (queries, docs, query_ids, doc_ids)]
    model = VectorModel(name.strip() or refs[1].name.split(".")[0], name.strip() or refs[1].name.split(".")[0],
                        refs[0], refs[1], refs[2], refs[3])
    checked = check_model(model)
    return Loaded(model) if checked.ok else checked


# ----------------------------------------------------------------------------- the approximate index


INDEX_KINDS = tuple(KINDS)
"""The index types a sweep may use (`evalcore.vectors.index_spec.KINDS`): hnsw, hnsw-sq8, ivf, ivfpq."""
SWEEP_CHOICES = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512)
DEFAULT_SWEEP = {"ef": (8, 16, 32), "nprobe": (1, 2, 4)}
"""Three settings of the search parameter by default: enough for a curve, quick on the sample."""
DEFAULT_BUILD = {"nlist": 32}
"""Build parameters the page sets other than the SPEC's own defaults: 32 lists suit the sample's 503 docs."""
BUILD_THREADS = 1
"""Indexes are built on one thread: the same vectors and SPEC give the same index every time (and the same as the
one kept), whoever opens the page."""
AGAINST = ("latency", "memory")
BUILD_HELP = {"m": "HNSW: links per doc in the graph (more: better recall, a larger index). IVF-PQ: parts each "
                   "vector is cut into, one byte each; must divide the dimensions.",
              "efc": "Candidates kept while the HNSW graph is built (more: a better graph, a slower build).",
              "nlist": "Lists the docs are split into (about the square root of the docs is usual).",
              "nbits": "Bits per code of each PQ part (8: 256 codes)."}
"""What each build parameter does, for its input's help."""


def bounds(kind: str, name: str) -> tuple[int, int | None]:
    """The least and the most a build parameter's input takes (`evalcore.vectors.index_spec.Bound`: the same ranges
    as ``evalcore vectors --index``; None where only the vectors bound it, checked by `check_sweep`)."""
    bound = KINDS[kind].bound(name)
    return bound.least, bound.most


def from_link(kind: str, name: str, asked: str, default: int) -> tuple[int, str | None]:
    """The value of a build parameter the URL asks for (``asked``; ``default`` when it says none), within its range,
    and the sentence saying it was brought into range (None when it was in range)."""
    least, most = bounds(kind, name)
    text = str(asked).strip()
    if not text:
        return default, None
    digits = text.lstrip("0") or "0"
    if not (text.isascii() and text.isdigit()):
        return default, f"The link's {name} = {text[:40]!r} is not a whole number: {default:,} is used."
    shown = f"{int(digits):,}" if len(digits) <= MOST_DIGITS else f"a number of {len(digits):,} digits"
    if most is None and len(digits) > MOST_DIGITS:
        return default, f"The link's {name} = {shown} is more than any vectors' dimensions: {default:,} is used."
    if most is not None and (len(digits) > MOST_DIGITS or int(digits) > most):
        return most, (f"The link's {name} = {shown} is over the most this page builds, {most:,} "
                      f"({KINDS[kind].bound(name).why}): {most:,} is used.")
    if int(digits) < least:
        return least, f"The link's {name} = {int(digits):,} is under the least, {least:,}: {least:,} is used."
    return int(digits), None


def check_sweep(model: VectorModel, specs: Sequence[str]) -> str | None:
    """Why the sweep's indexes cannot be built on ``model``'s doc vectors (a SPEC out of range for them, or an index
    over the memory budget, `evalcore.vectors.index_spec.IndexSpec.check`), in one sentence; None when they can. Read
    before anything is built."""
    docs = vectors(model.docs, model.doc_ids)
    if not docs.ok:
        return docs.error
    settings = sweep_settings(specs, "cosine", 1)
    checked = loading.attempt(check_indexes, settings, docs.value.n, docs.value.dims)
    return checked.error


def index_title(kind: str) -> str:
    return KINDS[kind].title


def search_param(kind: str) -> str:
    """``ef`` for HNSW, ``nprobe`` for IVF."""
    return KINDS[kind].search_param


def build_params(kind: str) -> list[tuple[str, int]]:
    """The parameters of ``kind``'s build (all but the search setting) with the page's defaults."""
    info = KINDS[kind]
    return [(name, DEFAULT_BUILD.get(name, default)) for name, default in info.params if name != info.search_param]


def sweep_specs(kind: str, build: dict[str, int], values: Sequence[int], dims: str = "full") -> tuple[str, ...]:
    """One SPEC per search setting, as ``evalcore vectors --index`` takes them (``ivf:nlist=32:nprobe=1``, ...): the
    parameters in the SPEC's order, those at the SPEC's own default left out."""
    info, knob = KINDS[kind], search_param(kind)
    out = []
    for value in sorted(set(map(int, values))):
        chosen = {**build, knob: int(value)}
        parts = [f"{name}={chosen[name]}" for name, default in info.params
                 if name == knob or chosen.get(name, default) != default]
        out.append(":".join([kind, *parts] + ([] if str(dims) == "full" else [f"dims={int(dims)}"])))
    return tuple(out)


def sweep_settings(specs: Sequence[str], similarity: str, k: int) -> IndexSizeSettings:
    """The study of a sweep: exact float32 search (the reference, and the ceiling at the sweep's dims) and each
    SPEC, built on `BUILD_THREADS`, reported at recall@k."""
    return IndexSizeSettings(dims=("full",), precisions=("float32",), indexes=tuple(specs),
                             build_threads=BUILD_THREADS, similarity=similarity, depth=DEPTH,
                             k=(1, k) if k > 1 else (1,), metric=f"recall@{k}")


def sweep_points(report: IndexSizeReport) -> pd.DataFrame:
    """The sweep's rows for the speed chart and its table: the exact search its indexes are measured against and
    each index, with ``setting`` (``ef = 32``) and the report's speed and loss columns."""
    frame = report.points()
    exact_names = {loss.exact for name, loss in report.losses.items()
                   if not next(v for v in report.variants if v.name == name).variant.is_exact}
    by_name = {v.name: v for v in report.variants}
    keep = [not by_name[r].variant.is_exact or r in exact_names for r in frame["run"]]
    frame = frame[keep].copy()
    frame["setting"] = [("exact search" if by_name[r].variant.is_exact else
                         f"{by_name[r].variant.index.info.search_param} = "
                         f"{by_name[r].variant.index.value(by_name[r].variant.index.info.search_param)}")
                        for r in frame["run"]]
    return frame


SETTING_COLUMNS = ["run", "setting", "metric", "mean", "ci_low", "ci_high", "neighbor_recall", "neighbor_recall_p5",
                   "lost", "queries_per_second", "latency_p50_ms", "latency_p99_ms", "build_seconds", "index_mb", "n",
                   "model"]


def settings_table(sweep: pd.DataFrame, k: int, labels_ref: str) -> pd.DataFrame:
    """Every setting of a sweep (``sweep``: `sweep_points`) as the page's table: recall@k, neighbour recall, lost
    queries, speed and size, the labels beside n."""
    table = sweep[SETTING_COLUMNS].rename(columns={
        "mean": f"recall@{k}", "neighbor_recall": f"neighbour recall@{k}",
        "neighbor_recall_p5": "5th percentile", "lost": "lost queries", "queries_per_second": "queries/s (1 thread)",
        "latency_p50_ms": "p50 ms", "latency_p99_ms": "p99 ms", "build_seconds": "build s", "index_mb": "index MB"})
    table.insert(table.columns.get_loc("n") + 1, "labels", labels_ref)
    return table


def lost_queries(dataset: Dataset, report: IndexSizeReport) -> pd.DataFrame:
    """Every query an index loses, with the setting that loses it and what the customer typed: setting, run,
    query, query_text (in the labels' order, setting by setting)."""
    labels = loading.labels(dataset.labels)
    texts = labels.value.field("query_text") if labels.ok else None
    rows = []
    for item in report.variants:
        loss = report.losses.get(item.name)
        if item.variant.is_exact or loss is None:
            continue
        for query in loss.lost:
            text = texts.get(query) if texts is not None else None
            rows.append({"setting": item.variant.words, "run": item.name, "query": query,
                         "query_text": "" if text is None or pd.isna(text) else str(text)})
    return pd.DataFrame(rows, columns=["setting", "run", "query", "query_text"])


def beside_exact(dataset: Dataset, report: IndexSizeReport, run_name: str) -> tuple[Dataset, list[str]]:
    """The data set with an index's run and the exact search it is measured against added to its runs (a run
    already there with the same content is used as it is), and the two run names, exact first: what Failures
    shows side by side."""
    item = next(v for v in report.variants if v.name == run_name)
    exact = report.exact_for(item)
    names = []
    for added in (exact, item):
        text = trec_text(added.run).encode("utf-8")
        digest = hashlib.sha256(text).hexdigest()
        same = next((r for r in dataset.runs if r.file.sha256 == digest), None)
        if same is None:
            name = unique_name(added.name, dataset.run_names)
            ref = loading.uploads().add_file(f"{name}.trec", text, session=loading.session())
            same = RunSpec(file=ref, name=name, model=added.run.model, dims=added.variant.dims,
                           index_bytes=added.index_bytes)
            dataset = dataset.with_runs(tuple(dataset.runs) + (same,))
        names.append(same.name)
    return dataset, names


def register(dataset: Dataset) -> str:
    """Keep the data set with a variant added; its key goes in the URL."""
    return loading.register(dataset)
