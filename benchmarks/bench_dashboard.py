"""How fast the dashboard answers at scale. Not a test: prints (and saves) timings.

Two questions from the dashboard issue:

1. With 10,000 queries x 100 docs x 5 runs loaded, does changing k rerun a page in under 300 ms?
2. Does an upload of a 100 MB run file reach the first chart in under 5 s?

Usage::

    .venv/bin/python benchmarks/bench_dashboard.py             # in-process (AppTest) and in Chromium
    .venv/bin/python benchmarks/bench_dashboard.py --no-browser

The data are generated once into ``benchmarks/data/dashboard/`` (gitignored): labels for 10,000
queries (1-4 relevant docs each, a few judged non-relevant), five TREC runs of 10,000 x 100
docs (~38 MB each), a documents file with token counts, and one run of 10,000 x 142 docs with
long doc ids that weighs just over 100 MB.

Measured two ways:

* **AppTest** (``streamlit.testing.v1``): the page scripts with the app's caches, in this
  process, no browser. Shows where the time goes, page by page.
* **Browser** (Playwright driving Debian's Chromium against ``streamlit run`` on 127.0.0.1):
  what a person waits for, from the action to the app's "not running" state with the chart
  drawn; includes the upload over HTTP, the websocket and the browser's rendering.

"Changing k" means a k this session has not used yet and, separately, one it has (served from
the page caches). The Overview's first visit computes the k it shows, then its intervals and
paired tests for every k (`evalcore.curves`) in a background thread; the benchmark waits for
those before changing k there (a new k is then a lookup plus rebuilding the page) and reports how
long they took. In Chromium it also reports, per k change, the bytes the server sent over the
websocket and the browser's own main-thread work (tasks over 50 ms), to tell the server's time
from the browser's. Results go to stdout and to ``benchmarks/data/dashboard/results.json``.

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
            from dashboard import data as app_data

            start = time.perf_counter()
            for future in list(app_data._CURVES.values()):
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
    from evalcore.curves import interval_curves

    deep = evalcore.evaluate_runs([run], labels, k=100)
    start = time.perf_counter()
    interval_curves(deep)
    out["core: interval_curves, recall@1..100 and mrr with 95% intervals (s)"] = time.perf_counter() - start
    return out


# ----------------------------------------------------------------------------------------- browser


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


BUSY_SCRIPT = ("window.__busy = 0; new PerformanceObserver(list => { for (const e of list.getEntries()) "
               "window.__busy += e.duration; }).observe({type: 'longtask'});")
"""The browser's own work: main-thread tasks over 50 ms (parsing messages, rendering), summed in ``__busy``."""


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


def streamlit_floor(big: Path) -> dict:
    """The same measurements on a two-widget Streamlit app: what Streamlit and the browser cost anyway."""
    from playwright.sync_api import sync_playwright

    app = OUT / "trivial_app.py"
    app.write_text(TRIVIAL_APP)
    server, url = _serve(app)
    try:
        with sync_playwright() as p:
            chromium = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu",
                                                                         "--disable-background-networking"])
            page = chromium.new_page()
            page.add_init_script(BUSY_SCRIPT)
            page.goto(url)
            page.wait_for_selector('[data-testid="stApp"][data-test-script-state="notRunning"]')
            plus = page.locator('[data-testid="stNumberInputStepUp"]').first
            times, busy = [], []
            for k in range(11, 17):
                busy_before = page.evaluate("window.__busy")
                start = time.perf_counter()
                plus.click()
                page.get_by_role("heading", name=f"At k = {k}").wait_for()
                page.wait_for_timeout(50)  # as `idle` does for the dashboard's pages
                page.wait_for_selector('[data-testid="stApp"][data-test-script-state="notRunning"]')
                times.append(time.perf_counter() - start)
                busy.append(page.evaluate("window.__busy") - busy_before)
            start = time.perf_counter()
            page.locator('[data-testid="stFileUploader"] input[type="file"]').set_input_files(str(big))
            page.get_by_text(f"received {big.stat().st_size} bytes").wait_for(timeout=300_000)
            upload = time.perf_counter() - start
            chromium.close()
    finally:
        server.terminate()
        server.wait(timeout=30)
    return {"browser: a bare Streamlit app, change k (ms, median of 5; Streamlit's own floor)":
            1000 * statistics.median(times[1:]),
            "browser: a bare Streamlit app, change k, browser main thread in tasks over 50 ms (ms, median of 5)":
            statistics.median(busy[1:]),
            "browser: a bare Streamlit app, upload the 100 MB file and show its size (s; Streamlit's floor)": upload}


def browser(paths: dict, *, upload: bool = True, floor: bool = True) -> dict:
    from playwright.sync_api import sync_playwright

    results: dict = streamlit_floor(paths["big"]) if floor else {}
    # A workspace of its own (inside the temporary one): the in-process part has stored these files already.
    os.environ["EVALCORE_WORKSPACE"] = tempfile.mkdtemp(prefix="browser-", dir=os.environ.get("EVALCORE_WORKSPACE"))
    port = _free_port()
    server = subprocess.Popen([sys.executable, "-m", "streamlit", "run", str(APP), "--server.port", str(port),
                               "--server.address", "127.0.0.1", "--server.headless", "true",
                               "--browser.gatherUsageStats=false"], cwd=ROOT, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(300):
            try:
                urllib.request.urlopen(f"{url}/_stcore/health", timeout=2)
                break
            except OSError:
                time.sleep(0.2)
        with sync_playwright() as p:
            chromium = p.chromium.launch(executable_path=CHROMIUM, args=[
                "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                "--disable-sync", "--no-first-run"])
            page = chromium.new_page(viewport={"width": 1500, "height": 1400})
            page.set_default_timeout(300_000)
            # The browser's own work: main-thread tasks over 50 ms (parsing messages, rendering), summed.
            page.add_init_script(BUSY_SCRIPT)
            received: list[int] = []  # sizes of the websocket messages the server sent (the pages' deltas)
            page.on("websocket", lambda ws: ws.on("framereceived", lambda payload: received.append(len(payload))))

            def idle() -> None:
                page.wait_for_timeout(50)
                page.wait_for_selector('[data-testid="stApp"][data-test-script-state="notRunning"]')

            if upload:
                page.goto(f"{url}/data")
                idle()
                inputs = page.locator('[data-testid="stFileUploader"] input[type="file"]')
                inputs.nth(0).set_input_files(str(paths["labels"]))
                page.get_by_text("Labels: labels.tsv · 10,000 queries").wait_for()
                idle()
                start = time.perf_counter()
                inputs.nth(1).set_input_files(str(paths["big"]))
                page.get_by_text(f"Runs: {paths['big'].stem}", exact=True).wait_for()
                idle()
                on_data = time.perf_counter() - start
                page.get_by_role("link", name="Overview").click()
                page.locator('[data-testid="stVegaLiteChart"] canvas, '
                             '[data-testid="stVegaLiteChart"] svg').first.wait_for()
                idle()
                results["browser: 100 MB upload until the Data page shows it (s)"] = on_data
                results["browser: 100 MB upload to first chart on Overview (s)"] = time.perf_counter() - start

            # 5 runs loaded: change k on each page with the number input's + button.
            page.goto(f"{url}/data")
            idle()
            inputs = page.locator('[data-testid="stFileUploader"] input[type="file"]')
            inputs.nth(0).set_input_files(str(paths["labels"]))
            page.get_by_text("Labels: labels.tsv · 10,000 queries").wait_for()
            idle()
            inputs.nth(2).set_input_files(str(paths["docs"]))
            idle()
            inputs.nth(1).set_input_files([str(p) for p in paths["runs"]])
            page.get_by_text("Runs: run0, run1, run2, run3, run4", exact=True).wait_for()
            idle()
            # What changes on screen when k moves: each page's caption "k = 12 · n = 10,000 queries · ...".
            def shows_k(k: int):
                return page.get_by_text(f"k = {k} · n = ").first

            for name, label in (("choose_k", "Choose k"), ("failures", "Failures"), ("overview", "Overview")):
                print(f"browser: {name}", file=sys.stderr, flush=True)
                page.get_by_role("link", name=label).click()
                idle()
                page.get_by_role("heading", name=label).wait_for()
                idle()
                start = time.perf_counter()
                while name == "overview" and page.get_by_text("being computed in the background").count():
                    page.wait_for_timeout(1000)  # the intervals for every k: wait for them, then reload
                    page.reload()
                    page.get_by_role("heading", name=label).wait_for()
                    idle()
                    if os.environ.get("BENCH_SHOTS"):
                        page.screenshot(path=str(OUT / "bench_overview_waiting.png"))
                if name == "overview":
                    results["browser: overview: all-k intervals ready after the first visit (s, ~1 s steps)"] = \
                        time.perf_counter() - start
                if os.environ.get("BENCH_SHOTS"):
                    page.screenshot(path=str(OUT / f"bench_{name}.png"))
                plus = page.locator('[data-testid="stNumberInputStepUp"]').first
                k = int(page.locator('[data-testid="stNumberInputField"]').first.input_value())
                shown, done, sent, busy = [], [], [], []
                for _ in range(5):
                    k += 1
                    before = len(received)
                    busy_before = page.evaluate("window.__busy")
                    start = time.perf_counter()
                    plus.click()
                    shows_k(k).wait_for()
                    shown.append(time.perf_counter() - start)
                    idle()
                    done.append(time.perf_counter() - start)
                    sent.append(sum(received[before:]))
                    busy.append(page.evaluate("window.__busy") - busy_before)
                results[f"browser: {name}: change k, browser main thread in tasks over 50 ms (ms, median of 5)"] = \
                    statistics.median(busy)
                results[f"browser: {name}: change k, bytes the server sent (kB, median of 5)"] = \
                    statistics.median(sent) / 1e3
                results[f"browser: {name}: change k, new k, until the new numbers show (ms, median of 5)"] = \
                    1000 * statistics.median(shown)
                results[f"browser: {name}: change k, new k, until the run has finished (ms, median of 5)"] = \
                    1000 * statistics.median(done)
                results[f"browser: {name}: change k, new k, until finished (ms, max)"] = 1000 * max(done)
                print(f"  until finished {1000 * statistics.median(done):.0f} ms, {statistics.median(sent) / 1e3:.0f} kB, "
                      f"browser busy {statistics.median(busy):.0f} ms", file=sys.stderr, flush=True)
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
    args = parser.parse_args()
    paths = make_data()
    with tempfile.TemporaryDirectory(prefix="evalcore-bench-workspace-") as workspace:
        os.environ["EVALCORE_WORKSPACE"] = workspace  # read by the app here and by the servers started below
        _measure(args, paths)


def _measure(args: argparse.Namespace, paths: dict) -> None:
    if args.only_browser or args.only_k:
        print(json.dumps(browser(paths, upload=not args.only_k, floor=not args.only_k), indent=2))
        return
    sizes = {p.name: f"{p.stat().st_size / 1e6:.1f} MB" for p in [paths["big"], paths["runs"][0], paths["labels"]]}
    results = {"machine": f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}",
               "files": sizes}
    results.update(core_breakdown(paths))
    timings = apptest(paths)
    results.update({k: v for k, v in timings.items() if not isinstance(v, list)})
    if not args.no_browser:
        results.update(browser(paths))
    width = max(len(k) for k in results)
    for key, value in results.items():
        shown = f"{value:,.0f}" if isinstance(value, float) and "(ms" in key else (
            f"{value:.2f}" if isinstance(value, float) else value)
        print(f"{key.ljust(width)}  {shown}")
    (OUT / "results.json").write_text(json.dumps(results, indent=2))
    print(f"\nsaved to {OUT / 'results.json'}")


if __name__ == "__main__":
    main()
