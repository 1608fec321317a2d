"""Answer grades in a `Dataset` (issue 31): a grade file per run, named in the manifest only when there is one (so
every data set made before keeps its key), read back from a stored manifest, kept while its run's file stays, and read
the one way both front ends read a data set's files."""

from __future__ import annotations

import hashlib
from pathlib import Path

from evalcore.metrics.dataset import Dataset, FileRef, GradeSpec, RunSpec
from evalcore.metrics.dataset_reading import by_path, read_grade_file

G = Path(__file__).resolve().parents[1] / "fixtures" / "grades"


def _ref(path: Path) -> FileRef:
    data = path.read_bytes()
    return FileRef(path.name, hashlib.sha256(data).hexdigest(), len(data))


def _dataset() -> Dataset:
    return Dataset(labels=_ref(G / "labels.tsv"),
                   runs=(RunSpec(_ref(G / "bm25.trec"), "bm25"), RunSpec(_ref(G / "dense.trec"), "dense")))


def test_a_data_set_without_grades_keeps_its_manifest_and_key() -> None:
    plain = _dataset()
    assert "grades" not in plain.manifest() and plain.grades == ()
    assert plain.key == Dataset.from_manifest(plain.manifest()).key
    graded = plain.with_grades("bm25", _ref(G / "ragas.csv"))
    assert graded.key != plain.key and graded.with_grades("bm25", None) == plain
    assert graded.with_grades("bm25", None).key == plain.key


def test_grades_round_trip_through_a_stored_manifest_and_are_among_the_files() -> None:
    graded = _dataset().with_grades("dense", _ref(G / "ragas_dense.json")).with_grades(
        "bm25", _ref(G / "promptfoo.json"), "promptfoo")
    assert [(g.run, g.format) for g in graded.grades] == [("bm25", "promptfoo"), ("dense", None)]  # in run order
    assert graded.manifest()["grades"][0] == {"file": _ref(G / "promptfoo.json").manifest(), "run": "bm25",
                                              "format": "promptfoo"}
    again = Dataset.from_manifest(graded.manifest())
    assert again == graded and again.key == graded.key
    assert _ref(G / "ragas_dense.json") in graded.files
    assert graded.graded("dense") == GradeSpec(_ref(G / "ragas_dense.json"), "dense")
    assert graded.with_grades("bm25", _ref(G / "ragas.csv")).graded("bm25").file.name == "ragas.csv"  # replaced


def test_a_runs_grades_go_when_the_run_or_its_file_does() -> None:
    graded = _dataset().with_grades("bm25", _ref(G / "ragas.csv")).with_grades("dense", _ref(G / "ragas_dense.json"))
    renamed_price = graded.with_runs(tuple(RunSpec(r.file, r.name, model="m") for r in graded.runs))
    assert [g.run for g in renamed_price.grades] == ["bm25", "dense"]  # same files: the answers are still theirs
    other_file = graded.with_runs((RunSpec(_ref(G / "dense.trec"), "bm25"), graded.runs[1]))
    assert [g.run for g in other_file.grades] == ["dense"]
    assert [g.run for g in graded.with_runs(graded.runs[1:]).grades] == ["dense"]


def test_a_grade_file_is_read_as_its_runs_answers_with_notes_when_asked() -> None:
    spec = GradeSpec(FileRef.at(G / "latest_test_run.json"), "bm25")
    read = read_grade_file(spec, by_path, notes=True)
    assert read.run == "bm25" and read.label == "latest_test_run" and read.format == "deepeval"
    assert read.notes["reason: Faithfulness"].tolist()[1] == "One claim unsupported."
    assert read_grade_file(spec, by_path).notes is None
