"""``evalcore compare``: paired comparison of runs on the same queries, in plain words."""

from __future__ import annotations

import argparse
import json

from ..analyses.compare import DEFAULT_COMPARE_METRICS, compare_evaluation
from ..metrics.measures import Measure
from ..report.compare import comparison_dict, comparison_text
from .common import Recording, add_split, headline, load, scope, split_notice, write, write_headline
from .parser import EXIT_OK


def run(args: argparse.Namespace, recording: Recording) -> int:
    metrics = [Measure.parse(m) for m in (args.metric or DEFAULT_COMPARE_METRICS)]
    ks = sorted({m.k for m in metrics if m.k}) or [1]
    labels, runs = load(args)
    scoped = scope(args, labels, runs, recording)
    evaluation = scoped.evaluate(runs, ks, min_grade=args.min_grade, zero_relevant=args.zero_relevant,
                                 level=args.level, seed=args.seed)
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
