"""Every argparse definition of the ``evalcore`` command line, and nothing heavy: parsing ``--help`` or a usage
error loads no command's code (the defaults shown come from the core, where each is declared once).

Each command names its handler as ``"module:function"`` (``handler``), a module of this package that `main`
imports only when that command runs. Scoring commands (the ones taking the split options) also set ``scores``:
their handler is given `recording`, the workspace side, loaded on first use.
"""

from __future__ import annotations

import argparse
import sys

from ..analyses.answer_join import DEFAULT_GOOD, DEFAULT_K
from ..analyses.k_settings import DEFAULT_CHUNK_TOKENS, DEFAULT_MAX_K, DEFAULT_PRICE_PER_MTOK
from ..metrics.measures import DESCRIPTIONS
from ..readers.formats import formats_for
from ..readers.grade_parsers import GRADE_FORMATS

EXIT_OK, EXIT_FAILURE, EXIT_BAD_INPUT = 0, 1, 2
"""Exit status: 0 success, 2 bad input or usage, 1 anything else (docs/formats.md)."""


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
    _add_workspace(ev, what="for --save and --reveal")
    ev.add_argument("--label-set", default=None, metavar="NAME",
                    help="with --save or --reveal: the label set to version these labels under (default: the labels "
                         "file stem)")
    ev.add_argument("--line", action="append", default=None, metavar="RUN=LINE",
                    help="with --save: the model line a run belongs to (default: its model string); repeatable. "
                         "With a single --run, LINE alone is enough")
    ev.add_argument("--save-k", type=int, default=None, metavar="K",
                    help="with --save: the k at which each query's hit or miss is recorded (default: the largest --k)")
    _add_split_options(ev)
    ev.set_defaults(handler="evaluate:run")

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
    _add_workspace(aud, when="with --flag or --reveal")
    aud.add_argument("--label-set", default=None, metavar="NAME",
                     help="with --flag or --reveal: the label set the labels are saved under (default: the labels "
                          "file stem)")
    aud.add_argument("--format", choices=("table", "json", "markdown"), default="table",
                     help="output format (default table)")
    _add_interval_options(aud)
    _add_split_options(aud)
    aud.set_defaults(handler="audit:run")

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
    cmp_.add_argument("--at-tokens", type=float, default=None, metavar="N",
                      help="compare chunkings at one prompt budget: each run at its largest k whose mean prompt "
                           "tokens stay within N, paired per query (tokens from the chunks' text, --docs, or "
                           "--chunk-tokens)")
    cmp_.add_argument("--at-tokens-metric", choices=("recall", "evidence_recall"), default="recall",
                      help="with --at-tokens: documents found (recall, the default) or the evidence held "
                           "(evidence_recall, with evidence spans in the labels)")
    cmp_.add_argument("--docs", default=None, metavar="FILE",
                      help="documents file (doc_id and text or tokens), to count prompt tokens for --at-tokens and "
                           "to place chunks given by their text")
    _add_format(cmp_, "--docs-format", "documents", "the documents file")
    cmp_.add_argument("--chunk-tokens", type=int, default=None, metavar="N",
                      help="with --at-tokens: tokens per chunk for chunks without text (default 300 when nothing "
                           "can size them)")
    cmp_.add_argument("--format", choices=("table", "json", "markdown"), default="table")
    _add_interval_options(cmp_, seeded="the bootstrap and sign flips")
    _add_split_options(cmp_, workspace=True)
    cmp_.set_defaults(handler="compare:run")
    _add_answers_command(sub)

    bud = sub.add_parser("budget", help="pick k: recall@k next to the prompt-token cost of k chunks",
                         description="Recall and hit rate at k = 1..max-k next to the prompt tokens and money the k "
                                     "retrieved chunks cost per request, and the k to take per run: the elbow of "
                                     "recall@k, or with a trade-off (--value-per-point or --lam) the k maximising "
                                     "100*recall(k) - lambda*tokens(k)/1000.")
    _add_inputs(bud)
    bud.add_argument("--docs", default=None, metavar="FILE",
                     help="documents file with doc_id and tokens and/or text (CSV, TSV, JSONL, Parquet); "
                          "tokens column first, else text counted with --tokenizer")
    _add_format(bud, "--docs-format", "documents", "the documents file")
    bud.add_argument("--max-k", type=int, default=DEFAULT_MAX_K, help=f"largest k in the table (default {DEFAULT_MAX_K})")
    bud.add_argument("--price-per-mtok", type=float, default=None, metavar="P",
                     help=f"generator LLM price in dollars per million input tokens (default {DEFAULT_PRICE_PER_MTOK:.2f}; "
                          "the run sidecar's price_per_mtok is the embedding model's and is not used for this)")
    bud.add_argument("--requests-per-month", type=float, default=None, metavar="N",
                     help="requests per month, for the cost per month")
    bud.add_argument("--overhead-tokens", type=int, default=0, metavar="T",
                     help="fixed prompt tokens on every request besides the chunks (default 0)")
    bud.add_argument("--chunk-tokens", type=int, default=None, metavar="N",
                     help="tokens per chunk for docs without a count or text, or for every doc without --docs "
                          f"(default {DEFAULT_CHUNK_TOKENS} when no documents file can size the chunks)")
    bud.add_argument("--tokenizer", choices=("o200k_base", "cl100k_base", "chars/4"), default="o200k_base",
                     help="how chunk text is counted (default o200k_base; chars/4 is approximate)")
    _add_trade_off(bud)
    bud.add_argument("--format", choices=("table", "json", "csv"), default="table",
                     help="output format (default table)")
    _add_interval_options(bud)
    _add_split_options(bud, workspace=True)
    bud.set_defaults(handler="budget:run")

    _add_workspace_commands(sub)
    _add_vectors_command(sub)
    _add_sample_command(sub)

    rep = sub.add_parser("report", help="one-page report for a meeting: leaderboard, comparison, cost of k, open "
                                        "failures, provenance (Markdown or self-contained HTML)",
                         description="A one-page report of a saved evaluation (--evaluation, default: the latest in "
                                     "the workspace) or of files (--labels and --run): leaderboard with intervals, "
                                     "paired comparison, the chosen k and its cost (with --docs), the top open "
                                     "failures (regressions first, with the ledger's status, tags and notes) and "
                                     "where every number came from.")
    rep.add_argument("--evaluation", default=None, metavar="ID",
                     help="a saved evaluation id, or 'latest' (the default when no --labels is given)")
    _add_workspace(rep)
    _add_inputs(rep, required=False)
    rep.add_argument("--k", type=int, default=None,
                     help="the chosen k (default: the saved evaluation's; 10 with --labels and --run)")
    rep.add_argument("--baseline", default=None, metavar="NAME",
                     help="run the others are compared with (default: the first run)")
    rep.add_argument("--docs", default=None, metavar="FILE",
                     help="documents file (doc_id and tokens and/or text): adds the prompt-token cost of k")
    _add_format(rep, "--docs-format", "documents", "the documents file")
    rep.add_argument("--chunk-tokens", type=int, default=None, metavar="N",
                     help="tokens per chunk for docs without a count or text (or instead of --docs)")
    rep.add_argument("--price-per-mtok", type=float, default=None, metavar="P",
                     help="generator LLM price in dollars per million input tokens (default 1.00)")
    rep.add_argument("--requests-per-month", type=float, default=None, metavar="N",
                     help="requests per month, for the cost per month")
    _add_trade_off(rep)
    rep.add_argument("--top-failures", type=int, default=5, metavar="N",
                     help="open failures listed per run (default 5)")
    rep.add_argument("--title", default=None, help="report title (default: labels, version and k)")
    rep.add_argument("--format", choices=("markdown", "html", "json"), default=None,
                     help="output format (default: from the --output extension, else markdown); json: the "
                          "decisions (best run, each run's k to take and failures at k)")
    rep.add_argument("--output", default=None, metavar="FILE",
                     help="write here (.html: one self-contained file; .md: Markdown plus PNG charts beside it) "
                          "instead of printing")
    rep.add_argument("--failures-csv", default=None, metavar="FILE",
                     help="also write every failure at k with its context as CSV (formula-safe cells)")
    rep.add_argument("--no-charts", action="store_true", help="leave the PNG charts out")
    rep.add_argument("--grades", action="append", default=None, metavar="NAME=FILE",
                     help="answer grades of run NAME, read as evalcore answers --grades reads them; repeatable: each "
                          "run's mean grade (the grade most graded runs have) beside recall, and where better "
                          "retrieval answers worse")
    rep.add_argument("--grades-format", choices=GRADE_FORMATS, default=None,
                     help="with --grades: override detection of the tool that wrote the grade files")
    rep.add_argument("--query-var", default=None, metavar="NAME",
                     help="with --grades, promptfoo: the var holding the query's text (as evalcore answers)")
    rep.add_argument("--good", type=float, default=None,
                     help=f"with --grades: an answer is good when its grade is at least this "
                          f"(default {DEFAULT_GOOD:g})")
    rep.add_argument("--level", type=float, default=None, help="with --labels: confidence level (default 0.95)")
    rep.add_argument("--seed", type=int, default=None, help="with --labels: seed of the bootstrap (default 0)")
    rep.add_argument("--label-set", default=None, metavar="NAME",
                     help="with --labels and --reveal: the label set the reveal is recorded under (default: the "
                          "labels file stem)")
    _add_split_options(rep)
    rep.set_defaults(handler="report:run")
    return parser


def _add_answers_command(sub) -> None:
    ans = sub.add_parser("answers", help="answer grades (ragas, DeepEval, RAGChecker, promptfoo, a table) joined to "
                                         "retrieval: each run's answers, and where retrieval and the answer disagree",
                         description="Reads per-query answer grades as the evaluation tools write them, joins each "
                                     "graded answer to its labeled query (by id, else by text) and reports each run's "
                                     "mean grade with its interval, paired comparisons between runs, retrieval at k "
                                     "against the answer, the queries where retrieval got better but the answer "
                                     "worse, the rank correlation of recall@k and the grade, and whether two judges "
                                     "of the same answers agree (docs/answers.md).")
    ans.add_argument("--grades", action="append", required=True, metavar="NAME=FILE",
                     help="a grade file of run NAME (FILE alone: named after the file's stem); repeat for several "
                          "runs, or twice for one run to compare two judges of the same answers")
    ans.add_argument("--grades-format", choices=GRADE_FORMATS, default=None,
                     help="override detection of the tool that wrote the grade files")
    ans.add_argument("--query-var", default=None, metavar="NAME",
                     help="promptfoo: the var holding the query's text (default: the first of query, question, "
                          "input, user_input, prompt)")
    _add_inputs(ans, required=False)
    ans.add_argument("--k", type=int, default=DEFAULT_K, help=f"the k of recall@k (default {DEFAULT_K})")
    ans.add_argument("--metric", action="append", default=None, metavar="GRADE",
                     help="a grade to report, as the file names it; repeatable (default: every grade read)")
    ans.add_argument("--good", type=float, default=DEFAULT_GOOD,
                     help=f"an answer is good when its grade is at least this (default {DEFAULT_GOOD:g})")
    ans.add_argument("--format", choices=("table", "json", "csv"), default="table",
                     help="output format (default table)")
    _add_interval_options(ans)
    _add_split_options(ans, workspace=True)
    ans.set_defaults(handler="answers:run")


def _add_vectors_command(sub) -> None:
    vec = sub.add_parser("vectors", help="from query and doc vectors to the index-size decision: exact search, "
                                         "truncated, int8 and binary indexes, each against the full vectors",
                         description="Exact nearest-neighbour search of every labeled query in the doc vectors, in "
                                     "every variant asked for (the first d dimensions, int8, binary sign bits), each "
                                     "variant's run scored with intervals and compared with the full float32 "
                                     "vectors (paired, Holm-adjusted), with its exact index size.")
    vec.add_argument("--labels", required=True, metavar="FILE", help="labels file (any labels format)")
    _add_format(vec, "--labels-format", "labels", "the labels file")
    vec.add_argument("--query-vectors", required=True, metavar="FILE",
                     help="query vectors: Parquet (id and vector columns), JSONL ({\"id\", \"vector\"}) or .npy with "
                          "NAME.ids.txt beside it")
    vec.add_argument("--doc-vectors", required=True, metavar="FILE", help="doc vectors, in the same formats")
    vec.add_argument("--query-ids", default=None, metavar="FILE", help="ids of a .npy query matrix, one per line "
                     "(default: NAME.ids.txt beside it)")
    vec.add_argument("--doc-ids", default=None, metavar="FILE", help="ids of a .npy doc matrix, one per line")
    vec.add_argument("--vectors-format", choices=("parquet", "jsonl", "npy"), default=None,
                     help="override format detection for both vector files")
    vec.add_argument("--model", default=None, metavar="NAME", help="model name in every run's model string "
                     "(default: the doc vectors file stem)")
    vec.add_argument("--dims", default=None, metavar="LIST", help="dimensions kept, e.g. full,512,256,128 (default: "
                     "full and those of 512, 256, 128, 64 below the vectors' own; only full with --index)")
    vec.add_argument("--precision", default=None, metavar="LIST",
                     help="precisions: float32, int8, binary, comma separated (default all three; only float32 with "
                          "--index)")
    vec.add_argument("--index", action="append", default=[], metavar="SPEC",
                     help="also an approximate index, searched and timed (repeat for a sweep): hnsw:m=16:ef=32, "
                          "hnsw-sq8:m=16:ef=64, ivf:nlist=64:nprobe=4, ivfpq:nlist=64:nprobe=8:m=32; add :dims=D "
                          "for the first D dimensions; needs faiss-cpu (pip install -e \".[ann]\")")
    vec.add_argument("--build-threads", type=int, default=None, metavar="N",
                     help="threads that build the indexes of --index (default every core; 1 builds the same index "
                          "every time); searches are timed on one thread")
    vec.add_argument("--rescore", type=int, default=0, metavar="N",
                     help="also rescore each binary variant: its top N by Hamming distance scored again with the "
                          "float vectors (named binary-D-rescored-N; default 0: off)")
    vec.add_argument("--similarity", choices=("cosine", "dot"), default="cosine",
                     help="cosine (default; vectors renormalised, also after truncation) or dot product")
    vec.add_argument("--depth", type=int, default=100, help="docs kept per query (default 100)")
    vec.add_argument("--k", default="1,10", help="cutoffs, comma separated (default 1,10)")
    vec.add_argument("--metric", default=None, metavar="METRIC",
                     help="metric each variant is compared with the full vectors on (default recall at the largest k)")
    vec.add_argument("--alpha", type=float, default=0.05, help="significance level after Holm (default 0.05)")
    vec.add_argument("--min-grade", type=float, default=1, help="relevance threshold: grade >= N is relevant (default 1)")
    vec.add_argument("--zero-relevant", choices=("exclude", "zero"), default="exclude",
                     help="labeled queries with no relevant doc: leave out of means (default) or score 0")
    vec.add_argument("--save-runs", default=None, metavar="DIR",
                     help="also write every variant's run as a TREC file DIR/NAME.trec")
    vec.add_argument("--format", choices=("table", "json"), default="table", help="output format (default table)")
    _add_interval_options(vec, seeded="the bootstrap, sign flips and the training of --index indexes")
    _add_split_options(vec, workspace=True)
    vec.set_defaults(handler="vectors:run")


def _add_sample_command(sub) -> None:
    smp = sub.add_parser("sample", help="the queries to label, drawn from a query log: normalised, personal data "
                                        "masked, near-duplicates merged, stratified, seeded",
                         description="Reads a query log as people have it (OpenSearch UBI queries as JSON lines, a "
                                     "bulk file or an index dump; OpenInference retriever spans from Phoenix or an "
                                     "OpenTelemetry collector as JSON lines, CSV or Parquet; or a table with a query "
                                     "column), out of core, and draws the queries to label: normalised (NFKC, case "
                                     "folded, white space collapsed) and counted, emails, phone and card numbers "
                                     "masked, near-duplicates merged, in strata (head, torso, tail by frequency; "
                                     "zero-result; reformulated), reproducibly (docs/labels-from-traffic.md).")
    smp.add_argument("--log", required=True, metavar="FILE", help="the query log (format detected from its content; "
                     "gzip accepted)")
    smp.add_argument("--log-format", choices=("ubi", "openinference", "table"), default=None,
                     help="the log's kind when its content does not say it: ubi, openinference or table")
    smp.add_argument("--labels", default=None, metavar="FILE",
                     help="labels already made: their queries (by text or id) are left out of the sample and "
                          "counted against the planned size")
    _add_format(smp, "--labels-format", "labels", "the labels file")
    smp.add_argument("--n", type=int, default=None, metavar="N",
                     help="queries to sample (default: the planner's queries needed to detect --target-diff, less "
                          "the labeled ones)")
    smp.add_argument("--target-diff", type=float, default=None, metavar="D",
                     help="without --n: the difference between two models the sample should detect, on the "
                          "metric's 0..1 scale (default 0.05 = 5 points)")
    smp.add_argument("--seed", type=int, default=0, help="seed of the draw: the same log, labels and seed give the "
                     "same sample (default 0)")
    smp.add_argument("--allocate", choices=("proportional", "equal"), default="proportional",
                     help="queries per stratum: proportional to its logged queries (default) or equal")
    smp.add_argument("--near-duplicates", type=float, default=0.8, metavar="J",
                     help="similarity (Jaccard of character 3-grams) at which two queries are merged as "
                          "near-duplicates (default 0.8; 1 merges none)")
    smp.add_argument("--output", default=None, metavar="FILE",
                     help="also write the sample as a queries file (query_id, query_text, source, stratum, count, "
                          "logged_doc_ids, clicked_doc_ids): .csv, .tsv, .parquet, else JSON lines")
    smp.add_argument("--production-run", default=None, metavar="FILE",
                     help="also write the results the log gave the sampled queries as a TREC run named production "
                          "(the queries file's ids), to score against the labels they become; none without results")
    smp.add_argument("--format", choices=("table", "json", "csv"), default="table",
                     help="output format (default table)")
    smp.set_defaults(handler="sample:run")


def _add_workspace_commands(sub) -> None:
    ws = sub.add_parser("workspace", help="list, show, delete, extend and verify what the workspace holds",
                        description="The workspace keeps label sets (versioned), runs, evaluations and the failure "
                                    "ledger in one SQLite file under $EVALCORE_WORKSPACE (default "
                                    "~/.local/share/evalcore). Save into it with `evalcore evaluate ... --save`.")
    actions = ws.add_subparsers(dest="action", required=True, parser_class=_Parser)

    def common(parser: argparse.ArgumentParser, formats: bool = True) -> None:
        _add_workspace(parser)
        if formats:
            parser.add_argument("--format", choices=("table", "json"), default="table",
                                help="output format (default table)")

    ls = actions.add_parser("list", help="label sets, runs, evaluations, model lines and files")
    ls.add_argument("what", nargs="?", default="all",
                    choices=("all", "labels", "runs", "evaluations", "lines", "files", "events"),
                    help="what to list (events: the log of who did what, newest first; not part of all)")
    common(ls)
    ls.set_defaults(handler="workspace:list_contents")

    show = actions.add_parser("show", help="one label set, run, evaluation or model line in detail")
    show.add_argument("kind", choices=("labels", "run", "evaluation", "line"))
    show.add_argument("key", metavar="NAME_OR_ID", help="label set or line name, run id, evaluation id or 'latest'")
    show.add_argument("--version", type=int, default=None, help="labels: the version (default: the latest)")
    show.add_argument("--labels", default=None, metavar="NAME",
                      help="line: the label set (default: that of the line's latest evaluation)")
    show.add_argument("--k", type=int, default=None, help="line: the k of hit or miss (default: the latest evaluation's)")
    show.add_argument("--limit", type=int, default=20, help="line: ledger rows shown (default 20)")
    common(show)
    show.set_defaults(handler="workspace:show")

    delete = actions.add_parser("delete", help="delete a label set (all versions), run, evaluation or unused file")
    delete.add_argument("kind", choices=("labels", "run", "evaluation", "file"))
    delete.add_argument("key", metavar="NAME_OR_ID", help="label set name, run id, evaluation id or 'latest', file hash")
    delete.add_argument("--yes", action="store_true", help="delete without asking for confirmation")
    _add_who(delete, "the deletion")
    common(delete, formats=False)
    delete.set_defaults(handler="workspace:delete")

    add = actions.add_parser("add-cases", help="a new version of a label set with more cases (e.g. production misses)")
    add.add_argument("name", metavar="LABEL_SET")
    add.add_argument("file", metavar="FILE", help="labels file with the cases (any labels format)")
    _add_format(add, "--cases-format", "labels", "the cases file")
    add.add_argument("--note", default=None, help="why this version was made")
    _add_who(add, "the new version")
    common(add, formats=False)
    add.set_defaults(handler="workspace:add_cases")

    check = actions.add_parser("verify", help="check the workspace and remove stored files nothing uses (left by "
                                              "a save that was killed)")
    check.add_argument("--older-than", type=float, default=None, metavar="MINUTES",
                       help="only remove unused files stored more than MINUTES ago: a save running now may be about "
                            "to use a newer one (default 60)")
    check.add_argument("--dry-run", action="store_true", help="list the unused files without removing them")
    check.add_argument("--expect", default=None, metavar="HASH",
                       help="the anchor an earlier verify printed (kept outside the workspace, e.g. in release notes "
                            "or a CI log): exit 1 unless the record still holds that event unchanged, which tells "
                            "its newest events removed or the whole record rewritten")
    common(check, formats=False)
    check.set_defaults(handler="workspace:verify")


def _add_judge_commands(sub) -> None:
    judge = sub.add_parser("judge", help="blind judging: export a shuffled pool of every run's top docs for a "
                                         "query, save a person's marks as a new label-set version, or several "
                                         "judges' marks: their agreement, adjudication and freeze",
                           description="Blind judging. `judge pool` writes the union of every run's top --depth docs "
                                       "for one query, shuffled, without rank, score or run, as CSV with an empty "
                                       "relevant column; a person fills it in (yes or no); `judge save` stores the "
                                       "marks as a new version of a saved label set (the query marked blind, the "
                                       "judged depth recorded; earlier versions unchanged). `judge queue` lists the "
                                       "queries flagged for re-judging. Several judges each save their marks with "
                                       "`judge save --keep-apart`, blind to each other's; `judge agreement`, `judge "
                                       "disagreements`, `judge adjudicate` and `judge freeze` (one new version) "
                                       "follow.")
    actions = judge.add_subparsers(dest="action", required=True, parser_class=_Parser)
    pool = actions.add_parser("pool", help="the shuffled judging pool of one query, as CSV",
                              description="With --queries a sampled queries file (query_id, query_text, source, "
                                          "stratum, as `evalcore sample --output` writes it), the pool takes the "
                                          "query's text, the docs its log gave (logged_doc_ids, clicked_doc_ids) "
                                          "and its source and stratum, which a freeze keeps with the query.")
    _add_inputs(pool)
    pool.add_argument("--query", required=True, metavar="QUERY", help="the query id to judge")
    pool.add_argument("--depth", type=int, default=10, metavar="D",
                      help="pool each run's top D docs (default 10); raise it to extend coverage before quoting a "
                           "deeper k")
    pool.add_argument("--seed", type=int, default=0, help="seed of the shuffle (default 0)")
    pool.add_argument("--docs", default=None, metavar="FILE", help="documents file: adds each doc's text to the pool")
    _add_format(pool, "--docs-format", "documents", "the documents file")
    pool.add_argument("--output", default=None, metavar="FILE", help="write the CSV here instead of printing it")
    pool.set_defaults(handler="judge:pool")

    save = actions.add_parser("save", help="save a filled-in pool as a new version of a label set (or one judge's "
                                           "marks, with --keep-apart)")
    save.add_argument("name", metavar="LABEL_SET")
    save.add_argument("file", metavar="FILE", help="the pool CSV with its relevant column filled in (yes or no)")
    save.add_argument("--judge", "--who", dest="judge", default=None, metavar="NAME",
                      help="who judged, a claim recorded with the round beside the login name (default: the login "
                           "name alone)")
    save.add_argument("--keep-apart", action="store_true",
                      help="one of several judges: keep the marks under the person, apart from everyone else's "
                           "(saving again replaces them), with no version until `judge freeze`")
    _add_workspace(save)
    save.set_defaults(handler="judge:save")

    queue = actions.add_parser("queue", help="queries flagged for blind re-judging, and the judging rounds done")
    queue.add_argument("name", metavar="LABEL_SET", nargs="?", default=None)
    queue.add_argument("--all", action="store_true", help="also list resolved entries")
    _add_workspace(queue)
    queue.add_argument("--format", choices=("table", "json"), default="table", help="output format (default table)")
    queue.set_defaults(handler="judge:queue")

    agree = actions.add_parser("agreement", help="how far several judges agree: the Integrity page's sentence, then "
                                                 "each statistic (percent agreement, Cohen's and Fleiss' kappa, "
                                                 "Krippendorff's alpha) with its interval over queries")
    differ = actions.add_parser("disagreements", help="the open pairs several judges differ on, each judge's mark")
    for parser, formats in ((agree, ("table", "json")), (differ, ("table", "csv", "json"))):
        parser.add_argument("name", metavar="LABEL_SET")
        _add_workspace(parser)
        parser.add_argument("--format", choices=formats, default="table", help="output format (default table)")
    _add_interval_options(agree)
    agree.set_defaults(handler="judge_panel:agreement")
    differ.set_defaults(handler="judge_panel:disagreements_of")

    decide = actions.add_parser("adjudicate", help="decide a pair the judges disagree on (an owner's action)")
    decide.add_argument("name", metavar="LABEL_SET")
    decide.add_argument("--query", required=True, metavar="QUERY", help="the query id of the pair")
    decide.add_argument("--doc", required=True, metavar="DOC", help="the doc id of the pair")
    decide.add_argument("--relevant", required=True, metavar="yes|no", help="the decision: yes (relevant) or no")
    decide.add_argument("--note", default=None, help="why, kept with the decision")
    decide.set_defaults(handler="judge_panel:adjudicate")
    freeze = actions.add_parser("freeze", help="several judges' marks as one new label-set version (an owner's "
                                               "action): each pair's adjudicated mark, else the majority; each query "
                                               "blind, with its source and stratum; refused while a tie is undecided")
    freeze.add_argument("name", metavar="LABEL_SET")
    freeze.set_defaults(handler="judge_panel:freeze")
    for parser, what in ((decide, "the decision"), (freeze, "the new version")):
        _add_who(parser, what)
        _add_workspace(parser)


def _add_split_options(parser: argparse.ArgumentParser, workspace: bool = False) -> None:
    """--split, --hash-split, --reveal and --who, as every command that scores labels takes them (``scores``: its
    handler is also given the workspace side, for a --reveal)."""
    parser.set_defaults(scores=True)
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
                        help="with --reveal (or --save, --flag): the person looking or saving, a claim recorded "
                             "beside the login name (default: the login name alone)")
    if workspace:
        _add_workspace(parser, when="with --reveal", what="the view is recorded in")
        parser.add_argument("--label-set", default=None, metavar="NAME",
                            help="with --reveal: the label set the view is recorded under (default: the labels file "
                                 "stem)")


def _add_workspace(parser: argparse.ArgumentParser, when: str | None = None, what: str | None = None) -> None:
    """--workspace, as every command that reads or writes the workspace takes it (``when``: the options it is for,
    e.g. "with --save or --reveal"; ``what``: what it holds there)."""
    lead = f"{when}: " if when else ""
    held = f" {what}" if what else ""
    parser.add_argument("--workspace", default=None, metavar="DIR",
                        help=f"{lead}workspace folder{held} (default: $EVALCORE_WORKSPACE, else ~/.local/share/evalcore)")


def _add_who(parser: argparse.ArgumentParser, what: str) -> None:
    parser.add_argument("--who", default=None, metavar="NAME",
                        help=f"the person recorded with {what} in the workspace's log of who did what, a claim "
                             "recorded beside the login name (default: the login name alone)")


def _add_interval_options(parser: argparse.ArgumentParser, seeded: str = "the bootstrap") -> None:
    """--level and --seed, as every command that prints intervals takes them."""
    parser.add_argument("--level", type=float, default=0.95, help="confidence level of intervals (default 0.95)")
    parser.add_argument("--seed", type=int, default=0, help=f"seed of {seeded} (default 0)")


def _add_trade_off(parser: argparse.ArgumentParser) -> None:
    """--lam or --value-per-point: the trade-off that turns the k to take from the elbow into the trade-off's pick."""
    trade = parser.add_mutually_exclusive_group()
    trade.add_argument("--lam", type=float, default=None, metavar="L",
                       help="recall points 1,000 more prompt tokens per request must buy; without it or "
                            "--value-per-point the k to take is the elbow of recall@k")
    trade.add_argument("--value-per-point", type=float, default=None, metavar="V",
                       help="dollars per month one recall point is worth; with --requests-per-month derives "
                            "lambda from the price")


def _add_format(parser: argparse.ArgumentParser, option: str, kind: str, what: str) -> None:
    """A ``--*-format`` option: the formats named in its help are those the readers take for ``kind``
    (`evalcore.readers.formats`); the name is checked when the file is read (any case, aliases too)."""
    names = formats_for(kind)
    parser.add_argument(option, default=None, metavar="FORMAT",
                        help=f"override format detection for {what}: {', '.join(names[:-1])} or {names[-1]}")


def _add_inputs(parser: argparse.ArgumentParser, required: bool = True) -> None:
    parser.add_argument("--labels", required=required, metavar="FILE", help="labels file (TREC qrels, BEIR, CSV/TSV, "
                        "Parquet, JSON or JSONL; .gz accepted)")
    parser.add_argument("--run", required=required, action="append", metavar="FILE",
                        help="run file (TREC, CSV/TSV, Parquet, JSON or JSONL), or NAME=FILE to name it; repeat "
                             "for several runs. Metadata comes from a sidecar <stem>.meta.json when present")
    parser.add_argument("--chunks", action="append", metavar="FILE", default=None,
                        help="chunk map (chunk_id, doc_id, optional start, end, text; CSV, TSV, JSONL or Parquet) "
                             "when the runs rank chunks and the labels name documents: k then counts chunks. "
                             "FILE for every run, or NAME=FILE for run NAME (runs from different chunkings each "
                             "name their own); repeatable")
    parser.add_argument("--queries", default=None, metavar="FILE",
                        help="queries file giving each query's text (BEIR queries.jsonl with _id and text, or a "
                             "table with query_id and query_text) when the labels carry ids only")
    _add_format(parser, "--labels-format", "labels", "the labels file")
    _add_format(parser, "--run-format", "run", "the run files")
    parser.add_argument("--min-grade", type=float, default=1 if required else None,
                        help="relevance threshold: grade >= N is relevant (default 1)")
    parser.add_argument("--zero-relevant", choices=("exclude", "zero"), default="exclude" if required else None,
                        help="labeled queries with no relevant doc: leave out of means (default) or score 0 "
                             "as trec_eval does")
