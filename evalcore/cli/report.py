"""``evalcore report``: the one-page meeting report of a saved evaluation or of files (Markdown or HTML); with
``--grades``, each run's answer grade beside recall (read and studied as `evalcore answers` does:
`evalcore.cli.answers`)."""

from __future__ import annotations

import argparse
import json
import os

from ..analyses.answer_join import DEFAULT_GOOD
from ..analyses.k_settings import BudgetSettings
from ..errors import UsageError, invalid_parameter
from ..metrics.failure import FAILURE_MODE, MISS_NAMES
from ..readers.documents import read_documents
from ..report.meeting import build_report, report_from_workspace
from ..store.workspace import Workspace
from .answers import grade_study, read_grade_files
from .common import Recording, load, note, scope, split_notice, write
from .parser import EXIT_OK


def run(args: argparse.Namespace, recording: Recording) -> int:
    settings = BudgetSettings(chunk_tokens=args.chunk_tokens, price_per_mtok=args.price_per_mtok,
                              requests_per_month=args.requests_per_month, lam=args.lam,
                              value_per_point=args.value_per_point)
    options = {"docs": read_documents(args.docs, format=args.docs_format) if args.docs else None,
               "settings": settings, "baseline": args.baseline, "top_failures": args.top_failures,
               "title": args.title}
    grades = _grade_files(args)
    if args.labels is not None or args.run is not None:
        report = _from_files(args, recording, options, grades)
    else:
        given = [flag for flag, value in (("--min-grade", args.min_grade), ("--zero-relevant", args.zero_relevant),
                                          ("--level", args.level), ("--seed", args.seed),
                                          ("--labels-format", args.labels_format),
                                          ("--run-format", args.run_format), ("--split", args.split),
                                          ("--hash-split", args.hash_split), ("--reveal", args.reveal or None),
                                          ("--who", args.who), ("--label-set", args.label_set)) if value is not None]
        if given:
            raise UsageError(f"{', '.join(given)}: only used for a report from files (--labels and --run); a saved "
                             "evaluation keeps its own settings (and holds tune numbers only when the labels carry "
                             "a split).")
        workspace = Workspace(args.workspace)
        evaluation_id = workspace.evaluation_id(args.evaluation or "latest")
        if args.evaluation is None:
            note(f"report of evaluation {evaluation_id}, the latest in {workspace.location}")
        report = report_from_workspace(workspace, evaluation_id, k=args.k, grades=grades, good=args.good,
                                       **options)
    _write_report(args, report)
    return EXIT_OK


def _grade_files(args: argparse.Namespace) -> list | None:
    """The --grades files, read first (a bad one stops the command before anything is scored or recorded)."""
    if not args.grades:
        given = [flag for flag, value in (("--grades-format", args.grades_format), ("--query-var", args.query_var),
                                          ("--good", args.good)) if value is not None]
        if given:
            raise UsageError(f"{', '.join(given)}: only used with --grades NAME=FILE (answer grades).")
        return None
    if args.good is not None and not 0 <= args.good <= 1:
        raise invalid_parameter("good", "a grade between 0 and 1", args.good)
    return read_grade_files(args)


def _from_files(args: argparse.Namespace, recording: Recording, options: dict, grades: list | None):
    if args.evaluation is not None or (args.workspace is not None and not args.reveal):
        raise UsageError("Give either --evaluation (a saved evaluation) or --labels and --run (files), not both "
                         "(--workspace goes with --evaluation, or with --reveal to record the view).")
    if args.labels is None or args.run is None:
        raise UsageError("A report from files needs both --labels and --run.")
    k = 10 if args.k is None else args.k
    labels, runs, chunks = load(args)
    scoped = scope(args, labels, runs, recording)
    evaluation = scoped.evaluate(runs, sorted({1, k}), chunks=chunks or None,
                                 min_grade=1 if args.min_grade is None else args.min_grade,
                                 zero_relevant=args.zero_relevant or "exclude",
                                 level=0.95 if args.level is None else args.level,
                                 seed=0 if args.seed is None else args.seed)
    answers = None
    if grades:
        answers = grade_study(grades, labels, scoped, evaluation, k=k,
                              good=DEFAULT_GOOD if args.good is None else args.good, level=evaluation.level,
                              seed=evaluation.seed)
    report = build_report(evaluation, k=k, answers=answers, **options)
    if scoped.split == "tune":
        split_notice(scoped, "stderr")
    return report


def _write_report(args: argparse.Namespace, report) -> None:
    """To --output (the format from its extension unless --format says), else to stdout; and --failures-csv."""
    fmt = args.format
    if fmt == "json":
        if args.output:
            raise UsageError("--format json prints the decisions; --output writes the Markdown or HTML page.")
        write(json.dumps(report.to_dict(), ensure_ascii=False, allow_nan=False) + "\n", exact=True)
    elif args.output:
        suffix = os.path.splitext(args.output)[1].lower()
        if fmt is None:
            fmt = "html" if suffix in (".html", ".htm") else "markdown"
        if (fmt == "html") != (suffix in (".html", ".htm")) or suffix not in (".html", ".htm", ".md", ".markdown"):
            raise UsageError(f"--output {args.output}: use a .html file for --format html and a .md file for "
                             "markdown.")
        for path in report.write(args.output, charts=not args.no_charts):
            note(f"wrote {path} ({path.stat().st_size:,} bytes)")
    elif (fmt or "markdown") == "html":
        write(report.to_html(charts=not args.no_charts), exact=True)
    else:
        write(report.to_markdown())
    if args.failures_csv:
        with open(args.failures_csv, "w", encoding="utf-8", newline="") as handle:
            handle.write(report.failures_csv())
        note(f"wrote {args.failures_csv} ({len(report.failures)} failures at k = {report.k}: queries that "
             f"{MISS_NAMES[FAILURE_MODE]})")
