"""The Index size page in a real browser (Chromium via Playwright against `streamlit run`, the fixtures of
tests/dashboard/conftest.py): a bad vectors upload is explained and changes nothing loaded; a model's vectors
uploaded on the page are searched (the frontier chart drawn, a sentence per variant); a variant added to the runs
is on the Overview like an uploaded run."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from playwright.sync_api import Page, expect

from tests.dashboard.browser_helpers import (
    chart_drawn,
    no_exceptions,
    open_page,
    params,
    settle,
    shoot,
)

ROOT = Path(__file__).resolve().parents[2]
V = ROOT / "sample_data" / "vectors"


def _jsonl(path: Path, name: str, dims: int) -> Path:
    """The sample tuned model's first ``dims`` numbers as JSONL, as a team would export them."""
    matrix = np.load(V / f"tuned.{name}.npy")[:, :dims]
    ids = (V / f"tuned.{name}.ids.txt").read_text().split()
    path.write_text("".join(json.dumps({"id": i, "vector": [round(float(x), 6) for x in row]}) + "\n"
                            for i, row in zip(ids, matrix)))
    return path


def test_upload_vectors_see_the_frontier_and_add_a_variant_to_the_runs(page: Page, server: str, tmp_path) -> None:
    queries = _jsonl(tmp_path / "mini-queries.jsonl", "queries", 32)
    docs = _jsonl(tmp_path / "mini-docs.jsonl", "docs", 32)
    broken = tmp_path / "broken-docs.jsonl"
    broken.write_text('{"id": "a", "vector": [1, 2]}\n{"id": "b", "vector": [1, NaN]}\n')

    open_page(page, f"{server}/index-size?models=tuned&dims=full,16&precision=float32,int8")
    expect(page.get_by_role("heading", name="Index size", exact=True)).to_be_visible()
    chart_drawn(page)  # the sample's vectors, searched on first visit
    page.get_by_text("Add your model's vectors").click()
    inputs = page.locator('[data-testid="stFileUploader"] input[type="file"]')
    expect(inputs).to_have_count(4)

    # A broken doc file is explained beside the upload; the sample models stay.
    page.get_by_role("textbox", name="Model name").fill("mini")
    inputs.nth(0).set_input_files([str(queries)])
    inputs.nth(2).set_input_files([str(broken)])
    expect(page.get_by_text("broken-docs.jsonl", exact=True)).to_be_visible()  # uploaded before the form is sent
    settle(page)
    page.get_by_role("button", name="Use these vectors").click()
    settle(page)
    expect(page.get_by_text("broken-docs.jsonl, line 2: expected finite numbers in every vector")).to_be_visible()
    expect(page.get_by_text("tuned (acme-embed-large-v2-kestrel-ft): full vectors 256 dims")).to_be_visible()
    no_exceptions(page)

    # The right files: searched with a progress bar, the frontier drawn, one sentence per variant.
    inputs.nth(2).set_input_files([str(docs)])
    expect(page.get_by_text("mini-docs.jsonl", exact=True)).to_be_visible()
    settle(page)
    page.get_by_role("button", name="Use these vectors").click()
    settle(page)
    multiselect = page.locator('[data-testid="stMultiSelect"]').filter(has_text="Models")
    multiselect.click()
    page.get_by_role("option", name="mini", exact=True).click()
    page.keyboard.press("Escape")
    settle(page)
    expect(page.get_by_text("mini (mini): full vectors 32 dims")).to_be_visible()
    expect(page.get_by_text("float32 16", exact=False).first).to_be_visible()
    expect(page.get_by_text("x smaller.", exact=False).first).to_be_visible()
    chart_drawn(page)
    no_exceptions(page)
    shoot(page, "index_size")
    assert "vectors" in params(page)  # the uploaded model is named in the URL: a reload keeps it
    page.reload()
    settle(page)
    expect(page.get_by_text("mini (mini): full vectors 32 dims")).to_be_visible()

    # Add one variant to the runs: the URL names the new data set, the Overview shows the run.
    variant = page.get_by_role("combobox", name="Variant")
    variant.click()
    variant.fill("mini-int8-16")  # the list opens filtered as one types
    page.get_by_role("option", name="mini-int8-16", exact=True).click()
    settle(page)
    page.get_by_role("button", name="Add to the loaded runs").click()
    settle(page)
    expect(page.get_by_text("Added run mini-int8-16 to the loaded runs.")).to_be_visible()
    assert "data" in params(page)
    page.get_by_role("link", name="See it on the Overview").click()
    settle(page)
    expect(page.get_by_role("heading", name="Overview")).to_be_visible()
    expect(page.get_by_text("mini-int8-16 (mini-int8-16)", exact=False).first).to_be_visible()
    chart_drawn(page)
    no_exceptions(page)
    shoot(page, "index_size_variant_on_overview")


def test_an_approximate_index_sweep_opens_a_lost_query_in_failures_beside_exact_search(page: Page, server: str) -> None:
    """A sweep of three HNSW settings on the sample's tuned vectors: the chart is on the first screen at 1400 x 900,
    each setting has its sentence, and a lost query opens in Failures with the index's ranking beside exact
    search's."""
    page.set_viewport_size({"width": 1400, "height": 900})
    open_page(page, f"{server}/index-size?part=approximate&ann_model=tuned&ann_kind=hnsw&ann_sweep=8,16,32&k=10")
    chart_drawn(page)
    box = page.locator('[data-testid="stVegaLiteChart"]').first.bounding_box()
    assert box is not None and box["y"] + 0.6 * box["height"] < 900, box  # the answer is on the first screen
    for ef in (8, 16, 32):
        expect(page.get_by_text(f"HNSW ef = {ef} ", exact=False).first).to_be_visible()
    expect(page.get_by_text("loses the answer for", exact=False).first).to_be_visible()
    no_exceptions(page)
    shoot(page, "index_size_approximate")
    assert params(page)["ann_sweep"] == ["8,16,32"]

    picker = page.get_by_role("combobox", name="Lost query")
    picker.click()
    picker.fill("HNSW ef = 8")  # the list opens filtered as one types
    option = page.get_by_role("option").filter(has_text="HNSW ef = 8 ·").first
    chosen = option.inner_text()
    query = chosen.split(" · ")[1]
    option.click()
    settle(page)
    page.get_by_role("button", name="Open in Failures, beside exact search").click()
    settle(page)
    expect(page.get_by_role("heading", name="Failures", exact=True)).to_be_visible()
    expect(page.get_by_role("heading", name="One query up close")).to_be_visible()
    shown = params(page)
    assert shown["query"] == [query] and shown["runs"] == ["tuned-float32-full", "tuned-hnsw-ef8"], shown
    for run in ("tuned-float32-full", "tuned-hnsw-ef8"):  # the two ranked lists, side by side
        expect(page.get_by_text(f"{run} · ", exact=False).first).to_be_visible()
    no_exceptions(page)
    shoot(page, "index_size_lost_query_in_failures")


def test_the_smaller_vectors_chart_is_on_the_first_screen(page: Page, server: str) -> None:
    page.set_viewport_size({"width": 1400, "height": 900})
    open_page(page, f"{server}/index-size")
    chart_drawn(page)
    box = page.locator('[data-testid="stVegaLiteChart"]').first.bounding_box()
    assert box is not None and box["y"] + box["height"] <= 900, box
    expect(page.get_by_text("The sample's vectors are small stand-ins", exact=False)).to_be_visible()
    shoot(page, "index_size_first_screen")
