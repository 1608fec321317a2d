"""Small data sets for the edge cases of the page-model tests (one query, a run that finds nothing, tied runs, lists
shorter than k), held like uploads in the test's workspace, and a model line's saved history built from the sample's
scores. A plain module: ``from tests.page_models.small_data import small_dataset``."""

from __future__ import annotations

import pandas as pd

from evalcore.metrics.dataset import Dataset, FileRef, RunSpec

from dashboard import loading


def held(name: str, text: str) -> FileRef:
    """``text`` held by the dashboard as the uploaded file ``name`` (read back by content, as an upload is)."""
    return loading.uploads().add_file(name, text.encode("utf-8"))


def labels_csv(relevant: dict[str, list[str]], sources: dict[str, str] | None = None) -> str:
    """A labels file: each query's relevant docs (grade 1), with a source column when ``sources`` names them."""
    head = "query,doc_id,grade,query_text" + (",source" if sources else "")
    rows = [f"{q},{d},1,words of {q}" + (f",{sources[q]}" if sources else "") for q, docs in relevant.items()
            for d in docs]
    return "\n".join([head, *rows]) + "\n"


def trec(name: str, ranked: dict[str, list[str]]) -> str:
    """A TREC run file: each query's docs in rank order."""
    return "".join(f"{q} Q0 {d} {rank} {100 - rank} {name}\n" for q, docs in ranked.items()
                   for rank, d in enumerate(docs, start=1))


def small_dataset(relevant: dict[str, list[str]], runs: dict[str, dict[str, list[str]]],
                  sources: dict[str, str] | None = None) -> Dataset:
    """A data set of these labels and runs (each run named, its model string ``model-NAME``)."""
    specs = tuple(RunSpec(file=held(f"{name}.trec", trec(name, ranked)), name=name, model=f"model-{name}")
                  for name, ranked in runs.items())
    return Dataset(labels=held("labels.csv", labels_csv(relevant, sources)), runs=specs)


def saved_line(sample: Dataset) -> pd.DataFrame:
    """Two saved runs of one line (base, then tuned, the label set changed between them), as
    `Workspace.history` lists them: one row per run and metric."""
    summary = loading.evaluation(sample).value.at((1, 10)).summary
    rows = []
    for step, (run, version, fingerprint) in enumerate([("base", 1, "aaaa1111"), ("tuned", 2, "bbbb2222")], start=1):
        for record in summary[summary["run"] == run].to_dict("records"):
            rows.append({"line": "acme", "step": step, "run_id": step, "run": run, "model": record["model"],
                         "uploaded_at": f"2026-01-0{step}T10:00:00Z", "evaluation_id": 10 + step,
                         "labels": "labels", "labels_version": version, "fingerprint": fingerprint,
                         "metric": record["metric"], "k": record["k"], "mean": record["mean"],
                         "ci_low": record["ci_low"], "ci_high": record["ci_high"], "n": record["n"], "level": 0.95,
                         "seed": 0, "ci_method": record["ci_method"], "note": "", "chunks": None})
    return pd.DataFrame(rows)
