"""How long the first screen takes on a freshly started server with the sample data. Not a test: prints timings.

The meeting's first minute: someone runs ``bash scripts/start.sh`` and opens the link when it says the dashboard
is ready. Each figure on a server started for it (new process, empty caches, a new temporary workspace), in
Debian's Chromium; ``--no-warm-up`` starts `streamlit run` alone (no warm-up run) to show what the warm-up saves:

* **Overview, headline**: from the browser's navigation start to the Overview's headline (the best run, in words)
  on screen.
* **Overview, first chart**: from the browser's navigation start to the first Overview chart drawn.
* **Choose k after the Overview**: the Overview is open and drawn; from the click on "Choose k" in the navigation
  to its chart drawn (a person's usual path).
* **Choose k, cold**: a server whose first visitor opens ``/choose-k`` directly, navigation start to chart drawn.
* **k change on Choose k**: a click on the k control's "+" until the page has finished its run (median of 5).
* ``--every-page``: each page of the navigation opened directly as the first visit to a fresh server, from the
  browser's navigation start to the page's first run finished (its first screen complete), one server per page;
  and the median time from start to "ready" of those servers (the warm-up visits every page before it says ready,
  `dashboard.warming`, so that figure is the price of the fast first screens).

Each is measured ``--repeat`` times (default 3) and the median is printed with the server's resident memory after
the page, so a precomputation's memory cost shows beside the time it saves. Targets: the Overview's headline and
first chart within 2 s of "ready", Choose k opened directly within 2 s, k changes under 300 ms.

    .venv/bin/python benchmarks/bench_cold_start.py [--repeat 3] [--no-warm-up]
"""

from __future__ import annotations

import argparse
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = os.environ.get("EVALCORE_CHROMIUM", "/usr/bin/chromium")
CHART = '[data-testid="stVegaLiteChart"] canvas, [data-testid="stVegaLiteChart"] svg'
HEADLINE = ".st-key-headline h3"
IDLE = '[data-testid="stApp"][data-test-script-state="notRunning"]'
MAIN_TEXT = '[data-testid="stMainBlockContainer"] [data-testid="stMarkdownContainer"]'
"""The page has drawn something of its own (before its first run starts, the app is idle with nothing drawn)."""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class _Server:
    """The dashboard as a user starts it (`bash scripts/start.sh`), on a free port with its own empty workspace.

    Ready when the start script says so (after its warm-up run), which is when its output tells a person to open
    the page; ``--no-warm-up`` starts `streamlit run` alone and is ready when the server answers.
    """

    def __init__(self, warm_up: bool) -> None:
        self.workspace = tempfile.TemporaryDirectory(prefix="evalcore-cold-")
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        env = {**os.environ, "EVALCORE_WORKSPACE": self.workspace.name, "EVALCORE_PORT": str(self.port)}
        started = time.monotonic()
        if warm_up:
            command = ["bash", "scripts/start.sh"]
        else:
            command = [sys.executable, "-m", "streamlit", "run", "dashboard/app.py", "--server.address",
                       "127.0.0.1", "--server.port", str(self.port), "--server.headless", "true",
                       "--browser.gatherUsageStats=false"]
        self.process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.PIPE,
                                        stderr=subprocess.DEVNULL, text=True, start_new_session=True)
        if warm_up:
            for line in self.process.stdout:
                if "ready at" in line or "did not finish" in line or "no answer" in line:
                    break
        else:
            while True:
                try:
                    with urllib.request.urlopen(f"{self.url}/_stcore/health", timeout=2):
                        break
                except OSError:
                    time.sleep(0.1)
        self.start_s = time.monotonic() - started

    def rss_mib(self) -> float:
        import psutil  # the bench extra; only this figure needs it

        process = psutil.Process(self.process.pid)
        return sum(p.memory_info().rss for p in [process, *process.children(recursive=True)]) / 2**20

    def stop(self) -> None:
        os.killpg(self.process.pid, 15)
        self.process.wait(timeout=15)
        self.workspace.cleanup()


def _since_navigation(page) -> float:
    """Seconds from the page's navigation start to now, in the page's own clock."""
    return page.evaluate("performance.now()") / 1000


def _one_round(browser, warm_up: bool) -> dict[str, float]:
    figures = {}
    server = _Server(warm_up)
    figures["start until ready to open (s)"] = server.start_s
    try:
        page = browser.new_page(viewport={"width": 1400, "height": 900})
        page.goto(f"{server.url}/")
        page.wait_for_selector(HEADLINE, timeout=120_000)
        figures["Overview, headline (s)"] = _since_navigation(page)
        page.wait_for_selector(CHART, timeout=120_000)
        figures["Overview, first chart (s)"] = _since_navigation(page)
        page.wait_for_selector(IDLE, timeout=120_000)
        start = page.evaluate("performance.now()")
        page.get_by_role("link", name="Choose k").click()
        page.wait_for_function(
            "() => location.pathname.endsWith('/choose-k') && "
            f"document.querySelector('{CHART}') !== null", timeout=120_000)
        figures["Choose k after the Overview (s)"] = (page.evaluate("performance.now()") - start) / 1000
        page.wait_for_selector(IDLE, timeout=120_000)
        changes = []
        for _ in range(5):
            page.wait_for_timeout(300)
            start = page.evaluate("performance.now()")
            page.locator('[data-testid="stNumberInputStepUp"]').first.click()
            page.wait_for_timeout(50)
            page.wait_for_selector(IDLE, timeout=120_000)
            changes.append((page.evaluate("performance.now()") - start) / 1000)
        figures["k change on Choose k (s)"] = statistics.median(changes)
        figures["server memory after (MiB)"] = server.rss_mib()
        page.close()
    finally:
        server.stop()
    server = _Server(warm_up)
    try:
        page = browser.new_page(viewport={"width": 1400, "height": 900})
        page.goto(f"{server.url}/choose-k")
        page.wait_for_selector(CHART, timeout=120_000)
        figures["Choose k, cold (s)"] = _since_navigation(page)
        page.close()
    finally:
        server.stop()
    return figures


def _every_page(browser, warm_up: bool) -> dict[str, float]:
    """Each page's first screen on a server started for it: the pages of dashboard/app.py's navigation."""
    sys.path.insert(0, str(ROOT))
    from tests.dashboard.browser_helpers import app_pages  # the pages as the screenshot test reads them

    figures, ready = {}, []
    for title, path in app_pages():
        server = _Server(warm_up)
        ready.append(server.start_s)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 900})
            page.goto(f"{server.url}/{path}")
            page.wait_for_selector(MAIN_TEXT, state="attached", timeout=120_000)
            page.wait_for_selector(IDLE, timeout=120_000)
            figures[f"{title} (/{path})"] = _since_navigation(page)
            page.close()
        finally:
            server.stop()
    figures["start until ready to open (s), median of the servers"] = statistics.median(ready)
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--no-warm-up", action="store_true", help="streamlit run alone, without start.sh's warm-up")
    parser.add_argument("--every-page", action="store_true",
                        help="each page's first screen, each on a fresh server (median of --repeat)")
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright  # the test extra; imported after --help works without it

    print(f"load average before: {os.getloadavg()[0]:.2f} ({os.cpu_count()} cores)", flush=True)
    rounds = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"])
        for number in range(args.repeat):
            measure = _every_page if args.every_page else _one_round
            rounds.append(measure(browser, warm_up=not args.no_warm_up))
            print(f"round {number + 1}: " + ", ".join(f"{k} {v:.2f}" for k, v in rounds[-1].items()), flush=True)
        browser.close()
    print("\nmedian of", args.repeat, "fresh servers:")
    for name in rounds[0]:
        print(f"  {name:40} {statistics.median(r[name] for r in rounds):8.2f}")


if __name__ == "__main__":
    main()
