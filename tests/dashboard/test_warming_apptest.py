"""The start script's warm-up run visits every page (`dashboard.warming`): with EVALCORE_WARM_EVERY_PAGE=1 a run
with no browser behind it (the health check's, here AppTest's) shows the Overview and then runs each other page once,
so a first visitor's page is a cache hit. Every page must get through the visit (a page that ends early with
`layout.stop` ends only its own visit), and what the visits drew is emptied: the run shows the Overview alone."""

from __future__ import annotations

import logging

from streamlit.testing.v1 import AppTest

from dashboard import warming
from tests.dashboard.apptest_helpers import APP, ROOT, TIMEOUT

VIEWS = sorted(path.name for path in (ROOT / "dashboard" / "views").glob("*.py") if path.name != "overview.py")


def test_the_warm_up_run_visits_every_page_and_shows_the_overview_alone(monkeypatch, caplog) -> None:
    monkeypatch.setenv(warming.ENV, "1")
    monkeypatch.setattr(warming, "_DONE", [])  # once per server: this test's own "server"
    caplog.set_level(logging.INFO, logger="evalcore.dashboard.warming")
    at = AppTest.from_file(str(APP), default_timeout=TIMEOUT)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    said = [r.getMessage() for r in caplog.records if r.name == "evalcore.dashboard.warming"]
    assert not [line for line in said if "not prepared" in line], said
    assert sorted(line.split()[1] for line in said if line.endswith(" s") and "visited in" in line
                  and "every page" not in line) == VIEWS
    assert said[-1].startswith("warm-up: every page visited in")
    assert [t.value for t in at.title] == ["Overview"]  # the visits' output is emptied

    again = AppTest.from_file(str(APP), default_timeout=TIMEOUT)
    caplog.clear()
    again.run()  # the next run (a visitor's) visits nothing
    assert not [r for r in caplog.records if r.name == "evalcore.dashboard.warming"]
