"""The failure ledger: outcomes replayed down a model line (new -> fixed -> regressed), people's statuses,
tags and notes surviving new runs and restarts, and regressions listed first."""

from __future__ import annotations

import pandas as pd
import pytest

import evalcore
from evalcore.store.ledger import CAUSE_TAGS, LEDGER_COLUMNS, OPEN_STATUSES, parse_status
from evalcore.errors import UsageError
from evalcore.readers.runs import read_run
from evalcore.store.workspace import NotInWorkspace, Workspace

LABELS = {f"q{i}": [f"d{i}"] for i in range(8)}


def ranking(fails: set[str], depth_of_miss: int = 3) -> dict[str, list[str]]:
    """Each query's relevant doc at rank 1, or at ``depth_of_miss`` for the queries in ``fails``."""
    out = {}
    for query, (doc,) in LABELS.items():
        filler = [f"x{j}" for j in range(depth_of_miss - 1)]
        out[query] = filler + [doc] if query in fails else [doc] + filler
    return out


def save(ws: Workspace, name: str, fails: set[str], model: str = "acme-embed", k: int = 1, **run_options):
    run = read_run(ranking(fails), name=name, model=model, **run_options)
    evaluation = evalcore.evaluate_runs([run], LABELS, k=(1, 3), n_resamples=200)
    return ws._save_evaluation(evaluation, k=k)


def row(ledger: pd.DataFrame, query: str) -> dict:
    found = ledger[ledger["query"] == query]
    assert len(found) == 1, f"{query} not in the ledger"
    return found.iloc[0].to_dict()


def test_new_then_fixed_then_regressed_across_three_runs(tmp_path) -> None:
    ws = Workspace(tmp_path)
    save(ws, "v1", {"q1", "q2", "q3"})
    ledger = ws.archive.ledger("acme-embed")
    assert list(ledger.columns) == LEDGER_COLUMNS
    assert set(ledger["query"]) == {"q1", "q2", "q3"}
    assert set(ledger["status"]) == {"new"} and ledger["open"].all()
    assert row(ledger, "q1")["first_failed_run"] == "v1" and row(ledger, "q1")["first_rank"] == 3

    save(ws, "v2", {"q2", "q3"})  # q1 fixed
    ledger = ws.archive.ledger("acme-embed")
    q1 = row(ledger, "q1")
    assert q1["status"] == "fixed" and q1["passing"] and not q1["open"] and q1["fixed_run"] == "v2"
    assert row(ledger, "q2")["status"] == "new"  # still failing, nobody looked: still new

    save(ws, "v3", {"q1", "q3", "q5"})  # q1 regresses, q2 fixed, q5 passed in v1 and v2 and fails now
    changes = ws.archive.changes("acme-embed")
    assert changes.run == "v3" and changes.previous_run == "v2"
    assert set(changes.regressions["query"]) == {"q1", "q5"}
    assert set(changes.fixed["query"]) == {"q2"} and changes.new_failures.empty
    assert changes.n_still_failing == 1  # q3
    assert changes.regressions.set_index("query").loc["q1", "first_rank_before"] == 1
    assert "2 regressions (q1, q5)" in changes.summary()

    ledger = ws.archive.ledger("acme-embed")
    assert list(ledger["query"][:2]) == ["q1", "q5"]  # this run's regressions come first
    q1 = row(ledger, "q1")
    assert q1["status"] == "regressed" and q1["regressed_now"] and q1["regressed_run"] == "v3"
    assert q1["first_failed_run"] == "v1" and q1["fixed_run"] == "v2" and q1["n_failed"] == 2 and q1["n_runs"] == 3
    assert row(ledger, "q5")["first_failed_run"] == "v3"
    assert row(ledger, "q2")["status"] == "fixed"
    timeline = ws.archive.entry("acme-embed", "q1").timeline
    assert timeline["event"].tolist() == ["new", "fixed", "regressed"]
    assert timeline["passed"].tolist() == [False, True, False]


def test_people_edits_stand_until_the_outcome_changes_and_survive_a_restart(tmp_path) -> None:
    ws = Workspace(tmp_path)
    save(ws, "v1", {"q1", "q2", "q3"})
    archive = ws.archive
    archive._set_status("acme-embed", "q1", "known")
    archive._set_status("acme-embed", "q2", "won't fix")
    archive._add_tag("acme-embed", "q1", "Vocabulary  Gap")
    archive._add_tag("acme-embed", "q1", "vocabulary gap")  # the same tag once
    archive._add_tag("acme-embed", "q1", "chunking")
    archive._set_note("acme-embed", "q1", "customers say 'reset', the doc says 'recover'")
    ledger = archive.ledger("acme-embed")
    assert row(ledger, "q1")["status"] == "known" and row(ledger, "q1")["status_by"] == "person"
    assert row(ledger, "q2")["status_label"] == "won't fix" and not row(ledger, "q2")["open"]
    assert row(ledger, "q1")["tags"] == "chunking, vocabulary gap"

    save(ws, "v2", {"q1", "q2"})  # q1, q2 still failing: people's statuses stand; q3 fixed
    ws.close()
    ws = Workspace(tmp_path)  # a restart loses nothing
    ledger = ws.archive.ledger("acme-embed")
    assert row(ledger, "q1")["status"] == "known" and row(ledger, "q2")["status"] == "wont_fix"
    assert row(ledger, "q3")["status"] == "fixed" and row(ledger, "q3")["status_by"] == "auto"
    assert row(ledger, "q1")["note"] == "customers say 'reset', the doc says 'recover'"

    save(ws, "v3", {"q2"})  # q1 now passes: the run's "fixed" replaces the person's "known"
    ledger = ws.archive.ledger("acme-embed")
    assert row(ledger, "q1")["status"] == "fixed" and row(ledger, "q1")["status_by"] == "auto"
    assert row(ledger, "q1")["tags"] == "chunking, vocabulary gap"  # tags and notes stay
    assert row(ledger, "q2")["status"] == "wont_fix"

    entry = ws.archive.entry("acme-embed", "q1")
    assert entry.tags == ("chunking", "vocabulary gap") and entry.status == "fixed"
    assert entry.log["action"].tolist() == ["status", "add tag", "add tag", "note"]
    ws.archive._remove_tag("acme-embed", "q1", "chunking")
    assert ws.archive.entry("acme-embed", "q1").tags == ("vocabulary gap",)
    ws.archive._set_note("acme-embed", "q1", "")
    assert ws.archive.entry("acme-embed", "q1").note == ""


def test_ledger_k_lines_and_a_runs_failures(tmp_path) -> None:
    ws = Workspace(tmp_path)
    save(ws, "a1", {"q1", "q2"})  # relevant doc at rank 3 for q1, q2
    save(ws, "b1", {"q4"}, model="other-model")
    at_one = ws.archive.ledger("acme-embed")
    at_three = ws.archive.ledger("acme-embed", k=3)
    assert set(at_one["query"]) == {"q1", "q2"} and at_three.empty  # rank 3 is a hit at k = 3
    assert set(ws.archive.ledger("other-model")["query"]) == {"q4"}  # lines do not mix
    first = ws.runs(line="acme-embed")["id"].iloc[0]
    as_of_first = ws.archive.ledger("acme-embed", as_of=first)
    assert set(as_of_first.loc[as_of_first["last_run_id"] == first, "query"]) == {"q1", "q2"}
    assert not as_of_first["passing"].any()
    with_passing = ws.archive.ledger("acme-embed", include_passing=True)
    assert len(with_passing) == len(LABELS) and (with_passing["status"].isna() == with_passing["passing"]).all()


def test_a_line_name_groups_runs_with_different_model_strings(tmp_path) -> None:
    ws = Workspace(tmp_path)
    first = read_run(ranking({"q1"}), name="base", model="acme-embed-v1")
    ws._save_evaluation(evalcore.evaluate_runs([first], LABELS, k=1, n_resamples=200), lines={"base": "prod"})
    second = read_run(ranking(set()), name="base", model="acme-embed-v2")
    ws._save_evaluation(evalcore.evaluate_runs([second], LABELS, k=1, n_resamples=200), lines={"base": "prod"})
    assert ws.lines()["line"].tolist() == ["prod"]
    assert row(ws.archive.ledger("prod"), "q1")["status"] == "fixed"


def test_edits_are_validated(tmp_path) -> None:
    ws = Workspace(tmp_path)
    save(ws, "v1", {"q1"})
    assert parse_status("Won't Fix") == "wont_fix" and set(OPEN_STATUSES) <= {"new", "known", "regressed"}
    assert "vocabulary gap" in CAUSE_TAGS
    with pytest.raises(UsageError, match="'status' parameter"):
        ws.archive._set_status("acme-embed", "q1", "solved")
    with pytest.raises(NotInWorkspace, match="no outcome for query 'nope'"):
        ws.archive._set_note("acme-embed", "nope", "x")
    with pytest.raises(NotInWorkspace, match="No model line named 'nope'"):
        ws.archive.ledger("nope")
    with pytest.raises(UsageError, match="'tag' parameter"):
        ws.archive._add_tag("acme-embed", "q1", "   ")
    assert ws.counts()["ledger_log"] == 0  # nothing half-written


def test_the_ledger_k_is_checked_and_counts_a_query_failed_when_nothing_relevant_is_in_the_top_k(tmp_path) -> None:
    ws = Workspace(tmp_path)
    save(ws, "v1", {"q1"})  # q1's relevant doc at rank 3
    assert row(ws.archive.ledger("acme-embed"), "q1")["k"] == 1  # default: the latest evaluation's chosen k
    assert "q1" not in set(ws.archive.ledger("acme-embed", k=3)["query"])  # found at rank 3: passes at k = 3
    for bad in (0, -1, 1.5, True):
        with pytest.raises(UsageError, match="'k' parameter must be an integer between 1 and"):
            ws.archive.ledger("acme-embed", k=bad)
