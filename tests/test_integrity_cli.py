"""The integrity commands as a user runs them: sealed holdout and recorded reveals, the audit, blind judging."""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
S = ROOT / "sample_data"
LABELS = ["--labels", str(S / "labels.tsv")]
RUNS = ["--run", str(S / "base.trec"), "--run", str(S / "tuned.trec")]


def cli(*args: str, workspace: Path | None = None) -> subprocess.CompletedProcess:
    env = {"PATH": "/usr/bin:/bin", "HOME": str(workspace or ROOT), "EVALCORE_WORKSPACE": str(workspace or "/nonexistent")}
    return subprocess.run([sys.executable, "-m", "evalcore.cli", *map(str, args)], capture_output=True, text=True,
                          cwd=ROOT, timeout=300, env=env)


def test_holdout_is_sealed_until_revealed_and_every_reveal_is_counted(tmp_path) -> None:
    ws = tmp_path / "ws"
    sealed = cli("evaluate", *LABELS, *RUNS, "--k", "1", "--split", "holdout", workspace=ws)
    assert sealed.returncode == 2 and sealed.stdout == ""
    assert "sealed" in sealed.stderr and "--reveal" in sealed.stderr and "Traceback" not in sealed.stderr
    first = cli("evaluate", *LABELS, *RUNS, "--k", "1", "--split", "holdout", "--reveal", "--who", "ana",
                "--format", "json", workspace=ws)
    assert first.returncode == 0, first.stderr
    data = json.loads(first.stdout)
    assert data["split"]["split"] == "holdout" and data["split"]["reveal"]["views"] == 1
    assert data["runs"][0]["n_queries"] == 224
    assert all(m["split"] == "holdout" for r in data["runs"] for m in r["metrics"].values())
    assert "viewed once" in first.stderr and "by ana" in first.stderr
    second = cli("evaluate", *LABELS, *RUNS, "--k", "1", "--split", "holdout", "--reveal", workspace=ws)
    assert second.returncode == 0 and "viewed 2 times" in second.stdout
    again = cli("evaluate", *LABELS, *RUNS, "--k", "1", "--split", "holdout", workspace=ws)
    assert again.returncode == 2 and "holdout of labels viewed 2 times, last on" in again.stderr


def test_tune_numbers_are_labelled_exploratory_and_name_their_split(tmp_path) -> None:
    table = cli("evaluate", *LABELS, *RUNS, "--k", "1", "--split", "tune")
    assert table.returncode == 0, table.stderr
    assert "exploratory" in table.stdout
    rows = [line for line in table.stdout.splitlines() if line.startswith("recall@1")]
    assert len(rows) == 2 and all(" tune" in row and " 96 " in row for row in rows)
    out = cli("evaluate", *LABELS, *RUNS, "--k", "1", "--split", "tune", "--hash-split", "0.5", "--format", "csv")
    records = list(csv.DictReader(io.StringIO(out.stdout)))
    assert {r["split"] for r in records} == {"tune"} and 120 < int(records[0]["n"]) < 200
    assert "query_not_in_labels" not in out.stderr  # holdout queries in the runs are not "unlabeled"


def test_split_options_need_a_split_and_a_split_is_not_saved() -> None:
    for args, needle in ((["--reveal"], "only used with --split"), (["--hash-split", "0.3"], "only used with --split"),
                         (["--split", "tune", "--reveal"], "tune numbers are never sealed"),
                         (["--split", "tune", "--save"], "evaluate without --split to save"),
                         (["--split", "tune", "--hash-split", "2"], "tune fraction")):
        out = cli("evaluate", *LABELS, *RUNS, *args)
        assert out.returncode == 2 and needle in out.stderr, (args, out.stderr)


def test_audit_prints_blind_share_pooling_coverage_and_labels_to_check() -> None:
    out = cli("audit", *LABELS, *RUNS, "--run", str(S / "tuned-256d.trec"), "--k", "1,5")
    assert out.returncode == 0, out.stderr
    text = out.stdout
    assert text.startswith("audit of labels labels#109ae50aeaba (n = 320 evaluated queries)")
    assert "blind labels behind each run's numbers" in text and "0.8438" in text  # 270 of 320 blind
    assert "metrics on blind-judged queries only" in text
    assert "[pooled_from_one_run]" in text and "run base:" in text
    assert "[judged_depth_exceeded]" in text and "deeper than judged" in text
    assert "check the label" in text and "q006" in text
    data = json.loads(cli("audit", *LABELS, *RUNS, "--k", "5", "--format", "json").stdout)
    assert {"blind_share", "blind_metrics", "pooling", "coverage", "suspects", "warnings"} <= set(data)
    assert all(row["high"] >= row["low"] for row in data["coverage"])


def test_flag_judge_and_save_a_blind_version(tmp_path) -> None:
    ws = tmp_path / "ws"
    flagged = cli("audit", *LABELS, *RUNS, "--k", "5", "--flag", "q006", workspace=ws)
    assert flagged.returncode == 0, flagged.stderr
    assert "queued q006" in flagged.stderr and "labels are unchanged" in flagged.stderr
    queue = cli("judge", "queue", "--format", "json", workspace=ws)
    entries = json.loads(queue.stdout)["queue"]
    assert [e["query"] for e in entries] == ["q006"] and entries[0]["doc_id"] == "integrations-calendar-01"

    pool_file = tmp_path / "pool.csv"
    made = cli("judge", "pool", *LABELS, *RUNS, "--query", "q006", "--depth", "3", "--docs", str(S / "docs.jsonl"),
               "--output", str(pool_file), workspace=ws)
    assert made.returncode == 0, made.stderr
    rows = list(csv.DictReader(pool_file.open(encoding="utf-8")))
    assert not {"rank", "score", "run"} & set(rows[0]) and all(r["relevant"] == "" for r in rows)
    assert all(r["text"] for r in rows) and {r["pool_depth"] for r in rows} == {"3"}
    incomplete = cli("judge", "save", "labels", str(pool_file), workspace=ws)
    assert incomplete.returncode == 2 and "expected a mark" in incomplete.stderr
    for row in rows:
        row["relevant"] = "yes" if row["doc_id"] == "integrations-calendar-01" else "no"
    with pool_file.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    saved = cli("judge", "save", "labels", str(pool_file), "--judge", "bo", workspace=ws)
    assert saved.returncode == 0, saved.stderr
    assert "labels v2" in saved.stderr and "earlier versions are unchanged" in saved.stderr
    state = json.loads(cli("judge", "queue", "--all", "--format", "json", workspace=ws).stdout)
    assert state["queue"][0]["resolved_version"] == 2
    assert [(r["query"], r["depth"], r["judge"]) for r in state["judging rounds"]] == [("q006", 3, "bo")]


def test_pool_ids_that_look_like_formulas_round_trip(tmp_path) -> None:
    labels = tmp_path / "labels.jsonl"
    labels.write_text('{"query": "q1", "doc_id": "=cmd", "grade": 1}\n', encoding="utf-8")
    run = tmp_path / "run.jsonl"
    run.write_text('{"query": "q1", "ranked": ["=cmd", "-minus", "plain"]}\n', encoding="utf-8")
    ws = tmp_path / "ws"
    assert cli("evaluate", "--labels", labels, "--run", run, "--save", workspace=ws).returncode == 0
    pool = cli("judge", "pool", "--labels", labels, "--run", run, "--query", "q1", "--depth", "3", workspace=ws)
    assert "'=cmd" in pool.stdout  # formula-safe in the CSV
    rows = list(csv.DictReader(io.StringIO(pool.stdout)))
    for row in rows:
        row["relevant"] = "no"
    path = tmp_path / "marks.csv"
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    assert cli("judge", "save", "labels", path, workspace=ws).returncode == 0
    shown = json.loads(cli("workspace", "show", "labels", "labels", "--format", "json", workspace=ws).stdout)
    assert shown["versions"][-1]["version"] == 2
    from evalcore.workspace import Workspace

    judged = Workspace(ws).load_labels("labels").judgments.set_index("doc_id")["grade"].to_dict()
    assert judged == {"=cmd": 0.0, "-minus": 0.0, "plain": 0.0}  # re-judged blind: ids exact, old grade replaced
