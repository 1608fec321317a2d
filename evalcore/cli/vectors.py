"""``evalcore vectors``: from query and doc vectors to the index-size decision.

Exact search for every labeled query in every variant (full float32, first-d truncations, int8, binary), each
variant's run scored with intervals and compared with the full vectors, one sentence per variant. ``--index SPEC``
adds approximate indexes (HNSW, IVF, IVF-PQ through faiss), each measured against exact search of its dims:
neighbour recall, lost queries, build time, queries per second and latency on one thread. Doc vectors over the
memory budget are searched from disk (`evalcore.vectors.on_disk`). ``--save-runs`` writes each variant's run as a
TREC file (``DIR/NAME.trec``), ready for ``evaluate``, ``budget`` or the dashboard.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from types import SimpleNamespace

from ..analyses.index_size import IndexSizeReport
from ..analyses.index_choice import index_choice
from ..analyses.index_study import (IndexSizeSettings, check_indexes, check_ks_within_depth, index_size_study,
                                     planned_names)
from ..errors import InputError, invalid_parameter
from ..readers.labels import read_labels
from ..readers.vectors import Vectors, check_dimensions, read_vectors
from ..report.amounts import human_bytes
from ..report.index_size import (index_choice_line, index_loss_table, index_size_dict, index_size_rows, index_verdict,
                                  variant_verdict)
from ..report.render import titled_table
from ..vectors.on_disk import open_doc_vectors
from ..vectors.runs import trec_text
from ..warning_log import plural
from .common import Recording, add_split, note, scope, split_notice, warn, write
from .parser import EXIT_OK


def run(args: argparse.Namespace, recording: Recording) -> int:
    if args.build_threads is not None and args.build_threads < 1:
        raise invalid_parameter("build-threads", "a whole number of threads, at least 1", args.build_threads)
    settings = IndexSizeSettings(
        dims=None if args.dims is None else tuple(d.strip() for d in str(args.dims).split(",")),
        precisions=None if args.precision is None else tuple(p.strip() for p in str(args.precision).split(",")),
        indexes=tuple(args.index), build_threads=args.build_threads, similarity=args.similarity,
        depth=args.depth, rescore=args.rescore, k=args.k, metric=args.metric, min_grade=args.min_grade,
        zero_relevant=args.zero_relevant, level=args.level, seed=args.seed, alpha=args.alpha)
    if isinstance(args.depth, int) and args.depth >= 1:
        check_ks_within_depth(settings)
    labels = read_labels(args.labels, format=args.labels_format)
    docs = open_doc_vectors(args.doc_vectors, ids=args.doc_ids, format=args.vectors_format)
    queries = read_vectors(args.query_vectors, ids=args.query_ids, format=args.vectors_format)
    check_dimensions(queries, docs)
    check_indexes(settings, docs.n, docs.dims)  # ranges and memory, before a reveal is recorded or anything built
    model = args.model or _stem(args.doc_vectors)
    planned = [SimpleNamespace(name=n, model=m) for n, m in planned_names(settings, docs.dims, model)]
    scoped = scope(args, labels, planned, recording)  # a --reveal is recorded before anything is searched
    study = index_size_study(labels, scoped, queries, docs, settings, model=model,
                             progress=_progress() if sys.stderr.isatty() else None)
    report = study.report
    split_notice(scoped, args.format)
    warnings = study.all_warnings  # each kind once: degenerate vectors tie in every variant at every k
    if args.format == "json":
        data = index_size_dict(report)
        data["warnings"] = [w.to_dict() for w in warnings]
        write(json.dumps(add_split(data, scoped), ensure_ascii=False, allow_nan=False) + "\n", exact=True)
    else:
        write(report_text(report, model, docs, args))
    warn(warnings)
    if args.save_runs:
        save_runs(report, Path(args.save_runs))
    return EXIT_OK


def report_text(report: IndexSizeReport, model: str, docs: Vectors, args: argparse.Namespace) -> str:
    """The index to take in one sentence, the table for people, one sentence per variant, how sizes are counted."""
    labels = report.evaluation.labels
    n = report.evaluation.results[0].n_queries
    searched = report.reference.n_docs
    left_out = f" ({plural(docs.n - searched, 'all-zero doc vector')} left out)" if searched < docs.n else ""
    title = (f"index size for {model}: {searched:,} docs x {docs.dims:,} dims{left_out}, {args.similarity}, top "
             f"{args.depth} per query; labels {labels.name}#{labels.fingerprint}, n = {n}")
    header, body = index_size_rows(report)
    lines = [index_choice_line(index_choice(report)), "", titled_table(title, header, body), ""]
    for item in report.variants[1:]:
        lines.append(variant_verdict(report, item))
        if index_verdict(report, item):
            lines.append(index_verdict(report, item))
    footnote = (f"Index size = docs x bytes per vector (float32 4 x dims, int8 dims, binary dims / 8) + the doc ids "
                f"({human_bytes(report.reference.index_bytes - searched * docs.dims * 4)}: their UTF-8 bytes + 8 per "
                "doc) + for int8 8 bytes per dim. Intervals: "
                f"{report.evaluation.level * 100:g}% (Wilson or BCa bootstrap); paired tests Holm-adjusted across "
                f"the {len(report.variants) - 1} variants; seed {report.evaluation.seed}.")
    lines += ["", footnote]
    if any(v.speed is not None for v in report.variants):  # approximate indexes: what each loses, how fast
        lines += ["", index_loss_table(report)]
    return "\n".join(lines) + "\n"


def save_runs(report: IndexSizeReport, folder: Path) -> None:
    """Each variant's run as ``FOLDER/NAME.trec`` (the folder is made when missing)."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
        for item in report.variants:
            target = folder / f"{item.name}.trec"
            target.write_text(trec_text(item.run), encoding="utf-8")
    except OSError as exc:
        raise InputError(f"a folder the runs can be written to ({exc.strerror})", source=str(folder)) from None
    note(f"wrote {len(report.variants)} runs to {folder} ({', '.join(v.name + '.trec' for v in report.variants)})")


def _progress():
    def show(share: float, what: str) -> None:
        print(f"\revalcore: searching {what} ({share * 100:3.0f}%)", end="" if share < 1 else "\n",
              file=sys.stderr, flush=True)
    return show


def _stem(path: str) -> str:
    name = Path(str(path)).name
    for suffix in (".gz", ".parquet", ".pq", ".jsonl", ".ndjson", ".npy"):
        name = name.removesuffix(suffix)
    return name
