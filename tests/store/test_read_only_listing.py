"""Hostile input, round three, item 8: a workspace opened read-only creates nothing beside its file.

SQLite opening a WAL database ``mode=ro`` in a folder it can write makes ``workspace.sqlite-wal`` and ``-shm`` and
leaves them there; the docs say read-only creates nothing. The folder's listing (names and bytes) must be the same
after every read-only command as before it.
"""

from __future__ import annotations

import gc
import hashlib
from pathlib import Path

from cli_runner import run_cli

from evalcore.store.workspace import DB_NAME, READ_ONLY_ENV, Workspace

ROOT = Path(__file__).resolve().parents[2]
SEED = ROOT / "sample_data" / "seed_example"
READ_ONLY = {READ_ONLY_ENV: "1"}
COMMANDS = (("workspace", "list"), ("workspace", "list", "events"), ("workspace", "show", "evaluation", "latest"),
            ("workspace", "show", "labels", "labels"), ("workspace", "verify", "--older-than", "0"),
            ("report", "--format", "markdown", "--no-charts"))


def listing(folder: Path) -> dict[str, str]:
    """Every file in the folder with the SHA-256 of its bytes."""
    return {path.name: hashlib.sha256(path.read_bytes()).hexdigest() for path in sorted(folder.iterdir())}


def saved(folder: Path) -> Path:
    done = run_cli("evaluate", "--labels", SEED / "labels.json", "--run", SEED / "run.json", "--save",
                   "--workspace", folder)
    assert done.returncode == 0, done.stderr
    gc.collect()  # the saving command's connection closes: the WAL folded into the file, -wal and -shm gone
    return folder


def test_read_only_commands_leave_the_folder_listing_unchanged(tmp_path) -> None:
    folder = saved(tmp_path / "ws")
    before = listing(folder)
    assert list(before) == [DB_NAME]
    for command in COMMANDS:
        done = run_cli(*command, "--workspace", folder, env=READ_ONLY)
        assert done.returncode == 0, (command, done.stderr)
        gc.collect()
        assert listing(folder) == before, command
    ws = Workspace(folder, read_only=True)
    assert ws.verify() == [] and len(ws.evaluations()) == 1 and ws.anchor() is not None
    ws.close()
    assert listing(folder) == before


def test_a_read_only_reader_beside_a_writer_reads_its_changes_and_adds_no_file(tmp_path) -> None:
    folder = saved(tmp_path / "ws")
    reader = Workspace(folder, read_only=True)
    assert set(reader.files()["name"]) == {"labels.json", "run.json", "labels.labels.jsonl"}
    writer = Workspace(folder)
    writer._put_file(b"stored while a reader reads", "new.txt")  # committed, held in the writer's WAL
    with_writer = set(listing(folder))
    assert with_writer == {DB_NAME, f"{DB_NAME}-wal", f"{DB_NAME}-shm"}  # the writer's own files
    assert "new.txt" in set(reader.files()["name"])  # the reader reopened through them
    assert "new.txt" in set(Workspace(folder, read_only=True).files()["name"])
    assert set(listing(folder)) == with_writer
    writer.close()
    reader.close()
