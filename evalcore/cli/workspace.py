"""``evalcore workspace``: list, show, delete, extend (add cases to) and verify what the workspace holds."""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

import pandas as pd

from ..errors import UsageError, WorkspaceCorrupt, invalid_parameter
from ..safe_text import terminal_safe
from ..store.chain import describe_heads
from ..store.workspace import ORPHAN_GRACE_S, Orphans, Workspace, default_location
from ..timestamps import minute
from ..warning_log import agree, plural
from ..access import local_actor
from ..workflows.session import Session
from .common import frames_json, frames_text, note, recorded_as, write
from .parser import EXIT_FAILURE, EXIT_OK

LIST_COLUMNS = {
    "labels": ["name", "versions", "latest_version", "fingerprint", "n_queries", "evaluations", "updated_at"],
    "runs": ["id", "name", "model", "line", "price_per_mtok", "dims", "index_bytes", "file_name", "uploaded_at",
             "evaluations"],
    "evaluations": ["id", "created_at", "labels", "labels_version", "fingerprint", "k", "n_queries", "runs"],
    "lines": ["line", "runs", "models", "latest_upload", "evaluations"],
    "files": ["sha256", "name", "size", "stored_at", "used_by"],
    "events": ["at", "who", "action", "subject", "detail"],
}
"""The columns `list` shows of each kind."""


def list_contents(args: argparse.Namespace) -> int:
    workspace = Workspace(args.workspace)
    readers = {"labels": workspace.label_sets, "runs": workspace.runs, "evaluations": workspace.evaluations,
               "lines": workspace.lines, "files": workspace.files}
    if args.what == "events":  # the log of who did what: asked for by name, not part of "all"
        readers = {"events": workspace.events}
    chosen = list(readers) if args.what == "all" else [args.what]
    frames = {}
    for name in chosen:
        frame = readers[name]()
        frames[name] = frame[LIST_COLUMNS[name]] if not frame.empty else frame
    if "files" in frames and not frames["files"].empty:
        frames["files"] = frames["files"].assign(sha256=frames["files"]["sha256"].str.slice(0, 12))
    if args.format == "json":
        write(frames_json(frames) + "\n", exact=True)
    else:
        write(f"workspace {workspace.location}\n\n" + frames_text(frames) + "\n")
    return EXIT_OK


def show(args: argparse.Namespace) -> int:
    workspace = Workspace(args.workspace)
    frames: dict = {}
    lines: list[str] = []
    if args.kind == "labels":
        version = workspace.label_version(args.key, args.version)
        lines.append(f"label set {version.ref}: {version.n_queries} queries, {version.n_judgments} judgments; "
                     f"{version.change}; made {minute(version.created_at)}")
        frames["versions"] = workspace.label_versions(args.key)
    elif args.kind == "run":
        if not args.key.strip().isdigit():
            raise UsageError(f"The run id must be a number (see `evalcore workspace list runs`). Got {args.key!r}.")
        run = workspace.run(int(args.key))
        lines.append(f"run #{run.id} {run.name}: model {run.model}, line {run.line}, file {run.file_name} "
                     f"({run.file_sha256[:12]}), {run.n_queries} queries, uploaded {minute(run.uploaded_at)}; "
                     f"price_per_mtok {run.price_per_mtok}, dims {run.dims}, index_bytes {run.index_bytes}")
        evaluations = workspace.evaluations(run_id=run.id)
        frames["evaluations"] = evaluations[LIST_COLUMNS["evaluations"]] if not evaluations.empty else evaluations
    elif args.kind == "evaluation":
        saved = workspace.evaluation(args.key)
        lines.append(f"{saved.describe()}; saved {minute(saved.created_at)}")
        summary = saved.summary
        at_k = summary[summary["k"].isna() | (summary["k"] == 1) | (summary["k"] == saved.k)]
        frames["summary"] = at_k[["run", "model", "metric", "mean", "ci_low", "ci_high", "n", "labels", "labels_version",
                                  "fingerprint", "note"]]
        for run in saved.runs:
            changes = workspace.archive.changes(run.line, run_id=run.id, labels=saved.labels.name, k=saved.k)
            lines.append(changes.summary())
            if not changes.regressions.empty:
                frames[f"regressions: run {run.name}"] = changes.regressions[
                    ["query", "query_text", "first_rank_before", "first_rank", "status_label", "tags", "note"]]
    else:
        history = workspace.history(args.key, labels=args.labels)
        ledger = workspace.archive.ledger(args.key, labels=args.labels, k=args.k)
        changes = workspace.archive.changes(args.key, labels=args.labels, k=args.k)
        lines.append(changes.summary())
        shown = history[history["metric"].isin(["recall@1", f"recall@{changes.k}", "mrr"])]
        frames["history"] = shown[["step", "run_id", "run", "model", "labels_version", "metric", "mean", "ci_low",
                                   "ci_high", "n"]].assign(run_id=lambda f: f["run_id"].astype(str))
        open_count = int(ledger["open"].sum()) if not ledger.empty else 0
        lines.append(f"ledger at k = {changes.k}: {len(ledger)} queries failed at some point, {open_count} open; "
                     f"showing {min(args.limit, len(ledger))}, regressions first")
        frames["ledger"] = ledger.head(max(args.limit, 0))[
            ["query", "query_text", "status_label", "status_by", "first_rank", "first_failed_run", "fixed_run",
             "regressed_run", "n_failed", "n_runs", "tags", "note"]]
    if args.format == "json":
        frames = {name: (f.astype(object).where(pd.notna(f), None) if not f.empty else f) for name, f in frames.items()}
        write(frames_json({"about": pd.DataFrame({"text": lines}), **frames}) + "\n", exact=True)
    else:
        write("\n".join(lines) + "\n\n" + frames_text(frames) + "\n")
    return EXIT_OK


def delete(args: argparse.Namespace) -> int:
    session = Session(Workspace(args.workspace), local_actor(args.who))
    workspace, actor = session.workspace, session.actor
    plan = session.plan_deletion(args.kind, args.key)
    if not args.yes:
        print(terminal_safe(f"Delete {plan.description} from {workspace.location}? This cannot be undone. [y/N] "), end="",
              file=sys.stderr, flush=True)
        answer = sys.stdin.readline().strip().lower()
        if answer not in ("y", "yes"):
            note("nothing deleted")
            return EXIT_FAILURE
    done = session.delete(args.kind, plan.key)
    note(f"deleted {done.description}; {recorded_as(actor)}")
    return EXIT_OK


def add_cases(args: argparse.Namespace) -> int:
    session = Session(Workspace(args.workspace), local_actor(args.who))
    actor = session.actor
    added = session.add_cases(args.name, args.file, format=args.cases_format, note=args.note)
    version, name = added.version, added.file.name
    if version.created:
        note(f"label set {version.ref}: {version.change} (from {name}); earlier versions are unchanged; "
             f"{recorded_as(actor)}")
    else:
        note(f"label set {version.ref} already has every case in {name}; no new version")
    return EXIT_OK


def verify(args: argparse.Namespace) -> int:
    """Check the workspace (SQLite's checks, its tables, indexes and triggers, the record's hash chains, every saved
    record against the event that sealed it, every stored file against its hash), then remove unused stored files.

    Prints the anchor (the newest event's hash) to keep outside the workspace; ``--expect`` checks an anchor kept
    before. Exit 0 when sound; 1 when a check fails, the workspace refuses to open (its record changed, its version
    lowered) or the record no longer holds the expected event (nothing is removed then). A read-only workspace is
    checked and its unused files listed, not removed.
    """
    minutes = ORPHAN_GRACE_S / 60 if args.older_than is None else args.older_than
    if not minutes >= 0:
        raise invalid_parameter("--older-than", "a number of minutes, 0 or more", minutes)
    noted = _noted(getattr(args, "expect", None))
    try:
        workspace = Workspace(args.workspace)
    except WorkspaceCorrupt as exc:  # refused to open or upgrade: that is what verify found
        return _problems([str(exc)], Path(args.workspace) if args.workspace else default_location())
    problems = workspace.verify()
    anchor = workspace.anchor()
    matched = workspace.find_anchor(noted) if noted is not None else None
    if noted is not None and matched is None:
        problems.append(_anchor_missing(noted, anchor))
    if problems:
        return _problems(problems, workspace.location)
    n_files = workspace.counts()["files"]
    dry_run = args.dry_run or workspace.read_only
    found = Session(workspace, local_actor(getattr(args, "who", None))).remove_orphans(older_than=minutes * 60,
                                                                                  dry_run=dry_run)
    heads, sealed = workspace.record_heads(), workspace.sealed_records()
    chains = "the record's hash chains intact, " if heads else ""
    records = f"{plural(sealed, 'saved record')} matching the events that sealed them, " if sealed else ""
    sound = (f"workspace {workspace.location}: sound (integrity and foreign keys checked, every table, index and "
             f"trigger as evalcore made them, {chains}{records}{plural(n_files, 'stored file')} checked against "
             "their hashes)")
    lines = [sound, describe_heads(heads)]
    if anchor is not None:
        lines.append(f"anchor: {anchor[1]} (event #{anchor[0]}, the newest: keep it outside the workspace, e.g. in the "
                     "release notes or the CI log, and check it later with --expect)")
    if matched is not None:
        since = anchor[0] - matched if anchor else 0
        lines.append(f"expected anchor found: event #{matched}, unchanged, " +
                     (f"and {plural(since, 'event')} recorded since" if since else "still the newest"))
    lines += _orphan_lines(found, minutes, "the workspace is read-only" if workspace.read_only else None)
    write("\n".join(lines) + "\n")
    return EXIT_OK


def _noted(value: str | None) -> str | None:
    """The anchor given with ``--expect``, checked: 16 to 64 hex digits (None: not given)."""
    if value is None:
        return None
    noted = value.strip().lower()
    if not re.fullmatch(r"[0-9a-f]{16,64}", noted):
        raise invalid_parameter("--expect", "the anchor an earlier `evalcore workspace verify` printed (16 to 64 hex "
                                "digits)", value)
    return noted


def _anchor_missing(noted: str, anchor: tuple[int, str] | None) -> str:
    """Why the record no longer holds the expected anchor, in one sentence."""
    shown = noted[:16] + ("..." if len(noted) > 16 else "")
    if anchor is None:
        return (f"the record holds no event, so not the one with the hash {shown} given with --expect: every event was "
                "removed, or this is not the workspace it was noted for")
    return (f"the record holds no event with the hash {shown} given with --expect: its newest events were removed, or "
            f"it was rewritten (it now ends at event #{anchor[0]}, hash {anchor[1][:16]})")


def _problems(problems: list[str], location: Path) -> int:
    write("".join(f"problem: {text}\n" for text in problems)
          + f"workspace {location}: {plural(len(problems), 'problem')} found; nothing removed\n")
    return EXIT_FAILURE


def _orphan_lines(found: Orphans, minutes: float, kept_because: str | None) -> list[str]:
    """What the clean-up removed (or would remove) and kept, in words."""
    age = f"stored more than {minutes:g} minutes ago"
    if not found.files:
        lines = [f"no unused stored file {age}"]
    else:
        verb = "removed" if found.removed else "would remove" if kept_because is None else "found"
        head = (f"{verb} {plural(len(found.files), 'unused stored file')} ({found.size:,} bytes) that no label set, "
                f"run, evaluation or dashboard data set uses, {age}")
        lines = [head + (f" (not removed: {kept_because})" if kept_because else "") + ":"]
        lines += [f"  {f.short}  {f.name}  {f.size:,} bytes  stored {minute(f.stored_at)}" for f in found.files]
    if found.stray_blocks:
        lines.append(f"{'removed' if found.removed else 'found'} {plural(found.stray_blocks, 'content row')} "
                     "without a stored file")
    if found.recent:
        lines.append(f"kept {plural(found.recent, 'unused file')} stored in the last {minutes:g} minutes (a save "
                     f"running now may be about to use {agree(found.recent, 'it', 'them')})")
    return lines
