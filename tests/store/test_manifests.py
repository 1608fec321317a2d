"""Saved views live in the workspace's database: a data set's manifest (what ``?data=KEY`` opens) names its files
there, the clean-up of unused files asks the database, and the JSON files older dashboards kept in the workspace
folder are taken in once when the workspace is upgraded."""

from __future__ import annotations

import json
import sqlite3

import pytest

from evalcore.errors import NotInWorkspace
from evalcore.readers.labels import read_labels
from evalcore.metrics.dataset import Dataset, FileRef, RunSpec, VectorModel, content_key, models_manifest
from evalcore.store.workspace import SCHEMA_VERSION, Workspace


def _dataset(ws: Workspace) -> Dataset:
    def ref(name: str, data: bytes) -> FileRef:
        stored = ws._put_file(data, name)
        return FileRef(name, stored.sha256, len(data))

    return Dataset(labels=ref("labels.json", b'{"q1": ["d1"]}'), runs=(RunSpec(ref("run.json", b'{"q1": ["d1"]}'), "run"),),
                   documents=ref("docs.jsonl", b'{"doc_id": "d1", "text": "hello"}\n'))


def test_a_manifest_round_trips_and_keeps_its_files_from_the_clean_up(tmp_path) -> None:
    ws = Workspace(tmp_path)
    dataset = _dataset(ws)
    ws._put_manifest("dataset", dataset.key, dataset.manifest())
    loose = ws._put_file(b"never part of a data set", "loose.txt")
    assert Dataset.from_manifest(ws.manifest("dataset", dataset.key)) == dataset
    assert [f.sha256 for f in ws._remove_orphans(older_than=0).files] == [loose.sha256]
    assert ws.manifest("dataset", "0123456789ab") is None
    assert not (tmp_path / "dashboard").exists()


def test_a_manifest_naming_a_file_the_workspace_lacks_is_refused_and_writes_nothing(tmp_path) -> None:
    ws = Workspace(tmp_path)
    with pytest.raises(NotInWorkspace, match="data set abc123 names a file the workspace does not hold"):
        ws._put_manifest("dataset", "abc123", {"labels": {"sha256": "0" * 64, "name": "x", "size": 1}})
    assert ws.manifest("dataset", "abc123") is None


def test_deleting_a_label_set_takes_the_views_that_named_its_file(tmp_path) -> None:
    ws = Workspace(tmp_path)
    labels_bytes = b'{"q1": ["d1"]}'
    stored = ws._put_file(labels_bytes, "labels.json")
    ws._save_labels(read_labels(labels_bytes, name="labels"), name="labels", file=stored)
    dataset = Dataset(labels=FileRef("labels.json", stored.sha256, len(labels_bytes)),
                      runs=(RunSpec(FileRef("labels.json", stored.sha256, len(labels_bytes)), "run"),))
    ws._put_manifest("dataset", dataset.key, dataset.manifest())
    ws._delete("labels", "labels")  # its file goes: the view naming it cannot open any more, and goes with it
    assert ws.manifest("dataset", dataset.key) is None


def test_an_older_workspace_takes_in_the_manifest_files_of_its_folder_once(tmp_path) -> None:
    ws = Workspace(tmp_path)
    dataset = _dataset(ws)
    vectors = [FileRef(n, ws._put_file(n.encode(), n).sha256, len(n)) for n in ("q.npy", "d.npy")]
    models = [VectorModel("mine", "acme/embed", vectors[0], vectors[1])]
    ws.close()
    conn = sqlite3.connect(tmp_path / "workspace.sqlite")  # the workspace as schema version 3 left it
    conn.execute("DROP TABLE manifest_files")
    conn.execute("DROP TABLE manifests")
    conn.execute("DROP TABLE panel_marks")  # schema 8's
    conn.execute("PRAGMA user_version = 3")
    conn.commit()
    conn.close()
    datasets, vector_folder = tmp_path / "dashboard" / "datasets", tmp_path / "dashboard" / "vectors"
    datasets.mkdir(parents=True)
    vector_folder.mkdir(parents=True)
    (datasets / f"{dataset.key}.json").write_text(json.dumps(dataset.manifest()), encoding="utf-8")
    models_key = content_key(models_manifest(models))
    (vector_folder / f"{models_key}.json").write_text(json.dumps(models_manifest(models)), encoding="utf-8")
    orphan = datasets / "fedcba987654.json"  # names a file the workspace lost: left where it is
    orphan.write_text(json.dumps({"labels": {"sha256": "1" * 64, "name": "gone", "size": 1}}), encoding="utf-8")

    reopened = Workspace(tmp_path)
    assert reopened.read(lambda c: c.execute("PRAGMA user_version").fetchone()[0]) == SCHEMA_VERSION
    assert Dataset.from_manifest(reopened.manifest("dataset", dataset.key)) == dataset
    assert [VectorModel.from_manifest(m) for m in reopened.manifest("vector_models", models_key)] == models
    assert not (datasets / f"{dataset.key}.json").exists() and not vector_folder.exists()
    assert orphan.is_file() and reopened.manifest("dataset", "fedcba987654") is None
    assert reopened._remove_orphans(older_than=0).files == ()  # every stored file is named by a view
