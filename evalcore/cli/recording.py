"""The scoring commands' side of the workspace: the holdout reveal, ``evaluate --save`` and ``audit --flag``.

Each parses what the command line gave, acts through the person's session (`evalcore.workflows.Session`: one per
command, the person named by --who or the login name) and says what it did on stderr.
Loaded only when a command line asks for the workspace (``main`` hands scoring commands a loader), so
``evalcore evaluate`` without --save or --reveal never imports the store.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from ..errors import UsageError
from ..metrics.split import HoldoutSealed
from ..store.workspace import DB_NAME, Workspace, default_location
from ..access import local_actor
from ..workflows.session import Session
from .common import note, recorded_as, run_argument


def reveal(args: argparse.Namespace, labels, runs, rule):
    """The recorded reveal that unseals the holdout (refused without --reveal, with how often it was seen)."""
    workspace_dir = getattr(args, "workspace", None)
    label_set = getattr(args, "label_set", None)
    if not args.reveal:
        place = Path(workspace_dir).expanduser() if workspace_dir is not None else default_location()
        seen = ""
        if (place / DB_NAME).exists():
            seen = " (" + Workspace(workspace_dir).reveal_summary(label_set or labels.name) + ")"
        raise HoldoutSealed(f"Holdout numbers are sealed{seen}. Tune on the tune split (the default); when you are "
                            f"ready to report, add --reveal to --split {args.split}: the view is recorded in the "
                            "workspace and counted.")
    session = Session(Workspace(workspace_dir), local_actor(args.who))
    workspace, actor = session.workspace, session.actor
    done = workspace.atomic(lambda: session.reveal_holdout(
        labels, [(r.name, r.model) for r in runs], rule=rule, label_set=label_set,
        labels_file=session.store_file(args.labels)))
    note(f"holdout revealed and recorded (reveal #{done.id}: {workspace.reveal_summary(done.label_set)}; labels "
         f"{done.label_set} v{done.version} #{done.fingerprint}, {rule}) in {workspace.location}; "
         f"{recorded_as(actor)}")
    return done


# ----------------------------------------------------------------------------- evaluate --save


def store_inputs(args: argparse.Namespace):
    """Open the workspace (a session for the person acting) and store the labels and run files as they are, before
    anything reads them."""
    session = Session(Workspace(args.workspace), local_actor(args.who))
    runs = [session.store_file(path) for _, path in map(run_argument, args.run)]
    chunks = {value: session.store_file(path) for value, (_, path) in
              ((value, run_argument(value)) for value in getattr(args, "chunks", None) or [])}
    return session, session.store_file(args.labels), runs, chunks


def run_lines(given: list[str] | None, names: list[str]) -> dict[str, str]:
    """--line RUN=LINE (or LINE alone with a single run) as {run: line}."""
    lines = {}
    for item in given or []:
        run, sep, line = item.partition("=")
        if not sep:
            if len(names) != 1:
                raise UsageError(f"--line {item!r}: with several runs write RUN=LINE (runs: {', '.join(names)}).")
            run, line = names[0], item
        if not run.strip() or not line.strip():
            raise UsageError(f"--line {item!r}: expected RUN=LINE with a run name and a line name.")
        lines[run.strip()] = line.strip()
    return lines


def save(args: argparse.Namespace, stored, evaluation) -> None:
    """Save ``evaluation`` with the files `store_inputs` kept (`Session.save_evaluation`: tune numbers go
    under the label set NAME:tune) and say what changed on each run's model line."""
    session, labels_file, run_files, chunk_files = stored
    workspace, actor = session.workspace, session.actor
    names = evaluation.run_names
    by_path = {run_argument(value)[1]: stored_file for value, stored_file in chunk_files.items()}
    maps = {name: by_path[found.source] for name, found in evaluation.chunk_maps.items() if found.source in by_path}
    done = session.save_evaluation(evaluation, k=args.save_k, labels_file=labels_file,
                                   run_files=dict(zip(names, run_files)), lines=run_lines(args.line, names),
                                   label_set=args.label_set, run_format=args.run_format, chunk_files=maps)
    saved = done.saved
    if saved.created:
        note(f"saved {saved.describe()} in the workspace {workspace.location}; {recorded_as(actor)}")
    else:
        note(f"already saved as evaluation {saved.id} (same label-set version, runs and settings) in "
             f"{workspace.location}; nothing new stored")
    for changes in done.changes:
        note(changes.summary())


# ----------------------------------------------------------------------------- audit --flag


def flag(args: argparse.Namespace, scope, whole, found) -> None:
    """Queue --flag queries for blind re-judging (`Session.flag_for_rejudging`): only queries the audit
    scored (with a split: the tune queries, or every query after a reveal), in the queue of the whole label set as
    read; the labels are saved as a version first, never edited."""
    session = Session(Workspace(args.workspace), local_actor(args.who))
    actor = session.actor
    done = session.flag_for_rejudging(whole, args.flag, scored=scope.labels.queries.tolist(),
                                      scored_name=scope.labels.name, suspects=found.suspects,
                                      suspect_k=found.suspect_k, agree_depth=found.agree_depth,
                                      label_set=args.label_set, labels_file=args.labels)
    for query, entry in done.entries:
        note(f"queued {query} of {done.version.ref} for blind re-judging (entry {entry}); the labels are unchanged. "
             f"Next: evalcore judge pool --query {query} ...; {recorded_as(actor)}")
