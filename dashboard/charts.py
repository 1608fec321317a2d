"""Every chart of the dashboard: pure functions from tables the core produced to Vega-Lite specs or `alt.Chart`s.

No Streamlit here, no page state and no computing of numbers: every value drawn is a column of the input
or an argument. Two styles: the Overview's charts are plain Vega-Lite dicts (they change with k, and
building an Altair chart costs more than that page's rerun); the others are built with Altair.
Each chart's title or subtitle carries its context (k, n, models, label set), so a chart
pasted into a slide still says what it measures. Runs keep one colour across every chart.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Sequence

import pandas as pd

from evalcore.report.amounts import format_amount, format_interval

from dashboard.index_charts import index_frontier, index_speed  # noqa: F401 - the Index size page's charts
from dashboard.index_charts import records as _records

if TYPE_CHECKING:  # Altair is imported where an Altair chart is built: importing it costs ~0.5 s, and the
    import altair as alt  # Overview's charts (plain specs) should not wait for it after an upload.

def warm() -> None:
    """Import Altair and build one small chart: run in a background thread when the app starts, so the first
    Altair chart a visitor opens skips the import and the loading of Altair's schema validator (about 1 s)."""
    import altair as alt

    alt.Chart(pd.DataFrame({"k": [1, 2], "recall": [0.5, 0.6]})).mark_line().encode(
        x=alt.X("k:Q", title="k"), y="recall:Q", color=alt.Color("k:N")).properties(title="warm").to_dict()



PALETTE = ["#4c78a8", "#f58518", "#54a24b", "#e45756", "#72b7b2", "#b279a2", "#ff9da6", "#9d755d", "#bab0ac",
           "#eeca3b"]


def run_colors(runs: Sequence[str]) -> alt.Scale:
    """One colour per run, stable across charts (the order of the data set's runs)."""
    import altair as alt

    return alt.Scale(domain=list(runs), range=[PALETTE[i % len(PALETTE)] for i in range(len(runs))])


def _color(runs: Sequence[str], legend: dict | None) -> dict:
    return {"field": "run", "type": "nominal", "legend": legend,
            "scale": {"domain": list(runs), "range": [PALETTE[i % len(PALETTE)] for i in range(len(runs))]}}


def _title(title: str, subtitle: str | list[str], **extra: Any) -> dict:
    return {"text": title, "anchor": "start", "subtitle": subtitle, **extra}


SCHEMA = "https://vega.github.io/schema/vega-lite/v6.json"


# The two Overview charts are written as Vega-Lite dicts rather than built with Altair: they change
# with k, and building and validating an Altair chart costs more than the rest of that page's rerun.
# Their specs hold no k: the numbers (and the metric names, "recall@12") are named datasets, so for a
# new k only the data change and the browser swaps them into the drawn chart instead of drawing anew.

INTERVALS_DATA = "intervals"
POINTS_DATA = {"price_per_mtok": "points_by_price", "index_mb": "points_by_size"}


def metric_intervals(summary: pd.DataFrame, runs: Sequence[str], *, title: str, subtitle: str | list[str]) -> dict:
    """Each run's mean and 95% interval, one panel per metric (recall@1, recall@k, mrr, ...), as a Vega-Lite spec.

    ``summary`` has the columns of `Evaluation.summary`: run, model, metric, mean, ci_low, ci_high, n.
    The panels keep the order of the metrics in ``summary`` (an ``order`` column of the data), and
    the data are the named dataset `INTERVALS_DATA`, so the spec is the same for every k.
    """
    frame = summary[["run", "model", "metric", "mean", "ci_low", "ci_high", "n"]].copy()
    frame["interval"] = [format_interval(lo, hi, join=" to ") for lo, hi in zip(frame["ci_low"], frame["ci_high"])]
    metrics = list(dict.fromkeys(frame["metric"]))
    frame["order"] = [metrics.index(m) for m in frame["metric"]]
    y = {"field": "run", "type": "nominal", "sort": list(runs), "title": None}
    color = _color(runs, None)
    tooltip = [{"field": "run", "type": "nominal"}, {"field": "model", "type": "nominal"},
               {"field": "metric", "type": "nominal"}, {"field": "mean", "type": "quantitative", "format": ".3f"},
               {"field": "interval", "type": "nominal", "title": "95% CI"}, {"field": "n", "type": "quantitative"}]
    common = {"y": y, "color": color, "tooltip": tooltip}
    layers = [
        {"mark": {"type": "rule", "strokeWidth": 3},
         "encoding": {**common, "x": {"field": "ci_low", "type": "quantitative", "title": "mean with 95% interval",
                                      "scale": {"zero": True}}, "x2": {"field": "ci_high"}}},
        {"mark": {"type": "point", "filled": True, "size": 90},
         "encoding": {**common, "x": {"field": "mean", "type": "quantitative"}}},
        {"mark": {"type": "text", "align": "left", "dx": 8, "dy": -9, "fontSize": 11},
         "encoding": {**common, "x": {"field": "mean", "type": "quantitative"},
                      "text": {"field": "mean", "type": "quantitative", "format": ".3f"}}},
    ]
    return {
        "$schema": SCHEMA, "data": {"name": INTERVALS_DATA}, "datasets": {INTERVALS_DATA: _records(frame)},
        "facet": {"column": {"field": "metric", "type": "nominal", "title": None,
                             "sort": {"field": "order", "op": "min"}, "header": {"labelFontSize": 13}}},
        "spec": {"layer": layers, "width": 260, "height": max(60, 34 * len(runs))},
        "resolve": {"scale": {"x": "independent"}}, "spacing": 36, "title": _title(title, subtitle),
    }


def tradeoff(points: pd.DataFrame, runs: Sequence[str], *, metric: str, title: str, subtitle: str | list[str]) -> dict:
    """Quality against price and against index size, one point per run with its interval (Vega-Lite spec).

    ``points`` has run, model, mean, ci_low, ci_high, price_per_mtok, index_mb, dims, and may have
    ``metric`` (what ``mean`` is, e.g. "recall@12", shown in the tooltip). ``metric`` titles the
    y axis: pass one without the k ("recall@k") to keep the spec the same for every k (the points
    are the named datasets `POINTS_DATA`). A run without a price (or a size) is left out of that
    panel, and the panel says so.
    """
    frame = points.copy()
    if "metric" not in frame:
        frame["metric"] = metric
    frame["interval"] = [format_interval(lo, hi, join=" to ") for lo, hi in zip(frame["ci_low"], frame["ci_high"])]
    tooltip = [{"field": "run", "type": "nominal"}, {"field": "model", "type": "nominal"},
               {"field": "metric", "type": "nominal"},
               {"field": "mean", "type": "quantitative", "title": "mean", "format": ".3f"},
               {"field": "interval", "type": "nominal", "title": "95% CI"},
               {"field": "price_per_mtok", "type": "quantitative", "title": "$ per M tokens"},
               {"field": "index_mb", "type": "quantitative", "title": "index MB", "format": ",.2f"},
               {"field": "dims", "type": "quantitative"}]
    y = {"field": "mean", "type": "quantitative", "title": metric, "scale": {"zero": False, "padding": 12}}
    color = _color(runs, {"title": "run", "orient": "bottom"})
    datasets = {}

    def panel(x_field: str, x_title: str, missing_note: str) -> dict:
        have = frame[frame[x_field].notna()]
        left_out = [r for r in frame["run"] if r not in set(have["run"])]
        sub = f"not shown (no value): {', '.join(left_out)}" if left_out else ""
        # Prices and sizes are never negative: the axis starts at 0 (padding alone would draw ticks like -0.004).
        x = {"field": x_field, "type": "quantitative", "title": x_title, "scale": {"zero": True, "nice": True}}
        common = {"x": x, "color": color, "tooltip": tooltip}
        datasets[POINTS_DATA[x_field]] = _records(have)
        return {
            "data": {"name": POINTS_DATA[x_field]}, "width": 330, "height": 260,
            "title": {"text": x_title, "subtitle": sub or missing_note, "fontSize": 13},
            "layer": [
                {"mark": {"type": "rule", "strokeWidth": 2},
                 "encoding": {**common, "y": {"field": "ci_low", "type": "quantitative", "title": metric},
                              "y2": {"field": "ci_high"}}},
                {"mark": {"type": "point", "filled": True, "size": 140}, "encoding": {**common, "y": y}},
                {"mark": {"type": "text", "align": "left", "dx": 9, "dy": -8, "fontSize": 12},
                 "encoding": {**common, "y": y, "text": {"field": "run", "type": "nominal"}}},
            ],
        }

    panels = [panel("price_per_mtok", "price per million tokens ($)", "cheaper is left"),
              panel("index_mb", "index size (MB)", "smaller is left")]
    return {"$schema": SCHEMA, "datasets": datasets, "hconcat": panels, "resolve": {"scale": {"y": "shared"}},
            "title": _title(title, subtitle)}


def stacked(*charts: alt.TopLevelMixin) -> alt.VConcatChart:
    """Charts over the same k axis, one above the other."""
    import altair as alt

    return alt.vconcat(*charts, spacing=18).resolve_scale(color="shared")


def history_chart(frame: pd.DataFrame, line: str, subtitle: str = "") -> alt.LayerChart:
    """A model line's metrics over its runs: one line per metric through the runs in upload order, a bar from
    ci_low to ci_high at each.

    ``frame`` is `Workspace.history` output. The tooltip names the run, model, n, k and label-set
    version of every point, so a point read off the chart carries its context.
    """
    import altair as alt

    data = frame.assign(
        interval=[format_interval(lo, hi) for lo, hi in zip(frame["ci_low"], frame["ci_high"])],
        point=[f"#{rid} {run}" for rid, run in zip(frame["run_id"], frame["run"])],
    )
    order = data.drop_duplicates("run_id").sort_values("step")["point"].tolist()
    base = alt.Chart(data).encode(
        x=alt.X("point:N", sort=order, title="run of the model line, in upload order",
                axis=alt.Axis(labelAngle=0, labelLimit=220)),
        xOffset=alt.XOffset("metric:N"),
        color=alt.Color("metric:N", title="metric"),
    )
    tooltip = [alt.Tooltip("point:N", title="run"), alt.Tooltip("model:N"), alt.Tooltip("metric:N"),
               alt.Tooltip("mean:Q", format=".3f"), alt.Tooltip("interval:N", title="95% interval"),
               alt.Tooltip("n:Q", title="n queries"), alt.Tooltip("labels_version:Q", title="label set version"),
               alt.Tooltip("uploaded_at:T", format="%Y-%m-%d %H:%M")]
    y = alt.Y("mean:Q", title="mean (95% interval)", scale=alt.Scale(zero=False))
    bars = base.mark_rule(strokeWidth=3, opacity=0.7).encode(y=alt.Y("ci_low:Q", title="mean (95% interval)"),
                                                            y2="ci_high:Q", tooltip=tooltip)
    points = base.mark_point(filled=True, size=80, opacity=1).encode(y=y, tooltip=tooltip)
    title = alt.Title(f"Model line {line}", subtitle=subtitle) if subtitle else f"Model line {line}"
    return (bars + points).properties(height=360, title=title)


GREY = "#9e9e9e"
"""Sources too small to rank, on the Sources chart (and in its table)."""

TOO_FEW = "too few to rank"


def source_order(frame: pd.DataFrame, groups: Sequence[Sequence[str]], missing: str) -> list[str]:
    """The sources of ``frame`` (value, n) in chart order: ``groups`` first, in the order given, by size within each;
    then the rest by size, ``missing`` (queries without a source) last."""
    sizes = frame.groupby("value")["n"].first().to_dict()
    grouped = [x for group in groups for x in sorted(group, key=lambda x: (-sizes.get(x, 0), x)) if x in sizes]
    rest = sorted((x for x in sizes if x not in grouped), key=lambda x: (x == missing, -sizes[x], x))
    return grouped + rest


def gap_chart(frame: pd.DataFrame, gap_rows: pd.DataFrame, runs: Sequence[str], all_runs: Sequence[str], *,
              metric: str, models: dict[str, str], order: Sequence[str], min_n: int, title: str,
              subtitle: list[str]) -> alt.HConcatChart:
    """One panel per run of ``runs``: each source's mean with its interval, small sources grey and faded; each group's
    pooled mean as a dashed (b) or dotted (a) line, and the gap between them as a red bar at the right edge, labelled.

    ``frame`` is `segment_gaps`'s segments for one ``metric`` (run, value, mean, ci_low, ci_high, n, small, rank);
    ``gap_rows`` its gaps (one row per run); ``order`` the sources left to right (`source_order`); ``min_n`` the
    fewest queries a source needs to be ranked (named in the subtitles).
    """
    import altair as alt

    colors = run_colors(all_runs)
    y_title, y_scale = f"{metric} with 95% interval", alt.Scale(zero=False, padding=12)
    y = alt.Y("mean:Q", title=y_title, scale=y_scale)
    panels = []
    for run in runs:
        mine = frame[frame["run"] == run].copy()
        mine["interval"] = [format_interval(lo, hi, join=" to ") for lo, hi in zip(mine["ci_low"], mine["ci_high"])]
        mine["status"] = mine.apply(lambda r: TOO_FEW if r.small else f"rank {int(r['rank'])}", axis=1)
        colour = colors.range[list(all_runs).index(run)]
        base = alt.Chart(mine).encode(
            x=alt.X("value:N", title=None, sort=list(order),
                    axis=alt.Axis(labelAngle=-35, labelLimit=150, labelOverlap=False)),
            color=alt.condition(alt.datum.small, alt.value(GREY), alt.value(colour)),
            opacity=alt.condition(alt.datum.small, alt.value(0.45), alt.value(1.0)),
            tooltip=[alt.Tooltip("value:N", title="source"), alt.Tooltip("mean:Q", title=metric, format=".3f"),
                     alt.Tooltip("interval:N", title="95% CI"), alt.Tooltip("n:Q"), alt.Tooltip("status:N")],
        )
        layers = [
            base.mark_rule(strokeWidth=3).encode(y=alt.Y("ci_low:Q", title=y_title, scale=y_scale), y2="ci_high:Q"),
            base.mark_point(filled=True, size=90).encode(y=y),
            base.mark_text(align="left", dx=7, dy=-8, fontSize=11).encode(y=y, text=alt.Text("mean:Q", format=".3f")),
        ]
        sub = ["no second group to compare"]
        gap = gap_rows[gap_rows["run"] == run]
        if not gap.empty:
            g = gap.iloc[0]
            lines = pd.DataFrame({"group": [g.group_a, g.group_b], "mean": [g.mean_a, g.mean_b],
                                  "side": ["a", "b"]})
            layers.append(alt.Chart(lines).mark_rule(color="#333", strokeWidth=1.2).encode(
                y="mean:Q", strokeDash=alt.StrokeDash("side:N", scale=alt.Scale(domain=["a", "b"],
                                                                                range=[[2, 2], [6, 3]]), legend=None),
                tooltip=[alt.Tooltip("group:N"), alt.Tooltip("mean:Q", title="pooled mean", format=".3f")]))
            bar = pd.DataFrame({"mean_a": [g.mean_a], "mean_b": [g.mean_b], "mid": [(g.mean_a + g.mean_b) / 2],
                                "label": [format_amount(metric, g.gap, unit=False)]})
            red = "#c0392b" if g.verdict in ("lower", "higher") else GREY
            bracket = alt.Chart(bar)
            layers.append(bracket.mark_rule(color=red, strokeWidth=4, x="width").encode(y="mean_a:Q", y2="mean_b:Q"))
            layers.append(bracket.mark_text(color=red, align="right", dx=-6, x="width", fontWeight="bold",
                                            fontSize=12).encode(y="mid:Q", text="label:N"))
            if g.verdict == "too few":
                first = f"too few queries to compare (n = {g.n_a:,} vs {g.n_b:,}; at least {min_n:,} each)"
            else:
                first = (f"gap {format_amount(metric, g.gap)} (95% CI "
                         f"{format_interval(g.ci_low, g.ci_high, metric=metric, join=' to ')}): {g.verdict}; "
                         f"n = {g.n_a:,} vs {g.n_b:,}")
            sub = [first, f"dotted: {g.group_a} {g.mean_a:.3f} · dashed: {g.group_b} {g.mean_b:.3f}"]
        panels.append(alt.layer(*layers).properties(
            width=max(200, 70 * len(order)), height=280,
            title=alt.TitleParams(f"{run} ({models[run]})", subtitle=sub, fontSize=13, anchor="start")))
    return (alt.hconcat(*panels, spacing=28).resolve_scale(y="shared")
            .properties(title=alt.TitleParams(title, subtitle=subtitle, anchor="start")))


def to_png(chart: alt.TopLevelMixin | dict[str, Any], scale: float = 2.0) -> bytes:
    """The chart (or its built spec) as a PNG, rendered offline by vl-convert."""
    import vl_convert

    spec = chart if isinstance(chart, dict) else chart.to_dict()
    return vl_convert.vegalite_to_png(vl_spec=spec, scale=scale)


def answer_points(points: pd.DataFrame, runs: Sequence[str], *, k: int, metric: str, good: float, title: str,
                  subtitle: str | list[str]) -> dict:
    """Each run's queries placed by what retrieval found (recall@k, across) and how the answer was graded (up), one
    panel per run, a circle per place sized by the number of queries there; a dashed line at ``good`` marks where an
    answer counts as answered well (Vega-Lite spec).

    ``points`` has run, recall, grade and queries (how many queries sit at that place), one row per place."""
    axis = {"values": [0, 0.25, 0.5, 0.75, 1], "format": ".2~f"}
    x = {"field": "recall", "type": "quantitative", "title": f"recall@{k}: share of the relevant docs in the top {k}",
         "scale": {"domain": [-0.06, 1.06], "nice": False}, "axis": axis}
    y = {"field": "grade", "type": "quantitative", "title": f"{metric} (the answer's grade)",
         "scale": {"domain": [-0.06, 1.06], "nice": False}, "axis": axis}
    tooltip = [{"field": "run", "type": "nominal"},
               {"field": "recall", "type": "quantitative", "title": f"recall@{k}", "format": ".2f"},
               {"field": "grade", "type": "quantitative", "title": metric, "format": ".2f"},
               {"field": "queries", "type": "quantitative", "title": "queries here"}]
    layers = [
        {"transform": [{"aggregate": [{"op": "count", "as": "places"}], "groupby": ["run"]}],
         "mark": {"type": "rule", "strokeDash": [5, 4], "color": GREY},
         "encoding": {"y": {"datum": good, "type": "quantitative"}}},
        {"mark": {"type": "circle", "opacity": 0.7, "stroke": "white", "strokeWidth": 0.5},
         "encoding": {"x": x, "y": y, "color": _color(runs, None), "tooltip": tooltip,
                      "size": {"field": "queries", "type": "quantitative", "title": "queries",
                               "scale": {"range": [25, 900], "zero": False}, "legend": {"orient": "bottom"}}}},
    ]
    return {"$schema": SCHEMA, "data": {"values": _records(points)},
            "facet": {"column": {"field": "run", "type": "nominal", "title": None, "sort": list(runs),
                                 "header": {"labelFontSize": 13}}},
            "spec": {"layer": layers, "width": 300, "height": 240}, "spacing": 48, "title": _title(title, subtitle)}


ZERO_COLOR = "#e45756"
"""Searches that found nothing, on the Real queries chart: the one stratum read as a problem."""


def strata_chart(strata: pd.DataFrame, *, title: str, subtitle: str | list[str]) -> alt.LayerChart:
    """A query log's strata (the Real queries page): one bar per stratum, its logged queries, labelled with its share
    of them; zero-result red. ``strata``: stratum, queries, share (0..1), sampled."""
    import altair as alt

    data = strata.assign(label=[f"{share:.0%} of logged queries · {sampled:,} drawn" for share, sampled in
                                zip(strata["share"], strata["sampled"])],
                         kind=["found nothing" if s == "zero-result" else "found results" for s in strata["stratum"]])
    order = strata["stratum"].tolist()
    base = alt.Chart(data).encode(
        y=alt.Y("stratum:N", sort=order, title=None, axis=alt.Axis(labelFontSize=14, labelLimit=200)),
        x=alt.X("queries:Q", title="logged queries", axis=alt.Axis(format=",d", tickMinStep=1)),
        tooltip=[alt.Tooltip("stratum:N"), alt.Tooltip("queries:Q", title="logged queries", format=","),
                 alt.Tooltip("label:N", title="share")])
    bars = base.mark_bar().encode(color=alt.Color(
        "kind:N", title=None, scale=alt.Scale(domain=["found results", "found nothing"], range=[PALETTE[0], ZERO_COLOR]),
        legend=alt.Legend(orient="top")))
    labels = base.mark_text(align="left", dx=6, fontSize=14).encode(text="label:N")
    return (bars + labels).properties(height=48 * max(len(data), 1), title=alt.Title(title, subtitle=subtitle))
