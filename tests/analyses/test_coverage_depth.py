"""What "the judgments cover" means (issue 7 item 4): labels that list only relevant docs say nothing about how deep
anyone judged, so they neither set the covered depth nor flag every k; judged non-relevant docs or a recorded judged
depth (a blind judging round) do."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from evalcore.analyses.audit import audit
from evalcore.analyses.coverage import DEPTH_UNKNOWN, coverage_bounds, coverage_warnings, covered_depth, depth_known
from evalcore.metrics.evaluation import evaluate_runs
from evalcore.readers.runs import read_run


def run_of(name: str, rankings: dict) -> object:
    return read_run({q: list(docs) for q, docs in rankings.items()}, name=name)


RELEVANT_ONLY = {f"q{i}": {"a": 1} for i in range(4)}
RANKINGS = {f"q{i}": ["a", "x", "y", "z", "w"] for i in range(4)}


def test_relevant_only_labels_leave_the_judged_depth_unknown_and_flag_nothing() -> None:
    ev = evaluate_runs([run_of("r", RANKINGS)], RELEVANT_ONLY, [1, 5])
    bounds = coverage_bounds(ev)
    assert not bounds["flagged"].any()
    assert bounds["covered_k"].isna().all() and (bounds["n_known"] == 0).all()
    assert set(bounds["note"]) == {DEPTH_UNKNOWN}
    assert bounds.set_index("metric").loc["recall@5", "judged"] == pytest.approx(0.2)
    # The bounds are still there: precision@5 is 0.2 as reported, 1.0 if the four unjudged docs were relevant.
    p5 = bounds.set_index("metric").loc["precision@5"]
    assert (p5["low"], p5["high"]) == (pytest.approx(0.2), pytest.approx(1.0))
    warnings = coverage_warnings(bounds)
    assert [w.code for w in warnings] == ["judged_depth_unknown"] and warnings[0].count == 4
    assert "no k is flagged" in warnings[0].message
    text = audit(ev).to_text()
    assert "judged depth unknown" in text and "deeper than judged" not in text and "unknown" in text


def test_the_covered_depth_comes_from_the_queries_with_judged_non_relevant_docs() -> None:
    # q0 is judged three deep (a relevant, x and y non-relevant); q1..q3 list only their relevant doc.
    labels = {**RELEVANT_ONLY, "q0": {"a": 1, "x": 0, "y": 0}}
    ev = evaluate_runs([run_of("r", RANKINGS)], labels, [3, 5])
    result = ev.results[0]
    known = depth_known(result)
    assert known.tolist() == [q == "q0" for q in result.queries]
    assert covered_depth(result, known=known) == 3
    assert covered_depth(result) == 1  # over every query, as before: the relevant-only ones drag it down
    bounds = coverage_bounds(ev).set_index("metric")
    assert not bounds.loc["recall@3", "flagged"] and bounds.loc["recall@5", "flagged"]
    assert bounds.loc["recall@3", "judged_known"] == pytest.approx(1.0)
    assert bounds.loc["recall@3", "judged"] == pytest.approx(np.mean([1.0, 1 / 3, 1 / 3, 1 / 3]))
    assert bounds.loc["recall@5", "note"].startswith("covered depth from the 1 of 4 queries")
    [warning] = coverage_warnings(bounds.reset_index())
    assert warning.code == "judged_depth_exceeded" and "on the 1 query whose judged depth is known" in warning.message


def test_a_recorded_judged_depth_makes_a_query_count() -> None:
    labels = {**RELEVANT_ONLY}
    rankings = {**RANKINGS, "q0": ["a", "x", "y", "z", "w"]}
    ev = evaluate_runs([run_of("r", rankings)], labels, [1, 5])
    bounds = coverage_bounds(ev, judged_depths={"q0": 5})
    assert (bounds["n_known"] == 1).all()
    # q0 lists one relevant doc in its top 5: judged@1 = 1, judged@5 = 0.2 on the known query.
    assert bounds.set_index("metric").loc["recall@1", "flagged"] == False  # noqa: E712
    assert bounds.set_index("metric").loc["recall@5", "flagged"] == True  # noqa: E712


def test_json_of_an_unknown_depth_has_no_nan() -> None:
    ev = evaluate_runs([run_of("r", RANKINGS)], RELEVANT_ONLY, [1])
    data = audit(ev).to_dict()
    assert all(row["covered_k"] is None and row["flagged"] is False for row in data["coverage"])
    assert pd.isna(coverage_bounds(ev)["judged_known"]).all()


def test_caveats_for_every_k_at_once_equal_one_k_at_a_time() -> None:
    """The dashboard computes the Overview's caveats for every k once per data set; each k must read the same as
    asking for that k alone (and the recall-only bounds the same as the four-metric table's)."""
    from evalcore.analyses.coverage import coverage_bounds, number_caveats

    sample = Path(__file__).resolve().parents[2] / "sample_data"
    evaluation = evaluate_runs([sample / "base.trec", sample / "tuned.trec"], sample / "labels.tsv", k=(1, 20))
    every = number_caveats(evaluation, range(1, 21))
    assert len(every) == 2 * 20
    for k in (1, 7, 20):
        alone = number_caveats(evaluation, k)
        pd.testing.assert_frame_equal(every[every["k"] == k].reset_index(drop=True), alone)
        full = coverage_bounds(evaluation, [k]).set_index(["run", "metric"])
        for row in alone.itertuples():
            assert (row.low, row.high) == tuple(full.loc[(row.run, f"recall@{k}"), ["low", "high"]])
