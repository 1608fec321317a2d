"""The index-size report: every variant's numbers with intervals, each compared with the full vectors (Holm across
the variants), a sentence per variant that says how much recall the smaller index costs and how much smaller it is."""

from __future__ import annotations

import json
import math

import pytest

from evalcore.analyses.budget import k_budget
from evalcore.analyses.compare import compare_evaluation
from evalcore.analyses.drill_down import drill_down
from evalcore.analyses.failures import failure_list
from evalcore.analyses.index_size import index_size_report
from evalcore.errors import UsageError
from evalcore.metrics.split import scoring_labels
from evalcore.readers.runs import read_run
from evalcore.report.index_size import index_size_dict, variant_verdict
from evalcore.vectors.index_spec import parse_index_specs
from evalcore.vectors.runs import search_runs, trec_text
from evalcore.vectors.variants import plan_variants
from tests.vectors.planted import planted


@pytest.fixture(scope="module")
def report():
    queries, docs, labels = planted(n_docs=2000, n_queries=120, dims=64, noise=1.2)
    variants = plan_variants(64, "full,16", "float32,binary", depth=20)
    found = search_runs(queries, docs, variants, depth=20)
    return index_size_report(found, scoring_labels(labels), "1,10")


def test_json_has_every_variant_with_intervals_and_the_verdict_against_full(report) -> None:
    data = json.loads(json.dumps(index_size_dict(report), allow_nan=False))
    names = [v["name"] for v in data["variants"]]
    assert names == ["float32-full", "binary-full", "float32-16", "binary-16"]
    first = data["variants"][0]
    assert first["vs_full"] is None and first["dims"] == 64 and first["precision"] == "float32"
    assert set(first) >= {"name", "dims", "precision", "index_bytes", "n_docs", "metrics", "vs_full"}
    assert set(first["metrics"]) == {"recall@1", "recall@10", "mrr"}
    for variant in data["variants"][1:]:
        vs = variant["vs_full"]
        assert set(vs) == {"metric", "diff", "ci_low", "ci_high", "p_adjusted", "verdict"}
        assert vs["metric"] == "recall@10" and vs["ci_low"] <= vs["diff"] <= vs["ci_high"]
        assert "against full vectors" in vs["verdict"] or "indistinguishable from full vectors" in vs["verdict"]
        assert "x smaller" in vs["verdict"] and "n = 120" in vs["verdict"] or "with 120 queries" in vs["verdict"]
    # the same numbers as the paired comparison every other page uses, Holm over the three variants
    again = compare_evaluation(report.evaluation, ["recall@10"], baseline="float32-full")
    assert {c.run: c.p_adjusted for c in again.comparisons} == {n: v["vs_full"]["p_adjusted"] for n, v in
                                                               zip(names[1:], data["variants"][1:])}


def test_binary_16_loses_recall_and_says_how_much_smaller(report) -> None:
    item = next(v for v in report.variants if v.name == "binary-16")
    sentence = variant_verdict(report, item)
    assert sentence.startswith("binary 16 loses ")
    assert " points of recall@10 against full vectors (95% CI " in sentence
    ratio = report.reference.index_bytes / item.index_bytes
    assert f"the index is {ratio:.1f}x smaller." in sentence or f"the index is {ratio:,.0f}x smaller." in sentence


def test_the_reference_must_come_first() -> None:
    queries, docs, labels = planted(n_docs=200, n_queries=10, dims=8)
    found = search_runs(queries, docs, plan_variants(8, "4", "float32", depth=5), depth=5)
    with pytest.raises(UsageError, match="first variant must be the full float32"):
        index_size_report(found[1:], scoring_labels(labels))


def test_variant_runs_go_through_the_k_budget_and_the_failure_drill_down(report) -> None:
    evaluation = report.evaluation
    budget = k_budget(evaluation, max_k=10, chunk_tokens=100, n_resamples=200)
    assert [r.name for r in budget.runs] == ["float32-full", "binary-full", "float32-16", "binary-16"]
    missed = failure_list(evaluation, 10, runs=["binary-16"])
    assert len(missed) > 0  # the smaller index misses queries; the drill-down opens one
    query = missed.queries()[0]
    found = drill_down(evaluation, query, 10, runs=["float32-full", "binary-16"])
    assert found.query == query
    assert set(found.rankings["run"]) == {"float32-full", "binary-16"}


def test_neighbour_recall_its_tail_and_lost_queries_agree_with_a_brute_force_reference_from_saved_runs(
        tmp_path) -> None:
    """Each index's runs written as TREC files and read back: a plain loop over queries, sorting nothing but the
    runs' own ranks, gives the numbers the JSON output holds."""
    queries, docs, labels = planted(n_docs=1500, n_queries=120, dims=32, noise=1.0)
    specs = parse_index_specs(["hnsw:m=4:ef=2", "ivf:nlist=64:nprobe=1", "ivf:nlist=64:nprobe=3:dims=16"])
    variants = plan_variants(32, "full,16", "float32,int8", depth=20, indexes=specs)
    found = search_runs(queries, docs, variants, depth=20, build_threads=1)
    scope = scoring_labels(labels)
    data = json.loads(json.dumps(index_size_dict(index_size_report(found, scope, "1,10")), allow_nan=False))
    runs = {}
    for item in found:
        path = tmp_path / f"{item.name}.trec"
        path.write_text(trec_text(item.run), encoding="utf-8")
        runs[item.name] = read_run(path)
    relevant = labels.judgments[labels.judgments["grade"] >= 1].groupby("query")["doc_id"].apply(set).to_dict()
    exact_of = {32: "float32-full", 16: "float32-16"}
    k, lost_somewhere = 10, 0
    for entry in data["variants"]:
        exact, ours = runs[exact_of[entry["dims"]]], runs[entry["name"]]
        shares, lost = [], []
        for query in labels.queries:  # every labeled query here has a vector and a relevant doc
            truth = exact.ranking(query)[:k]
            got = set(ours.ranking(query)[:k])
            shares.append(sum(doc in got for doc in truth) / len(truth))
            if any(doc in relevant[query] and doc not in got for doc in truth):
                lost.append(query)
        shares.sort()
        assert entry["exact"] == exact_of[entry["dims"]]
        assert entry["neighbor_recall"]["mean"] == pytest.approx(sum(shares) / len(shares), abs=1e-12)
        assert entry["neighbor_recall"]["p5"] == shares[math.ceil(0.05 * len(shares)) - 1]
        assert entry["lost_queries"]["queries"] == lost and entry["lost_queries"]["count"] == len(lost)
        assert entry["lost_queries"]["n"] == 120
        lost_somewhere += len(lost)
        if entry["index"] is not None:
            assert entry["params"] == specs[[s.name for s in specs].index(entry["name"])].as_dict()
            assert entry["build_seconds"] >= 0 and entry["queries_per_second"] > 0
            assert entry["latency_ms"]["p50"] <= entry["latency_ms"]["p99"]
            assert entry["index_verdict"].startswith(("HNSW", "IVF")) and " of 120 queries" in entry["index_verdict"]
        else:
            assert entry["params"] is None and entry["index_verdict"] is None
    assert lost_somewhere > 0  # the reference is tried on real losses, not only on perfect indexes
    assert data["settings"]["index_k"] == 10 and data["settings"]["search_threads"] == 1
    assert data["settings"]["build_threads"] == 1
