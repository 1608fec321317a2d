"""`evalcore answers`: the JSON keys as documented, the words before the numbers, CSV, the sealed holdout, and bad
input or usage as one line on stderr with exit 2 (never a traceback)."""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli_runner import run_cli
from tests.readers.files import write

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "grades"
BASE = ["answers", "--labels", FIXTURES / "labels.tsv", "--run", FIXTURES / "bm25.trec", "--run",
        FIXTURES / "dense.trec", "--k", "2"]
KEYS = {
    "runs": ["name", "n", "metrics"],
    "pairs": ["a", "b", "metric", "n", "mean_diff", "ci_low", "ci_high", "p"],
    "joint": ["run", "k", "metric", "hit_good", "hit_bad", "miss_good", "miss_bad"],
    "diverging": ["a", "b", "k", "metric", "retrieval_better_answer_worse", "retrieval_worse_answer_better"],
}


def _json(*args) -> dict:
    out = run_cli(*args, "--format", "json")
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def test_json_keys_are_the_documented_ones(tmp_path) -> None:
    bm25 = write(tmp_path, "bm25.csv", "query_id,faithfulness\nq1,1\nq2,0.25\nq3,0.5\nq4,0\nq5,0.25\nq6,0.75\n")
    dense = write(tmp_path, "dense.csv", "query_text,faithfulness\nhow do i get a refund?,0\nreset my password,1\n"
                                         "enterprise sso setup,0.25\ndelete my account,1\nchange billing address,0.5\n")
    data = _json(*BASE, "--grades", f"bm25={bm25}", "--grades", f"dense={dense}")
    assert list(data)[:4] == list(KEYS) and {"correlation", "unmatched", "warnings"} <= set(data)
    assert "agreement" not in data  # no two files grade one run
    for key, names in KEYS.items():
        assert data[key], key
        for record in data[key]:
            assert list(record)[:len(names)] == names, (key, list(record))
    run = data["runs"][0]
    assert run["name"] == "bm25" and run["n"] == 6
    assert list(run["metrics"]["faithfulness"]) == ["mean", "ci_low", "ci_high", "n"]
    assert run["metrics"]["faithfulness"]["mean"] == pytest.approx(2.75 / 6)
    pair = data["pairs"][0]
    assert (pair["a"], pair["b"], pair["metric"], pair["n"]) == ("bm25", "dense", "faithfulness", 5)
    assert pair["mean_diff"] == pytest.approx((-1 + 0.75 - 0.25 + 1 + 0.25) / 5)  # dense minus bm25, q1..q5
    diverging = data["diverging"][0]
    assert list(diverging["retrieval_better_answer_worse"]) == ["count", "queries"]
    # recall@2, bm25: q1 1, q2 1, q3 1, q4 0, q5 1; dense: q1 0, q2 1, q3 0.5, q4 1, q5 0. dense finds more
    # for q4 and answers it better; it finds less for q1, q3 and q5, and answers q5 better (0.5 against 0.25):
    assert diverging["retrieval_better_answer_worse"] == {"count": 0, "queries": []}
    assert diverging["retrieval_worse_answer_better"] == {"count": 1, "queries": ["q5"]}
    assert data["joint"][0] == {"run": "bm25", "k": 2, "metric": "faithfulness", "hit_good": 2, "hit_bad": 2,
                                "miss_good": 1, "miss_bad": 1}
    unmatched = {u["run"]: u for u in data["unmatched"]}
    assert unmatched["dense"]["queries_without_grade"] == {"count": 1, "queries": ["q6"]}
    assert unmatched["dense"]["rows_without_query"] == {"count": 0, "names": []}


def test_two_judges_add_agreement_and_the_table_answers_in_words_first(tmp_path) -> None:
    args = ["answers", "--labels", FIXTURES / "labels.tsv", "--grades", f"base={FIXTURES / 'person.csv'}",
            "--grades", f"base={FIXTURES / 'llm.json'}"]
    data = _json(*args)
    (agreement,) = data["agreement"]
    assert list(agreement)[:8] == ["run", "metric", "a", "b", "n", "kappa", "ci_low", "ci_high"]
    assert (agreement["a"], agreement["b"], agreement["n"], agreement["weights"]) == ("person", "llm", 5, "linear")
    assert agreement["disagree"] == {"count": 2, "queries": ["q2", "q3"]}
    assert data["joint"] == [] and data["diverging"] == [] and data["pairs"] == []
    out = run_cli(*args)
    assert out.returncode == 0, out.stderr
    first = out.stdout.splitlines()[0]
    assert first.startswith("correctness (person): base averages 0.667"), first
    assert "base, correctness: person and llm agree with kappa" in out.stdout
    assert out.stdout.index("they disagree on 2 queries: q2, q3.") < out.stdout.index("each run's mean grade")
    assert "warning: [grade_missing] x1: " in out.stderr and "llm.json" in out.stderr


def test_csv_is_one_row_per_run_and_grade(tmp_path) -> None:
    out = run_cli(*BASE, "--grades", f"bm25={FIXTURES / 'ragas.csv'}", "--grades",
                  f"dense={FIXTURES / 'table.tsv'}", "--metric", "faithfulness", "--metric", "correct",
                  "--format", "csv")
    assert out.returncode == 0, out.stderr
    rows = list(csv.DictReader(io.StringIO(out.stdout)))
    assert [(r["run"], r["metric"], r["n"], r["k"]) for r in rows] == [("bm25", "faithfulness", "4", "2"),
                                                                       ("dense", "correct", "4", "2")]
    assert {"hit_good", "spearman", "spearman_ci_low"} <= set(rows[0])


def test_without_labels_the_answer_side_alone() -> None:
    data = _json("answers", "--grades", FIXTURES / "ragas.csv", "--grades", FIXTURES / "latest_test_run.json")
    assert [r["name"] for r in data["runs"]] == ["ragas", "latest_test_run"]
    assert data["joint"] == data["diverging"] == data["correlation"] == [] and "unmatched" not in data


def test_the_holdout_stays_sealed(tmp_path) -> None:
    labels = write(tmp_path, "labels.tsv", (FIXTURES / "labels.tsv").read_text().replace(
        "query_text\n", "query_text\tsplit\n").replace("?\n", "?\ttune\n").replace("password\n", "password\ttune\n")
        .replace("setup\n", "setup\ttune\n").replace("account\n", "account\ttune\n")
        .replace("address\n", "address\tholdout\n").replace("history\n", "history\tholdout\n"))
    out = run_cli("answers", "--labels", labels, "--run", FIXTURES / "bm25.trec", "--grades",
                  f"bm25={FIXTURES / 'ragas.json'}", "--format", "json")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["split"]["split"] == "tune" and "2 holdout queries sealed" in out.stderr
    (unmatched,) = data["unmatched"]
    assert unmatched["sealed_holdout_rows"] == 2 and unmatched["rows_without_query"]["count"] == 0
    assert data["runs"][0]["n"] == 1  # the one tune query ragas.json grades: q4


BAD = [
    (["--grades", "bm25={g}"], "query_id,faithfulness\nq1,1.5\n",
     "g.csv, line 2: expected a grade between 0 and 1 (a number, pass/fail or true/false; NaN or empty for none) in "
     "column 'faithfulness', got '1.5'"),
    (["--grades", "tuned={g}"], "query_id,faithfulness\nq1,1\n",
     "there is no run named 'tuned' to join these answers to; the runs loaded are bm25, dense"),
    (["--grades", "bm25={g}"], "query_id,faithfulness\nq1,1\nq2,0\nq1,0.5\n",
     "g.csv, line 4: expected each query once in a grade file (it is also on line 2)"),
    (["--grades", "bm25={g}"], "query_text,faithfulness\nReset my password,1\n,0\n",
     "g.csv, line 3: expected a query id or a query text on every graded row"),
    (["--grades", "bm25={g}", "--metric", "recall"], "query_id,faithfulness\nq1,1\n",
     "--metric recall: no grade file has a grade named 'recall'; the grades read are faithfulness"),
    (["--grades", "bm25={g}", "--good", "2"], "query_id,faithfulness\nq1,1\n",
     "The 'good' parameter must be a grade between 0 and 1. Got 2.0."),
]


@pytest.mark.parametrize("extra, content, expected", BAD, ids=[f"bad-{i}" for i in range(len(BAD))])
def test_bad_input_is_one_line_and_exit_2(tmp_path, extra, content, expected) -> None:
    grades = write(tmp_path, "g.csv", content)
    out = run_cli(*BASE, *[a.format(g=grades) for a in extra])
    assert out.returncode == 2, out.stdout
    lines = out.stderr.strip().splitlines()
    assert lines[-1].startswith("evalcore: error: ") and expected in lines[-1], out.stderr
    assert "Traceback" not in out.stderr and not [line for line in lines if line.startswith("evalcore: error")][1:]


def test_a_text_shared_by_two_labeled_queries_is_refused(tmp_path) -> None:
    labels = write(tmp_path, "labels.tsv", "query\tdoc_id\tquery_text\nq1\td1\tRefund\nq2\td2\trefund \n")
    grades = write(tmp_path, "g.csv", "query_text,ok\nREFUND,pass\n")
    out = run_cli("answers", "--labels", labels, "--grades", grades)
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert out.stderr.strip().endswith("g.csv, line 2: expected a query text that names one labeled query (it is the "
                                       f"text of q1 and q2 in {labels}; give the grade file a query_id column), got "
                                       "'REFUND'")


@pytest.mark.parametrize("args, expected", [
    (["answers", "--grades", "g.csv", "--run", "r.trec"], "--run needs --labels"),
    (["answers", "--grades", "g.csv", "--split", "all"], "they need --labels"),
    (["answers", "--run", "r.trec"], "the following arguments are required: --grades"),
])
def test_usage_errors(args, expected) -> None:
    out = run_cli(*args)
    assert out.returncode == 2 and expected in out.stderr and "Traceback" not in out.stderr


def test_help_lists_the_command() -> None:
    out = run_cli("--help")
    assert out.returncode == 0 and "answers" in out.stdout
    out = run_cli("answers", "--help")
    assert out.returncode == 0 and "--grades NAME=FILE" in out.stdout and "--query-var" in out.stdout


def test_the_parser_stays_light() -> None:
    """Registering `answers` loads none of its statistics: `evalcore --help` stays as fast as it was."""
    heavy = ("evalcore.analyses.answers", "evalcore.stats.rank_correlation", "evalcore.stats.agreement",
             "evalcore.stats.subset_draw", "evalcore.stats.paired", "evalcore.report.answers", "scipy")
    script = ("import sys\nfrom evalcore.cli.parser import build_parser\nbuild_parser()\n"
              f"print(sorted(m for m in sys.modules if m.startswith({heavy!r})))")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=False)
    assert out.stdout.strip() == "[]", out.stdout + out.stderr
