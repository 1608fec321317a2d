"""Answer first, in a real browser (Chromium via Playwright against `streamlit run`, the sample data with its three
runs): each presented page's headline is on the first screen at 1400 x 900 (its box, not only its text). A row
click bringing the drill-down into view is tested in test_dashboard_browser.py, the presenter view on a projector in
test_present_fits_browser.py (three chunk runs, long text) and test_screenshots_browser.py."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

from tests.dashboard.browser_helpers import DESKTOP, no_exceptions, open_page

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
