"""How the dashboard is served when started by hand: this machine only, protections on."""

from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_streamlit_run_alone_listens_on_this_machine_only():
    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text(encoding="utf-8"))
    assert config["server"]["address"] == "127.0.0.1"
    assert config["server"]["enableXsrfProtection"] is True
    assert config["server"]["enableCORS"] is True  # websockets only from the server's own origin
    assert config["browser"]["gatherUsageStats"] is False
