"""The Data page's tables: the checklist of every file before any metric, the readers' notes, run metadata.

Counts come from the readers and the core's evaluation warnings (`dashboard.data`); nothing is computed here.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Sequence

import numpy as np
import pandas as pd

from dashboard import data
from dashboard.store import Dataset


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
    label_set = data.labels(dataset.labels)
    deep = data.evaluation(dataset)
    at_k = data.Loaded(data.warnings_at_k(dataset, k)) if deep.ok else deep
    if label_set.ok:
        ls = label_set.value
        relevant = ls.relevant_counts(deep.value.min_grade if deep.ok else 1)
        rows.append({
            "file": dataset.labels.name, "role": "labels", "queries": ls.n_queries, "docs": len(ls.judgments),
            "labeled queries missing from run": None, "run queries without labels": None,
            "duplicates": _count(ls.warnings, "duplicate_judgment"),
            f"rankings shorter than {data.DEPTH}": None, f"ties across k=1 or k={k}": None,
            "notes": f"{int((relevant == 0).sum())} queries with no relevant doc; fingerprint {ls.fingerprint}",
        })
    else:
        rows.append({"file": dataset.labels.name, "role": "labels", "notes": label_set.error})
    for spec, loaded in zip(dataset.runs, data.runs_of(dataset)):
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
            f"rankings shorter than {data.DEPTH}": _count(dp, "short_ranking", r.name) if deep.ok else None,
            f"ties across k=1 or k={k}": _count(at, "tie_across_cutoff", r.name) if at_k.ok else None,
            "notes": f"model {r.model}",
        })
    if dataset.documents is not None:
        docs = data.documents(dataset.documents)
        if docs.ok:
            d = docs.value
            kinds = ", ".join(x for x, ok in (("titles", d.has_title), ("text", d.has_text),
                                              ("token counts", d.has_tokens)) if ok)
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
    for loaded in [data.labels(dataset.labels), *data.runs_of(dataset)]:
        if loaded.ok:
            out.extend(w.message for w in loaded.value.warnings)
    if dataset.documents is not None:
        docs = data.documents(dataset.documents)
        if docs.ok:
            out.extend(w.message for w in docs.value.warnings)
    return out


def run_metadata(dataset: Dataset) -> pd.DataFrame:
    """The editable metadata table of the Data page: one row per run, as the core read it."""
    rows = []
    for spec, loaded in zip(dataset.runs, data.runs_of(dataset)):
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
