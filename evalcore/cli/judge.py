"""``evalcore judge``: blind judging. ``pool`` exports a shuffled pool of every run's top docs for one query, ``save``
keeps a person's marks as a new label-set version, ``queue`` lists what waits for re-judging."""

from __future__ import annotations

import argparse

import pandas as pd

from ..analyses.judging import judging_pool, read_marks
from ..errors import InputError, UsageError
from ..readers.documents import read_documents
from ..safe_text import to_csv
from ..store.workspace import Workspace
from ..access import local_actor
from ..workflows.session import Session
from .common import frames_json, frames_text, load, note, recorded_as, write
from .parser import EXIT_OK


def pool(args: argparse.Namespace) -> int:
    labels, runs, chunks = load(args)
    if chunks:
        raise UsageError("judge pool pools documents for a person to judge: give the runs of documents, without "
                         "--chunks.")
    judged = judging_pool(runs, labels, args.query, args.depth, seed=args.seed)
    texts = None
    if args.docs:
        docs = read_documents(args.docs, format=args.docs_format)
        texts = {d: docs.text(d) or "" for d in judged.docs}
    text = to_csv(judged.to_frame(texts))
    if args.output:
        with open(args.output, "w", encoding="utf-8", newline="") as handle:
            handle.write(text)
        note(f"wrote {args.output}: {len(judged.docs)} docs pooled from the top {judged.depth} of {judged.n_runs} "
             f"runs for query {judged.query}, shuffled (seed {judged.seed}); fill in the relevant column (yes or no), "
             "then: evalcore judge save LABEL_SET FILE")
    else:
        write(text, exact=True)  # the pool CSV comes back through `judge save`: ids as they are
    return EXIT_OK


def save(args: argparse.Namespace) -> int:
    try:
        frame = pd.read_csv(args.file, dtype=str, keep_default_na=False)
    except FileNotFoundError:
        raise InputError("an existing judging pool CSV", source=args.file) from None
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as exc:
        raise InputError(f"a judging pool CSV ({exc})", source=args.file) from None
    for column in ("query", "doc_id", "query_text"):  # undo the formula-safe prefix of the export
        if column in frame.columns:
            frame[column] = frame[column].map(unsafe_cell)
    judged, marks = read_marks(frame, args.file)
    actor = local_actor(args.judge)
    version = Session(Workspace(args.workspace), actor).save_judging_round(args.name, judged, marks)
    if version.created:
        note(f"label set {version.ref}: blind judgments of {judged.query} at depth {judged.depth} "
             f"({len(judged.docs)} docs); {version.change}; earlier versions are unchanged; {recorded_as(actor)}")
    else:
        note(f"label set {version.ref} already holds these judgments of {judged.query}; no new version (the judging "
             f"round is recorded); {recorded_as(actor)}")
    return EXIT_OK


def unsafe_cell(value: str) -> str:
    """A cell written by `safe_text.to_csv` back to its text (its leading ' before = + - @ removed)."""
    if isinstance(value, str) and len(value) > 1 and value[0] == "'" and value[1] in "=+-@\t\r":
        return value[1:]
    return value


def queue(args: argparse.Namespace) -> int:
    workspace = Workspace(args.workspace)
    frames = {"queue": workspace.rejudge_queue(args.name, open_only=not args.all),
              "judging rounds": workspace.judging_rounds(args.name)}
    write((frames_json(frames) if args.format == "json" else frames_text(frames)) + "\n", exact=args.format == "json")
    return EXIT_OK
