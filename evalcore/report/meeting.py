"""A one-page report for a meeting: leaderboard, paired comparison, the chosen k and its cost, the top
open failures, how each model line moved, and where every number came from.

`build_report` takes an `Evaluation` (and optionally the failure ledger, history and provenance);
`report_from_workspace` fills those from a saved evaluation. The `MeetingReport` renders as
Markdown (`to_markdown`), as one self-contained HTML file (`to_html`: charts are PNGs made with
vl-convert and embedded as data URIs) and as a CSV of failures (`failures_csv`, formula-safe).

Safety: every piece of user text (run and model names, query text, notes, tags) is escaped with
`html.escape` in HTML and with `evalcore.safe_text.md_text` in Markdown; text evalcore writes itself
(numbers, metric names) is marked `Safe`. Every number travels with its context (SPEC.md §3):
metric and k, n, model, label set name, version and fingerprint, interval level and seed.
"""

from __future__ import annotations

import base64
import hashlib
import html
import math
import os
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Mapping, Sequence

import numpy as np
import pandas as pd

from ..analyses.budget import DEFAULT_MAX_K, BudgetReport, k_budget
from ..analyses.compare import ComparisonReport, compare_evaluation
from ..analyses.failures import missed_queries
from ..errors import UsageError, invalid_parameter
from ..metrics.evaluation import Evaluation
from ..metrics.measures import DESCRIPTIONS, Measure
from ..safe_text import md_text, to_csv
from ..store.workspace import Workspace
from ..version import __version__

FAILURE_COLUMNS = [
    "run", "model", "line", "query", "query_text", "source", "status", "regressed", "first_rank", "n_relevant",
    "since", "tags", "note", "k", "n", "labels", "labels_version", "fingerprint",
]
"""Columns of `MeetingReport.failures` and of the failures CSV."""

UNTRACKED = "untracked"
"""Status of a failure when the evaluation is not in a workspace (no ledger to say more)."""

_OPEN = ("regressed", "new", "known", UNTRACKED)
_CHART_SCALE = 2
_STATUS_ORDER = {"regressed": 0, "new": 1, "known": 2, UNTRACKED: 3, "won't fix": 4, "fixed": 5}


class Safe(str):
    """Text evalcore wrote itself (numbers, metric names): shown as is in Markdown. Everything else is
    user text and is escaped."""


def _md(value: object) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    return str(value) if isinstance(value, Safe) else md_text(value)


def _h(value: object) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    return html.escape(str(value), quote=True)


# ----------------------------------------------------------------------------- the report


@dataclass(frozen=True)
class MeetingReport:
    """Everything on the page, as values; render with `to_markdown`, `to_html`, `failures_csv`."""

    title: str
    generated_at: str
    k: int
    leaderboard: pd.DataFrame
    metrics: tuple[str, ...]
    comparison: "ComparisonReport | None"
    budget: "BudgetReport | None"
    failures: pd.DataFrame
    top_failures: int
    history: pd.DataFrame | None
    provenance: dict
    warnings: tuple[str, ...] = ()
    notes: tuple[str, ...] = field(default=())

    # ------------------------------------------------------------------ renderers

    def failures_csv(self) -> str:
        """Every failure at k (not only the top ones) with its context, formula-safe."""
        return to_csv(self.failures[FAILURE_COLUMNS])

    def chart_specs(self) -> dict[str, dict]:
        """Vega-Lite specs (plain dicts) of the charts: ``leaderboard`` and, with history, ``history``."""
        specs = {"leaderboard": _leaderboard_spec(self)}
        if self.history is not None and not self.history.empty and self.history["step"].max() > 1:
            specs["history"] = _history_spec(self)
        return specs

    def chart_pngs(self, scale: int = 2) -> dict[str, bytes]:
        """The charts as PNG bytes (vl-convert). Empty when vl-convert-python is not installed."""
        try:
            import vl_convert
        except ImportError:
            return {}
        return {name: bytes(vl_convert.vegalite_to_png(spec, scale=scale)) for name, spec in self.chart_specs().items()}

    def to_markdown(self, images: Mapping[str, str] | None = None) -> str:
        """Markdown; ``images`` maps chart names to image paths or URLs to link (none by default)."""
        return _render_markdown(self, dict(images or {}))

    def to_html(self, charts: bool = True) -> str:
        """One self-contained HTML page; charts embedded as PNG data URIs (unless ``charts`` is False)."""
        pngs = self.chart_pngs(_CHART_SCALE) if charts else {}
        notes = list(self.notes)
        if charts and not pngs:
            notes.append("Charts left out: vl-convert-python is not installed (pip install 'evalcore[dashboard]').")
        return _render_html(self, pngs, notes)

    def write(self, path: str | os.PathLike, *, charts: bool = True) -> list[Path]:
        """Write the report by extension: ``.html``/``.htm`` one file; ``.md`` the Markdown plus one PNG per
        chart beside it (``<stem>-leaderboard.png``). Returns the paths written."""
        target = Path(path)
        suffix = target.suffix.lower()
        if suffix in (".html", ".htm"):
            target.write_text(self.to_html(charts=charts), encoding="utf-8")
            return [target]
        if suffix not in (".md", ".markdown"):
            raise invalid_parameter("output", "a file name ending in .html, .htm or .md", str(path))
        written, images = [], {}
        if charts:
            for name, png in self.chart_pngs().items():
                image = target.with_name(f"{target.stem}-{name}.png")
                image.write_bytes(png)
                written.append(image)
                images[name] = image.name
        target.write_text(self.to_markdown(images), encoding="utf-8")
        return [target] + written


def build_report(
    evaluation: Evaluation,
    *,
    k: int | None = None,
    docs=None,
    chunk_tokens: int | None = None,
    price_per_mtok: float | None = None,
    requests_per_month: float | None = None,
    baseline: str | None = None,
    top_failures: int = 5,
    title: str | None = None,
    failures: pd.DataFrame | None = None,
    history: pd.DataFrame | None = None,
    provenance: dict | None = None,
) -> MeetingReport:
    """The report of one evaluation at the chosen cutoff ``k`` (default: its largest k).

    ``docs`` (or ``chunk_tokens``) adds the cost of k (`evalcore.analyses.budget.k_budget`, with
    ``price_per_mtok`` and ``requests_per_month``). ``baseline`` is the run the others are
    compared with (default: the first). ``failures`` (columns `FAILURE_COLUMNS`, from the ledger)
    and ``history`` (`Workspace.history` rows) come from a workspace; without ``failures`` the
    queries each run misses at k (hit@k = 0) are listed as untracked. ``provenance`` overrides
    what is said about where the inputs came from.
    """
    depth = min(r.depth for r in evaluation.results)
    chosen = max(evaluation.ks) if k is None else k
    if isinstance(chosen, bool) or not isinstance(chosen, (int, np.integer)) or not 1 <= int(chosen) <= depth:
        raise invalid_parameter("k", f"an integer between 1 and {depth} (the depth this evaluation was scored to)", k)
    chosen = int(chosen)
    if isinstance(top_failures, bool) or not isinstance(top_failures, int) or top_failures < 0:
        raise invalid_parameter("top_failures", "an integer >= 0", top_failures)
    if baseline is not None and baseline not in evaluation.run_names:
        raise UsageError(f"No run named {baseline!r} to use as baseline; runs are: {', '.join(evaluation.run_names)}.")
    metrics = tuple(dict.fromkeys(["recall@1", f"recall@{chosen}", f"hit@{chosen}", "mrr"]))
    provenance = dict(provenance) if provenance is not None else default_provenance(evaluation)
    provenance.setdefault("generated_at", _now())
    provenance["settings"] = {**evaluation.settings(), "chosen_k": chosen, **provenance.get("settings", {})}
    leaderboard = _leaderboard(evaluation, metrics, chosen, provenance)

    comparison = None
    if len(evaluation.results) >= 2:
        compared = tuple(dict.fromkeys(["recall@1", f"recall@{chosen}", "mrr"]))
        comparison = compare_evaluation(evaluation, list(compared), baseline or evaluation.run_names[0])

    budget = None
    if docs is not None or chunk_tokens is not None:
        budget = k_budget(evaluation, docs=docs, chunk_tokens=chunk_tokens, max_k=max(DEFAULT_MAX_K, chosen),
                          price_per_mtok=price_per_mtok, requests_per_month=requests_per_month,
                          level=evaluation.level, rng=evaluation.seed)
        provenance["budget"] = {key: budget.settings.get(key) for key in
                                ("documents", "tokenizer", "price_per_mtok", "price_source", "requests_per_month",
                                 "max_k", "lambda", "lambda_source", "seed")}

    if failures is None:
        failures = untracked_failures(evaluation, chosen, provenance)
    missing = [c for c in FAILURE_COLUMNS if c not in failures.columns]
    if missing:
        raise invalid_parameter("failures", "a table with the columns " + ", ".join(FAILURE_COLUMNS),
                                "missing " + ", ".join(missing))
    labels = provenance["labels"]
    version = f" v{labels['version']}" if labels.get("version") is not None else ""
    return MeetingReport(
        title=title or f"Retrieval quality: {labels['name']}{version}, k = {chosen}",
        generated_at=provenance["generated_at"], k=chosen, leaderboard=leaderboard, metrics=metrics,
        comparison=comparison, budget=budget, failures=_order_failures(failures), top_failures=top_failures,
        history=history, provenance=provenance,
        warnings=tuple(f"[{w.code}] x{w.count}: {w.message}" for w in evaluation.all_warnings)
        + (tuple(f"[{w.code}] x{w.count}: {w.message}" for w in budget.warnings if w.code not in
                 {x.code for x in evaluation.all_warnings}) if budget is not None else ()),
    )


def report_from_workspace(workspace: "Workspace", evaluation: int | str = "latest", *, k: int | None = None,
                          **options) -> MeetingReport:
    """The report of a saved evaluation: recomputed from its stored files (same seed, same numbers), its
    failures annotated from the ledger (status, tags, notes, regressions in each run), each model
    line's history, and the stored provenance. ``options`` are those of `build_report`."""
    saved = workspace.evaluation(evaluation)
    chosen = saved.k if k is None else k
    depth = max(saved.ks)
    if isinstance(chosen, bool) or not isinstance(chosen, (int, np.integer)) or not 1 <= int(chosen) <= depth:
        raise invalid_parameter("k", f"an integer between 1 and {depth} (the depth evaluation {saved.id} was scored "
                                     "to)", k)
    chosen = int(chosen)
    computed = workspace.load_evaluation(saved.id)
    provenance = {
        "evaluation": {"id": saved.id, "saved_at": saved.created_at, "workspace": str(workspace.location),
                       "note": saved.note, "evalcore_version": saved.evalcore_version},
        "labels": {"name": saved.labels.name, "version": saved.labels.version,
                   "fingerprint": saved.labels.fingerprint, "n_labeled": saved.labels.n_queries,
                   "n_evaluated": saved.n_queries, "file": saved.labels.source_name,
                   "sha256": saved.labels_file_sha256 or saved.labels.source_sha256,
                   "change": saved.labels.change},
        "runs": [{"name": r.name, "model": r.model, "line": r.line, "file": r.file_name, "sha256": r.file_sha256,
                  "uploaded_at": r.uploaded_at, "price_per_mtok": r.price_per_mtok, "dims": r.dims,
                  "index_bytes": r.index_bytes, "n_queries": r.n_queries, "run_id": r.id} for r in saved.runs],
    }
    failures = _ledger_failures(workspace, saved, computed, chosen)
    histories = []
    for line in dict.fromkeys(r.line for r in saved.runs):
        frame = workspace.history(line, [f"recall@{chosen}"], labels=saved.labels.name)
        if not frame.empty:
            histories.append(frame)
    history = pd.concat(histories, ignore_index=True) if histories else None
    return build_report(computed, k=chosen, failures=failures, history=history, provenance=provenance, **options)


# ----------------------------------------------------------------------------- building blocks


def default_provenance(evaluation: Evaluation) -> dict:
    """Where the numbers came from when there is no workspace: file names and their SHA-256."""
    labels = evaluation.labels
    return {
        "evaluation": None,
        "labels": {"name": labels.name, "version": None, "fingerprint": labels.fingerprint,
                   "n_labeled": labels.n_queries, "n_evaluated": evaluation.results[0].n_queries,
                   "file": labels.source, "sha256": _file_sha(labels.source), "change": None},
        "runs": [{"name": r.name, "model": r.model, "line": r.model, "file": r.run.source,
                  "sha256": _file_sha(r.run.source), "uploaded_at": None, "price_per_mtok": r.run.price_per_mtok,
                  "dims": r.run.dims, "index_bytes": r.run.index_bytes, "n_queries": r.run.n_queries,
                  "run_id": None} for r in evaluation.results],
        **_split_provenance(evaluation),
    }


def _split_provenance(evaluation: Evaluation) -> dict:
    """``{"split": ...}`` when the numbers are on one side of a tune/holdout split (or all queries, revealed)."""
    split = getattr(evaluation, "split", None)
    if split is None or split.split is None:
        return {}
    return {"split": {**split.to_dict(), "headline": split.headline}}


def untracked_failures(evaluation: Evaluation, k: int, provenance: dict | None = None) -> pd.DataFrame:
    """The queries each run misses at k (no relevant doc in the top k), without a ledger."""

    provenance = provenance or default_provenance(evaluation)
    missed = missed_queries(evaluation, k, mode="none")
    lines = {r["name"]: r.get("line") or r["model"] for r in provenance["runs"]}
    frame = pd.DataFrame({
        "run": missed["run"], "model": missed["model"], "line": missed["run"].map(lines), "query": missed["query"],
        "query_text": missed["query_text"], "source": missed["source"], "status": UNTRACKED, "regressed": False,
        "first_rank": missed["first_rank"], "n_relevant": missed["n_relevant"], "since": None, "tags": "",
        "note": "", "k": k, "n": missed["n"], "labels": missed["labels"],
        "labels_version": provenance["labels"].get("version"), "fingerprint": missed["fingerprint"],
    })
    return frame[FAILURE_COLUMNS]


def _ledger_failures(workspace: "Workspace", saved, computed: Evaluation, k: int) -> pd.DataFrame:
    """This evaluation's misses at k, each with its ledger status, tags and note as of its run."""
    outcomes = workspace.outcomes(saved.id)
    frames = []
    for stored, result in zip(saved.runs, computed.results):
        mine = outcomes[outcomes["run_id"] == stored.id]
        ranks = mine["first_rank"].to_numpy(dtype=np.float64, na_value=np.inf)
        missed = mine[ranks > k]
        ledger = workspace.archive.ledger(stored.line, labels=saved.labels.name, k=k, as_of=stored.id,
                                          include_passing=True).set_index("query")
        keys = missed["query"]
        since = ledger["first_failed_run_id"].reindex(keys).astype("Int64")
        since_name = ledger["first_failed_run"].reindex(keys)
        frames.append(pd.DataFrame({
            "run": stored.name, "model": stored.model, "line": stored.line, "query": keys.to_numpy(),
            "query_text": ledger["query_text"].reindex(keys).to_numpy(dtype=object),
            "source": ledger["source"].reindex(keys).to_numpy(dtype=object),
            "status": ledger["status_label"].reindex(keys).fillna("").to_numpy(dtype=object),
            "regressed": ledger["regressed_now"].reindex(keys).fillna(False).to_numpy(dtype=bool)
            & (ledger["last_run_id"].reindex(keys).to_numpy() == stored.id),
            "first_rank": mine["first_rank"][ranks > k].to_numpy(),
            "n_relevant": missed["n_relevant"].to_numpy(),
            "since": [None if pd.isna(i) else f"#{int(i)} {n}" for i, n in zip(since, since_name)],
            "tags": ledger["tags"].reindex(keys).fillna("").to_numpy(dtype=object),
            "note": ledger["note"].reindex(keys).fillna("").to_numpy(dtype=object),
            "k": k, "n": result.n_queries, "labels": saved.labels.name, "labels_version": saved.labels.version,
            "fingerprint": saved.labels.fingerprint,
        }))
    frame = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame({c: [] for c in FAILURE_COLUMNS})
    frame["first_rank"] = pd.array(frame["first_rank"], dtype="Int64")
    return frame[FAILURE_COLUMNS]


def _order_failures(frame: pd.DataFrame) -> pd.DataFrame:
    """Runs in their order; within each, regressions first, then by status, deepest first relevant doc first."""
    if frame.empty:
        return frame.reset_index(drop=True)
    keys = pd.DataFrame({
        "run": pd.factorize(frame["run"])[0],
        "regressed": ~frame["regressed"].astype(bool).to_numpy(),
        "status": frame["status"].map(lambda s: _STATUS_ORDER.get(s, 9)).to_numpy(),
        "depth": -pd.array(frame["first_rank"], dtype="Float64").to_numpy(dtype=np.float64, na_value=np.inf),
        "query": frame["query"].astype(str).to_numpy(),
    }, index=frame.index)
    order = keys.sort_values(list(keys.columns), kind="stable").index
    return frame.loc[order].reset_index(drop=True)


def _leaderboard(evaluation: Evaluation, metrics: Sequence[str], k: int, provenance: dict) -> pd.DataFrame:
    summary = evaluation.summary
    runs = {r["name"]: r for r in provenance["runs"]}
    rows = []
    for result in evaluation.results:
        mine = summary[summary["run"] == result.name].set_index("metric")
        meta = runs.get(result.name, {})
        row = {"run": result.name, "model": result.model, "line": meta.get("line") or result.model}
        for metric in metrics:
            record = mine.loc[metric]
            row[metric] = float(record["mean"])
            row[f"{metric}_ci_low"] = float(record["ci_low"])
            row[f"{metric}_ci_high"] = float(record["ci_high"])
        row.update({"n": result.n_queries, "note": mine["note"].iloc[0], "labels": provenance["labels"]["name"],
                    "labels_version": provenance["labels"].get("version"),
                    "fingerprint": evaluation.labels.fingerprint, "level": evaluation.level,
                    "price_per_mtok": meta.get("price_per_mtok"), "dims": meta.get("dims"),
                    "index_bytes": meta.get("index_bytes")})
        rows.append(row)
    frame = pd.DataFrame(rows)
    key = f"recall@{k}"
    frame = frame.sort_values([key, "mrr"], ascending=False, kind="stable").reset_index(drop=True)
    frame.insert(0, "rank", np.arange(1, len(frame) + 1))
    return frame


def _file_sha(path: object) -> str | None:
    if not isinstance(path, (str, os.PathLike)) or not Path(path).is_file():
        return None
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


# ----------------------------------------------------------------------------- charts


def _leaderboard_spec(report: MeetingReport) -> dict:
    board = report.leaderboard
    values = [{"run": str(row["run"]), "metric": metric, "mean": float(row[metric]),
               "ci_low": float(row[f"{metric}_ci_low"]), "ci_high": float(row[f"{metric}_ci_high"])}
              for row in board.to_dict(orient="records") for metric in report.metrics]
    order = [str(r) for r in board["run"]]
    level = int(round(float(board["level"].iloc[0]) * 100))
    y = {"field": "run", "type": "nominal", "sort": order, "title": None}
    return {
        "$schema": "https://vega.github.io/schema/vega-lite/v5.json",
        "title": {"text": f"Means with {level}% intervals",
                  "subtitle": f"n = {int(board['n'].iloc[0])} queries; labels {_labels_ref(report.provenance)}"},
        "data": {"values": values},
        "facet": {"column": {"field": "metric", "type": "nominal", "sort": list(report.metrics), "title": None}},
        "spec": {
            "width": 170, "height": max(40, 24 * len(board)),
            "layer": [
                {"mark": {"type": "bar", "color": "#4c78a8", "opacity": 0.85},
                 "encoding": {"y": y, "x": {"field": "mean", "type": "quantitative", "title": None,
                                            "scale": {"domain": [0, 1]}}}},
                {"mark": {"type": "rule", "color": "#222", "strokeWidth": 1.5},
                 "encoding": {"y": y, "x": {"field": "ci_low", "type": "quantitative"}, "x2": {"field": "ci_high"}}},
                {"mark": {"type": "text", "align": "left", "dx": 4, "fontSize": 10},
                 "encoding": {"y": y, "x": {"field": "ci_high", "type": "quantitative"},
                              "text": {"field": "mean", "type": "quantitative", "format": ".3f"}}},
            ],
        },
        "config": {"view": {"stroke": None}},
    }


def _history_spec(report: MeetingReport) -> dict:
    frame = report.history
    metric = f"recall@{report.k}"
    frame = frame[frame["metric"] == metric] if (frame["metric"] == metric).any() else frame
    values = [{"line": str(r.line), "step": int(r.step), "run": str(r.run), "metric": str(r.metric),
               "mean": float(r.mean), "ci_low": float(r.ci_low), "ci_high": float(r.ci_high),
               "labels_version": int(r.labels_version)} for r in frame.itertuples(index=False)]
    x = {"field": "step", "type": "ordinal", "title": "run of the line, in upload order", "axis": {"labelAngle": 0}}
    color = {"field": "line", "type": "nominal", "title": "model line"}
    level = int(round(float(report.leaderboard["level"].iloc[0]) * 100))
    return {
        "$schema": "https://vega.github.io/schema/vega-lite/v5.json",
        "title": {"text": f"{frame['metric'].iloc[0]} over each model line's runs, {level}% intervals",
                  "subtitle": f"labels {report.provenance['labels']['name']} (version per point in the data)"},
        "data": {"values": values},
        "width": 460, "height": 200,
        "layer": [
            {"mark": {"type": "area", "opacity": 0.18},
             "encoding": {"x": x, "y": {"field": "ci_low", "type": "quantitative", "title": None,
                                        "scale": {"domain": [0, 1]}},
                          "y2": {"field": "ci_high"}, "color": color}},
            {"mark": {"type": "line", "point": True},
             "encoding": {"x": x, "y": {"field": "mean", "type": "quantitative"}, "color": color}},
        ],
    }


# ----------------------------------------------------------------------------- page content


def _labels_ref(provenance: dict) -> str:
    labels = provenance["labels"]
    version = f" v{labels['version']}" if labels.get("version") is not None else ""
    return f"{labels['name']}{version} #{labels['fingerprint']}"


def _ci(mean: float, low: float, high: float) -> Safe:
    return Safe(f"{mean:.4f} ({low:.4f} to {high:.4f})")


def _context(report: MeetingReport) -> list:
    """The sentence every number on the page is read with."""
    settings = report.provenance["settings"]
    level = int(round(float(settings["level"]) * 100))
    n = int(report.leaderboard["n"].iloc[0])
    return [Safe(f"n = {n} evaluated queries; labels "), _labels_ref(report.provenance),
            Safe(f"; cutoffs k = {', '.join(str(x) for x in settings['k'])}, chosen k = {report.k}; "
                 f"relevant = grade >= {settings['min_grade']:g}; {level}% intervals ({settings['ci_note']}); "
                 f"seed {settings['seed']}.")]


def _sections(report: MeetingReport) -> list[tuple[str, list]]:
    """The page as sections of blocks: ("p", parts), ("table", header, rows), ("list", items), ("image", name, alt)."""
    board = report.leaderboard
    level = int(round(float(board["level"].iloc[0]) * 100))
    out: list[tuple[str, list]] = []

    # Leaderboard
    header = [Safe("#"), Safe("run"), Safe("model")] + [Safe(f"{m} ({level}% CI)") for m in report.metrics] + [Safe("n")]
    show_cost = board["price_per_mtok"].notna().any() or board["dims"].notna().any()
    if show_cost:
        header += [Safe("embedding $/Mtok"), Safe("dims")]
    rows = []
    for row in board.to_dict(orient="records"):
        cells = [Safe(str(row["rank"])), row["run"], row["model"]]
        cells += [_ci(row[m], row[f"{m}_ci_low"], row[f"{m}_ci_high"]) for m in report.metrics]
        cells.append(Safe(str(row["n"])))
        if show_cost:
            cells += [Safe("" if pd.isna(row["price_per_mtok"]) else f"{row['price_per_mtok']:g}"),
                      Safe("" if pd.isna(row["dims"]) else f"{int(row['dims'])}")]
        rows.append(cells)

    blocks: list = [("p", _context(report)), ("table", header, rows)]
    meanings = [[Safe(f"{m}: "), Safe(DESCRIPTIONS[Measure.parse(m).name])] for m in report.metrics]
    blocks.append(("list", meanings))
    notes = sorted({n for n in board["note"] if n})
    if notes:
        blocks.append(("p", [Safe("Note: "), *notes]))
    blocks.append(("image", "leaderboard", f"Leaderboard chart: means with {level}% intervals"))
    out.append((f"Leaderboard at k = {report.k}", blocks))

    # Paired comparison
    if report.comparison is not None:
        models = {r["run"]: r["model"] for r in board.to_dict(orient="records")}
        items = []
        for c in report.comparison.comparisons:
            context = (f" [{c.metric}, n = {c.n}, {c.baseline} = {models.get(c.baseline)}, {c.run} = "
                       f"{models.get(c.run)}, labels {_labels_ref(report.provenance)}; p {c.p_value:.3g} raw, "
                       f"{c.p_adjusted:.3g} after Holm over {c.n_comparisons}; {c.test}]")
            items.append([c.verdict, context])
        blocks = [("list", items)]
        if report.comparison.planner is not None:
            base, run = report.comparison.planner_pair
            blocks.append(("p", [f"Planner ({base} vs {run}): {report.comparison.planner.summary}"]))
        out.append(("Paired comparison", blocks))

    # Chosen k and its cost
    if report.budget is not None:
        settings = report.budget.settings
        header = [Safe("run"), Safe("model"), Safe(f"recall@{report.k} (interval: leaderboard)"),
                  Safe("prompt tokens per request (mean)"), Safe("$ per 1,000 requests")]
        with_month = settings.get("requests_per_month") is not None
        if with_month:
            header.append(Safe("$ per month"))
        header.append(Safe("recommended k"))
        rows, sentences = [], []
        for run in report.budget:
            at = run.row(report.k)
            cells = [run.name, run.model, Safe(f"{at['recall']:.4f}"),
                     Safe(f"{at['tokens_mean']:,.0f}"), Safe(f"{at['cost_per_1k_requests']:.4f}")]
            if with_month:
                cells.append(Safe(f"{at['cost_per_month']:,.2f}"))
            cells.append(Safe(str(run.recommended_k)))
            rows.append(cells)
            sentences.append([run.name, Safe(": "), run.summary()])
        price = (f"Prompt cost at ${settings['price_per_mtok']:g} per million input tokens of the generator LLM "
                 f"({settings['price_source']}); tokens counted with {settings['tokenizer']}")
        docs = settings.get("documents")
        blocks = [("table", header, rows), ("p", [Safe(price), Safe("; documents "), docs or "(none)", Safe(".")]),
                  ("list", sentences)]
        out.append((f"Chosen k = {report.k} and its cost", blocks))

    # Top open failures
    failures = report.failures
    open_rows = failures[failures["status"].isin(_OPEN)]
    blocks = []
    counts = []
    for run in board["run"]:
        mine = failures[failures["run"] == run]
        opened = open_rows[open_rows["run"] == run]
        regressed = int(mine["regressed"].astype(bool).sum())
        counts.append([run, Safe(f": {len(mine)} of {int(board.loc[board['run'] == run, 'n'].iloc[0])} queries miss "
                                 f"at k = {report.k} (no relevant doc in the top {report.k}); {len(opened)} open"
                                 + (f", {regressed} regressed in this run" if regressed else ""))])
    blocks.append(("list", counts))
    header = [Safe("run"), Safe("query"), Safe("what the customer typed"), Safe("status"),
              Safe("first relevant rank"), Safe("failing since"), Safe("tags"), Safe("note")]
    rows = []
    for run in board["run"]:
        for row in open_rows[open_rows["run"] == run].head(report.top_failures).to_dict(orient="records"):
            status = row["status"] + (" (regressed in this run)" if row["regressed"] and row["status"] != "regressed"
                                      else "")
            rank = "none returned" if pd.isna(row["first_rank"]) else f"rank {int(row['first_rank'])}"
            rows.append([row["run"], row["query"], row["query_text"] or "", status, Safe(rank), row["since"] or "",
                         row["tags"] or "", row["note"] or ""])
    if rows:
        blocks.append(("table", header, rows))
    else:
        blocks.append(("p", [Safe("No open failures.")]))
    out.append((f"Top open failures at k = {report.k} (up to {report.top_failures} per run, regressions first)", blocks))

    # History
    if report.history is not None and not report.history.empty and report.history["step"].max() > 1:
        metric = f"recall@{report.k}"
        frame = report.history[report.history["metric"] == metric]
        header = [Safe("line"), Safe("step"), Safe("run"), Safe("model"), Safe(f"{metric} ({level}% CI)"), Safe("n"),
                  Safe("labels version")]
        rows = [[r.line, Safe(str(r.step)), r.run, r.model, _ci(r.mean, r.ci_low, r.ci_high), Safe(str(r.n)),
                 Safe(f"v{r.labels_version} #{r.fingerprint}")] for r in frame.itertuples(index=False)]
        out.append(("Model lines over time", [("table", header, rows),
                                              ("image", "history", f"{metric} over each model line's runs")]))

    # Provenance
    prov = report.provenance
    labels = prov["labels"]
    items = []
    if prov.get("evaluation"):
        e = prov["evaluation"]
        items.append([Safe(f"Evaluation {e['id']}, saved {e['saved_at']} with evalcore {e['evalcore_version']} in the "
                           "workspace "), e["workspace"]])
    items.append([Safe("Labels: "), _labels_ref(prov), Safe(f" ({labels['n_labeled']} labeled queries, "
                                                            f"{labels['n_evaluated']} evaluated); file "),
                  labels.get("file") or "(not a file)",
                  Safe(f" sha256 {labels['sha256'][:12]}" if labels.get("sha256") else "")]
                 + ([Safe("; this version: "), labels["change"]] if labels.get("change") else []))
    if prov.get("split"):
        split = prov["split"]
        items.append([Safe("Split: "), f"{split['headline']} ({split['rule']}); {split['n_queries']} queries of the "
                                       f"whole label set {split['full_labels']} #{split['full_fingerprint']}"])
    settings = prov["settings"]
    items.append([Safe(f"Settings: k = {', '.join(str(x) for x in settings['k'])}; chosen k = {report.k}; relevant = "
                       f"grade >= {settings['min_grade']:g}; queries without a relevant doc: "
                       f"{settings['zero_relevant']}; {int(round(settings['level'] * 100))}% intervals, "
                       f"{settings['ci_note']}; seed {settings['seed']}.")])
    if prov.get("budget"):
        b = prov["budget"]
        items.append([Safe(f"Cost of k: tokenizer {b['tokenizer']}; ${b['price_per_mtok']:g} per million tokens "
                           f"({b['price_source']}); lambda {b['lambda']:g} ({b['lambda_source']}); max k {b['max_k']}; "
                           f"seed {b['seed']}; documents "), b.get("documents") or "(none)"])
    items.append([Safe(f"Generated {prov['generated_at']} by evalcore {_version()}.")])
    blocks = [("list", items)]
    header = [Safe("run"), Safe("model"), Safe("line"), Safe("file"), Safe("sha256"), Safe("uploaded"),
              Safe("$/Mtok"), Safe("dims"), Safe("index bytes"), Safe("queries in run")]
    rows = [[r["name"], r["model"], r.get("line") or "", r.get("file") or "", Safe((r.get("sha256") or "")[:12]),
             Safe(r.get("uploaded_at") or ""), Safe(_num(r.get("price_per_mtok"))), Safe(_num(r.get("dims"))),
             Safe(_num(r.get("index_bytes"))), Safe(_num(r.get("n_queries")))] for r in prov["runs"]]
    blocks.append(("table", header, rows))
    if report.warnings:
        blocks.append(("p", [Safe("Warnings:")]))
        blocks.append(("list", [[w] for w in report.warnings]))
    out.append(("Provenance", blocks))
    return out


def _num(value: object) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    if isinstance(value, float) and not value.is_integer():
        return f"{value:g}"
    return f"{int(value):,}"


def _version() -> str:
    return __version__


# ----------------------------------------------------------------------------- renderers


def _render_markdown(report: MeetingReport, images: dict[str, str]) -> str:
    lines = [f"# {md_text(report.title)}", ""]
    for title, blocks in _sections(report):
        lines += [f"## {title}", ""]  # section titles are evalcore's own words
        for block in blocks:
            kind = block[0]
            if kind == "p":
                lines += ["".join(_md(p) for p in block[1]), ""]
            elif kind == "list":
                lines += ["- " + "".join(_md(p) for p in item) for item in block[1]] + [""]
            elif kind == "table":
                header, rows = block[1], block[2]
                lines.append("| " + " | ".join(_md(h) for h in header) + " |")
                lines.append("|" + "|".join("---" for _ in header) + "|")
                lines += ["| " + " | ".join(_md(c) for c in row) + " |" for row in rows]
                lines.append("")
            elif kind == "image" and block[1] in images:
                lines += [f"![{md_text(block[2])}]({images[block[1]]})", ""]
    for note in report.notes:
        lines += [md_text(note), ""]
    return "\n".join(lines).rstrip() + "\n"


_CSS = """
body{font-family:-apple-system,BlinkMacSystemFont,"Segoe UI",Roboto,Helvetica,Arial,sans-serif;margin:2em auto;
max-width:1100px;color:#1d1d1f;font-size:14px;line-height:1.45;padding:0 1em}
h1{font-size:1.6em;margin-bottom:.2em}h2{font-size:1.2em;margin-top:1.6em;border-bottom:1px solid #ddd}
table{border-collapse:collapse;margin:.6em 0;font-size:13px}th,td{border:1px solid #ddd;padding:3px 7px;
text-align:left;vertical-align:top}th{background:#f5f5f7}td.num{text-align:right;font-variant-numeric:tabular-nums}
.context{color:#555}img{max-width:100%;margin:.5em 0}ul{margin:.3em 0}
@media print{body{margin:0;font-size:11px}h2{page-break-after:avoid}}
"""


def _render_html(report: MeetingReport, pngs: dict[str, bytes], notes: list[str]) -> str:
    parts = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
             '<meta name="viewport" content="width=device-width, initial-scale=1">',
             f"<title>{_h(report.title)}</title><style>{_CSS}</style></head><body>",
             f"<h1>{_h(report.title)}</h1>"]
    for title, blocks in _sections(report):
        parts.append(f"<h2>{_h(title)}</h2>")
        for block in blocks:
            kind = block[0]
            if kind == "p":
                parts.append('<p class="context">' + "".join(_h(p) for p in block[1]) + "</p>")
            elif kind == "list":
                parts.append("<ul>" + "".join("<li>" + "".join(_h(p) for p in item) + "</li>"
                                              for item in block[1]) + "</ul>")
            elif kind == "table":
                header, rows = block[1], block[2]
                parts.append("<table><thead><tr>" + "".join(f"<th>{_h(h)}</th>" for h in header) + "</tr></thead><tbody>")
                for row in rows:
                    parts.append("<tr>" + "".join(
                        f'<td class="num">{_h(c)}</td>' if isinstance(c, Safe) and _numeric(c) else f"<td>{_h(c)}</td>"
                        for c in row) + "</tr>")
                parts.append("</tbody></table>")
            elif kind == "image" and block[1] in pngs:
                png = pngs[block[1]]
                width = int.from_bytes(png[16:20], "big") // _CHART_SCALE  # natural size, sharp on hi-dpi screens
                data = base64.b64encode(png).decode("ascii")
                parts.append(f'<img alt="{_h(block[2])}" width="{width}" src="data:image/png;base64,{data}">')
    for note in notes:
        parts.append(f'<p class="context">{_h(note)}</p>')
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"


def _numeric(text: str) -> bool:
    return bool(text) and (text[0].isdigit() or text[0] == "-")
