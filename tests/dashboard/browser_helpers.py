"""Driving the dashboard in a real browser: a `streamlit run` server on a free port, and waiting for a page.

Debian's Chromium, driven by Playwright. A plain module (not a test module): the browser test modules import it
as ``tests.dashboard.browser_helpers``; the ``server``, ``browser`` and ``page`` fixtures are in
tests/dashboard/conftest.py.
"""

from __future__ import annotations

import ast
import os
import socket
import subprocess
import sys
import time
import urllib.request
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator
from urllib.parse import parse_qs, urlparse

from playwright.sync_api import Browser, Page, expect, sync_playwright

from evalcore.store.workspace import ENV_VAR

ROOT = Path(__file__).resolve().parents[2]
SHOTS = ROOT / "test-output" / "screenshots"
CHROMIUM = os.environ.get("EVALCORE_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run", "--disable-quic"]
WAIT_MS = 90_000
DESKTOP = {"width": 1400, "height": 900}  # the first screen the layout tests check
PROJECTOR = {"width": 1280, "height": 720}  # the presenter view's screen


@contextmanager
def chromium(who: str) -> Iterator[Browser]:
    """Debian's Chromium, launched through Playwright for ``who`` ("the browser tests"), closed after; a missing
    browser fails with how to install it (never a skip: CI must have it)."""
    assert Path(CHROMIUM).is_file(), (
        f"No browser at {CHROMIUM}: {who} need Debian's Chromium. Run `bash scripts/test.sh`, which installs it "
        "(apt-get install -y chromium), or set EVALCORE_CHROMIUM.")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()


@contextmanager
def opened(browser: Browser, viewport: dict, **options) -> Iterator[Page]:
    """A fresh page of ``browser`` at ``viewport`` (its own context: no cookies or state shared), waiting up to
    `WAIT_MS`, closed after."""
    context = browser.new_context(viewport=viewport, **options)
    page = context.new_page()
    page.set_default_timeout(WAIT_MS)
    try:
        yield page
    finally:
        context.close()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """One `streamlit run` on a free port of 127.0.0.1, stopped by `stop`.

    ``workspace`` sets EVALCORE_WORKSPACE for the server; None keeps the test session's
    temporary one (tests/conftest.py). ``extra`` arguments go to `streamlit run` (e.g. ``--secrets.files``).
    """

    def __init__(self, workspace: Path | None, log: Path, extra: tuple[str, ...] = ()) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = open(log, "w")
        command = [sys.executable, "-m", "streamlit", "run", "dashboard/app.py", "--server.port", str(self.port),
                   "--server.address", "127.0.0.1", "--server.headless", "true",
                   "--browser.gatherUsageStats=false", *extra]
        env = dict(os.environ) if workspace is None else {**os.environ, ENV_VAR: str(workspace)}
        self.process = subprocess.Popen(command, cwd=ROOT, stdout=self.log, stderr=subprocess.STDOUT, env=env)
        deadline = time.monotonic() + 90
        while True:
            try:
                with urllib.request.urlopen(f"{self.url}/_stcore/health", timeout=2) as response:
                    if response.status == 200:
                        return
            except OSError:
                pass
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"streamlit did not start:\n{log.read_text()}")
            time.sleep(0.3)

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout=15)
        self.log.close()


def settle(page: Page) -> None:
    """Wait until the script run the last action started has finished and the page is drawn."""
    page.wait_for_timeout(300)
    page.wait_for_selector('[data-testid="stApp"][data-test-script-state="notRunning"]', timeout=WAIT_MS)
    page.wait_for_timeout(300)


def open_page(page: Page, url: str) -> None:
    page.goto(url)
    page.wait_for_selector('[data-testid="stApp"]')
    settle(page)


def no_exceptions(page: Page) -> None:
    assert page.locator('[data-testid="stException"]').count() == 0, page.locator('[data-testid="stException"]').all_inner_texts()


def chart_drawn(page: Page) -> None:
    chart = page.locator('[data-testid="stVegaLiteChart"]').first
    expect(chart).to_be_visible()
    drawn = chart.locator("canvas, svg").first
    expect(drawn).to_be_visible()
    box = drawn.bounding_box()
    assert box is not None and box["height"] > 100 and box["width"] > 200


def shoot(page: Page, name: str) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"{name}.png"), full_page=True)


def params(page: Page) -> dict[str, list[str]]:
    return parse_qs(urlparse(page.url).query)


def uploader(page: Page, label: str):
    """The file input of the uploader labelled ``label`` (``Chunks file of sent1``): found by its words, not by its
    place among the page's uploaders."""
    return page.locator('[data-testid="stFileUploader"]').filter(has_text=label).locator('input[type="file"]')


def app_pages() -> list[tuple[str, str]]:
    """(title, URL path) of every page in dashboard/app.py's PAGES, read from its source: the default page is
    served at the root."""
    tree = ast.parse((ROOT / "dashboard" / "app.py").read_text(encoding="utf-8"))
    names = {node.targets[0].id: node.value for node in tree.body
             if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name)}
    found = []
    for item in names["PAGES"].elts:
        call = names[item.id] if isinstance(item, ast.Name) else item
        words = {kw.arg: kw.value.value for kw in call.keywords if isinstance(kw.value, ast.Constant)}
        found.append((words.get("title", words.get("url_path")), "" if words.get("default") else words["url_path"]))
    return found
