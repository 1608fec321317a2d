"""Suite-wide: every test (and every server or CLI a test starts) uses a temporary workspace, never the
user's own folder (``~/.local/share/evalcore``). Tests that need their own set ``EVALCORE_WORKSPACE`` again."""

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
