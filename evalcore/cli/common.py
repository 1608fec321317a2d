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

from ..access import Actor
from ..analyses.decision import Decision
from ..errors import UsageError
from ..metrics.evaluation import Evaluation
from ..metrics.split import SplitRule, query_splits, scoring_labels
from ..metrics.dataset import Dataset
from ..metrics.dataset_reading import (
    by_path,
    chunk_maps_of,
    from_arguments,
    labels_of,
    read_documents_file,
    read_run_file,
)
from ..report.headlines import overview_headline
from ..report.render import titled_table
from ..safe_text import md_text, terminal_safe

Recording = Callable[[], ModuleType]
"""Loads `evalcore.cli.recording` (the reveal, ``evaluate --save``, ``audit --flag``: the store) on first use."""


# ----------------------------------------------------------------------------- inputs


def dataset_of(args: argparse.Namespace) -> Dataset:
    """The data set the arguments name (`evalcore.metrics.dataset_reading.from_arguments`): --labels, --queries,
    --run, --chunks, --docs and their format options, and --hash-split (the data set's split)."""
    return from_arguments(args.labels, [run_argument(value) for value in args.run],
                          chunks=[run_argument(value) for value in getattr(args, "chunks", None) or []],
                          documents=getattr(args, "docs", None), queries=getattr(args, "queries", None),
                          labels_format=args.labels_format, run_format=args.run_format,
                          documents_format=getattr(args, "docs_format", None),
                          split=split_of(args))


def load(args: argparse.Namespace):
    """The labels, runs and chunk maps the arguments name, read as the dashboard reads an upload
    (`evalcore.metrics.dataset_reading`): labels with the queries file's text, runs, and each chunk run's map by
    run name (each file read once, keeping only the chunks its runs and the labels name; the --docs file, when the
    command takes one, checks the maps and places chunks given by their text)."""
    dataset = dataset_of(args)
    labels = labels_of(dataset, by_path)
    runs = [read_run_file(spec, by_path) for spec in dataset.runs]
    mapped = any(spec.chunks is not None for spec in dataset.runs)
    docs = read_documents_file(dataset.documents, by_path) if dataset.documents is not None and mapped else None
    return labels, runs, chunk_maps_of(dataset, runs, labels, by_path, docs)


def run_argument(value: str) -> tuple[str | None, str]:
    """``--run FILE`` or ``--run NAME=FILE`` (a name for runs whose files share a stem)."""
    name, sep, path = value.partition("=")
    if sep and name and path and not Path(value).exists() and "/" not in name and "\\" not in name:
        return name, path
    return None, value


# ----------------------------------------------------------------------------- the tune/holdout split


def split_of(args: argparse.Namespace) -> float | None:
    """The data set's split as the arguments give it: --hash-split's fraction, or None (the labels' split field)."""
    return getattr(args, "hash_split", None)


def check_split_options(args: argparse.Namespace) -> None:
    """--split, --hash-split, --reveal and --who only make sense together (--who also names the person of a --save or
    --flag)."""
    records = bool(getattr(args, "save", False) or getattr(args, "flag", None))
    if args.split in (None, "tune") and args.reveal:
        raise UsageError("--reveal: only used with --split holdout or --split all; tune numbers are never sealed.")
    if args.who is not None and not args.reveal and not records:
        raise UsageError("--who names the person recorded with a change (--reveal, --save or --flag); add one or "
                         "leave it out.")


def recorded_as(actor: Actor) -> str:
    """``recorded as lee (the login name; --who names someone else)``: said beside every change the command makes."""
    how = ("a claim given with --who, kept beside the login name" if actor.how == "--who" else
           "the login name; --who names someone else")
    return f"recorded as {actor.who} ({how})"


def scope(args: argparse.Namespace, labels, runs, recording: Recording):
    """The labels this command may score (`evalcore.metrics.split.scoring_labels`): the tune split by default when the
    labels carry a split; the holdout or all queries only with --reveal, recorded in the workspace first."""
    check_split_options(args)
    rule = SplitRule(split_of(args))
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
    """The Overview's headline for these runs (`evalcore.report.headlines.overview_headline`): the decision's best run
    in the same sentence as the dashboard's Overview and the meeting report."""
    return overview_headline(Decision(evaluation).best)


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
