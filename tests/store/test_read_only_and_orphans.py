"""A workspace that cannot be written still reads (and says why it refuses a write), and the stored files a killed
writer left unreferenced are removed without ever touching a file a record uses."""

from __future__ import annotations

import gc
import hashlib
import os
import shutil
import signal
import sqlite3
import stat
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

import pytest

import evalcore
from dashboard.uploads import Uploads
from evalcore.access import local_actor
from evalcore.workflows import Session
from evalcore.metrics.dataset import Dataset, RunSpec
from evalcore.readers.labels import read_labels
from evalcore.readers.runs import read_run
from evalcore.store import database
from evalcore.store import files as stored_files
from evalcore.store.workspace import (
    DB_NAME, ENV_VAR, READ_ONLY_ENV, NotInWorkspace, Workspace, WorkspaceReadOnly,
)

ROOT = Path(__file__).resolve().parents[2]
SEED = ROOT / "sample_data" / "seed_example"
LABELS = {"refund timing": {"policy-refunds"}, "reset my password": {"acct-recovery"}}


def seed_evaluation(name: str = "seed", model: str = "acme-embed-v1"):
    run = read_run({"refund timing": ["policy-refunds", "faq-returns"],
                    "reset my password": ["faq-login", "acct-recovery"]}, name=name, model=model)
    return evalcore.evaluate_runs([run], LABELS, k=(1, 2), n_resamples=200)


def run_cli(*args: object, env: dict | None = None) -> subprocess.CompletedProcess:
    from cli_runner import run_cli  # the command line in-process (tests/cli_runner.py)

    return run_cli(*args, env=env)


def seal_saved(ws: Workspace) -> None:
    """Record an event, as every workflow does with its change: it seals what this connection saved through the
    store's own methods (`evalcore.store.seals`); a record in no event is one `verify` names."""
    ws._record_event("ana", "save", "what the test saved")


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def make_read_only(folder: Path) -> None:
    """``chmod -R a-w``: what a user does to share a workspace for reading."""
    for path in [folder, *folder.rglob("*")]:
        path.chmod(path.stat().st_mode & ~(stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH))


def make_writable(folder: Path) -> None:
    for path in [folder, *folder.rglob("*")]:
        path.chmod(path.stat().st_mode | stat.S_IWUSR)


# ----------------------------------------------------------------------------- read-only


def test_a_read_only_workspace_reads_and_refuses_every_write_with_exit_2(tmp_path) -> None:
    folder = tmp_path / "ws"
    saved = run_cli("evaluate", "--labels", SEED / "labels.json", "--run", SEED / "run.json", "--k", "1,3", "--save",
                    "--line", "seed-line", "--workspace", folder)
    assert saved.returncode == 0, saved.stderr
    gc.collect()  # the in-process save's connection closes: its WAL is folded into the file
    before = digest(folder / DB_NAME)
    make_read_only(folder)
    # root ignores file permissions: the variable says what chmod says to anyone else
    env = {READ_ONLY_ENV: "1"} if os.geteuid() == 0 else {READ_ONLY_ENV: ""}
    try:
        listing = run_cli("workspace", "list", "--workspace", folder, env=env)
        assert listing.returncode == 0, listing.stderr
        assert "seed-line" in listing.stdout and "labels.json" in listing.stdout
        for args in (("evaluation", "latest"), ("labels", "labels"), ("line", "seed-line"), ("run", "1")):
            shown = run_cli("workspace", "show", *args, "--workspace", folder, env=env)
            assert shown.returncode == 0, (args, shown.stderr)
        checked = run_cli("workspace", "verify", "--older-than", "0", "--workspace", folder, env=env)
        assert checked.returncode == 0 and "sound" in checked.stdout, checked.stderr
        for write in (("evaluate", "--labels", SEED / "labels.json", "--run", SEED / "run.json", "--save"),
                      ("workspace", "delete", "evaluation", "1", "--yes"),
                      ("workspace", "add-cases", "labels", SEED / "labels.json")):
            refused = run_cli(*write, "--workspace", folder, env=env)
            assert refused.returncode == 2, (write, refused.stderr)
            assert f"The workspace folder {folder} is read-only" in refused.stderr
            assert "reading works" in refused.stderr and "Traceback" not in refused.stderr
            assert len(refused.stderr.strip().splitlines()) == 1
    finally:
        make_writable(folder)
    assert digest(folder / DB_NAME) == before  # not a byte written


def test_read_only_in_python_keeps_every_record_loadable(tmp_path) -> None:
    ws = Workspace(tmp_path)
    saved = ws._save_evaluation(seed_evaluation())
    seal_saved(ws)
    counts = ws.counts()
    ws.close()
    ro = Workspace(tmp_path, read_only=True)
    assert ro.read_only and not Workspace(tmp_path).read_only
    assert ro.counts() == counts and ro.verify() == []
    assert ro.evaluation(saved.id).summary.equals(saved.summary)
    assert ro.load_run(saved.runs[0].id).name == "seed"
    assert ro._remove_orphans(older_than=0, dry_run=True).files == ()
    for write in (lambda: ro._put_file(b"new"), lambda: ro._save_evaluation(seed_evaluation("other")),
                  lambda: ro._delete("evaluation", saved.id), lambda: ro._remove_orphans(older_than=0),
                  lambda: ro.archive._set_status("acme-embed-v1", "refund timing", "known")):
        with pytest.raises(WorkspaceReadOnly, match=f"The workspace folder {tmp_path} is read-only .opened read-only"):
            write()
    assert Workspace(tmp_path).counts() == counts


def test_a_read_only_folder_without_a_workspace_says_so(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv(READ_ONLY_ENV, "1")
    with pytest.raises(WorkspaceReadOnly, match=f"{tmp_path} is read-only .{READ_ONLY_ENV} is set. and holds no"):
        Workspace(tmp_path)
    assert not (tmp_path / DB_NAME).exists()  # nothing created


def test_sqlite_refusing_a_write_is_the_typed_error(tmp_path) -> None:
    ws = Workspace(tmp_path)
    mapped = ws._error(sqlite3.OperationalError("attempt to write a readonly database"))
    assert isinstance(mapped, WorkspaceReadOnly) and mapped.exit_code == 2
    assert f"The workspace folder {tmp_path} is read-only (SQLite cannot write to it)" in str(mapped)
    # the real thing: a connection SQLite opened read-only, behind the one write funnel
    ws._conn = sqlite3.connect((tmp_path / DB_NAME).absolute().as_uri() + "?mode=ro", uri=True,
                               isolation_level=None, check_same_thread=False)
    with pytest.raises(WorkspaceReadOnly, match="SQLite cannot write to it"):
        ws._put_file(b"refused", "x.txt")
    ws.close()
    assert Workspace(tmp_path).files().empty


def test_a_file_sqlite_cannot_write_opens_read_only(tmp_path, monkeypatch) -> None:
    """The permissions look writable but SQLite says otherwise (e.g. root on a read-only mount): read it."""
    Workspace(tmp_path)._put_file(b"kept", "kept.txt")

    def refuse(self, conn):
        raise sqlite3.OperationalError("attempt to write a readonly database")

    monkeypatch.setattr(database.Database, "_configure", refuse)
    ws = Workspace(tmp_path)
    assert ws.read_only and list(ws.files()["name"]) == ["kept.txt"]
    with pytest.raises(WorkspaceReadOnly, match="SQLite cannot write to it"):
        ws._put_file(b"new")


def test_without_its_index_file_a_wal_workspace_is_read_as_immutable(tmp_path, monkeypatch) -> None:
    """A read-only folder with no ``-shm`` (SQLite cannot make one) is read as immutable, reopened when it changes,
    and refused while committed changes wait in the WAL file SQLite cannot index."""
    first = Workspace(tmp_path)
    first._put_file(b"first", "first.txt")
    first.close()  # the last connection folds the WAL into the file
    real = database.Database._read_only_probe

    def without_shm(self, uri):
        if "immutable=1" not in uri:
            raise sqlite3.OperationalError("attempt to write a readonly database")
        return real(self, uri)

    monkeypatch.setattr(database.Database, "_read_only_probe", without_shm)
    ro = Workspace(tmp_path, read_only=True)
    assert ro._immutable is not None and list(ro.files()["name"]) == ["first.txt"]
    writer = Workspace(tmp_path)
    writer._put_file(b"second", "second.txt")
    writer.close()  # the last connection folds the WAL into the file: it changed, so the reader reopens
    assert list(ro.files()["name"]) == ["first.txt", "second.txt"]
    held = Workspace(tmp_path)
    held._put_file(b"third", "third.txt")  # committed, still in the WAL while `held` is open
    with pytest.raises(WorkspaceReadOnly, match="latest changes are still in workspace.sqlite-wal"):
        Workspace(tmp_path, read_only=True)
    held.close()


def _other_user() -> list[str] | None:
    """How to run a command as someone who cannot write a root-owned folder (None: not possible here)."""
    if os.geteuid() != 0:
        return []
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        return None
    prefix = [setpriv, "--reuid=65534", "--regid=65534", "--clear-groups"]
    probe = subprocess.run([*prefix, sys.executable, "-c", "import evalcore.cli"], capture_output=True, cwd="/",
                           env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=120)
    return prefix if probe.returncode == 0 else None


def test_a_real_read_only_folder_as_another_user_reads(tmp_path) -> None:
    prefix, reason = _other_user(), "you cannot write to it"
    folder = Path(tempfile.mkdtemp(prefix="evalcore-ro-")) / "ws"  # a folder anyone can reach, unlike tmp_path
    folder.parent.chmod(0o755)
    try:
        ws = Workspace(folder)
        ws._save_evaluation(seed_evaluation())
        ws.close()
        make_read_only(folder)
        env = {**os.environ, "PYTHONPATH": str(ROOT), ENV_VAR: str(folder), "HOME": str(folder.parent)}
        env.pop(READ_ONLY_ENV, None)
        if prefix is None:  # root with no other user to become: the explicit switch stands in for the permissions
            prefix, reason = [], "EVALCORE_WORKSPACE_READONLY is set"
            env[READ_ONLY_ENV] = "1"
        before = hashlib.sha256((folder / DB_NAME).read_bytes()).hexdigest()

        def cli(*args: str) -> subprocess.CompletedProcess:
            return subprocess.run([*prefix, sys.executable, "-m", "evalcore.cli", *args], capture_output=True,
                                  text=True, env=env, cwd="/", timeout=120)

        listing = cli("workspace", "list")
        assert listing.returncode == 0 and "acme-embed-v1" in listing.stdout, listing.stderr
        assert cli("workspace", "show", "evaluation", "latest").returncode == 0
        refused = cli("workspace", "delete", "evaluation", "1", "--yes")
        assert refused.returncode == 2 and f"is read-only ({reason})" in refused.stderr
        assert hashlib.sha256((folder / DB_NAME).read_bytes()).hexdigest() == before  # not a byte changed
    finally:
        make_writable(folder.parent)
        shutil.rmtree(folder.parent)


# ----------------------------------------------------------------------------- orphans


KILLED_AFTER_STORING = """
import os, signal, sys
import evalcore.cli.recording as recording
from evalcore.cli.main import main

def killed(*args):                      # the files are stored; the process dies before the save
    os.kill(os.getpid(), signal.SIGKILL)
recording.save = killed
main(["evaluate", "--labels", sys.argv[2], "--run", sys.argv[3], "--k", "1,2", "--save", "--workspace", sys.argv[1]])
"""


def write_inputs(folder: Path, tag: str, labels: str = "q1 0 d1 1\nq2 0 d2 1\n") -> tuple[Path, Path]:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "labels.qrels").write_text(labels)
    (folder / f"{tag}.trec").write_text(f"q1 Q0 d1 1 0.9 {tag}\nq1 Q0 d2 2 0.5 {tag}\nq2 Q0 d1 1 0.8 {tag}\n")
    return folder / "labels.qrels", folder / f"{tag}.trec"


def kill_a_save(workspace: Path, labels: Path, run: Path) -> None:
    child = subprocess.run([sys.executable, "-c", KILLED_AFTER_STORING, str(workspace), str(labels), str(run)],
                           capture_output=True, text=True, timeout=120, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert child.returncode == -signal.SIGKILL, child.stderr


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_orphans_of_killed_saves_are_removed_and_every_used_file_stays(tmp_path) -> None:
    folder = tmp_path / "ws"
    labels, kept_run = write_inputs(tmp_path / "in", "kept")
    saved = run_cli("evaluate", "--labels", labels, "--run", kept_run, "--k", "1,2", "--save", "--workspace", folder)
    assert saved.returncode == 0, saved.stderr
    ws = Workspace(folder)
    ws._save_evaluation(seed_evaluation(), label_set="seed")
    seal_saved(ws)
    used = set(ws.files()["sha256"])
    before = ws.counts()

    runs = [write_inputs(tmp_path / "in", f"killed{i}")[1] for i in range(3)]
    for run in runs:
        kill_a_save(folder, labels, run)  # labels already used by a record: only the run is left over
    other_labels, _ = write_inputs(tmp_path / "other", "x", labels="q1 0 d2 1\n")
    kill_a_save(folder, other_labels, runs[0])  # new labels, and the first run's bytes once more
    api_orphan = ws._put_file(b"stored by a script that died before using it", "note.txt")
    orphans = {sha(run) for run in runs} | {sha(other_labels), api_orphan.sha256}

    after_kills = ws.counts()
    assert after_kills["files"] == before["files"] + len(orphans)
    assert {k: v for k, v in after_kills.items() if k not in ("files", "file_chunks")} == \
        {k: v for k, v in before.items() if k not in ("files", "file_chunks")}
    assert ws.verify() == []  # sound, just untidy

    kept = ws._remove_orphans()  # the default grace period: all of them are too recent to be sure
    assert kept.files == () and kept.recent == len(orphans) and ws.counts() == after_kills
    dry = ws._remove_orphans(older_than=0, dry_run=True)
    assert {f.sha256 for f in dry.files} == orphans and not dry.removed and ws.counts() == after_kills

    done = ws._remove_orphans(older_than=0)
    assert done.removed and {f.sha256 for f in done.files} == orphans and done.recent == 0
    assert done.size == sum(f.size for f in dry.files)
    assert ws.counts() == before
    assert set(ws.files()["sha256"]) == used
    assert ws.verify() == []
    for evaluation_id in ws.evaluations()["id"]:
        loaded = ws.evaluation(int(evaluation_id))
        for run in loaded.runs:
            assert ws.load_run(run.id).n_queries > 0
        ws.load_labels(loaded.labels.name, loaded.labels.version)
    for file in used:
        ws.read_file(file)
    assert ws._remove_orphans(older_than=0).files == ()  # nothing left to do


def test_a_file_removed_under_a_retried_save_is_refused_cleanly_and_the_retry_stores_it(tmp_path, monkeypatch) -> None:
    """Bytes a save killed long ago left behind are not rewritten when stored again (a large file would be copied
    whole on every upload); if a clean-up removes them before the retried save names them, that save is refused and
    the next try stores them anew. No record ever points to a missing file."""
    ws = Workspace(tmp_path)
    monkeypatch.setattr(stored_files, "_now", lambda: "2020-01-01T00:00:00.000000+00:00")
    old = ws._put_file(b"q1 Q0 d1 1 0.9 t\n", "left.trec")  # left by a save killed long ago
    monkeypatch.undo()
    again = ws._put_file(b"q1 Q0 d1 1 0.9 t\n", "again.trec")  # the retried save stores the same bytes ...
    assert not again.created and again.stored_at == old.stored_at  # ... without writing them again
    assert [f.sha256 for f in ws._remove_orphans(older_than=600).files] == [old.sha256]  # a clean-up in between
    with pytest.raises(NotInWorkspace):
        ws._save_run(read_run({"q1": ["d1"]}, name="t", model="m"), file=again)
    retry = ws._put_file(b"q1 Q0 d1 1 0.9 t\n", "again.trec")
    assert retry.created
    run = ws._save_run(read_run({"q1": ["d1"]}, name="t", model="m"), file=retry)
    seal_saved(ws)
    assert ws._remove_orphans(older_than=0).files == ()  # used: never removed, however old
    assert ws.load_run(run.id).name == "t" and ws.verify() == []


def test_content_rows_without_a_file_are_removed(tmp_path) -> None:
    ws = Workspace(tmp_path)
    kept = ws._put_file(b"kept")
    ws._save_labels(read_labels({"q": {"d"}}), name="set", file=kept)
    seal_saved(ws)
    raw = sqlite3.connect(ws.path)  # foreign keys off: how a stray content row could ever appear
    raw.execute("INSERT INTO file_chunks (sha256, seq, data) VALUES ('feed', 0, x'00')")
    raw.commit()
    raw.close()
    assert any("foreign key" in problem for problem in ws.verify())
    done = ws._remove_orphans(older_than=0)
    assert done.stray_blocks == 1 and done.files == ()
    assert ws.verify() == [] and ws.read_file(kept.sha256) == b"kept"


def test_clean_up_racing_writers_never_breaks_a_reference(tmp_path) -> None:
    """Writers store a file, then save the run that uses it (two transactions) while clean-ups run. With the
    default grace period every save succeeds; with none a save may be refused (its file went between the two),
    but no record ever points to a missing file."""
    Workspace(tmp_path)._put_file(b"init")

    def writer(worker: int, outcomes: list) -> None:
        ws = Workspace(tmp_path)
        for i in range(6):
            data = f"q1 Q0 d{i} 1 0.9 w{worker}\nq2 Q0 d{worker} 1 0.5 w{worker}\n".encode()
            try:
                ws._save_run(data, line=f"w{worker}")
                outcomes.append("saved")
            except NotInWorkspace as exc:  # the file was removed between the two transactions
                assert "not stored in this workspace" in str(exc)
                outcomes.append("refused")
        seal_saved(ws)

    def sweeper(grace: float, stop: threading.Event) -> None:
        ws = Workspace(tmp_path)
        while not stop.is_set():
            ws._remove_orphans(older_than=grace)

    for grace in (stored_files.ORPHAN_GRACE_S, 0.0):
        outcomes: list = []
        stop = threading.Event()
        sweep = threading.Thread(target=sweeper, args=(grace, stop))
        writers = [threading.Thread(target=writer, args=(w, outcomes)) for w in range(3)]
        sweep.start()
        for t in writers:
            t.start()
        for t in writers:
            t.join(timeout=120)
        stop.set()
        sweep.join(timeout=120)
        assert len(outcomes) == 18
        if grace:
            assert set(outcomes) == {"saved"}
        ws = Workspace(tmp_path)
        assert ws.verify() == []
        for run_id in ws.runs()["id"]:
            assert ws.load_run(int(run_id)).n_queries > 0


def test_files_a_dashboard_link_names_are_kept(tmp_path) -> None:
    """The dashboard's data sets (``?data=<key>`` links) name uploads in manifests inside the workspace folder: those
    files are in use even though no row points to them."""
    ws = Workspace(tmp_path)
    store, door = Uploads(ws), Session(ws, local_actor())
    labels = store.add_file("labels.json", (SEED / "labels.json").read_bytes(), session=door)
    run = store.add_file("run.json", (SEED / "run.json").read_bytes(), session=door)
    docs = store.add_file("docs.jsonl", b'{"doc_id": "faq-login", "tokens": 12}\n', session=door)
    key = store.put_dataset(Dataset(labels=labels, runs=(RunSpec(file=run, name="run"),), documents=docs), door)
    loose = ws._put_file(b"uploaded, never part of a data set", "loose.txt")
    done = ws._remove_orphans(older_than=0)
    assert [f.sha256 for f in done.files] == [loose.sha256]
    assert {ref.sha256 for ref in (labels, run, docs)} <= set(ws.files()["sha256"])
    reopened = Uploads(Workspace(tmp_path))  # after a restart the link still opens its files
    assert reopened.dataset(key) is not None and reopened.file(docs) is not None
