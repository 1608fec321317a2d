"""The dashboard in a real browser: Debian's Chromium, driven by Playwright, against `streamlit run`.

One server per module (a free port on 127.0.0.1, started by the ``server`` fixture of tests/dashboard/conftest.py
and stopped after; the helpers are in tests/dashboard/browser_helpers.py). The browser must be there: a missing
/usr/bin/chromium fails the run (``bash scripts/test.sh`` installs it with apt). Every page loading and drawing is
tests/dashboard/test_screenshots_browser.py's; this module uploads, drills down and opens links.
"""

from __future__ import annotations

import json
from pathlib import Path

from playwright.sync_api import Page, expect

from tests.dashboard.browser_helpers import (
    WAIT_MS,
    Server,
    no_exceptions,
    open_page,
    params,
    settle,
    shoot,
)


def test_uploads_through_the_file_inputs(page: Page, tmp_path: Path) -> None:
    # A server of its own: after an upload the root address opens on it, and the other tests here want the sample.
    own = Server(tmp_path / "workspace", tmp_path / "server.log")
    try:
        _upload_and_check(page, own.url, tmp_path)
    finally:
        own.stop()


def _upload_and_check(page: Page, server: str, tmp_path: Path) -> None:
    labels = tmp_path / "mine.csv"
    labels.write_text("query,doc_id,grade,query_text,source\n"
                      "q1,d1,1,=cmd|' /C calc'!A0,support_ticket\n"
                      "q2,d2,1,**bold** <b>not bold</b>,search_log\n"
                      "q3,d3,1,export data,search_log\n")
    run_a = tmp_path / "alpha.trec"
    run_a.write_text("q1 Q0 x 1 9 alpha\nq1 Q0 d1 2 8 alpha\nq2 Q0 d2 1 9 alpha\nq3 Q0 x 1 9 alpha\n")
    run_b = tmp_path / "beta.jsonl"
    run_b.write_text("\n".join(json.dumps({"query": q, "ranked": r}) for q, r in
                               {"q1": ["d1"], "q2": ["x", "y", "d2"], "q3": ["d3"]}.items()))
    sidecar = tmp_path / "beta.meta.json"
    sidecar.write_text(json.dumps({"model": "beta-model", "price_per_mtok": 0.1, "dims": 128, "index_bytes": 2_000_000}))
    broken = tmp_path / "broken.trec"
    broken.write_text("q1 Q0 d1 1 not-a-number tag\n")

    open_page(page, f"{server}/data")
    inputs = page.locator('[data-testid="stFileUploader"] input[type="file"]')
    # Labels, runs, documents, queries, then one chunk map per sample run (base, tuned, tuned-256d).
    expect(inputs).to_have_count(4 + 3 * 2)

    # A bad run is explained beside its upload; the sample runs stay loaded.
    inputs.nth(1).set_input_files([str(broken)])
    settle(page)
    expect(page.get_by_text("broken.trec, line 1: expected a number in the score column")).to_be_visible()
    expect(page.get_by_text("Runs: base, tuned, tuned-256d", exact=True)).to_be_visible()
    no_exceptions(page)
    shoot(page, "data_bad_file")

    inputs.nth(0).set_input_files([str(labels)])
    settle(page)
    expect(page.get_by_text("Labels: mine.csv · 3 queries")).to_be_visible()
    inputs.nth(1).set_input_files([str(run_a), str(run_b), str(sidecar)])
    settle(page)
    expect(page.get_by_text("Runs: alpha, beta", exact=True)).to_be_visible()
    assert "data" in params(page)
    no_exceptions(page)
    shoot(page, "data_uploaded")

    # Every page works on the uploaded files; user text is shown as text.
    page.get_by_role("link", name="Failures").click()
    settle(page)
    assert "data" in params(page)
    expect(page.get_by_text("Runs compared")).to_be_visible()
    page.goto(page.url.split("?")[0] + "?" + "&".join(f"{k}={v[0]}" for k, v in params(page).items()) + "&query=q2&k=1")
    settle(page)
    code = page.locator('[data-testid="stCode"]').first
    expect(code).to_contain_text("**bold** <b>not bold</b>")
    assert page.locator("b", has_text="not bold").count() == 0
    no_exceptions(page)
    # The list downloads as CSV with the formula-looking query text neutralised.
    with page.expect_download() as download:
        page.get_by_role("button", name="Download this list (CSV)").click()
    csv_text = Path(download.value.path()).read_text()
    assert "'=cmd" in csv_text and ",=cmd" not in csv_text
    shoot(page, "failures_uploaded")


def test_failure_drill_down_from_the_list_and_from_a_copied_url(screen: Page, server: str) -> None:
    page = screen  # the desktop's first screen, 1400 x 900: the drill-down must come into view there
    open_page(page, f"{server}/failures?k=10")
    expect(page.get_by_text("Select a row in the list above")).to_be_visible()
    grid = page.locator('[data-testid="stDataFrame"]').first
    grid.scroll_into_view_if_needed()  # a person scrolls to the list first
    settle(page)
    box = grid.bounding_box()
    page.mouse.click(box["x"] + 18, box["y"] + 35 + 17)  # the selection box of the first row
    settle(page)
    # The click brings the drill-down's heading into view: nobody has to hunt for what they opened.
    heading = page.get_by_role("heading", name="One query up close")
    expect(heading).to_be_in_viewport()
    found = heading.bounding_box()
    assert 0 <= found["y"] and found["y"] + found["height"] <= page.viewport_size["height"], found
    expect(page.get_by_text("What the customer typed", exact=True)).to_be_visible()
    first = params(page)["query"][0]
    expect(page.get_by_text("Relevant docs, and where each run put them")).to_be_visible()
    no_exceptions(page)
    shoot(page, "failures_drill_down")

    # Keyboard: N walks to the next failure, P back.
    page.get_by_role("heading", name="One query up close").click()
    page.keyboard.press("n")
    settle(page)
    second = params(page)["query"][0]
    assert second != first
    page.get_by_role("heading", name="One query up close").click()
    page.keyboard.press("p")
    settle(page)
    assert params(page)["query"][0] == first

    # The copied URL opens the same drill-down in a fresh session.
    copied = page.url
    fresh = page.context.browser.new_context(viewport={"width": 1500, "height": 2000})
    other = fresh.new_page()
    other.set_default_timeout(WAIT_MS)
    open_page(other, copied)
    expect(other.get_by_text("What the customer typed", exact=True)).to_be_visible()
    expect(other.get_by_text(f"query id {first}")).to_be_visible()
    no_exceptions(other)
    shoot(other, "failures_from_url")
    fresh.close()


def test_the_overview_by_name_opens_with_its_selections(page: Page, server: str) -> None:
    """A link written by page name (``/overview?k=7``) opens the Overview at that k, not "Page not found"."""
    open_page(page, f"{server}/overview?k=7&baseline=tuned&runs=tuned&runs=tuned-256d")
    expect(page.get_by_role("heading", name="Overview")).to_be_visible()
    expect(page.get_by_text("k = 7 · n = ").first).to_be_visible()
    assert page.get_by_text("Page not found").count() == 0
    shown = params(page)
    assert shown["k"] == ["7"] and shown["baseline"] == ["tuned"] and shown["runs"] == ["tuned", "tuned-256d"]
    # Both runs shown (the header names them), not only the last of the repeated parameter.
    expect(page.get_by_text("runs tuned (acme-embed-large-v2-kestrel-ft), tuned-256d (").first).to_be_visible()
    no_exceptions(page)
