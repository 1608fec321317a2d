"""evalcore agrees with trec_eval 10.0's own expected outputs, per query and mean, to 4 decimals."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import evalcore
from evalcore.metrics.measures import Measure

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "trec_eval"
TREC_NAMES = re.compile(r"^(recall|P|success|ndcg_cut)_(\d+)$")
PREFIX = {"recall": "recall", "P": "precision", "success": "hit", "ndcg_cut": "ndcg"}


def expected_values(name: str) -> dict[tuple[Measure, str], float]:
    """(measure, query or 'all') -> value for the measures evalcore implements."""
    values = {}
    for line in (FIXTURES / name).read_text().splitlines():
        measure, query, value = line.split()
        match = TREC_NAMES.match(measure)
        if match:
            values[(Measure(PREFIX[match.group(1)], int(match.group(2))), query)] = float(value)
        elif measure == "recip_rank":
            values[(Measure("mrr"), query)] = float(value)
    return values


CASES = [
    # (qrels, run, expected output, relevance threshold)
    ("qrels.test", "results.test", "out.test.aq", 1),
    ("qrels.test", "results.trunc", "out.test.aqc", 1),  # topic 302 missing from the run: -c
    ("qrels.rel_level", "results.test", "out.test.aql", 2),  # -l2; nDCG still uses raw grades
    ("qrels.test", "results.test", "out.test.meas_params", 1),  # odd cutoffs: 2, 7, 23, 2000
]


@pytest.mark.parametrize("qrels, run, output, min_grade", CASES, ids=[c[2] for c in CASES])
def test_every_value_matches_trec_eval(qrels: str, run: str, output: str, min_grade: int) -> None:
    expected = expected_values(output)
    measures = sorted({m for m, _ in expected})
    ks = sorted({m.k for m in measures if m.k})
    result = evalcore.evaluate(FIXTURES / run, FIXTURES / qrels, k=ks, min_grade=min_grade, zero_relevant="zero")
    per_query = result.per_query(measures).set_index("query")
    mismatches = []
    for (measure, query), value in expected.items():
        got = result[measure] if query == "all" else per_query.loc[query, measure.per_query_name]
        if round(got, 4) != pytest.approx(value, abs=1e-9):
            mismatches.append(f"{measure} {query}: trec_eval {value}, evalcore {got:.6f}")
    assert len(expected) > 40
    assert not mismatches, "\n".join(mismatches)


def test_missing_topic_scores_zero_and_is_averaged_in() -> None:
    result = evalcore.evaluate(FIXTURES / "results.trunc", FIXTURES / "qrels.test", k=10)
    per_query = result.per_query().set_index("query")
    assert result.n_queries == 3
    assert per_query.loc["302"].eq(0).all()
    missing = [w for w in result.warnings if w.code == "query_missing_from_run"]
    assert [w.count for w in missing] == [1]


def test_extra_trailing_columns_are_ignored() -> None:
    run = evalcore.read_run(FIXTURES / "results.trunc")
    assert run.n_rows == 584
    assert run.model == "STANDARD"
    assert set(run.query_ids) == {"301", "303"}
