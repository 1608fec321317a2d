"""Each graded answer's text and the judge's reasons, read beside the grades when asked for (the dashboard shows
them on the Answers page; the command line never reads them): per tool, laid over the joined queries, and read back
query by query (`evalcore.analyses.answer_queries`)."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pandas as pd
import pytest

from evalcore.analyses.answer_join import join_grades
from evalcore.analyses.answer_queries import answers_to, lead_queries, leads, main_grade, per_query
from evalcore.analyses.answers import answer_study
from evalcore.metrics.split import scoring_labels
from evalcore.readers.grades import read_grades
from evalcore.readers.labels import read_labels
from evalcore.readers.runs import read_run

G = Path(__file__).resolve().parents[1] / "fixtures" / "grades"


def notes(name: str, **options) -> dict:
    return read_grades(G / name, notes=True, **options).notes.to_dict("list")


def test_notes_are_read_only_when_asked_and_change_no_grade() -> None:
    for name in ("ragas.csv", "latest_test_run.json", "promptfoo.json", "ragchecker.json", "table.tsv"):
        plain, noted = read_grades(G / name), read_grades(G / name, notes=True)
        assert plain.notes is None and len(noted.notes) == noted.n_rows
        pd.testing.assert_frame_equal(plain.grades, noted.grades)
        assert plain.metrics == noted.metrics


def test_each_tools_answer_and_reason() -> None:
    ragas = notes("ragas.csv")
    assert ragas["answer"][0] == "You get a refund within 5 days.\nAsk support if it is late."
    assert set(ragas) == {"answer"}
    deepeval = notes("latest_test_run.json")
    assert deepeval["answer"] == ["Within 5 days.", "Use the link.", "Upgrade, then SAML."]
    assert deepeval["reason: Faithfulness"][0] == "All claims supported."
    assert deepeval["reason: Answer Relevancy"][1] == "Timeout"  # the metric errored: its error is the reason
    promptfoo = notes("promptfoo.json")
    assert promptfoo["answer"] == ["Within 5 days.", "Call us.", None]
    assert promptfoo["reason"] == ["All assertions passed", "Expected mention of the reset link", "API error: 500"]
    assert notes("ragchecker.json") == {"answer": ["Within 5 days.", "Call us."]}
    assert notes("table.tsv") == {"answer": [None] * 4}


@pytest.mark.parametrize("kind", ["csv", "tsv", "jsonl", "parquet"])
def test_a_tables_answer_and_reason_columns_in_every_container(kind) -> None:
    frame = pd.DataFrame({"query_id": ["q1", "q2"], "correct": [1.0, 0.0], "response": ["yes", " "],
                          "reason": ["fits the doc", None]})
    if kind == "parquet":
        buffer = io.BytesIO()
        frame.to_parquet(buffer)
        data = buffer.getvalue()
    elif kind == "jsonl":
        data = "".join(json.dumps(r) + "\n" for r in frame.to_dict("records")).encode()
    else:
        data = frame.to_csv(index=False, sep="\t" if kind == "tsv" else ",").encode()
    read = read_grades(data, notes=True, run="one")
    assert read.metrics == ["correct"]
    assert read.notes.to_dict("list") == {"answer": ["yes", None], "reason": ["fits the doc", None]}


def test_notes_follow_the_join_and_a_query_reads_its_runs_answers() -> None:
    labels = read_labels(G / "labels.tsv")
    scoped = scoring_labels(labels)
    runs = [read_run(G / f"{name}.trec", name=name) for name in ("bm25", "dense")]
    grades = [read_grades(G / "ragas.csv", run="bm25", notes=True),
              read_grades(G / "ragas_dense.json", run="dense", notes=True)]
    joined = join_grades(grades, labels, scored=list(scoped.labels.queries), runs=["bm25", "dense"])
    assert joined.files[0].notes["answer"][list(joined.queries).index("q4")] == "I cannot find that."
    assert joined.files[0].notes["answer"][list(joined.queries).index("q6")] is None  # no row for q6
    evaluation = scoped.evaluate(runs, k=10)
    study = answer_study(joined, evaluation, k=2)
    assert main_grade(study) == "faithfulness"
    first, second = leads(study, "faithfulness")
    assert (first.better, first.worse, first.finds_more, first.answers_worse) == ("bm25", "dense", 2, ("q3",))
    assert (second.better, second.finds_more, second.answers_worse) == ("dense", 1, ())
    listed = lead_queries(study, evaluation, first)
    assert listed[["query", "grade_better", "grade_worse", "drop"]].values.tolist() == [["q3", 0.75, 1.0, 0.25]]
    told = answers_to(study, "q3", "faithfulness")
    assert [(a.run, a.grade) for a in told] == [("bm25", 0.75), ("dense", 1.0)]
    assert told[1].answer == "SSO needs the enterprise plan." and told[1].reason is None
    points = per_query(study, evaluation, "faithfulness", ("dense",))
    assert len(points) == 5 and set(points["run"]) == {"dense"}


def test_two_judges_of_one_run_keep_their_own_answers() -> None:
    labels = read_labels(G / "labels.tsv")
    runs = [read_run(G / "bm25.trec", name="bm25")]
    grades = [read_grades(G / name, run="bm25", notes=True) for name in ("person.csv", "llm.json")]
    joined = join_grades(grades, labels, runs=["bm25"])
    study = answer_study(joined, scoring_labels(labels).evaluate(runs, k=10), k=2)
    names = study.joined.metrics("bm25")
    assert names == ["correctness (person)", "correctness (llm)"]
    told = answers_to(study, "q2", "correctness (llm)")
    assert told[0].source.endswith("llm.json") and told[0].grade is not None
