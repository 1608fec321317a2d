"""The command line records who made each change: the login name, or --who, and says so beside what it did. It
acts as the workspace's owner (the person at the terminal can write its files anyway)."""

from __future__ import annotations

from pathlib import Path

from cli_runner import run_cli

from evalcore.access import login_name
from evalcore.store.workspace import Workspace

S = Path(__file__).resolve().parents[2] / "sample_data"
INPUTS = ("--labels", S / "labels.tsv", "--run", S / "base.trec", "--k", "1,5")


def test_a_save_is_recorded_under_the_login_name_and_the_output_says_so(tmp_path) -> None:
    done = run_cli("evaluate", *INPUTS, "--save", "--workspace", tmp_path)
    assert done.returncode == 0, done.stderr
    assert f"recorded as {login_name()} (the login name; --who names someone else)" in done.stderr
    [event] = Workspace(tmp_path).events().itertuples()
    assert (event.who, event.action) == (login_name(), "save evaluation") and event.subject == "evaluation 1"


def test_who_names_the_person_of_a_reveal_a_deletion_and_new_cases(tmp_path) -> None:
    reveal = run_cli("evaluate", *INPUTS, "--split", "holdout", "--reveal", "--who", "ana", "--workspace", tmp_path)
    assert reveal.returncode == 0, reveal.stderr
    assert "recorded as ana (given with --who)" in reveal.stderr
    cases = tmp_path / "cases.jsonl"
    cases.write_text('{"query": "sso loop", "doc_id": "acct-sso"}\n')
    added = run_cli("workspace", "add-cases", "labels", cases, "--who", "bo", "--workspace", tmp_path)
    assert added.returncode == 0 and "recorded as bo (given with --who)" in added.stderr
    gone = run_cli("workspace", "delete", "labels", "labels", "--yes", "--who", "cy", "--workspace", tmp_path)
    assert gone.returncode == 0 and "recorded as cy (given with --who)" in gone.stderr
    log = Workspace(tmp_path).events()
    assert list(zip(log["who"], log["action"]))[::-1] == [("ana", "reveal holdout"), ("bo", "label-set version"),
                                                          ("cy", "delete")]
    assert Workspace(tmp_path).reveals()["who"].tolist() == ["ana"]  # the reveal log, outliving the label set


def test_who_without_anything_to_record_is_a_usage_error(tmp_path) -> None:
    done = run_cli("evaluate", *INPUTS, "--who", "ana", "--workspace", tmp_path)
    assert done.returncode == 2 and "--who names the person recorded with a change" in done.stderr


def test_workspace_list_events_shows_the_log(tmp_path) -> None:
    run_cli("evaluate", *INPUTS, "--save", "--who", "ana", "--workspace", tmp_path)
    listed = run_cli("workspace", "list", "events", "--format", "json", "--workspace", tmp_path)
    assert listed.returncode == 0, listed.stderr
    assert '"who": "ana"' in listed.stdout and '"action": "save evaluation"' in listed.stdout
