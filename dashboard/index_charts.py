"""The Index size page's charts (Vega-Lite specs): quality against index size for the smaller vectors, and quality
against latency (or memory) for an approximate index's sweep, exact search drawn as the ceiling.

Made to be read on a projector: dark, distinct model colours, large points, legends at full strength. Point labels
never overlap: both axes get explicit domains, so each point's place in pixels is known here, and `place_labels`
puts each label beside its point where it overlaps no other label and no point, in order of importance (the
frontier first), leaving out a label that has no free place (its point keeps its tooltip, and the table below
names it). Pure functions of the tables the core produced; no Streamlit.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from evalcore.report.amounts import format_interval

SCHEMA = "https://vega.github.io/schema/vega-lite/v6.json"
PROJECTOR = ["#1a56a8", "#c4470d", "#1b7a3a", "#7b2d9b", "#9a6a00", "#b0144f", "#00727d", "#5d4037"]
"""Model colours dark enough to read on a washed-out projector, and distinct for the common colour blindnesses."""
EXACT_COLOUR = "#222222"
WIDTH, HEIGHT = 760, 300
CONFIG = {"axis": {"labelColor": "#333333", "titleColor": "#222222", "labelFontSize": 12, "titleFontSize": 13},
          "legend": {"labelColor": "#222222", "titleColor": "#222222"}}
"""Dark text for axes and legends (the theme's grey fades on a projector)."""
FONT = 12
CHAR_WIDTH = 7.2
"""An upper bound on one character's width at `FONT` px in the charts' sans-serif font: labels are measured with it."""
LABEL_HEIGHT = 15
POINT_RADIUS = 7


@dataclass(frozen=True)
class Box:
    left: float
    top: float
    right: float
    bottom: float

    def overlaps(self, other: "Box") -> bool:
        return self.left < other.right and other.left < self.right and self.top < other.bottom and \
            other.top < self.bottom

    def inside(self, width: float, height: float) -> bool:
        return self.left >= 0 and self.top >= 0 and self.right <= width and self.bottom <= height


def label_box(x: float, y: float, text: str, place: str) -> Box:
    """The box of ``text`` put at ``place`` (right, left, above, below, and the four corners) of a point at pixel
    (x, y), with a gap of `POINT_RADIUS`."""
    w, h, gap = CHAR_WIDTH * len(text) + 2, LABEL_HEIGHT, POINT_RADIUS + 2
    left = {"right": x + gap, "left": x - gap - w, "above": x - w / 2, "below": x - w / 2, "above right": x + 2,
            "below right": x + 2, "above left": x - 2 - w, "below left": x - 2 - w}[place]
    top = {"right": y - h / 2, "left": y - h / 2, "above": y - gap - h, "below": y + gap, "above right": y - gap - h,
           "below right": y + gap, "above left": y - gap - h, "below left": y + gap}[place]
    return Box(left, top, left + w, top + h)


PLACES = ("right", "left", "above", "below", "above right", "below right", "above left", "below left")


def place_labels(xs: Sequence[float], ys: Sequence[float], texts: Sequence[str | None], width: float = WIDTH,
                 height: float = HEIGHT, keep_clear: Sequence[Box] = ()) -> list[Box | None]:
    """A box for each text (in the order given: most important first) beside its point, overlapping no other
    label, no point and nothing in ``keep_clear``, inside the plot; None where no place is free (or no text)."""
    points = [Box(x - POINT_RADIUS, y - POINT_RADIUS, x + POINT_RADIUS, y + POINT_RADIUS) for x, y in zip(xs, ys)]
    taken: list[Box] = [*keep_clear]
    out: list[Box | None] = []
    for x, y, text in zip(xs, ys, texts):
        chosen = None
        if text:
            for place in PLACES:
                box = label_box(x, y, text, place)
                if box.inside(width, height) and not any(box.overlaps(b) for b in taken + points):
                    chosen = box
                    break
        if chosen is not None:
            taken.append(chosen)
        out.append(chosen)
    return out


@dataclass(frozen=True)
class Axis:
    """A scale with an explicit domain, so the chart draws exactly where `pixel` says."""

    low: float
    high: float
    size: float
    log: bool = False
    flip: bool = False  # y: larger values higher up

    def pixel(self, value: float) -> float:
        low, high, v = (math.log10(self.low), math.log10(self.high), math.log10(value)) if self.log else \
            (self.low, self.high, value)
        share = (v - low) / (high - low)
        return (1 - share) * self.size if self.flip else share * self.size

    def value(self, pixel: float) -> float:
        share = 1 - pixel / self.size if self.flip else pixel / self.size
        if self.log:
            return 10 ** (math.log10(self.low) + share * (math.log10(self.high) - math.log10(self.low)))
        return self.low + share * (self.high - self.low)

    def scale(self) -> dict:
        return {"type": "log" if self.log else "linear", "domain": [self.low, self.high], "nice": False,
                "zero": False, "clamp": True}


def log_axis(values: Sequence[float], size: float) -> Axis:
    """A log axis around ``values`` with room for a label on either side of the end points (about 100 px)."""
    positive = [v for v in values if v and v > 0 and np.isfinite(v)] or [1.0]
    low, high = math.log10(min(positive)), math.log10(max(positive))
    span = max(high - low, 0.3)
    per_pixel = span / max(size - 200, 1)
    return Axis(10 ** (low - 100 * per_pixel), 10 ** (high + 100 * per_pixel), size, log=True)


def quality_axis(lows: Sequence[float], highs: Sequence[float], size: float) -> Axis:
    """A linear axis from the lowest interval end to the highest, with a little room above and below."""
    low, high = float(np.nanmin(lows)), float(np.nanmax(highs))
    pad = max(0.02, 0.08 * (high - low))
    return Axis(max(0.0, low - pad), min(1.0 + pad, high + pad), size, flip=True)


def bars(frame: pd.DataFrame, x: Axis, y: Axis, x_field: str) -> list[Box]:
    """The interval bars of ``frame``'s points as boxes a label must keep clear of."""
    return [Box(x.pixel(v) - 2, y.pixel(high), x.pixel(v) + 2, y.pixel(low))
            for v, low, high in zip(frame[x_field], frame["ci_low"], frame["ci_high"])]


def line_boxes(frame: pd.DataFrame, x: Axis, y: Axis, x_field: str, group: str) -> list[Box]:
    """Small boxes every few pixels along the lines joining each ``group``'s points in x order: a label keeps clear
    of the lines too."""
    out = []
    for _, rows in frame.sort_values(x_field).groupby(group, sort=False):
        xs, ys = [x.pixel(v) for v in rows[x_field]], [y.pixel(v) for v in rows["mean"]]
        for (x0, y0), (x1, y1) in zip(zip(xs, ys), zip(xs[1:], ys[1:])):
            steps = max(1, int(math.hypot(x1 - x0, y1 - y0) // 4))
            out += [Box(x0 + (x1 - x0) * t / steps - 1.5, y0 + (y1 - y0) * t / steps - 1.5,
                        x0 + (x1 - x0) * t / steps + 1.5, y0 + (y1 - y0) * t / steps + 1.5) for t in range(steps + 1)]
    return out


def _labelled(frame: pd.DataFrame, x: Axis, y: Axis, x_field: str, texts: Sequence[str | None],
              keep_clear: Sequence[Box] = ()) -> pd.DataFrame:
    """``frame`` with ``label``, ``label_x`` and ``label_y`` (data coordinates of each placed label's left middle;
    null where no place was free). Labels keep clear of each other, of every point and interval bar, and of
    ``keep_clear``."""
    boxes = place_labels([x.pixel(v) for v in frame[x_field]], [y.pixel(v) for v in frame["mean"]], texts,
                         x.size, y.size, [*keep_clear, *bars(frame, x, y, x_field)])
    out = frame.copy()
    out["label"] = [t if b is not None else None for t, b in zip(texts, boxes)]
    out["label_x"] = [x.value(b.left + 1) if b is not None else None for b in boxes]
    out["label_y"] = [y.value((b.top + b.bottom) / 2) if b is not None else None for b in boxes]
    return out


def records(frame: pd.DataFrame) -> list[dict]:
    """Rows as plain JSON values (NaN and NA as null), as a Vega-Lite spec holds its data."""
    out = []
    for row in frame.to_dict(orient="records"):
        out.append({k: (None if v is None or (isinstance(v, float) and v != v) or v is pd.NA else
                        (v.item() if hasattr(v, "item") else v)) for k, v in row.items()})
    return out


def _colour(field: str, domain: Sequence[str], title: str) -> dict:
    """The colour of ``field`` with its legend: the same dict on every layer (a layer without the legend would
    drop it for all)."""
    scale = {"domain": list(domain), "range": [PROJECTOR[i % len(PROJECTOR)] for i in range(len(domain))]}
    legend = {"orient": "top", "symbolOpacity": 1, "symbolSize": 160, "symbolType": "circle", "symbolStrokeWidth": 0,
              "labelFontSize": 13, "titleFontSize": 13}
    return {"field": field, "type": "nominal", "title": title, "scale": scale, "legend": legend}


def _text_layer(colour: dict, x: Axis, y: Axis) -> dict:
    return {"transform": [{"filter": "datum.label != null"}],
            "mark": {"type": "text", "align": "left", "baseline": "middle", "fontSize": FONT, "fontWeight": 600},
            "encoding": {"x": {"field": "label_x", "type": "quantitative", "scale": x.scale()},
                         "y": {"field": "label_y", "type": "quantitative", "scale": y.scale()},
                         "text": {"field": "label", "type": "nominal"}, "color": colour}}


def index_frontier(points: pd.DataFrame, models: Sequence[str], *, metric: str, title: str,
                   subtitle: str | list[str], width: int = WIDTH, height: int = HEIGHT) -> dict:
    """Quality against index size (log scale), one point per variant with its interval, each model's frontier (the
    variants no smaller index beats) drawn as a line with its band; labels placed so none overlaps (frontier
    variants first).

    ``points`` has the columns of `evalcore.analyses.index_size.IndexSizeReport.points` plus ``name`` (the model
    on the page): run, variant, precision, index_mb, ratio, mean, ci_low, ci_high, n, model, verdict, frontier.
    """
    frame = points.copy()
    frame["interval"] = [format_interval(lo, hi, join=" to ") for lo, hi in zip(frame["ci_low"], frame["ci_high"])]
    frame["smaller"] = [f"{r:,.1f}x" for r in frame["ratio"]]
    x_axis, y_axis = log_axis(frame["index_mb"], width), quality_axis(frame["ci_low"], frame["ci_high"], height)
    reference = frame["variant"] == "float32-full"
    order = frame.assign(reference=reference).sort_values(["frontier", "reference", "index_mb"],
                                                          ascending=[False, False, True]).index
    frame = frame.loc[order]  # labels placed in this order: the frontier, then the full vectors, then the rest
    lines = line_boxes(frame[frame["frontier"]], x_axis, y_axis, "index_mb", "name")
    frame = _labelled(frame, x_axis, y_axis, "index_mb", list(frame["variant"]), lines)
    colour = _colour("name", models, "model")
    x = {"field": "index_mb", "type": "quantitative", "title": "index size (MB, log scale; smaller is left)",
         "scale": x_axis.scale()}
    y = {"field": "mean", "type": "quantitative", "title": metric, "scale": y_axis.scale()}
    tooltip = [{"field": "run", "type": "nominal"}, {"field": "model", "type": "nominal"},
               {"field": "metric", "type": "nominal"}, {"field": "mean", "type": "quantitative", "format": ".3f"},
               {"field": "interval", "type": "nominal", "title": "95% CI"}, {"field": "n", "type": "quantitative"},
               {"field": "index_mb", "type": "quantitative", "title": "index MB", "format": ",.3f"},
               {"field": "smaller", "type": "nominal", "title": "smaller than full"},
               {"field": "verdict", "type": "nominal"}]
    frontier = {"filter": "datum.frontier"}
    quiet = colour
    layers = [
        {"transform": [frontier], "mark": {"type": "area", "opacity": 0.12},
         "encoding": {"x": x, "y": {"field": "ci_low", "type": "quantitative", "title": metric,
                                    "scale": y_axis.scale()}, "y2": {"field": "ci_high"}, "color": quiet}},
        {"transform": [frontier], "mark": {"type": "line", "strokeWidth": 3},
         "encoding": {"x": x, "y": y, "color": quiet}},
        {"mark": {"type": "rule", "strokeWidth": 2.5},
         "encoding": {"x": x, "y": {"field": "ci_low", "type": "quantitative", "scale": y_axis.scale()},
                      "y2": {"field": "ci_high"}, "color": quiet, "tooltip": tooltip}},
        {"mark": {"type": "point", "filled": True, "size": 150, "opacity": 1, "stroke": "white", "strokeWidth": 1},
         "encoding": {"x": x, "y": y, "color": colour, "tooltip": tooltip,
                      "shape": {"field": "precision", "type": "nominal", "title": "precision",
                                "legend": {"orient": "top", "symbolSize": 140, "labelFontSize": 13,
                                           "titleFontSize": 13, "symbolFillColor": "#444444"}}}},
        _text_layer(colour, x_axis, y_axis),
    ]
    return {"$schema": SCHEMA, "data": {"values": records(frame)}, "layer": layers, "width": width,
            "height": height, "autosize": {"type": "pad"},  # the plot is width x height, as the labels were placed
            "config": CONFIG,
            "title": {"text": title, "anchor": "start", "subtitle": subtitle}}


def index_speed(points: pd.DataFrame, *, metric: str, against: str, title: str, subtitle: str | list[str],
                width: int = WIDTH, height: int = HEIGHT) -> dict:
    """Quality against latency (``against="latency"``: p50 ms on one thread) or memory (``"memory"``: index MB),
    both log scale, for each setting of a sweep (a line and its 95% band per build, its points labelled by their ef
    or nprobe, with intervals), and exact search drawn as the ceiling: its recall as a line across with its band.

    ``points``: the rows of `evalcore.analyses.index_size.IndexSizeReport.points` for the exact search and the
    approximate indexes of the sweep, with ``setting`` (the label: ``ef = 32``) and ``sweep`` (the build).
    """
    x_field = "latency_p50_ms" if against == "latency" else "index_mb"
    x_title = ("p50 latency per query (ms, one thread, log scale; faster is left)" if against == "latency" else
               "index size (MB, log scale; smaller is left)")
    frame = points.copy()
    frame["interval"] = [format_interval(lo, hi, join=" to ") for lo, hi in zip(frame["ci_low"], frame["ci_high"])]
    exact = frame[frame["exact"]]
    approximate = frame[~frame["exact"] & frame[x_field].notna()].sort_values(["sweep", x_field])
    x_axis = log_axis(list(approximate[x_field]) + list(exact[x_field].dropna()), width)
    y_axis = quality_axis(frame["ci_low"], frame["ci_high"], height)
    ceiling = exact.iloc[0] if len(exact) else None
    shown = pd.concat([exact[exact[x_field].notna()].head(1).assign(setting="exact search"), approximate])
    keep_clear: list[Box] = []
    ceiling_text, ceiling_box = "", None
    if ceiling is not None:  # the ceiling's dashed line, and its own label where no point or bar is
        top = y_axis.pixel(float(ceiling["mean"]))
        ceiling_text = f"exact search (the ceiling): {float(ceiling['mean']):.3f}"
        crowd = [Box(x_axis.pixel(v) - POINT_RADIUS, y_axis.pixel(m) - POINT_RADIUS, x_axis.pixel(v) + POINT_RADIUS,
                     y_axis.pixel(m) + POINT_RADIUS) for v, m in zip(shown[x_field], shown["mean"])]
        crowd += bars(shown, x_axis, y_axis, x_field)
        w = CHAR_WIDTH * len(ceiling_text) + 2
        candidates = [Box(left, t, left + w, t + LABEL_HEIGHT) for t in (top - LABEL_HEIGHT - 3, top + 3)
                      for left in (4, (width - w) / 2, width - w - 4)]
        ceiling_box = next((b for b in candidates if b.inside(width, height) and not any(b.overlaps(c) for c in crowd)),
                           candidates[0])
        keep_clear += [ceiling_box, Box(0, top - 2, width, top + 2)]
    keep_clear += line_boxes(approximate, x_axis, y_axis, x_field, "sweep")
    shown = _labelled(shown, x_axis, y_axis, x_field, list(shown["setting"]), keep_clear)
    exact_point, approximate = shown[shown["exact"]], shown[~shown["exact"]]
    sweeps = list(dict.fromkeys(approximate["sweep"]))
    colour = _colour("sweep", sweeps, "index")
    quiet = colour
    x = {"field": x_field, "type": "quantitative", "title": x_title, "scale": x_axis.scale()}
    y = {"field": "mean", "type": "quantitative", "title": metric, "scale": y_axis.scale()}
    tooltip = [{"field": "run", "type": "nominal", "title": "setting"},
               {"field": "mean", "type": "quantitative", "format": ".3f", "title": metric},
               {"field": "interval", "type": "nominal", "title": "95% CI"}, {"field": "n", "type": "quantitative"},
               {"field": "lost", "type": "quantitative", "title": "lost queries"},
               {"field": "neighbor_recall", "type": "quantitative", "format": ".3f", "title": "neighbour recall"},
               {"field": "queries_per_second", "type": "quantitative", "format": ",.0f",
                "title": "queries/s (1 thread)"},
               {"field": "latency_p50_ms", "type": "quantitative", "format": ".3f", "title": "p50 ms"},
               {"field": "latency_p99_ms", "type": "quantitative", "format": ".3f", "title": "p99 ms"},
               {"field": "index_mb", "type": "quantitative", "format": ",.3f", "title": "index MB"},
               {"field": "model", "type": "nominal"}]
    layers = []
    if ceiling is not None:
        band = {"values": [{"low": float(ceiling["ci_low"]), "high": float(ceiling["ci_high"]),
                            "mean": float(ceiling["mean"]), "text": ceiling_text,
                            "at": x_axis.value(ceiling_box.left + 1),
                            "y_text": y_axis.value((ceiling_box.top + ceiling_box.bottom) / 2)}]}
        layers += [
            {"data": band, "mark": {"type": "rect", "color": EXACT_COLOUR, "opacity": 0.08},
             "encoding": {"y": {"field": "low", "type": "quantitative", "scale": y_axis.scale()},
                          "y2": {"field": "high"}}},
            {"data": band, "mark": {"type": "rule", "color": EXACT_COLOUR, "strokeWidth": 2, "strokeDash": [6, 4]},
             "encoding": {"y": {"field": "mean", "type": "quantitative", "scale": y_axis.scale()}}},
            {"data": band, "mark": {"type": "text", "align": "left", "baseline": "middle", "fontSize": FONT,
                                    "fontWeight": 600, "color": EXACT_COLOUR},
             "encoding": {"x": {"field": "at", "type": "quantitative", "scale": x_axis.scale()},
                          "y": {"field": "y_text", "type": "quantitative", "scale": y_axis.scale()},
                          "text": {"field": "text", "type": "nominal"}}},
        ]
    layers += [
        {"data": {"values": records(approximate)}, "mark": {"type": "area", "opacity": 0.12},
         "encoding": {"x": x, "y": {"field": "ci_low", "type": "quantitative", "title": metric,
                                    "scale": y_axis.scale()}, "y2": {"field": "ci_high"}, "color": quiet}},
        {"data": {"values": records(approximate)}, "mark": {"type": "line", "strokeWidth": 3},
         "encoding": {"x": x, "y": y, "color": quiet, "order": {"field": x_field, "type": "quantitative"}}},
        {"data": {"values": records(approximate)}, "mark": {"type": "rule", "strokeWidth": 2.5},
         "encoding": {"x": x, "y": {"field": "ci_low", "type": "quantitative", "scale": y_axis.scale()},
                      "y2": {"field": "ci_high"}, "color": quiet, "tooltip": tooltip}},
        {"data": {"values": records(approximate)},
         "mark": {"type": "point", "filled": True, "size": 150, "opacity": 1, "stroke": "white", "strokeWidth": 1},
         "encoding": {"x": x, "y": y, "color": colour, "tooltip": tooltip}},
        {"data": {"values": records(approximate)}, **_text_layer(colour, x_axis, y_axis)},
    ]
    if len(exact_point):  # exact search at its own speed (or size): where the ceiling is reached
        black = {"value": EXACT_COLOUR}
        layers += [
            {"data": {"values": records(exact_point)},
             "mark": {"type": "point", "filled": True, "size": 150, "shape": "diamond", "opacity": 1},
             "encoding": {"x": x, "y": y, "color": black, "tooltip": tooltip}},
            {"data": {"values": records(exact_point)},
             **{**_text_layer(colour, x_axis, y_axis), "encoding": {**_text_layer(colour, x_axis, y_axis)["encoding"],
                                                                    "color": black}}},
        ]
    return {"$schema": SCHEMA, "layer": layers, "width": width, "height": height, "autosize": {"type": "pad"},
            "config": CONFIG,
            "title": {"text": title, "anchor": "start", "subtitle": subtitle}}
