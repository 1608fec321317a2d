"""Answer grades as the tools write them (ragas, DeepEval, RAGChecker, promptfoo, a plain table): every shape read to
the same kind of grade set, every bad value one line naming the file, the row and the value; the join to labeled
queries (by id, else by text) checked against a plain-Python reference, and its errors."""

from __future__ import annotations

import json
import unicodedata
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from evalcore.analyses.answer_join import join_grades
from evalcore.errors import InputError, UsageError
from evalcore.readers.grades import query_keys, read_grades, text_key
from evalcore.readers.labels import read_labels
from tests.readers.files import parquet_bytes, write

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "grades"
NAN = float("nan")


def _grades(g) -> dict[str, list]:
    return {m: [None if np.isnan(v) else v for v in g.grades[m]] for m in g.metrics}


# ----------------------------------------------------------------------------- each tool's file


def test_ragas_csv_with_a_bom_line_breaks_in_cells_and_missing_grades() -> None:
    g = read_grades(FIXTURES / "ragas.csv", run="bm25")
    assert (g.format, g.run, g.label, g.where) == ("ragas", "bm25", "ragas", "line")
    assert _grades(g) == {"faithfulness": [1.0, 0.5, 0.75, 0.0], "answer_relevancy": [0.91, None, 0.8, 0.2],
                          "context_recall": [1.0, 0.5, None, 0.0]}  # the unnamed index and the text columns: not read
    assert g.ids is None and list(g.texts) == ["How do I get a refund?", "  reset   my PASSWORD ",
                                               "Enterprise SSO setup", "Delete my account"]
    assert list(g.keys) == ["how do i get a refund?", "reset my password", "enterprise sso setup", "delete my account"]
    assert g.missing == {"faithfulness": 0, "answer_relevancy": 1, "context_recall": 1}
    codes = [w.code for w in g.warnings]
    assert codes == ["file_repaired", "grade_missing", "grade_missing"]
    assert g.place(2)[0] == 5  # the third answer starts on line 5: quoted line breaks counted as the file has them


def test_ragas_json_records_with_bare_nan() -> None:
    g = read_grades(FIXTURES / "ragas.json")
    assert g.format == "ragas" and g.run == "ragas" and g.where == "row"
    assert _grades(g) == {"faithfulness": [1.0, None, 0.0], "answer_correctness": [0.95, 0.6, 0.1]}


def test_deepeval_latest_test_run() -> None:
    g = read_grades(FIXTURES / "latest_test_run.json", run="dense")
    assert g.format == "deepeval" and g.where == "test case"
    assert _grades(g) == {"Faithfulness": [1.0, 0.4, 0.8], "Answer Relevancy": [0.9, None, 1.0]}  # errored: missing
    assert list(g.ids) == ["test_case_0", "test_case_1", "test_case_2"]
    assert g.texts[1] == "Reset my password"
    assert g.metadata["hyperparameters"] == {"model": "gpt-4o-mini", "prompt template": "v3", "chunk size": 500}


def test_ragchecker_output() -> None:
    g = read_grades(FIXTURES / "ragchecker.json")
    assert g.format == "ragchecker" and list(g.ids) == ["q1", "q2"]
    assert g.metrics == ["precision", "recall", "f1", "claim_recall", "context_precision", "faithfulness",
                         "hallucination"]  # the per-result metrics; the overall ones (percent) are not read
    assert _grades(g)["faithfulness"] == [1.0, 0.5]


def test_promptfoo_results_version_3() -> None:
    g = read_grades(FIXTURES / "promptfoo.json", run="mini")
    assert g.format == "promptfoo" and g.where == "result" and g.metadata == {"provider": "mini"}
    assert _grades(g) == {"score": [1.0, 0.25, None], "pass": [1.0, 0.0, None], "correct": [1.0, 0.0, None],
                          "grounded": [0.75, 0.5, None]}  # the errored result (failureReason 2) graded nothing
    assert list(g.texts) == ["How do I get a refund?", "Reset my password", "Enterprise SSO setup"]
    assert [w.code for w in g.warnings] == ["grade_errored"]


def test_promptfoo_query_var_and_providers(tmp_path) -> None:
    doc = json.loads((FIXTURES / "promptfoo.json").read_text())
    for result, question in zip(doc["results"]["results"], ("refund?", "password?", "sso?")):
        result["vars"]["question"] = question
    path = write(tmp_path, "vars.json", json.dumps(doc))
    assert list(read_grades(path, query_var="question").texts) == ["refund?", "password?", "sso?"]
    assert read_grades(path).texts[0] == "How do I get a refund?"  # query comes before question
    with pytest.raises(InputError, match=r"expected a var named 'question' \(--query-var\) in every result, got "
                                         r"'vars: query, context'"):
        read_grades(FIXTURES / "promptfoo.json", query_var="question")
    second = [dict(r, provider={"id": "openai:gpt-4o", "label": "large"}) for r in doc["results"]["results"]]
    doc["results"]["results"] += second  # the same tests against a second provider
    path = write(tmp_path, "two.json", json.dumps(doc))
    assert read_grades(path, run="large").n_rows == 3
    with pytest.raises(InputError, match=r"results of one provider .*got '2 providers: mini, large'"):
        read_grades(path, run="base")


def test_plain_table_with_words_for_grades() -> None:
    g = read_grades(FIXTURES / "table.tsv")
    assert g.format == "table" and list(g.ids) == ["q1", "q2", "q3", "q4"] and g.texts is None
    assert _grades(g) == {"correct": [1.0, 0.0, 1.0, 0.0], "helpful": [1.0, 0.0, 1.0, 1.0],
                          "score": [0.9, 0.2, None, 0.4]}


@pytest.mark.parametrize("name, content", [
    ("g.csv", "query_id,grade\nq1,0.5\nq2,pass\n"),
    ("g.jsonl", '{"query_id": "q1", "grade": 0.5}\n{"query_id": "q2", "grade": true}\n'),
    ("g.json", '[{"query_id": "q1", "grade": 0.5}, {"query_id": "q2", "grade": "PASS"}]'),
    ("g.parquet", parquet_bytes({"query_id": ["q1", "q2"], "grade": [0.5, 1.0]})),
    ("g.txt", "query_id\tgrade\nq1\t0.5\nq2\t1\n"),
])
def test_every_container_of_a_table(tmp_path, name, content) -> None:
    g = read_grades(write(tmp_path, name, content))
    assert g.format == "table" and list(g.ids) == ["q1", "q2"] and _grades(g) == {"grade": [0.5, 1.0]}


def test_the_format_can_be_named(tmp_path) -> None:
    assert read_grades(FIXTURES / "ragas.csv", format="table").format == "table"
    assert read_grades(FIXTURES / "ragchecker.json", format="RAGChecker").format == "ragchecker"
    with pytest.raises(InputError, match=r"table.tsv: expected deepeval's JSON output \(a JSON document\), got 'a tsv"):
        read_grades(FIXTURES / "table.tsv", format="deepeval")
    with pytest.raises(UsageError, match="The 'grades format' parameter must be one of ragas, deepeval"):
        read_grades(FIXTURES / "table.tsv", format="trulens")


# ----------------------------------------------------------------------------- bad input: one line each

BAD = [
    ("g.csv", "query_id,faithfulness\nq1,0.5\nq2,1.7\n", "g.csv, line 3: expected a grade between 0 and 1",
     "in column 'faithfulness', got '1.7'"),
    ("g.csv", "query_id,faithfulness\nq1,-0.1\n", "g.csv, line 2:", "got '-0.1'"),
    ("g.tsv", "query_id\tcorrect\nq1\tpass\nq2\tmaybe\n", "g.tsv, line 3:", "in column 'correct', got 'maybe'"),
    ("g.json", '[{"user_input": "a", "faithfulness": Infinity}]', "g.json, row 1:", "got 'inf'"),
    ("g.json", '[{"user_input": "a", "faithfulness": [0.5]}]', "g.json, row 1:", "got '[0.5]'"),
    ("g.csv", "query_id,grade\nq1,0.5\nq2,0.4\nq1,0.9\n", "g.csv, line 4:",
     "expected each query once in a grade file (it is also on line 2)"),
    ("g.csv", 'user_input,grade\n"Refund  timing",0.5\nrefund timing,0.9\n', "g.csv, line 3:",
     "expected each query once in a grade file (it is also on line 2)"),
    ("g.csv", "query_id,grade\nq1,0.5\n,0.9\n", "g.csv, line 3:", "expected a query id or a query text on every"),
    ("g.csv", "doc,grade\nd1,0.5\n", "g.csv:", "expected a query id column (query_id, qid, query-id) or a query text"),
    ("g.json", '{"something": []}', "g.json:", "expected a grade file: ragas records"),
    ("g.json", '{"testRunLink": "https://app.confident-ai.com/x"}', "g.json:", "holds only a link to Confident AI"),
    ("g.json", '[{"user_input": "a", "x": 0.5},', "g.json, line 1:", "expected valid JSON"),
    ("g.json", '{"testRunData": {"testCases": [{"name": "t", "input": "a", "metricsData": [{"score": 0.5}]}]}}',
     "g.json, test case 1:", "expected a name for every metric in metricsData"),
    ("g.json", '{"results": {"version": 2, "results": []}}', "g.json:", "expected promptfoo's output version 3"),
    ("g.csv", "query_id\nq1\n", "g.csv:", "expected at least one grade column"),
]


@pytest.mark.parametrize("name, content, place, expected", BAD, ids=[f"{i}-{b[0]}" for i, b in enumerate(BAD)])
def test_every_bad_grade_file_gets_one_line(tmp_path, name, content, place, expected) -> None:
    with pytest.raises(InputError) as info:
        read_grades(write(tmp_path, name, content))
    message = str(info.value)
    assert message.startswith(str(tmp_path / place.split(":")[0]) + place[len(place.split(":")[0]):]), message
    assert expected in message and "\n" not in message, message


def test_missing_grades_are_counted_not_errors(tmp_path) -> None:
    g = read_grades(write(tmp_path, "g.csv", "query_id,a,b\nq1,,NaN\nq2,nan,0.5\nq3,0.25,\n"))
    assert _grades(g) == {"a": [None, None, 0.25], "b": [None, 0.5, None]} and g.missing == {"a": 2, "b": 2}
    assert [w.message.split(": ", 1)[1] for w in g.warnings] == [
        "2 rows with no a grade (NaN or empty), left out of its n", "2 rows with no b grade (NaN or empty), left out "
        "of its n"]


# ----------------------------------------------------------------------------- text keys


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(st.none(), st.text(max_size=12), st.text(alphabet=" \t\nAbcßİΣﬁ１", max_size=12)),
                max_size=20))
def test_query_keys_are_the_reference_definition(texts) -> None:
    expected = [None if t is None else " ".join(unicodedata.normalize("NFKC", t).casefold().split()) for t in texts]
    assert list(query_keys(np.array(texts, dtype=object))) == expected
    assert [None if t is None else text_key(t) for t in texts] == expected


# ----------------------------------------------------------------------------- the join

TEXTS = ["refund timing", "Reset my password", "enterprise sso", "Delete  account", "export"]


def _labels(tmp_path, texts=TEXTS) -> object:
    lines = ["query\tdoc_id\tgrade\tquery_text"] + [f"L{i}\td{i}\t1\t{t}" for i, t in enumerate(texts)]
    return read_labels(write(tmp_path, "labels.tsv", "\n".join(lines) + "\n"))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.tuples(st.sampled_from(["id", "text", "shout", "stranger"]), st.integers(0, 4),
                          st.one_of(st.none(), st.floats(0, 1))), max_size=12))
def test_the_join_and_its_counts_match_a_plain_reference(tmp_path, rows) -> None:
    """Rows name a labeled query by id, by text (as written or shouted with extra spaces), or name a stranger; the
    join, its counts and its lists equal a loop written the obvious way."""
    seen, kept = set(), []
    for how, i, grade in rows:  # one row per query and per stranger, as a grade file must have
        key = ("s" if how == "stranger" else "q", i)
        if key not in seen:
            seen.add(key)
            kept.append((how, i, grade))
    records = []
    for how, i, grade in kept:
        record = {"query_id": None, "query_text": None, "g": grade}
        if how == "id":
            record["query_id"] = f"L{i}"
        elif how == "text":
            record["query_text"] = TEXTS[i]
        elif how == "shout":
            record["query_text"] = "  " + TEXTS[i].upper().replace(" ", "   ") + " "
        else:
            record["query_text"] = f"stranger {i}"
        records.append(record)
    labels = _labels(tmp_path)
    if not records:
        return
    path = write(tmp_path, "g.json", json.dumps(records).replace("NaN", "null"))
    joined = join_grades([read_grades(path, run="r")], labels)
    reference = {f"L{i}": NAN for i in range(5)}
    unmatched = []
    for how, i, grade in kept:
        if how == "stranger":
            unmatched.append(f"stranger {i}")
        else:
            reference[f"L{i}"] = NAN if grade is None else grade
    graded = {f"L{i}" for how, i, _ in kept if how != "stranger"}
    got = dict(zip(joined.queries, joined.grades["r"]["g"]))
    assert list(joined.queries) == [f"L{i}" for i in range(5)]
    assert all((np.isnan(got[q]) and np.isnan(v)) or got[q] == v for q, v in reference.items())
    match = joined.matches[0]
    assert list(match.rows_unmatched) == unmatched
    assert list(match.queries_ungraded) == [f"L{i}" for i in range(5) if f"L{i}" not in graded]
    assert match.n_matched == len(graded) and match.n_rows == len(kept)


def test_join_errors_are_sentences(tmp_path) -> None:
    labels = _labels(tmp_path, TEXTS[:3] + ["refund  TIMING"])  # L0 and L3 share a text
    twice = write(tmp_path, "a.csv", "query_text,g\nRefund timing,0.5\n")
    with pytest.raises(InputError, match=r"a.csv, line 2: expected a query text that names one labeled query \(it is "
                                         r"the text of L0 and L3 in .*labels.tsv; give the grade file a query_id "
                                         r"column\), got 'Refund timing'"):
        join_grades([read_grades(twice)], labels)
    labels = _labels(tmp_path)
    same = write(tmp_path, "b.csv", "query_id,query_text,g\nL1,,0.5\n,reset my password,0.9\n")
    with pytest.raises(InputError, match=r"b.csv, line 3: expected one row per query in a grade file \(this row and "
                                         r"line 2 are both query 'L1'\)"):
        join_grades([read_grades(same)], labels)
    crossed = write(tmp_path, "c.csv", "query_id,query_text,g\nL0,export,0.5\n")
    with pytest.raises(InputError, match=r"c.csv, line 2: expected a row whose query id and text name the same query "
                                         r"\(the id is labeled query 'L0', the text is that of 'L4'\)"):
        join_grades([read_grades(crossed)], labels)
    fine = write(tmp_path, "d.csv", "query_id,g\nL0,0.5\n")
    with pytest.raises(UsageError, match=r"--grades tuned=.*d.csv: there is no run named 'tuned' to join these answers "
                                         r"to; the runs loaded are bm25, dense"):
        join_grades([read_grades(fine, run="tuned")], labels, runs=["bm25", "dense"])
    with pytest.raises(UsageError, match=r"--metric faithfulness: no grade file has a grade named 'faithfulness'; the "
                                         r"grades read are g"):
        join_grades([read_grades(fine)], labels, metrics=["faithfulness"])


def test_ids_first_then_text_and_holdout_rows_are_counted_not_named(tmp_path) -> None:
    labels = _labels(tmp_path)
    g = read_grades(write(tmp_path, "g.csv", "query_id,query_text,g\nL2,something else,1\n,EXPORT,0\n,gone,0.5\n"))
    joined = join_grades([g], labels, scored=["L0", "L1", "L2", "L3"])  # L4 is on the sealed side
    match = joined.matches[0]
    assert list(joined.queries) == ["L0", "L1", "L2", "L3"] and match.sealed == 1
    assert match.rows_unmatched == ("gone",) and match.queries_ungraded == ("L0", "L1", "L3")
    assert joined.grades["g"]["g"][2] == 1.0


def test_two_judges_of_one_run_keep_both_grades(tmp_path) -> None:
    labels = read_labels(FIXTURES / "labels.tsv")
    person, llm = read_grades(FIXTURES / "person.csv", run="base"), read_grades(FIXTURES / "llm.json", run="base")
    joined = join_grades([person, llm], labels)
    assert list(joined.grades["base"]) == ["correctness (person)", "correctness (llm)"]
    assert list(joined.grades["base"]["correctness (llm)"][:5]) == [1.0, 1.0, 0.5, 0.0, 0.5]


def test_without_labels_files_meet_by_text(tmp_path) -> None:
    a = read_grades(FIXTURES / "ragas.csv", run="a")
    b = read_grades(FIXTURES / "latest_test_run.json", run="b")
    joined = join_grades([a, b])
    assert not joined.labeled and joined.runs == ("a", "b")
    assert list(joined.queries) == ["How do I get a refund?", "  reset   my PASSWORD ", "Enterprise SSO setup",
                                    "Delete my account"]
    assert list(pd.Series(joined.grades["b"]["Faithfulness"]).fillna(-1)) == [1.0, 0.4, 0.8, -1]
