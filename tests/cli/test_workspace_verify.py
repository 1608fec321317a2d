"""``evalcore workspace verify``: checks the workspace, removes the stored files killed saves left unused (only
those older than --older-than), refuses to clean a damaged workspace, and only reports on a read-only one."""

from __future__ import annotations

import gc
import json
import os
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

from cli_runner import run_cli

from evalcore.store.workspace import DB_NAME, READ_ONLY_ENV, Workspace

ROOT = Path(__file__).resolve().parents[2]
SEED = ROOT / "sample_data" / "seed_example"

KILLED_AFTER_STORING = """
import os, signal, sys
import evalcore.cli.recording as recording
from evalcore.cli.main import main

recording.save = lambda *args: os.kill(os.getpid(), signal.SIGKILL)  # stored the files, dies before the save
main(["evaluate", "--labels", sys.argv[2], "--run", sys.argv[3], "--save", "--workspace", sys.argv[1]])
"""


def saved_workspace(tmp_path: Path) -> tuple[Path, list[str]]:
    """A workspace with one saved evaluation, and the names of the files two killed saves left behind."""
    folder = tmp_path / "ws"
    out = run_cli("evaluate", "--labels", SEED / "labels.json", "--run", SEED / "run.json", "--save",
                  "--workspace", folder)
    assert out.returncode == 0, out.stderr
    left = []
    for i in range(2):
        run = tmp_path / f"killed{i}.json"
        run.write_text(json.dumps({"reset my password": ["acct-recovery", f"killed-{i}"]}))
        child = subprocess.run([sys.executable, "-c", KILLED_AFTER_STORING, str(folder), str(SEED / "labels.json"),
                                str(run)], capture_output=True, text=True, timeout=120,
                               env={**os.environ, "PYTHONPATH": str(ROOT)})
        assert child.returncode == -signal.SIGKILL, child.stderr
        left.append(run.name)
    return folder, left


def stored_names(folder: Path) -> set[str]:
    ws = Workspace(folder)
    try:
        return set(ws.files()["name"])
    finally:
        ws.close()


def test_verify_removes_only_old_unused_files(tmp_path) -> None:
    folder, left = saved_workspace(tmp_path)
    assert set(left) <= stored_names(folder)

    recent = run_cli("workspace", "verify", "--workspace", folder)
    assert recent.returncode == 0, recent.stderr
    assert "sound" in recent.stdout and "no unused stored file stored more than 60 minutes ago" in recent.stdout
    assert "kept 2 unused files stored in the last 60 minutes" in recent.stdout

    dry = run_cli("workspace", "verify", "--older-than", "0", "--dry-run", "--workspace", folder)
    assert dry.returncode == 0 and "would remove 2 unused stored files" in dry.stdout
    assert all(name in dry.stdout for name in left) and set(left) <= stored_names(folder)

    done = run_cli("workspace", "verify", "--older-than", "0", "--workspace", folder)
    assert done.returncode == 0, done.stderr
    assert "removed 2 unused stored files" in done.stdout and all(name in done.stdout for name in left)
    assert stored_names(folder) == {"labels.json", "run.json", "labels.labels.jsonl"}
    again = run_cli("workspace", "verify", "--older-than", "0", "--workspace", folder)
    assert again.returncode == 0 and "no unused stored file" in again.stdout
    shown = run_cli("workspace", "show", "evaluation", "latest", "--workspace", folder)
    assert shown.returncode == 0, shown.stderr
    assert Workspace(folder).verify() == []


def test_a_damaged_workspace_is_reported_and_left_alone(tmp_path) -> None:
    folder, left = saved_workspace(tmp_path)
    gc.collect()
    raw = sqlite3.connect(folder / DB_NAME)
    raw.execute("DELETE FROM file_chunks WHERE sha256 = (SELECT file_sha256 FROM runs LIMIT 1)")
    raw.commit()
    raw.close()
    out = run_cli("workspace", "verify", "--older-than", "0", "--workspace", folder)
    assert out.returncode == 1
    assert "problem: file" in out.stdout and "nothing removed" in out.stdout
    assert set(left) <= stored_names(folder)


def test_a_read_only_workspace_is_checked_not_cleaned(tmp_path) -> None:
    folder, left = saved_workspace(tmp_path)
    out = run_cli("workspace", "verify", "--older-than", "0", "--workspace", folder, env={READ_ONLY_ENV: "1"})
    assert out.returncode == 0, out.stderr
    assert "found 2 unused stored files" in out.stdout and "not removed: the workspace is read-only" in out.stdout
    assert set(left) <= stored_names(folder)


def test_a_negative_age_is_a_usage_error(tmp_path) -> None:
    out = run_cli("workspace", "verify", "--older-than", "-1", "--workspace", tmp_path)
    assert out.returncode == 2 and "--older-than" in out.stderr
