"""The Answers page's model called directly (and what it adds to the Overview, Present and the Data page): the sentence
it opens on, its list and chart, one query's answers, every count equal to the core's study of the same files read as
``evalcore answers`` reads them; and the edge cases: one graded run, no grades, a grade file that cannot be read."""

from __future__ import annotations

import json

import pytest

import evalcore
from evalcore.analyses.answer_join import join_grades
from evalcore.analyses.answers import answer_study
from evalcore.metrics.dataset import GradeSpec
from evalcore.metrics.split import scoring_labels
from evalcore.readers.grades import read_grades
from evalcore.report.answers import answers_dict

from dashboard import loading
from dashboard.page_models import answers, data, overview, present
from tests.page_models.dump import to_json
from tests.page_models.small_data import held, labels_csv

SAMPLE = loading.SAMPLE_DIR
RUNS = ("base", "tuned", "tuned-256d")


def core_study(k: int) -> dict:
    """The sample's answers as ``evalcore answers --format json`` computes them: the files read again, the tune
    split scored at k alone."""
    labels = evalcore.read_labels(SAMPLE / "labels.tsv")
    scoped = scoring_labels(labels)
    runs = [evalcore.read_run(SAMPLE / f"{name}.trec", name=name) for name in RUNS]
    grades = [read_grades(SAMPLE / "answers" / f"{name}.deepeval.json", run=name) for name in ("base", "tuned")]
    joined = join_grades(grades, labels, scored=list(scoped.labels.queries), runs=list(RUNS))
    return answers_dict(answer_study(joined, scoped.evaluate(runs, k=(k,)), k=k))


@pytest.mark.parametrize("k", [1, 10])
def test_the_sentence_and_its_list_are_the_cores_counts(sample, k):
    shown = answers.page(sample, k, RUNS)
    assert shown.ok
    page = shown.value
    core = core_study(k)
    [pair] = core["diverging"]
    ways = {("tuned", "base"): (pair["b_finds_more"], pair["retrieval_better_answer_worse"]),
            ("base", "tuned"): (pair["a_finds_more"], pair["retrieval_worse_answer_better"])}
    lead = page.choice.lead
    finds, worse = ways[lead.better, lead.worse]
    assert finds == max(pair["a_finds_more"], pair["b_finds_more"])  # the run that retrieves more more often leads
    assert page.sentence == f"{lead.better} retrieves better than {lead.worse} for {finds} queries but answers " \
                            f"{worse['count']} of them worse"
    assert sorted(page.queries) == sorted(worse["queries"]) == sorted(page.listed["query"])
    drop = (page.listed[f"Correctness {lead.worse}"] - page.listed[f"Correctness {lead.better}"]).round(9)
    assert drop.is_monotonic_decreasing and (drop > 0).all()
    joint = page.joint.set_index("run")
    for row in core["joint"]:
        assert joint.loc[row["run"]].tolist() == [row["hit_good"], row["hit_bad"], row["miss_good"], row["miss_bad"]]
    assert page.choice.metric == "Correctness" and page.choice.metrics == ("Correctness",)


def test_the_sample_at_k_1_tells_the_tuned_story(sample):
    page = answers.page(sample, 1, RUNS).value
    assert page.sentence == "tuned retrieves better than base for 39 queries but answers 12 of them worse"
    assert "Retrieves better: more of a query's relevant docs in the top 1 (a higher recall@1)" in page.words
    assert page.grades.startswith("Answer grades (Correctness, from 0 to 1, higher is better): tuned 0.71, base 0.70")
    assert page.files[0].endswith("224 of 320 rows joined; 96 rows are sealed holdout queries, left out.")
    other = answers.page(sample, 1, RUNS, pair="base over tuned").value
    assert other.choice.lead.better == "base" and other.sentence.startswith("base retrieves better than tuned for 5")


def test_the_chart_places_every_graded_query_once(sample):
    page = answers.page(sample, 10, RUNS).value
    placed = page.chart["data"]["values"]
    assert {p["run"] for p in placed} == {"base", "tuned"}
    assert sum(p["queries"] for p in placed if p["run"] == "tuned") == 224
    assert page.chart["facet"]["column"]["sort"] == ["base", "tuned"]


def test_one_query_shows_both_answers_the_judges_reason_and_the_failures_drill_down(sample):
    page = answers.page(sample, 10, RUNS).value
    query = page.listed["query"].iloc[0]
    told = answers.query_answers(sample, 10, query, "Correctness", RUNS).value
    assert [a.run for a in told.answers] == ["base", "tuned"] and set(told.recall) == {"base", "tuned"}
    cases = {run: {c["name"]: c for c in json.loads((SAMPLE / "answers" / f"{run}.deepeval.json").read_text())[
        "testRunData"]["testCases"]} for run in ("base", "tuned")}
    for answer in told.answers:
        case = cases[answer.run][query]
        assert answer.answer == case["actualOutput"] and answer.reason == case["metricsData"][0]["reason"]
        assert answer.grade == case["metricsData"][0]["score"]
    assert told.query_text == cases["base"][query]["input"]
    drill = answers.drill_down(sample, query, 10, RUNS)
    assert drill.ok and drill.value.query == query  # the Failures page's own drill-down


def test_the_numbers_are_the_commands(sample):
    numbers = answers.numbers(sample, 10)
    core = core_study(10)
    assert numbers.means.set_index("run")["mean"].to_dict() == pytest.approx(
        {r["name"]: r["metrics"]["Correctness"]["mean"] for r in core["runs"]})
    assert numbers.command.startswith("evalcore answers --labels labels.tsv --run base=base.trec")
    assert numbers.command.endswith("--grades tuned=answers/tuned.deepeval.json --k 10")
    assert any(s.startswith("base and tuned are indistinguishable on Correctness") for s in numbers.sentences)


def test_the_overview_gains_the_grade_beside_recall(sample):
    shown = overview.overview(sample, 10, RUNS, False, False)
    assert shown.grades == ("answer grade (Correctness)",)
    columns = list(shown.table.columns)
    assert columns.index("answer grade (Correctness)") == columns.index("recall@10 95% CI") + 1
    means = {r["name"]: r["metrics"]["Correctness"]["mean"] for r in core_study(10)["runs"]}
    table = shown.table.set_index("run")
    assert table.loc[["base", "tuned"], "answer grade (Correctness)"].to_dict() == pytest.approx(means)
    assert table["answer grade (Correctness)"].isna().tolist() == [False, False, True]  # tuned-256d: not graded
    assert "whether the run that retrieves better also answers better is on the Answers page" in shown.graded


def test_present_walks_the_list_in_its_order_and_tells_both_answers(sample):
    lead, sequence = present.answer_sequence(sample, 10, RUNS, None, None)
    page = answers.page(sample, 10, RUNS).value
    assert sequence == page.listed["query"].tolist() and lead == page.choice.lead
    told = present.answer_story(sample, sequence[0], 10, lead.metric, lead.better, lead.worse)
    assert told.ok
    story = told.value
    assert [r.run for r in story.story.runs] == [lead.better, lead.worse]
    assert story.headline.startswith(f"{lead.better} found more of what is relevant in its top 10, yet its answer was "
                                     "graded lower on Correctness: ")
    assert all(a.answer is None or len(a.answer) <= present.ANSWER_CHARS + 1 for a in story.answers)


def test_one_graded_run_says_what_its_answers_did(make_dataset):
    dataset = make_dataset({"q1": ["d1"], "q2": ["d2"], "q3": ["d3"]},
                           {"one": {"q1": ["d1"], "q2": ["x"], "q3": ["d3"]}, "two": {"q1": ["x"]}})
    grades = held("one.csv", "query_id,correct,reason\nq1,1,right\nq2,0,wrong doc\nq3,0.5,\n")
    dataset = dataset.with_grades("one", grades)
    page = answers.page(dataset, 1, ("one", "two")).value
    assert page.choice.lead is None and page.queries == ()
    assert page.sentence == ("one, correct: retrieval found a relevant doc in the top 1 for 2 of 3 graded queries, and "
                             "2 of those were answered well (correct >= 0.5); of the 1 where it found none, 0 were "
                             "answered well anyway")
    told = answers.query_answers(dataset, 1, "q2", "correct", ("one", "two")).value
    assert [(a.run, a.grade, a.reason) for a in told.answers] == [("one", 0.0, "wrong doc")]
    assert overview.overview(dataset, 1, ("one", "two"), False, False).table["answer grade (correct)"].tolist()[0] \
        == pytest.approx(0.5)


def test_without_grades_there_is_no_page_and_the_overview_is_unchanged(make_dataset):
    dataset = make_dataset({"q1": ["d1"]}, {"one": {"q1": ["d1"]}})
    assert answers.page(dataset, 10, ("one",)) is None and answers.numbers(dataset, 10) is None
    shown = overview.overview(dataset, 10, ("one",), False, False)
    assert shown.grades == () and shown.graded is None and not any("answer" in c for c in shown.table.columns)


def test_a_grade_file_that_cannot_be_read_or_joined_is_named_on_the_data_page(make_dataset):
    dataset = make_dataset({"q1": ["d1"], "q2": ["d2"]}, {"one": {"q1": ["d1"], "q2": ["d2"]}})
    bad = data.grades_for(dataset, "one", held("bad.csv", "query_id,correct\nq1,maybe\n"))
    assert not bad.ok and bad.error.startswith("bad.csv, line 2: expected a grade between 0 and 1") and "'maybe'" in \
        bad.error
    crossed = data.grades_for(dataset, "one", held("crossed.csv", "query_id,query_text,correct\nq1,words of q2,1\n"))
    assert not crossed.ok and crossed.error.startswith("crossed.csv, line 2: expected a row whose query id and text "
                                                       "name the same query")
    good = data.grades_for(dataset, "one", held("ok.csv", "query_id,correct\nq1,1\nq9,0\n"), "table")
    assert good.ok and good.value.said == ("one: ok.csv (a grade table) · 1 of 2 graded rows joined a scored labeled "
                                           "query · grades: correct")
    assert data.grade_format("deepeval") == "deepeval" and data.grade_format("detect") is None


def test_the_sample_carries_its_grades_and_a_dataset_without_grades_keeps_its_key(sample):
    assert [g.run for g in sample.grades] == ["base", "tuned"]
    assert all(isinstance(g, GradeSpec) and g.file.name.startswith("answers/") for g in sample.grades)
    without = sample.with_grades("base", None).with_grades("tuned", None)
    assert "grades" not in without.manifest() and without.key != sample.key


def test_the_page_dumps_as_json(sample):
    dumped = json.loads(to_json(answers.page(sample, 10, RUNS)))
    assert dumped["choice"]["lead"]["better"] == "base" and dumped["sentence"].startswith("base retrieves better")


def test_grades_that_meet_no_scored_query_say_so(sample):
    half = sample.with_labels(held("mine.csv", labels_csv({"q1": ["d1"], "q2": ["d2"]})))
    page = answers.page(half, 10, RUNS).value
    assert page.sentence.startswith("None of the graded answers is to a labeled query these pages score")
    assert page.chart is None and page.joint.empty and page.queries == ()
    assert page.files[0].startswith("answers/base.deepeval.json (base): 0 of 320 rows joined; 320 graded rows match no "
                                    "labeled query: q001, q002")
