"""The meeting report is one A4 page of answers: printed by Chromium (Playwright, A4), the best run's headline, each
run's failure count and the top failures fill page one, and "Appendix: details" starts page two; the HTML with its
charts stays small. Pages and their text are read from the PDF's bytes here (no poppler): Chromium's PDFs (Skia)
write each page's text as glyph codes of Type0 fonts with a ToUnicode map, in Flate streams."""

from __future__ import annotations

import base64
import re
import zlib
from pathlib import Path

import pytest
from playwright.sync_api import Browser

import evalcore
from evalcore.readers.runs import read_run
from evalcore.report.meeting import report_from_workspace
from evalcore.store.workspace import Workspace
from tests.dashboard.browser_helpers import chromium

from cli_runner import run_cli

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "sample_data"
RUNS = ("base", "tuned", "tuned-256d")
MAX_BYTES = 150_000
"""The sample's HTML report with its charts is about 107 KB (it was 477 KB as three pages of PNGs at twice size)."""


@pytest.fixture(scope="module")
def browser():
    with chromium("the report's print test") as launched:
        yield launched


def test_the_sample_report_prints_its_answers_on_one_a4_page(browser: Browser, tmp_path) -> None:
    target = tmp_path / "report.html"
    runs = [a for r in RUNS for a in ("--run", SAMPLE / f"{r}.trec")]
    done = run_cli("report", "--labels", SAMPLE / "labels.tsv", *runs, "--docs", SAMPLE / "docs.jsonl",
                   "--output", target)
    assert done.returncode == 0, done.stderr
    page = target.read_text(encoding="utf-8")
    pngs = re.findall(r'src="data:image/png;base64,([A-Za-z0-9+/=]+)"', page)
    assert len(pngs) == 2 and all(base64.b64decode(p).startswith(b"\x89PNG") for p in pngs)  # the size is with charts
    assert target.stat().st_size < MAX_BYTES, target.stat().st_size

    pages = pdf_pages(print_a4(browser, target))
    first = _squeezed(pages[0])
    assert _first_page_with(pages, "Appendix: details") == 1, pages[0]  # page one holds everything before it
    assert "Appendix" not in pages[0]
    assert first.startswith(_squeezed("Retrieval quality: labels:tune, k = 10"))
    for text in ("Best run: tuned (acme-embed-large-v2-kestrel-ft). tuned puts a relevant document first",
                 "Recall flattens at k = 9 for base",  # the k to take
                 "Leaderboard at k = 10", "0.6168 (0.5538 to 0.6766)",
                 "base: 22 of 224 queries found nothing relevant at k = 10",
                 "tuned: 22 of 224 queries found nothing relevant at k = 10",
                 "tuned-256d: 25 of 224 queries found nothing relevant at k = 10",
                 "tuned-256d q272 plan cange emails"):  # the last of the top failures
        assert _squeezed(text) in first, text
    assert "Pairedcomparison" not in first and "Provenance" not in first
    rest = _squeezed(" ".join(pages[1:]))
    assert "Pairedcomparison" in rest and "Provenance" in rest and _squeezed("The k to take, and the cost") in rest


def test_many_long_named_runs_with_long_notes_still_fit_page_one(browser: Browser, tmp_path) -> None:
    # Six runs named and modelled at length, notes and tags at length: the leaderboard grows, the failures shown on
    # page one shrink to fit (the appendix has them in full).
    runs = [read_run(SAMPLE / f"{RUNS[i % 3]}.trec", name=f"{RUNS[i % 3]}-variant-{i}-with-a-rather-long-name",
                     model=f"acme-embed-large-v2-kestrel-ft-experimental-build-{i}-of-the-quarter") for i in range(6)]
    evaluation = evalcore.evaluate_runs(runs, SAMPLE / "labels.tsv", k=(1, 10))
    ws = Workspace(tmp_path / "ws")
    ws._save_evaluation(evaluation, k=10)
    saved = ws._save_evaluation(evaluation, k=10)  # a second run of each line: a history
    line = saved.runs[0].line
    for query in ("q045", "q152"):
        ws.archive._set_note(line, query, "Why this query fails, at length: " + "the label may be wrong here; " * 12)
        for tag in ("label wrong", "synonym missing in the docs", "typo in the query text"):
            ws.archive._add_tag(line, query, tag)
    report = report_from_workspace(ws, saved.id, docs=SAMPLE / "docs.jsonl", top_failures=10)
    target = tmp_path / "many.html"
    target.write_text(report.to_html(), encoding="utf-8")

    pages = pdf_pages(print_a4(browser, target))
    first = _squeezed(pages[0])
    assert _first_page_with(pages, "Appendix: details") == 1, pages[0]
    n = int(report.leaderboard["n"].iloc[0])
    for run in runs:
        failed = report.decision.failed(run.name)
        assert _squeezed(f"{run.name}: {failed} of {n} queries found nothing relevant at k = 10") in first, run.name
    assert "Cuttofitthepage" in first
    assert _squeezed("the label may be wrong here; " * 12) in _squeezed(" ".join(pages[1:]))  # the note in full


def test_the_answer_grades_stay_on_page_one(browser: Browser, tmp_path) -> None:
    # The sample with its answer grades (base's and tuned's): the grade column and its sentence join page one, the
    # failures give up a line, and the appendix still starts page two.
    target = tmp_path / "graded.html"
    runs = [a for r in RUNS for a in ("--run", SAMPLE / f"{r}.trec")]
    grades = [a for r in ("base", "tuned") for a in ("--grades", f"{r}={SAMPLE / 'answers' / f'{r}.deepeval.json'}")]
    done = run_cli("report", "--labels", SAMPLE / "labels.tsv", *runs, "--docs", SAMPLE / "docs.jsonl", *grades,
                   "--output", target)
    assert done.returncode == 0, done.stderr
    pages = pdf_pages(print_a4(browser, target))
    first = _squeezed(pages[0])
    assert _first_page_with(pages, "Appendix: details") == 1, pages[0]
    for text in ("answer grade: Correctness (95% CI; n graded)", "0.7143 (0.6718 to 0.7531; n = 224)", "not graded",
                 "base finds more than tuned for 8 queries (recall@10 strictly higher), yet answers 3 of them worse",
                 "tuned-256d: 25 of 224 queries found nothing relevant at k = 10"):
        assert _squeezed(text) in first, text
    assert _squeezed("Answer grades beside retrieval") in _squeezed(" ".join(pages[1:]))


# ----------------------------------------------------------------------------- printing and reading the PDF


def print_a4(browser: Browser, html: Path) -> bytes:
    """``html`` printed to PDF as a reader would print it: A4, with the page's own margins."""
    context = browser.new_context()
    try:
        page = context.new_page()
        page.goto(html.resolve().as_uri(), wait_until="load")
        return page.pdf(format="A4", print_background=True)
    finally:
        context.close()


def pdf_pages(pdf: bytes) -> list[str]:
    """The text of each page of a PDF Chromium printed, in page order (as far as this test needs: text shown with
    Tj / TJ in Type0 fonts mapped to Unicode by their ToUnicode CMaps)."""
    objects = {int(m.group(1)): m.group(2) for m in re.finditer(rb"(?s)(\d+) 0 obj\s*(.*?)\s*endobj", pdf)}
    pages = _page_objects(objects, _ref(objects[_ref(pdf, rb"/Root")], rb"/Pages"))
    assert len(pages) == len(re.findall(rb"/Type\s*/Page\b", pdf)), "every page object is in the page tree"
    texts = []
    for number in pages:
        page = objects[number]
        fonts = {name: _to_unicode(objects, font)
                 for name, font in re.findall(rb"/(\w+)\s+(\d+) 0 R", _dictionary(objects, page, rb"/Font"))}
        content = b"".join(_stream(objects[n]) for n in _refs(page, rb"/Contents"))
        texts.append(_show(content, fonts))
    return texts


def _page_objects(objects: dict[int, bytes], number: int) -> list[int]:
    node = objects[number]
    if re.search(rb"/Type\s*/Page\b", node):
        return [number]
    return [page for kid in _refs(node, rb"/Kids") for page in _page_objects(objects, kid)]


def _ref(body: bytes, key: bytes) -> int:
    return int(re.search(re.escape(key) + rb"\s+(\d+) 0 R", body).group(1))


def _refs(body: bytes, key: bytes) -> list[int]:
    found = re.search(re.escape(key) + rb"\s*(\[[^\]]*\]|\d+ 0 R)", body).group(1)
    return [int(n) for n in re.findall(rb"(\d+) 0 R", found)]


def _dictionary(objects: dict[int, bytes], body: bytes, key: bytes) -> bytes:
    """The dictionary under ``key`` in ``body`` (itself, or the object it refers to)."""
    direct = re.search(re.escape(key) + rb"\s*<<(.*?)>>", body, re.S)
    if direct:
        return direct.group(1)
    resources = re.search(rb"/Resources\s+(\d+) 0 R", body)
    return _dictionary(objects, objects[int(resources.group(1))], key) if resources else b""


def _stream(body: bytes) -> bytes:
    data = re.search(rb"(?s)stream\r?\n(.*)\r?\nendstream", body).group(1)
    return zlib.decompress(data) if b"/FlateDecode" in body else data


def _to_unicode(objects: dict[int, bytes], number: bytes) -> dict[int, str]:
    font = objects[int(number)]
    if b"/ToUnicode" not in font:
        return {}
    cmap, codes = _stream(objects[_ref(font, b"/ToUnicode")]).decode("latin-1"), {}
    for block in re.findall(r"(?s)beginbfchar(.*?)endbfchar", cmap):
        for code, text in re.findall(r"<([0-9A-Fa-f]+)>\s*<([0-9A-Fa-f]*)>", block):
            codes[int(code, 16)] = bytes.fromhex(text).decode("utf-16-be")
    for block in re.findall(r"(?s)beginbfrange(.*?)endbfrange", cmap):
        ranges = re.findall(r"<([0-9A-Fa-f]+)>\s*<([0-9A-Fa-f]+)>\s*(<[0-9A-Fa-f]*>|\[[^\]]*\])", block)
        for low, high, target in ranges:
            if target.startswith("["):
                for offset, text in enumerate(re.findall(r"<([0-9A-Fa-f]*)>", target)):
                    codes[int(low, 16) + offset] = bytes.fromhex(text).decode("utf-16-be")
            else:
                first = bytes.fromhex(target[1:-1]).decode("utf-16-be")
                for offset in range(int(high, 16) - int(low, 16) + 1):
                    codes[int(low, 16) + offset] = first[:-1] + chr(ord(first[-1]) + offset)
    return codes


def _show(content: bytes, fonts: dict[bytes, dict[int, str]]) -> str:
    """The text a content stream shows: each text object (BT ... ET) a run of words, each one a line."""
    out, codes = [], {}
    shown = rb"/(\w+)\s+[\d.]+\s+Tf|\[((?:[^\]\\]|\\.)*)\]\s*TJ|<([0-9A-Fa-f]*)>\s*Tj|\bET\b"
    for token in re.finditer(shown, content):
        if token.group(1) is not None:
            codes = fonts.get(token.group(1), {})
        elif token.group(0) == b"ET":
            out.append("\n")
        else:
            for hexes in re.findall(rb"<([0-9A-Fa-f]*)>", token.group(2) or b"<" + token.group(3) + b">"):
                out.extend(codes.get(int(hexes[i:i + 4], 16), "") for i in range(0, len(hexes), 4))
    return "".join(out)


def _squeezed(text: str) -> str:
    """``text`` without its whitespace: what a page shows, wherever its lines broke (a wrapped name breaks after a
    hyphen without adding one)."""
    return "".join(text.split())


def _first_page_with(pages: list[str], text: str) -> int | None:
    return next((i for i, page in enumerate(pages) if _squeezed(text) in _squeezed(page)), None)
