"""The integrity commands as a user runs them (in-process, `cli_runner.run_cli`): sealed holdout and recorded
reveals, the audit, blind judging."""

from __future__ import annotations

import csv
import io
import json
import subprocess
from pathlib import Path

from evalcore.access import login_name
from evalcore.store.workspace import Workspace

from cli_runner import run_cli

ROOT = Path(__file__).resolve().parents[2]
S = ROOT / "sample_data"
LABELS = ["--labels", str(S / "labels.tsv")]
RUNS = ["--run", str(S / "base.trec"), "--run", str(S / "tuned.trec")]


def cli(*args: object, workspace: Path | None = None) -> subprocess.CompletedProcess:
    """Without ``workspace`` the default workspace is a folder that does not exist: such a command writes nothing."""
    return run_cli(*args, env={"EVALCORE_WORKSPACE": str(workspace or "/nonexistent")})


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
    assert data["runs"][0]["n_queries"] == 96
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
    assert len(rows) == 2 and all(" tune" in row and " 224 " in row for row in rows)
    out = cli("evaluate", *LABELS, *RUNS, "--k", "1", "--split", "tune", "--hash-split", "0.5", "--format", "csv")
    records = list(csv.DictReader(io.StringIO(out.stdout)))
    assert {r["split"] for r in records} == {"tune"} and 120 < int(records[0]["n"]) < 200
    assert "query_not_in_labels" not in out.stderr  # holdout queries in the runs are not "unlabeled"


def test_split_options_that_make_no_sense_exit_2_and_holdout_numbers_are_never_saved(tmp_path) -> None:
    ws = tmp_path / "ws"
    for args, needle in ((["--reveal"], "only used with --split holdout or --split all"),
                         (["--who", "ana"], "--who names the person recorded with a change"),
                         (["--split", "tune", "--reveal"], "tune numbers are never sealed"),
                         (["--split", "holdout", "--who", "ana"], "--who names the person recorded with a change"),
                         (["--split", "holdout", "--reveal", "--save"], "--save stores tune numbers only"),
                         (["--split", "all", "--reveal", "--save"], "--save stores tune numbers only"),
                         (["--split", "tune", "--hash-split", "2"], "tune fraction")):
        out = cli("evaluate", *LABELS, *RUNS, *args, workspace=ws)
        assert out.returncode == 2 and needle in out.stderr, (args, out.stderr)
    assert not (ws / "workspace.sqlite").exists() or Workspace(ws).reveals().empty  # nothing recorded by a refusal


def test_audit_prints_blind_share_pooling_coverage_and_labels_to_check() -> None:
    out = cli("audit", *LABELS, *RUNS, "--run", str(S / "tuned-256d.trec"), "--k", "1,5")
    assert out.returncode == 0, out.stderr
    first, blank, text = out.stdout.partition("\n\n")
    assert first.startswith("tune split (exploratory, file split field): 224 of 320 labeled queries scored; 96 "
                            "holdout queries sealed")  # the audit covers the tune split, like every command
    assert text.startswith("audit of labels labels:tune#75455c70275d on tune split (exploratory) · 96 holdout "
                           "queries sealed (n = 224 evaluated queries)")
    assert "blind labels behind each run's numbers" in text and "0.8304" in text  # 186 of the 224 tune queries blind
    assert "metrics on blind-judged queries only" in text
    assert "[pooled_from_one_run]" in text and "run base:" in text
    assert "[judged_depth_exceeded]" in text and "deeper than judged" in text
    assert "check the label" in text and "q006" in text and "q052" not in text  # q052 is a holdout query
    data = json.loads(cli("audit", *LABELS, *RUNS, "--k", "5", "--format", "json").stdout)
    assert {"blind_share", "blind_metrics", "pooling", "coverage", "suspects", "warnings"} <= set(data)
    assert data["split"]["split"] == "tune" and data["split"]["n_holdout_sealed"] == 96
    assert all(row["high"] >= row["low"] for row in data["coverage"])


def test_flag_judge_and_save_a_blind_version(tmp_path) -> None:
    ws = tmp_path / "ws"
    sealed = cli("audit", *LABELS, *RUNS, "--k", "5", "--flag", "q052", workspace=ws)
    assert sealed.returncode == 2 and "no such query in the labels 'labels:tune'" in sealed.stderr  # a holdout query
    flagged = cli("audit", *LABELS, *RUNS, "--k", "5", "--split", "all", "--reveal", "--flag", "q052", workspace=ws)
    assert flagged.returncode == 0, flagged.stderr
    assert "queued q052" in flagged.stderr and "labels are unchanged" in flagged.stderr
    assert "holdout revealed and recorded" in flagged.stderr
    queue = cli("judge", "queue", "--format", "json", workspace=ws)
    entries = json.loads(queue.stdout)["queue"]
    assert [e["query"] for e in entries] == ["q052"] and entries[0]["doc_id"] == "notifications-push-03"

    pool_file = tmp_path / "pool.csv"
    made = cli("judge", "pool", *LABELS, *RUNS, "--query", "q052", "--depth", "3", "--docs", str(S / "docs.jsonl"),
               "--output", str(pool_file), workspace=ws)
    assert made.returncode == 0, made.stderr
    rows = list(csv.DictReader(pool_file.open(encoding="utf-8")))
    assert not {"rank", "score", "run"} & set(rows[0]) and all(r["relevant"] == "" for r in rows)
    assert all(r["text"] for r in rows) and {r["pool_depth"] for r in rows} == {"3"}
    incomplete = cli("judge", "save", "labels", str(pool_file), workspace=ws)
    assert incomplete.returncode == 2 and "expected a mark" in incomplete.stderr
    for row in rows:
        row["relevant"] = "yes" if row["doc_id"] == "notifications-push-03" else "no"
    with pool_file.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    saved = cli("judge", "save", "labels", str(pool_file), "--judge", "bo", workspace=ws)
    assert saved.returncode == 0, saved.stderr
    assert "labels v2" in saved.stderr and "earlier versions are unchanged" in saved.stderr
    state = json.loads(cli("judge", "queue", "--all", "--format", "json", workspace=ws).stdout)
    assert state["queue"][0]["resolved_version"] == 2
    rounds = [(r["query"], r["depth"], r["judge"]) for r in state["judging rounds"]]
    assert rounds == [("q052", 3, f"bo (--who; login {login_name()})")]  # the name given is a claim


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
    from evalcore.store.workspace import Workspace

    judged = Workspace(ws).load_labels("labels").judgments.set_index("doc_id")["grade"].to_dict()
    assert judged == {"=cmd": 0.0, "-minus": 0.0, "plain": 0.0}  # re-judged blind: ids exact, old grade replaced


# ----------------------------------------------------------------------------- the holdout sealed in every command


def test_every_scoring_command_scores_the_tune_split_by_default_and_names_it(tmp_path) -> None:
    """evaluate, compare, budget, audit and report: tune numbers (n = 224) by default, never the 96 holdout queries."""
    evaluate = cli("evaluate", *LABELS, *RUNS, "--k", "1")
    assert evaluate.returncode == 0, evaluate.stderr
    # The headline first (on the tune split's numbers), then the split, before any table.
    paragraphs = evaluate.stdout.split("\n\n")
    assert paragraphs[0].startswith("Best run: tuned") and "n = 224 queries" in paragraphs[0]
    assert paragraphs[1].startswith("tune split (exploratory, file split field): 224 of 320 labeled queries scored; 96 "
                                    "holdout queries sealed: see them with --split holdout --reveal")
    rows = [line for line in evaluate.stdout.splitlines() if line.startswith("recall@1")]
    assert len(rows) == 2 and all(" 224 " in r and "labels:tune#75455c70275d" in r and " tune" in r for r in rows)
    assert "holdout_mixed_in" not in evaluate.stdout

    data = json.loads(cli("evaluate", *LABELS, *RUNS, "--k", "1", "--format", "json", "--per-query").stdout)
    assert data["split"]["split"] == "tune" and data["split"]["n_holdout_sealed"] == 96
    assert data["labels"] == {"name": "labels:tune", "fingerprint": "75455c70275d", "n_queries": 224}
    assert all(m["split"] == "tune" for r in data["runs"] for m in r["metrics"].values())
    assert all(q["split"] == "tune" for r in data["runs"] for q in r["per_query"]) and len(data["runs"][0]["per_query"]) == 224

    compare = cli("compare", *LABELS, *RUNS)
    assert compare.returncode == 0, compare.stderr
    assert "96 holdout queries sealed" in compare.stdout and "n = 224" in compare.stdout and "n = 320" not in compare.stdout
    assert "labels labels:tune#75455c70275d" in compare.stdout
    compared = json.loads(cli("compare", *LABELS, *RUNS, "--format", "json").stdout)
    assert compared["split"]["split"] == "tune" and compared["labels"]["name"] == "labels:tune"

    budget = cli("budget", *LABELS, *RUNS, "--chunk-tokens", "100", "--max-k", "5", "--format", "csv")
    assert budget.returncode == 0, budget.stderr
    records = list(csv.DictReader(io.StringIO(budget.stdout)))
    assert {r["labels"] for r in records} == {"labels:tune"} and {r["n"] for r in records} == {"224"}
    assert "96 holdout queries sealed" in budget.stderr
    budgeted = json.loads(cli("budget", *LABELS, *RUNS, "--chunk-tokens", "100", "--max-k", "5",
                              "--format", "json").stdout)
    assert budgeted["split"]["split"] == "tune"

    report = cli("report", *LABELS, *RUNS, "--no-charts")
    assert report.returncode == 0, report.stderr
    assert report.stdout.startswith("# Retrieval quality: labels:tune, k = 10")
    assert "Split: tune split \\(exploratory\\)" in report.stdout and "96 holdout queries sealed" in report.stdout
    assert "96 holdout queries sealed" in report.stderr


def test_every_scoring_command_keeps_the_holdout_sealed_without_a_recorded_reveal(tmp_path) -> None:
    ws = tmp_path / "ws"
    for command, extra in (("evaluate", []), ("compare", []), ("budget", ["--chunk-tokens", "100", "--max-k", "5"]),
                           ("audit", []), ("report", ["--no-charts"])):
        for split in ("holdout", "all"):
            out = cli(command, *LABELS, *RUNS, *extra, "--split", split, workspace=ws)
            assert out.returncode == 2 and out.stdout == "", (command, split)
            assert "sealed" in out.stderr and f"--split {split}" in out.stderr, (command, out.stderr)
    assert not (ws / "workspace.sqlite").exists()  # nothing looked at, nothing recorded

    views = []
    for command, extra in (("compare", []), ("budget", ["--chunk-tokens", "100", "--max-k", "5", "--format", "csv"]),
                           ("audit", []), ("report", ["--no-charts"])):
        out = cli(command, *LABELS, *RUNS, *extra, "--split", "holdout", "--reveal", "--who", "ana", workspace=ws)
        assert out.returncode == 0, (command, out.stderr)
        assert "holdout revealed and recorded" in out.stderr
        assert "labels:holdout" in out.stdout and "96" in out.stdout and "labels:tune" not in out.stdout
        views.append(out)
    assert "holdout of labels viewed 4 times" in views[-1].stderr
    assert len(Workspace(ws).reveals("labels")) == 4

    whole = cli("evaluate", *LABELS, *RUNS, "--k", "1", "--split", "all", "--reveal", "--format", "csv", workspace=ws)
    records = list(csv.DictReader(io.StringIO(whole.stdout)))
    assert {r["split"] for r in records} == {"all"} and {r["n"] for r in records} == {"320"}
    assert {r["labels"] for r in records} == {"labels"} and {r["fingerprint"] for r in records} == {"109ae50aeaba"}
    assert "holdout_mixed_in" not in whole.stderr and "viewed 5 times" in whole.stderr


def test_save_keeps_the_tune_numbers_under_their_own_label_set(tmp_path) -> None:
    ws = tmp_path / "ws"
    saved = cli("evaluate", *LABELS, *RUNS, "--k", "1,5", "--save", workspace=ws)
    assert saved.returncode == 0, saved.stderr
    assert "saved evaluation 1: labels labels:tune v1 #75455c70275d, n = 224" in saved.stderr
    workspace = Workspace(ws)
    evaluation = workspace.evaluation(1)
    assert evaluation.note.startswith("tune split (exploratory) · 96 holdout queries sealed: 224 of 320 queries of "
                                      "labels#109ae50aeaba")
    assert workspace.label_version("labels:tune").n_queries == 224
    assert set(workspace.evaluations()["labels"]) == {"labels:tune"}  # no version of the whole set was stored
    named = cli("evaluate", *LABELS, *RUNS, "--k", "1,5", "--save", "--label-set", "support", workspace=ws)
    assert named.returncode == 0 and "labels support:tune v1" in named.stderr
    report = cli("report", "--no-charts", workspace=ws)
    assert report.returncode == 0 and report.stdout.startswith("# Retrieval quality: support:tune v1, k = 5")
    assert "n = 224 evaluated queries" in report.stdout


def test_labels_without_a_split_field_are_scored_whole_as_before(tmp_path) -> None:
    plain = tmp_path / "plain.tsv"
    lines = (S / "labels.tsv").read_text(encoding="utf-8").splitlines()
    header = lines[0].split("\t")
    keep = [i for i, name in enumerate(header) if name != "split"]
    plain.write_text("\n".join("\t".join(row.split("\t")[i] for i in keep) for row in lines) + "\n", encoding="utf-8")
    out = cli("evaluate", "--labels", plain, *RUNS, "--k", "1", "--format", "json")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert "split" not in data and data["labels"]["n_queries"] == 320 and data["runs"][0]["n_queries"] == 320
    assert all("split" not in m for r in data["runs"] for m in r["metrics"].values())
    assert "sealed" not in out.stderr
    table = cli("evaluate", "--labels", plain, *RUNS, "--k", "1")
    assert table.stdout.split("\n\n")[1].startswith("run base\n") and " split " not in table.stdout
    hashed = cli("evaluate", "--labels", plain, *RUNS, "--k", "1", "--hash-split", "0.5", "--format", "json")
    view = json.loads(hashed.stdout)["split"]
    assert view["split"] == "tune" and view["rule"] == "hash:0.5" and 120 < view["n_queries"] < 200
    assert view["n_queries"] + view["n_holdout_sealed"] == 320
