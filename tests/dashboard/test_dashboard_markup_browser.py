"""User text reads exactly as written, never as markup, in a real browser (Chromium, Playwright, `streamlit run`).

A run file, its model string (sidecar) and a query's text carry ``$x^2$ :smile: www.example.com <b>bold</b>``:
Streamlit's Markdown would draw LaTeX (KaTeX), an emoji, a link and bold from them. Every page must show the
characters themselves: no ``.katex``, no link to example.com, no 😄, no ``<b>`` from user text.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from playwright.sync_api import Page, expect

from tests.dashboard.browser_helpers import no_exceptions, open_page, params, settle, shoot

MARKUP = "$x^2$ :smile: www.example.com <b>bold</b>"
RUN_NAME = "$x^2$ :smile: www.example.com <b>bold"  # a file name cannot hold the "/" of </b>
MORE = (":red[alert] :material/home: **strong** me@example.com http://example.com/x :streamlit: :material_home: "
        "a -> b >= 1 R&amp;D")  # the other run's model
WORD_JOINER = "\u2060"  # md_text's invisible mark where a bare address would be linked


def visible_text(page: Page) -> str:
    """The text a person sees (the zero-width word joiner is invisible)."""
    return page.locator('[data-testid="stMain"]').inner_text().replace(WORD_JOINER, "")


def no_markup_from_user_text(page: Page, where: str) -> None:
    main = page.locator('[data-testid="stMain"]')
    assert main.locator(".katex").count() == 0, f"{where}: LaTeX drawn"
    assert main.locator('a[href*="example.com"]').count() == 0, f"{where}: a link to example.com"
    assert main.locator("b").count() == 0, f"{where}: <b> from user text"
    assert main.locator("strong", has_text="strong").count() == 0, f"{where}: **strong** from user text"
    assert main.locator('a[href^="mailto:"]').count() == 0, f"{where}: a mail link"
    # The pages colour their own words (marks, verdicts, a model name in grey); the user's ":red[alert]" must never
    # become a coloured "alert" of its own.
    coloured = main.locator(".stMarkdownColoredText").filter(has_text=re.compile(r"^\s*alert\s*$"))
    assert coloured.count() == 0, f"{where}: :red[alert] coloured"
    assert main.locator('[data-testid="stMarkdownContainer"] [data-testid="stIconMaterial"]').count() == 0, \
        f"{where}: :material/home: drawn as an icon"
    assert "😄" not in main.inner_text(), f"{where}: :smile: became an emoji"
    typeset = "".join(main.locator('[data-testid="stMarkdownContainer"]').all_inner_texts())  # not buttons' key hints
    assert not set("→≥—") & set(typeset), f"{where}: -> or >= typeset as an arrow or sign"
    assert main.locator('img[alt*="smile"], [data-testid="stIconEmoji"]').count() == 0, f"{where}: emoji image"


def test_user_text_is_shown_as_written_on_every_page(page: Page, server: str, tmp_path: Path) -> None:
    labels = tmp_path / "mine.csv"
    labels.write_text("query,doc_id,grade,query_text,source\n"
                      f"q1,d1,1,\"{MARKUP}\",support_ticket\n"
                      "q2,d2,1,cancel plan,search_log\n"
                      "q3,d3,1,export data,search_log\n"
                      "q4,d4,1,reset password,team_written\n")
    odd = tmp_path / f"{RUN_NAME}.trec"
    odd.write_text("q1 Q0 x 1 9 t\nq1 Q0 d1 2 8 t\nq2 Q0 d2 1 9 t\nq3 Q0 x 1 9 t\nq4 Q0 d4 1 9 t\n")
    sidecar = tmp_path / f"{RUN_NAME}.meta.json"
    sidecar.write_text(json.dumps({"model": MARKUP, "price_per_mtok": 0.1}))
    (tmp_path / "plain.meta.json").write_text(json.dumps({"model": MORE}))
    other = tmp_path / "plain.trec"
    other.write_text("q1 Q0 d1 1 9 t\nq2 Q0 x 1 9 t\nq3 Q0 d3 1 9 t\nq4 Q0 d4 1 9 t\n")

    open_page(page, f"{server}/data")
    inputs = page.locator('[data-testid="stFileUploader"] input[type="file"]')
    inputs.nth(0).set_input_files([str(labels)])
    settle(page)
    inputs.nth(1).set_input_files([str(odd), str(sidecar), str(other), str(tmp_path / "plain.meta.json")])
    settle(page)
    no_exceptions(page)
    assert "data" in params(page)
    # The Data page names the run in plain text: the characters exactly, nothing in between.
    assert f"Runs: {RUN_NAME}, plain" in page.locator('[data-testid="stMain"]').inner_text()
    no_markup_from_user_text(page, "data")
    shoot(page, "markup_data")
    query = "&".join(f"{k}={v[0]}" for k, v in params(page).items())

    for path, title in (("home", "Overview"), ("choose-k", "Choose k"), ("sources", "Sources"),
                        ("integrity", "Integrity")):
        open_page(page, f"{server}/{path}?{query}")
        expect(page.get_by_role("heading", name=title).first).to_be_visible()
        no_exceptions(page)
        text = visible_text(page)
        assert RUN_NAME in text and MARKUP in text and MORE in text, (path, text[:2000])
        no_markup_from_user_text(page, path)
        shoot(page, f"markup_{path}")

    open_page(page, f"{server}/failures?{query}&query=q1&k=1")
    no_exceptions(page)
    code = page.locator('[data-testid="stCode"]').first
    expect(code).to_have_text(MARKUP)  # what the customer typed, verbatim
    text = visible_text(page)
    assert RUN_NAME in text and MARKUP in text
    no_markup_from_user_text(page, "failures")
    shoot(page, "markup_failures")

    # The presenter view: the query in large type, the run names and models in each run's part, all as written.
    open_page(page, f"{server}/present?{query}&query=q1&k=1")
    no_exceptions(page)
    text = visible_text(page)
    assert RUN_NAME in text and MARKUP in text and MORE in text, text[:2000]
    no_markup_from_user_text(page, "present")
    shoot(page, "markup_present")
