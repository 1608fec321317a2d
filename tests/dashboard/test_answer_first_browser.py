"""Answer first, in a real browser (Chromium via Playwright against `streamlit run`, the sample data with its three
runs): each presented page's headline is on the first screen at 1400 x 900 (its box, not only its text), a row
click on the Failures list brings the drill-down's heading into view, and the presenter view fits a 1280 x 720
projector with three runs without scrolling, on every failure walked."""

from __future__ import annotations

import pytest
from playwright.sync_api import Browser, Page, expect

from tests.dashboard.browser_helpers import DESKTOP, PROJECTOR, WAIT_MS, no_exceptions, open_page, params, settle

MAIN = '[data-testid="stMain"]'



def on_first_screen(page: Page, selector: str, viewport: dict) -> dict:
    """The element's whole box lies within the viewport, the page unscrolled."""
    element = page.locator(selector).first
    expect(element).to_be_visible()
    assert page.evaluate(f"document.querySelector('{MAIN}').scrollTop") == 0
    box = element.bounding_box()
    assert box is not None and box["y"] >= 0 and box["y"] + box["height"] <= viewport["height"], box
    return box


@pytest.mark.parametrize("path, opening", [
    ("", "Best run: tuned ("),
    ("failures?k=10", "At k = 10, "),
    ("sources?k=10", "Customers' queries score "),
    ("answers?k=1", "tuned retrieves better than base for 39 queries but answers 12 of them worse"),
])
def test_each_headline_is_on_the_first_screen(screen: Page, server: str, path: str, opening: str) -> None:
    open_page(screen, f"{server}/{path}")
    no_exceptions(screen)
    on_first_screen(screen, ".st-key-headline", DESKTOP)
    expect(screen.locator(".st-key-headline h3").first).to_contain_text(opening)


def test_a_row_click_brings_the_drill_down_into_view(screen: Page, server: str) -> None:
    open_page(screen, f"{server}/failures?k=10")
    grid = screen.locator('[data-testid="stDataFrame"]').first
    grid.scroll_into_view_if_needed()  # a person scrolls to the list first
    settle(screen)
    box = grid.bounding_box()
    screen.mouse.click(box["x"] + 18, box["y"] + 35 + 17)  # the selection box of the first row
    settle(screen)
    assert params(screen)["query"]
    heading = screen.get_by_role("heading", name="One query up close")
    expect(heading).to_be_in_viewport()
    found = heading.bounding_box()
    assert 0 <= found["y"] and found["y"] + found["height"] <= DESKTOP["height"], found
    expect(screen.get_by_text("What the customer typed", exact=True)).to_be_visible()
    no_exceptions(screen)


def test_present_fits_a_projector_with_three_runs(browser: Browser, server: str) -> None:
    context = browser.new_context(viewport=PROJECTOR)
    page = context.new_page()
    page.set_default_timeout(WAIT_MS)
    try:
        # q218: three relevant docs; q015: two long titles; then the first failures in the list.
        for opened in (f"{server}/present?k=5&query=q218", f"{server}/present?k=5&query=q015", f"{server}/present?k=5"):
            open_page(page, opened)
            for _ in range(4):
                no_exceptions(page)
                assert page.locator(".st-key-present [data-testid='stColumn']").count() >= 3  # three runs side by side
                sizes = page.evaluate("(() => { const m = document.querySelector('" + MAIN + "');"
                                      " return [m.scrollHeight, m.clientHeight]; })()")
                assert sizes[0] <= sizes[1], f"{params(page)['query']}: scrolls {sizes[0] - sizes[1]} px"
                page.keyboard.press("ArrowRight")
                settle(page)
    finally:
        context.close()
