"""The README's first command: `bash scripts/start.sh` starts the dashboard, warms it, says when it is ready, and
Ctrl+C stops the server with it (no server left behind holding the port)."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _listening(port: int) -> bool:
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) == 0


def test_start_script_says_ready_after_warming_up_and_stops_on_ctrl_c(tmp_path):
    port = _free_port()
    env = {**os.environ, "EVALCORE_PORT": str(port), "EVALCORE_WORKSPACE": str(tmp_path / "workspace")}
    process = subprocess.Popen(["bash", "scripts/start.sh"], cwd=ROOT, env=env, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True, start_new_session=True)
    lines = []
    try:
        deadline = time.monotonic() + 240
        for line in process.stdout:
            lines.append(line)
            if "ready at" in line or "did not finish" in line or time.monotonic() > deadline:
                break
        said = "".join(lines)
        assert f"ready at http://127.0.0.1:{port} (every page computed in" in said, said
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=10) as response:
            assert response.status == 200
        os.killpg(process.pid, signal.SIGINT)  # what Ctrl+C in the terminal sends
        process.wait(timeout=30)
        for _ in range(100):
            if not _listening(port):
                break
            time.sleep(0.1)
        assert not _listening(port), "the server kept running after Ctrl+C"
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=30)
