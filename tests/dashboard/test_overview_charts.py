"""The Overview's two charts are plain Vega-Lite specs: they must render, and say what they show."""

from __future__ import annotations

import numpy as np
import pandas as pd

from dashboard import charts


def _summary() -> pd.DataFrame:
    rows = []
    for run, base in (("base", 0.5), ("tuned", 0.6)):
        for metric, shift in (("recall@1", 0.0), ("recall@7", 0.2), ("mrr", 0.1)):
            rows.append({"run": run, "model": f"{run}-model", "metric": metric, "mean": base + shift,
                         "ci_low": base + shift - 0.05, "ci_high": base + shift + 0.05, "n": 320})
    return pd.DataFrame(rows)


def test_metric_intervals_spec_renders_one_panel_per_metric_in_order():
    spec = charts.metric_intervals(_summary(), ["base", "tuned"], title="Recall@1, recall@7 and MRR",
                                   subtitle="n = 320 queries")
    rows = spec["datasets"][spec["data"]["name"]]
    panels = sorted({(row["order"], row["metric"]) for row in rows})
    assert [metric for _, metric in panels] == ["recall@1", "recall@7", "mrr"]
    assert spec["facet"]["column"]["sort"] == {"field": "order", "op": "min"}
    assert {row["interval"] for row in rows} >= {"0.450 to 0.550", "0.750 to 0.850"}
    assert charts.to_png(spec)[:8] == b"\x89PNG\r\n\x1a\n"


def test_metric_intervals_spec_is_the_same_for_every_k_only_the_data_change():
    """The browser then swaps the data into the drawn chart instead of drawing it again."""
    at_7 = charts.metric_intervals(_summary(), ["base", "tuned"], title="t", subtitle="s")
    other = _summary()
    other["metric"] = other["metric"].replace({"recall@7": "recall@12"})
    other["mean"] += 0.01
    at_12 = charts.metric_intervals(other, ["base", "tuned"], title="t", subtitle="s")
    assert {k: v for k, v in at_7.items() if k != "datasets"} == {k: v for k, v in at_12.items() if k != "datasets"}
    assert at_7["datasets"] != at_12["datasets"]


def test_tradeoff_spec_leaves_out_runs_without_a_value_and_says_so():
    points = pd.DataFrame({"run": ["base", "tuned"], "model": ["a", "b"], "mean": [0.5, 0.6], "ci_low": [0.4, 0.5],
                           "ci_high": [0.6, 0.7], "price_per_mtok": [0.02, np.nan], "index_mb": [10.0, 5.0],
                           "dims": [768, 256]})
    spec = charts.tradeoff(points, ["base", "tuned"], metric="recall@7", title="t", subtitle="s")
    price, size = spec["hconcat"]
    assert [r["run"] for r in spec["datasets"][price["data"]["name"]]] == ["base"]
    assert price["title"]["subtitle"] == "not shown (no value): tuned"
    assert len(spec["datasets"][size["data"]["name"]]) == 2
    assert charts.to_png(spec)[:8] == b"\x89PNG\r\n\x1a\n"
