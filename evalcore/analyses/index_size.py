"""The index-size decision: every variant's numbers with intervals, each smaller index compared with the full
float32 vectors on the same queries (paired, Holm across the variants), and a sentence a manager can read aloud:
"binary 256 loses 4.1 points of recall@10 against full vectors (95% CI 2.0 to 6.3; p < 0.001 after Holm;
n = 224); the index is 24x smaller". Each variant is also measured against exact float32 search of its own dims
(`evalcore.analyses.index_loss`: neighbour recall and lost queries), and an approximate index gets a second
sentence: "HNSW ef = 32 loses the answer for 7 of 224 queries (3.1%, 95% CI 1.5% to 6.3%) and answers 4.0x faster
than exact search".
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ..errors import InputError, UsageError
from ..metrics.evaluation import Evaluation
from ..metrics.measures import Measure, parse_ks
from ..readers.labels import LabelSet
from ..readers.vectors import Vectors, labeled_only
from ..stats.paired import Comparison, format_amount, format_p
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

    def verdict(self, item: VariantRun) -> str | None:
        """The plain sentence for one variant (None for the reference)."""
        found = self.comparisons.get(item.name)
        return None if found is None else verdict_sentence(item, found, self.ratio(item))

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

    def index_verdict(self, item: VariantRun) -> str | None:
        """The sentence for an approximate index (None for an exact variant)."""
        loss = self.losses.get(item.name)
        if item.variant.is_exact or loss is None:
            return None
        return index_sentence(item.variant.words, loss, self.speedup(item), item)

    def metric_names(self) -> list[str]:
        return [f"recall@{k}" for k in self.evaluation.ks] + ["mrr"]

    def metrics(self, item: VariantRun) -> dict[str, dict[str, float]]:
        summary = self.evaluation.summary
        rows = summary[summary["run"] == item.name].set_index("metric")
        return {m: {"mean": float(rows.at[m, "mean"]), "ci_low": float(rows.at[m, "ci_low"]),
                    "ci_high": float(rows.at[m, "ci_high"])} for m in self.metric_names()}

    def to_dict(self) -> dict:
        """``{"variants": [{"name", "dims", "precision", "index_bytes", "n_docs", "metrics", "vs_full"}, ...]}`` and
        the context every number travels with (model, labels and fingerprint, n, settings)."""
        labels = self.evaluation.labels
        out = []
        for item in self.variants:
            found = self.comparisons.get(item.name)
            vs_full = None
            if found is not None:
                vs_full = {"metric": found.metric, "diff": found.diff, "ci_low": found.ci_low, "ci_high": found.ci_high,
                           "p_adjusted": found.p_adjusted, "verdict": self.verdict(item)}
            out.append({"name": item.name, "dims": item.variant.dims, "precision": item.variant.precision,
                        "index_bytes": item.index_bytes, "n_docs": item.n_docs, "model": item.run.model,
                        "n": self.evaluation[item.name].n_queries, "metrics": self.metrics(item), "vs_full": vs_full,
                        **self._index_fields(item)})
        speeds = [v.speed for v in self.variants if v.speed is not None]
        measured = {"index_k": self.evaluation.ks[-1], "search_threads": 1,
                    "build_threads": next((s.build_threads for s in speeds if s.build_threads is not None), None),
                    "engine": speeds[0].engine} if speeds else {"index_k": self.evaluation.ks[-1]}
        return {"variants": out,
                "labels": {"name": labels.name, "fingerprint": labels.fingerprint, "n_queries": labels.n_queries},
                "settings": {**self.evaluation.settings(), "compared_on": self.metric,
                             "reference": self.reference.name, **measured}}

    def _index_fields(self, item: VariantRun) -> dict:
        """``index``, ``params``, ``neighbor_recall``, ``lost_queries``, ``build_seconds``, ``queries_per_second``,
        ``latency_ms``, the ``exact`` run they are measured against and the ``index_verdict`` sentence (None where
        not measured)."""
        spec = item.variant.index
        loss = self.losses.get(item.name)
        recall, lost = loss.to_dict() if loss is not None else (None, None)
        speed = item.speed.to_dict() if item.speed is not None else \
            {"build_seconds": None, "queries_per_second": None, "latency_ms": None}
        return {"index": spec.canonical if spec is not None else None,
                "params": spec.as_dict() if spec is not None else None,
                "exact": loss.exact if loss is not None else None, "neighbor_recall": recall, "lost_queries": lost,
                **speed, "index_verdict": self.index_verdict(item)}

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), ensure_ascii=False, allow_nan=False)

    def points(self, metric: str | None = None) -> pd.DataFrame:
        """One row per variant for a quality-against-size chart: run, variant, dims, precision, index_bytes,
        index_mb, ratio, mean, ci_low, ci_high, n, model, verdict, and ``frontier`` (no smaller index scores as
        high: the variants worth choosing between)."""
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
                         "model": item.run.model, "verdict": self.verdict(item) or "the full vectors (reference)",
                         **self._speed_point(item)})
        frame = pd.DataFrame(rows)
        order = frame.sort_values(["index_bytes", "mean"], ascending=[True, False]).index
        best, frontier = -np.inf, pd.Series(False, index=frame.index)
        for i in order:
            if frame.at[i, "mean"] > best:
                frontier[i], best = True, frame.at[i, "mean"]
        frame["frontier"] = frontier
        return frame

    def _speed_point(self, item: VariantRun) -> dict:
        """The columns of a point on the speed chart: exact or approximate, its sweep (the build it shares),
        queries per second, latency, neighbour recall and lost queries (NaN where not measured)."""
        loss, speed, spec = self.losses.get(item.name), item.speed, item.variant.index
        return {"exact": item.variant.is_exact,
                "sweep": (spec.info.title + " " + ", ".join(f"{n} = {v}" for n, v in spec.params
                                                            if n in spec.given and n != spec.info.search_param)
                          ).strip() + (f" at {spec.dims} dims" if spec.dims else "") if spec is not None else "exact",
                "queries_per_second": speed.queries_per_second if speed else np.nan,
                "latency_p50_ms": speed.latency_p50_ms if speed else np.nan,
                "latency_p99_ms": speed.latency_p99_ms if speed else np.nan,
                "build_seconds": speed.build_seconds if speed else np.nan,
                "neighbor_recall": loss.mean if loss else np.nan, "neighbor_recall_p5": loss.p5 if loss else np.nan,
                "lost": len(loss.lost) if loss else np.nan, "index_verdict": self.index_verdict(item) or ""}

    def rows(self) -> tuple[list[str], list[list[str]]]:
        """The table for people: one row per variant with its size, every metric with its interval, and vs full."""
        names = self.metric_names()
        headers = ["variant", "dims", "precision", "index", "smaller", *names, f"vs full ({self.metric})", "p (Holm)",
                   "n", "model"]
        body = []
        for item in self.variants:
            values = self.metrics(item)
            cells = [f"{values[m]['mean']:.4f} ({values[m]['ci_low']:.4f}-{values[m]['ci_high']:.4f})" for m in names]
            found = self.comparisons.get(item.name)
            if found is None:
                versus, p = "reference", ""
            else:
                versus = (f"{format_amount(found.metric, found.diff, unit=False)} ({format_amount(found.metric, found.ci_low, unit=False)} "
                          f"to {format_amount(found.metric, found.ci_high, unit=False)})")
                p = format_p(found.p_adjusted).removeprefix("p ").removeprefix("= ")
            body.append([item.name, str(item.variant.dims), item.variant.precision, human_bytes(item.index_bytes),
                         times(self.ratio(item)), *cells, versus, p, str(self.evaluation[item.name].n_queries),
                         item.run.model])
        return headers, body


def scoped_queries(queries: Vectors, labels: LabelSet, scope) -> tuple[Vectors, tuple[EvalWarning, ...]]:
    """The query vectors to search: those of the queries ``scope`` scores (the tune side when the labels carry a
    split). Checked against the whole label set first: none labeled is an error naming the file; vectors of
    unlabeled queries, and labeled queries without a vector, are warnings."""
    checked, warnings = labeled_only(queries, labels.queries, labels.name)
    wanted = np.isin(checked.ids, np.asarray(scope.labels.queries, dtype=object))
    if not wanted.any():
        raise InputError(f"query vectors for the {scope.labels.n_queries:,} queries of {scope.labels.name}",
                         source=queries.name)
    return Vectors(checked.name, checked.ids[wanted], np.ascontiguousarray(checked.matrix[wanted])), warnings


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


def index_sentence(words: str, loss: IndexLoss, speedup: float | None, item: VariantRun) -> str:
    """``HNSW ef = 32 loses the answer for 7 of 224 queries (3.1%, 95% CI 1.5% to 6.3%) and answers 4.0x faster
    than exact search; it returns 97.1% of exact search's top 10 (the worst 5% of queries: 80% or less).``"""
    interval = loss.lost_interval
    count = len(loss.lost)
    level = f"{interval.level * 100:g}% CI"
    if count:
        lost = (f"{words} loses the answer for {count:,} of {loss.n:,} queries ({percent(count / loss.n)}, {level} "
                f"{percent(interval.low)} to {percent(interval.high)})")
    else:
        lost = (f"{words} keeps the answer for every one of the {loss.n:,} queries (lost: 0, {level} up to "
                f"{percent(interval.high)})")
    if speedup is None:
        speed = f"answers {item.speed.queries_per_second:,.0f} queries a second on one thread"
    elif speedup >= 1:
        speed = f"answers {times(speedup)} faster than exact search"
    else:
        speed = f"answers {times(1 / speedup)} slower than exact search"
    return (f"{lost} and {speed}; it returns {percent(loss.mean)} of exact search's top {loss.k} (the worst 5% of "
            f"queries: {percent(loss.p5)} or less).")


def percent(share: float) -> str:
    """``3.1%``, ``0.45%``, ``100%``: one decimal (two digits under 1%), never rounded to 0% or 100% when it is
    not."""
    value = share * 100
    if 0 < value < 1:
        return f"{value:.2g}%"
    if 99.9 < value < 100:
        return "99.9%"
    return f"{value:.1f}%".replace(".0%", "%")


def verdict_sentence(item: VariantRun, found: Comparison, ratio: float) -> str:
    """``binary 256 loses 4.1 points of recall@10 against full vectors (95% CI 2.0 to 6.3; p < 0.001 after Holm;
    n = 224); the index is 24x smaller.``"""
    metric, words = found.metric, item.variant.words
    level = f"{found.level * 100:g}% CI"
    p_text = format_p(found.p_adjusted) + (" after Holm" if found.n_comparisons > 1 else "")
    size = f"the index is {times(ratio)} smaller" if ratio >= 1 else f"the index is {times(1 / ratio)} larger"
    if found.wins == 0 and found.losses == 0:
        return f"{words} scores the same as full vectors on {metric} on every one of the {found.n} queries; {size}."
    if found.significant:
        verb, amount, low, high = (("gains", found.diff, found.ci_low, found.ci_high) if found.diff > 0 else
                                   ("loses", -found.diff, -found.ci_high, -found.ci_low))
        return (f"{words} {verb} {format_amount(metric, amount)} of {metric} against full vectors ({level} "
                f"{format_amount(metric, low, unit=False)} to {format_amount(metric, high, unit=False)}; {p_text}; "
                f"n = {found.n}); {size}.")
    return (f"{words} is indistinguishable from full vectors on {metric} with {found.n} queries (difference "
            f"{format_amount(metric, found.diff)}, {level} {format_amount(metric, found.ci_low, unit=False)} to "
            f"{format_amount(metric, found.ci_high, unit=False)}; {p_text}); {size}.")


def times(ratio: float) -> str:
    """``96x``, ``3.8x``, ``1.0x``."""
    return f"{ratio:,.0f}x" if ratio >= 10 else f"{ratio:.1f}x"


def human_bytes(size: int) -> str:
    """``1.2 MB``, ``310 kB``, ``512 B`` (decimal units)."""
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if size >= scale:
            return f"{size / scale:.3g} {unit}"
    return f"{size} B"
