"""The blind judging page in a real browser (Chromium via Playwright against `streamlit run`).

Reuses the server, browser and page fixtures of `test_dashboard_browser`; the server gets its
own workspace folder, so what the page saves is checked in the workspace itself.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from evalcore.metrics.split import scoring_labels
from evalcore.access import login_name
from evalcore.analyses.judging import judging_pool
from evalcore.readers.documents import read_documents
from evalcore.readers.labels import read_labels
from evalcore.readers.runs import read_run
from evalcore.store.workspace import Workspace

from tests.dashboard.browser_helpers import open_page, params, settle, shoot

ROOT = Path(__file__).resolve().parents[2]
S = ROOT / "sample_data"


@pytest.fixture(scope="module")
def judging_workspace(server_workspace: Path) -> Path:
    """The workspace of the server this module starts (its own: what the page saves is checked there)."""
    return server_workspace


def expected_pool(query: str, depth: int):
    runs = [read_run(S / f"{stem}.trec") for stem in ("base", "tuned", "tuned-256d")]
    return judging_pool(runs, read_labels(S / "labels.tsv"), query, depth)


def test_judging_page_hides_rankings_and_saves_a_blind_version(server: str, page: Page, judging_workspace) -> None:
    query, depth = "q006", 3  # a tune query: every page scores the sample's tune split (the holdout is sealed)
    pool = expected_pool(query, depth)
    open_page(page, f"{server}/judge?query={query}&depth={depth}")
    expect(page.get_by_role("heading", name="Blind judging")).to_be_visible()
    expect(page.get_by_text("changed outlook", exact=True)).to_be_visible()  # what the customer typed
    cards = [page.locator(f".st-key-judge-doc-{i}") for i in range(1, len(pool.docs) + 1)]
    shown = [card.locator('[data-testid="stMarkdown"]').first.inner_text() for card in cards]
    titles = read_documents(S / "docs.jsonl")
    # The shuffled order, each doc named beside its id (its title from the documents file).
    assert shown == [f"Doc {i}: {doc} · {titles.title(doc)}" for i, doc in enumerate(pool.docs, start=1)]
    assert page.locator(f".st-key-judge-doc-{len(pool.docs) + 1}").count() == 0
    for card in cards:  # no rank, score or run beside a doc
        text = card.inner_text().lower()
        assert "rank" not in text and "score" not in text and not any(r in text for r in ("base", "tuned"))
    save = page.get_by_role("button", name="Save as a new label-set version")
    expect(save).to_be_disabled()
    relevant = "integrations-calendar-01"
    assert relevant in pool.docs
    for card, doc in zip(cards, pool.docs):
        card.get_by_text("not relevant" if doc != relevant else "relevant", exact=True).click()
        settle(page)
    expect(save).to_be_enabled()
    save.click()
    settle(page)
    expect(page.get_by_text("judged blind at depth 3", exact=False)).to_be_visible()
    assert params(page)["query"] == [query] and params(page)["depth"] == [str(depth)]
    assert page.locator('[data-testid="stException"]').count() == 0
    shoot(page, "judge")

    ws = Workspace(judging_workspace)
    # The judgments extend the whole label set as loaded (holdout included, every query keeping its split),
    # not only the tune queries the pages score.
    versions = ws.label_versions("labels")
    assert versions["version"].tolist() == [1, 2]
    saved = ws.load_labels("labels", 2)
    grades = saved.judgments[saved.judgments["query"] == query].set_index("doc_id")["grade"]
    for doc in pool.docs:
        assert grades[doc] == (1.0 if doc == relevant else 0.0)
    assert bool(saved.field("blind")[query]) is True
    assert saved.n_queries == 320 and saved.field("split").value_counts().to_dict() == {"tune": 224, "holdout": 96}
    assert ws.load_labels("labels", 1).fingerprint == read_labels(S / "labels.tsv").fingerprint
    rounds = ws.judging_rounds("labels")
    assert rounds[["query", "depth", "n_docs", "judge"]].values.tolist() == [[query, depth, len(pool.docs), login_name()]]


def test_use_this_version_opens_every_page_on_the_saved_labels(server: str, page: Page, judging_workspace) -> None:
    """After a save (the test above), "Use this version" puts a new data-set key in the URL; the Overview then
    scores the saved version, and the copied link opens it again."""
    ws = Workspace(judging_workspace)
    saved = ws.label_version("labels")  # the version the test above saved
    assert saved.version == 2
    open_page(page, f"{server}/judge?query=q006&depth=3")
    assert "data" not in params(page)  # the sample
    use = page.get_by_role("button", name="Use this version")
    expect(use).to_be_enabled()
    use.click()
    settle(page)
    expect(page.get_by_text("now scores version 2", exact=False)).to_be_visible()
    [key] = params(page)["data"]
    expect(use).to_be_disabled()  # version 2 is what every page scores now
    page.get_by_role("link", name="See the Overview on this version").click()
    settle(page)
    expect(page.get_by_role("heading", name="Overview")).to_be_visible()
    assert params(page)["data"] == [key]
    # The pages score the tune side of version 2 (its holdout still sealed): a new tune fingerprint.
    tune = scoring_labels(ws.load_labels("labels", 2)).labels.fingerprint
    assert tune != scoring_labels(read_labels(S / "labels.tsv")).labels.fingerprint
    header = page.locator('[data-testid="stMarkdown"]').filter(has_text="Labels").first
    expect(header).to_contain_text(f"labels:tune#{tune}")
    assert page.locator('[data-testid="stException"]').count() == 0
    shoot(page, "overview-saved-version")

    open_page(page, f"{server}/overview?data={key}")  # a copied link
    expect(page.locator('[data-testid="stMarkdown"]').filter(has_text="Labels").first).to_contain_text(
        f"labels:tune#{tune}")
    open_page(page, f"{server}/overview")  # the old data set is still the sample's
    expect(page.locator('[data-testid="stMarkdown"]').filter(has_text="Labels").first).to_contain_text(
        f"labels:tune#{scoring_labels(read_labels(S / 'labels.tsv')).labels.fingerprint}")
