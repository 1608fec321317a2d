"""Warm a freshly started dashboard before anyone opens it: wait for the server, then run the app once.

`scripts/start.sh` starts the server and runs this beside it. Streamlit's script health check runs the app's
default page (the Overview) in a session of its own, which imports the libraries and computes the numbers of the
data in view into the shared caches; in that run the server then visits every other page once
(`dashboard.warming`, on with EVALCORE_WARM_EVERY_PAGE=1, as start.sh sets it), so the first visitor of any page
waits for the page, not for a computation. Prints one line
when the dashboard is ready; exits 0 either way (a slow or failed warm-up only means a slower first visit).

    python scripts/warm_up.py http://127.0.0.1:8501
"""

from __future__ import annotations

import sys
import time
import urllib.error
import urllib.request

START_LIMIT_S = 120


def _get(url: str, timeout: float) -> int:
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:
            return response.status
    except urllib.error.HTTPError as error:
        return error.code
    except OSError:
        return 0


def main(base: str) -> int:
    start = time.monotonic()
    while _get(f"{base}/_stcore/health", timeout=2) != 200:
        if time.monotonic() - start > START_LIMIT_S:
            print(f"evalcore dashboard: no answer from {base} after {START_LIMIT_S} s; not warmed up", flush=True)
            return 0
        time.sleep(0.2)
    status = _get(f"{base}/_stcore/script-health-check", timeout=START_LIMIT_S)
    took = time.monotonic() - start
    if status == 200:
        print(f"evalcore dashboard: ready at {base} (every page computed in {took:.1f} s)", flush=True)
    else:
        print(f"evalcore dashboard: serving at {base}; the warm-up run did not finish (status {status}): the "
              "first page may take a few seconds", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "http://127.0.0.1:8501"))
