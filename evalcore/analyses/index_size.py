"""The index-size decision: every variant's numbers with intervals, and each smaller index compared with the full
float32 vectors on the same queries (paired, Holm across the variants). The sentence a manager reads aloud
("binary 256 loses 4.1 points of recall@10 against full vectors ...; the index is 24x smaller") and the CLI's
table and JSON are `evalcore.report.index_size`'s. Each variant is also measured against exact float32 search of
its own dims (`evalcore.analyses.index_loss`: neighbour recall and lost queries), and an approximate index carries
its speed (build seconds, queries per second and latency on one thread).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ..errors import InputError, UsageError
from ..metrics.evaluation import Evaluation
from ..metrics.measures import Measure, parse_ks
from ..readers.labels import LabelSet
from ..readers.vectors import Vectors, labeled_only
from ..stats.paired import Comparison
from ..vectors.runs import VariantRun
from ..warning_log import EvalWarning
from .compare import compare_evaluation
from .index_loss import IndexLoss, index_loss


@dataclass(frozen=True)
class IndexSizeReport:
    """The variants of one model's vectors, scored together and compared with the full float32 reference."""

    evaluation: Evaluation
    variants: tuple[VariantRun, ...]
    metric: str
    comparisons: dict[str, Comparison]
    losses: dict[str, IndexLoss] = field(default_factory=dict)
    """Each variant against exact float32 search of its dims (when the study searched that), by run name."""

    @property
    def reference(self) -> VariantRun:
        return self.variants[0]

    def ratio(self, item: VariantRun) -> float:
        """How many times smaller than the reference this variant's index is."""
        return self.reference.index_bytes / item.index_bytes

    def exact_for(self, item: VariantRun) -> VariantRun | None:
        """The exact float32 search of ``item``'s dims, which its neighbour recall and lost queries are against."""
        loss = self.losses.get(item.name)
        return None if loss is None else next(v for v in self.variants if v.name == loss.exact)

    def speedup(self, item: VariantRun) -> float | None:
        """How many times more queries per second than exact search of the same dims (both on one thread)."""
        exact = self.exact_for(item)
        if item.speed is None or exact is None or exact.speed is None:
            return None
        return item.speed.queries_per_second / exact.speed.queries_per_second

    def metric_names(self) -> list[str]:
        return [f"recall@{k}" for k in self.evaluation.ks] + ["mrr"]

    def metrics(self, item: VariantRun) -> dict[str, dict[str, float]]:
        summary = self.evaluation.summary
        rows = summary[summary["run"] == item.name].set_index("metric")
        return {m: {"mean": float(rows.at[m, "mean"]), "ci_low": float(rows.at[m, "ci_low"]),
                    "ci_high": float(rows.at[m, "ci_high"])} for m in self.metric_names()}

    def to_dict(self) -> dict:
        """``{"variants": [{"name", "dims", "precision", "index_bytes", "n_docs", "metrics", "vs_full"}, ...]}`` and
        the context every number travels with (model, labels and fingerprint, n, settings); the numbers only
        (`evalcore.report.index_size.index_size_dict` adds each variant's verdict)."""
        labels = self.evaluation.labels
        out = []
        for item in self.variants:
            found = self.comparisons.get(item.name)
            vs_full = None
            if found is not None:
                vs_full = {"metric": found.metric, "diff": found.diff, "ci_low": found.ci_low, "ci_high": found.ci_high,
                           "p_adjusted": found.p_adjusted}
            out.append({"name": item.name, "dims": item.variant.dims, "precision": item.variant.precision,
                        "index_bytes": item.index_bytes, "n_docs": item.n_docs, "model": item.run.model,
                        "n": self.evaluation[item.name].n_queries, "metrics": self.metrics(item), "vs_full": vs_full,
                        **self.index_fields(item)})
        speeds = [v.speed for v in self.variants if v.speed is not None]
        built = [v.speed.build_threads for v in self.variants if v.speed is not None and not v.variant.is_exact]
        measured = {"index_k": self.evaluation.ks[-1]}
        if speeds:
            measured |= {"search_threads": 1, "build_threads": built[0] if built else None,
                         "engine": speeds[0].engine}
        return {"variants": out,
                "labels": {"name": labels.name, "fingerprint": labels.fingerprint, "n_queries": labels.n_queries},
                "settings": {**self.evaluation.settings(), "compared_on": self.metric,
                             "reference": self.reference.name, **measured}}

    def index_fields(self, item: VariantRun) -> dict:
        """``index`` (the SPEC), ``params``, the ``exact`` run it is measured against, ``neighbor_recall``,
        ``lost_queries``, ``build_seconds``, ``queries_per_second`` and ``latency_ms`` (None where not measured)."""
        spec = item.variant.index
        loss = self.losses.get(item.name)
        recall, lost = loss.to_dict() if loss is not None else (None, None)
        speed = item.speed.to_dict() if item.speed is not None else \
            {"build_seconds": None, "queries_per_second": None, "latency_ms": None}
        return {"index": spec.canonical if spec is not None else None,
                "params": spec.as_dict() if spec is not None else None,
                "exact": loss.exact if loss is not None else None, "neighbor_recall": recall, "lost_queries": lost,
                **speed}

    def _speed_point(self, item: VariantRun) -> dict:
        """The columns of a point on the speed chart: exact or approximate, its sweep (the build it shares),
        queries per second, latency, build seconds, neighbour recall and lost queries (NaN where not measured)."""
        loss, speed, spec = self.losses.get(item.name), item.speed, item.variant.index
        sweep = "exact"
        if spec is not None:
            built = [f"{n} = {v}" for n, v in spec.params if n in spec.given and n != spec.info.search_param]
            sweep = " ".join([spec.info.title, ", ".join(built)]).strip() + (f" at {spec.dims} dims" if spec.dims
                                                                             else "")
        return {"exact": item.variant.is_exact, "sweep": sweep,
                "queries_per_second": speed.queries_per_second if speed else np.nan,
                "latency_p50_ms": speed.latency_p50_ms if speed else np.nan,
                "latency_p99_ms": speed.latency_p99_ms if speed else np.nan,
                "build_seconds": speed.build_seconds if speed else np.nan,
                "neighbor_recall": loss.mean if loss else np.nan, "neighbor_recall_p5": loss.p5 if loss else np.nan,
                "lost": len(loss.lost) if loss else np.nan}

    def points(self, metric: str | None = None) -> pd.DataFrame:
        """One row per variant for a quality-against-size chart: run, variant, dims, precision, index_bytes,
        index_mb, ratio, mean, ci_low, ci_high, n, model, the speed chart's columns (`_speed_point`), and
        ``frontier`` (no smaller index scores as high: the variants worth choosing between)."""
        chosen = metric or self.metric
        summary = self.evaluation.summary
        rows = []
        for item in self.variants:
            row = summary[(summary["run"] == item.name) & (summary["metric"] == chosen)].iloc[0]
            rows.append({"run": item.name, "variant": item.variant.name, "words": item.variant.words,
                         "dims": item.variant.dims, "precision": item.variant.precision,
                         "index_bytes": item.index_bytes, "index_mb": item.index_bytes / 1e6,
                         "ratio": self.ratio(item), "metric": chosen, "mean": float(row["mean"]),
                         "ci_low": float(row["ci_low"]), "ci_high": float(row["ci_high"]), "n": int(row["n"]),
                         "model": item.run.model, **self._speed_point(item)})
        frame = pd.DataFrame(rows)
        order = frame.sort_values(["index_bytes", "mean"], ascending=[True, False]).index
        best, frontier = -np.inf, pd.Series(False, index=frame.index)
        for i in order:
            if frame.at[i, "mean"] > best:
                frontier[i], best = True, frame.at[i, "mean"]
        frame["frontier"] = frontier
        return frame


def scoped_queries(queries: Vectors, labels: LabelSet, scope) -> tuple[Vectors, tuple[EvalWarning, ...]]:
    """The query vectors to search: those of the queries ``scope`` scores (the tune side when the labels carry a
    split). Checked against the whole label set first: none labeled is an error naming the file; vectors of
    unlabeled queries, and labeled queries without a vector, are warnings."""
    checked, warnings = labeled_only(queries, labels.queries, labels.name)
    wanted = np.isin(checked.ids, np.asarray(scope.labels.queries, dtype=object))
    if not wanted.any():
        raise InputError(f"query vectors for the {scope.labels.n_queries:,} queries of {scope.labels.name}",
                         source=queries.name)
    return checked.subset(wanted), warnings


def index_size_report(variants: Sequence[VariantRun], scope, k: int | str | Sequence[int] = (1, 10), *,
                      metric: str | None = None, min_grade: float = 1, zero_relevant: str = "exclude",
                      level: float = 0.95, seed: int = 0, alpha: float = 0.05) -> IndexSizeReport:
    """Score every variant's run on ``scope`` (a `evalcore.metrics.split.SplitView`: the labels a front end may
    score) and compare each with the first, the full float32 reference, on ``metric`` (default recall at the
    largest k), Holm-adjusted across the variants."""
    if not variants or not variants[0].variant.is_reference:
        raise UsageError("The first variant must be the full float32 vectors: every other one is compared with it.")
    ks = parse_ks(k)
    chosen = str(Measure.parse(metric)) if metric else f"recall@{ks[-1]}"
    wanted = Measure.parse(chosen)
    if wanted.k is not None and wanted.k > ks[-1]:
        ks = tuple(sorted(set(ks) | {wanted.k}))
    evaluation = scope.evaluate([v.run for v in variants], ks, min_grade=min_grade, zero_relevant=zero_relevant,
                                level=level, seed=seed)
    comparisons: dict[str, Comparison] = {}
    if len(variants) > 1:
        report = compare_evaluation(evaluation, [chosen], baseline=variants[0].name, alpha=alpha)
        comparisons = {c.run: c for c in report.comparisons}
    return IndexSizeReport(evaluation, tuple(variants), chosen, comparisons,
                           losses(variants, evaluation, min_grade=min_grade, level=level))


def losses(variants: Sequence[VariantRun], evaluation: Evaluation, *, min_grade: float = 1,
           level: float = 0.95) -> dict[str, IndexLoss]:
    """Every variant against the exact float32 search of its dims, where the study searched that, at the largest
    k: neighbour recall and lost queries (`evalcore.analyses.index_loss`)."""
    exact = {v.variant.dims: v for v in variants
             if v.variant.is_exact and v.variant.precision == "float32" and not v.variant.rescore}
    k = evaluation.ks[-1]
    out = {}
    for item in variants:
        found = exact.get(item.variant.dims)
        if found is not None:
            out[item.name] = index_loss(item.run, found.run, evaluation.labels, k,
                                        evaluation[item.name].queries, min_grade=min_grade, level=level)
    return out
