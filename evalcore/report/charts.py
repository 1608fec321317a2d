"""Vega-Lite specs (plain dicts) of the meeting report's charts: the leaderboard, recall against k (with the chosen k
and each run's elbow) and each model line's history.

Specs, not images: `evalcore.report.meeting.MeetingReport.chart_pngs` turns them into PNGs with vl-convert
when it is installed. Every chart carries its context in its title: interval level, n, label set.
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from ..analyses.budget_report import BudgetReport
from ..analyses.k_choice import BASIS_ELBOW
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
            "width": 125, "height": max(40, 24 * len(board)),  # four facets fit an A4 page's width at natural size
            "layer": [
                {"mark": {"type": "bar", "color": "#4c78a8", "opacity": 0.85},
                 "encoding": {"y": y, "x": {"field": "mean", "type": "quantitative", "title": None,
                                            "scale": {"domain": [0, 1]},
                                            "axis": {"values": [0, 0.5, 1], "format": ".1f"}}}},
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
    x = {"field": "step", "type": "ordinal", "title": "run of the model line, in upload order", "axis": {"labelAngle": 0}}
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


def recall_k_spec(budget: BudgetReport, chosen_k: int, provenance: dict) -> dict:
    """recall@k against k for every run with its interval band, the report's k as a rule and each run's k to take
    as a marked point (``budget``: the report's `evalcore.analyses.budget_report.BudgetReport`)."""
    level = int(round(float(budget.settings["level"]) * 100))
    values, elbows = [], []
    for run in budget:
        for row in run.table.itertuples(index=False):
            values.append({"run": run.name, "k": int(row.k), "recall": float(row.recall),
                           "ci_low": float(row.recall_ci_low), "ci_high": float(row.recall_ci_high)})
        at = run.row(run.recommended_k)
        why = "the elbow" if run.basis == BASIS_ELBOW else "the trade-off"
        elbows.append({"run": run.name, "k": int(run.recommended_k), "recall": float(at["recall"]),
                       "label": f"{run.name}: k to take = {run.recommended_k} ({why})"})
    n = budget.runs[0].n_queries if budget.runs else 0
    max_k = max(v["k"] for v in values) if values else chosen_k
    x = {"field": "k", "type": "quantitative", "title": "k (chunks in the prompt)",
         "scale": {"domain": [1, max_k]}, "axis": {"tickMinStep": 1, "format": "d"}}
    y = {"field": "recall", "type": "quantitative", "title": "recall@k", "scale": {"domain": [0, 1]},
         "axis": {"format": ".0%"}}
    color = {"field": "run", "type": "nominal", "title": "run", "sort": [r.name for r in budget]}
    return {
        "$schema": "https://vega.github.io/schema/vega-lite/v5.json",
        "title": {"text": f"Recall against k, with {level}% bands",
                  "subtitle": [f"n = {n} queries; labels {labels_ref(provenance)}",
                               f"grey line: the report's k = {chosen_k}; dots: each run's k to take"]},
        "width": 560, "height": 260,
        "layer": [
            {"data": {"values": values}, "mark": {"type": "area", "opacity": 0.18},
             "encoding": {"x": x, "y": {**y, "field": "ci_low"}, "y2": {"field": "ci_high"}, "color": color}},
            {"data": {"values": values}, "mark": {"type": "line", "strokeWidth": 2},
             "encoding": {"x": x, "y": y, "color": color}},
            {"data": {"values": [{"k": chosen_k, "label": f"report at k = {chosen_k}"}]},
             "layer": [{"mark": {"type": "rule", "color": "#555", "strokeDash": [4, 3]},
                        "encoding": {"x": {"field": "k", "type": "quantitative"}}},
                       {"mark": {"type": "text", "align": "left", "dx": 4, "y": 8, "fontSize": 11, "color": "#333"},
                        "encoding": {"x": {"field": "k", "type": "quantitative"}, "text": {"field": "label"}}}]},
            {"data": {"values": elbows}, "mark": {"type": "point", "filled": True, "size": 90, "stroke": "#222"},
             "encoding": {"x": {"field": "k", "type": "quantitative"}, "y": {"field": "recall", "type": "quantitative"},
                          "color": color, "tooltip": {"field": "label"}}},
        ],
        "config": {"view": {"stroke": None}},
    }
