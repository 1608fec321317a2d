"""The Data page's model called directly: the checklist of every file before any metric (as the page writes its
counts), why files cannot be scored, each run's metadata and what an edit of it makes; against the core's readers."""

from __future__ import annotations

import evalcore
import pandas as pd

from evalcore.metrics.dataset import RunSpec

from dashboard import loading
from dashboard.page_models import data
from tests.page_models.small_data import held


def test_the_samples_checklist_counts_every_file_as_the_readers_read_it(sample):
    found = data.files(sample, 10)
    assert found.problem is None
    checks = found.checklist.set_index("file")
    assert list(checks.index) == ["labels.tsv", "base.trec", "tuned.trec", "tuned-256d.trec", "docs.jsonl"]
    labels = evalcore.read_labels(loading.SAMPLE_DIR / "labels.tsv")
    run = evalcore.read_run(loading.SAMPLE_DIR / "base.trec", name="base")
    assert checks.loc["labels.tsv", "queries"] == labels.n_queries == 320
    assert checks.loc["base.trec", "queries"] == len(run.query_ids) == 320
    assert checks.loc["base.trec", "docs"] == 32_000
    shown = found.checklist_shown.set_index("file")
    assert "notes" not in shown.columns
    assert shown.loc["base.trec", "docs"] == "32,000"  # as the page writes it
    assert shown.loc["docs.jsonl", "queries"] == "–"  # a count that does not apply to documents


def test_each_runs_metadata_is_its_sidecars(sample):
    meta = data.files(sample, 10).metadata.set_index("run")
    evaluation = loading.evaluation(sample).value
    assert meta["model"].to_dict() == {r.name: r.model for r in evaluation.results}
    assert meta.loc["tuned", "dims"] == 1536 and meta.loc["base", "price_per_mtok"] == 0.02


def test_an_edit_changes_the_data_set_and_a_deleted_row_drops_its_run(sample):
    meta = data.run_metadata(sample)
    edited = meta.copy()
    edited.loc[edited["run"] == "base", "model"] = "acme-embed-base-v3"
    changed = data.edited_dataset(sample, edited)
    assert changed.key != sample.key and not changed.sample
    assert next(r for r in changed.runs if r.name == "base").model == "acme-embed-base-v3"
    assert data.edited_dataset(sample, meta).runs == sample.runs  # nothing edited, nothing changed
    fewer = data.edited_dataset(sample, meta[meta["run"] != "tuned-256d"])
    assert fewer.run_names == ["base", "tuned"]
    blank = meta.copy()
    blank["price_per_mtok"] = pd.array([None] * len(blank), dtype="Float64")
    assert next(r for r in data.edited_dataset(sample, blank).runs if r.name == "base").price_per_mtok is None


def test_a_run_that_cannot_be_read_is_named_and_nothing_is_scored(make_dataset):
    dataset = make_dataset({"q1": ["d1"], "q2": ["d2"]}, {"good": {"q1": ["d1"], "q2": ["x"]}})
    broken = RunSpec(file=held("broken.trec", "q1 Q0\n"), name="broken")
    bad = dataset.with_runs(dataset.runs + (broken,))
    found = data.files(bad, 10)
    assert found.problem and "broken.trec" in found.problem
    row = found.checklist.set_index("file").loc["broken.trec"]
    assert isinstance(row["notes"], str) and row["notes"]
    assert loading.evaluation(bad).error == found.problem


def test_one_query_and_a_run_that_finds_nothing_are_counted_plainly(make_dataset):
    dataset = make_dataset({"q1": ["d1"]}, {"nothing": {"q1": ["x1", "x2"]}})
    found = data.files(dataset, 50)  # k larger than the run's lists
    assert found.problem is None
    checks = found.checklist.set_index("file")
    assert checks.loc["nothing.trec", "queries"] == 1 and checks.loc["nothing.trec", "docs"] == 2
    assert checks.loc["nothing.trec", "rankings shorter than 100"] == 1
