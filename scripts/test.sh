#!/usr/bin/env bash
# Run every test: sets up .venv with the test extras, then pytest. Extra arguments go to pytest.
source "$(dirname "$0")/_env.sh" test
exec .venv/bin/python -m pytest "$@"
