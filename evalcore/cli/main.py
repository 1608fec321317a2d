"""The ``evalcore`` command line. Core errors are translated here, in one place.

Exit status: 0 success, 2 bad input or usage, 1 anything else (SPEC.md §4).
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Callable, Sequence

from ..errors import EvalcoreError
from ..metrics.measures import DESCRIPTIONS

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
    _add_interval_options(ev)
    ev.add_argument("--save", action="store_true",
                    help="also record this evaluation in the workspace: the files (stored before they are read), "
                         "the label-set version, the runs, the summary and every query's outcome at --save-k. With "
                         "a tune/holdout split the tune numbers are saved, under the label set NAME:tune (holdout "
                         "and all-query numbers are never saved: the reveal log is their record)")
    ev.add_argument("--workspace", default=None, metavar="DIR",
                    help="workspace folder for --save and --reveal (default: $EVALCORE_WORKSPACE, else "
                         "~/.local/share/evalcore)")
    ev.add_argument("--label-set", default=None, metavar="NAME",
                    help="with --save or --reveal: the label set to version these labels under (default: the labels "
                         "file stem)")
    ev.add_argument("--line", action="append", default=None, metavar="RUN=LINE",
                    help="with --save: the model line a run belongs to (default: its model string); repeatable. "
                         "With a single --run, LINE alone is enough")
    ev.add_argument("--save-k", type=int, default=None, metavar="K",
                    help="with --save: the k at which each query's hit or miss is recorded (default: the largest --k)")
    _add_split_options(ev)
    ev.set_defaults(handler=_cmd_evaluate)

    aud = sub.add_parser("audit", help="can these numbers be trusted: blind labels, pooling bias, judged depth with "
                                       "bounds, labels to check",
                         description="An integrity audit of runs against labels: the share of blind labels behind "
                                     "each run's numbers and the metrics on blind labels only; whether the judged "
                                     "docs come mostly from one run's top results; judged@k per run with bounds for "
                                     "every quoted k (unjudged docs counted as non-relevant and as relevant); and "
                                     "the queries every run misses while the runs agree on another doc.")
    _add_inputs(aud)
    aud.add_argument("--k", default="1,5,10", help="the cutoffs you quote, comma separated (default 1,5,10)")
    aud.add_argument("--pool-depth", type=int, default=10, metavar="D",
                     help="depth of each run's top results looked at for pooling bias (default 10)")
    aud.add_argument("--min-judged", type=float, default=0.9, metavar="SHARE",
                     help="judged@k a k needs to count as covered by the judgments (default 0.9)")
    aud.add_argument("--suspect-k", type=int, default=None, metavar="K",
                     help="k at which every run must miss for a 'check the label' candidate (default: the largest --k)")
    aud.add_argument("--agree-depth", type=int, default=3, metavar="D",
                     help="every run must have the same other doc in its top D (default 3)")
    aud.add_argument("--min-slice-n", type=int, default=30,
                     help="blind-only metrics on fewer queries are marked too small to rank (default 30)")
    aud.add_argument("--flag", action="append", default=None, metavar="QUERY",
                     help="queue this query for blind re-judging in the workspace (labels are never edited here); "
                          "repeatable")
    aud.add_argument("--workspace", default=None, metavar="DIR",
                     help="with --flag or --reveal: workspace folder (default: $EVALCORE_WORKSPACE, else "
                          "~/.local/share/evalcore)")
    aud.add_argument("--label-set", default=None, metavar="NAME",
                     help="with --flag or --reveal: the label set the labels are saved under (default: the labels "
                          "file stem)")
    aud.add_argument("--format", choices=("table", "json", "markdown"), default="table",
                     help="output format (default table)")
    _add_interval_options(aud)
    _add_split_options(aud)
    aud.set_defaults(handler=_cmd_audit)

    _add_judge_commands(sub)

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
    _add_interval_options(cmp_, seeded="the bootstrap and sign flips")
    _add_split_options(cmp_, workspace=True)
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
                       help="recall points 1,000 more prompt tokens per request must buy (default 10)")
    trade.add_argument("--value-per-point", type=float, default=None, metavar="V",
                       help="dollars per month one recall point is worth; with --requests-per-month derives "
                            "lambda from the price")
    bud.add_argument("--format", choices=("table", "json", "csv"), default="table",
                     help="output format (default table)")
    _add_interval_options(bud)
    _add_split_options(bud, workspace=True)
    bud.set_defaults(handler=_cmd_budget)

    _add_workspace_commands(sub)

    rep = sub.add_parser("report", help="one-page report for a meeting: leaderboard, comparison, cost of k, open "
                                        "failures, provenance (Markdown or self-contained HTML)",
                         description="A one-page report of a saved evaluation (--evaluation, default: the latest in "
                                     "the workspace) or of files (--labels and --run): leaderboard with intervals, "
                                     "paired comparison, the chosen k and its cost (with --docs), the top open "
                                     "failures (regressions first, with the ledger's status, tags and notes) and "
                                     "where every number came from.")
    rep.add_argument("--evaluation", default=None, metavar="ID",
                     help="a saved evaluation id, or 'latest' (the default when no --labels is given)")
    rep.add_argument("--workspace", default=None, metavar="DIR", help="workspace folder (default: $EVALCORE_WORKSPACE, "
                     "else ~/.local/share/evalcore)")
    _add_inputs(rep, required=False)
    rep.add_argument("--k", type=int, default=None,
                     help="the chosen k (default: the saved evaluation's; 10 with --labels and --run)")
    rep.add_argument("--baseline", default=None, metavar="NAME",
                     help="run the others are compared with (default: the first run)")
    rep.add_argument("--docs", default=None, metavar="FILE",
                     help="documents file (doc_id and tokens and/or text): adds the prompt-token cost of k")
    rep.add_argument("--docs-format", default=None, help="override format detection for the documents file")
    rep.add_argument("--chunk-tokens", type=int, default=None, metavar="N",
                     help="tokens per chunk for docs without a count or text (or instead of --docs)")
    rep.add_argument("--price-per-mtok", type=float, default=None, metavar="P",
                     help="generator LLM price in dollars per million input tokens (default 1.00)")
    rep.add_argument("--requests-per-month", type=float, default=None, metavar="N",
                     help="requests per month, for the cost per month")
    rep.add_argument("--top-failures", type=int, default=5, metavar="N",
                     help="open failures listed per run (default 5)")
    rep.add_argument("--title", default=None, help="report title (default: labels, version and k)")
    rep.add_argument("--format", choices=("markdown", "html"), default=None,
                     help="output format (default: from the --output extension, else markdown)")
    rep.add_argument("--output", default=None, metavar="FILE",
                     help="write here (.html: one self-contained file; .md: Markdown plus PNG charts beside it) "
                          "instead of printing")
    rep.add_argument("--failures-csv", default=None, metavar="FILE",
                     help="also write every failure at k with its context as CSV (formula-safe cells)")
    rep.add_argument("--no-charts", action="store_true", help="leave the PNG charts out")
    rep.add_argument("--level", type=float, default=None, help="with --labels: confidence level (default 0.95)")
    rep.add_argument("--seed", type=int, default=None, help="with --labels: seed of the bootstrap (default 0)")
    rep.add_argument("--label-set", default=None, metavar="NAME",
                     help="with --labels and --reveal: the label set the reveal is recorded under (default: the "
                          "labels file stem)")
    _add_split_options(rep)
    rep.set_defaults(handler=_cmd_report)
    return parser


def _add_workspace_commands(sub) -> None:
    ws = sub.add_parser("workspace", help="list, show, delete and extend what the workspace holds",
                        description="The workspace keeps label sets (versioned), runs, evaluations and the failure "
                                    "ledger in one SQLite file under $EVALCORE_WORKSPACE (default "
                                    "~/.local/share/evalcore). Save into it with `evalcore evaluate ... --save`.")
    actions = ws.add_subparsers(dest="action", required=True, parser_class=_Parser)

    def common(parser: argparse.ArgumentParser, formats: bool = True) -> None:
        parser.add_argument("--workspace", default=None, metavar="DIR",
                            help="workspace folder (default: $EVALCORE_WORKSPACE, else ~/.local/share/evalcore)")
        if formats:
            parser.add_argument("--format", choices=("table", "json"), default="table",
                                help="output format (default table)")

    ls = actions.add_parser("list", help="label sets, runs, evaluations, model lines and files")
    ls.add_argument("what", nargs="?", default="all", choices=("all", "labels", "runs", "evaluations", "lines", "files"))
    common(ls)
    ls.set_defaults(handler=_cmd_workspace_list)

    show = actions.add_parser("show", help="one label set, run, evaluation or model line in detail")
    show.add_argument("kind", choices=("labels", "run", "evaluation", "line"))
    show.add_argument("key", metavar="NAME_OR_ID", help="label set or line name, run id, evaluation id or 'latest'")
    show.add_argument("--version", type=int, default=None, help="labels: the version (default: the latest)")
    show.add_argument("--labels", default=None, metavar="NAME",
                      help="line: the label set (default: that of the line's latest evaluation)")
    show.add_argument("--k", type=int, default=None, help="line: the k of hit or miss (default: the latest evaluation's)")
    show.add_argument("--limit", type=int, default=20, help="line: ledger rows shown (default 20)")
    common(show)
    show.set_defaults(handler=_cmd_workspace_show)

    delete = actions.add_parser("delete", help="delete a label set (all versions), run, evaluation or unused file")
    delete.add_argument("kind", choices=("labels", "run", "evaluation", "file"))
    delete.add_argument("key", metavar="NAME_OR_ID", help="label set name, run id, evaluation id or 'latest', file hash")
    delete.add_argument("--yes", action="store_true", help="delete without asking for confirmation")
    common(delete, formats=False)
    delete.set_defaults(handler=_cmd_workspace_delete)

    add = actions.add_parser("add-cases", help="a new version of a label set with more cases (e.g. production misses)")
    add.add_argument("name", metavar="LABEL_SET")
    add.add_argument("file", metavar="FILE", help="labels file with the cases (any labels format)")
    add.add_argument("--cases-format", default=None, help="override format detection for the cases file")
    add.add_argument("--note", default=None, help="why this version was made")
    common(add, formats=False)
    add.set_defaults(handler=_cmd_workspace_add_cases)


def _add_judge_commands(sub) -> None:
    judge = sub.add_parser("judge", help="blind judging: export a shuffled pool of every run's top docs for a "
                                         "query, save a person's marks as a new label-set version",
                           description="Blind judging. `judge pool` writes the union of every run's top --depth docs "
                                       "for one query, shuffled, without rank, score or run, as CSV with an empty "
                                       "relevant column; a person fills it in (yes or no); `judge save` stores the "
                                       "marks as a new version of a saved label set (the query marked blind, the "
                                       "judged depth recorded; earlier versions unchanged). `judge queue` lists the "
                                       "queries flagged for re-judging.")
    actions = judge.add_subparsers(dest="action", required=True, parser_class=_Parser)
    pool = actions.add_parser("pool", help="the shuffled judging pool of one query, as CSV")
    _add_inputs(pool)
    pool.add_argument("--query", required=True, metavar="QUERY", help="the query id to judge")
    pool.add_argument("--depth", type=int, default=10, metavar="D",
                      help="pool each run's top D docs (default 10); raise it to extend coverage before quoting a "
                           "deeper k")
    pool.add_argument("--seed", type=int, default=0, help="seed of the shuffle (default 0)")
    pool.add_argument("--docs", default=None, metavar="FILE", help="documents file: adds each doc's text to the pool")
    pool.add_argument("--docs-format", default=None, help="override format detection for the documents file")
    pool.add_argument("--output", default=None, metavar="FILE", help="write the CSV here instead of printing it")
    pool.set_defaults(handler=_cmd_judge_pool)

    save = actions.add_parser("save", help="save a filled-in pool as a new version of a label set")
    save.add_argument("name", metavar="LABEL_SET")
    save.add_argument("file", metavar="FILE", help="the pool CSV with its relevant column filled in (yes or no)")
    save.add_argument("--judge", default=None, metavar="NAME", help="who judged (default: the login name)")
    save.add_argument("--workspace", default=None, metavar="DIR",
                      help="workspace folder (default: $EVALCORE_WORKSPACE, else ~/.local/share/evalcore)")
    save.set_defaults(handler=_cmd_judge_save)

    queue = actions.add_parser("queue", help="queries flagged for blind re-judging, and the judging rounds done")
    queue.add_argument("name", metavar="LABEL_SET", nargs="?", default=None)
    queue.add_argument("--all", action="store_true", help="also list resolved entries")
    queue.add_argument("--workspace", default=None, metavar="DIR",
                       help="workspace folder (default: $EVALCORE_WORKSPACE, else ~/.local/share/evalcore)")
    queue.add_argument("--format", choices=("table", "json"), default="table", help="output format (default table)")
    queue.set_defaults(handler=_cmd_judge_queue)


def _add_split_options(parser: argparse.ArgumentParser, workspace: bool = False) -> None:
    """--split, --hash-split, --reveal and --who, as every command that scores labels takes them."""
    parser.add_argument("--split", choices=("tune", "holdout", "all"), default=None,
                        help="when the labels carry a tune/holdout split (their split field, or --hash-split): which "
                             "queries to score. Default tune: exploratory numbers, the holdout sealed. holdout or all "
                             "(tune and holdout together) need --reveal")
    parser.add_argument("--hash-split", type=float, default=None, metavar="FRACTION",
                        help="split by a hash of the query id instead of the labels' split field, putting FRACTION of "
                             "the queries in tune (deterministic on every machine)")
    parser.add_argument("--reveal", action="store_true",
                        help="with --split holdout or all: show those numbers and record this view in the workspace "
                             "(who, when, label-set version, runs); every view is counted")
    parser.add_argument("--who", default=None, metavar="NAME",
                        help="with --reveal: the person looking (default: the login name)")
    if workspace:
        parser.add_argument("--workspace", default=None, metavar="DIR",
                            help="with --reveal: workspace folder the view is recorded in (default: "
                                 "$EVALCORE_WORKSPACE, else ~/.local/share/evalcore)")
        parser.add_argument("--label-set", default=None, metavar="NAME",
                            help="with --reveal: the label set the view is recorded under (default: the labels file "
                                 "stem)")


def _add_interval_options(parser: argparse.ArgumentParser, seeded: str = "the bootstrap") -> None:
    """--level and --seed, as every command that prints intervals takes them."""
    parser.add_argument("--level", type=float, default=0.95, help="confidence level of intervals (default 0.95)")
    parser.add_argument("--seed", type=int, default=0, help=f"seed of {seeded} (default 0)")


def _add_inputs(parser: argparse.ArgumentParser, required: bool = True) -> None:
    parser.add_argument("--labels", required=required, metavar="FILE", help="labels file (TREC qrels, BEIR, CSV/TSV, "
                        "Parquet, JSON or JSONL; .gz accepted)")
    parser.add_argument("--run", required=required, action="append", metavar="FILE",
                        help="run file (TREC, CSV/TSV, Parquet, JSON or JSONL), or NAME=FILE to name it; repeat "
                             "for several runs. Metadata comes from a sidecar <stem>.meta.json when present")
    parser.add_argument("--labels-format", default=None, help="override format detection for the labels file")
    parser.add_argument("--run-format", default=None, help="override format detection for the run files")
    parser.add_argument("--min-grade", type=float, default=1 if required else None,
                        help="relevance threshold: grade >= N is relevant (default 1)")
    parser.add_argument("--zero-relevant", choices=("exclude", "zero"), default="exclude" if required else None,
                        help="labeled queries with no relevant doc: leave out of means (default) or score 0 "
                             "as trec_eval does")


def _load(args: argparse.Namespace):
    from ..readers.labels import read_labels
    from ..readers.runs import read_run

    labels = read_labels(args.labels, format=args.labels_format)
    runs = [read_run(path, format=args.run_format, name=name) for name, path in map(_run_argument, args.run)]
    return labels, runs


def _run_argument(value: str) -> tuple[str | None, str]:
    """``--run FILE`` or ``--run NAME=FILE`` (a name for runs whose files share a stem)."""
    from pathlib import Path

    name, sep, path = value.partition("=")
    if sep and name and path and not Path(value).exists() and "/" not in name and "\\" not in name:
        return name, path
    return None, value


def _cmd_evaluate(args: argparse.Namespace) -> int:
    from ..report.render import evaluation_csv, evaluation_json, evaluation_table

    _check_split_options(args)
    if args.save and args.split in ("holdout", "all"):
        from ..errors import UsageError

        raise UsageError("--save stores tune numbers only: anything in the workspace history is shown again without "
                         "a reveal, so holdout and all-query numbers are never saved (the reveal log records who saw "
                         "them). Save without --split (the tune split), or leave --save out.")
    stored = _store_inputs(args)  # with --save the files are kept before anything reads them
    labels, runs = _load(args)
    scope = _scope(args, labels, runs)
    evaluation = scope.evaluate(runs, args.k, min_grade=args.min_grade, zero_relevant=args.zero_relevant,
                                level=args.level, seed=args.seed)
    split = evaluation.split if scope.split is not None else None
    slices = None
    if args.slice_by:
        import pandas as pd

        from ..analyses.slices import slice_metrics

        slices = pd.concat([slice_metrics(evaluation, field, min_n=args.min_slice_n) for field in args.slice_by],
                           ignore_index=True)
        if split is not None:
            slices = slices.assign(split=split.split)
    _split_notice(scope, args.format)
    if args.format == "json":
        _write(evaluation_json(evaluation, per_query=args.per_query, slices=slices) + "\n")
    elif args.format == "csv":
        if slices is not None:
            from ..safe_text import to_csv

            _write(to_csv(slices))
        else:
            _write(evaluation_csv(evaluation, per_query=args.per_query))
        for warning in evaluation.all_warnings:
            print(f"evalcore: warning: [{warning.code}] x{warning.count}: {warning.message}", file=sys.stderr)
    else:
        markdown = args.format == "markdown"
        _write(evaluation_table(evaluation, per_query=args.per_query, markdown=markdown))
        if slices is not None:
            from ..report.render import slices_table

            _write("\n" + slices_table(slices, markdown=markdown))
    if stored is not None:
        _save_evaluation(args, stored, evaluation)
    return EXIT_OK


def _check_split_options(args: argparse.Namespace) -> None:
    """--split, --hash-split, --reveal and --who only make sense together."""
    from ..errors import UsageError

    if args.split in (None, "tune"):
        given = [flag for flag, value in (("--reveal", args.reveal or None), ("--who", args.who)) if value is not None]
        if given:
            raise UsageError(f"{', '.join(given)}: only used with --split holdout or --split all; tune numbers are "
                             "never sealed.")
        return
    if args.who is not None and not args.reveal:
        raise UsageError("--who names the person of a --reveal; add --reveal or leave it out.")


def _scope(args: argparse.Namespace, labels, runs):
    """The labels this command may score (`evalcore.metrics.split.scoring_labels`): the tune split by default when the
    labels carry a split; the holdout or all queries only with --reveal, recorded in the workspace first."""
    from ..metrics.split import SplitRule, query_splits, scoring_labels

    _check_split_options(args)
    rule = SplitRule(args.hash_split) if args.hash_split is not None else SplitRule()
    reveal = None
    if args.split in ("holdout", "all"):
        query_splits(labels, rule)  # labels without a split: say so before anything is recorded
        reveal = _reveal(args, labels, runs, rule)
    return scoring_labels(labels, rule, reveal, args.split)


def _split_notice(scope, fmt: str) -> None:
    """One line on the tune split: how many holdout queries are sealed and how to see them. First on stdout for
    tables (a reader sees it before any number), on stderr beside JSON and CSV (their stdout stays parseable)."""
    if scope.split != "tune":
        return
    total = len(scope.full_queries)
    text = f"tune split (exploratory, {scope.rule}): {scope.n_queries:,} of {total:,} labeled queries scored"
    if scope.sealed:
        text += (f"; {scope.sealed:,} holdout queries sealed: see them with --split holdout --reveal, or every query "
                 "with --split all --reveal (each view is recorded in the workspace)")
    if fmt == "table":
        _write(text + "\n\n")
    elif fmt in ("markdown", "html"):
        from ..safe_text import md_text

        _write(md_text(text) + "\n\n")
    else:
        print(f"evalcore: {text}", file=sys.stderr)


def _add_split(data: dict, scope) -> dict:
    """A JSON result with the ``split`` its numbers are on (when the labels carry one)."""
    if scope.split is not None:
        data["split"] = scope.to_dict()
    return data


def _reveal(args: argparse.Namespace, labels, runs, rule):
    """The recorded reveal that unseals the holdout (refused without --reveal, with how often it was seen)."""
    from pathlib import Path

    from ..metrics.split import HoldoutSealed
    from ..store.workspace import DB_NAME, Workspace, default_location

    workspace_dir = getattr(args, "workspace", None)
    label_set = getattr(args, "label_set", None)
    if not args.reveal:
        place = Path(workspace_dir).expanduser() if workspace_dir is not None else default_location()
        seen = ""
        if (place / DB_NAME).exists():
            seen = " (" + Workspace(workspace_dir).reveal_summary(label_set or labels.name) + ")"
        raise HoldoutSealed(f"Holdout numbers are sealed{seen}. Tune on the tune split (the default); when you are "
                            f"ready to report, add --reveal to --split {args.split}: the view is recorded in the "
                            "workspace and counted.")
    workspace = Workspace(workspace_dir)
    stored = workspace.put_file(args.labels)
    reveal = workspace.record_reveal(labels, rule=rule.key, runs=[(r.name, r.model) for r in runs],
                                     name=label_set, who=args.who, file=stored)
    print(f"evalcore: holdout revealed and recorded (reveal #{reveal.id}: {workspace.reveal_summary(reveal.label_set)}; "
          f"labels {reveal.label_set} v{reveal.version} #{reveal.fingerprint}, {rule}) in {workspace.location}",
          file=sys.stderr)
    return reveal


def _store_inputs(args: argparse.Namespace):
    """With --save: open the workspace and store the labels and run files as they are (None without --save)."""
    from ..errors import UsageError

    if not args.save:
        given = [flag for flag, value in (("--workspace", args.workspace), ("--label-set", args.label_set),
                                          ("--line", args.line), ("--save-k", args.save_k)) if value is not None
                 and not (args.reveal and flag in ("--workspace", "--label-set"))]
        if given:
            raise UsageError(f"{', '.join(given)}: only used with --save; add --save or leave "
                             f"{'it' if len(given) == 1 else 'them'} out.")
        return None
    from ..metrics.measures import parse_ks
    from ..store.workspace import Workspace

    if args.save_k is not None and not 1 <= args.save_k <= max(parse_ks(args.k)):
        raise UsageError(f"The '--save-k' parameter must be between 1 and the largest --k ({max(parse_ks(args.k))}). "
                         f"Got {args.save_k}.")
    workspace = Workspace(args.workspace)
    return workspace, workspace.put_file(args.labels), [workspace.put_file(path) for path in args.run]


def _run_lines(given: list[str] | None, names: list[str]) -> dict[str, str]:
    from ..errors import UsageError

    lines = {}
    for item in given or []:
        run, sep, line = item.partition("=")
        if not sep:
            if len(names) != 1:
                raise UsageError(f"--line {item!r}: with several runs write RUN=LINE (runs: {', '.join(names)}).")
            run, line = names[0], item
        if not run.strip() or not line.strip():
            raise UsageError(f"--line {item!r}: expected RUN=LINE with a run name and a line name.")
        lines[run.strip()] = line.strip()
    return lines


def _save_evaluation(args: argparse.Namespace, stored, evaluation) -> None:
    """Save ``evaluation``; tune numbers go under the label set NAME:tune (the tune queries' own versions), with
    the split in the evaluation's note."""
    workspace, label_file, run_files = stored
    names = evaluation.run_names
    split = evaluation.split if evaluation.split is not None and evaluation.split.split is not None else None
    label_set, note = args.label_set, None
    if split is not None:
        from ..metrics.split import side_name

        label_set = side_name(args.label_set, split.split, split.rule) if args.label_set else None
        note = (f"{split.headline}: {split.n_queries:,} of {len(split.full_queries):,} queries of "
                f"{split.full_name}#{split.full_fingerprint} ({split.rule})")
    saved = workspace.save_evaluation(evaluation, k=args.save_k, labels_file=label_file,
                                      run_files=dict(zip(names, run_files)), lines=_run_lines(args.line, names),
                                      label_set=label_set, run_format=args.run_format, note=note)
    if saved.created:
        print(f"evalcore: saved {saved.describe()} in the workspace {workspace.location}", file=sys.stderr)
    else:
        print(f"evalcore: already saved as evaluation {saved.id} (same label-set version, runs and settings) in "
              f"{workspace.location}; nothing new stored", file=sys.stderr)
    for run in saved.runs:
        changes = workspace.archive.changes(run.line, run_id=run.id, labels=saved.labels.name, k=saved.k)
        print(f"evalcore: {changes.summary()}", file=sys.stderr)


def _cmd_compare(args: argparse.Namespace) -> int:
    import json

    from ..analyses.compare import DEFAULT_COMPARE_METRICS, compare_evaluation
    from ..metrics.measures import Measure

    metrics = [Measure.parse(m) for m in (args.metric or DEFAULT_COMPARE_METRICS)]
    ks = sorted({m.k for m in metrics if m.k}) or [1]
    labels, runs = _load(args)
    scope = _scope(args, labels, runs)
    evaluation = scope.evaluate(runs, ks, min_grade=args.min_grade, zero_relevant=args.zero_relevant,
                                level=args.level, seed=args.seed)
    report = compare_evaluation(evaluation, [str(m) for m in metrics], args.baseline, alpha=args.alpha,
                                target_diff=args.target_diff)
    _split_notice(scope, args.format)
    if args.format == "json":
        _write(json.dumps(_add_split(report.to_dict(), scope), ensure_ascii=False, allow_nan=False) + "\n")
    else:
        _write(report.to_text(markdown=args.format == "markdown"))
    return EXIT_OK


def _cmd_budget(args: argparse.Namespace) -> int:
    from ..analyses.budget import k_budget
    from ..readers.documents import read_documents

    labels, runs = _load(args)
    scope = _scope(args, labels, runs)
    docs = read_documents(args.docs, format=args.docs_format) if args.docs else None
    if scope.split is None:
        scored, labels = runs, labels
    else:  # scored here on the split's queries, to the depth the table needs
        from ..errors import invalid_parameter

        if isinstance(args.max_k, bool) or args.max_k < 1:
            raise invalid_parameter("max_k", "an integer >= 1", args.max_k)
        scored = scope.evaluate(runs, args.max_k, min_grade=args.min_grade, zero_relevant=args.zero_relevant,
                                level=args.level, seed=args.seed)
        labels = None
    report = k_budget(scored, labels, docs, max_k=args.max_k, price_per_mtok=args.price_per_mtok,
                      requests_per_month=args.requests_per_month, overhead_tokens=args.overhead_tokens,
                      chunk_tokens=args.chunk_tokens, tokenizer=args.tokenizer, lam=args.lam,
                      value_per_point=args.value_per_point, min_grade=args.min_grade,
                      zero_relevant=args.zero_relevant, level=args.level, rng=args.seed)
    _split_notice(scope, args.format)
    if args.format == "json":
        import json

        _write(json.dumps(_add_split(report.to_dict(), scope), ensure_ascii=False, allow_nan=False) + "\n")
    elif args.format == "csv":
        _write(report.to_csv())
        for warning in report.warnings:
            print(f"evalcore: warning: [{warning.code}] x{warning.count}: {warning.message}", file=sys.stderr)
    else:
        _write(report.to_text())
    return EXIT_OK


def _cmd_audit(args: argparse.Namespace) -> int:
    from ..analyses.audit import audit_runs
    from ..errors import UsageError

    if args.flag is None and not args.reveal and (args.workspace is not None or args.label_set is not None):
        raise UsageError("--workspace and --label-set are only used with --flag or --reveal.")
    labels, runs = _load(args)
    scope = _scope(args, labels, runs)
    found = audit_runs(runs, scope, args.k, min_grade=args.min_grade, zero_relevant=args.zero_relevant,
                       level=args.level, seed=args.seed, pool_depth=args.pool_depth, min_judged=args.min_judged,
                       suspect_k=args.suspect_k, agree_depth=args.agree_depth, min_n=args.min_slice_n)
    evaluation = found.evaluation
    _split_notice(scope, args.format)
    if args.format == "json":
        _write(found.to_json() + "\n")
    else:
        _write(found.to_text(markdown=args.format == "markdown"))
    if args.flag:
        _flag_queries(args, scope, labels, found)
    return EXIT_OK


def _flag_queries(args: argparse.Namespace, scope, whole, found) -> None:
    """Queue --flag queries for blind re-judging (the labels are saved as a version first; never edited).

    Only queries the audit scored can be flagged (with a split: the tune queries, or every query after
    a reveal). The queue is that of the whole label set as read, the one blind judgments extend (the
    dashboard's judging page reads it too), so a new version keeps every query and its split."""
    from ..errors import UsageError
    from ..store.workspace import Workspace

    labels = scope.labels
    known = set(labels.queries.tolist())
    unknown = [q for q in args.flag if q not in known]
    if unknown:
        where = f" ({scope.label}: {scope.n_queries} queries)" if scope.split is not None else ""
        raise UsageError(f"--flag {unknown[0]!r}: no such query in the labels {labels.name!r}{where}.")
    workspace = Workspace(args.workspace)
    version = workspace.save_labels(whole, name=args.label_set, file=workspace.put_file(args.labels))
    suspects = found.suspects
    for query in args.flag:
        doc, reason = None, "flagged from evalcore audit"
        if suspects is not None and (suspects["query"] == query).any():
            row = suspects[suspects["query"] == query].iloc[0]
            doc = row["doc_id"]
            reason = (f"every run misses at k = {found.suspect_k} while all put {doc} ({row['doc_label']}) in their "
                      f"top {found.agree_depth}: {row['ranks']}")
        entry = workspace.flag_for_rejudging(version.name, query, reason=reason, doc_id=doc)
        print(f"evalcore: queued {query} of {version.ref} for blind re-judging (entry {entry}); the labels are "
              f"unchanged. Next: evalcore judge pool --query {query} ...", file=sys.stderr)


def _cmd_judge_pool(args: argparse.Namespace) -> int:
    from ..analyses.judging import judging_pool
    from ..safe_text import to_csv

    labels, runs = _load(args)
    pool = judging_pool(runs, labels, args.query, args.depth, seed=args.seed)
    texts = None
    if args.docs:
        from ..readers.documents import read_documents

        docs = read_documents(args.docs, format=args.docs_format)
        texts = {d: docs.text(d) or "" for d in pool.docs}
    text = to_csv(pool.to_frame(texts))
    if args.output:
        with open(args.output, "w", encoding="utf-8", newline="") as handle:
            handle.write(text)
        print(f"evalcore: wrote {args.output}: {len(pool.docs)} docs pooled from the top {pool.depth} of "
              f"{pool.n_runs} runs for query {pool.query}, shuffled (seed {pool.seed}); fill in the relevant column "
              "(yes or no), then: evalcore judge save LABEL_SET FILE", file=sys.stderr)
    else:
        _write(text)
    return EXIT_OK


def _cmd_judge_save(args: argparse.Namespace) -> int:
    import pandas as pd

    from ..analyses.judging import marks_to_labels, read_marks
    from ..errors import InputError
    from ..store.workspace import Workspace

    try:
        frame = pd.read_csv(args.file, dtype=str, keep_default_na=False)
    except FileNotFoundError:
        raise InputError("an existing judging pool CSV", source=args.file) from None
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as exc:
        raise InputError(f"a judging pool CSV ({exc})", source=args.file) from None
    for column in ("query", "doc_id", "query_text"):  # undo the formula-safe prefix of the export
        if column in frame.columns:
            frame[column] = frame[column].map(_unsafe_cell)
    pool, marks = read_marks(frame, args.file)
    workspace = Workspace(args.workspace)
    version = workspace.save_blind_judgments(args.name, marks_to_labels(pool, marks), query=pool.query,
                                             depth=pool.depth, who=args.judge)
    if version.created:
        print(f"evalcore: label set {version.ref}: blind judgments of {pool.query} at depth {pool.depth} "
              f"({len(pool.docs)} docs); {version.change}; earlier versions are unchanged", file=sys.stderr)
    else:
        print(f"evalcore: label set {version.ref} already holds these judgments of {pool.query}; no new version "
              "(the judging round is recorded)", file=sys.stderr)
    return EXIT_OK


def _unsafe_cell(value: str) -> str:
    """A cell written by `export.to_csv` back to its text (its leading ' before = + - @ removed)."""
    if isinstance(value, str) and len(value) > 1 and value[0] == "'" and value[1] in "=+-@\t\r":
        return value[1:]
    return value


def _cmd_judge_queue(args: argparse.Namespace) -> int:
    from ..store.workspace import Workspace

    workspace = Workspace(args.workspace)
    frames = {"queue": workspace.rejudge_queue(args.name, open_only=not args.all),
              "judging rounds": workspace.judging_rounds(args.name)}
    if args.format == "json":
        _write(_frames_json(frames) + "\n")
    else:
        _write("\n\n".join(_frame_text(f, n) for n, f in frames.items()) + "\n")
    return EXIT_OK


def _frame_text(frame, title: str) -> str:
    """A DataFrame as an aligned text table under a title (empty frames say so)."""
    import pandas as pd

    from ..report.render import _text_table

    if frame.empty:
        return f"{title}\n(none)"
    whole = {c: c not in ("mean", "ci_low", "ci_high", "price_per_mtok") and pd.api.types.is_float_dtype(frame[c])
             and bool((frame[c].dropna() % 1 == 0).all()) for c in frame.columns}  # float only because of gaps (ids, versions): print as integers

    def cell(value, column) -> str:
        if value is None or value is pd.NA or (isinstance(value, float) and value != value):
            return ""
        if isinstance(value, float):
            return str(int(value)) if whole[column] else f"{value:.4f}"
        return str(value)

    body = [[cell(v, c) for v, c in zip(row, frame.columns)] for row in frame.itertuples(index=False)]
    return _text_table(title, [str(c) for c in frame.columns], body)


def _frames_json(frames: dict) -> str:
    import json

    out = {name: json.loads(frame.to_json(orient="records", date_format="iso")) for name, frame in frames.items()}
    return json.dumps(out, ensure_ascii=False, indent=1)


_LIST_COLUMNS = {
    "labels": ["name", "versions", "latest_version", "fingerprint", "n_queries", "evaluations", "updated_at"],
    "runs": ["id", "name", "model", "line", "price_per_mtok", "dims", "index_bytes", "file_name", "uploaded_at",
             "evaluations"],
    "evaluations": ["id", "created_at", "labels", "labels_version", "fingerprint", "k", "n_queries", "runs"],
    "lines": ["line", "runs", "models", "latest_upload", "evaluations"],
    "files": ["sha256", "name", "size", "stored_at", "used_by"],
}


def _cmd_workspace_list(args: argparse.Namespace) -> int:
    from ..store.workspace import Workspace

    workspace = Workspace(args.workspace)
    readers = {"labels": workspace.label_sets, "runs": workspace.runs, "evaluations": workspace.evaluations,
               "lines": workspace.lines, "files": workspace.files}
    chosen = list(readers) if args.what == "all" else [args.what]
    frames = {}
    for name in chosen:
        frame = readers[name]()
        frames[name] = frame[_LIST_COLUMNS[name]] if not frame.empty else frame
    if "files" in frames and not frames["files"].empty:
        frames["files"] = frames["files"].assign(sha256=frames["files"]["sha256"].str.slice(0, 12))
    if args.format == "json":
        _write(_frames_json(frames) + "\n")
    else:
        _write(f"workspace {workspace.location}\n\n" + "\n\n".join(_frame_text(f, n) for n, f in frames.items()) + "\n")
    return EXIT_OK


def _cmd_workspace_show(args: argparse.Namespace) -> int:
    import pandas as pd

    from ..errors import UsageError
    from ..store.workspace import Workspace

    workspace = Workspace(args.workspace)
    frames: dict = {}
    lines: list[str] = []
    if args.kind == "labels":
        version = workspace.label_version(args.key, args.version)
        lines.append(f"label set {version.ref}: {version.n_queries} queries, {version.n_judgments} judgments; "
                     f"{version.change}; made {version.created_at}")
        frames["versions"] = workspace.label_versions(args.key)
    elif args.kind == "run":
        if not args.key.strip().isdigit():
            raise UsageError(f"The run id must be a number (see `evalcore workspace list runs`). Got {args.key!r}.")
        run = workspace.run(int(args.key))
        lines.append(f"run #{run.id} {run.name}: model {run.model}, line {run.line}, file {run.file_name} "
                     f"({run.file_sha256[:12]}), {run.n_queries} queries, uploaded {run.uploaded_at}; "
                     f"price_per_mtok {run.price_per_mtok}, dims {run.dims}, index_bytes {run.index_bytes}")
        evaluations = workspace.evaluations(run_id=run.id)
        frames["evaluations"] = evaluations[_LIST_COLUMNS["evaluations"]] if not evaluations.empty else evaluations
    elif args.kind == "evaluation":
        saved = workspace.evaluation(args.key)
        lines.append(f"{saved.describe()}; saved {saved.created_at}")
        summary = saved.summary
        at_k = summary[summary["k"].isna() | (summary["k"] == 1) | (summary["k"] == saved.k)]
        frames["summary"] = at_k[["run", "model", "metric", "mean", "ci_low", "ci_high", "n", "labels", "labels_version",
                                  "fingerprint", "note"]]
        for run in saved.runs:
            changes = workspace.archive.changes(run.line, run_id=run.id, labels=saved.labels.name, k=saved.k)
            lines.append(changes.summary())
            if not changes.regressions.empty:
                frames[f"regressions: run {run.name}"] = changes.regressions[
                    ["query", "query_text", "first_rank_before", "first_rank", "status_label", "tags", "note"]]
    else:
        history = workspace.history(args.key, labels=args.labels)
        ledger = workspace.archive.ledger(args.key, labels=args.labels, k=args.k)
        changes = workspace.archive.changes(args.key, labels=args.labels, k=args.k)
        lines.append(changes.summary())
        shown = history[history["metric"].isin(["recall@1", f"recall@{changes.k}", "mrr"])]
        frames["history"] = shown[["step", "run_id", "run", "model", "labels_version", "metric", "mean", "ci_low",
                                   "ci_high", "n"]].assign(run_id=lambda f: f["run_id"].astype(str))
        open_count = int(ledger["open"].sum()) if not ledger.empty else 0
        lines.append(f"ledger at k = {changes.k}: {len(ledger)} queries failed at some point, {open_count} open; "
                     f"showing {min(args.limit, len(ledger))}, regressions first")
        frames["ledger"] = ledger.head(max(args.limit, 0))[
            ["query", "query_text", "status_label", "status_by", "first_rank", "first_failed_run", "fixed_run",
             "regressed_run", "n_failed", "n_runs", "tags", "note"]]
    if args.format == "json":
        frames = {name: (f.astype(object).where(pd.notna(f), None) if not f.empty else f) for name, f in frames.items()}
        _write(_frames_json({"about": pd.DataFrame({"text": lines}), **frames}) + "\n")
    else:
        _write("\n".join(lines) + "\n\n" + "\n\n".join(_frame_text(f, n) for n, f in frames.items()) + "\n")
    return EXIT_OK


def _cmd_workspace_delete(args: argparse.Namespace) -> int:
    from ..store.workspace import Workspace

    workspace = Workspace(args.workspace)
    plan = workspace.delete(args.kind, args.key, dry_run=True)
    if not args.yes:
        print(f"Delete {plan.description} from {workspace.location}? This cannot be undone. [y/N] ", end="",
              file=sys.stderr, flush=True)
        answer = sys.stdin.readline().strip().lower()
        if answer not in ("y", "yes"):
            print("evalcore: nothing deleted", file=sys.stderr)
            return EXIT_FAILURE
    done = workspace.delete(args.kind, plan.key)
    print(f"evalcore: deleted {done.description}", file=sys.stderr)
    return EXIT_OK


def _cmd_workspace_add_cases(args: argparse.Namespace) -> int:
    from ..readers.labels import read_labels
    from ..store.workspace import Workspace

    workspace = Workspace(args.workspace)
    stored = workspace.put_file(args.file)
    cases = read_labels(args.file, format=args.cases_format)
    version = workspace.add_cases(args.name, cases, note=args.note)
    if version.created:
        print(f"evalcore: label set {version.ref}: {version.change} (from {stored.name}); earlier versions are "
              "unchanged", file=sys.stderr)
    else:
        print(f"evalcore: label set {version.ref} already has every case in {stored.name}; no new version",
              file=sys.stderr)
    return EXIT_OK


def _cmd_report(args: argparse.Namespace) -> int:
    from ..errors import UsageError
    from ..report.meeting import build_report, report_from_workspace

    options = {"docs": None, "chunk_tokens": args.chunk_tokens, "price_per_mtok": args.price_per_mtok,
               "requests_per_month": args.requests_per_month, "baseline": args.baseline,
               "top_failures": args.top_failures, "title": args.title}
    if args.docs:
        from ..readers.documents import read_documents

        options["docs"] = read_documents(args.docs, format=args.docs_format)
    from_files = args.labels is not None or args.run is not None
    if from_files:
        if args.evaluation is not None or (args.workspace is not None and not args.reveal):
            raise UsageError("Give either --evaluation (a saved evaluation) or --labels and --run (files), not both "
                             "(--workspace goes with --evaluation, or with --reveal to record the view).")
        if args.labels is None or args.run is None:
            raise UsageError("A report from files needs both --labels and --run.")
        k = 10 if args.k is None else args.k
        labels, runs = _load(args)
        scope = _scope(args, labels, runs)
        evaluation = scope.evaluate(runs, sorted({1, k}), min_grade=1 if args.min_grade is None else args.min_grade,
                                    zero_relevant=args.zero_relevant or "exclude",
                                    level=0.95 if args.level is None else args.level,
                                    seed=0 if args.seed is None else args.seed)
        report = build_report(evaluation, k=k, **options)
        if scope.split == "tune":
            _split_notice(scope, "stderr")
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
        from ..store.workspace import Workspace

        workspace = Workspace(args.workspace)
        key = args.evaluation or "latest"
        evaluation_id = workspace.evaluation_id(key)
        if args.evaluation is None:
            print(f"evalcore: report of evaluation {evaluation_id}, the latest in {workspace.location}",
                  file=sys.stderr)
        report = report_from_workspace(workspace, evaluation_id, k=args.k, **options)
    fmt = args.format
    if args.output:
        suffix = os.path.splitext(args.output)[1].lower()
        if fmt is None:
            fmt = "html" if suffix in (".html", ".htm") else "markdown"
        if (fmt == "html") != (suffix in (".html", ".htm")) or suffix not in (".html", ".htm", ".md", ".markdown"):
            raise UsageError(f"--output {args.output}: use a .html file for --format html and a .md file for "
                             "markdown.")
        written = report.write(args.output, charts=not args.no_charts)
        for path in written:
            print(f"evalcore: wrote {path} ({path.stat().st_size:,} bytes)", file=sys.stderr)
    elif (fmt or "markdown") == "html":
        _write(report.to_html(charts=not args.no_charts))
    else:
        _write(report.to_markdown())
    if args.failures_csv:
        with open(args.failures_csv, "w", encoding="utf-8", newline="") as handle:
            handle.write(report.failures_csv())
        print(f"evalcore: wrote {args.failures_csv} ({len(report.failures)} failures at k = {report.k})",
              file=sys.stderr)
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
        return getattr(exc, "exit_code", EXIT_BAD_INPUT)  # workspace failures (busy, damaged) exit 1
    except KeyboardInterrupt:
        return 130
    except Exception as exc:  # the last line of defence: no traceback for users
        if os.environ.get("EVALCORE_DEBUG"):
            raise
        print(f"evalcore: internal error: {type(exc).__name__}: {exc} (set EVALCORE_DEBUG=1 for details)",
              file=sys.stderr)
        return EXIT_FAILURE


