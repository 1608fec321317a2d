"""``evalcore compare``: paired comparison of runs on the same queries, in plain words."""

from __future__ import annotations

import argparse
import json

from ..analyses.budget import k_budget
from ..analyses.compare import DEFAULT_COMPARE_METRICS, compare_evaluation
from ..analyses.k_settings import DEFAULT_MAX_K
from ..analyses.decision import Decision
from ..errors import UsageError
from ..metrics.measures import Measure
from ..readers.documents import read_documents
from ..report.choose_k import at_tokens_dict, at_tokens_text
from ..report.compare import comparison_dict, comparison_text
from .common import Recording, add_split, headline, load, scope, split_notice, warn, write, write_headline
from .parser import EXIT_OK


def run(args: argparse.Namespace, recording: Recording) -> int:
    if args.at_tokens is not None:
        return at_tokens_run(args, recording)
    metrics = [Measure.parse(m) for m in (args.metric or DEFAULT_COMPARE_METRICS)]
    ks = sorted({m.k for m in metrics if m.k}) or [1]
    labels, runs, chunks = load(args)
    scoped = scope(args, labels, runs, recording)
    evaluation = scoped.evaluate(runs, ks, min_grade=args.min_grade, zero_relevant=args.zero_relevant,
                                 level=args.level, seed=args.seed, chunks=chunks or None)
    report = compare_evaluation(evaluation, [str(m) for m in metrics], args.baseline, alpha=args.alpha,
                                target_diff=args.target_diff)
    said = headline(evaluation)
    write_headline(said, args.format)
    split_notice(scoped, args.format)
    if args.format == "json":
        write(json.dumps(add_split({"headline": said, **comparison_dict(report)}, scoped), ensure_ascii=False, allow_nan=False) + "\n", exact=True)
    else:
        write(comparison_text(report, markdown=args.format == "markdown"))
    return EXIT_OK


def at_tokens_run(args: argparse.Namespace, recording: Recording) -> int:
    """``compare --at-tokens N``: each run (each chunking) at its largest k within N mean prompt tokens, compared per
    query with the best of them there."""
    if args.metric:
        raise UsageError("--at-tokens compares at a prompt budget, not at a k: leave --metric out (choose what is "
                         "compared with --at-tokens-metric).")
    labels, runs, chunks = load(args)
    scoped = scope(args, labels, runs, recording)
    docs = read_documents(args.docs, format=args.docs_format) if args.docs else None
    evaluation = scoped.evaluate(runs, DEFAULT_MAX_K, min_grade=args.min_grade, zero_relevant=args.zero_relevant,
                                 level=args.level, seed=args.seed, chunks=chunks or None)
    budget = k_budget(evaluation, docs=docs, chunk_tokens=args.chunk_tokens, level=args.level, rng=args.seed)
    found = Decision(evaluation, budget=budget).at_tokens(args.at_tokens, args.at_tokens_metric, alpha=args.alpha)
    split_notice(scoped, args.format)
    if args.format == "json":
        write(json.dumps(add_split(at_tokens_dict(found), scoped), ensure_ascii=False, allow_nan=False) + "\n",
              exact=True)
    else:
        write(at_tokens_text(found, markdown=args.format == "markdown"))
    warn(budget.warnings)
    return EXIT_OK
