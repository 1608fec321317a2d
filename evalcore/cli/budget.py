"""``evalcore budget``: recall@k next to the prompt-token cost of k chunks, and the k to take per run."""

from __future__ import annotations

import argparse
import json
import textwrap

from ..analyses.budget import BudgetSettings, k_budget
from ..analyses.decision import Decision
from ..metrics.measures import check_k
from ..readers.documents import read_documents
from ..report.budget import budget_dict, budget_text
from ..report.choose_k import choose_k_headline
from .common import Recording, add_split, load, scope, split_notice, warn, write
from .parser import EXIT_OK

TEXT_WIDTH = 110
"""Lines of the headline wrap at this width, as the tables beneath it are about that wide."""


def run(args: argparse.Namespace, recording: Recording) -> int:
    labels, runs, chunks = load(args)
    scoped = scope(args, labels, runs, recording)
    docs = read_documents(args.docs, format=args.docs_format) if args.docs else None
    # scored here on the queries the labels let it score (the tune split by default), to the depth the table needs
    scored = scoped.evaluate(runs, check_k(args.max_k, name="max_k"), min_grade=args.min_grade,
                             zero_relevant=args.zero_relevant, level=args.level, seed=args.seed,
                             chunks=chunks or None)
    labels = None
    settings = BudgetSettings(max_k=args.max_k, price_per_mtok=args.price_per_mtok,
                              requests_per_month=args.requests_per_month, overhead_tokens=args.overhead_tokens,
                              chunk_tokens=args.chunk_tokens, tokenizer=args.tokenizer, lam=args.lam,
                              value_per_point=args.value_per_point, level=args.level)
    report = k_budget(scored, labels, docs, settings, min_grade=args.min_grade, zero_relevant=args.zero_relevant,
                      rng=args.seed)
    decision = Decision(scored, settings, budget=report)  # every k printed is the decision's k to take
    split_notice(scoped, args.format)
    if args.format == "json":
        data = {"headline": choose_k_headline(decision), **budget_dict(report)}
        write(json.dumps(add_split(data, scoped), ensure_ascii=False, allow_nan=False) + "\n", exact=True)
    elif args.format == "csv":
        write(report.to_csv(), exact=True)
        warn(report.warnings)
    else:
        write(textwrap.fill(choose_k_headline(decision), width=TEXT_WIDTH) + "\n\n" + budget_text(report))
    return EXIT_OK
