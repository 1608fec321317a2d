"""How fast the dashboard answers at scale. Not a test: prints (and saves) timings.

Two questions from the dashboard issue:

1. With 10,000 queries x 100 docs x 5 runs loaded, does changing k rerun a page in under 300 ms?
2. Does an upload of a 100 MB run file reach the first chart in under 5 s?

Usage::

    .venv/bin/python benchmarks/bench_dashboard.py             # in-process (AppTest) and in Chromium
    .venv/bin/python benchmarks/bench_dashboard.py --no-browser
    .venv/bin/python benchmarks/bench_dashboard.py --only-browser         # Chromium only (about 3 minutes)
    .venv/bin/python benchmarks/bench_dashboard.py --only-k --pages overview   # one page's k changes

The data are generated once into ``benchmarks/data/dashboard/`` (gitignored): labels for 10,000
queries (1-4 relevant docs each, a few judged non-relevant), five TREC runs of 10,000 x 100
docs (~38 MB each), a documents file with token counts, and one run of 10,000 x 142 docs with
long doc ids that weighs just over 100 MB.

Measured two ways:

* **AppTest** (``streamlit.testing.v1``): the page scripts with the app's caches, in this
  process, no browser. Shows where the time goes, page by page.
* **Browser** (Playwright driving Debian's Chromium against ``streamlit run`` on 127.0.0.1):
  what a person waits for, timed inside the page (`IN_PAGE`, in the page's own clock, so
  neither Playwright's round trips nor its polling are in the figures): from the input event
  (the timeStamp of the real mouse click on the k control's "+", or of the file input's change
  event) until the page shows the new numbers (the caption "k = 12 · n = ..."; after an upload,
  the file's line on the Data page, then the first chart drawn on the Overview), the server's
  "script finished" message for that run has arrived, stApp says "notRunning", and the next
  frame has been painted. No fixed waits inside that interval. "settled" also waits for the
  last change to the page's DOM (400 ms without one; a data grid's hidden accessible copy of its
  cells, refreshed ~200 ms after the grid is drawn, is left out). "As Playwright sees it" runs
  from the benchmark's call to Playwright to the same end. The same measurements on a bare
  one-widget Streamlit app are the floor: what Streamlit and the browser cost anyway.

"Changing k" means a k this session has not used yet (the + button: k, k+1, ...; the first of
six changes warms the browser up and is left out, the median of the other five is reported). The
Overview's first visit computes the k it shows, then its intervals and paired tests for every k
(`evalcore.analyses.curves`) in a background thread; the benchmark waits for those before changing k
there (a new k is then a lookup plus rebuilding the page) and reports how long they took. In
Chromium it also reports, per k change, the bytes the server sent over the websocket and the
browser's own main-thread work (tasks over 50 ms), to tell the server's time from the
browser's. Results go to stdout and to ``benchmarks/data/dashboard/results.json``. The upload
to the first chart is the upload until the Data page shows the run, plus the click on
"Overview" until its first chart is drawn (the time a person takes to click is not in it).

The dashboard stores every upload in its workspace: the benchmark points ``EVALCORE_WORKSPACE``
at a temporary folder (for this process and the servers it starts) and deletes it afterwards,
so it never writes into the user's real workspace.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "benchmarks" / "data" / "dashboard"
APP = ROOT / "dashboard" / "app.py"
sys.path.insert(0, str(ROOT))

N_QUERIES, DEPTH, N_RUNS, N_DOCS = 10_000, 100, 5, 200_000
BIG_DEPTH = 142
CHROMIUM = os.environ.get("EVALCORE_CHROMIUM", "/usr/bin/chromium")


# ----------------------------------------------------------------------------------------- data


def _write_trec(path: Path, queries: np.ndarray, docs: np.ndarray, tag: str, rng: np.random.Generator) -> None:
    n_q, depth = docs.shape
    scores = np.sort(rng.random((n_q, depth)), axis=1)[:, ::-1]
    with open(path, "w") as out:
        for i in range(n_q):
            q = queries[i]
            out.write("".join(f"{q} Q0 {d} {r} {s:.6f} {tag}\n"
                              for r, (d, s) in enumerate(zip(docs[i], scores[i]), start=1)))


def make_data() -> dict[str, Path]:
    OUT.mkdir(parents=True, exist_ok=True)
    paths = {"labels": OUT / "labels.tsv", "docs": OUT / "docs.csv",
             "runs": [OUT / f"run{r}.trec" for r in range(N_RUNS)], "big": OUT / "big_100mb.trec"}
    if all(p.exists() for p in [paths["labels"], paths["docs"], paths["big"], *paths["runs"]]):
        return paths
    print("generating benchmark data in", OUT, flush=True)
    rng = np.random.default_rng(20240611)
    queries = np.array([f"q{i:05d}" for i in range(N_QUERIES)], dtype=object)
    names = np.array([f"doc-{i:06d}" for i in range(N_DOCS)], dtype=object)
    n_rel = rng.choice([1, 2, 3, 4], size=N_QUERIES, p=[0.6, 0.25, 0.1, 0.05])
    relevant = rng.integers(0, N_DOCS, size=(N_QUERIES, 4))
    judged_no = rng.integers(0, N_DOCS, size=(N_QUERIES, 2))
    sources = np.array(["support_ticket", "search_log", "failed_search", "team_written"])
    rows = []
    for i in range(N_QUERIES):
        source = sources[i % 4]
        text = f"customer question number {i} about topic {i % 97}"
        rows += [(queries[i], names[relevant[i, j]], 1, text, source) for j in range(n_rel[i])]
        rows += [(queries[i], names[judged_no[i, j]], 0, text, source) for j in range(2)]
    pd.DataFrame(rows, columns=["query", "doc_id", "grade", "query_text", "source"]).drop_duplicates(
        ["query", "doc_id"]).to_csv(paths["labels"], sep="\t", index=False)
    pd.DataFrame({"doc_id": names, "tokens": rng.integers(60, 400, size=N_DOCS)}).to_csv(paths["docs"], index=False)

    def ranked(depth: int, skill: float) -> np.ndarray:
        docs = np.stack([rng.choice(N_DOCS, size=depth, replace=False) for _ in range(N_QUERIES)])
        for j in range(4):
            ranks = rng.geometric(skill, size=N_QUERIES) - 1
            put = (j < n_rel) & (ranks < depth)
            docs[np.flatnonzero(put), ranks[put]] = relevant[put, j]
        return docs

    for r, path in enumerate(paths["runs"]):
        _write_trec(path, queries, names[ranked(DEPTH, 0.12 + 0.03 * r)], f"model{r}", rng)
    long_names = np.array([f"kb/product-docs/section-{i // 1000:04d}/chunk-{i:06d}" for i in range(N_DOCS)],
                          dtype=object)
    _write_trec(paths["big"], queries, long_names[ranked(BIG_DEPTH, 0.1)], "big-model", rng)
    return paths


# ----------------------------------------------------------------------------------------- AppTest


def _run(at, what: str, timings: dict, key: str | None = None) -> float:
    start = time.perf_counter()
    at.run()
    elapsed = time.perf_counter() - start
    if at.exception:
        raise RuntimeError(f"{what}: {at.exception[0].value}")
    if key:
        timings.setdefault(key, []).append(elapsed)
    return elapsed


def apptest(paths: dict) -> dict:
    from streamlit.testing.v1 import AppTest

    results: dict = {}
    at = AppTest.from_file(str(APP), default_timeout=900)
    _run(at, "start", results)
    at.switch_page("views/data.py")
    _run(at, "data page", results)

    # 5 runs of 10,000 x 100, labels and documents, uploaded through the Data page.
    at.file_uploader(key="data.labels.0").set_value((paths["labels"].name, paths["labels"].read_bytes(), "text/plain"))
    at.file_uploader(key="data.documents.0").set_value((paths["docs"].name, paths["docs"].read_bytes(), "text/csv"))
    at.file_uploader(key="data.runs.0").set_value([(p.name, p.read_bytes(), "text/plain") for p in paths["runs"]])
    results["load 5 runs x 38 MB + labels + docs (s)"] = _run(at, "upload", results)

    for page, key in (("views/choose_k.py", "choose_k.k"), ("views/failures.py", "failures.k"),
                      ("views/overview.py", "overview.k")):
        at.switch_page(page)
        name = page.split("/")[1][:-3]
        results[f"{name}: first visit (s)"] = _run(at, page, results)
        if name == "overview":  # the intervals for every k are computed in the background: wait for them
            from dashboard import jobs  # the app's own module, as the AppTest loaded it

            start = time.perf_counter()
            for future in jobs.of_kind("curves"):
                future.result()
            results["overview: all-k intervals ready after the first visit (s)"] = time.perf_counter() - start
        new, seen = [], []
        for k in (11, 12, 13, 15, 20):
            at.number_input(key=key).set_value(k)
            new.append(_run(at, f"{page} k={k}", results))
        for k in (11, 12, 13, 15, 20):
            at.number_input(key=key).set_value(k)
            seen.append(_run(at, f"{page} k={k} again", results))
        results[f"{name}: change k, new k (ms, median of 5)"] = 1000 * statistics.median(new)
        results[f"{name}: change k, new k (ms, max)"] = 1000 * max(new)
        results[f"{name}: change k, k seen before (ms, median of 5)"] = 1000 * statistics.median(seen)

    # One 100 MB run file, fresh (never parsed in this process), against the same labels.
    big = AppTest.from_file(str(APP), default_timeout=900)
    _run(big, "start", results)
    big.switch_page("views/data.py")
    _run(big, "data page", results)
    big.file_uploader(key="data.labels.0").set_value((paths["labels"].name, paths["labels"].read_bytes(), "text/plain"))
    _run(big, "labels", results)
    data = paths["big"].read_bytes()
    big.file_uploader(key="data.runs.0").set_value([(paths["big"].name, data, "text/plain")])
    start = time.perf_counter()
    _run(big, "big upload", results)
    on_data = time.perf_counter() - start
    big.switch_page("views/overview.py")
    _run(big, "overview", results)
    total = time.perf_counter() - start
    if not big.get("vega_lite_chart"):
        raise RuntimeError("no chart on the Overview page after the 100 MB upload")
    results[f"100 MB run ({len(data) / 1e6:.0f} MB): Data page after upload (s)"] = on_data
    results["100 MB run: upload to first chart on Overview, in process (s)"] = total
    return results


def core_breakdown(paths: dict) -> dict:
    """The same 100 MB file through the core alone, for where the time goes."""
    import io

    import evalcore

    out = {}
    data = paths["big"].read_bytes()
    labels = evalcore.read_labels(paths["labels"])
    start = time.perf_counter()
    buffer = io.BytesIO(data)
    buffer.name = paths["big"].name
    run = evalcore.read_run(buffer)
    out["core: read_run of the 100 MB file (s)"] = time.perf_counter() - start
    start = time.perf_counter()
    evaluation = evalcore.evaluate_runs([run], labels, k=(1, 10))
    out["core: evaluate_runs k=1,10 (s)"] = time.perf_counter() - start
    start = time.perf_counter()
    evaluation.summary  # noqa: B018
    out["core: summary with 95% intervals (s)"] = time.perf_counter() - start
    from evalcore.analyses.curves import interval_curves

    deep = evalcore.evaluate_runs([run], labels, k=100)
    start = time.perf_counter()
    interval_curves(deep)
    out["core: interval_curves, recall@1..100 and mrr with 95% intervals (s)"] = time.perf_counter() - start
    return out




def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


TRIVIAL_APP = """import streamlit as st
k = st.number_input("k", 1, 100, 10)
st.subheader(f"At k = {k}")
upload = st.file_uploader("file")
if upload is not None:
    st.write(f"received {len(upload.getvalue())} bytes")
"""


IN_PAGE = r"""
(() => {
  // Timings taken inside the page, in the page's own clock (performance.now()), so neither Playwright's round
  // trips nor its polling land in the figures.
  const perf = window.__perf = {busy: 0, armed: false, input: null, finishedMsg: null, received: 0};
  // The browser's own work: main-thread tasks over 50 ms (parsing messages, rendering), summed.
  new PerformanceObserver(list => { for (const e of list.getEntries()) perf.busy += e.duration; })
    .observe({type: 'longtask', buffered: false});
  // The user's input: the first click or file change after `arm`; its timeStamp is when the browser received it.
  for (const type of ['click', 'change']) {
    window.addEventListener(type, e => {
      if (perf.armed) { perf.input = e.timeStamp; perf.armed = false; }
    }, true);
  }
  // The server's "script finished" message (ForwardMsg field 6, a varint) tells that the run the input started is
  // over, even when the run is so quick that stApp's data-test-script-state never shows "running" in the DOM.
  const finishedField = buffer => {
    const bytes = new Uint8Array(buffer);
    let i = 0;
    const varint = () => { let v = 0, shift = 0, b; do { b = bytes[i++]; v += (b & 0x7f) * 2 ** shift; shift += 7; }
                           while (b & 0x80 && i < bytes.length); return v; };
    while (i < bytes.length) {
      const tag = varint(), field = Math.floor(tag / 8), wire = tag & 7;
      if (wire === 0) { const v = varint(); if (field === 6) return v; }
      else if (wire === 2) { const n = varint(); i += n; }  // (not `i += varint()`: i would be read first)
      else if (wire === 1) { i += 8; } else if (wire === 5) { i += 4; } else { return null; }
    }
    return null;
  };
  const Native = window.WebSocket;
  window.WebSocket = class extends Native {
    constructor(...args) {
      super(...args);
      const send = this.send.bind(this);
      this.send = data => {  // the first message to the server after the input: the rerun request
        // the last one before the run's end is the rerun request (an upload first asks for upload URLs)
        if (perf.input !== null && perf.finishedMsg === null) perf.sentMsg = performance.now();
        return send(data);
      };
      this.addEventListener('message', e => {
        if (!(e.data instanceof ArrayBuffer)) return;
        perf.received += e.data.byteLength;
        if (perf.input !== null && perf.sentMsg !== null && perf.firstMsg === null) perf.firstMsg = performance.now();
        if (perf.firstMsg !== null && perf.sentMsg > perf.firstMsg) perf.firstMsg = performance.now();
        const status = finishedField(e.data);
        // 2 = finished early because another run replaced it: not the end of this action
        if (status !== null && status !== 2 && perf.input !== null) perf.finishedMsg = performance.now();
      });
    }
  };
  const main = () => document.querySelector('[data-testid="stMain"]') || document.body;
  // A data grid draws on a canvas at once and refreshes the hidden accessible copy of its cells ~200 ms later:
  // changes to that copy are not something anyone sees, so "settled" leaves them out.
  const inGridText = node => { const e = node.nodeType === 1 ? node : node.parentElement;
                               return !!(e && e.closest('[data-testid="data-grid-canvas"], .dvn-scroller table')); };
  // Arm before the input. `done` resolves once the page shows `text` (or an element matching `selector`), the
  // server has said the script run started by the input finished, and stApp says "notRunning"; "painted" is after
  // the next frame. Then it waits `quietMs` without any DOM change to also report the last change ("settled").
  perf.arm = ({text = null, selector = null, quietMs = 400, maxMs = 120000}) => {
    perf.armed = true; perf.input = null; perf.finishedMsg = null; perf.sentMsg = null; perf.firstMsg = null;
    const busyStart = perf.busy, receivedStart = perf.received;
    perf.done = new Promise(resolve => {
      const app = document.querySelector('[data-testid="stApp"]');
      const shows = () => (text === null || main().textContent.includes(text))
        && (selector === null || document.querySelector(selector) !== null);
      const out = {};
      let quiet = null, poll = null;
      const finish = () => {
        observer.disconnect(); clearInterval(poll);
        const rel = t => (t === undefined || t === null ? null : t - perf.input);
        resolve({shown: rel(out.shown), finished: rel(out.finished), painted: rel(out.painted),
                 sent: rel(perf.sentMsg), first: rel(perf.firstMsg), message: rel(perf.finishedMsg), settled: rel(Math.max(out.painted || 0, out.last || 0)),
                 busy: perf.busy - busyStart, received: perf.received - receivedStart,
                 paintedEpoch: out.painted === undefined ? null : performance.timeOrigin + out.painted});
      };
      const check = records => {
        const now = performance.now();
        if (perf.input === null) return;  // changes before the input are not this action's
        if (out.shown === undefined && shows()) out.shown = now;
        if (out.finished === undefined) {
          if (perf.finishedMsg !== null && app.getAttribute('data-test-script-state') === 'notRunning' && shows()) {
            out.finished = now;
            // the frame that puts it on screen: the next animation frame, then the task after its paint
            requestAnimationFrame(() => setTimeout(() => {
              out.painted = performance.now();
              quiet = setTimeout(finish, quietMs);
            }, 0));
          }
        } else if (records && records.some(r => !inGridText(r.target))) {
          out.last = now;
          if (quiet !== null) { clearTimeout(quiet); quiet = setTimeout(finish, quietMs); }
        }
      };
      const observer = new MutationObserver(check);
      observer.observe(document.body, {subtree: true, childList: true, attributes: true, characterData: true});
      // the finished message can come after the last DOM change: look again on every frame until then
      const frame = () => { if (out.finished === undefined) { check(null); requestAnimationFrame(frame); } };
      requestAnimationFrame(frame);
      poll = setInterval(() => check(null), 50);  // frames pause in background tabs; harmless otherwise
      setTimeout(finish, maxMs);
    });
  };
})();
"""
"""Installed in every page the benchmark opens (`page.add_init_script`): see `_in_page`."""

STATE = '[data-testid="stApp"][data-test-script-state="notRunning"]'


def _launch(p):
    return p.chromium.launch(executable_path=CHROMIUM, args=[
        "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", "--no-first-run"])


def _in_page(page, act, *, text: str | None = None, selector: str | None = None) -> dict:
    """Time one user action inside the page: from the input event to the page showing ``text`` (or ``selector``)
    with its script run finished, painted (ms). Also ``driver``: from the benchmark's call to Playwright (its
    round trips included) to the same end, and the browser's long-task time."""
    page.evaluate("args => window.__perf.arm(args)", {"text": text, "selector": selector})
    start = time.time()
    act()
    out = page.evaluate("window.__perf.done")
    # Playwright's side: from the benchmark's call (its round trips to the browser included) to the same end.
    out["driver"] = out["paintedEpoch"] - 1000 * start if out["paintedEpoch"] is not None else None
    if out["finished"] is None:
        raise RuntimeError(f"the page did not finish after the action (waiting for {text or selector}): {out}")
    return out


def _click(page, locator) -> None:
    """A real mouse click (pressed and released by the browser's input pipeline) at the middle of ``locator``."""
    box = locator.bounding_box()
    page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)


def _idle(page) -> None:
    page.wait_for_selector(STATE)


def _median(rows: list[dict], field: str) -> float:
    return statistics.median(r[field] for r in rows)


def _k_changes(page, caption, n: int = 6) -> list[dict]:
    """``n`` k changes with the number input's + button (a real click), each a k this page has not shown."""
    plus = page.locator('[data-testid="stNumberInputStepUp"]').first
    plus.scroll_into_view_if_needed()
    k = int(page.locator('[data-testid="stNumberInputField"]').first.input_value())
    rows = []
    for _ in range(n):
        k += 1
        rows.append(_in_page(page, lambda: _click(page, plus), text=caption(k)))
        _idle(page)
    return rows[1:]  # the first warms up the browser's code paths


def streamlit_floor(big: Path) -> dict:
    """The same measurements on a two-widget Streamlit app: what Streamlit and the browser cost anyway."""
    from playwright.sync_api import sync_playwright

    app = OUT / "trivial_app.py"
    app.write_text(TRIVIAL_APP)
    server, url = _serve(app)
    try:
        with sync_playwright() as p:
            chromium = _launch(p)
            page = chromium.new_page()
            page.set_default_timeout(300_000)
            page.add_init_script(IN_PAGE)
            page.goto(url)
            _idle(page)
            rows = _k_changes(page, lambda k: f"At k = {k}")
            upload = _in_page(page, lambda: page.locator('[data-testid="stFileUploader"] input[type="file"]')
                              .set_input_files(str(big)), text=f"received {big.stat().st_size} bytes")
            chromium.close()
    finally:
        server.terminate()
        server.wait(timeout=30)
    return {"browser: bare app: change k, in page, input to finished and painted (ms, median of 5)":
            _median(rows, "painted"),
            "browser: bare app: change k, server: rerun request sent to 'script finished' received (ms, median of 5)":
            statistics.median(r["message"] - r["sent"] for r in rows),
            "browser: bare app: change k, in page, until no DOM change (ms, median of 5)": _median(rows, "settled"),
            "browser: bare app: change k, as Playwright sees it (ms, median of 5)": _median(rows, "driver"),
            "browser: bare app: change k, browser main thread in tasks over 50 ms (ms, median of 5)":
            _median(rows, "busy"),
            "browser: bare app: upload the 100 MB file until its size shows (s)": upload["painted"] / 1000}


def _serve(app: Path) -> tuple[subprocess.Popen, str]:
    port = _free_port()
    server = subprocess.Popen([sys.executable, "-m", "streamlit", "run", str(app), "--server.port", str(port),
                               "--server.address", "127.0.0.1", "--server.headless", "true",
                               "--browser.gatherUsageStats=false"], cwd=ROOT, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    for _ in range(300):
        try:
            urllib.request.urlopen(f"{url}/_stcore/health", timeout=2)
            break
        except OSError:
            time.sleep(0.2)
    return server, url


def _load_labels(page, url: str, paths: dict):
    """Open the Data page and upload the labels; returns the page's file inputs (labels, runs, documents)."""
    page.goto(f"{url}/data")
    _idle(page)
    inputs = page.locator('[data-testid="stFileUploader"] input[type="file"]')
    inputs.nth(0).set_input_files(str(paths["labels"]))
    page.get_by_text("Labels: labels.tsv · 10,000 queries").wait_for()
    _idle(page)
    return inputs


def _load_files(page, url: str, paths: dict) -> None:
    inputs = _load_labels(page, url, paths)
    inputs.nth(2).set_input_files(str(paths["docs"]))
    page.get_by_text("Documents: docs.csv").wait_for()
    _idle(page)
    inputs.nth(1).set_input_files([str(p) for p in paths["runs"]])
    page.get_by_text("Runs: run0, run1, run2, run3, run4", exact=True).wait_for()
    _idle(page)


PAGES = ("choose_k", "failures", "overview")
LABELS = {"choose_k": "Choose k", "failures": "Failures", "overview": "Overview"}
CHART = '[data-testid="stVegaLiteChart"] canvas, [data-testid="stVegaLiteChart"] svg'


def browser(paths: dict, *, upload: bool = True, floor: bool = True, pages: tuple[str, ...] = PAGES) -> dict:
    from playwright.sync_api import sync_playwright

    results: dict = streamlit_floor(paths["big"]) if floor else {}
    # A workspace of its own (inside the temporary one): the in-process part has stored these files already.
    os.environ["EVALCORE_WORKSPACE"] = tempfile.mkdtemp(prefix="browser-", dir=os.environ.get("EVALCORE_WORKSPACE"))
    server, url = _serve(APP)
    sent_log: list[int] = []  # sizes of the websocket messages the server sent (the pages' deltas)
    try:
        with sync_playwright() as p:
            chromium = _launch(p)
            page = chromium.new_page(viewport={"width": 1500, "height": 1400})
            page.set_default_timeout(300_000)
            page.add_init_script(IN_PAGE)
            page.on("websocket", lambda ws: ws.on("framereceived", lambda payload: sent_log.append(len(payload))))

            if upload:
                inputs = _load_labels(page, url, paths)
                on_data = _in_page(page, lambda: inputs.nth(1).set_input_files(str(paths["big"])),
                                   text=f"Runs: {paths['big'].stem}")
                _idle(page)
                link = page.get_by_role("link", name="Overview")
                to_chart = _in_page(page, lambda: _click(page, link), selector=CHART)
                _idle(page)
                results["browser: 100 MB upload until the Data page shows it, in page (s)"] = on_data["painted"] / 1e3
                results["browser: 100 MB upload: input until the browser asks for the rerun (s; the HTTP transfer)"] = \
                    on_data["sent"] / 1e3
                results["browser: 100 MB upload: rerun asked until 'script finished' received (s; the server)"] = \
                    (on_data["message"] - on_data["sent"]) / 1e3
                results["browser: then click Overview until its first chart is drawn, in page (s)"] = \
                    to_chart["shown"] / 1e3
                results["browser: then click Overview until its run has finished, in page (s)"] = \
                    to_chart["painted"] / 1e3
                results["browser: 100 MB upload to first chart on Overview, in page, without the click's wait (s)"] = \
                    (on_data["painted"] + to_chart["shown"]) / 1e3
                results["browser: 100 MB upload to first chart, as Playwright sees it (s)"] = \
                    (on_data["driver"] + to_chart["driver"]) / 1e3

            _load_files(page, url, paths)
            for name in pages:
                label = LABELS[name]
                print(f"browser: {name}", file=sys.stderr, flush=True)
                _click(page, page.get_by_role("link", name=label))
                page.get_by_role("heading", name=label).wait_for()
                _idle(page)
                start = time.perf_counter()
                while name == "overview" and page.get_by_text("being computed in the background").count():
                    page.wait_for_timeout(1000)  # the intervals for every k: wait for them, then reload
                    page.reload()
                    page.get_by_role("heading", name=label).wait_for()
                    _idle(page)
                if name == "overview":
                    results["browser: overview: all-k intervals ready after the first visit (s, ~1 s steps)"] = \
                        time.perf_counter() - start
                if os.environ.get("BENCH_SHOTS"):
                    page.screenshot(path=str(OUT / f"bench_{name}.png"))
                before = len(sent_log)
                rows = _k_changes(page, lambda k: f"k = {k} · n = ")
                sent = (sum(sent_log[before:]) / len(rows)) / 1e3  # the first change is in the sum too: a mean
                results[f"browser: {name}: change k, in page, input to finished and painted (ms, median of 5)"] = \
                    _median(rows, "painted")
                results[f"browser: {name}: change k, in page, input to new k shown (ms, median of 5)"] = \
                    _median(rows, "shown")
                results[f"browser: {name}: change k, in page, until no DOM change (ms, median of 5)"] = \
                    _median(rows, "settled")
                results[f"browser: {name}: change k, server: rerun request sent to 'script finished' received (ms, "
                        "median of 5)"] = statistics.median(r["message"] - r["sent"] for r in rows)
                results[f"browser: {name}: change k, as Playwright sees it (ms, median of 5)"] = _median(rows, "driver")
                results[f"browser: {name}: change k, in page, max of 5 (ms)"] = max(r["painted"] for r in rows)
                results[f"browser: {name}: change k, browser main thread in tasks over 50 ms (ms, median of 5)"] = \
                    _median(rows, "busy")
                results[f"browser: {name}: change k, bytes the server sent (kB, mean)"] = sent
                print(f"  in page {_median(rows, 'painted'):.0f} ms (settled {_median(rows, 'settled'):.0f}, "
                      f"Playwright {_median(rows, 'driver'):.0f}), {sent:.0f} kB, busy {_median(rows, 'busy'):.0f} ms",
                      file=sys.stderr, flush=True)
            chromium.close()
    finally:
        server.terminate()
        server.wait(timeout=30)
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--no-browser", action="store_true", help="skip the Chromium measurements")
    parser.add_argument("--only-browser", action="store_true", help="only the Chromium measurements")
    parser.add_argument("--only-k", action="store_true",
                        help="only the Chromium k changes (no upload, no bare-app floor): for profiling the pages")
    parser.add_argument("--pages", default=",".join(PAGES), help="pages whose k changes are timed in Chromium")
    parser.add_argument("--cold-start", action="store_true",
                        help="only the first screen of a freshly started server on the sample data "
                             "(benchmarks/bench_cold_start.py, 3 fresh servers)")
    args = parser.parse_args()
    if args.cold_start:
        sys.argv = [sys.argv[0]]
        import bench_cold_start  # beside this file: `python benchmarks/bench_dashboard.py` puts it on the path

        bench_cold_start.main()
        return
    paths = make_data()
    with tempfile.TemporaryDirectory(prefix="evalcore-bench-workspace-") as workspace:
        os.environ["EVALCORE_WORKSPACE"] = workspace  # read by the app here and by the servers started below
        _measure(args, paths)


def _measure(args: argparse.Namespace, paths: dict) -> None:
    pages = tuple(p for p in args.pages.split(",") if p)
    if args.only_browser or args.only_k:
        print(json.dumps(browser(paths, upload=not args.only_k, floor=not args.only_k, pages=pages), indent=2))
        return
    sizes = {p.name: f"{p.stat().st_size / 1e6:.1f} MB" for p in [paths["big"], paths["runs"][0], paths["labels"]]}
    results = {"machine": f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}",
               "load average at start": " ".join(f"{x:.2f}" for x in os.getloadavg()),
               "files": sizes}
    results.update(core_breakdown(paths))
    timings = apptest(paths)
    results.update({k: v for k, v in timings.items() if not isinstance(v, list)})
    if not args.no_browser:
        results.update(browser(paths, pages=pages))
    results["load average at end"] = " ".join(f"{x:.2f}" for x in os.getloadavg())
    width = max(len(k) for k in results)
    for key, value in results.items():
        shown = f"{value:,.0f}" if isinstance(value, float) and "(ms" in key else (
            f"{value:.2f}" if isinstance(value, float) else value)
        print(f"{key.ljust(width)}  {shown}")
    (OUT / "results.json").write_text(json.dumps(results, indent=2))
    print(f"\nsaved to {OUT / 'results.json'}")


if __name__ == "__main__":
    main()
