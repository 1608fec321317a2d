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
    assert spec["facet"]["column"]["sort"] == ["recall@1", "recall@7", "mrr"]
    assert {row["interval"] for row in spec["data"]["values"]} >= {"0.450 to 0.550", "0.750 to 0.850"}
    assert charts.to_png(spec)[:8] == b"\x89PNG\r\n\x1a\n"


def test_tradeoff_spec_leaves_out_runs_without_a_value_and_says_so():
    points = pd.DataFrame({"run": ["base", "tuned"], "model": ["a", "b"], "mean": [0.5, 0.6], "ci_low": [0.4, 0.5],
                           "ci_high": [0.6, 0.7], "price_per_mtok": [0.02, np.nan], "index_mb": [10.0, 5.0],
                           "dims": [768, 256]})
    spec = charts.tradeoff(points, ["base", "tuned"], metric="recall@7", title="t", subtitle="s")
    price, size = spec["hconcat"]
    assert [r["run"] for r in price["data"]["values"]] == ["base"]
    assert price["title"]["subtitle"] == "not shown (no value): tuned"
    assert len(size["data"]["values"]) == 2
    assert charts.to_png(spec)[:8] == b"\x89PNG\r\n\x1a\n"
