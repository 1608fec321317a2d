"""The command line records who made each change: the login name, or --who (a claim, kept beside the login name),
and says so beside what it did. It acts as the workspace's owner (the person at the terminal can write its files
anyway)."""

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
    log = Workspace(tmp_path).events()
    stored = log[log["action"] == "store file"]
    assert sorted(stored["subject"].str.split().str[1]) == ["base.trec", "labels.tsv"]  # each file stored, recorded
    [event] = log[log["action"] != "store file"].itertuples()
    assert (event.who, event.action) == (login_name(), "save evaluation") and event.subject == "evaluation 1"
    assert set(log["who"]) == {login_name()}


def test_who_names_the_person_of_a_reveal_a_deletion_and_new_cases(tmp_path) -> None:
    reveal = run_cli("evaluate", *INPUTS, "--split", "holdout", "--reveal", "--who", "ana", "--workspace", tmp_path)
    assert reveal.returncode == 0, reveal.stderr
    claimed = {name: f"{name} (--who; login {login_name()})" for name in ("ana", "bo", "cy")}
    assert f"recorded as {claimed['ana']} (a claim given with --who" in reveal.stderr
    cases = tmp_path / "cases.jsonl"
    cases.write_text('{"query": "sso loop", "doc_id": "acct-sso"}\n')
    added = run_cli("workspace", "add-cases", "labels", cases, "--who", "bo", "--workspace", tmp_path)
    assert added.returncode == 0 and f"recorded as {claimed['bo']} (a claim" in added.stderr
    gone = run_cli("workspace", "delete", "labels", "labels", "--yes", "--who", "cy", "--workspace", tmp_path)
    assert gone.returncode == 0 and f"recorded as {claimed['cy']} (a claim" in gone.stderr
    log = Workspace(tmp_path).events()
    log = log[log["action"] != "store file"]  # the files each command stored are recorded too, under the same names
    assert list(zip(log["who"], log["action"]))[::-1] == [(claimed["ana"], "reveal holdout"),
                                                          (claimed["bo"], "label-set version"),
                                                          (claimed["cy"], "delete")]
    assert Workspace(tmp_path).reveals()["who"].tolist() == [claimed["ana"]]  # the reveal log outlives the label set


def test_who_without_anything_to_record_is_a_usage_error(tmp_path) -> None:
    done = run_cli("evaluate", *INPUTS, "--who", "ana", "--workspace", tmp_path)
    assert done.returncode == 2 and "--who names the person recorded with a change" in done.stderr


def test_workspace_list_events_shows_the_log(tmp_path) -> None:
    run_cli("evaluate", *INPUTS, "--save", "--who", "ana", "--workspace", tmp_path)
    listed = run_cli("workspace", "list", "events", "--format", "json", "--workspace", tmp_path)
    assert listed.returncode == 0, listed.stderr
    assert f'"who": "ana (--who; login {login_name()})"' in listed.stdout
    assert '"action": "save evaluation"' in listed.stdout


# ----------------------------------------------------------------------------- forged lines (issue 24, item 7)

FORGED = "ana\n2026-01-01 09:00  lee@example.com  reveal holdout"


def test_a_control_character_in_who_is_refused_in_one_line_and_nothing_is_recorded(tmp_path) -> None:
    for who in (FORGED, "ana\x1b[2K", "ana\rlee"):
        done = run_cli("evaluate", *INPUTS, "--save", "--who", who, "--workspace", tmp_path)
        assert done.returncode == 2, done.stderr
        assert len(done.stderr.strip().splitlines()) == 1 and "control character" in done.stderr
    assert Workspace(tmp_path).events().empty and Workspace(tmp_path).evaluations().empty


def test_who_is_a_claim_recorded_beside_the_login_name(tmp_path) -> None:
    done = run_cli("evaluate", *INPUTS, "--save", "--who", "ana", "--workspace", tmp_path)
    assert done.returncode == 0, done.stderr
    claim = f"ana (--who; login {login_name()})"
    assert f"recorded as {claim} (a claim given with --who, kept beside the login name)" in done.stderr
    log = Workspace(tmp_path).events()
    assert log["action"].tolist() == ["save evaluation", "store file", "store file"]  # newest first
    assert set(log["who"]) == {claim}


def test_an_event_listing_shows_each_event_on_one_line_even_one_recorded_before_the_check(tmp_path) -> None:
    ws = Workspace(tmp_path)
    ws._record_event("bo", "ledger note", "line x, query q1 (labels)", "first line\nsecond line")
    ws.write(lambda conn: conn.execute("INSERT INTO events (at, who, action, subject, detail) VALUES "
                                       "('2026-01-01T00:00:00+00:00', ?, 'delete', 'run #1', '')", (FORGED,)))
    listed = run_cli("workspace", "list", "events", "--workspace", tmp_path)
    assert listed.returncode == 0, listed.stderr
    rows = [line for line in listed.stdout.splitlines() if line.strip()][2:]  # after the title and the folder
    assert len(rows) == 2 + 2, listed.stdout  # the header, its rule and one line per event
    assert "ana\\n2026-01-01 09:00" in listed.stdout and "first line\\nsecond line" in listed.stdout
