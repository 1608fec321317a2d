"""Every chart of the dashboard: pure functions from tables the core produced to Vega-Lite specs or `alt.Chart`s.

No Streamlit here, no page state and no computing of numbers: every value drawn is a column of the input
or an argument. Two styles: the Overview's charts are plain Vega-Lite dicts (they change with k, and
building an Altair chart costs more than that page's rerun); the others are built with Altair.
Each chart's title or subtitle carries its context (k, n, models, label set), so a chart
pasted into a slide still says what it measures. Runs keep one colour across every chart.
"""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING, Any, Sequence

import pandas as pd

from evalcore.report.amounts import format_amount

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


K_DATA = "chosen_k"
"""The chosen k is a named dataset of one row (k, label), filled in by `set_k`. A built spec is reused for
every k: only that dataset changes, so the browser updates the rule without re-drawing the chart."""

PALETTE = ["#4c78a8", "#f58518", "#54a24b", "#e45756", "#72b7b2", "#b279a2", "#ff9da6", "#9d755d", "#bab0ac",
           "#eeca3b"]


def _run_legend() -> alt.Legend:
    """One legend definition for every chart that colours by run, so stacked charts merge them into one."""
    import altair as alt

    return alt.Legend(title="run", orient="top", symbolType="stroke", symbolStrokeWidth=3, symbolOpacity=1)


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
    frame["interval"] = [f"{lo:.3f} to {hi:.3f}" for lo, hi in zip(frame["ci_low"], frame["ci_high"])]
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
    frame["interval"] = [f"{lo:.3f} to {hi:.3f}" for lo, hi in zip(frame["ci_low"], frame["ci_high"])]
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


PICK = "pick_k"
"""The point selection a click on the Choose k chart makes: ``{"k": ...}`` (`choose_k`); the page reads it with
Streamlit's selection events and sets k."""

K_RULE_COLOR = "#222"


def pick_params() -> tuple:
    """The click that picks k (`PICK`) and the pointer's column (shaded), made once and shared by every panel."""
    import altair as alt

    return (alt.selection_point(name=PICK, fields=["k"], on="click", clear=False, empty=False, toggle=False),
            alt.selection_point(name="hover_k", fields=["k"], on="pointerover", clear="pointerout", empty=False))


def _pick(k_max: int, params: tuple) -> alt.Chart:
    """An invisible column per k across the whole plot (on top of every other layer): a click anywhere in a column
    selects that k (`PICK`), and the column under the pointer is shaded so the person sees what a click picks."""
    import altair as alt

    pick, hover = params
    columns = pd.DataFrame({"k": range(1, k_max + 1)})
    layer = (alt.Chart(columns).transform_calculate(k_lo="datum.k - 0.5", k_hi="datum.k + 0.5")
             .mark_rect(color="#888", cursor="pointer")
             .encode(x="k_lo:Q", x2="k_hi:Q", opacity=alt.condition(hover, alt.value(0.15), alt.value(0)),
                     tooltip=[alt.Tooltip("k:Q", title="click to choose k =")]))
    return layer.add_params(pick, hover)


def _k_axis(k_max: int, labels: bool = True) -> alt.X:
    import altair as alt

    return alt.X("k:Q", title="k (chunks retrieved)" if labels else None,
                 scale=alt.Scale(domain=[0.5, k_max + 0.5], nice=False, zero=False),
                 axis=alt.Axis(values=_k_ticks(k_max), format="d", labelFontSize=14, titleFontSize=15, grid=False,
                               labels=labels))


def _legend_inside(width: int, height: int, n_runs: int) -> alt.Legend:
    """The runs' legend in the recall panel's empty lower right corner (no band of space above the chart)."""
    import altair as alt

    return alt.Legend(title=None, orient="none", legendX=width - 190, legendY=height - 24 - 21 * n_runs,
                      symbolType="stroke", symbolStrokeWidth=4, symbolOpacity=1, labelFontSize=15,
                      fillColor="white", padding=8, strokeColor="#ddd")


def _k_ticks(k_max: int) -> list[int]:
    step = next(s for s in (1, 2, 5, 10, 20) if k_max / s <= 20)
    return ([1] if step >= 5 else []) + list(range(step, k_max + 1, step)) if step > 1 else list(range(1, k_max + 1))


def recall_curve(table: pd.DataFrame, runs: Sequence[str], *, title: str, subtitle: str | list[str],
                 marks: pd.DataFrame | None = None, width: int = 860, height: int = 300,
                 k_max: int | None = None, pick: tuple | None = None, legend: alt.Legend | None = None,
                 x_labels: bool = True) -> alt.LayerChart:
    """Recall@k against k for each run with its 95% band, the chosen k (`set_k`) as a dashed black rule.

    ``table`` has run, k, recall, recall_ci_low, recall_ci_high (one row per run and k; only k <= ``k_max`` is
    drawn). ``marks`` (run, k, recall) are the runs' recommended k: a thin rule in the run's colour from the axis
    up to its curve and a diamond on it; their labels belong in the subtitle (on the plot they overlap).
    ``pick`` (`pick_params`) adds the columns a click picks k with (`PICK`). The recall axis starts at the tenth
    below the lowest band (recall near zero is not where the choice is).
    """
    import altair as alt

    k_max = int(k_max or table["k"].max())
    table = table[table["k"] <= k_max]
    colors = run_colors(runs)
    legend = legend or _run_legend()
    color = alt.Color("run:N", scale=colors, legend=legend)
    base = alt.Chart(table).encode(x=_k_axis(k_max, x_labels))
    y_axis = alt.Axis(format=".1f", labelFontSize=14, titleFontSize=15, tickCount=5)
    low = max(0.0, int(float(table["recall_ci_low"].min()) * 10) / 10) if len(table) else 0.0
    band = base.mark_area(opacity=0.15, clip=True).encode(
        y=alt.Y("recall_ci_low:Q", title="recall@k", scale=alt.Scale(domain=[low, 1], nice=False), axis=y_axis),
        y2="recall_ci_high:Q", color=color)
    line = base.mark_line(strokeWidth=3).encode(
        y="recall:Q", color=color,
        tooltip=[alt.Tooltip("run:N"), alt.Tooltip("k:Q"), alt.Tooltip("recall:Q", format=".3f"),
                 alt.Tooltip("recall_ci_low:Q", title="95% CI low", format=".3f"),
                 alt.Tooltip("recall_ci_high:Q", title="95% CI high", format=".3f")])
    layers = [band, line]
    if marks is not None and not marks.empty:
        mark_base = alt.Chart(marks).encode(x="k:Q", color=alt.Color("run:N", scale=colors, legend=legend))
        tip = [alt.Tooltip("run:N"), alt.Tooltip("k:Q", title="recommended k"), alt.Tooltip("recall:Q", format=".3f")]
        layers.append(mark_base.mark_rule(strokeWidth=2.5, opacity=0.9).encode(y="recall:Q", y2=alt.value(height),
                                                                                  tooltip=tip))
        layers.append(mark_base.mark_point(shape="diamond", size=220, filled=True, stroke="white", strokeWidth=1.5,
                                           opacity=1).encode(y="recall:Q", tooltip=tip))
    layers += [_k_rule(), _k_label()]
    if pick:
        layers.append(_pick(k_max, pick))
    return alt.layer(*layers).properties(width=width, height=height,
                                         title=alt.TitleParams(title, subtitle=subtitle, anchor="start",
                                                               fontSize=17, subtitleFontSize=13))


def set_k(spec: dict, k: int | None) -> dict:
    """A copy of a built spec (``chart.to_dict()``) whose dashed rule marks ``k`` (None: no rule).

    Only the one-row dataset `K_DATA` changes: Streamlit sends a spec's datasets apart from the spec, so the
    browser moves the rule without re-drawing the chart."""
    datasets = dict(spec.get("datasets", {}))
    datasets[K_DATA] = [] if k is None else [{"k": int(k), "label": f"k = {int(k)}"}]
    return {**spec, "datasets": datasets}


def spend_curve(table: pd.DataFrame, runs: Sequence[str], *, money: bool, k_max: int, width: int = 860,
                height: int = 120, legend: alt.Legend | None = None) -> alt.LayerChart:
    """What k chunks cost, under the recall panel on the same k axis: mean prompt tokens per request of the first k
    chunks or, with a monthly request count (``money``), the cost per month of those tokens. ``table``: run, k,
    tokens_mean, cost_per_month. The dashed rule marks the chosen k (`set_k`)."""
    import altair as alt

    table = table[table["k"] <= k_max]
    field, title, fmt = (("cost_per_month", "$ per month", "$,.0f") if money else
                         ("tokens_mean", "prompt tokens", ",.0f"))
    line = alt.Chart(table).mark_line(strokeWidth=3).encode(
        x=_k_axis(k_max), y=alt.Y(f"{field}:Q", title=title, axis=alt.Axis(format=fmt, tickCount=3, labelFontSize=14,
                                                                            titleFontSize=15)),
        color=alt.Color("run:N", scale=run_colors(runs), legend=legend or _run_legend()),
        tooltip=[alt.Tooltip("run:N"), alt.Tooltip("k:Q"),
                 alt.Tooltip(f"{field}:Q", title=title + " (mean)" if not money else title, format=fmt)])
    return alt.layer(line, _k_rule()).properties(width=width, height=height)


def _k_point() -> alt.Chart:
    import altair as alt

    return alt.Chart(alt.Data(name=K_DATA))


def _k_rule() -> alt.Chart:

    return _k_point().mark_rule(strokeDash=[7, 4], color=K_RULE_COLOR, strokeWidth=2).encode(x="k:Q")


def _k_label() -> alt.Chart:

    return _k_point().mark_text(align="left", dx=6, y=-8, fontWeight="bold", fontSize=15, color=K_RULE_COLOR).encode(
        x="k:Q", text="label:N")


def choose_k(table: pd.DataFrame, marks: pd.DataFrame, runs: Sequence[str], *, context: str, models: str,
             money: bool, k_max: int, width: int = 800, height: int = 195) -> alt.VConcatChart:
    """The Choose k view, one k axis for two panels: `recall_curve` (what one more chunk buys: recall with its band,
    each run's recommended k from ``marks`` as a rule in the run's colour) and `spend_curve` beneath (what it costs:
    prompt tokens, or $ per month with ``money``). k runs 1..``k_max``; a click in either panel picks k (`PICK`).
    ``table`` has one row per run and k; ``context`` (n, labels, tokenizer, price) and ``models`` are named under
    the title, so the PNG says what it shows."""
    import altair as alt

    recommended = "   ".join(f"{r} {int(k)}" for r, k in zip(marks["run"], marks["k"])) if not marks.empty else ""
    pick = pick_params()
    legend = _legend_inside(width, height, len(marks) or 1)
    cost = "cost per month" if money else "prompt tokens"
    recall = recall_curve(table, runs, marks=marks, width=width, height=height, k_max=k_max, pick=pick,
                          legend=legend, x_labels=False,
                          title=f"What one more chunk buys (recall, top) and what it costs ({cost}, bottom)",
                          subtitle=[f"Recommended k (the line in each run's colour):   {recommended}", context, models])
    spend = spend_curve(table, runs, money=money, k_max=k_max, width=width, height=90, legend=legend)
    with warnings.catch_warnings():  # one click selection in both panels is the point: Altair merges it, and says so
        warnings.filterwarnings("ignore", message="Automatically deduplicated selection parameter")
        return (alt.vconcat(recall, alt.layer(spend, _pick(k_max, pick)), spacing=10)
                .resolve_scale(color="shared", x="shared"))


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
        interval=[f"{lo:.3f} – {hi:.3f}" if pd.notna(lo) and pd.notna(hi) else "–"
                  for lo, hi in zip(frame["ci_low"], frame["ci_high"])],
        point=[f"#{rid} {run}" for rid, run in zip(frame["run_id"], frame["run"])],
    )
    order = data.drop_duplicates("run_id").sort_values("step")["point"].tolist()
    base = alt.Chart(data).encode(
        x=alt.X("point:N", sort=order, title="run of the line, in upload order",
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
        mine["interval"] = mine.apply(lambda r: f"{r.ci_low:.3f} to {r.ci_high:.3f}", axis=1)
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
                first = (f"gap {format_amount(metric, g.gap)} (95% CI {format_amount(metric, g.ci_low, unit=False)} "
                         f"to {format_amount(metric, g.ci_high, unit=False)}): {g.verdict}; n = {g.n_a:,} vs {g.n_b:,}")
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
