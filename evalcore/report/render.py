"""Renderers for an `Evaluation`: a dict (docs/formats.md JSON), CSV, a text table and Markdown.

Every rendered number travels with its metric and k, n, the run's model and the label set's
name and fingerprint (docs/metrics.md).
"""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd

from ..metrics.evaluation import Evaluation
from ..metrics.split import SplitView
from ..safe_text import md_table, md_text, text_table, to_csv
from .amounts import format_interval

SUMMARY_COLUMNS = ["run", "model", "metric", "k", "mean", "ci_low", "ci_high", "n", "labels", "fingerprint"]


def split_of(evaluation: Evaluation, split: "SplitView | None" = None) -> "SplitView | None":
    """The split an evaluation's numbers are on (given, else the one it carries); None when the labels have none."""
    chosen = split if split is not None else getattr(evaluation, "split", None)
    return chosen if chosen is not None and chosen.split is not None else None


def split_title(split: "SplitView") -> str:
    """`` on the tune split (file split field): exploratory (...)`` for a table title."""
    where = "all queries" if split.split == "all" else f"the {split.split} split"
    return f" on {where} ({split.rule}): {split.note}"


def evaluation_dict(evaluation: Evaluation, *, per_query: bool = False, split: "SplitView | None" = None) -> dict:
    """The machine-readable result, shaped as docs/formats.md (numbers at full precision).

    With a ``split`` (tune or holdout), every metric names its split and a top-level ``split``
    object says how the split was made and, for the holdout, which recorded reveal unsealed it.
    """
    split = split_of(evaluation, split)
    summary = evaluation.summary
    runs = []
    for result in evaluation.results:
        rows = summary[summary["run"] == result.name]
        metrics = {row.metric: {"mean": _num(row.mean), "ci_low": _num(row.ci_low), "ci_high": _num(row.ci_high)}
                   for row in rows.itertuples()}
        if split is not None:
            for entry in metrics.values():
                entry["split"] = split.split
        entry = {"name": result.name, "model": result.model, "n_queries": result.n_queries, "metrics": metrics}
        if result.chunks is not None:  # a run of chunks names the chunking its numbers rest on
            entry["chunks"] = {"name": result.chunks.name, "fingerprint": result.chunks.fingerprint,
                               "n_chunks": result.chunks.chunks_in_file}
        if per_query:
            entry["per_query"] = [
                {key: (_num(value) if key != "query" else value) for key, value in record.items()}
                | ({"split": split.split} if split is not None else {})
                for record in result.per_query().to_dict(orient="records")
            ]
        runs.append(entry)
    labels = evaluation.labels
    out = {
        "labels": {"name": labels.name, "fingerprint": labels.fingerprint, "n_queries": labels.n_queries},
        "runs": runs,
        "warnings": [w.to_dict() for w in evaluation.all_warnings],
        "settings": evaluation.settings(),
    }
    if split is not None:
        out["split"] = split.to_dict()
    return out


def evaluation_json(evaluation: Evaluation, *, per_query: bool = False, slices: pd.DataFrame | None = None,
                    split: "SplitView | None" = None, headline: str | None = None) -> str:
    """`evaluation_dict` as JSON, opening on the ``headline`` sentence when one is given."""
    data = evaluation_dict(evaluation, per_query=per_query, split=split)
    if headline is not None:
        data = {"headline": headline, **data}
    if slices is not None:
        data["slices"] = [{k: (_num(v) if isinstance(v, float) else v) for k, v in rec.items()}
                          for rec in slices.to_dict(orient="records")]
    return json.dumps(data, ensure_ascii=False, allow_nan=False, default=_plain)


def evaluation_csv(evaluation: Evaluation, *, per_query: bool = False, split: "SplitView | None" = None) -> str:
    """Summary rows (one per run and metric); with ``per_query``, one row per run and query.

    With a ``split``, a ``split`` column names the side every number was computed on."""
    split = split_of(evaluation, split)
    if not per_query:
        frame = evaluation.summary[SUMMARY_COLUMNS + ["ci_method", "level", "reliable", "note"]]
        if split is not None:
            frame = frame.assign(split=split.split)
        return to_csv(frame)
    frames = []
    for result in evaluation.results:
        table = result.per_query()
        table.insert(0, "run", result.name)
        table.insert(1, "model", result.model)
        table.insert(2, "labels", evaluation.labels.name)
        table.insert(3, "fingerprint", evaluation.labels.fingerprint)
        table.insert(4, "n", result.n_queries)  # the queries behind the run's means (docs/metrics.md)
        if split is not None:
            table.insert(5, "split", split.split)
        frames.append(table)
    return to_csv(pd.concat(frames, ignore_index=True))


def evaluation_table(evaluation: Evaluation, *, per_query: bool = False, markdown: bool = False,
                     split: "SplitView | None" = None) -> str:
    """One table per run, every row carrying n, model and label fingerprint; then the warnings.

    With a ``split``, every row names its split and each title says what the split means
    (tune: exploratory; holdout: how many times it has been viewed)."""
    split = split_of(evaluation, split)
    summary = evaluation.summary
    labels = evaluation.labels
    label_ref = f"{labels.name}#{labels.fingerprint}"
    level = int(round(evaluation.level * 100))
    out: list[str] = []
    for result in evaluation.results:
        rows = summary[summary["run"] == result.name]
        header = ["metric", "mean", f"{level}% CI", "n", "model", "labels", "note"]
        body = [[row.metric, f"{row.mean:.4f}", format_interval(row.ci_low, row.ci_high, digits=4, join=" to ",
                                                                 missing="-"),
                 str(row.n), row.model, label_ref, row.note] for row in rows.itertuples()]
        title = f"run {result.name}"
        if result.chunks is not None:
            title += f" (chunks {result.chunks.ref}: k counts chunks)"
        if split is not None:
            header.insert(6, "split")
            for row in body:
                row.insert(6, split.split)
            title += split_title(split)
        out.append(md_table(title, header, body) if markdown else titled_table(title, header, body))
        if per_query:
            table = result.per_query()
            pq_header = list(table.columns)
            pq_body = [[str(v) if isinstance(v, str) else f"{v:.4f}" for v in rec]
                       for rec in table.itertuples(index=False)]
            pq_title = f"run {result.name}: per query (model {result.model}, labels {label_ref}, n = {result.n_queries})"
            if split is not None:
                pq_title += f", {split.split} split"
            out.append(md_table(pq_title, pq_header, pq_body) if markdown else titled_table(pq_title, pq_header, pq_body))
    warnings = evaluation.all_warnings
    if warnings:
        if markdown:
            out.append("**Warnings**\n\n" + "\n".join(f"- `{w.code}` ({w.count}): {md_text(w.message)}" for w in warnings))
        else:
            out.append("warnings:\n" + "\n".join(f"  [{w.code}] x{w.count}: {w.message}" for w in warnings))
    settings = evaluation.settings()
    note = (f"Intervals: {level}% ({settings['ci_note']}); seed {settings['seed']}. "
            f"Relevant = grade >= {settings['min_grade']:g}.")
    out.append(note)
    return "\n\n".join(out) + "\n"


def titled_table(title: str, header: list[str], body: list[list[str]]) -> str:
    """A plain-text table under a title, the number columns (mean, n, intervals) right-aligned: how every command
    prints a table for people."""
    numeric = {i for i, h in enumerate(header) if h in ("mean", "n") or h.endswith("CI")}
    return text_table(header, body, right=numeric, title=title)


def slices_table(slices: pd.DataFrame, *, markdown: bool = False) -> str:
    """Slice rows grouped by run and field; small slices are marked, not ranked."""
    out = []
    for (run, field), group in slices.groupby(["run", "field"], sort=False):
        model = group["model"].iloc[0]
        label_ref = f"{group['labels'].iloc[0]}#{group['fingerprint'].iloc[0]}"
        header = ["metric", field, "mean", "CI", "n", "model", "labels", "note"]
        body = [[r.metric, r.value, f"{r.mean:.4f}",
                 format_interval(r.ci_low, r.ci_high, digits=4, join=" to ", missing="-"), str(r.n), model,
                 label_ref, "too few queries to rank" if r.small else ""] for r in group.itertuples()]
        if "split" in group.columns:  # computed on one side of a tune/holdout split
            header.insert(7, "split")
            for row, value in zip(body, group["split"]):
                row.insert(7, str(value))
        title = f"run {run}: by {field}"
        out.append(md_table(title, header, body) if markdown else titled_table(title, header, body))
    return "\n\n".join(out) + "\n"


def _plain(value: object) -> object:
    if isinstance(value, (np.integer,)):
        return int(value)
    if isinstance(value, (np.bool_,)):
        return bool(value)
    if isinstance(value, np.floating):
        return _num(float(value))
    raise TypeError(f"not JSON serialisable: {type(value).__name__}")


def _num(value: float) -> float | None:
    value = float(value)
    return value if math.isfinite(value) else None
