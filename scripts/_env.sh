# Shared setup for the README's commands: a virtual environment in .venv with the project installed.
# Sourced, not run, with the extras to install (start.sh: dashboard,ann; test.sh: test,dashboard). Re-running is
# cheap: pip only installs what is missing or changed (a stamp per set of extras, renewed when pyproject.toml
# changes).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
PYTHON="${PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
  "$PYTHON" -m venv .venv
fi
stamp=".venv/.evalcore-installed-$1"
if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ]; then
  .venv/bin/python -m pip install --quiet --upgrade pip
  .venv/bin/python -m pip install --quiet -e ".[$1]"
  touch "$stamp"
fi
