"""Suite-wide: every test (and every server or CLI a test starts) uses a temporary workspace, never the
user's own folder (``~/.local/share/evalcore``). Tests that need their own set ``EVALCORE_WORKSPACE`` again.

The README's test command runs the suite on one pytest-xdist worker per core (``--dist loadfile``): each test file
stays on one worker, so its module fixtures (a computed sample, a server and its browser) are built once; each
worker has a temporary workspace of its own."""

from __future__ import annotations

import os

import pytest

from evalcore.store.workspace import ENV_VAR


@pytest.fixture(scope="session", autouse=True)
def temporary_workspace(tmp_path_factory):
    before = os.environ.get(ENV_VAR)
    os.environ[ENV_VAR] = str(tmp_path_factory.mktemp("workspace"))
    yield
    if before is None:
        os.environ.pop(ENV_VAR, None)
    else:
        os.environ[ENV_VAR] = before
