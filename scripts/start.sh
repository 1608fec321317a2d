#!/usr/bin/env bash
# The main job: the dashboard, with the sample data already loaded, at http://127.0.0.1:8501.
# EVALCORE_HOST=0.0.0.0 serves other machines on the network, and then sign-in must be configured (README, Team
# server): without it this script refuses to start, unless EVALCORE_OPEN_TO_NETWORK_WITHOUT_SIGN_IN=1.
# EVALCORE_PORT picks another port. Extra arguments go to `streamlit run` (e.g. --server.maxUploadSize 2048).
# Settings: .streamlit/config.toml. Right after the server starts, scripts/warm_up.py runs the app once, visiting
# every page (EVALCORE_WARM_EVERY_PAGE=1, dashboard/warming.py), so the first visitor's pages are ready.
set -euo pipefail
HOST="${EVALCORE_HOST:-127.0.0.1}"
PORT="${EVALCORE_PORT:-8501}"
# Before anything is installed or started: no sign-in, no network.
"${PYTHON:-python3}" "$(dirname "$0")/serving_check.py" "$HOST" "$@"
# The dashboard and the `ann` extra (faiss-cpu): the Index size page offers approximate indexes, so they work here.
source "$(dirname "$0")/_env.sh" dashboard,ann
echo "evalcore dashboard: starting on http://${HOST}:${PORT}  (sample data loaded; Ctrl+C stops it)"
EVALCORE_WARM_EVERY_PAGE=1 .venv/bin/python -m streamlit run dashboard/app.py --server.address "$HOST" --server.port "$PORT" \
  --server.headless true --browser.gatherUsageStats false "$@" &
SERVER=$!
trap 'kill "$SERVER" 2>/dev/null; wait "$SERVER" 2>/dev/null' INT TERM
WARM_HOST="$HOST"
case "$HOST" in 0.0.0.0 | "::" | "[::]") WARM_HOST=127.0.0.1 ;; esac
.venv/bin/python scripts/warm_up.py "http://${WARM_HOST}:${PORT}" || true
wait "$SERVER"
