"""Issue 30, item 8, in a real browser at 1400 x 900 (Chromium via Playwright against `streamlit run`): a path that
names no page opens the Overview without Streamlit's "Page not found" dialog, selections kept; Data, History and Who
did what start their title where every other page does (no blank band above it); and their tables, and Index
size's, fit the screen's width (nothing cut at the right edge)."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

from evalcore.access import Actor, Role
from evalcore.cli import main
from evalcore.store.workspace import Workspace
from evalcore.workflows import record_upload

from tests.dashboard.browser_helpers import ROOT, Server, no_exceptions, open_page, params, settle

S = ROOT / "sample_data"


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """A server on a workspace with a saved evaluation (History's tables) and uploads of every kind (Who did what)."""
    folder = tmp_path_factory.mktemp("first-screen-ws")
    assert main(["evaluate", "--labels", str(S / "labels.tsv"), "--run", str(S / "base.trec"), "--run",
                 str(S / "tuned.trec"), "--save", "--workspace", str(folder)]) == 0
    ws = Workspace(folder)
    record_upload(ws, actor=Actor("a.very.long.name@example.com", Role.EDITOR, "signed in"),
                  documents=ws._put_file(S / "docs.jsonl", "docs.jsonl"),
                  chunk_maps=[("sent3", ws._put_file(S / "chunking" / "sent3.chunks.csv", "sent3.chunks.csv"))])
    running = Server(folder, tmp_path_factory.mktemp("streamlit") / "server.log")
    yield running.url
    running.stop()


def test_a_path_that_names_no_page_opens_the_overview_without_page_not_found(screen: Page, server: str) -> None:
    for path in ("home", "no-such-page"):
        open_page(screen, f"{server}/{path}?k=7&runs=tuned")
        expect(screen.get_by_role("heading", name="Overview").first).to_be_visible()
        assert screen.get_by_text("Page not found").count() == 0, path
        assert params(screen)["k"] == ["7"] and params(screen)["runs"] == ["tuned"], path
        expect(screen.get_by_text("runs tuned (acme-embed-large-v2-kestrel-ft)").first).to_be_visible()
        no_exceptions(screen)
    screen.get_by_role("link", name="Data").click()  # the navigation still works from there
    settle(screen)
    expect(screen.get_by_role("heading", name="Data").first).to_be_visible()


def title_top(page: Page) -> float:
    box = page.locator("h1").first.bounding_box()
    assert box is not None
    return box["y"]


def cut_tables(page: Page) -> list[str]:
    """Tables on the page wider than the room they have (a horizontal scroll bar: columns cut at the right edge)."""
    return page.evaluate("""() => Array.from(document.querySelectorAll('[data-testid="stDataFrame"]'))
        .map(t => [t.querySelector('.dvn-scroller'), t.innerText.split('\\n')[0]])
        .filter(([s, _]) => s && s.scrollWidth > s.clientWidth + 1).map(([s, head]) => head)""")


def test_pages_start_at_the_top_and_their_tables_fit_1400_pixels(screen: Page, server: str) -> None:
    open_page(screen, f"{server}/")
    overview = title_top(screen)
    for path, tabs in (("data", ("Label sets", "Runs", "Evaluations")), ("history", ()), ("activity", ()),
                       ("index-size", ()), ("index-size?part=approximate", ())):
        open_page(screen, f"{server}/{path}")
        no_exceptions(screen)
        if path.startswith(("data", "history", "activity")):
            assert abs(title_top(screen) - overview) < 4, (path, title_top(screen), overview)
        expect(screen.locator('[data-testid="stDataFrame"]').first).to_be_visible()
        for tab in tabs:
            screen.get_by_role("tab", name=tab).click()
            settle(screen)
            assert cut_tables(screen) == [], (path, tab)
        assert cut_tables(screen) == [], path
