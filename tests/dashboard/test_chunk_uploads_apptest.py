"""The Data page's chunk maps and queries file, driven through AppTest: a bad file is explained beside its upload
(file, line, the text, what was expected) and loses nothing; a good one changes the data set the URL names."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from streamlit.testing.v1 import AppTest

from tests.cli_runner import run_cli
from tests.dashboard.apptest_helpers import app, no_exceptions, plain

SAMPLE = Path(__file__).resolve().parents[2] / "sample_data" / "chunking"
LOADED_MAPS = ["sent1: chunk map sent1.chunks#6888348252cb · 2,581 chunks of 503 documents · k counts chunks",
               "sent3: chunk map sent3.chunks#bea93d0aacfc · 1,050 chunks of 503 documents · k counts chunks",
               "char400: chunk map char400.chunks#477291480310 · 859 chunks of 503 documents · k counts chunks"]


def chunking_sample() -> AppTest:
    at = app("views/data.py")
    load = next(b for b in at.button if "chunking sample" in (b.label or ""))
    load.click().run()
    no_exceptions(at)
    return at


def errors(at: AppTest) -> list[str]:
    return [plain(e.value) for e in at.error]


def map_lines(at: AppTest) -> list[str]:
    return [t.value for t in at.text if "chunk map" in t.value]


def test_the_chunking_sample_loads_one_map_per_run() -> None:
    at = chunking_sample()
    assert map_lines(at) == LOADED_MAPS
    assert [u.key for u in at.get("file_uploader")][-3:] == ["data.chunks.1.sent1", "data.chunks.1.sent3",
                                                              "data.chunks.1.char400"]


def test_a_bad_chunk_map_is_explained_beside_its_upload_and_loses_nothing() -> None:
    at = chunking_sample()
    key = at.query_params["data"]
    bad = {
        "names.csv": (b"chunk_id,document\nc1,d1\n",
                      "names.csv, line 1: expected a doc id column named one of doc_id"),
        "offsets.csv": (b"chunk_id,doc_id,start,end\nc1,billing-invoices-01,10,5\n",
                        "offsets.csv, line 2: expected start at most end (character offsets, end exclusive), "
                        "got 'c1,billing-invoices-01,10,5'"),
        "unknown.csv": (b"chunk_id,doc_id\nc1,nosuchdoc\n",
                        "unknown.csv, line 2: expected a doc_id the documents file docs.jsonl has, got 'c1,nosuchdoc'"),
        "huge.csv": (b"chunk_id,doc_id,start,end\nc1,billing-invoices-01,0,9000000000000000\n",  # near 2**53
                     "huge.csv, line 2: expected an offset in end of at most 1,099,511,627,776 characters"),
    }
    for name, (body, message) in bad.items():
        at.file_uploader(key="data.chunks.1.sent1").set_value((name, body, "text/csv")).run()
        no_exceptions(at)
        assert any(e.startswith(message) for e in errors(at)), errors(at)
        assert at.query_params["data"] == key and map_lines(at) == LOADED_MAPS


def test_a_good_chunk_map_changes_that_run_only_and_the_link() -> None:
    at = chunking_sample()
    key = at.query_params["data"]
    body = (SAMPLE / "sent3.chunks.csv").read_bytes()
    at.file_uploader(key="data.chunks.1.sent3").set_value(("mine.csv", body, "text/csv")).run()
    no_exceptions(at)
    assert not at.error, errors(at)
    assert at.query_params["data"] != key
    assert map_lines(at) == [LOADED_MAPS[0], LOADED_MAPS[1].replace("sent3.chunks#", "mine#"), LOADED_MAPS[2]]


def test_a_bad_queries_file_is_explained_and_a_good_one_loads() -> None:
    at = chunking_sample()
    key = at.query_params["data"]
    at.file_uploader(key="data.queries.1").set_value(("q.jsonl", b'{"_id": "q1"\n', "application/json")).run()
    no_exceptions(at)
    assert errors(at) == ["q.jsonl, line 1: expected one JSON object per line (Expecting ',' delimiter), "
                          "got '{\"_id\": \"q1\"'"]
    assert at.query_params["data"] == key and map_lines(at) == LOADED_MAPS

    # The labels' own text, as a BEIR queries.jsonl: it agrees with the labels, so it loads.
    labels = pd.read_csv(SAMPLE / "labels.tsv", sep="\t", dtype=str).drop_duplicates("query")
    lines = "\n".join(json.dumps({"_id": q, "text": t}) for q, t in zip(labels["query"], labels["query_text"]))
    at.file_uploader(key="data.queries.1").set_value(("queries.jsonl", lines.encode(), "application/json")).run()
    no_exceptions(at)
    assert not at.error, errors(at)
    assert "Queries: queries.jsonl · the text of each labeled query" in [t.value for t in at.text]
    assert map_lines(at) == LOADED_MAPS


def test_another_upload_beside_a_refused_chunk_map_keeps_the_documents_and_the_maps() -> None:
    # The chunking sample's documents are the ones its maps were checked against: a later upload (here the
    # queries) must neither drop them nor let the refused map in unchecked.
    at = chunking_sample()
    unknown = b"chunk_id,doc_id\nc1,nosuchdoc\n"
    at.file_uploader(key="data.chunks.1.sent1").set_value(("unknown.csv", unknown, "text/csv")).run()
    labels = pd.read_csv(SAMPLE / "labels.tsv", sep="\t", dtype=str).drop_duplicates("query")
    lines = "\n".join(json.dumps({"_id": q, "text": t}) for q, t in zip(labels["query"], labels["query_text"]))
    at.file_uploader(key="data.queries.1").set_value(("queries.jsonl", lines.encode(), "application/json")).run()
    no_exceptions(at)
    assert errors(at) == ["unknown.csv, line 2: expected a doc_id the documents file docs.jsonl has, "
                          "got 'c1,nosuchdoc'"]
    assert "Documents: docs.jsonl · 503 docs" in [t.value for t in at.text]
    assert map_lines(at) == LOADED_MAPS


def test_documents_that_do_not_fit_the_loaded_chunk_maps_are_refused_beside_their_upload() -> None:
    at = chunking_sample()
    key = at.query_params["data"]
    few = "\n".join(json.dumps({"doc_id": d, "text": "short"}) for d in ("billing-invoices-01", "other")).encode()
    at.file_uploader(key="data.documents.1").set_value(("few.jsonl", few, "application/json")).run()
    no_exceptions(at)
    assert any("few.jsonl" in e and "expected" in e for e in errors(at)), errors(at)
    assert at.query_params["data"] == key and map_lines(at) == LOADED_MAPS
    assert "Documents: docs.jsonl · 503 docs" in [t.value for t in at.text]


def test_a_run_uploaded_again_keeps_its_chunk_map_and_an_emptied_map_upload_takes_it_away() -> None:
    at = chunking_sample()
    lines = (SAMPLE / "sent1.trec").read_text().splitlines(keepends=True)
    again = "".join(lines[:-1]).encode()  # the same run, its last line gone: another file under the same name
    at.file_uploader(key="data.runs.1").set_value([("sent1.trec", again, "text/plain")]).run()
    no_exceptions(at)
    assert not at.error, errors(at)
    assert map_lines(at)[0].startswith("sent1: chunk map sent1.chunks#")

    body = (SAMPLE / "sent3.chunks.csv").read_bytes()
    at.file_uploader(key="data.chunks.1.sent3").set_value(("mine.csv", body, "text/csv")).run()
    assert any(line.startswith("sent3: chunk map mine#") for line in map_lines(at))
    at.file_uploader(key="data.chunks.1.sent3").set_value(None).run()
    no_exceptions(at)
    assert not any(line.startswith("sent3:") for line in map_lines(at))
    assert "sent3 ranks documents (no chunk map)." in plain("\n".join(c.value for c in at.caption))


def test_labels_naming_chunks_no_run_returns_are_recognised_as_the_command_line_does(tmp_path) -> None:
    # admin-roles-04#s2 is a chunk of sent1's map that the sent1 run never returns: the map is read keeping the
    # labels' ids too, so the labels are recognised as naming chunks, not scored silently as documents.
    labels = "query\tdoc_id\tgrade\tquery_text\nq1\tadmin-roles-04#s2\t1\twho can assign roles\n"
    at = chunking_sample()
    at.file_uploader(key="data.labels.1").set_value(("chunklabels.tsv", labels.encode(), "text/plain")).run()
    no_exceptions(at)
    (tmp_path / "chunklabels.tsv").write_text(labels)
    said = run_cli("evaluate", "--labels", str(tmp_path / "chunklabels.tsv"), "--run", f"sent1={SAMPLE / 'sent1.trec'}",
                   "--chunks", str(SAMPLE / "sent1.chunks.csv"))
    assert said.returncode == 2
    message = "The labels name chunks (for example 'admin-roles-04#s2'), not documents"
    assert message in said.stderr and any(e.startswith(message) for e in errors(at)), (said.stderr, errors(at))
    at.switch_page("views/overview.py").run()
    no_exceptions(at)
    assert any(e.startswith(message) for e in errors(at)), errors(at)
