"""The History page's chart: a model line's metrics over its runs in time, each with its 95% interval."""

from __future__ import annotations

import altair as alt
import pandas as pd


def history_chart(frame: pd.DataFrame, line: str, subtitle: str = "") -> alt.LayerChart:
    """One line per metric through the line's runs in upload order, a bar from ci_low to ci_high at each.

    ``frame`` is `Workspace.history` output. The tooltip names the run, model, n, k and label-set
    version of every point, so a point read off the chart carries its context.
    """
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
