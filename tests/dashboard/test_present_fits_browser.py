"""The presenter view fits a 1280 x 720 projector with real-length text, in a real browser (Chromium via Playwright
against `streamlit run`): the chunking sample's three chunk runs and maps, uploaded through the Data page with labels
whose queries are long (two-line claims, a pasted support ticket) and documents whose titles run to a line. On every
failure walked nothing scrolls (the page's and Streamlit's main container's scroll height within the screen), the
way back to the Failures page is on screen and keeps the selections, and no chunk is named by its id."""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path

from playwright.sync_api import Page, expect

from tests.dashboard.browser_helpers import PROJECTOR, no_exceptions, open_page, params, settle, shoot, uploader

SAMPLE = Path(__file__).resolve().parents[2] / "sample_data"
RUNS = ("sent1", "sent3", "char400")
CHUNK_ID = re.compile(r"[a-z]+(?:-[a-z]+)*-\d\d#[sw]\d")  # the sample's chunk ids: security-scim-01#s3, ...#w2
# What customers type when it is long: a claim (SciFact's run to two lines), a question, a pasted support ticket.
LONG_QUERIES = (
    "{0}: customers say the setting described in the help centre does not exist on the desktop app and ask where "
    "it moved",
    "Is it true that {0} works the same way for guests, members and administrators on every plan, including the "
    "free plan, and on mobile?",
    "{0}. The customer pasted their whole support ticket into the search box: they describe the workspace, the plan, "
    "every step they tried on the desktop app and on the phone, the error they saw, the colleague who could do it "
    "last week and the deadline they have on Friday, and ask for the article that explains it. " * 2,
    "{0} – a customer writes that after the last update the option is greyed out for everyone in the workspace, even "
    "for the owners, and asks whether this is a bug or a new limit of their plan that nobody announced",
)
LONG_TITLE = ("{0}, explained for administrators, members and guests on every plan, with its settings, limits and "
              "exceptions")
MEASURE = """() => {
  const main = document.querySelector('[data-testid="stMain"]');
  const page = document.scrollingElement;
  const bottom = document.querySelector('.st-key-present').getBoundingClientRect().bottom;
  return {main: [main.scrollHeight, main.clientHeight], page: [page.scrollHeight, page.clientHeight],
          bottom: Math.ceil(bottom), top: main.scrollTop};
}"""


def long_text_files(folder: Path) -> tuple[Path, Path]:
    """The chunking sample's labels with every query made long, and the sample's documents with long titles."""
    with open(SAMPLE / "chunking" / "labels.tsv", newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f, delimiter="\t"))
    labels = folder / "labels.tsv"
    with open(labels, "w", newline="", encoding="utf-8") as f:
        out = csv.DictWriter(f, fieldnames=list(rows[0]), delimiter="\t")
        out.writeheader()
        for row in rows:
            said = row["query_text"]
            out.writerow({**row, "query_text": LONG_QUERIES[int(row["query"][1:]) % len(LONG_QUERIES)].format(
                said[:1].upper() + said[1:]).strip()})
    docs = folder / "docs.jsonl"
    with open(SAMPLE / "docs.jsonl", encoding="utf-8") as f, open(docs, "w", encoding="utf-8") as out:
        for line in f:
            doc = json.loads(line)
            out.write(json.dumps({**doc, "title": LONG_TITLE.format(doc["title"])}) + "\n")
    return labels, docs


def upload(page: Page, server: str, labels: Path, docs: Path) -> str:
    """Labels, the three chunk runs, the documents and each run's chunk map, as a person uploads them on Data."""
    open_page(page, f"{server}/data")
    inputs = page.locator('[data-testid="stFileUploader"] input[type="file"]')
    inputs.nth(0).set_input_files([str(labels)])
    settle(page)
    inputs.nth(1).set_input_files([str(SAMPLE / "chunking" / f"{run}.trec") for run in RUNS])
    settle(page)
    inputs.nth(2).set_input_files([str(docs)])
    settle(page)
    expect(inputs).to_have_count(4 + 2 * len(RUNS))  # labels, runs, documents, queries; grades and a map per run
    for run in RUNS:
        uploader(page, f"Chunks file of {run}").set_input_files([str(SAMPLE / "chunking" / f"{run}.chunks.csv")])
        settle(page)
    no_exceptions(page)
    for run in RUNS:
        expect(page.get_by_text(f"{run}: chunk map {run}.chunks#")).to_be_visible()
    return params(page)["data"][0]


def inside(page: Page, selector: str) -> None:
    """The element's whole box is on the 1280 x 720 screen, unscrolled."""
    element = page.locator(selector).first
    expect(element).to_be_visible()
    box = element.bounding_box()
    assert box is not None and box["x"] >= 0 and box["y"] >= 0, box
    assert box["x"] + box["width"] <= PROJECTOR["width"] and box["y"] + box["height"] <= PROJECTOR["height"], box


def fits(page: Page) -> dict:
    """One failure on the projector: nothing to scroll, the way back and Next on screen, no chunk ids."""
    no_exceptions(page)
    assert page.locator(".st-key-present-runs [data-testid='stColumn']").count() == 3  # three runs side by side
    sizes = page.evaluate(MEASURE)
    where = params(page)["query"][0]
    assert sizes["main"][0] <= sizes["main"][1], f"{where}: the page scrolls {sizes['main'][0] - sizes['main'][1]} px"
    assert sizes["page"][0] <= sizes["page"][1], f"{where}: the window scrolls {sizes}"
    assert sizes["top"] == 0 and sizes["bottom"] <= PROJECTOR["height"], f"{where}: {sizes}"
    inside(page, ".st-key-present-back a")
    expect(page.get_by_role("link", name="Back to Failures")).to_be_visible()
    inside(page, ".st-key-present-next button")
    inside(page, ".st-key-present-query p")
    shown = page.locator(".st-key-present").inner_text()
    assert not CHUNK_ID.findall(shown), f"{where}: chunk ids on screen: {CHUNK_ID.findall(shown)}"
    return sizes


def test_present_fits_1280_by_720_with_long_queries_and_chunk_runs(projector: Page, server: str,
                                                                    tmp_path: Path) -> None:
    data = upload(projector, server, *long_text_files(tmp_path))
    # q218: three relevant docs, each run with a fragment (its chunk's evidence marked), a pasted ticket for a query
    # (its start shown, the whole under The numbers); then the first failures of the list at k = 5 and at k = 10.
    worst = 0
    for opened, steps in ((f"present?data={data}&k=5&miss=fragment&query=q218", 1), (f"present?data={data}&k=5", 4),
                          (f"present?data={data}&k=10&miss=missed", 4)):
        open_page(projector, f"{server}/{opened}")
        for step in range(steps):
            worst = max(worst, fits(projector)["bottom"])
            if opened.endswith("q218"):
                expect(projector.get_by_text("its start: the whole text is under The numbers")).to_be_visible()
                expect(projector.locator(".st-key-present").get_by_text("of the evidence").first).to_be_visible()
                shoot(projector, "present_1280")
            if step < steps - 1:
                projector.keyboard.press("ArrowRight")
                settle(projector)
    print(f"\nthe lowest failure ends at {worst} px of {PROJECTOR['height']}")

    # The way back: the Failures page, with the same data set, k, meaning of failed and query.
    asked = params(projector)
    projector.get_by_role("link", name="Back to Failures").click()
    settle(projector)
    no_exceptions(projector)
    assert projector.url.split("?")[0].endswith("/failures")
    back = params(projector)
    assert {name: back.get(name) for name in ("data", "k", "miss", "query")} == \
        {name: asked.get(name) for name in ("data", "k", "miss", "query")}
    expect(projector.get_by_role("heading", name="One query up close")).to_be_attached()
