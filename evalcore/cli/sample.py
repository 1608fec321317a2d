"""``evalcore sample``: the queries to label, drawn from a query log (UBI, OpenInference spans or a plain table),
normalised, personal data masked, near-duplicates merged, stratified and seeded (`evalcore.logs.sampling`)."""

from __future__ import annotations

import argparse
import json

import pandas as pd

from ..logs.production_run import PRODUCTION, write_production_run
from ..logs.queries_out import write_queries
from ..logs.sampling import LogSample, sample_log
from ..report.log_sample import logged_sentence, pii_sentence, plan_sentence, read_sentence
from ..report.render import titled_table
from ..safe_text import to_csv
from ..warning_log import plural
from .common import note, warn, write
from .parser import EXIT_OK


def run(args: argparse.Namespace) -> int:
    found = sample_log(args.log, log_format=args.log_format, labels=args.labels, labels_format=args.labels_format,
                       n=args.n, seed=args.seed, allocation=args.allocate, target_diff=args.target_diff,
                       threshold=args.near_duplicates)
    if args.format == "json":
        write(json.dumps(found.to_dict(), ensure_ascii=False, allow_nan=False) + "\n", exact=True)
    elif args.format == "csv":
        write(to_csv(sample_frame(found)), exact=True)
        warn(found.warnings)
    else:
        write(sample_text(found))
        warn(found.warnings)
    if args.output:
        written = write_queries(found.sample, args.output)
        note(f"wrote {args.output} ({written}): {plural(len(found.sample), 'query', 'queries')} with query_id, "
             "query_text, source 'customer log', stratum, count and the docs the log gave them (logged_doc_ids, "
             "clicked_doc_ids); read it with --queries, the Data page, or as the queries to run your retriever on "
             "before judging them blind")
    if args.production_run:
        _production(found, args.production_run)
    return EXIT_OK


def _production(found: LogSample, path: str) -> None:
    """Write the production run, or say plainly why there is none."""
    lines = write_production_run(found.sample, path)
    if not lines:
        note(f"no production run written to {path}: the log lists no results for the sampled queries")
        return
    queries = plural(found.logged.with_results if found.logged else 0, "sampled query", "sampled queries")
    note(f"wrote {path}: the results the log gave {queries} as a TREC run named {PRODUCTION} "
         f"({plural(lines, 'line')}); once the sample is judged and frozen, score it: evalcore evaluate --labels "
         f"LABELS --run {PRODUCTION}={path}")


def sample_frame(found: LogSample) -> pd.DataFrame:
    """The sample, one row per query: text, count, stratum, id, source, near-duplicates merged into it, and how many
    results the log gave it and docs were clicked."""
    return pd.DataFrame({"query": [r["query"] for r in found.sample], "count": [r["count"] for r in found.sample],
                         "stratum": [r["stratum"] for r in found.sample],
                         "query_id": [r["query_id"] for r in found.sample],
                         "source": [r["source"] for r in found.sample],
                         "variants": [" | ".join(r["variants"]) for r in found.sample],
                         "logged": [r["logged"] for r in found.sample],
                         "clicked": [r["clicked"] for r in found.sample]},
                        columns=["query", "count", "stratum", "query_id", "source", "variants", "logged", "clicked"])


def sample_text(found: LogSample) -> str:
    """The sample for people: what was read, what was masked, the strata and the queries drawn."""
    data = found.to_dict()
    lines = [read_sentence(data), pii_sentence(data), plan_sentence(found), logged_sentence(data)]
    lines.append("")
    lines.append(titled_table("strata", ["stratum", "queries", "distinct", "labeled", "sampled"],
                              [[s["name"], f"{s['queries']:,}", f"{s['distinct']:,}", f"{s['labeled']:,}",
                                f"{s['sampled']:,}"] for s in data["strata"]]))
    lines.append("")
    lines.append(titled_table("sample", ["query", "count", "stratum", "query_id"],
                              [[_short(r["query"]), f"{r['count']:,}", r["stratum"], r["query_id"]]
                               for r in data["sample"]]))
    return "\n".join(lines) + "\n"


def _short(text: str, most: int = 70) -> str:
    return text if len(text) <= most else text[:most - 3] + "..."
