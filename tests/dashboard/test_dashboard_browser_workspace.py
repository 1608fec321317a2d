"""The dashboard remembers, in a real browser: uploads, a saved evaluation and a ledger edit survive a page
reload and a server restart (same workspace, same copied URL). Chromium via Playwright against
`streamlit run` on 127.0.0.1, with ``EVALCORE_WORKSPACE`` set to a temporary folder."""

from __future__ import annotations

import json
from pathlib import Path

from playwright.sync_api import Page, expect

from evalcore.store.workspace import Workspace
from tests.dashboard.browser_helpers import WAIT_MS, Server, no_exceptions, open_page, params, settle, shoot

LABELS = "query,doc_id,grade,query_text\nq1,d1,1,reset password\nq2,d2,1,cancel plan\nq3,d3,1,export data\n"
RUN = "q1 Q0 d1 1 9 t\nq2 Q0 x 1 9 t\nq2 Q0 d2 2 8 t\nq3 Q0 d3 1 9 t\n"
META = {"model": "acme-m", "price_per_mtok": 0.02, "dims": 256}


def test_uploads_and_ledger_edits_survive_a_reload_and_a_server_restart(page: Page, tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    files = tmp_path / "files"
    files.mkdir()
    (files / "mine.csv").write_text(LABELS)
    (files / "v1.trec").write_text(RUN)
    (files / "v1.meta.json").write_text(json.dumps(META))

    first = Server(workspace, tmp_path / "first.log")
    try:
        open_page(page, f"{first.url}/data")
        inputs = page.locator('[data-testid="stFileUploader"] input[type="file"]')
        inputs.nth(0).set_input_files([str(files / "mine.csv")])
        settle(page)
        inputs.nth(1).set_input_files([str(files / "v1.trec"), str(files / "v1.meta.json")])
        settle(page)
        expect(page.get_by_text("Runs: v1", exact=True)).to_be_visible()
        key = params(page)["data"][0]
        no_exceptions(page)

        # A reload (same URL) shows the same files.
        url = page.url
        page.reload()
        page.wait_for_selector('[data-testid="stApp"]')
        settle(page)
        assert page.url == url
        expect(page.get_by_text("Runs: v1", exact=True)).to_be_visible()
        expect(page.get_by_text("Labels: mine.csv · 3 queries")).to_be_visible()
        no_exceptions(page)
        shoot(page, "workspace_data_after_reload")

        # Save the evaluation at k = 1; q2 fails.
        open_page(page, f"{first.url}/failures?data={key}&k=1&query=q2")
        page.get_by_role("button", name="Save this evaluation to the workspace").click()
        settle(page)
        expect(page.get_by_text("Saved: evaluation 1")).to_be_visible()
        expect(page.get_by_text("status new")).to_be_visible()

        # Edit q2's ledger entry: status and note.
        status = page.get_by_role("combobox", name="Status")
        status.click()
        status.fill("known")  # the list opens filtered as one types
        page.get_by_role("option", name="known", exact=True).click()
        page.get_by_label("Note").fill("d2 sits at rank 2: ticket 4711")
        page.get_by_role("button", name="Save to the ledger").click()
        settle(page)
        expect(page.get_by_text("Saved to the ledger of line acme-m, query q2: status, note.")).to_be_visible()
        no_exceptions(page)
        shoot(page, "workspace_ledger_edit")

        page.reload()
        page.wait_for_selector('[data-testid="stApp"]')
        settle(page)
        expect(page.get_by_label("Note")).to_have_value("d2 sits at rank 2: ticket 4711", timeout=WAIT_MS)
        expect(page.get_by_text("status known (set by")).to_be_visible(timeout=WAIT_MS)
        copied = page.url
    finally:
        first.stop()

    entry = Workspace(workspace).archive.entry("acme-m", "q2")
    assert entry.status == "known" and entry.note == "d2 sits at rank 2: ticket 4711"

    # A new server on the same workspace opens the copied URL: everything is still there.
    second = Server(workspace, tmp_path / "second.log")
    try:
        open_page(page, copied.replace(first.url, second.url))
        expect(page.get_by_text("v1 (acme-m) · uploaded data")).to_be_visible()
        expect(page.get_by_label("Note")).to_have_value("d2 sits at rank 2: ticket 4711", timeout=WAIT_MS)
        expect(page.get_by_text("status known (set by")).to_be_visible(timeout=WAIT_MS)
        assert page.locator('[data-testid="stAlert"]', has_text="no longer holds").count() == 0
        no_exceptions(page)
        shoot(page, "workspace_after_restart")

        open_page(page, f"{second.url}/data?data={key}")
        expect(page.get_by_text("Runs: v1", exact=True)).to_be_visible()
        open_page(page, f"{second.url}/history?line=acme-m")
        expect(page.get_by_role("heading", name="Metrics over the line's runs")).to_be_visible()
        expect(page.locator('[data-testid="stVegaLiteChart"]').first).to_be_visible()
        no_exceptions(page)
        shoot(page, "workspace_history")

        # The meeting report: one self-contained HTML page, and the failures with the person's note.
        page.get_by_role("button", name="Prepare the report").click()
        settle(page)
        with page.expect_download() as download:
            page.get_by_role("button", name="Report (HTML)").click()
        html = Path(download.value.path()).read_text()
        assert "data:image/png;base64," in html and "d2 sits at rank 2: ticket 4711" in html
        with page.expect_download() as download:
            page.get_by_role("button", name="Failures (CSV)").click()
        csv_text = Path(download.value.path()).read_text()
        assert "q2" in csv_text and "known" in csv_text

        # Uploading the same files again on the restarted server (the workspace holds them already)
        # loads them, under the same data-set key.
        open_page(page, f"{second.url}/data")
        inputs = page.locator('[data-testid="stFileUploader"] input[type="file"]')
        inputs.nth(0).set_input_files([str(files / "mine.csv")])
        settle(page)
        expect(page.get_by_text("Labels: mine.csv · 3 queries")).to_be_visible(timeout=WAIT_MS)
        inputs.nth(1).set_input_files([str(files / "v1.trec"), str(files / "v1.meta.json")])
        settle(page)
        expect(page.get_by_text("Runs: v1", exact=True)).to_be_visible(timeout=WAIT_MS)
        assert params(page)["data"][0] == key
        no_exceptions(page)
    finally:
        second.stop()
