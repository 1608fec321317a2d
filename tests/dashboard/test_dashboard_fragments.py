"""k lives in a fragment on the Overview, Choose k and Failures pages: changing it reruns only the part of the
page that depends on k. What a person must still see, in a real browser (Chromium via Playwright against
`streamlit run`): the numbers at the new k, the new k in the URL, and a reload (a copied link) opening the
same k; a change of the runs shown still updates the header above the fragment."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

from tests.dashboard.browser_helpers import no_exceptions, open_page, params, settle


def _k_field(page: Page):
    return page.locator('[data-testid="stNumberInputField"]').first


@pytest.mark.parametrize("path", ["choose-k", "failures"])  # the Overview's k: the next test
def test_changing_k_updates_the_numbers_and_the_url_and_a_reload_keeps_it(page: Page, server: str, path: str) -> None:
    open_page(page, f"{server}/{path}?k=10")
    expect(page.get_by_text("k = 10 · n = 224 queries").first).to_be_visible()
    page.locator('[data-testid="stNumberInputStepUp"]').first.click()
    settle(page)
    expect(page.get_by_text("k = 11 · n = 224 queries").first).to_be_visible()
    expect(page.get_by_text("k = 10 · n = 224 queries")).to_have_count(0)
    assert params(page)["k"] == ["11"]
    no_exceptions(page)

    page.goto(page.url)  # what a copied link opens
    settle(page)
    expect(_k_field(page)).to_have_value("11")
    expect(page.get_by_text("k = 11 · n = 224 queries").first).to_be_visible()
    no_exceptions(page)


def test_overview_k_then_runs_shown_update_table_url_and_header(page: Page, server: str) -> None:
    open_page(page, f"{server}/?k=10")  # the Overview, the default page, is the root
    expect(page.get_by_text("k = 10 · n = 224 queries").first).to_be_visible()
    page.locator('[data-testid="stNumberInputStepUp"]').first.click()
    settle(page)
    expect(page.get_by_text("k = 11 · n = 224 queries").first).to_be_visible()
    expect(page.get_by_text("k = 10 · n = 224 queries")).to_have_count(0)
    # Drop a run from "Runs shown": the header above the fragment lists the runs shown, so it must follow.
    page.locator('[data-testid="stMultiSelect"]').first.get_by_role("button", name="Remove tuned-256d").click()
    settle(page)
    assert params(page)["runs"] == ["base", "tuned"] and params(page)["k"] == ["11"]
    markdown = page.locator('[data-testid="stMarkdown"]').filter(has_text="queries · runs")
    expect(markdown.first).not_to_contain_text("tuned-256d")
    page.goto(page.url)
    settle(page)
    expect(_k_field(page)).to_have_value("11")
    expect(page.locator('[data-testid="stMarkdown"]').filter(has_text="queries · runs").first).not_to_contain_text(
        "tuned-256d")
    no_exceptions(page)
