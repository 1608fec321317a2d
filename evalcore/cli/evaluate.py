"""``evalcore evaluate``: score runs against labels and print the numbers (optionally by slice, optionally saved)."""

from __future__ import annotations

import argparse

import pandas as pd

from ..analyses.slices import slice_metrics
from ..errors import UsageError
from ..metrics.measures import check_k, parse_ks
from ..report.render import evaluation_csv, evaluation_json, evaluation_table, slices_table
from ..safe_text import to_csv
from .common import Recording, check_split_options, headline, load, scope, split_notice, warn, write, write_headline
from .parser import EXIT_OK


def run(args: argparse.Namespace, recording: Recording) -> int:
    check_split_options(args)
    check_save_options(args)
    stored = recording().store_inputs(args) if args.save else None  # the files are kept before anything reads them
    labels, runs, chunks = load(args)
    scoped = scope(args, labels, runs, recording)
    evaluation = scoped.evaluate(runs, args.k, min_grade=args.min_grade, zero_relevant=args.zero_relevant,
                                 level=args.level, seed=args.seed, chunks=chunks or None)
    split = evaluation.split if scoped.split is not None else None
    slices = None
    if args.slice_by:
        slices = pd.concat([slice_metrics(evaluation, field, min_n=args.min_slice_n) for field in args.slice_by],
                           ignore_index=True)
        if split is not None:
            slices = slices.assign(split=split.split)
    said = headline(evaluation) if args.format != "csv" else None
    if said is not None:
        write_headline(said, args.format)
    split_notice(scoped, args.format)
    if args.format == "json":
        write(evaluation_json(evaluation, per_query=args.per_query, slices=slices, headline=said) + "\n", exact=True)
    elif args.format == "csv":
        write(to_csv(slices) if slices is not None else evaluation_csv(evaluation, per_query=args.per_query), exact=True)
        warn(evaluation.all_warnings)
    else:
        markdown = args.format == "markdown"
        write(evaluation_table(evaluation, per_query=args.per_query, markdown=markdown))
        if slices is not None:
            write("\n" + slices_table(slices, markdown=markdown))
    if stored is not None:
        recording().save(args, stored, evaluation)
    return EXIT_OK


def check_save_options(args: argparse.Namespace) -> None:
    """--workspace, --label-set, --line and --save-k go with --save (the first two with --reveal too), and --save
    keeps tune numbers only."""
    if args.save and args.split in ("holdout", "all"):
        raise UsageError("--save stores tune numbers only: anything in the workspace history is shown again without "
                         "a reveal, so holdout and all-query numbers are never saved (the reveal log records who saw "
                         "them). Save without --split (the tune split), or leave --save out.")
    if not args.save:
        given = [flag for flag, value in (("--workspace", args.workspace), ("--label-set", args.label_set),
                                          ("--line", args.line), ("--save-k", args.save_k)) if value is not None
                 and not (args.reveal and flag in ("--workspace", "--label-set"))]
        if given:
            raise UsageError(f"{', '.join(given)}: only used with --save; add --save or leave "
                             f"{'it' if len(given) == 1 else 'them'} out.")
    elif args.save_k is not None:
        check_k(args.save_k, max(parse_ks(args.k)), name="save_k")
