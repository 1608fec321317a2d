"""The Choose k page's charts: pure functions from the k budget's tables to Altair charts (no Streamlit, no numbers
computed here).

* `choose_k`: one k axis for two panels, recall@k with its band on top (each run's k marked: the recommendation
  as a diamond, the elbow as a ring) and what k chunks cost beneath (prompt tokens, $ per 1,000 requests or $ per
  month); hovering any k shows, per run, recall with its interval, tokens, $ per 1,000 requests and what that one
  more chunk added; a click picks k (`PICK`).
* `against_tokens`: each run a curve of recall (or evidence recall) over the mean prompt tokens of its top k
  chunks, so chunkings of different sizes compare at the same cost, with the person's token budget as a rule.

The chosen k is a named dataset of one row (`K_DATA`), filled in by `set_k`: a built spec is reused for every k, and
the browser moves the rule without re-drawing the chart.
"""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING, Sequence

import pandas as pd

from dashboard.charts import run_colors

if TYPE_CHECKING:
    import altair as alt

PICK = "pick_k"
"""The point selection a click on the chart makes: ``{"k": ...}``; the page reads it and sets k."""
K_DATA = "chosen_k"
K_RULE_COLOR = "#222"
SPEND_PANELS = {
    "tokens": ("tokens_mean", "prompt tokens per request", ",.0f"),
    "request": ("cost_per_1k_requests", "$ per 1,000 requests", "$,.2f"),
    "month": ("cost_per_month", "$ per month", "$,.0f"),
}
"""What the lower panel can show: the prompt tokens of the first k chunks, or what they cost."""
MARK_SHAPES = {"trade-off": "diamond", "elbow": "circle"}


def pick_params() -> tuple:
    """The click that picks k (`PICK`) and the pointer's column (shaded), made once and shared by every panel."""
    import altair as alt

    return (alt.selection_point(name=PICK, fields=["k"], on="click", clear=False, empty=False, toggle=False),
            alt.selection_point(name="hover_k", fields=["k"], on="pointerover", clear="pointerout", empty=False))


def hover_table(table: pd.DataFrame, runs: Sequence[str]) -> tuple[pd.DataFrame, list[tuple[str, str]]]:
    """One row per k with a line per run: "recall 0.742 (0.684 – 0.794) · 454 tokens · $0.45 per 1,000 requests ·
    +3.6 points for this chunk" (what hovering that k shows), and the (column, run) pairs of those lines."""
    wide = pd.DataFrame({"k": sorted(table["k"].unique())})
    columns = []
    for i, run in enumerate(runs):
        mine = table[table["run"] == run].set_index("k")
        if mine.empty:
            continue
        text = (("recall " + mine["recall"].map("{:.3f}".format) + " (" + mine["recall_ci_low"].map("{:.3f}".format)
                 + " – " + mine["recall_ci_high"].map("{:.3f}".format) + ") · ")
                + mine["tokens_mean"].map("{:,.0f} tokens".format) + " · "
                + mine["cost_per_1k_requests"].map("${:,.2f} per 1,000 requests".format) + " · "
                + (100 * mine["marginal_recall"]).map("{:+.1f} points for this chunk".format))
        wide[f"run{i}"] = wide["k"].map(text)
        columns.append((f"run{i}", run))
    return wide, columns


def _pick(k_max: int, params: tuple, hover: pd.DataFrame, columns: list[tuple[str, str]]) -> alt.Chart:
    """An invisible column per k across the whole plot (on top of every other layer): a click anywhere in a column
    selects that k (`PICK`); the column under the pointer is shaded, and its tooltip gives every run's numbers at
    that k."""
    import altair as alt

    pick, hover_k = params
    shown = hover[hover["k"] <= k_max]
    tooltip = [alt.Tooltip("k:Q", title="k (click to choose)")] + [alt.Tooltip(f"{c}:N", title=run)
                                                                   for c, run in columns]
    layer = (alt.Chart(shown).transform_calculate(k_lo="datum.k - 0.5", k_hi="datum.k + 0.5")
             .mark_rect(color="#888", cursor="pointer")
             .encode(x="k_lo:Q", x2="k_hi:Q", opacity=alt.condition(hover_k, alt.value(0.15), alt.value(0)),
                     tooltip=tooltip))
    return layer.add_params(pick, hover_k)


def k_ticks(k_max: int) -> list[int]:
    """The k axis labels: every k up to 20, then steps of 2, 5 or 10, always with 1 and the last k."""
    step = next(s for s in (1, 2, 5, 10, 20) if k_max / s <= 20)
    ticks = list(range(step, k_max + 1, step)) if step > 1 else list(range(1, k_max + 1))
    return sorted({1, *ticks, k_max})


def _k_axis(k_max: int, labels: bool = True, unit: str = "chunks") -> alt.X:
    import altair as alt

    return alt.X("k:Q", title=f"k ({unit} retrieved)" if labels else None,
                 scale=alt.Scale(domain=[0.5, k_max + 0.5], nice=False, zero=False),
                 axis=alt.Axis(values=k_ticks(k_max), format="d", labelFontSize=14, titleFontSize=15, grid=False,
                               labels=labels, labelOverlap=False, labelFlush=False, labelBound=False))


def _legend_inside(width: int, height: int, n_runs: int) -> alt.Legend:
    """The runs' legend in the recall panel's empty lower right corner (no band of space above the chart)."""
    import altair as alt

    return alt.Legend(title=None, orient="none", legendX=width - 190, legendY=height - 24 - 21 * n_runs,
                      symbolType="stroke", symbolStrokeWidth=4, symbolOpacity=1, labelFontSize=15,
                      fillColor="white", padding=8, strokeColor="#ddd")


def _k_rule() -> alt.Chart:
    import altair as alt

    return alt.Chart(alt.Data(name=K_DATA)).mark_rule(strokeDash=[7, 4], color=K_RULE_COLOR, strokeWidth=2).encode(
        x="k:Q")


def _k_label() -> alt.Chart:
    import altair as alt

    return alt.Chart(alt.Data(name=K_DATA)).mark_text(align="left", dx=6, y=-8, fontWeight="bold", fontSize=15,
                                                     color=K_RULE_COLOR).encode(x="k:Q", text="label:N")


def set_k(spec: dict, k: int | None) -> dict:
    """A copy of a built spec (``chart.to_dict()``) whose dashed rule marks ``k`` (None: no rule)."""
    datasets = dict(spec.get("datasets", {}))
    datasets[K_DATA] = [] if k is None else [{"k": int(k), "label": f"k = {int(k)}"}]
    return {**spec, "datasets": datasets}


def _recall_panel(table: pd.DataFrame, runs: Sequence[str], marks: pd.DataFrame, *, width: int, height: int,
                  k_max: int, legend: alt.Legend, title: str, subtitle: list[str]) -> list:
    import altair as alt

    colors = run_colors(runs)
    color = alt.Color("run:N", scale=colors, legend=legend)
    base = alt.Chart(table).encode(x=_k_axis(k_max, labels=False))
    low = max(0.0, int(float(table["recall_ci_low"].min()) * 10) / 10) if len(table) else 0.0
    y_axis = alt.Axis(format=".1f", labelFontSize=14, titleFontSize=15, tickCount=5)
    layers = [
        base.mark_area(opacity=0.15, clip=True).encode(
            y=alt.Y("recall_ci_low:Q", title="recall@k", scale=alt.Scale(domain=[low, 1], nice=False), axis=y_axis),
            y2="recall_ci_high:Q", color=color),
        base.mark_line(strokeWidth=3).encode(y="recall:Q", color=color),
    ]
    if not marks.empty:
        mark_base = alt.Chart(marks).encode(x="k:Q", color=alt.Color("run:N", scale=colors, legend=legend))
        tip = [alt.Tooltip("run:N"), alt.Tooltip("what:N", title="marks"), alt.Tooltip("k:Q"),
               alt.Tooltip("recall:Q", format=".3f")]
        layers.append(mark_base.mark_rule(strokeWidth=2.5, opacity=0.9).encode(y="recall:Q", y2=alt.value(height),
                                                                                  tooltip=tip))
        for kind, shape in MARK_SHAPES.items():
            mine = marks[marks["kind"] == kind]
            if not mine.empty:
                filled = kind == "trade-off"
                layers.append(alt.Chart(mine).mark_point(shape=shape, size=240, filled=filled, strokeWidth=3,
                                                         opacity=1, **({"stroke": "white"} if filled else {}))
                              .encode(x="k:Q", y="recall:Q", color=alt.Color("run:N", scale=colors, legend=legend),
                                      tooltip=tip))
    layers += [_k_rule(), _k_label()]
    return layers


def choose_k(table: pd.DataFrame, marks: pd.DataFrame, runs: Sequence[str], *, context: str, models: str, unit: str,
             spend: str, k_max: int, width: int = 760, height: int = 170) -> alt.VConcatChart:
    """The Choose k view: recall@k with bands and each run's k to take (``marks``: run, k, recall, kind "trade-off"
    or "elbow", what) above, what k chunks cost beneath (``spend``: a key of `SPEND_PANELS`), one k axis 1..``k_max`` counting
    ``unit`` ("docs" or "chunks").
    ``table`` has one row per run and k of the budget table; ``context`` and ``models`` are named under the title,
    so the PNG says what it shows."""
    import altair as alt

    table = table[table["k"] <= k_max]
    said = "   ".join(f"{r}: {kind} k = {int(k)}" for r, k, kind in zip(marks["run"], marks["k"], marks["kind"]))
    params = pick_params()
    hover, columns = hover_table(table, [r for r in runs if r in set(table["run"])])
    legend = _legend_inside(width, height, max(len(set(table["run"])), 1))
    field, title, fmt = SPEND_PANELS[spend]
    recall = alt.layer(*_recall_panel(table, runs, marks, width=width, height=height, k_max=k_max, legend=legend,
                                      title="", subtitle=[]), _pick(k_max, params, hover, columns)).properties(
        width=width, height=height,
        title=alt.TitleParams("What one more chunk buys (recall, top) and what it costs (bottom)",
                              subtitle=[f"The k to take (diamond: the trade-off; ring: the elbow):   {said}", context, models],
                              anchor="start", fontSize=17, subtitleFontSize=13))
    spend_line = alt.Chart(table).mark_line(strokeWidth=3).encode(
        x=_k_axis(k_max, unit=unit), y=alt.Y(f"{field}:Q", title=title, axis=alt.Axis(format=fmt, tickCount=3, labelFontSize=13,
                                                                            titleFontSize=13)),
        color=alt.Color("run:N", scale=run_colors(runs), legend=legend))
    spend_panel = alt.layer(spend_line, _k_rule(), _pick(k_max, params, hover, columns)).properties(width=width,
                                                                                                    height=80)
    with warnings.catch_warnings():  # one click selection in both panels is the point: Altair merges it, and says so
        warnings.filterwarnings("ignore", message="Automatically deduplicated selection parameter")
        return alt.vconcat(recall, spend_panel, spacing=10).resolve_scale(color="shared", x="shared")


def against_tokens(table: pd.DataFrame, runs: Sequence[str], *, metric: str, budget: float | None, context: str,
                   models: str, width: int = 760, height: int = 220) -> alt.VConcatChart:
    """Each run's ``metric`` (recall or evidence_recall) with its band over the mean prompt tokens of its top k
    chunks, a point per k (hover: k, the value with its interval, tokens), and the token ``budget`` as a rule."""
    import altair as alt

    colors = run_colors(runs)
    color = alt.Color("run:N", scale=colors, legend=_legend_inside(width, height, len(set(table["run"])) or 1))
    label = "recall@k" if metric == "recall" else "evidence recall@k"
    base = alt.Chart(table).encode(x=alt.X("tokens_mean:Q", title="mean prompt tokens of the top k chunks",
                                           axis=alt.Axis(format=",.0f", labelFontSize=14, titleFontSize=15)))
    low = max(0.0, int(float(table[f"{metric}_ci_low"].min()) * 10) / 10) if len(table) else 0.0
    tip = [alt.Tooltip("run:N"), alt.Tooltip("k:Q", title="k (chunks)"),
           alt.Tooltip(f"{metric}:Q", title=label, format=".3f"),
           alt.Tooltip(f"{metric}_ci_low:Q", title="95% CI low", format=".3f"),
           alt.Tooltip(f"{metric}_ci_high:Q", title="95% CI high", format=".3f"),
           alt.Tooltip("tokens_mean:Q", title="prompt tokens", format=",.0f")]
    layers = [
        base.mark_area(opacity=0.15, clip=True).encode(
            y=alt.Y(f"{metric}_ci_low:Q", title=label, scale=alt.Scale(domain=[low, 1], nice=False),
                    axis=alt.Axis(format=".1f", labelFontSize=14, titleFontSize=15)),
            y2=f"{metric}_ci_high:Q", color=color),
        base.mark_line(strokeWidth=3).encode(y=f"{metric}:Q", color=color),
        base.mark_point(size=40, filled=True).encode(y=f"{metric}:Q", color=color, tooltip=tip),
    ]
    if budget is not None:
        rule = pd.DataFrame({"tokens_mean": [float(budget)], "label": [f"{float(budget):,.0f} tokens"]})
        layers.append(alt.Chart(rule).mark_rule(strokeDash=[7, 4], color=K_RULE_COLOR, strokeWidth=2).encode(
            x="tokens_mean:Q"))
        layers.append(alt.Chart(rule).mark_text(align="left", dx=6, y=-8, fontWeight="bold", fontSize=15,
                                                color=K_RULE_COLOR).encode(x="tokens_mean:Q", text="label:N"))
    plot = alt.layer(*layers).properties(
        width=width, height=height,
        title=alt.TitleParams(f"{label[0].upper()}{label[1:]} against what the chunks cost in the prompt",
                              subtitle=["Each point is one more chunk (k = 1, 2, ...): chunkings compare at the same "
                                        "cost, left to right", context, models],
                              anchor="start", fontSize=17, subtitleFontSize=13))
    return alt.vconcat(plot)  # one panel, sized as drawn (a top-level layer is stretched to the container)
