"""What the commands share: reading the inputs, the split options and their scope, notices, writing output.

Nothing here touches the workspace: a scoring command reaches it (to record a --reveal) through the
``recording`` loader `main` gives its handler, so a command line that never asks for the workspace never loads it.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import sys
import textwrap
from collections.abc import Callable, Iterable
from pathlib import Path
from types import ModuleType

import pandas as pd

from ..access import Actor, local_actor
from ..analyses.headline import best_run
from ..errors import UsageError
from ..metrics.evaluation import Evaluation
from ..metrics.split import SplitRule, query_splits, scoring_labels
from ..readers.chunks import ChunkMap, read_chunks
from ..readers.documents import read_documents
from ..readers.labels import read_labels
from ..readers.queries import with_query_text
from ..readers.runs import read_run
from ..report.headlines import overview_headline
from ..report.render import titled_table
from ..safe_text import md_text, terminal_safe

Recording = Callable[[], ModuleType]
"""Loads `evalcore.cli.recording` (the reveal, ``evaluate --save``, ``audit --flag``: the store) on first use."""


# ----------------------------------------------------------------------------- inputs


def load(args: argparse.Namespace):
    """The labels, runs and chunk maps named by --labels, --queries, --run and --chunks (and their format options):
    labels (with the queries file's text), runs, and each chunk run's map by run name (a --docs file, when the
    command takes one, checks the maps against the documents and places chunks given by their text)."""
    labels = read_labels(args.labels, format=args.labels_format)
    if getattr(args, "queries", None):
        labels = with_query_text(labels, args.queries)
    runs = [read_run(path, format=args.run_format, name=name) for name, path in map(run_argument, args.run)]
    return labels, runs, chunk_maps(args, runs, labels)


def chunk_maps(args: argparse.Namespace, runs: list, labels) -> dict[str, ChunkMap]:
    """Each run's chunk map from --chunks FILE (every run) and --chunks NAME=FILE (run NAME); a name that is not a
    run's is a usage error, and each file is read once, keeping only the chunks its runs and the labels name
    (`read_chunks` with ``keep``: every row is still checked)."""
    names = [r.name for r in runs]
    given = getattr(args, "chunks", None) or []
    documents = getattr(args, "docs", None)
    docs = read_documents(documents, format=getattr(args, "docs_format", None)) if documents and given else None
    shared, named = None, {}
    for value in given:
        name, path = run_argument(value)
        if name is None:
            if shared is not None:
                raise UsageError("--chunks FILE (for every run) is given twice; name the run of each: --chunks "
                                 "NAME=FILE.")
            shared = path
        elif name not in names:
            raise UsageError(f"--chunks {name}=...: there is no run named {name!r}; runs are: {', '.join(names)}.")
        else:
            named[name] = path
    path_of = {name: named.get(name, shared) for name in names if named.get(name, shared) is not None}
    if not path_of:
        return {}
    labeled = labels.judgments["doc_id"].astype(str).unique()
    read: dict[str, ChunkMap] = {}
    for path in dict.fromkeys(path_of.values()):
        using = [run.doc_ids for run in runs if path_of.get(run.name) == path]
        read[path] = read_chunks(path, documents=docs, keep=using + [labeled])
    return {name: read[path] for name, path in path_of.items()}


def run_argument(value: str) -> tuple[str | None, str]:
    """``--run FILE`` or ``--run NAME=FILE`` (a name for runs whose files share a stem)."""
    name, sep, path = value.partition("=")
    if sep and name and path and not Path(value).exists() and "/" not in name and "\\" not in name:
        return name, path
    return None, value


# ----------------------------------------------------------------------------- the tune/holdout split


def check_split_options(args: argparse.Namespace) -> None:
    """--split, --hash-split, --reveal and --who only make sense together (--who also names the person of a --save or
    --flag)."""
    records = bool(getattr(args, "save", False) or getattr(args, "flag", None))
    if args.split in (None, "tune") and args.reveal:
        raise UsageError("--reveal: only used with --split holdout or --split all; tune numbers are never sealed.")
    if args.who is not None and not args.reveal and not records:
        raise UsageError("--who names the person recorded with a change (--reveal, --save or --flag); add one or "
                         "leave it out.")


def acting(who: str | None) -> Actor:
    """The person the command line records (`evalcore.access.local_actor`): the workspace's owner, named by --who,
    else by the login name."""
    return local_actor(who)


def recorded_as(actor: Actor) -> str:
    """``recorded as lee (the login name; --who names someone else)``: said beside every change the command makes."""
    how = ("a claim given with --who, kept beside the login name" if actor.how == "--who" else
           "the login name; --who names someone else")
    return f"recorded as {actor.who} ({how})"


def scope(args: argparse.Namespace, labels, runs, recording: Recording):
    """The labels this command may score (`evalcore.metrics.split.scoring_labels`): the tune split by default when the
    labels carry a split; the holdout or all queries only with --reveal, recorded in the workspace first."""
    check_split_options(args)
    rule = SplitRule(args.hash_split) if args.hash_split is not None else SplitRule()
    reveal = None
    if args.split in ("holdout", "all"):
        query_splits(labels, rule)  # labels without a split: say so before anything is recorded
        reveal = recording().reveal(args, labels, runs, rule)
    return scoring_labels(labels, rule, reveal, args.split)


def split_notice(scope, fmt: str) -> None:
    """One line on the tune split: how many holdout queries are sealed and how to see them. First on stdout for
    tables (a reader sees it before any number), on stderr beside JSON and CSV (their stdout stays parseable)."""
    if scope.split != "tune":
        return
    total = len(scope.full_queries)
    text = f"tune split (exploratory, {scope.rule}): {scope.n_queries:,} of {total:,} labeled queries scored"
    if scope.sealed:
        text += (f"; {scope.sealed:,} holdout queries sealed: see them with --split holdout --reveal, or every query "
                 "with --split all --reveal (each view is recorded in the workspace)")
    if fmt == "table":
        write(text + "\n\n")
    elif fmt in ("markdown", "html"):
        write(md_text(text) + "\n\n")
    else:
        note(text)


def add_split(data: dict, scope) -> dict:
    """A JSON result with the ``split`` its numbers are on (when the labels carry one)."""
    if scope.split is not None:
        data["split"] = scope.to_dict()
    return data


# ----------------------------------------------------------------------------- output

HEADLINE_WIDTH = 110
"""A headline wraps at this width, as the tables beneath it are about that wide."""


def headline(evaluation: Evaluation) -> str:
    """The Overview's headline for these runs (`evalcore.report.headlines.overview_headline`): the same sentence as
    the dashboard's Overview and the meeting report."""
    return overview_headline(best_run(evaluation))


def write_headline(text: str, fmt: str) -> None:
    """The headline as the first lines of a text or Markdown output (JSON carries it as ``"headline"``)."""
    if fmt == "table":
        write(textwrap.fill(text, width=HEADLINE_WIDTH) + "\n\n")
    elif fmt == "markdown":
        write(f"**{md_text(text)}**\n\n")



def write(text: str, *, exact: bool = False) -> None:
    """Text to stdout; a reader that went away (``evalcore evaluate ... | head``) is not an error.

    Text for people (tables, Markdown) has its control characters escaped (`terminal_safe`: an id may hold ESC
    sequences); ``exact`` output for programs (JSON, CSV, HTML) is written as it is, so ids round-trip."""
    try:
        sys.stdout.write(text if exact else terminal_safe(text))
        sys.stdout.flush()
    except BrokenPipeError:
        try:  # silence the flush at exit; only a real file descriptor can be redirected
            fd = sys.stdout.fileno()
        except (AttributeError, ValueError, io.UnsupportedOperation):
            return
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, fd)


def note(text: str) -> None:
    """One ``evalcore: ...`` line on stderr (what was saved, recorded or written; never a number's only place)."""
    print(terminal_safe(f"evalcore: {text}"), file=sys.stderr)


def warn(warnings: Iterable) -> None:
    """Warnings on stderr, beside a CSV whose stdout must stay parseable."""
    for warning in warnings:
        note(f"warning: [{warning.code}] x{warning.count}: {warning.message}")


def frame_text(frame: pd.DataFrame, title: str) -> str:
    """A DataFrame as an aligned text table under a title (empty frames say so)."""
    if frame.empty:
        return f"{title}\n(none)"
    whole = {c: c not in ("mean", "ci_low", "ci_high", "price_per_mtok") and pd.api.types.is_float_dtype(frame[c])
             and bool((frame[c].dropna() % 1 == 0).all()) for c in frame.columns}  # float only because of gaps (ids, versions): print as integers

    def cell(value, column) -> str:
        if value is None or value is pd.NA or (isinstance(value, float) and value != value):
            return ""
        if isinstance(value, float):
            return str(int(value)) if whole[column] else f"{value:.4f}"
        return str(value)

    body = [[cell(v, c) for v, c in zip(row, frame.columns)] for row in frame.itertuples(index=False)]
    return titled_table(title, [str(c) for c in frame.columns], body)


def frames_text(frames: dict[str, pd.DataFrame]) -> str:
    """Several titled tables, a blank line apart."""
    return "\n\n".join(frame_text(frame, name) for name, frame in frames.items())


def frames_json(frames: dict[str, pd.DataFrame]) -> str:
    """Titled tables as one JSON object of record lists."""
    out = {name: json.loads(frame.to_json(orient="records", date_format="iso")) for name, frame in frames.items()}
    return json.dumps(out, ensure_ascii=False, indent=1)
