"""The Integrity page's model called directly, and the tune/holdout split as part of the data set: a data set split
by a hash of the query id scores the same tune queries on every page as ``evalcore evaluate --hash-split`` does on
the command line, the holdout stays sealed until a recorded reveal, and the split is in the data set's key (a link
names it) without changing the key of a data set split by the labels' own field."""

from __future__ import annotations

import json

import pytest

from evalcore.errors import UsageError
from evalcore.metrics.dataset import Dataset
from evalcore.metrics.dataset_reading import from_arguments

from dashboard import loading
from dashboard.page_models import integrity
from tests.cli_runner import ROOT, run_cli

S = ROOT / "sample_data"
RUNS = ("base", "tuned", "tuned-256d")


def test_a_hash_split_scores_the_same_tune_queries_as_the_command_line(sample):
    hashed = sample.with_split(0.5)
    view = loading.evaluation(hashed).value.split
    out = run_cli("evaluate", "--labels", S / "labels.tsv", "--run", S / "base.trec", "--k", "1", "--hash-split",
                  "0.5", "--format", "json")
    said = json.loads(out.stdout)["split"]
    assert said["rule"] == "hash:0.5" and view.rule.key == "hash:0.5"
    assert view.split == "tune" and view.n_queries == said["n_queries"]
    assert view.n_queries + view.sealed == said["n_queries"] + said["n_holdout_sealed"] == 320
    # The labels' own field splits 224 / 96: the hash split is another side, not the same one renamed.
    assert loading.evaluation(sample).value.split.n_queries == 224 != view.n_queries


def test_the_split_is_in_the_key_only_when_the_data_set_chooses_one(sample):
    assert "split" not in sample.manifest()  # data sets split by the labels' field keep the keys they had
    hashed = sample.with_split(0.3)
    assert hashed.key != sample.key and hashed.manifest()["split"] == 0.3
    assert Dataset.from_manifest(hashed.manifest()) == hashed
    assert hashed.with_split(None).key == sample.key
    assert hashed.sample  # the same files: still the sample
    with pytest.raises(UsageError, match="tune fraction"):
        sample.with_split(1.5)


def test_the_command_line_builds_the_same_split_into_its_data_set():
    built = from_arguments(S / "labels.tsv", [(None, str(S / "base.trec"))], split=0.5)
    assert built.split == 0.5 and built.manifest()["split"] == 0.5


def test_the_audit_is_on_the_tune_side_of_the_data_sets_split(sample):
    tune = integrity.audit_at(sample.with_split(0.5), 10).value
    assert tune.evaluation.labels.name.endswith(":tune@hash0.5")
    assert tune.evaluation.results[0].n_queries == loading.evaluation(sample.with_split(0.5)).value.split.n_queries


def test_each_runs_trust_is_one_sentence_with_its_k(sample):
    said = integrity.check_sentences(sample, 10, RUNS)
    assert len(said) == len(RUNS) and all(run in sentence for run, sentence in zip(RUNS, said))
