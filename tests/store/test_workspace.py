"""The workspace store: uploads kept once, frozen label versions, evaluations that survive a restart, a
crash in the middle of a write, and several writers (threads and processes) at once; and its CLI."""

from __future__ import annotations

import json
import multiprocessing
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import pandas as pd
import pytest

import evalcore
from evalcore.errors import UsageError
from evalcore.readers.runs import read_run
from evalcore.store import files as stored_files
from evalcore.store.workspace import (
    DB_NAME, ENV_VAR, Case, FrozenError, NotInWorkspace, Workspace, default_location,
)

ROOT = Path(__file__).resolve().parents[2]
SEED = ROOT / "sample_data" / "seed_example"
SEED_LABELS = {"refund timing": {"policy-refunds", "faq-returns"},
               "reset my password": {"acct-recovery"},
               "enterprise sso": {"pricing-enterprise"}}
SEED_RUN = {"refund timing": ["policy-refunds", "faq-shipping", "faq-returns"],
            "reset my password": ["faq-login", "acct-recovery", "policy-privacy"],
            "enterprise sso": ["faq-login", "policy-refunds", "pricing-enterprise"]}


def seed_evaluation(**options):
    run = read_run(SEED_RUN, name="seed", model="acme-embed-v1")
    return evalcore.evaluate_runs([run], SEED_LABELS, k=(1, 3), n_resamples=200, **options)


def seal_saved(ws: Workspace, who: str = "ana") -> None:
    """Record an event, as every workflow does with its change: it seals what this connection saved through the
    store's own methods (`evalcore.store.seals`); a record in no event is one `verify` names."""
    ws._record_event(who, "save", "what the test saved")


def run_cli(*args: object, env: dict | None = None, stdin: str | None = None) -> subprocess.CompletedProcess:
    from cli_runner import run_cli  # the command line in-process (tests/cli_runner.py)

    return run_cli(*args, env=env, stdin=stdin)


# ----------------------------------------------------------------------------- location and files


def test_location_comes_from_the_environment_then_xdg(monkeypatch, tmp_path) -> None:
    monkeypatch.setenv(ENV_VAR, str(tmp_path / "ws"))
    assert default_location() == tmp_path / "ws"
    monkeypatch.delenv(ENV_VAR)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    assert default_location() == tmp_path / "xdg" / "evalcore"
    monkeypatch.setenv("XDG_DATA_HOME", "relative/path")  # not absolute: ignored, as the XDG spec says
    assert default_location() == Path.home() / ".local" / "share" / "evalcore"
    monkeypatch.setenv(ENV_VAR, str(tmp_path / "env"))
    ws = Workspace()
    assert ws.path == tmp_path / "env" / DB_NAME and ws.path.is_file()


def test_an_upload_is_stored_once_by_content(tmp_path) -> None:
    ws = Workspace(tmp_path)
    data = b"q1 Q0 d1 1 0.9 tag\n"
    first = ws._put_file(data, "a.trec")
    again = ws._put_file(data, "renamed.trec")
    path = tmp_path / "copy.trec"
    path.write_bytes(data)
    from_path = ws._put_file(path)
    assert first.created and not again.created and not from_path.created
    assert first.sha256 == again.sha256 == from_path.sha256
    assert ws.read_file(first.sha256) == data
    assert len(ws.files()) == 1
    assert ws.file(first.sha256[:10]).name == "a.trec"  # the first name is kept
    empty = ws._put_file(b"", "empty.txt")
    assert ws.read_file(empty.sha256) == b""
    with pytest.raises(evalcore.InputError, match="missing.trec"):
        ws._put_file(tmp_path / "missing.trec")


def test_large_files_are_stored_in_blocks_and_streamed(tmp_path, monkeypatch) -> None:
    monkeypatch.setattr(stored_files, "BLOCK_BYTES", 1000)
    ws = Workspace(tmp_path)
    data = os.urandom(10_500)
    path = tmp_path / "big.bin"
    path.write_bytes(data)
    stored = ws._put_file(path)
    assert ws.read_file(stored.sha256) == data
    assert ws.counts()["file_chunks"] == 11
    assert ws.verify() == []


# ----------------------------------------------------------------------------- evaluations and restart


def test_saved_evaluation_records_version_runs_summary_and_outcomes(tmp_path) -> None:
    ws = Workspace(tmp_path)
    evaluation = seed_evaluation()
    saved = ws._save_evaluation(evaluation, k=1)
    assert saved.created and saved.k == 1 and saved.ks == (1, 3)
    assert saved.labels.version == 1 and saved.labels.fingerprint == evaluation.labels.fingerprint
    assert [r.model for r in saved.runs] == ["acme-embed-v1"] and saved.runs[0].line == "acme-embed-v1"
    stored = saved.summary.set_index("metric")["mean"]
    assert stored["recall@1"] == pytest.approx(1 / 6) and stored["mrr"] == pytest.approx(0.6111, abs=1e-4)

    outcomes = ws.outcomes(saved.id).set_index("query")
    assert outcomes.loc["refund timing", "first_rank"] == 1 and outcomes.loc["refund timing", "hit"]
    assert outcomes.loc["reset my password", "first_rank"] == 2 and not outcomes.loc["reset my password", "hit"]
    assert outcomes.loc["enterprise sso", "first_rank"] == 3
    assert set(outcomes["fingerprint"]) == {evaluation.labels.fingerprint}

    again = ws._save_evaluation(evaluation, k=1)
    assert not again.created and again.id == saved.id
    assert len(ws.evaluations()) == 1 and len(ws.runs()) == 1


def test_the_chosen_k_defaults_to_the_largest_and_is_checked_against_the_depth(tmp_path) -> None:
    ws = Workspace(tmp_path)
    evaluation = seed_evaluation()
    assert ws._save_evaluation(evaluation).k == 3  # no k: the evaluation's largest
    for bad in (0, 4, 2.0, True):
        with pytest.raises(UsageError, match="'k' parameter must be an integer between 1 and 3 "
                                             r"\(the depth this evaluation was scored to\)"):
            ws._save_evaluation(evaluation, k=bad)
    assert len(ws.evaluations()) == 1


def test_a_restart_loses_nothing(tmp_path) -> None:
    ws = Workspace(tmp_path)
    evaluation = seed_evaluation()
    upload = ws._put_file((SEED / "labels.json").read_bytes(), "labels.json")
    saved = ws._save_evaluation(evaluation, k=1, labels_file=upload, label_set="support")
    version = ws._add_cases("support", [Case("sso login loop", ("acct-sso",), query_text="sso keeps looping")])
    ws.archive._set_note("acme-embed-v1", "reset my password", "customers say 'reset', docs say 'recover'")
    seal_saved(ws)
    before = ws.counts()
    ws.close()
    del ws

    reopened = Workspace(tmp_path)
    assert reopened.counts() == before
    assert reopened.verify() == []
    assert list(reopened.label_versions("support")["version"]) == [1, 2]
    assert reopened.label_version("support").fingerprint == version.fingerprint
    restored = reopened.evaluation(saved.id)
    pd.testing.assert_frame_equal(restored.summary, saved.summary)
    assert reopened.evaluation(saved.id).labels_file_sha256 == upload.sha256
    again = reopened.load_evaluation(saved.id)
    assert again.summary["mean"].tolist() == pytest.approx(evaluation.summary["mean"].tolist())
    entry = reopened.archive.entry("acme-embed-v1", "reset my password")
    assert entry.note == "customers say 'reset', docs say 'recover'"


def test_runs_and_labels_saved_from_files_keep_their_bytes_and_metadata(tmp_path) -> None:
    ws = Workspace(tmp_path)
    run = ws._save_run(ROOT / "sample_data" / "base.trec", line="prod-search")
    assert run.model == "acme-embed-base-v2" and run.dims == 768 and run.price_per_mtok == 0.02
    assert run.index_bytes == 1545216 and run.line == "prod-search" and run.file_name == "base.trec"
    assert ws.read_file(run.file_sha256) == (ROOT / "sample_data" / "base.trec").read_bytes()
    loaded = ws.load_run(run.id)
    original = read_run(ROOT / "sample_data" / "base.trec")
    assert loaded.model == original.model and loaded.n_rows == original.n_rows
    assert loaded.ranking("q001") == original.ranking("q001")
    assert not ws._save_run(ROOT / "sample_data" / "base.trec", line="prod-search").created

    version = ws._save_labels(ROOT / "sample_data" / "labels.tsv")
    assert version.name == "labels" and version.source_name == "labels.tsv" and version.n_queries == 320
    labels = ws.load_labels("labels")
    assert labels.fingerprint == evalcore.read_labels(ROOT / "sample_data" / "labels.tsv").fingerprint
    assert labels.field("query_text").iloc[0] == "retention policies limit"
    assert not ws._save_labels(ROOT / "sample_data" / "labels.tsv").created


# ----------------------------------------------------------------------------- label versions


def test_label_versions_are_frozen(tmp_path) -> None:
    ws = Workspace(tmp_path)
    saved = ws._save_evaluation(seed_evaluation(), k=1, label_set="support")
    v1 = ws.load_labels("support", 1)
    v2 = ws._add_cases("support", [{"query": "sso login loop", "relevant": ["acct-sso"], "query_text": "loop"},
                                  {"query": "reset my password", "relevant": ["acct-recovery", "faq-login"]}])
    assert v2.version == 2 and v2.parent_version == 1 and v2.created
    assert "added 1 query and 2 judgments" in v2.change
    assert ws.load_labels("support", 1).judgments.equals(v1.judgments)
    assert ws.label_version("support", 1).fingerprint == saved.labels.fingerprint != v2.fingerprint
    assert ws.evaluation(saved.id).labels.version == 1  # the evaluation keeps the version it used
    latest = ws.load_labels("support")
    assert set(latest.queries) == set(SEED_LABELS) | {"sso login loop"}
    assert latest.field("query_text")["sso login loop"] == "loop"

    same = ws._add_cases("support", [{"query": "sso login loop", "relevant": ["acct-sso"]}])
    assert not same.created and same.version == 2
    regraded = ws._add_cases("support", [Case("sso login loop", ("acct-sso",), grade=2)])
    assert regraded.version == 3 and "changed 1 grade" in regraded.change

    with pytest.raises(FrozenError, match="never change"):
        ws.write(lambda conn: conn.execute("UPDATE label_versions SET fingerprint = 'x' WHERE version = 1"))
    with pytest.raises(FrozenError):
        ws.write(lambda conn: conn.execute("UPDATE file_chunks SET data = x'00'"))
    raw = sqlite3.connect(ws.path)
    with pytest.raises(sqlite3.IntegrityError):
        raw.execute("UPDATE outcomes SET hit = 1 - hit")
    raw.close()
    assert ws.load_labels("support", 1).fingerprint == saved.labels.fingerprint
    with pytest.raises(NotInWorkspace, match="no version 9"):
        ws.load_labels("support", 9)
    with pytest.raises(NotInWorkspace, match="No label set named 'other'"):
        ws._add_cases("other", [Case("q", ("d",))])
    with pytest.raises(UsageError, match="relevant"):
        ws._add_cases("support", [{"query": "q", "relevant": []}])


# ----------------------------------------------------------------------------- crashes


CRASH_MID_TRANSACTION = """
import os, sys
import evalcore.store.files as f
import evalcore.store.workspace as w
from evalcore.readers.runs import read_run
import evalcore

real = f._store_blocks
def crash(conn, digest, blocks):
    real(conn, digest, blocks)      # rows written inside the open transaction ...
    os._exit(17)                    # ... and the process dies before COMMIT
f._store_blocks = crash
ws = w.Workspace(sys.argv[1])
run = read_run({"q": ["d", "e"]}, name="crashed", model="never-saved")
ev = evalcore.evaluate_runs([run], {"q": ["d"], "p": ["e"]}, k=1, n_resamples=200)
ws._save_evaluation(ev)
print("not reached")
"""


def test_a_process_dying_inside_a_write_leaves_the_workspace_as_it_was(tmp_path) -> None:
    ws = Workspace(tmp_path)
    ws._save_evaluation(seed_evaluation(), k=1)
    seal_saved(ws)
    before = ws.counts()
    listing = ws.evaluations()
    out = subprocess.run([sys.executable, "-c", CRASH_MID_TRANSACTION, str(tmp_path)], capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 17, out.stderr
    assert "not reached" not in out.stdout
    reopened = Workspace(tmp_path)
    assert reopened.verify() == []
    assert reopened.counts() == before
    pd.testing.assert_frame_equal(reopened.evaluations(), listing)
    assert "never-saved" not in set(reopened.runs()["model"])
    assert reopened._put_file(b"after the crash", "next.txt").created  # and it still takes writes


KILLED_WHILE_STORING = """
import os, sys
import evalcore.store.files as f
import evalcore.store.workspace as w
f.BLOCK_BYTES = 256 * 1024
ws = w.Workspace(sys.argv[1])
data = os.urandom(96 * 1024 * 1024)
print("writing", flush=True)
ws._put_file(data, "huge.bin")
print("committed", flush=True)
"""


def test_sigkill_during_a_large_upload_leaves_no_trace_and_no_damage(tmp_path) -> None:
    ws = Workspace(tmp_path)
    kept = ws._put_file(b"kept", "kept.txt")
    before = ws.counts()
    ws.close()
    child = subprocess.Popen([sys.executable, "-c", KILLED_WHILE_STORING, str(tmp_path)], stdout=subprocess.PIPE,
                             text=True)
    assert child.stdout.readline().strip() == "writing"
    wal = tmp_path / (DB_NAME + "-wal")
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not (wal.exists() and wal.stat().st_size > 4 * 1024 * 1024):
        time.sleep(0.005)
    child.send_signal(signal.SIGKILL)
    child.wait(timeout=60)
    assert child.returncode == -signal.SIGKILL
    reopened = Workspace(tmp_path)
    assert reopened.verify() == []
    assert reopened.counts() == before
    assert reopened.read_file(kept.sha256) == b"kept"


# ----------------------------------------------------------------------------- concurrent writers


def _writer(location: str, worker: int, n: int) -> None:
    ws = Workspace(location)
    for i in range(n):
        ws._put_file(f"worker {worker} file {i}".encode(), f"w{worker}-{i}.txt")
        ws._add_cases("shared", [Case(f"w{worker}-q{i}", (f"doc-{worker}-{i}",))])
    seal_saved(ws, f"worker{worker}")


def _saved_first(location: Path) -> None:
    first = Workspace(location)
    first._save_evaluation(seed_evaluation(), label_set="shared")
    seal_saved(first)
    first.close()


def _check_nothing_lost(location: Path, workers: int, n: int) -> None:
    ws = Workspace(location)
    versions = ws.label_versions("shared")
    assert list(versions["version"]) == list(range(1, workers * n + 2))  # one version per add, none lost
    latest = set(ws.load_labels("shared").queries)
    assert {f"w{w}-q{i}" for w in range(workers) for i in range(n)} <= latest
    names = set(ws.files()["name"])
    assert {f"w{w}-{i}.txt" for w in range(workers) for i in range(n)} <= names
    assert ws.verify() == []


def test_threads_writing_at_once_lose_nothing(tmp_path) -> None:
    _saved_first(tmp_path)
    shared = Workspace(tmp_path)  # some threads share one instance, others open their own

    def shared_writer(worker: int) -> None:
        for i in range(4):
            shared._put_file(f"worker {worker} file {i}".encode(), f"w{worker}-{i}.txt")
            shared._add_cases("shared", [Case(f"w{worker}-q{i}", (f"doc-{worker}-{i}",))])

    threads = [threading.Thread(target=_writer, args=(str(tmp_path), w, 4)) for w in range(4)]
    threads += [threading.Thread(target=shared_writer, args=(w,)) for w in range(4, 6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    seal_saved(shared)
    _check_nothing_lost(tmp_path, 6, 4)


def test_processes_writing_at_once_lose_nothing(tmp_path) -> None:
    _saved_first(tmp_path)
    method = "fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn"
    context = multiprocessing.get_context(method)
    processes = [context.Process(target=_writer, args=(str(tmp_path), w, 5)) for w in range(4)]
    for p in processes:
        p.start()
    for p in processes:
        p.join(timeout=120)
    assert [p.exitcode for p in processes] == [0, 0, 0, 0]
    _check_nothing_lost(tmp_path, 4, 5)


# ----------------------------------------------------------------------------- deleting and history


def test_deleting_is_explicit_and_takes_what_depends_on_it(tmp_path) -> None:
    ws = Workspace(tmp_path)
    upload = ws._put_file((SEED / "labels.json").read_bytes(), "labels.json")
    saved = ws._save_evaluation(seed_evaluation(), k=1, labels_file=upload, label_set="support")
    seal_saved(ws)
    with pytest.raises(UsageError, match="still used by"):
        ws._delete("file", upload.sha256)
    plan = ws._delete("labels", "support", dry_run=True)
    assert plan.counts == {"versions": 1, "evaluations": 1, "outcomes": 3, "ledger": 0}
    assert len(ws.evaluations()) == 1  # a plan deletes nothing
    done = ws._delete("labels", "support", who="ana")  # its event records what went
    assert done.description == plan.description
    assert ws.evaluations().empty and ws.label_sets().empty
    assert len(ws.runs()) == 1  # runs stay
    assert upload.sha256 not in set(ws.files()["sha256"])  # files only the label set used go with it
    assert ws.verify() == []
    with pytest.raises(NotInWorkspace):
        ws.evaluation(saved.id)
    with pytest.raises(UsageError, match="kind"):
        ws._delete("everything", "x")


def test_history_of_a_model_line_is_chart_ready(tmp_path) -> None:
    ws = Workspace(tmp_path)
    labels = {f"q{i}": [f"d{i}"] for i in range(12)}
    for step, misses in enumerate((6, 3, 1)):
        ranked = {f"q{i}": (["x", f"d{i}"] if i < misses else [f"d{i}"]) for i in range(12)}
        run = read_run(ranked, name=f"v{step}", model="acme-embed", dims=256)
        ws._save_evaluation(evalcore.evaluate_runs([run], labels, k=(1, 2), n_resamples=200), k=1)
    history = ws.history("acme-embed", ["recall@1", "mrr"])
    assert list(history["step"].unique()) == [1, 2, 3]
    recall = history[history["metric"] == "recall@1"]
    assert recall["mean"].tolist() == pytest.approx([0.5, 0.75, 11 / 12])
    assert (recall["ci_low"] <= recall["mean"]).all() and (recall["mean"] <= recall["ci_high"]).all()
    assert {"line", "run", "model", "uploaded_at", "labels", "labels_version", "fingerprint", "k", "n"} <= set(history)
    assert str(history["uploaded_at"].dtype).startswith("datetime64")
    with pytest.raises(NotInWorkspace, match="No model line named 'nope'"):
        ws.history("nope")


# ----------------------------------------------------------------------------- command line


def test_cli_save_list_show_and_delete(tmp_path) -> None:
    env = {ENV_VAR: str(tmp_path / "ws")}
    out = run_cli("evaluate", "--labels", SEED / "labels.json", "--run", SEED / "run.json", "--k", "1,3",
                  "--format", "json", "--save", "--save-k", "1", "--line", "seed-line", env=env)
    assert out.returncode == 0, out.stderr
    json.loads(out.stdout)  # stdout stays machine-readable; the workspace notes go to stderr
    assert "saved evaluation 1" in out.stderr and "line seed-line" in out.stderr
    assert "2 new failures" in out.stderr

    again = run_cli("evaluate", "--labels", SEED / "labels.json", "--run", SEED / "run.json", "--k", "1,3",
                    "--save", "--save-k", "1", "--line", "seed-line", env=env)
    assert again.returncode == 0 and "already saved as evaluation 1" in again.stderr

    listing = json.loads(run_cli("workspace", "list", "--format", "json", env=env).stdout)
    assert listing["labels"][0]["name"] == "labels" and listing["runs"][0]["line"] == "seed-line"
    assert {f["name"] for f in listing["files"]} >= {"labels.json", "run.json"}

    shown = run_cli("workspace", "show", "line", "seed-line", env=env)
    assert shown.returncode == 0, shown.stderr
    assert "reset my password" in shown.stdout and "new" in shown.stdout

    declined = run_cli("workspace", "delete", "evaluation", "latest", env=env, stdin="n\n")
    assert declined.returncode == 1 and "nothing deleted" in declined.stderr
    assert "3 per-query outcomes" in declined.stderr
    deleted = run_cli("workspace", "delete", "evaluation", "1", "--yes", env=env)
    assert deleted.returncode == 0 and "deleted evaluation 1" in deleted.stderr

    missing = run_cli("workspace", "show", "evaluation", "7", env=env)
    assert missing.returncode == 2 and "Traceback" not in missing.stderr
    assert len(missing.stderr.strip().splitlines()) == 1

    unsaved = run_cli("evaluate", "--labels", SEED / "labels.json", "--run", SEED / "run.json", "--line", "x",
                      env=env)
    assert unsaved.returncode == 2 and "--line: only used with --save" in unsaved.stderr


def test_cli_add_cases_makes_a_new_version(tmp_path) -> None:
    env = {ENV_VAR: str(tmp_path / "ws")}
    assert run_cli("evaluate", "--labels", SEED / "labels.json", "--run", SEED / "run.json", "--save",
                   "--label-set", "support", env=env).returncode == 0
    cases = tmp_path / "misses.jsonl"
    cases.write_text('{"query": "sso login loop", "relevant": ["acct-sso"], "source": "production_miss"}\n')
    out = run_cli("workspace", "add-cases", "support", cases, "--note", "ticket 4711", env=env)
    assert out.returncode == 0, out.stderr
    assert "support v2" in out.stderr and "earlier versions are unchanged" in out.stderr
    shown = json.loads(run_cli("workspace", "show", "labels", "support", "--format", "json", env=env).stdout)
    assert [v["version"] for v in shown["versions"]] == [1, 2]
    assert shown["versions"][1]["note"] == "ticket 4711"


def test_cli_reports_a_damaged_workspace_in_one_line(tmp_path) -> None:
    folder = tmp_path / "ws"
    folder.mkdir()
    (folder / DB_NAME).write_bytes(b"this is not a database" * 100)
    out = run_cli("workspace", "list", env={ENV_VAR: str(folder)})
    assert out.returncode == 1
    assert "damaged" in out.stderr and "Traceback" not in out.stderr


def test_the_change_marker_moves_with_every_saved_or_deleted_evaluation(tmp_path) -> None:
    """The dashboard keeps which runs are saved until this marker moves: a save or delete by any process must
    move it, and nothing else may."""
    ws = Workspace(tmp_path)
    empty = ws.change_marker()
    assert ws.change_marker() == empty  # reading changes nothing
    first = ws._save_evaluation(seed_evaluation(), k=1, label_set="support")
    after_save = Workspace(tmp_path).change_marker()  # another process sees it too
    assert after_save != empty
    ws._delete("evaluation", str(first.id))
    assert ws.change_marker() not in (after_save, empty)
