"""``evalcore judge``: blind judging. ``pool`` exports a shuffled pool of every run's top docs for one query (with a
sampled queries file's source and stratum), ``save`` keeps a person's marks as a new label-set version, or with
``--keep-apart`` as one of several judges' marks (`evalcore.cli.judge_panel`: their agreement, disagreements,
adjudication and freeze), ``queue`` lists what waits for re-judging."""

from __future__ import annotations

import argparse

import pandas as pd

from ..analyses.judging import SAMPLE_INFO, JudgingPool, judging_pool, parse_mark, read_marks
from ..analyses.panel import read_sampled_queries
from ..errors import InputError, UsageError
from ..readers.documents import read_documents
from ..safe_text import to_csv, unsafe_cell
from ..store.workspace import Workspace
from ..warning_log import plural
from ..access import local_actor
from ..workflows.session import Session
from .common import frames_json, frames_text, load, note, recorded_as, write
from .parser import EXIT_OK



def pool(args: argparse.Namespace) -> int:
    labels, runs, chunks = load(args)
    if chunks:
        raise UsageError("judge pool pools documents for a person to judge: give the runs of documents, without "
                         "--chunks.")
    info = read_sampled_queries(args.queries).info(args.query) if args.queries else {}
    judged = judging_pool(runs, labels, args.query, args.depth, seed=args.seed, extra=info.get("extra", ()),
                          query_text=info.get("query_text"), source=info.get("source"), stratum=info.get("stratum"))
    texts = None
    if args.docs:
        docs = read_documents(args.docs, format=args.docs_format)
        texts = {d: docs.text(d) or "" for d in judged.docs}
    frame = judged.to_frame(texts)
    text = to_csv(frame)
    if args.output:
        with open(args.output, "w", encoding="utf-8", newline="") as handle:
            handle.write(text)
        logged = " and the docs the sampled queries file's log gave it" if info.get("extra") else ""
        note(f"wrote {args.output}: {len(judged.docs)} docs pooled from the top {judged.depth} of "
             f"{plural(judged.n_runs, 'run')}{logged} for query {judged.query}, shuffled (seed {judged.seed}); fill "
             "in the relevant column (yes or no), then: evalcore judge save LABEL_SET FILE (add --keep-apart when "
             "several people judge it)")
    else:
        write(text, exact=True)  # the pool CSV comes back through `judge save`: ids as they are
    return EXIT_OK


def save(args: argparse.Namespace) -> int:
    judged, marks = read_pool_file(args.file)
    actor = local_actor(args.judge)
    session = Session(Workspace(args.workspace), actor)
    if args.keep_apart:
        return keep_apart(args.name, session, judged, marks)
    version = session.save_judging_round(args.name, judged, marks)
    if version.created:
        note(f"label set {version.ref}: blind judgments of {judged.query} at depth {judged.depth} "
             f"({len(judged.docs)} docs); {version.change}; earlier versions are unchanged; {recorded_as(actor)}")
    else:
        note(f"label set {version.ref} already holds these judgments of {judged.query}; no new version (the judging "
             f"round is recorded); {recorded_as(actor)}")
    return EXIT_OK


def keep_apart(name: str, session: Session, judged: JudgingPool, marks: dict[str, bool]) -> int:
    """One judge's marks kept apart from the others' (`Session.save_marks`): no version until the panel is frozen."""
    session.workspace.label_version(name)  # a saved label set (the freeze adds to it): a misspelt name fails here
    entry = session.save_marks(name, judged, marks)
    note(f"kept the marks of {session.actor.who} on {judged.query} ({len(judged.docs)} docs at depth {judged.depth}) "
         f"apart from the other judges' on label set {name} (entry {entry}; saving this pool again replaces them); "
         f"no version is made until: evalcore judge freeze {name}; {recorded_as(session.actor)}")
    return EXIT_OK


def read_pool_file(path: str) -> tuple[JudgingPool, dict[str, bool]]:
    """A filled-in pool CSV (`pool`) as its pool (with the query's source and stratum when the file has them) and
    each doc's mark, every mark checked (a bad one named by file, line and value)."""
    try:
        frame = pd.read_csv(path, dtype=str, keep_default_na=False)
    except FileNotFoundError:
        raise InputError("an existing judging pool CSV", source=path) from None
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as exc:
        raise InputError(f"a judging pool CSV ({exc})", source=path) from None
    for column in ("query", "doc_id", "query_text", *SAMPLE_INFO):  # undo the formula-safe prefix of the export
        if column in frame.columns:
            frame[column] = frame[column].map(unsafe_cell)
    judged, given = read_marks(frame, path)
    lines = dict(zip(frame["doc_id"].astype(str), range(2, len(frame) + 2)))
    marks = {doc: parse_mark(mark, f"{path}, line {lines[doc]}") for doc, mark in given.items()}
    return judged, marks


def queue(args: argparse.Namespace) -> int:
    workspace = Workspace(args.workspace)
    frames = {"queue": workspace.rejudge_queue(args.name, open_only=not args.all),
              "judging rounds": workspace.judging_rounds(args.name)}
    write((frames_json(frames) if args.format == "json" else frames_text(frames)) + "\n", exact=args.format == "json")
    return EXIT_OK
