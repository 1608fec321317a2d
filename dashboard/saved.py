"""The workspace side of the dashboard: every write a page makes, and the workspace reads pages show.

The actions a person takes go through their session (`evalcore.workflows.Session`, `dashboard.loading.session`),
as on the command line: save an evaluation, reveal the holdout, flag queries for blind re-judging, save a blind
judging round or one judge's marks, adjudicate and freeze several judges' marks, edit the failure ledger, delete
(with a plan first). The session is bound to the person using the
page (`dashboard.access_ui.actor`: it checks their role first and records the change under their name; nobody types
a name); each action stores the files it names (`Uploads.stored_file`: uploads are stored when they arrive, the
sample files when an action names them) and makes its change in one transaction, as the command line does. Besides them: find a run's model line, read a line's history and the
log of who did what, build the meeting report.

Thin over `evalcore.workflows.Session`, `evalcore.store.workspace` and `evalcore.store.ledger`: every number and every
rule lives there. Workspace reads are quick SQLite queries and are not cached (another session may have just
written), except `saved_runs`, read on every rerun of the Failures page, which is kept until the
workspace's `change_marker` moves; errors come back as `Loaded` with the message (`dashboard.loading.attempt`),
never as a traceback.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import pandas as pd

from evalcore.access import require
from evalcore.workflows import SavedRound
from evalcore.workflows.session import Session
from evalcore.analyses.audit import Audit
from evalcore.analyses.judging import JudgingPool
from evalcore.workflows.cases import split_doc_ids
from evalcore.store.ledger import LedgerEntry
from evalcore.metrics.dataset import Dataset, FileRef
from evalcore.metrics.split import SplitRule
from evalcore.store.workspace import Workspace

from dashboard import access_ui, loading

DELETE_KINDS = {"labels": "label set", "run": "run", "evaluation": "evaluation"}


@dataclass(frozen=True)
class SavedRun:
    """Where a run of the current data set is in the workspace: its stored run, line and label set."""

    run: str
    run_id: int
    line: str
    labels: str
    evaluation_id: int


def workspace() -> Workspace | None:
    opened = loading.workspace()
    return opened.value if opened.ok else None


def workspace_opened() -> loading.Loaded:
    """The workspace, or the one-line message why there is none (a page shows it where saving would be)."""
    return loading.workspace()


def _on_workspace(action: Callable[[Workspace], Any]) -> loading.Loaded:
    """``action(workspace)`` as a `Loaded`; without a workspace, why there is none."""
    opened = loading.workspace()
    return loading.attempt(action, opened.value) if opened.ok else opened


def _in_session(needs: str, action: Callable[[Session], Any]) -> loading.Loaded:
    """``action(session)`` as a `Loaded`, after checking the person may take the action ``needs`` (so a refusal
    names what they tried, never a file store underneath), all of it one transaction: the files it stores, the change
    and its record are kept together or not at all."""
    session = loading.session()
    if session is None:
        return loading.workspace()

    def act(ws: Workspace) -> Any:
        require(session.actor, needs)
        return ws.atomic(lambda: action(session))

    return loading.attempt(act, session.workspace)


def labels_name(dataset: Dataset) -> str | None:
    """The label set name the workspace files these labels' evaluations under (the labels' own name; NAME:tune when
    the pages score the tune split of a tune/holdout split)."""
    loaded = loading.scope(dataset)
    return loaded.value.labels.name if loaded.ok else None


_SAVED_RUNS: dict[tuple, dict[str, "SavedRun"]] = {}
_SAVED_RUNS_KEPT = 32
_SAVED_RUNS_LOCK = threading.Lock()  # sessions rerun on threads of one server


def saved_runs(dataset: Dataset) -> dict[str, SavedRun]:
    """The runs of ``dataset`` that a saved evaluation holds (same file, name and model; same label set),
    by run name, each with the model line it was saved under (the latest such save). Kept per data set until
    the workspace's runs or evaluations change (`Workspace.change_marker`, one query instead of several)."""
    ws = workspace()
    name = labels_name(dataset)
    if ws is None or name is None:
        return {}
    key = (str(ws.path), dataset.key, name, ws.change_marker())
    with _SAVED_RUNS_LOCK:
        kept = _SAVED_RUNS.get(key)
    if kept is None:
        kept = _find_saved_runs(ws, dataset, name)
        with _SAVED_RUNS_LOCK:
            if len(_SAVED_RUNS) >= _SAVED_RUNS_KEPT:
                _SAVED_RUNS.pop(next(iter(_SAVED_RUNS)))
            _SAVED_RUNS[key] = kept
    return dict(kept)


def _find_saved_runs(ws: Workspace, dataset: Dataset, name: str) -> dict[str, SavedRun]:
    stored = ws.runs()
    if stored.empty:
        return {}
    found = {}
    for spec in dataset.runs:
        loaded = loading.run(spec)
        if not loaded.ok:
            continue
        same = stored[(stored["file_sha256"] == spec.file.sha256) & (stored["name"] == spec.name)
                      & (stored["model"] == loaded.value.model) & (stored["evaluations"] > 0)]
        for run_id, line in zip(same["id"].tolist()[::-1], same["line"].tolist()[::-1]):
            saved = ws.evaluations(run_id=int(run_id))
            saved = saved[saved["labels"] == name]
            if not saved.empty:
                found[spec.name] = SavedRun(spec.name, int(run_id), str(line), name, int(saved["id"].max()))
                break
    return found


# ----------------------------------------------------------------------------- the actions (evalcore.workflows)


def save_evaluation(dataset: Dataset, k: int, lines: dict[str, str]) -> loading.Loaded:
    """Save the evaluation of ``dataset`` at ``k`` (scored at k = 1 and k, as ``evaluate --k 1,k --save``
    does) with its stored files and the model line of each run (`Session.save_evaluation`: tune numbers
    under NAME:tune, the split in the note); the value is its `SavedRound` (saved, changes per line)."""
    loaded = loading.evaluation(dataset)
    if not loaded.ok:
        return loaded
    listed = loaded.value.at(sorted({1, k}))  # what `evaluate --k 1,k --save` records

    def save(session: Session) -> SavedRound:
        store = loading.uploads()
        run_files = {spec.name: store.stored_file(spec.file, session) for spec in dataset.runs}
        chunked = [spec for spec in dataset.runs if spec.chunks is not None]
        return session.save_evaluation(listed, k=k, labels_file=store.stored_file(dataset.labels, session),
                                    run_files=run_files, lines=lines,
                                    run_format={spec.name: spec.file.format for spec in dataset.runs},
                                    chunk_files={spec.name: store.stored_file(spec.chunks, session) for spec in chunked},
                                    chunks_format={spec.name: spec.chunks.format for spec in chunked})

    return _in_session("save_evaluation", save)


def add_production_miss(dataset: Dataset, query: str, query_text: str, doc_ids: str, source: str,
                        not_in_corpus_yet: bool = False) -> loading.Loaded:
    """Add a query seen failing in production, with its relevant docs (``doc_ids`` as typed: commas, semicolons or
    lines between them), to the label set this data set's evaluations are saved under
    (`Session.add_production_miss`, what ``evalcore workspace add-cases`` does with a file): checked
    against the documents loaded (unless ``not_in_corpus_yet``), saving the labels first when the workspace has
    none yet, on the split the pages score; the value is its `AddedCases`."""
    view = loading.scope(dataset)
    if not view.ok:
        return loading.Loaded(error="The labels cannot be read, so there is no label set to add the case to.")
    documents = loading.documents(dataset.documents) if dataset.documents is not None else None
    known = set(documents.value.frame.index.astype(str)) if documents is not None and documents.ok else None
    labels = view.value.labels
    carries_split = view.value.split is not None and "split" in labels.query_info.columns

    def add(session: Session) -> Any:
        return session.add_production_miss(
            labels.name, query, query_text, split_doc_ids(doc_ids), source=source, labels=labels,
            labels_file=loading.uploads().stored_file(dataset.labels, session), known_docs=known,
            not_in_corpus_yet=not_in_corpus_yet, split=view.value.split if carries_split else None)

    return _in_session("manage_label_versions", add)



def reveal_holdout(dataset: Dataset, runs: Sequence[tuple[str, str]]) -> loading.Loaded:
    """Record a look at the holdout of ``dataset``'s labels (the whole set, with its stored file) with the ``runs``
    (name, model) shown, by the person using this session (`Session.reveal_holdout`: owners only); the
    value is the `Reveal` that unseals it."""
    full = loading.labels(dataset.labels)
    if not full.ok:
        return full
    return _in_session("reveal_holdout", lambda session: session.reveal_holdout(
        full.value, list(runs), rule=SplitRule(dataset.split),
        labels_file=loading.uploads().stored_file(dataset.labels, session)))


def flag_for_rejudging(dataset: Dataset, queries: Sequence[str], found: Audit) -> loading.Loaded:
    """Queue ``queries`` (suspects of the audit ``found``) for blind re-judging in the queue of the whole label set as
    read, saved first with its stored file (`Session.flag_for_rejudging`); the value is `Flagged`."""
    whole = loading.labels(dataset.labels)
    if not whole.ok:
        return whole
    return _in_session("judge", lambda session: session.flag_for_rejudging(
        whole.value, list(queries), scored=found.evaluation.labels.queries.tolist(), suspects=found.suspects,
        suspect_k=found.suspect_k, agree_depth=found.agree_depth, scored_name=found.evaluation.labels.name,
        labels_file=loading.uploads().stored_file(dataset.labels, session)))


def save_judging_round(dataset: Dataset, pool: JudgingPool, marks: dict[str, bool]) -> loading.Loaded:
    """A blind judging round of ``pool`` as a new version of the labels' set, the labels as read (with their stored
    file) saved first when the workspace lacks them (`Session.save_judging_round`); the value is the
    new `LabelVersion`."""
    whole = loading.labels(dataset.labels)
    if not whole.ok:
        return whole
    return _in_session("judge", lambda session: session.save_judging_round(
        whole.value.name, pool, marks, base=whole.value,
        base_file=loading.uploads().stored_file(dataset.labels, session)))


def save_marks(dataset: Dataset, pool: JudgingPool, marks: dict[str, bool]) -> loading.Loaded:
    """The person's marks on ``pool``, kept apart from every other judge's, under the labels' set
    (`Session.save_marks`: no version until the judges' marks are frozen); the value is the entry id."""
    whole = loading.labels(dataset.labels)
    if not whole.ok:
        return whole
    return _in_session("judge", lambda session: session.save_marks(whole.value.name, pool, marks))


def adjudicate(label_set: str, query: str, decisions: dict[str, bool], note: str = "") -> loading.Loaded:
    """An adjudicator's decision on pairs the judges disagree on (`Session.adjudicate`: owners only)."""
    return _in_session("manage_label_versions",
                       lambda session: session.adjudicate(label_set, query, decisions, note=note))


def freeze_panel(dataset: Dataset) -> loading.Loaded:
    """The judges' open marks as one new version of the labels' set, the labels as read (with their stored file)
    saved first when the workspace lacks them (`Session.freeze_panel`: owners only); the value is the version."""
    whole = loading.labels(dataset.labels)
    if not whole.ok:
        return whole
    return _in_session("manage_label_versions", lambda session: session.freeze_panel(
        whole.value.name, base=whole.value, base_file=loading.uploads().stored_file(dataset.labels, session)))


def edit_entry(current: LedgerEntry, status: str | None, tags: Sequence[str], note: str) -> loading.Loaded:
    """Apply what the person changed in the ledger form: status, cause tags added or removed, note
    (`Session.edit_entry`: editors and owners; only what changed is written, and logged)."""
    return _in_session("edit_ledger", lambda session: session.edit_entry(current, status=status, tags=tags, note=note))


def who_acts() -> str:
    """``recorded as ana@example.com`` (or the server's login name without sign-in): said beside each control that
    records its person, instead of asking for a name."""
    person = access_ui.actor()
    return f"recorded as {person.who}" + ("" if person.how == "signed in" else " (the server's login name)")


# ----------------------------------------------------------------------------- reads


def reveal_summary(label_set: str) -> str:
    """``holdout of NAME viewed 3 times, last on ... by ana`` (or never viewed); empty without a workspace."""
    found = _on_workspace(lambda ws: ws.reveal_summary(label_set))
    return found.value if found.ok else ""


def rejudge_queue(label_set: str) -> loading.Loaded:
    """The open re-judging queue of ``label_set``."""
    return _on_workspace(lambda ws: ws.rejudge_queue(label_set))


def label_versions(label_set: str) -> pd.DataFrame | None:
    """Every version of ``label_set``, or None when the workspace has no such set (nothing saved yet)."""
    found = _on_workspace(lambda ws: ws.label_versions(label_set))
    return found.value if found.ok else None


def judging_rounds(label_set: str) -> pd.DataFrame:
    found = _on_workspace(lambda ws: ws.judging_rounds(label_set))
    return found.value if found.ok else pd.DataFrame()


def panel_marks(label_set: str) -> pd.DataFrame:
    """Every mark of several judges on ``label_set`` (`Workspace.panel_marks`); empty without a workspace. Pages pass
    it to their models: a judge's own view shows only what that person marked."""
    found = _on_workspace(lambda ws: ws.panel_marks(label_set))
    return found.value if found.ok else pd.DataFrame()


def entry(line: str, query: str, labels: str) -> loading.Loaded:
    return _on_workspace(lambda ws: ws.archive.entry(line, query, labels=labels))


def lines() -> pd.DataFrame:
    ws = workspace()
    return ws.lines() if ws is not None else pd.DataFrame(columns=["line"])


def history(line: str) -> loading.Loaded:
    return _on_workspace(lambda ws: ws.history(line))


def ledger(line: str, labels: str | None = None) -> loading.Loaded:
    return _on_workspace(lambda ws: ws.archive.ledger(line, labels=labels))


def changes(line: str, labels: str | None = None) -> loading.Loaded:
    return _on_workspace(lambda ws: ws.archive.changes(line, labels=labels))


def evaluations(line: str | None = None) -> pd.DataFrame:
    ws = workspace()
    return ws.evaluations(line) if ws is not None else pd.DataFrame()


def evaluation_run_files(evaluation_id: int) -> set[str]:
    """The content hashes of a saved evaluation's run files (empty when it cannot be read)."""
    found = _on_workspace(lambda ws: {r.file_sha256 for r in ws.evaluation(evaluation_id).runs})
    return found.value if found.ok else set()


def report(evaluation_id: int, k: int | None, docs: Any = None, settings: Any = None) -> loading.Loaded:
    """The meeting report (`evalcore.report.meeting.report_from_workspace`) of a saved evaluation, with the cost of
    k when the documents are given, under the k ``settings`` (a `BudgetSettings`) the person gave."""
    from evalcore.report.meeting import report_from_workspace

    return _on_workspace(lambda ws: report_from_workspace(ws, evaluation_id, k=k, docs=docs, settings=settings,
                                                          workspace_name="of the dashboard's server"))


def listing(kind: str) -> pd.DataFrame:
    """What can be deleted: label sets, runs or evaluations, as the workspace lists them."""
    ws = workspace()
    if ws is None:
        return pd.DataFrame()
    if kind == "labels":
        return ws.label_sets()
    if kind == "run":
        return ws.runs()
    return ws.evaluations()


def plan_delete(kind: str, key: str | int) -> loading.Loaded:
    """What deleting would remove (`Session.plan_deletion`): shown before asking."""
    session = loading.session()
    return loading.attempt(session.plan_deletion, kind, key) if session is not None else loading.workspace()


def delete(kind: str, key: str | int) -> loading.Loaded:
    """Delete one thing (`Session.delete`: owners only, logged)."""
    done = _in_session("delete", lambda session: session.delete(kind, key))
    loading.forget_recorded()
    return done


def events(who: str | None = None, action: str | None = None) -> loading.Loaded:
    """The workspace's log of who did what, newest first (`Workspace.events`), of one person and/or action, ready
    to show: when (stored UTC time; the page shows it to the minute in the visitor's zone), person, action, what it
    was done to, details."""
    def read(ws: Workspace) -> pd.DataFrame:
        found = ws.events(who=who, action=action)
        return pd.DataFrame({"at": found["at"].astype(str),
                             "person": found["who"], "action": found["action"], "what": found["subject"],
                             "details": found["detail"]})

    return _on_workspace(read)


def event_choices() -> tuple[list[str], list[str]]:
    """Everyone the log names and every action it holds (for the filters)."""
    found = _on_workspace(lambda ws: ws.events())
    if not found.ok or found.value.empty:
        return [], []
    frame = found.value
    return sorted(frame["who"].astype(str).unique()), sorted(frame["action"].astype(str).unique())


def with_label_version(dataset: Dataset, name: str, version: int) -> loading.Loaded:
    """``dataset`` scoring version ``version`` of the saved label set ``name`` instead of its labels file.

    The version's normalised JSONL (stored in the workspace under its content hash) becomes the labels file,
    named after the set so the labels keep the set's name (its re-judging queue and rounds). The result is a new
    data set with its own key; the old one is untouched."""
    def build(ws: Workspace) -> Dataset:
        record = ws.label_version(name, int(version))
        stored = ws.file(record.content_sha256)
        return dataset.with_labels(FileRef(name=f"{name}.jsonl", sha256=stored.sha256, size=stored.size))

    return _on_workspace(build)
