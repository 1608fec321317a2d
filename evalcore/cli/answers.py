"""``evalcore answers``: answer grades joined to retrieval, in plain words first, then the numbers.

Reads the grade files (`evalcore.readers.grades`), the labels and the runs when given, scores the runs at ``--k`` on
the labels' scored side (the tune split when the labels carry one, as every scoring command), joins the grades to
the labeled queries (`evalcore.analyses.answer_join`) and prints `evalcore.analyses.answers`' study as
`evalcore.report.answers` words it.
"""

from __future__ import annotations

import argparse
import json

from ..analyses.answer_join import join_grades
from ..analyses.answers import AnswerStudy, answer_study
from ..errors import UsageError, invalid_parameter
from ..metrics.evaluation import Evaluation
from ..readers.grades import GradeSet, read_grades
from ..readers.labels import LabelSet
from ..report.answers import answers_csv, answers_dict, answers_text
from .common import Recording, add_split, load, run_argument, scope, split_notice, warn, write
from .parser import EXIT_OK


def run(args: argparse.Namespace, recording: Recording) -> int:
    check_options(args)
    labels, runs, chunks = None, [], {}
    if args.labels:
        args.run = args.run or []
        labels, runs, chunks = load(args)  # as every scoring command reads labels, queries, runs and chunk maps
    grade_sets = read_grade_files(args)
    scoped = scope(args, labels, runs, recording) if labels is not None else None
    evaluation = None
    if runs:
        evaluation = scoped.evaluate(runs, (args.k,), min_grade=1 if args.min_grade is None else args.min_grade,
                                     zero_relevant=args.zero_relevant or "exclude", level=args.level,
                                     seed=args.seed, chunks=chunks or None)
    study = grade_study(grade_sets, labels, scoped, evaluation, k=args.k, good=args.good, level=args.level,
                        seed=args.seed, metrics=args.metric)
    joined = study.joined
    warnings = list(joined.warnings)
    warnings += list(evaluation.all_warnings if evaluation is not None else labels.warnings if labels else ())
    warnings = list(dict.fromkeys(warnings))  # one line per warning, however many places carry it
    if scoped is not None:
        split_notice(scoped, args.format)
    if args.format == "json":
        data = answers_dict(study)
        data["warnings"] = [w.to_dict() for w in warnings]
        data = add_split(data, scoped) if scoped is not None else data
        write(json.dumps(data, ensure_ascii=False, allow_nan=False) + "\n", exact=True)
    elif args.format == "csv":
        write(answers_csv(study), exact=True)
    else:
        write(answers_text(study))
    warn(warnings)
    return EXIT_OK


def read_grade_files(args: argparse.Namespace) -> list[GradeSet]:
    """The ``--grades NAME=FILE`` files (``FILE`` alone: named after its stem), read as ``--grades-format`` and
    ``--query-var`` say: for `evalcore answers` and `evalcore report` alike."""
    return [read_grades(path, run=name, format=args.grades_format, query_var=getattr(args, "query_var", None))
            for name, path in map(run_argument, args.grades)]


def grade_study(grade_sets: list[GradeSet], labels: LabelSet | None, scoped, evaluation: Evaluation | None, *,
                k: int, good: float, level: float, seed: int, metrics: list[str] | None = None) -> AnswerStudy:
    """The grades joined to the labeled queries the command scores (``scoped``: its tune side, a sealed holdout
    counted, not named) and studied beside ``evaluation`` at ``k``: every number `evalcore answers` prints, and the
    ones `evalcore report --grades` shows."""
    joined = join_grades(grade_sets, labels, scored=None if scoped is None else list(scoped.labels.queries),
                         runs=list(evaluation.run_names) if evaluation is not None else [], metrics=metrics)
    return answer_study(joined, evaluation, k=k, good=good, level=level, seed=seed)


def check_options(args: argparse.Namespace) -> None:
    """What the options need of each other: runs and a queries file need labels (recall@k is measured against them,
    the texts are the labels'); k is a whole number of at least 1; --good a grade between 0 and 1."""
    if args.run and not args.labels:
        raise UsageError("--run needs --labels: recall@k, set beside the answers, is measured against the labels.")
    if args.queries and not args.labels:
        raise UsageError("--queries gives the labeled queries their text: it needs --labels.")
    if args.chunks and not args.run:
        raise UsageError("--chunks maps the chunks a run ranks: it needs --run.")
    if not args.labels and (args.split is not None or args.hash_split is not None or args.reveal):
        raise UsageError("--split, --hash-split and --reveal choose which labeled queries count: they need --labels.")
    if args.k < 1:
        raise invalid_parameter("k", "a whole number of at least 1", args.k)
    if not 0 <= args.good <= 1:
        raise invalid_parameter("good", "a grade between 0 and 1", args.good)
