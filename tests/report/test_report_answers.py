"""`evalcore report --grades`: the answers key of ``--format json`` holds exactly the numbers `evalcore answers
--format json` gives for the same files; the page shows each run's mean grade beside recall and one sentence on
where better retrieval answers worse; user text in grade files stays inert; bad input is one line, exit 2."""

from __future__ import annotations

import json
from pathlib import Path

import evalcore
from evalcore.readers.grades import read_grades
from evalcore.report.meeting import report_from_workspace
from evalcore.report.meeting_tables import page_one_room
from evalcore.store.workspace import Workspace

from cli_runner import run_cli

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "grades"
FILES = ["--labels", FIXTURES / "labels.tsv", "--run", FIXTURES / "bm25.trec", "--run", FIXTURES / "dense.trec",
         "--k", "2"]
GRADES = ["--grades", f"bm25={FIXTURES / 'ragas.csv'}", "--grades", f"dense={FIXTURES / 'ragas_dense.json'}"]


def _run(*args) -> str:
    done = run_cli(*args)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_the_reports_answers_are_the_answers_commands_numbers() -> None:
    report = json.loads(_run("report", *FILES, *GRADES, "--format", "json"))
    answers = json.loads(_run("answers", *FILES, *GRADES, "--format", "json"))
    shown = report["answers"]
    assert (shown.pop("metric"), shown.pop("good"), shown.pop("k")) == ("faithfulness", 0.5, 2)
    answers.pop("warnings")
    assert shown == answers  # every number: means, intervals, pairs, joint, diverging, correlation, unmatched
    bm25 = shown["runs"][0]["metrics"]["faithfulness"]
    assert (bm25["mean"], bm25["ci_low"], bm25["ci_high"], bm25["n"]) == (0.5625, 0.125, 0.875, 4)
    assert json.loads(_run("report", *FILES, "--format", "json"))["answers"] is None  # null without grades


def test_the_page_shows_the_grade_beside_recall_and_the_diverging_sentence(tmp_path) -> None:
    page = _run("report", *FILES, *GRADES)
    header = next(line for line in page.splitlines() if line.startswith("| # | run"))
    assert header.endswith("| answer grade: faithfulness \\(95% CI; n graded\\) |")  # the name: user text, escaped
    rows = [line for line in page.splitlines() if line.startswith("| 1 | bm25") or line.startswith("| 2 | dense")]
    assert rows[0].endswith("| 0.5625 (0.1250 to 0.8750; n = 4) |")
    assert rows[1].endswith("| 0.5500 (0.2000 to 0.9000; n = 5) |")
    first_page = page.split("## Appendix: details")[0]
    assert ("bm25 finds more than dense for 2 queries \\(recall@2 strictly higher\\), yet answers 1 of them worse "
            "\\(faithfulness strictly lower\\)\\.") in first_page
    assert "### Answer grades beside retrieval" in page and "q3" in page.split("## Appendix: details")[1]
    assert "grade\\_missing" in page  # the grade files' warnings are the report's too
    html_page = _run("report", *FILES, *GRADES, "--format", "html", "--no-charts")
    assert "<th>answer grade: faithfulness (95% CI; n graded)</th>" in html_page
    assert '<td class="num">0.5625 (0.1250 to 0.8750; n = 4)</td>' in html_page


def test_grade_names_and_runs_from_the_files_stay_inert(tmp_path) -> None:
    hostile = "<img src=x onerror=alert(1)>|**faith**"
    grades = tmp_path / "bm25.csv"
    grades.write_text(f'query_id,"{hostile}"\nq1,1\nq2,0.5\nq3,0\nq4,1\n', encoding="utf-8")
    args = ["report", *FILES, "--grades", f"bm25={grades}"]
    page = _run(*args)
    assert hostile not in page and "\\<img src=x onerror=alert\\(1\\)\\>\\|\\*\\*faith\\*\\*" in page
    html_page = _run(*args, "--format", "html", "--no-charts")
    assert "<img src=x" not in html_page and "&lt;img src=x onerror=alert(1)&gt;|**faith**" in html_page


def test_bad_grades_and_options_are_one_line_and_exit_2(tmp_path) -> None:
    bad = tmp_path / "bad.csv"
    bad.write_text("query_id,faithfulness\nq1,0.5\nq2,1.7\n", encoding="utf-8")
    cases = [
        (["--grades", f"bm25={bad}"], ["bad.csv", "1.7"]),
        (["--grades", f"nope={FIXTURES / 'ragas.csv'}"], ["nope", "bm25, dense"]),
        (["--good", "0.7"], ["--good", "--grades"]),
        ([*GRADES, "--good", "1.5"], ["good", "1.5"]),
    ]
    for extra, words in cases:
        done = run_cli("report", *FILES, *extra)
        assert done.returncode == 2, (extra, done.stderr)
        assert len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr, done.stderr
        assert all(word in done.stderr for word in words), (words, done.stderr)


def test_a_saved_evaluation_takes_grades_too(tmp_path) -> None:
    ws = Workspace(tmp_path / "ws")
    evaluation = evalcore.evaluate_runs([FIXTURES / "bm25.trec", FIXTURES / "dense.trec"], FIXTURES / "labels.tsv",
                                        k=(1, 2))
    saved = ws._save_evaluation(evaluation, k=2)
    grades = [read_grades(FIXTURES / "ragas.csv", run="bm25"), read_grades(FIXTURES / "ragas_dense.json", run="dense")]
    report = report_from_workspace(ws, saved.id, grades=grades)
    assert report.to_dict()["answers"]["runs"][0]["metrics"]["faithfulness"]["mean"] == 0.5625
    assert "0.5625 (0.1250 to 0.8750; n = 4)" in report.to_markdown()
    assert report_from_workspace(ws, saved.id).to_dict()["answers"] is None


def test_the_grade_sentence_takes_its_lines_from_the_failures_on_page_one() -> None:
    assert page_one_room(3, 5) == 5 and page_one_room(3, 5, taken=2) == 4
    assert page_one_room(8, 5, taken=2) == 1  # at least one each
