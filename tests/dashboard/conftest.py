"""Fixtures of the dashboard tests: a workspace of its own for each test (and each module's server), one `streamlit
run` server per module, one Chromium per module, a fresh page per test (tall, the desktop's first screen, or a
projector's). The helpers they use (and the AppTest ones) are plain modules beside this file: browser_helpers.py,
apptest_helpers.py."""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import Browser, expect

from evalcore.store.workspace import ENV_VAR
from tests.dashboard.browser_helpers import DESKTOP, PROJECTOR, Server, chromium, opened

# An assertion on the page waits up to 30 s (Playwright's default is 5 s): a save or a first computation on a busy
# 2-core machine can take longer, and a test should fail on a wrong page, not on a slow one.
expect.set_options(timeout=30_000)


@pytest.fixture(autouse=True)
def own_workspace(tmp_path_factory, monkeypatch) -> None:
    """Each test's dashboard starts on a workspace of its own: the root address opens on the data set loaded last,
    so one test's uploads must not become the next test's first screen."""
    monkeypatch.setenv(ENV_VAR, str(tmp_path_factory.mktemp("workspace")))


@pytest.fixture(scope="module")
def server_workspace(tmp_path_factory) -> Path:
    """The workspace of this module's server: its own, so one module's uploads never become another's first screen."""
    return tmp_path_factory.mktemp("server-workspace")


@pytest.fixture(scope="module")
def server(tmp_path_factory, server_workspace: Path):
    running = Server(server_workspace, tmp_path_factory.mktemp("streamlit") / "server.log")
    yield running.url
    running.stop()


@pytest.fixture(scope="module")
def browser():
    with chromium("the browser tests") as launched:
        yield launched


@pytest.fixture
def page(browser: Browser):
    """A tall page (1500 x 2000): whole pages in one screenshot."""
    with opened(browser, {"width": 1500, "height": 2000}, accept_downloads=True) as fresh:
        yield fresh


@pytest.fixture
def screen(browser: Browser):
    """A page at the desktop's first screen, 1400 x 900: what a person sees before scrolling."""
    with opened(browser, DESKTOP) as fresh:
        yield fresh


@pytest.fixture
def projector(browser: Browser):
    """A page at a projector's 1280 x 720, the presenter view's screen."""
    with opened(browser, PROJECTOR) as fresh:
        yield fresh


@pytest.fixture
def workspace(tmp_path, monkeypatch) -> Path:
    """An empty workspace of this test's own (the dashboard and the CLI find it through EVALCORE_WORKSPACE)."""
    folder = tmp_path / "ws"
    monkeypatch.setenv(ENV_VAR, str(folder))
    return folder
