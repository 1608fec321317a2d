"""Vega-Lite specs (plain dicts) of the meeting report's charts: the leaderboard and each model line's history.

Specs, not images: `evalcore.report.meeting.MeetingReport.chart_pngs` turns them into PNGs with vl-convert
when it is installed. Every chart carries its context in its title: interval level, n, label set.
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from .meeting_render import labels_ref


def leaderboard_spec(board: pd.DataFrame, metrics: Sequence[str], provenance: dict) -> dict:
    """Each run's means with their intervals, one facet per metric (``board``: the report's leaderboard)."""
    values = [{"run": str(row["run"]), "metric": metric, "mean": float(row[metric]),
               "ci_low": float(row[f"{metric}_ci_low"]), "ci_high": float(row[f"{metric}_ci_high"])}
              for row in board.to_dict(orient="records") for metric in metrics]
    order = [str(r) for r in board["run"]]
    level = int(round(float(board["level"].iloc[0]) * 100))
    y = {"field": "run", "type": "nominal", "sort": order, "title": None}
    return {
        "$schema": "https://vega.github.io/schema/vega-lite/v5.json",
        "title": {"text": f"Means with {level}% intervals",
                  "subtitle": f"n = {int(board['n'].iloc[0])} queries; labels {labels_ref(provenance)}"},
        "data": {"values": values},
        "facet": {"column": {"field": "metric", "type": "nominal", "sort": list(metrics), "title": None}},
        "spec": {
            "width": 170, "height": max(40, 24 * len(board)),
            "layer": [
                {"mark": {"type": "bar", "color": "#4c78a8", "opacity": 0.85},
                 "encoding": {"y": y, "x": {"field": "mean", "type": "quantitative", "title": None,
                                            "scale": {"domain": [0, 1]}}}},
                {"mark": {"type": "rule", "color": "#222", "strokeWidth": 1.5},
                 "encoding": {"y": y, "x": {"field": "ci_low", "type": "quantitative"}, "x2": {"field": "ci_high"}}},
                {"mark": {"type": "text", "align": "left", "dx": 4, "fontSize": 10},
                 "encoding": {"y": y, "x": {"field": "ci_high", "type": "quantitative"},
                              "text": {"field": "mean", "type": "quantitative", "format": ".3f"}}},
            ],
        },
        "config": {"view": {"stroke": None}},
    }


def history_spec(history: pd.DataFrame, k: int, level: float, provenance: dict) -> dict:
    """recall@k over each model line's runs with its intervals (``history``: `Workspace.history` rows)."""
    frame = history
    metric = f"recall@{k}"
    frame = frame[frame["metric"] == metric] if (frame["metric"] == metric).any() else frame
    values = [{"line": str(r.line), "step": int(r.step), "run": str(r.run), "metric": str(r.metric),
               "mean": float(r.mean), "ci_low": float(r.ci_low), "ci_high": float(r.ci_high),
               "labels_version": int(r.labels_version)} for r in frame.itertuples(index=False)]
    x = {"field": "step", "type": "ordinal", "title": "run of the line, in upload order", "axis": {"labelAngle": 0}}
    color = {"field": "line", "type": "nominal", "title": "model line"}
    level = int(round(float(level) * 100))
    return {
        "$schema": "https://vega.github.io/schema/vega-lite/v5.json",
        "title": {"text": f"{frame['metric'].iloc[0]} over each model line's runs, {level}% intervals",
                  "subtitle": f"labels {provenance['labels']['name']} (version per point in the data)"},
        "data": {"values": values},
        "width": 460, "height": 200,
        "layer": [
            {"mark": {"type": "area", "opacity": 0.18},
             "encoding": {"x": x, "y": {"field": "ci_low", "type": "quantitative", "title": None,
                                        "scale": {"domain": [0, 1]}},
                          "y2": {"field": "ci_high"}, "color": color}},
            {"mark": {"type": "line", "point": True},
             "encoding": {"x": x, "y": {"field": "mean", "type": "quantitative"}, "color": color}},
        ],
    }
