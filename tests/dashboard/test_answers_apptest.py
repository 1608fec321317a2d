"""The Answers page through Streamlit's AppTest (the numbers themselves are tests/page_models/test_answers_model.py's):
it opens on its sentence, whose counts are those ``evalcore answers --format json`` prints for the same files; grade
files uploaded on the Data page are stored and recorded (Who did what), and the Overview gains the grade beside
recall."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_runner import run_cli

from tests.dashboard.apptest_helpers import app, no_exceptions, plain, texts

GRADES = Path(__file__).resolve().parents[1] / "fixtures" / "grades"
SAMPLE = Path(__file__).resolve().parents[2] / "sample_data"


def command_json(*args: object) -> dict:
    done = run_cli("answers", *args, "--format", "json")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def headline(at) -> str:
    """The subheader the page opens on (its "see them" link written as a reader sees it)."""
    return plain(at.subheader[0].value).replace("[see them](#retrieval-better-answer-worse)", "see them")


def test_the_sample_opens_on_its_sentence_with_the_commands_counts(workspace) -> None:
    at = app("views/answers.py")
    cli = command_json("--labels", SAMPLE / "labels.tsv", *(x for run in ("base", "tuned", "tuned-256d") for x in
                                                            ("--run", SAMPLE / f"{run}.trec")),
                       "--grades", f"base={SAMPLE / 'answers' / 'base.deepeval.json'}",
                       "--grades", f"tuned={SAMPLE / 'answers' / 'tuned.deepeval.json'}", "--k", "10")
    [pair] = cli["diverging"]
    assert (pair["a"], pair["b"]) == ("base", "tuned")
    # base finds more on more queries than tuned does, so the sentence reads base over tuned.
    found, worse = pair["a_finds_more"], pair["retrieval_worse_answer_better"]
    assert found > pair["b_finds_more"]
    assert headline(at) == (f"base retrieves better than tuned for {found} queries but answers {worse['count']} of "
                            "them worse: see them")
    listed = at.dataframe[1].value
    assert sorted(listed["query"]) == sorted(worse["queries"])  # the largest fall in the grade first
    assert listed["Correctness base"].sub(listed["Correctness tuned"]).round(9).is_monotonic_increasing
    joint = at.dataframe[0].value.set_index("run")
    for row in cli["joint"]:
        assert joint.loc[row["run"], "found a relevant doc, answered well"] == row["hit_good"]
        assert joint.loc[row["run"], "found none, answered badly"] == row["miss_bad"]

    # A query opens up close (a row click puts it in the URL): both answers, the judge's reasons, what each run
    # retrieved.
    opened = app("views/answers.py", query=listed["query"].iloc[0])
    words = texts(opened)
    assert "Its answer" in words and "The judge's reason" in words and "What each run retrieved: its top 10" in words
    assert "Off target" in words or "Wrong article" in words or "declines" in words


def test_grades_uploaded_on_the_data_page_are_recorded_and_read_as_the_command_reads_them(workspace) -> None:
    at = app("views/data.py")
    at.file_uploader(key="data.labels.0").set_value(("labels.tsv", (GRADES / "labels.tsv").read_bytes(), "text/plain"))
    at.file_uploader(key="data.runs.0").set_value([(f"{name}.trec", (GRADES / f"{name}.trec").read_bytes(),
                                                   "text/plain") for name in ("bm25", "dense")])
    at.run()
    no_exceptions(at)
    bad = b"query_id,correct\nq1,1.7\n"
    at.file_uploader(key="data.grades.0.bm25").set_value(("bad.csv", bad, "text/csv")).run()
    errors = [plain(e.value) for e in at.error]
    assert "bad.csv, line 2: expected a grade between 0 and 1" in errors[0] and "got '1.7'" in errors[0], errors
    at.file_uploader(key="data.grades.0.bm25").set_value(("ragas.csv", (GRADES / "ragas.csv").read_bytes(),
                                                          "text/csv"))
    at.file_uploader(key="data.grades.0.dense").set_value(
        ("ragas_dense.json", (GRADES / "ragas_dense.json").read_bytes(), "application/json"))
    at.run()
    no_exceptions(at)
    assert "bm25: ragas.csv (ragas) · 4 of 4 graded rows joined a scored labeled query" in texts(at)
    data = at.query_params["data"]

    cli = command_json("--labels", GRADES / "labels.tsv", "--run", GRADES / "bm25.trec", "--run",
                       GRADES / "dense.trec", "--grades", f"bm25={GRADES / 'ragas.csv'}",
                       "--grades", f"dense={GRADES / 'ragas_dense.json'}", "--k", "2")
    page = app("views/answers.py", data=data, k="2", grade="faithfulness")
    [pair] = [d for d in cli["diverging"] if d["metric"] == "faithfulness"]
    assert headline(page) == (f"bm25 retrieves better than dense for {pair['a_finds_more']} queries but answers "
                              f"{pair['retrieval_worse_answer_better']['count']} of them worse: see them")
    assert page.dataframe[1].value["query"].tolist() == pair["retrieval_worse_answer_better"]["queries"]

    overview = app(data=data, k="2")
    table = overview.dataframe[0].value.set_index("run")
    means = {r["name"]: r["metrics"]["faithfulness"]["mean"] for r in cli["runs"]}
    assert table["answer grade (faithfulness)"].to_dict() == pytest.approx(means)

    activity = app("views/activity.py")
    events = activity.dataframe[0].value
    uploads = events[events["action"] == "upload"]["what"].tolist()
    assert any(w.startswith("answer grades of bm25: ragas.csv #") for w in uploads), uploads
    assert any(w.startswith("answer grades of dense: ragas_dense.json #") for w in uploads), uploads
