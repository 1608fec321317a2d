"""The Sources page in a real browser (Chromium via Playwright, against `streamlit run`), with screenshots.

Uses the fixtures of tests/dashboard/conftest.py and the helpers of tests/dashboard/browser_helpers.py; this module
gets its own server.
"""

from __future__ import annotations

import csv
import io
from pathlib import Path

from playwright.sync_api import Page, expect

from tests.dashboard.browser_helpers import chart_drawn, no_exceptions, open_page, params, settle, shoot


def test_sources_page_draws_the_gap_chart(page: Page, server: str) -> None:
    open_page(page, f"{server}/sources")  # the sample's 224 tune queries (the holdout sealed)
    expect(page.get_by_role("heading", name="Sources")).to_be_visible()
    expect(page.get_by_role("heading", name="The gap on recall@10")).to_be_visible()
    expect(page.get_by_text("base: customers' queries score 11.7 points lower on recall@10 than team-written ones",
                            exact=False)).to_be_visible()
    chart_drawn(page)
    no_exceptions(page)
    shoot(page, "sources")

    # k typed into the shared control moves the page and the URL.
    k_input = page.get_by_role("spinbutton", name="k (docs retrieved)")
    k_input.fill("5")
    k_input.press("Enter")
    settle(page)
    assert params(page)["k"] == ["5"]
    expect(page.get_by_role("heading", name="The gap on recall@5")).to_be_visible()
    chart_drawn(page)

    with page.expect_download() as download:
        page.get_by_role("button", name="Download this table (CSV)").click()
    rows = list(csv.DictReader(io.StringIO(Path(download.value.path()).read_text())))
    assert {r["value"] for r in rows} == {"team_written", "support_ticket", "search_log", "failed_search"}
    assert {r["metric"] for r in rows} >= {"recall@5", "mrr"} and {r["k"] for r in rows} == {"5"}
    no_exceptions(page)


def test_small_sources_are_drawn_faded_and_get_no_verdict(page: Page, server: str) -> None:
    open_page(page, f"{server}/sources?minn=70&metric=mrr")
    expect(page.get_by_role("heading", name="The gap on mrr")).to_be_visible()
    expect(page.get_by_text("base: too few queries to compare customers' queries with team-written ones on mrr",
                            exact=False)).to_be_visible()
    chart_drawn(page)
    no_exceptions(page)
    shoot(page, "sources_small_segments")
