"""The ``evalcore`` command line. Core errors are translated here, in one place.

Exit status: 0 success, 2 bad input or usage, 1 anything else (SPEC.md §4).
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Callable, Sequence

from .errors import EvalcoreError
from .measures import DESCRIPTIONS

EXIT_OK, EXIT_FAILURE, EXIT_BAD_INPUT = 0, 1, 2


class _Parser(argparse.ArgumentParser):
    """argparse that exits 2 with a one-line message (its default, made explicit)."""

    def error(self, message: str) -> None:  # pragma: no cover - argparse contract
        self.print_usage(sys.stderr)
        self.exit(EXIT_BAD_INPUT, f"{self.prog}: error: {message}\n")


def build_parser() -> argparse.ArgumentParser:
    metrics_help = "\n".join(f"  {name}: {text}" for name, text in DESCRIPTIONS.items())
    parser = _Parser(
        prog="evalcore",
        description="Measure retrieval quality from labels and ranked runs.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="metrics:\n" + metrics_help,
    )
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    ev = sub.add_parser("evaluate", help="score one or more runs against labels",
                        formatter_class=argparse.RawDescriptionHelpFormatter, epilog="metrics:\n" + metrics_help)
    _add_inputs(ev)
    ev.add_argument("--k", default="1,5,10", help="cutoffs, comma separated (default 1,5,10)")
    ev.add_argument("--format", choices=("table", "json", "csv", "markdown"), default="table",
                    help="output format (default table)")
    ev.add_argument("--per-query", action="store_true", help="also print every query's scores")
    ev.add_argument("--slice-by", action="append", default=None, metavar="FIELD",
                    help="also score each value of a label field (source, split, blind) separately; "
                         "repeatable. With --format csv the slice rows are printed instead of the summary")
    ev.add_argument("--min-slice-n", type=int, default=30,
                    help="slices with fewer queries are marked as too small to rank (default 30)")
    ev.add_argument("--level", type=float, default=0.95, help="confidence level of intervals (default 0.95)")
    ev.add_argument("--seed", type=int, default=0, help="seed of the bootstrap (default 0)")
    ev.set_defaults(handler=_cmd_evaluate)

    cmp_ = sub.add_parser("compare", help="paired comparison of runs on the same queries, in plain words")
    _add_inputs(cmp_)
    cmp_.add_argument("--baseline", default=None, metavar="NAME",
                      help="run every other run is compared with (default: all pairs)")
    cmp_.add_argument("--metric", action="append", default=None, metavar="METRIC",
                      help="metric to compare, e.g. recall@1 or mrr; repeat for several "
                           "(default recall@1, recall@5, mrr)")
    cmp_.add_argument("--alpha", type=float, default=0.05, help="significance level after Holm (default 0.05)")
    cmp_.add_argument("--target-diff", type=float, default=None, metavar="D",
                      help="difference to plan for, on the metric's 0..1 scale (0.03 = 3 points)")
    cmp_.add_argument("--format", choices=("table", "json", "markdown"), default="table")
    cmp_.add_argument("--level", type=float, default=0.95, help="confidence level (default 0.95)")
    cmp_.add_argument("--seed", type=int, default=0, help="seed of the bootstrap and sign flips (default 0)")
    cmp_.set_defaults(handler=_cmd_compare)

    bud = sub.add_parser("budget", help="pick k: recall@k next to the prompt-token cost of k chunks",
                         description="Recall and hit rate at k = 1..max-k next to the prompt tokens and money the k "
                                     "retrieved chunks cost per request, and a recommended k per run: the k "
                                     "maximising 100*recall(k) - lambda*tokens(k)/1000.")
    _add_inputs(bud)
    bud.add_argument("--docs", default=None, metavar="FILE",
                     help="documents file with doc_id and tokens and/or text (CSV, TSV, JSONL, Parquet); "
                          "tokens column first, else text counted with --tokenizer")
    bud.add_argument("--docs-format", default=None, help="override format detection for the documents file")
    bud.add_argument("--max-k", type=int, default=50, help="largest k in the table (default 50)")
    bud.add_argument("--price-per-mtok", type=float, default=None, metavar="P",
                     help="generator LLM price in dollars per million input tokens (default 1.00; the run "
                          "sidecar's price_per_mtok is the embedding model's and is not used for this)")
    bud.add_argument("--requests-per-month", type=float, default=None, metavar="N",
                     help="requests per month, for the cost per month")
    bud.add_argument("--overhead-tokens", type=int, default=0, metavar="T",
                     help="fixed prompt tokens on every request besides the chunks (default 0)")
    bud.add_argument("--chunk-tokens", type=int, default=None, metavar="N",
                     help="tokens per chunk for docs without a count or text, or for every doc without --docs")
    bud.add_argument("--tokenizer", choices=("o200k_base", "cl100k_base", "chars/4"), default="o200k_base",
                     help="how chunk text is counted (default o200k_base; chars/4 is approximate)")
    trade = bud.add_mutually_exclusive_group()
    trade.add_argument("--lam", type=float, default=None, metavar="L",
                       help="recall points 1,000 more prompt tokens per request must buy (default 1)")
    trade.add_argument("--value-per-point", type=float, default=None, metavar="V",
                       help="dollars per month one recall point is worth; with --requests-per-month derives "
                            "lambda from the price")
    bud.add_argument("--format", choices=("table", "json", "csv"), default="table",
                     help="output format (default table)")
    bud.add_argument("--level", type=float, default=0.95, help="confidence level of intervals (default 0.95)")
    bud.add_argument("--seed", type=int, default=0, help="seed of the bootstrap (default 0)")
    bud.set_defaults(handler=_cmd_budget)
    return parser


def _add_inputs(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--labels", required=True, metavar="FILE", help="labels file (TREC qrels, BEIR, CSV/TSV, "
                        "Parquet, JSON or JSONL; .gz accepted)")
    parser.add_argument("--run", required=True, action="append", metavar="FILE",
                        help="run file (TREC, CSV/TSV, Parquet, JSON or JSONL); repeat for several runs. "
                             "Metadata comes from a sidecar <stem>.meta.json when present")
    parser.add_argument("--labels-format", default=None, help="override format detection for the labels file")
    parser.add_argument("--run-format", default=None, help="override format detection for the run files")
    parser.add_argument("--min-grade", type=float, default=1, help="relevance threshold: grade >= N is relevant "
                        "(default 1)")
    parser.add_argument("--zero-relevant", choices=("exclude", "zero"), default="exclude",
                        help="labeled queries with no relevant doc: leave out of means (default) or score 0 "
                             "as trec_eval does")


def _load(args: argparse.Namespace):
    from .labels import read_labels
    from .runs import read_run

    labels = read_labels(args.labels, format=args.labels_format)
    runs = [read_run(path, format=args.run_format) for path in args.run]
    return labels, runs


def _cmd_evaluate(args: argparse.Namespace) -> int:
    from .evaluation import evaluate_runs
    from .render import evaluation_csv, evaluation_json, evaluation_table

    labels, runs = _load(args)
    evaluation = evaluate_runs(runs, labels, args.k, min_grade=args.min_grade, zero_relevant=args.zero_relevant,
                               level=args.level, seed=args.seed)
    slices = None
    if args.slice_by:
        import pandas as pd

        from .slices import slice_metrics

        slices = pd.concat([slice_metrics(evaluation, field, min_n=args.min_slice_n) for field in args.slice_by],
                           ignore_index=True)
    if args.format == "json":
        _write(evaluation_json(evaluation, per_query=args.per_query, slices=slices) + "\n")
    elif args.format == "csv":
        if slices is not None:
            from .export import to_csv

            _write(to_csv(slices))
        else:
            _write(evaluation_csv(evaluation, per_query=args.per_query))
        for warning in evaluation.all_warnings:
            print(f"evalcore: warning: [{warning.code}] x{warning.count}: {warning.message}", file=sys.stderr)
    else:
        markdown = args.format == "markdown"
        _write(evaluation_table(evaluation, per_query=args.per_query, markdown=markdown))
        if slices is not None:
            from .render import slices_table

            _write("\n" + slices_table(slices, markdown=markdown))
    return EXIT_OK


def _cmd_compare(args: argparse.Namespace) -> int:
    from .compare import DEFAULT_COMPARE_METRICS, compare_evaluation
    from .evaluation import evaluate_runs
    from .measures import Measure

    metrics = [Measure.parse(m) for m in (args.metric or DEFAULT_COMPARE_METRICS)]
    ks = sorted({m.k for m in metrics if m.k}) or [1]
    labels, runs = _load(args)
    evaluation = evaluate_runs(runs, labels, ks, min_grade=args.min_grade, zero_relevant=args.zero_relevant,
                               level=args.level, seed=args.seed)
    report = compare_evaluation(evaluation, [str(m) for m in metrics], args.baseline, alpha=args.alpha,
                                target_diff=args.target_diff)
    if args.format == "json":
        _write(report.to_json() + "\n")
    else:
        _write(report.to_text(markdown=args.format == "markdown"))
    return EXIT_OK


def _cmd_budget(args: argparse.Namespace) -> int:
    from .budget import k_budget
    from .documents import read_documents

    labels, runs = _load(args)
    docs = read_documents(args.docs, format=args.docs_format) if args.docs else None
    report = k_budget(runs, labels, docs, max_k=args.max_k, price_per_mtok=args.price_per_mtok,
                      requests_per_month=args.requests_per_month, overhead_tokens=args.overhead_tokens,
                      chunk_tokens=args.chunk_tokens, tokenizer=args.tokenizer, lam=args.lam,
                      value_per_point=args.value_per_point, min_grade=args.min_grade,
                      zero_relevant=args.zero_relevant, level=args.level, rng=args.seed)
    if args.format == "json":
        _write(report.to_json() + "\n")
    elif args.format == "csv":
        _write(report.to_csv())
        for warning in report.warnings:
            print(f"evalcore: warning: [{warning.code}] x{warning.count}: {warning.message}", file=sys.stderr)
    else:
        _write(report.to_text())
    return EXIT_OK


def _write(text: str) -> None:
    try:
        sys.stdout.write(text)
        sys.stdout.flush()
    except BrokenPipeError:  # e.g. `evalcore evaluate ... | head`
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point: parse, run, and turn every error into a one-line message and exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    handler: Callable[[argparse.Namespace], int] = args.handler
    try:
        return handler(args)
    except EvalcoreError as exc:
        print(f"evalcore: error: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        return 130
    except Exception as exc:  # the last line of defence: no traceback for users
        if os.environ.get("EVALCORE_DEBUG"):
            raise
        print(f"evalcore: internal error: {type(exc).__name__}: {exc} (set EVALCORE_DEBUG=1 for details)",
              file=sys.stderr)
        return EXIT_FAILURE


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
