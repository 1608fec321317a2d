"""The "Who did what" page (AppTest): every change in the workspace with its time and person, filterable by person
and action from the URL; on 127.0.0.1 without sign-in the person using the page is the owner, named by the server's
login name."""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_runner import run_cli
from streamlit.testing.v1 import AppTest

from evalcore.access import login_name
from evalcore.store.workspace import ENV_VAR

from tests.dashboard.apptest_helpers import APP, TIMEOUT, plain

S = Path(__file__).resolve().parents[2] / "sample_data"
ANA, BO = (f"{name} (--who; login {login_name()})" for name in ("ana", "bo"))  # the command line's --who: a claim


@pytest.fixture
def workspace(tmp_path, monkeypatch) -> Path:
    folder = tmp_path / "ws"
    monkeypatch.setenv(ENV_VAR, str(folder))
    for args in (("evaluate", "--labels", S / "labels.tsv", "--run", S / "base.trec", "--k", "1,5", "--save",
                  "--who", "ana"),
                 ("workspace", "delete", "evaluation", "1", "--yes", "--who", "bo")):
        done = run_cli(*args, "--workspace", folder)
        assert done.returncode == 0, done.stderr
    return folder


def page(**params: str) -> AppTest:
    at = AppTest.from_file(str(APP), default_timeout=TIMEOUT)
    for name, value in params.items():
        at.query_params[name] = value
    at.switch_page("views/activity.py")
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_every_change_is_listed_with_minute_and_person(workspace) -> None:
    at = page()
    [table] = [d.value for d in at.dataframe]
    assert table["person"].tolist() == [BO, ANA] and table["action"].tolist() == ["delete", "save evaluation"]
    assert table["at"].str.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d UTC").all()  # to the minute, zone named
    captions = plain(" ".join(c.value for c in at.caption))
    assert "2 changes, newest first; times in your time zone, to the minute." in captions
    assert f"You: {login_name()} (owner): may read every page and download; also upload files" in captions
    assert sorted(at.selectbox(key="activity.who").options) == [ANA, BO]


def test_a_link_filters_by_person_and_action(workspace) -> None:
    at = page(who=BO)
    [table] = [d.value for d in at.dataframe]
    assert table["person"].tolist() == [BO] and table["what"].iloc[0].startswith("evaluation 1 ")
    at = page(action="save evaluation")
    [table] = [d.value for d in at.dataframe]
    assert table["person"].tolist() == [ANA]
    assert "1 change (save evaluation), newest first" in plain(" ".join(c.value for c in at.caption))
