"""Screenshots a person looks at: every page of the dashboard at 1400 x 900, and the presenter view at 1280 x 720
(a projector), in a real browser (Chromium via Playwright against `streamlit run` on 127.0.0.1).

The pictures go to the folder named by ``EVALCORE_SCREENSHOTS`` (kept after the run, with each page's whole length
too), else to a temporary folder (printed; first screens only). Each page must render without an exception or an
error box; the Overview and Choose k draw their charts, and Choose k's chart downloads as a PNG. The presenter view must show the query
text, the relevant doc and the next / previous controls inside the 1280 x 720 screen without scrolling, and an
arrow key (or a clicker's Page Down) must move it to the next failure and change the URL.

The server has its own workspace, and the sample evaluation is saved through the Failures page first, so History
has a model line to show.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from playwright.sync_api import Locator, Page, expect

import evalcore
from tests.dashboard.browser_helpers import (PROJECTOR, ROOT, WAIT_MS, Server, app_pages, chart_drawn, no_exceptions,
                                             open_page, params, settle)

DESKTOP = {"width": 1400, "height": 900}
DRAWN = {"Overview": "Is the difference real?", "Choose k": "At k = 9:"}  # no k asked: base's k to take, its elbow


@pytest.fixture(scope="module")
def shots(tmp_path_factory) -> Path:
    folder = Path(os.environ.get("EVALCORE_SCREENSHOTS") or tmp_path_factory.mktemp("screenshots"))
    folder.mkdir(parents=True, exist_ok=True)
    print(f"\nscreenshots: {folder}")
    return folder


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """A server of this module's own, on a workspace of its own (the saved evaluation stays here)."""
    running = Server(tmp_path_factory.mktemp("workspace"), tmp_path_factory.mktemp("streamlit") / "server.log")
    yield running.url
    running.stop()


def rendered_cleanly(page: Page, name: str) -> None:
    no_exceptions(page)
    errors = page.locator('[data-testid="stAlertContentError"]')
    assert errors.count() == 0, f"{name}: {errors.all_inner_texts()}"
    assert page.get_by_text("Page not found").count() == 0, name


def inside(locator: Locator, viewport: dict) -> None:
    """``locator`` is on screen without scrolling: its whole box lies within the viewport at scroll 0."""
    expect(locator).to_be_visible()
    box = locator.bounding_box()
    assert box is not None
    assert box["x"] >= 0 and box["y"] >= 0, box
    assert box["x"] + box["width"] <= viewport["width"] and box["y"] + box["height"] <= viewport["height"], box


def shoot(page: Page, folder: Path, name: str) -> None:
    """The first screen as the viewer sees it (``name.png``), and when a folder was asked for, the whole page
    (``name-full.png``): Streamlit scrolls an inner container, not the document, so the window is made as tall as
    the page for that one."""
    page.screenshot(path=str(folder / f"{name}.png"))
    if not os.environ.get("EVALCORE_SCREENSHOTS"):
        return
    size = page.viewport_size
    tall = page.evaluate("""() => Math.max(document.documentElement.scrollHeight, ...Array.from(
        document.querySelectorAll('*'), e => ['auto', 'scroll'].includes(getComputedStyle(e).overflowY)
            && e.clientHeight >= innerHeight - 100 ? e.scrollHeight : 0))""")
    page.set_viewport_size({"width": size["width"], "height": min(int(tall) + 40, 16_000)})
    settle(page)
    page.screenshot(path=str(folder / f"{name}-full.png"))
    page.set_viewport_size(size)
    settle(page)


def test_every_page_at_1400_by_900(browser, server: str, shots: Path) -> None:
    context = browser.new_context(viewport=DESKTOP)
    page = context.new_page()
    page.set_default_timeout(WAIT_MS)
    try:
        # Save the sample evaluation first: History then has a model line and a ledger to show.
        open_page(page, f"{server}/failures")
        page.get_by_role("button", name="Save this evaluation to the workspace").last.click()
        settle(page)
        expect(page.get_by_text("Saved: evaluation 1")).to_be_visible(timeout=WAIT_MS)  # saving scores every query

        pages = app_pages()
        assert {"Overview", "Failures", "Present"} <= {title for title, _ in pages}
        for title, path in pages:
            open_page(page, f"{server}/{path}")
            rendered_cleanly(page, title)
            if title in DRAWN:
                expect(page.get_by_text(DRAWN[title]).first).to_be_visible()
                chart_drawn(page)
            if title == "Choose k":
                with page.expect_download() as download:
                    page.get_by_role("button", name="Download the chart (PNG)").click()
                assert Path(download.value.path()).read_bytes().startswith(b"\x89PNG")
            shoot(page, shots, f"page-{path or 'home'}")

        # The Failures page with one query open: titles and readable text for every ranked doc, nothing cut.
        open_page(page, f"{server}/failures?query=q045")
        rendered_cleanly(page, "Failures, one query open")
        expect(page.get_by_text("Push notifications: schedule Do Not Disturb").first).to_be_visible()
        previous = page.get_by_role("button", name="Previous")
        expect(previous).to_be_visible()
        assert previous.evaluate("b => b.scrollWidth <= b.clientWidth"), "the Previous button's label is cut"
        page.get_by_role("heading", name="One query up close").evaluate("e => e.scrollIntoView({block: 'start'})")
        shoot(page, shots, "failures-drill-down")
    finally:
        context.close()


def expected_failure(query: str) -> tuple[str, list[str]]:
    """What the customer typed for ``query`` and the titles of its relevant docs, read from the sample files."""
    labels = evalcore.read_labels(ROOT / "sample_data" / "labels.tsv")
    docs = evalcore.read_documents(ROOT / "sample_data" / "docs.jsonl")
    judged = labels.judgments[(labels.judgments["query"] == query) & (labels.judgments["grade"] >= 1)]
    text = labels.field("query_text")[query]
    return str(text), [docs.title(d) for d in judged["doc_id"]]


def test_the_presenter_view_on_a_projector(browser, server: str, shots: Path) -> None:
    context = browser.new_context(viewport=PROJECTOR)
    page = context.new_page()
    page.set_default_timeout(WAIT_MS)
    try:
        # From the Failures page, with its selection: the link keeps k and the open query.
        open_page(page, f"{server}/failures?k=5&query=q045")
        page.get_by_role("link", name="Present these failures").click()
        settle(page)
        assert params(page)["k"] == ["5"] and params(page)["query"] == ["q045"]
        rendered_cleanly(page, "Present")
        assert page.evaluate("window.scrollY") == 0

        text, titles = expected_failure("q045")
        inside(page.locator(".st-key-present-query").get_by_text(text, exact=True), PROJECTOR)
        inside(page.get_by_text(titles[0]).first, PROJECTOR)
        inside(page.get_by_role("button", name="Previous"), PROJECTOR)
        inside(page.get_by_role("button", name="Next"), PROJECTOR)
        page.screenshot(path=str(shots / "present-1280x720.png"))

        # The right arrow key: the next failure, on screen and in the URL; the left arrow back.
        page.keyboard.press("ArrowRight")
        settle(page)
        second = params(page)["query"][0]
        assert second != "q045"
        second_text, second_titles = expected_failure(second)
        inside(page.locator(".st-key-present-query").get_by_text(second_text, exact=True), PROJECTOR)
        inside(page.get_by_text(second_titles[0]).first, PROJECTOR)
        rendered_cleanly(page, "Present, next failure")
        page.screenshot(path=str(shots / "present-1280x720-next.png"))
        page.keyboard.press("ArrowLeft")
        settle(page)
        assert params(page)["query"] == ["q045"]
        # A presentation clicker sends Page Down / Page Up: the same walk.
        page.keyboard.press("PageDown")
        settle(page)
        assert params(page)["query"] == [second]
        page.keyboard.press("PageUp")
        settle(page)
        assert params(page)["query"] == ["q045"]

        # The numbers are one click away.
        page.get_by_role("button", name="The numbers").click()
        settle(page)
        expect(page.get_by_text("The numbers behind this failure", exact=True)).to_be_visible()
        expect(page.get_by_text("n = 1 query (this one's own scores)")).to_be_visible()
        shoot(page, shots, "present-1280x720-numbers")
    finally:
        context.close()
