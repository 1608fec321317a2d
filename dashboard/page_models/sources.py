"""The Sources page's model: every metric split by ``source`` and the customers-versus-team gap.

Plain functions over the same all-k evaluation every page scores; the per-source bootstrap is kept once per data set
and k in `dashboard.caching` (`slices`), so changing the fewest queries a source needs, the metric or the runs shown
never re-computes it. The numbers come from `evalcore.analyses.segments`; `by_source` is everything the page shows,
in the order it shows it.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from evalcore.analyses.segments import GapPair, segment_gaps
from evalcore.analyses.slices import DEFAULT_MIN_SLICE_N, MISSING_VALUE
from evalcore.report.amounts import format_interval
from evalcore.report.headlines import sources_headline
from evalcore.report.segments import gap_sentence
from evalcore.metrics.dataset import Dataset

from dashboard import caching, charts, loading
from dashboard.loading import Loaded

FIELD = "source"

METRICS = ("recall@k", "recall@1", "hit@k", "precision@k", "ndcg@k", "judged@k", "mrr")
"""The metrics the page splits, as written with the chosen k left open; `at_k` fills it in."""

TOO_FEW = charts.TOO_FEW
"""A source's status when it has fewer queries than the page asks for: shown grey, never ranked."""

GAP_METHODS = {"newcombe": "Newcombe (two Wilson intervals; every score 0 or 1)", "welch": "Welch (unequal spreads)",
               "constant": "none (every score the same)", "undefined": "none (under 2 queries on a side)"}
"""How the interval of a gap was computed, in words (`evalcore.analyses.segments.difference_intervals`)."""

EXPORT_COLUMNS = ["run", "model", "field", "value", "metric", "mean", "ci_low", "ci_high", "n", "small", "rank",
                  "labels", "fingerprint"]
GAP_COLUMNS = ["run", "model", "metric", "group_a", "group_b", "mean_a", "mean_b", "gap", "ci_low", "ci_high", "n_a",
               "n_b", "verdict", "method"]


def at_k(metric: str, k: int) -> str:
    return metric.replace("@k", f"@{k}")


def metrics_at(k: int) -> list[str]:
    """Every metric of the page at ``k`` (recall@1 once when k = 1)."""
    return list(dict.fromkeys(at_k(m, k) for m in METRICS))


def has_source(dataset: Dataset) -> bool:
    """Whether the labels carry a ``source`` field (a column, or a key in JSONL)."""
    loaded = loading.labels(dataset.labels)
    return loaded.ok and loaded.value.field(FIELD) is not None


def source_gaps(dataset: Dataset, k: int, min_n: int = DEFAULT_MIN_SLICE_N) -> Loaded:
    """`evalcore.analyses.segments.segment_gaps` by ``source`` for every metric at ``k``, or the message why not."""
    slices = caching.slices(dataset, FIELD, tuple(metrics_at(k)))
    if not slices.ok:
        return slices
    return loading.attempt(segment_gaps, loading.evaluation(dataset).value, FIELD, metrics_at(k), min_n=int(min_n),
                           slices=slices.value)


@dataclass(frozen=True)
class GapLine:
    """One run's gap on the page's metric: ``lower``, ``higher``, ``too few`` or ``no clear difference``, in words."""

    verdict: str
    sentence: str


@dataclass(frozen=True)
class BySource:
    """Everything the Sources page shows at one k, for one metric, the runs shown and the fewest queries a source
    needs to be ranked."""

    k: int
    metric: str  # the metric charted and put in words, at k (recall@10)
    min_n: int
    headline: str | None  # the answer the page opens on; None without two groups to compare
    pair: GapPair | None  # the two groups of sources compared (customers', the team's); None: see `note`
    note: str | None  # why no two groups can be compared
    groups: str | None  # which sources each group holds, in words
    gaps: list[GapLine]  # one per run shown, on `metric`
    methods: str  # how the intervals of those gaps were computed
    segments: pd.DataFrame  # each run shown and source on `metric`, with its interval (the chart)
    gap_rows: pd.DataFrame  # each run shown's gap on `metric` (the chart's red bar)
    order: list[str]  # the sources along the chart's axis
    metrics: list[str]  # the table's metric columns
    table: pd.DataFrame  # per run, its sources ranked on `metric` (too few last), every metric with its interval
    export: pd.DataFrame  # every run shown, source and metric in long form (the CSV)
    gap_table: pd.DataFrame  # the gap on every metric (empty without a pair)
    gaps_export: pd.DataFrame


def ranked_table(segments: pd.DataFrame, metric: str, names: list[str], runs: list[str], models: dict[str, str],
                 k: int, labels_ref: str) -> pd.DataFrame:
    """One row per run and source: the sources ranked on ``metric`` (best first; too few to rank after, most queries
    first), each metric of ``names`` beside its interval, and the status that says the rank."""
    chosen = segments[segments["metric"] == metric]
    rows = []
    for run in runs:
        mine = chosen[chosen["run"] == run]
        n_ranked = int((~mine["small"]).sum())
        listed = mine.assign(_order=mine["rank"].astype("Float64").fillna(float("inf")))
        for seg in listed.sort_values(["_order", "n", "value"], ascending=[True, False, True]).itertuples():
            by_metric = segments[(segments["run"] == run) & (segments["value"] == seg.value)].set_index("metric")
            row = {"run": run, "model": models[run], "source": seg.value, "n": int(seg.n),
                   "status": TOO_FEW if seg.small else f"rank {int(seg.rank)} of {n_ranked} on {metric}"}
            for m in names:
                if m in by_metric.index:
                    row[m] = by_metric.at[m, "mean"]
                    row[f"{m} 95% CI"] = format_interval(by_metric.at[m, "ci_low"], by_metric.at[m, "ci_high"])
            row.update({"k": k, "labels": labels_ref})
            rows.append(row)
    return pd.DataFrame(rows)


def by_source(dataset: Dataset, k: int, family: str, min_n: int, runs: tuple[str, ...]) -> Loaded:
    """The page at ``k`` on the metric ``family`` (``recall@k``, ``mrr``, ...; unknown: recall@k) for ``runs``: a
    `BySource`, or the message why the queries cannot be split."""
    loaded = source_gaps(dataset, k, min_n)
    if not loaded.ok:
        return loaded
    report, evaluation = loaded.value, loading.evaluation(dataset).value
    metric = at_k(family if family in METRICS else "recall@k", k)
    models = {r.name: r.model for r in evaluation.results}
    labels_ref = f"{evaluation.labels.name}#{evaluation.labels.fingerprint}"
    segments = report.segments[report.segments["run"].isin(runs)]
    gaps = report.gaps[report.gaps["run"].isin(runs)]
    pair = report.pair
    on_metric = gaps[gaps["metric"] == metric]
    shown = segments[segments["metric"] == metric]
    methods = sorted(set(on_metric["method"]))
    groups = (f"{pair.name_a} = {', '.join(pair.a)} · {pair.name_b} = {', '.join(pair.b)} ({pair.rule}; queries "
              "without a source are in neither)") if pair is not None else None
    order = (charts.source_order(shown, [list(pair.b), list(pair.a)] if pair is not None else [], MISSING_VALUE)
             if not shown.empty else [])
    return Loaded(BySource(
        k=k, metric=metric, min_n=int(min_n),
        headline=sources_headline(gaps, metric, list(runs), report.min_n) if pair is not None else None,
        pair=pair, note=report.note, groups=groups,
        gaps=[GapLine(row.verdict, gap_sentence(row, report.min_n)) for row in on_metric.itertuples()]
        if pair is not None else [],
        methods=", ".join(GAP_METHODS[m] for m in methods) or "none",
        segments=shown, gap_rows=on_metric, order=order, metrics=metrics_at(k),
        table=ranked_table(segments, metric, metrics_at(k), list(runs), models, k, labels_ref),
        export=segments[EXPORT_COLUMNS].assign(k=k, min_n=int(min_n)),
        gap_table=gaps[GAP_COLUMNS].assign(k=k, labels=labels_ref) if pair is not None else pd.DataFrame(),
        gaps_export=gaps.assign(k=k, min_n=int(min_n))))


def chart(dataset: Dataset, k: int, family: str, min_n: int, runs: tuple[str, ...], subtitle: tuple[str, ...]) -> dict:
    """The gap chart of `by_source`'s value as a Vega-Lite spec: each run's panel of sources with their intervals,
    each group's pooled mean and the gap between them (`dashboard.charts.gap_chart`). A spec, so a page keeps it and
    a second visit draws it without building the chart again."""
    model = caching.kept(by_source, copies=True)(dataset, k, family, min_n, runs).value
    found = loading.evaluation(dataset).value
    return charts.gap_chart(model.segments, model.gap_rows, list(runs), dataset.run_names, metric=model.metric,
                            models={r: found[r].model for r in runs}, order=model.order, min_n=min_n,
                            title=f"{model.metric} by source, with 95% intervals", subtitle=list(subtitle)).to_dict()
