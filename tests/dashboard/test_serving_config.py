"""How the dashboard is served when started by hand: this machine only, protections on."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_streamlit_run_alone_listens_on_this_machine_only():
    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text(encoding="utf-8"))
    assert config["server"]["address"] == "127.0.0.1"
    assert config["server"]["enableXsrfProtection"] is True
    assert config["server"]["enableCORS"] is True  # websockets only from the server's own origin
    assert config["browser"]["gatherUsageStats"] is False


def test_the_start_command_installs_what_every_page_offers():
    """The Index size page offers approximate indexes (faiss-cpu, the ``ann`` extra): `scripts/start.sh` installs it
    with the dashboard, so the README's own start command does not leave that tab saying faiss is missing."""
    start = (ROOT / "scripts" / "start.sh").read_text(encoding="utf-8")
    [extras] = re.findall(r'^source "\$\(dirname "\$0"\)/_env\.sh" (\S+)$', start, flags=re.MULTILINE)
    assert {"dashboard", "ann"} <= set(extras.split(","))
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert any(need.startswith("faiss-cpu") for need in project["optional-dependencies"]["ann"])
    assert 'pip install --quiet -e ".[$1]"' in (ROOT / "scripts" / "_env.sh").read_text(encoding="utf-8")
