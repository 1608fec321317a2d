"""``evalcore audit``: can these numbers be trusted (blind labels, pooling bias, judged depth with bounds, labels to
check); ``--flag`` queues queries for blind re-judging."""

from __future__ import annotations

import argparse

from ..analyses.audit import audit_runs
from ..errors import UsageError
from .common import Recording, load, scope, split_notice, write
from .parser import EXIT_OK


def run(args: argparse.Namespace, recording: Recording) -> int:
    if args.flag is None and not args.reveal and (args.workspace is not None or args.label_set is not None):
        raise UsageError("--workspace and --label-set are only used with --flag or --reveal.")
    labels, runs, chunks = load(args)
    scoped = scope(args, labels, runs, recording)
    found = audit_runs(runs, scoped, args.k, chunks=chunks or None, min_grade=args.min_grade,
                       zero_relevant=args.zero_relevant,
                       level=args.level, seed=args.seed, pool_depth=args.pool_depth, min_judged=args.min_judged,
                       suspect_k=args.suspect_k, agree_depth=args.agree_depth, min_n=args.min_slice_n)
    split_notice(scoped, args.format)
    if args.format == "json":
        write(found.to_json() + "\n", exact=True)
    else:
        write(found.to_text(markdown=args.format == "markdown"))
    if args.flag:
        recording().flag(args, scoped, labels, found)  # the workspace side: `recording.flag`
    return EXIT_OK
