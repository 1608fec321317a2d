"""``evalcore workspace``: list, show, delete, extend (add cases to) and verify what the workspace holds."""

from __future__ import annotations

import argparse
import sys

import pandas as pd

from ..errors import UsageError, invalid_parameter
from ..safe_text import terminal_safe
from ..store.chain import describe_heads
from ..store.workspace import ORPHAN_GRACE_S, Orphans, Workspace
from ..timestamps import minute
from ..warning_log import agree, plural
from ..workflows import add_cases as add_cases_to
from ..workflows import delete as delete_from
from .common import acting, frames_json, frames_text, note, recorded_as, write
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
    workspace = Workspace(args.workspace)
    actor = acting(args.who)
    plan = workspace.delete(args.kind, args.key, dry_run=True)
    if not args.yes:
        print(terminal_safe(f"Delete {plan.description} from {workspace.location}? This cannot be undone. [y/N] "), end="",
              file=sys.stderr, flush=True)
        answer = sys.stdin.readline().strip().lower()
        if answer not in ("y", "yes"):
            note("nothing deleted")
            return EXIT_FAILURE
    done = delete_from(workspace, args.kind, plan.key, actor=actor)
    note(f"deleted {done.description}; {recorded_as(actor)}")
    return EXIT_OK


def add_cases(args: argparse.Namespace) -> int:
    actor = acting(args.who)
    added = add_cases_to(Workspace(args.workspace), args.name, args.file, actor=actor, format=args.cases_format,
                         note=args.note)
    version, name = added.version, added.file.name
    if version.created:
        note(f"label set {version.ref}: {version.change} (from {name}); earlier versions are unchanged; "
             f"{recorded_as(actor)}")
    else:
        note(f"label set {version.ref} already has every case in {name}; no new version")
    return EXIT_OK


def verify(args: argparse.Namespace) -> int:
    """Check the workspace (SQLite's checks, its tables and triggers, the record's hash chains, every stored file
    against its hash), then remove unused stored files.

    Exit 0 when sound; 1 when a check fails (nothing is removed then). A read-only workspace is checked and its
    unused files listed, not removed.
    """
    minutes = ORPHAN_GRACE_S / 60 if args.older_than is None else args.older_than
    if not minutes >= 0:
        raise invalid_parameter("--older-than", "a number of minutes, 0 or more", minutes)
    workspace = Workspace(args.workspace)
    problems = workspace.verify()
    n_files = workspace.counts()["files"]
    if problems:
        write("".join(f"problem: {text}\n" for text in problems)
              + f"workspace {workspace.location}: {plural(len(problems), 'problem')} found; nothing removed\n")
        return EXIT_FAILURE
    dry_run = args.dry_run or workspace.read_only
    found = workspace.remove_orphans(older_than=minutes * 60, dry_run=dry_run)
    heads = workspace.record_heads()
    chains = "the record's hash chains intact, " if heads else ""
    sound = (f"workspace {workspace.location}: sound (integrity and foreign keys checked, every table and trigger "
             f"there, {chains}{plural(n_files, 'stored file')} checked against their hashes)")
    record = describe_heads(heads) + (" (note these elsewhere: only a comparison with them tells a rewrite of the "
                                      "whole record, or entries added at its end)" if heads else "")
    lines = [sound, record]
    lines += _orphan_lines(found, minutes, "the workspace is read-only" if workspace.read_only else None)
    write("\n".join(lines) + "\n")
    return EXIT_OK


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
    if found.stray_chunks:
        lines.append(f"{'removed' if found.removed else 'found'} {plural(found.stray_chunks, 'content row')} "
                     "without a stored file")
    if found.recent:
        lines.append(f"kept {plural(found.recent, 'unused file')} stored in the last {minutes:g} minutes (a save "
                     f"running now may be about to use {agree(found.recent, 'it', 'them')})")
    return lines
