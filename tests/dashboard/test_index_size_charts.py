"""The Index size page's charts, read from their Vega-Lite specs: no point label overlaps another label, a point or
an interval bar, every label is inside the plot, the model colours are dark enough for a projector, and exact
search is drawn as the ceiling of the approximate index's chart."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from dashboard import index_charts
from dashboard.index_charts import CHAR_WIDTH, LABEL_HEIGHT, POINT_RADIUS, PROJECTOR, Axis, Box, place_labels


def _axes(spec: dict, x_field: str) -> tuple[Axis, Axis]:
    """The chart's axes, from the explicit domains its layers carry."""
    for layer in spec["layer"]:
        encoding = layer.get("encoding", {})
        if encoding.get("x", {}).get("field") == x_field and "y" in encoding and encoding["y"]["field"] == "mean":
            x, y = encoding["x"]["scale"], encoding["y"]["scale"]
            return (Axis(*x["domain"], spec["width"], log=x["type"] == "log"),
                    Axis(*y["domain"], spec["height"], flip=True))
    raise AssertionError("no layer draws the points")


def _rows(spec: dict) -> list[dict]:
    """Every data row of the chart once (layers that draw the same rows share them)."""
    rows = list(spec.get("data", {}).get("values", []))
    for layer in spec["layer"]:
        rows += layer.get("data", {}).get("values", [])
    return list({row.get("run", row.get("text")): row for row in rows}.values())


def _check_labels(spec: dict, x_field: str, expect_labels: int) -> None:
    x, y = _axes(spec, x_field)
    rows = [r for r in _rows(spec) if "mean" in r and r.get(x_field) is not None and "label_x" in r]
    points = {(r[x_field], r["mean"]) for r in rows}
    labels = []
    for row in rows:
        if row["label"] is None:
            continue
        left, middle = x.pixel(row["label_x"]) - 1, y.pixel(row["label_y"])
        labels.append(Box(left, middle - LABEL_HEIGHT / 2, left + CHAR_WIDTH * len(row["label"]) + 2,
                          middle + LABEL_HEIGHT / 2))
    assert len(labels) >= expect_labels
    for i, box in enumerate(labels):
        assert box.inside(spec["width"] + 0.5, spec["height"] + 0.5), box
        assert not any(box.overlaps(other) for other in labels[i + 1:]), "two labels overlap"
        for px, py in points:
            dot = Box(x.pixel(px) - POINT_RADIUS, y.pixel(py) - POINT_RADIUS, x.pixel(px) + POINT_RADIUS,
                      y.pixel(py) + POINT_RADIUS)
            assert not box.overlaps(dot), f"a label covers the point at {px}, {py}"


def _variants(seed: int) -> pd.DataFrame:
    """Three models' variants crowded as the sample's are: the same sizes, recalls a few hundredths apart."""
    rng = np.random.default_rng(seed)
    rows = []
    for model, base in (("base", 0.84), ("tuned", 0.87), ("tuned-256d", 0.86)):
        for variant, mb, drop in (("float32-full", 0.5, 0), ("int8-full", 0.14, 0.002), ("binary-full", 0.03, 0.35),
                                  ("float32-64", 0.14, 0.01), ("int8-64", 0.046, 0.012), ("binary-64", 0.017, 0.1)):
            mean = base - drop + rng.normal(0, 0.01)
            rows.append({"name": model, "run": f"{model}-{variant}", "variant": variant, "words": variant,
                         "precision": variant.split("-")[0], "index_mb": mb * (1 + rng.normal(0, 0.02)),
                         "ratio": 0.5 / mb, "metric": "recall@10", "mean": mean, "ci_low": mean - 0.05,
                         "ci_high": mean + 0.05, "n": 224, "model": model, "verdict": "", "frontier": drop < 0.05})
    return pd.DataFrame(rows)


@pytest.mark.parametrize("seed", range(5))
def test_frontier_labels_never_overlap_and_the_frontier_is_named(seed: int) -> None:
    spec = index_charts.index_frontier(_variants(seed), ["base", "tuned", "tuned-256d"], metric="recall@10",
                                       title="t", subtitle="s")
    _check_labels(spec, "index_mb", expect_labels=6)
    named = {r["run"] for r in _rows(spec) if r.get("label")}
    assert {"base-float32-full", "tuned-float32-full"} & named  # the references get a place before the rest
    assert spec["autosize"] == {"type": "pad"}  # the plot keeps the size the labels were placed for


def test_model_colours_read_on_a_projector() -> None:
    """Each colour against white at least 4.5:1 (WCAG's contrast for text), and no two alike."""
    def luminance(colour: str) -> float:
        channels = [int(colour[i:i + 2], 16) / 255 for i in (1, 3, 5)]
        linear = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
        return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]
    for colour in PROJECTOR:
        assert 1.05 / (luminance(colour) + 0.05) >= 4.5, colour
    assert len(set(PROJECTOR)) == len(PROJECTOR)
    spec = index_charts.index_frontier(_variants(0), ["base", "tuned", "tuned-256d"], metric="recall@10",
                                       title="t", subtitle="s")
    colour = next(layer["encoding"]["color"] for layer in spec["layer"] if layer["mark"]["type"] == "point")
    assert colour["scale"]["range"] == PROJECTOR[:3] and colour["legend"]["symbolOpacity"] == 1


def _sweep() -> pd.DataFrame:
    rows = [{"run": "tuned-float32-full", "setting": "exact search", "sweep": "exact", "exact": True, "mean": 0.873,
             "ci_low": 0.828, "ci_high": 0.91, "latency_p50_ms": 0.02, "index_mb": 0.53}]
    for ef, mean, ms in ((4, 0.74, 0.012), (8, 0.80, 0.015), (16, 0.85, 0.02), (32, 0.862, 0.026)):
        rows.append({"run": f"tuned-hnsw-ef{ef}", "setting": f"ef = {ef}", "sweep": "HNSW", "exact": False,
                     "mean": mean, "ci_low": mean - 0.05, "ci_high": mean + 0.04, "latency_p50_ms": ms,
                     "index_mb": 0.6})
    for nprobe, mean, ms in ((1, 0.6, 0.01), (2, 0.79, 0.012), (4, 0.85, 0.015)):
        rows.append({"run": f"tuned-ivf-nprobe{nprobe}", "setting": f"nprobe = {nprobe}", "sweep": "IVF nlist = 32",
                     "exact": False, "mean": mean, "ci_low": mean - 0.06, "ci_high": mean + 0.04,
                     "latency_p50_ms": ms, "index_mb": 0.56})
    frame = pd.DataFrame(rows)
    for column in ("n", "lost", "neighbor_recall", "queries_per_second", "latency_p99_ms"):
        frame[column] = 1
    frame["model"] = "tuned"
    return frame


@pytest.mark.parametrize("against, field", [("latency", "latency_p50_ms"), ("memory", "index_mb")])
def test_the_sweep_chart_draws_exact_search_as_the_ceiling_and_labels_each_setting(against: str, field: str) -> None:
    spec = index_charts.index_speed(_sweep(), metric="recall@10", against=against, title="t", subtitle="s")
    _check_labels(spec, field, expect_labels=4)
    ceiling = [layer for layer in spec["layer"] if layer["mark"].get("strokeDash")]
    assert len(ceiling) == 1 and ceiling[0]["data"]["values"][0]["mean"] == 0.873
    texts = [row.get("text") for row in _rows(spec)]
    assert "exact search (the ceiling): 0.873" in texts
    legend = next(layer["encoding"]["color"] for layer in spec["layer"] if layer["mark"].get("type") == "point"
                  and "field" in layer["encoding"]["color"])
    assert legend["scale"]["domain"] == ["HNSW", "IVF nlist = 32"]


def test_a_label_with_no_free_place_is_left_out_rather_than_drawn_over_another() -> None:
    xs, ys = [100.0] * 12, [100.0 + 3 * i for i in range(12)]  # twelve points in one column, 3 px apart
    boxes = place_labels(xs, ys, [f"variant-{i}" for i in range(12)], 760, 300)
    placed = [b for b in boxes if b is not None]
    assert 0 < len(placed) < 12
    assert not any(a.overlaps(b) for i, a in enumerate(placed) for b in placed[i + 1:])
