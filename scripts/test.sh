#!/usr/bin/env bash
# Run every test: installs Debian's Chromium when /usr/bin/chromium is missing (the browser tests drive it
# with Playwright; a missing browser fails them), sets up .venv with the test and dashboard extras, then
# pytest on one worker per core (pytest-xdist; each test file on one worker, its module fixtures built once). Extra
# arguments go to pytest (``-n 0``: one process).
set -euo pipefail
if [ ! -x /usr/bin/chromium ]; then
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
  $SUDO apt-get update
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y chromium
fi
source "$(dirname "$0")/_env.sh" test,dashboard
exec .venv/bin/python -m pytest -n auto --dist loadfile "$@"
