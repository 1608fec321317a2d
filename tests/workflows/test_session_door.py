"""One door to the workspace: every change goes through a `Session` bound to the person acting, each change is
stored with the event that records it, and nothing changes without one.

Walks every write path a front end has (storing a file or a saved view, recording an upload, saving, revealing,
flagging, judging, adding cases and a production miss, editing the ledger, deleting, sweeping unused files), checks
the record after each, kills a process between a change and its event, and reads the front ends' source to check
none of them reaches past the door.
"""

from __future__ import annotations

import ast
import inspect
import subprocess
import sys
from pathlib import Path

import pytest

from evalcore import workflows
from evalcore.access import Actor, Role
from evalcore.analyses.judging import judging_pool
from evalcore.errors import NotPermitted
from evalcore.metrics.split import scoring_labels
from evalcore.readers.labels import read_labels
from evalcore.readers.runs import read_run
from evalcore.store.workspace import Workspace
from evalcore.workflows import Session

ROOT = Path(__file__).resolve().parents[2]
S = ROOT / "sample_data"
OWNER = Actor("ow@example.com", Role.OWNER, "signed in")
VIEWER = Actor("vi@example.com", Role.VIEWER, "signed in")

PRIVATE_WRITES = {"_put_file", "_put_manifest", "_delete", "_remove_orphans", "_save_labels", "_add_cases",
                  "_save_run", "_save_evaluation", "_record_reveal", "_flag_for_rejudging", "_save_blind_judgments",
                  "_record_event", "_set_status", "_set_note", "_add_tag", "_remove_tag", "_save_panel_marks",
                  "_freeze_panel"}
"""The workspace's write methods: private to `evalcore.store`, reached only through `evalcore.workflows`."""


def state(ws: Workspace) -> tuple:
    """Everything a change could touch, the record aside."""
    manifests = ws.read(lambda conn: conn.execute("SELECT COUNT(*) FROM manifests").fetchone()[0])
    return (ws.counts(), manifests, len(ws.reveals()), len(ws.rejudge_queue(open_only=False)),
            len(ws.judging_rounds()), len(ws.panel_marks()))


@pytest.fixture
def door(tmp_path):
    return Session(Workspace(tmp_path / "ws"), OWNER)


def _steps(session: Session, tmp_path: Path) -> list:
    """(name, call) for every write path, in an order where each one changes something."""
    labels = read_labels(S / "labels.tsv")
    runs = [read_run(S / "base.trec"), read_run(S / "tuned.trec")]
    evaluation = scoring_labels(labels).evaluate(runs, [1, 5])
    cases = tmp_path / "cases.jsonl"
    cases.write_text('{"query": "new q", "doc_id": "d1"}\n')
    pool = judging_pool(runs, labels, "q006", 3)
    docs = S / "docs.jsonl"

    def latest() -> int:
        return int(session.workspace.evaluations()["id"].max())

    def upload():
        labels_file = session.store_file(S / "labels.tsv")
        runs_files = [(run, session.store_file(S / f"{run.name}.trec"), None) for run in runs]
        return session.record_upload(labels=labels, labels_file=labels_file, runs=runs_files,
                                     documents=session.store_file(docs))

    def entry():
        saved = session.workspace.evaluation(latest())
        return session.workspace.archive.entry(saved.runs[0].line, "q064", labels=saved.labels.name)

    return [
        ("store a file", lambda: session.store_file(b"some bytes", "loose.txt")),
        ("store a saved view", lambda: session.store_view("dataset", "abc123", {
            "labels": {"name": "loose.txt", "sha256": session.store_file(b"some bytes").sha256, "size": 10}})),
        ("record an upload", upload),
        ("save an evaluation", lambda: session.save_evaluation(evaluation, k=5)),
        ("reveal the holdout", lambda: session.reveal_holdout(labels, [(r.name, r.model) for r in runs])),
        ("flag for re-judging", lambda: session.flag_for_rejudging(labels, ["q006"])),
        ("save a judging round", lambda: session.save_judging_round(labels.name, pool, {d: True for d in pool.docs})),
        ("save a judge's marks", lambda: session.save_marks(labels.name, pool, {d: False for d in pool.docs})),
        ("freeze the judges' marks", lambda: session.freeze_panel(labels.name)),
        ("add cases", lambda: session.add_cases(labels.name, cases)),
        ("add a production miss", lambda: session.add_production_miss(labels.name, "prod-001", "cant log in",
                                                                      ["faq-login"])),
        ("edit the ledger", lambda: session.edit_entry(entry(), status="known", tags=["wording"], note="seen")),
        ("delete", lambda: session.delete("evaluation", latest())),
        ("sweep unused files", lambda: session.remove_orphans(older_than=0)),
    ]


def test_every_change_through_the_session_is_recorded_under_the_person(door, tmp_path) -> None:
    ws = door.workspace
    for name, step in _steps(door, tmp_path):
        before, events = state(ws), len(ws.events())
        step()
        after, logged = state(ws), ws.events()
        assert after != before, f"{name}: changed nothing (the walk should exercise a change)"
        new = logged.head(len(logged) - events)
        assert len(new) >= 1, f"{name}: changed the workspace without an event"
        assert set(new["who"]) == {OWNER.who}, f"{name}: recorded under {set(new['who'])}"
    assert ws.verify() == []


def test_a_viewer_session_changes_nothing_on_any_path(door, tmp_path) -> None:
    steps = _steps(door, tmp_path)
    for name, step in steps[:4]:  # something to refuse edits and deletions of
        step()
    viewer = Session(door.workspace, VIEWER)
    before, events = state(door.workspace), len(door.workspace.events())
    for name, step in _steps(viewer, tmp_path):
        with pytest.raises(NotPermitted):
            step()
        assert state(door.workspace) == before, f"{name}: a refused viewer changed the workspace"
    assert len(door.workspace.events()) == events


def test_a_session_needs_a_person() -> None:
    with pytest.raises(NotPermitted, match="no person is named"):
        Session(Workspace.__new__(Workspace), "ana")  # type: ignore[arg-type]


KILLER = """
import os, sys
from pathlib import Path
from evalcore.access import Actor, Role
from evalcore.readers.labels import read_labels
from evalcore.readers.runs import read_run
from evalcore.metrics.split import scoring_labels
from evalcore.store import chain, events
from evalcore.store.workspace import Workspace
from evalcore.workflows import Session

S = Path(sys.argv[2])
session = Session(Workspace(sys.argv[1]), Actor("ow@example.com", Role.OWNER, "signed in"))
labels = read_labels(S / "labels.tsv")
evaluation = scoring_labels(labels).evaluate([read_run(S / "base.trec")], [1, 5])
if sys.argv[3] != "save an evaluation":
    session.save_evaluation(evaluation, k=5)
real = events.append

def killed(conn, table, row):
    if table is chain.EVENTS:
        os._exit(9)  # the change is written, its event not yet: the process dies between the two
    return real(conn, table, row)

events.append = killed
print("READY", flush=True)
what = sys.argv[3]
if what == "save an evaluation":
    session.save_evaluation(evaluation, k=5)
elif what == "store a file":
    session.store_file(b"bytes never recorded", "x.txt")
elif what == "add cases":
    cases = Path(sys.argv[1]) / "cases.jsonl"
    cases.write_text('{"query": "new q", "doc_id": "d1"}\\n')
    session.add_cases(session.workspace.label_sets()["name"].iloc[0], cases)
elif what == "delete":
    session.delete("evaluation", 1)
print("NOT KILLED", flush=True)
"""


@pytest.mark.parametrize("what", ["save an evaluation", "store a file", "add cases", "delete"])
def test_a_kill_between_a_change_and_its_event_leaves_neither(tmp_path, what) -> None:
    location = tmp_path / "ws"
    script = tmp_path / "killer.py"
    script.write_text(KILLER)
    first = subprocess.run([sys.executable, str(script), str(location), str(S), what], capture_output=True,
                           text=True, cwd=ROOT, timeout=300)
    assert first.returncode == -9 or first.returncode == 9, first.stderr
    assert "READY" in first.stdout and "NOT KILLED" not in first.stdout
    ws = Workspace(location)
    saved_before = 0 if what == "save an evaluation" else 1
    assert len(ws.evaluations()) == saved_before, "the change was kept without its event"
    assert ws.counts()["label_versions"] == (0 if what == "save an evaluation" else 1)
    assert not (ws.files()["name"] == "x.txt").any()
    assert ws.verify() == []


def _calls_and_imports(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    actions = {name for name in workflows.__all__ if inspect.isfunction(getattr(workflows, name))}
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in PRIVATE_WRITES:
            found.append(f"{path.relative_to(ROOT)}:{node.lineno} calls {node.func.attr}")
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in actions \
                and isinstance(node.func.value, ast.Name) and node.func.value.id == "workflows":
            found.append(f"{path.relative_to(ROOT)}:{node.lineno} calls workflows.{node.func.attr}")
        if isinstance(node, ast.ImportFrom) and (node.module or "").lstrip(".").startswith("workflows") \
                or isinstance(node, ast.ImportFrom) and (node.module or "").startswith("evalcore.workflows"):
            found += [f"{path.relative_to(ROOT)}:{node.lineno} imports {a.name}" for a in node.names if a.name in actions]
    return found


def test_no_front_end_reaches_past_the_session() -> None:
    files = sorted((ROOT / "dashboard").rglob("*.py")) + sorted((ROOT / "evalcore" / "cli").rglob("*.py"))
    found = [line for path in files for line in _calls_and_imports(path)]
    assert not found, "front ends change the workspace only through evalcore.workflows.Session:\n" + "\n".join(found)


def test_the_workspace_has_no_public_write_method() -> None:
    public = {name.lstrip("_") for name in PRIVATE_WRITES} & {n for n in dir(Workspace) if not n.startswith("_")}
    assert not public, f"public write methods on Workspace: {sorted(public)}"
