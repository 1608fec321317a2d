"""Chunk runs in a real browser (Chromium via Playwright against `streamlit run`): labels with evidence spans, two
chunk runs, their chunk maps and the documents uploaded through the Data page's file inputs (and the chunking
sample loaded with its button); Choose k switched to prompt tokens with the sentence at the budget (the switch kept
in the URL across a reload); a fragment opened in Failures with its evidence marked in the chunk's text."""

from __future__ import annotations

import re
from pathlib import Path

from playwright.sync_api import Page, expect

from tests.dashboard.browser_helpers import chart_drawn, no_exceptions, open_page, params, settle, shoot, uploader

MAIN = '[data-testid="stMain"]'
CHUNKING = Path(__file__).resolve().parents[2] / "sample_data" / "chunking"
DOCS = CHUNKING.parent / "docs.jsonl"


def load_chunking_sample(page: Page, server: str) -> str:
    open_page(page, f"{server}/data")
    page.get_by_role("button", name=re.compile("Load the chunking sample")).click()
    settle(page)
    no_exceptions(page)
    for line in ("sent1: chunk map sent1.chunks#", "sent3: chunk map sent3.chunks#", "char400: chunk map char400."):
        expect(page.get_by_text(line)).to_be_visible()
    return params(page)["data"][0]


def upload_two_chunk_runs(page: Page, server: str) -> str:
    """Labels with spans, runs sent1 and sent3, the documents, then each run's chunk map, as a person uploads them."""
    open_page(page, f"{server}/data")
    inputs = page.locator('[data-testid="stFileUploader"] input[type="file"]')
    inputs.nth(0).set_input_files([str(CHUNKING / "labels.tsv")])
    settle(page)
    expect(page.get_by_text("Labels: labels.tsv · 320 queries · 558 judgments")).to_be_visible()
    inputs.nth(1).set_input_files([str(CHUNKING / "sent1.trec"), str(CHUNKING / "sent3.trec")])
    settle(page)
    expect(page.get_by_text("Runs: sent1, sent3", exact=True)).to_be_visible()
    inputs.nth(2).set_input_files([str(DOCS)])
    settle(page)
    expect(page.get_by_text("Documents: docs.jsonl · 503 docs")).to_be_visible()
    # Labels, runs, documents, queries, then a chunk map per run (in the "Chunk maps" expander).
    expect(inputs).to_have_count(4 + 2 * 2)  # labels, runs, docs, queries; then grades and a map per run
    uploader(page, "Chunks file of sent1").set_input_files([str(CHUNKING / "sent1.chunks.csv")])
    settle(page)
    uploader(page, "Chunks file of sent3").set_input_files([str(CHUNKING / "sent3.chunks.csv")])
    settle(page)
    no_exceptions(page)
    expect(page.get_by_text("sent1: chunk map sent1.chunks#")).to_be_visible()
    expect(page.get_by_text("sent3: chunk map sent3.chunks#")).to_be_visible()
    return params(page)["data"][0]


def test_choose_k_compares_chunkings_at_a_prompt_budget_and_the_link_keeps_it(screen: Page, server: str) -> None:
    data = upload_two_chunk_runs(screen, server)
    open_page(screen, f"{server}/choose-k?data={data}")
    no_exceptions(screen)
    screen.locator(MAIN).get_by_text("against prompt tokens", exact=True).click()
    settle(screen)
    no_exceptions(screen)
    assert params(screen)["axis"] == ["tokens"]
    sentence = screen.locator(MAIN).get_by_text(re.compile(r"^At about [\d,]+ prompt tokens, "))
    expect(sentence.first).to_be_visible()
    expect(sentence.first).to_be_in_viewport()  # the answer at the budget is on the first screen
    said = sentence.first.inner_text()
    assert said.count(" with k = ") == 2 and "sent1" in said and "sent3" in said, said
    chart_drawn(screen)
    shoot(screen, "choose_k_prompt_tokens")

    screen.reload()
    screen.wait_for_selector('[data-testid="stApp"]')
    settle(screen)
    assert params(screen)["axis"] == ["tokens"] and params(screen)["data"] == [data]
    expect(screen.locator(MAIN).get_by_text(said, exact=True)).to_be_visible()


def test_a_fragment_opens_with_its_evidence_marked(screen: Page, server: str) -> None:
    data = load_chunking_sample(screen, server)
    open_page(screen, f"{server}/failures?data={data}&k=5&miss=fragment")
    no_exceptions(screen)
    main = screen.locator(MAIN)
    expect(main.get_by_text(re.compile(r"got only a fragment at k = 5")).first).to_be_visible()
    grid = screen.locator('[data-testid="stDataFrame"]').first
    grid.scroll_into_view_if_needed()
    settle(screen)
    box = grid.bounding_box()
    screen.mouse.click(box["x"] + 18, box["y"] + 35 + 17)  # the selection box of the first row
    settle(screen)
    no_exceptions(screen)
    query = params(screen)["query"][0]
    heading = screen.get_by_role("heading", name="One query up close")
    expect(heading).to_be_in_viewport()
    # A chunk of the relevant document, its id beside the title, the evidence inside its text highlighted.
    expect(main.get_by_text(re.compile(r"#s\d+|#w\d+|#c\d+")).first).to_be_visible()
    marks = main.locator('[data-testid="stMarkdownContainer"] span[style*="background"]')
    assert marks.count() > 0
    shoot(screen, "failures_fragment")

    screen.reload()
    screen.wait_for_selector('[data-testid="stApp"]')
    settle(screen)
    assert params(screen)["miss"] == ["fragment"] and params(screen)["query"] == [query]
