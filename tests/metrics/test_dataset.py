"""The inputs of an evaluation as one value: the command line's arguments and the dashboard's uploads make the same
`Dataset` shape and are read by the same functions, so both score the same labels, runs and chunk maps."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from evalcore.errors import UsageError
from evalcore.metrics.dataset import Dataset, FileRef, RunSpec
from evalcore.metrics.dataset_reading import (
    by_path,
    chunk_maps_of,
    from_arguments,
    labels_of,
    read_run_file,
)

S = Path(__file__).resolve().parents[2] / "sample_data"
C = S / "chunking"


def _uploaded(path: Path, format: str | None = None) -> FileRef:
    data = path.read_bytes()
    return FileRef(path.name, hashlib.sha256(data).hexdigest(), len(data), format)


def test_arguments_and_uploads_read_the_same_labels_runs_and_chunk_maps() -> None:
    given = from_arguments(C / "labels.tsv", [(None, str(C / "sent1.trec")), ("three", str(C / "sent3.trec"))],
                           chunks=[(None, str(C / "sent1.chunks.csv")), ("three", str(C / "sent3.chunks.csv"))])
    assert [spec.name for spec in given.runs] == ["sent1", "three"]
    assert [spec.chunks.path for spec in given.runs] == [str(C / "sent1.chunks.csv"), str(C / "sent3.chunks.csv")]

    files = {f"{C / name}": name for name in ("labels.tsv", "sent1.trec", "sent3.trec", "sent1.chunks.csv",
                                                 "sent3.chunks.csv")}
    uploads = {_uploaded(Path(path)).sha256: Path(path).read_bytes() for path in files}
    uploaded = Dataset(labels=_uploaded(C / "labels.tsv"),
                       runs=(RunSpec(_uploaded(C / "sent1.trec"), "sent1", chunks=_uploaded(C / "sent1.chunks.csv")),
                             RunSpec(_uploaded(C / "sent3.trec"), "three", chunks=_uploaded(C / "sent3.chunks.csv"))))

    def from_store(ref: FileRef) -> bytes:
        return uploads[ref.sha256]

    read = []
    for dataset, source_of in ((given, by_path), (uploaded, from_store)):
        labels = labels_of(dataset, source_of)
        runs = [read_run_file(spec, source_of) for spec in dataset.runs]
        maps = chunk_maps_of(dataset, runs, labels, source_of)
        read.append((labels, runs, maps))
    (labels_a, runs_a, maps_a), (labels_b, runs_b, maps_b) = read
    assert labels_a.fingerprint == labels_b.fingerprint
    assert [(r.name, r.n_queries) for r in runs_a] == [(r.name, r.n_queries) for r in runs_b]
    assert set(maps_a) == set(maps_b) == {"sent1", "three"}
    for name in maps_a:  # the same chunks kept by the same rule, the file's own counts
        assert maps_a[name].chunks_in_file == maps_b[name].chunks_in_file
        assert len(maps_a[name]) == len(maps_b[name]) > 0


def test_a_shared_chunk_map_is_read_once_for_every_run_using_it() -> None:
    given = from_arguments(C / "labels.tsv", [(None, str(C / "sent3.trec")), ("again", str(C / "sent3.trec"))],
                           chunks=[(None, str(C / "sent3.chunks.csv"))])
    labels = labels_of(given, by_path)
    runs = [read_run_file(spec, by_path) for spec in given.runs]
    maps = chunk_maps_of(given, runs, labels, by_path)
    assert maps["sent3"] is maps["again"]


@pytest.mark.parametrize("chunks, said", [
    ([(None, "a.csv"), (None, "b.csv")], "--chunks FILE (for every run) is given twice"),
    ([("nope", "a.csv")], "--chunks nope=...: there is no run named 'nope'; runs are: base"),
])
def test_chunk_maps_that_name_no_run_are_usage_errors(chunks, said) -> None:
    with pytest.raises(UsageError, match=said.replace("(", r"\(").replace(")", r"\)")):
        from_arguments(S / "labels.tsv", [(None, str(S / "base.trec"))], chunks=chunks)


def test_a_path_is_never_part_of_a_data_sets_key() -> None:
    by_content = _uploaded(S / "labels.tsv")
    with_path = FileRef(by_content.name, by_content.sha256, by_content.size, path=str(S / "labels.tsv"))
    assert with_path == by_content
    one = Dataset(labels=by_content, runs=(RunSpec(_uploaded(S / "base.trec"), "base"),))
    two = Dataset(labels=with_path, runs=one.runs)
    assert one.key == two.key and "path" not in str(two.manifest())


def test_a_span_past_its_document_is_refused_where_labels_documents_and_maps_meet(tmp_path) -> None:
    from evalcore.errors import InputError

    (tmp_path / "docs.jsonl").write_text('{"doc_id": "d1", "text": "' + "x" * 85 + '"}\n')
    (tmp_path / "labels.jsonl").write_text('{"query": "q1", "doc_id": "d1", "grade": 1, "start": 0, "end": 5000}\n')
    (tmp_path / "run.trec").write_text("q1 Q0 d1#0 1 1.0 r\n")
    (tmp_path / "chunks.csv").write_text("chunk_id,doc_id,start,end\nd1#0,d1,0,40\n")
    given = from_arguments(tmp_path / "labels.jsonl", [(None, str(tmp_path / "run.trec"))],
                           chunks=[(None, str(tmp_path / "chunks.csv"))], documents=tmp_path / "docs.jsonl")
    labels = labels_of(given, by_path)
    runs = [read_run_file(spec, by_path) for spec in given.runs]
    from evalcore.metrics.dataset_reading import read_documents_file

    with pytest.raises(InputError, match=r"labels.jsonl, line 1: expected an end within its document's text \(85"):
        chunk_maps_of(given, runs, labels, by_path, read_documents_file(given.documents, by_path))
