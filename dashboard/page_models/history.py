"""The History page's model: a model line's metrics over its runs with the context they carry, what the latest run
changed, the line's failure ledger (read from the workspace through `dashboard.saved`), and the meeting report of a
saved evaluation."""

from __future__ import annotations

import base64
from dataclasses import dataclass
from typing import Any, Callable

import pandas as pd

from evalcore.report.amounts import format_interval
from evalcore.metrics.dataset import Dataset
from evalcore.warning_log import plural

from dashboard import loading, saved
from dashboard.page_models import choose_k


@dataclass(frozen=True)
class LineHistory:
    """One line's metrics over its runs: the rows shown (metrics chosen), their context sentence, the label set."""

    table: pd.DataFrame
    context: str
    label_set: str
    metrics_known: list[str]
    metrics_main: list[str]


def metric_choices(history: pd.DataFrame) -> tuple[list[str], list[str]]:
    """Every metric a line's saved history holds, in order, and those shown until the person picks: recall@k and MRR
    (every metric when it holds neither)."""
    known = list(dict.fromkeys(history["metric"]))
    return known, [m for m in known if m.startswith("recall@") or m == "mrr"] or known


def line_history(history: pd.DataFrame, line: str, metrics: list[str] | None) -> LineHistory:
    """The rows of ``metrics`` (default recall@k and MRR) of a line's saved history, with every label version and
    fingerprint they were measured on said."""
    label_set = str(history["labels"].iloc[-1])
    versions = sorted(set(int(v) for v in history["labels_version"]))
    known, main = metric_choices(history)
    fingerprint = dict(zip(history["labels_version"].astype(int), history["fingerprint"].astype(str)))
    shown = history[history["metric"].isin(metrics or main)]
    context = (f"line {line} · {plural(shown['run_id'].nunique(), 'run')} · labels {label_set} "
               f"v{', v'.join(str(v) for v in versions)} · n = "
               + ", ".join(f"{int(n):,}" for n in sorted(set(shown["n"]))) + " queries · 95% intervals (seed "
               + ", ".join(str(int(s)) for s in sorted(set(shown["seed"]))) + ") · label fingerprint "
               + ", ".join(f"v{v} {label_set}#{fingerprint[v]}" for v in versions))
    if len(versions) > 1:
        context += " · the label set changed between runs: compare across versions with care"
    table = shown.assign(interval=[format_interval(lo, hi) for lo, hi in zip(shown["ci_low"], shown["ci_high"])])
    return LineHistory(table, context, label_set, known, main)


@dataclass(frozen=True)
class Ledger:
    """A line's failure ledger as the page shows it: every query that failed at some point, and what it says."""

    table: pd.DataFrame
    caption: str
    n_open: int
    k: int | None  # the k the ledger's failures are counted at (None: nothing failed yet)


def ledger(frame: pd.DataFrame, label_set: str) -> Ledger:
    """The ledger ``frame`` (`dashboard.saved.ledger`) with its caption: how many queries failed, how many are open,
    at which k, on which label set."""
    n_open = int(frame["open"].sum()) if len(frame) else 0
    k = int(frame["k"].iloc[0]) if len(frame) else None
    caption = (f"{plural(len(frame), 'query', 'queries')} failed at some point, {n_open:,} open · regressions first · "
               f"a query fails when no relevant doc is in the top k (k = {k}) · labels {label_set} · edit status, "
               "cause tags and notes on the Failures page (open the query)")
    return Ledger(frame, caption, n_open, k)


def evaluation_ids(evaluations: pd.DataFrame) -> list[int]:
    """The saved evaluations of a line, newest first (what the report's choice offers)."""
    return evaluations["id"].astype(int).tolist()[::-1]


def documents_for(data_key: str | None, evaluation_id: int):
    """The current data set's documents, when they belong to this evaluation's runs (for the cost of k)."""
    dataset, _ = loading.resolve(data_key)
    if dataset.documents is None:
        return None
    run_files = saved.evaluation_run_files(evaluation_id)
    if not run_files or not run_files <= {r.file.sha256 for r in dataset.runs}:
        return None
    docs = loading.documents(dataset.documents)
    return docs.value if docs.ok else None


@dataclass(frozen=True)
class InView:
    """The data on screen as History sees it: its saved evaluation (None until one holds exactly its labels and
    runs) and the model line History opens on."""

    dataset: Dataset
    name: str  # how the page names the data: the sample, or the labels file and runs
    evaluation_id: int | None
    line: str | None  # the line of its first saved run, None when no run of it is saved


def in_view(data_key: str | None) -> InView:
    """Whether the data on screen (`loading.resolve`: the root address's is the data loaded last) has a saved
    evaluation, and its first run's model line."""
    dataset, _ = loading.resolve(data_key)
    found = saved.saved_runs(dataset)
    ids = {found[r.name].evaluation_id for r in dataset.runs if r.name in found}
    whole = len(found) == len(dataset.runs) and len(ids) == 1
    line = next((found[r.name].line for r in dataset.runs if r.name in found), None)
    name = ("the sample data" if dataset.sample else
            f"labels {dataset.labels.name} with runs {', '.join(r.name for r in dataset.runs)}")  # a FileRef's name
    return InView(dataset, name, ids.pop() if whole else None, line)


def prepare_report(data_key: str | None, evaluation_id: int, read: Callable[[str], Any]) -> loading.Loaded:
    """The meeting report of a saved evaluation, recomputed from its stored files (same seed, same numbers), with
    the k settings the person gave on Choose k (``read``: the session's selections), so its k to take is the page's."""
    dataset, _ = loading.resolve(data_key)
    settings = choose_k.settings_from(read, choose_k.can_size_chunks(dataset))
    return saved.report(evaluation_id, None, docs=documents_for(data_key, evaluation_id), settings=settings)


def markdown_with_charts(report) -> str:
    """The Markdown report as one file: its charts embedded as PNG data URIs."""
    images = {name: "data:image/png;base64," + base64.b64encode(png).decode("ascii")
              for name, png in report.chart_pngs().items()}
    return report.to_markdown(images)
