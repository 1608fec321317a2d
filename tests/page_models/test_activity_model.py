"""The Who did what page's model called directly: the workspace's record of every change, newest first, filtered by
person and by action, with a caption that counts what is shown. The changes are made as people make them: saved
evaluations from the command line, each under the name given with --who."""

from __future__ import annotations

import os

from dashboard.page_models import activity
from tests.cli_runner import ROOT, run_cli

S = ROOT / "sample_data"


def _save(who: str, run: str) -> None:
    out = run_cli("evaluate", "--labels", S / "labels.tsv", "--run", S / f"{run}.trec", "--save", "--who", who,
                  "--workspace", os.environ["EVALCORE_WORKSPACE"])
    assert out.returncode == 0, out.stderr


def test_an_empty_record_offers_no_one_and_no_action():
    assert activity.choices() == ([], [])
    shown = activity.activity(None, None).value
    assert shown.table.empty and shown.caption.startswith("0 changes")


def test_each_change_names_its_person_newest_first_and_the_filters_keep_only_theirs():
    _save("ana", "base")
    _save("ben", "tuned")
    people, actions = activity.choices()
    ana, ben = people  # each as recorded: the name given, and the login it was given from
    assert ana.startswith("ana (--who") and ben.startswith("ben (--who") and actions
    every = activity.activity(None, None).value
    assert list(every.table.columns) == ["at", "person", "action", "what", "details"]
    assert every.table["person"].iloc[0] == ben  # newest first
    assert every.table["at"].is_monotonic_decreasing
    hers = activity.activity(ana, None).value
    assert set(hers.table["person"]) == {ana} and len(hers.table) < len(every.table)
    assert hers.caption.startswith(f"{len(hers.table)} change") and f" by {ana}" in hers.caption
    one_kind = activity.activity(None, actions[0]).value
    assert set(one_kind.table["action"]) == {actions[0]} and f"({actions[0]})" in one_kind.caption
