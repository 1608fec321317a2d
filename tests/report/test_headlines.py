"""The sentences the presented pages open on: the numbers in them are the analyses' own, rounded for reading aloud,
and a lead that could be chance is never called real."""

from __future__ import annotations

from pathlib import Path

import numpy as np

import evalcore
from evalcore.analyses.compare import compare_evaluation
from evalcore.analyses.failures import failure_list
from evalcore.analyses.headline import best_run, failure_counts
from evalcore.analyses.segments import segment_gaps
from evalcore.report.headlines import failures_headline, overview_headline, percent, points, sources_headline

SAMPLE = Path(__file__).resolve().parents[2] / "sample_data"
RUNS = ("base", "tuned", "tuned-256d")


def _sample(ks=(1, 5, 10)):
    return evalcore.evaluate_runs([SAMPLE / f"{r}.trec" for r in RUNS], SAMPLE / "labels.tsv", ks)


def test_the_best_run_is_compared_with_every_other_run_as_compare_would() -> None:
    evaluation = _sample()
    found = best_run(evaluation)
    means = {r: float(np.mean(evaluation[r].score("hit@1"))) for r in RUNS}
    assert found.best == max(means, key=means.get) == "tuned"
    # The same paired tests as `evalcore compare --metric hit@1 --baseline tuned` (same seed, same Holm family).
    expected = compare_evaluation(evaluation, ["hit@1"], "tuned").comparisons
    assert [(c.run, c.diff, c.ci_low, c.ci_high, c.p_adjusted) for c in found.comparisons] == \
        [(c.run, c.diff, c.ci_low, c.ci_high, c.p_adjusted) for c in sorted(expected, key=lambda c: -means[c.run])]
    said = overview_headline(found)
    runner = found.comparisons[0]
    assert said.startswith("Best run: tuned (acme-embed-large-v2-kestrel-ft). ")
    assert (f"tuned puts a relevant document first for {percent(means['tuned'])} of queries, "
            f"{points('hit@1', -runner.diff)} more than tuned-256d, the next best ({percent(means['tuned-256d'])}; "
            f"real: 95% CI {points('hit@1', -runner.ci_high, unit=False)} to {points('hit@1', -runner.ci_low)}; "
            "n = 320 queries).") in said


def _two_runs(differ: int, n: int = 40):
    """Two runs over ``n`` one-doc queries: both put the relevant doc first, except that b misses it on ``differ``."""
    labels = {f"q{i}": {"d": 1} for i in range(n)}
    run_a = {f"q{i}": ["d", "x"] for i in range(n)}
    run_b = {f"q{i}": (["x", "d"] if i < differ else ["d", "x"]) for i in range(n)}
    return evalcore.evaluate_runs([evalcore.read_run(run_a, name="a"), evalcore.read_run(run_b, name="b")],
                                  evalcore.read_labels(labels), (1, 2))


def test_a_lead_that_could_be_chance_names_no_best_run() -> None:
    said = overview_headline(best_run(_two_runs(differ=2)))
    assert said.startswith("No clear best run: a and b are within chance of each other")
    assert "2 points" not in said and "5 points more than b (95%; could be chance: 95% CI" in said
    same = overview_headline(best_run(_two_runs(differ=0)))
    assert "a and b both put a relevant document first for 100% of queries, the very same ones" in same
    clear = overview_headline(best_run(_two_runs(differ=20)))
    assert clear.startswith("Best run: a (") and "50 points more than b" in clear and "real: 95% CI" in clear
    alone = overview_headline(best_run(_two_runs(differ=2), ["b"]))
    assert alone.startswith("One run: b (") and "95% of queries (95% CI" in alone


def test_the_failures_headline_counts_what_the_list_lists() -> None:
    evaluation = _sample()
    for mode in ("any", "none"):
        counts = failure_counts(evaluation, 5, mode=mode)
        listed = failure_list(evaluation, 5, mode=mode).per_run()
        assert {r.run: r.failed for r in counts.runs} == listed
        later = failure_list(evaluation, 10, mode=mode)
        for r in counts.runs:
            now = set(failure_list(evaluation, 5, mode=mode, runs=[r.run]).queries())
            assert r.rescued == len(now - set(later.filtered(runs=[r.run]).queries()))
        fewest = min(counts.runs, key=lambda r: r.failed)
        said = failures_headline(counts)
        name = {"any": "missed a relevant doc", "none": "found nothing relevant"}[mode]
        assert said.startswith(f"At k = 5, {fewest.failed} of 320 queries ({percent(fewest.failed / 320)}) {name} "
                               f"with {fewest.run}")
        assert f"Raising k to 10 would rescue {fewest.rescued} of {fewest.run}'s {fewest.failed}" in said
    deepest = failure_counts(evaluation, 10)
    assert deepest.larger_k is None and "Raising k" not in failures_headline(deepest)


def test_the_sources_headline_turns_the_gaps_into_one_sentence() -> None:
    evaluation = _sample()
    gaps = segment_gaps(evaluation, "source", ["recall@10"])
    said = sources_headline(gaps.gaps, "recall@10", list(RUNS), gaps.min_n)
    base = gaps.gaps[(gaps.gaps["run"] == "base") & (gaps.gaps["metric"] == "recall@10")].iloc[0]
    assert base["verdict"] == "lower"
    sizes = sorted({points("recall@10", -g, unit=False) for g in gaps.gaps["gap"]}, key=float)
    size = sizes[0] if len(sizes) == 1 else f"{sizes[0]} to {sizes[-1]}"
    assert said.startswith(f"Customers' queries score {size} points lower on recall@10 than team-written ones, with "
                           "every run shown. By run: base")
    assert (f"base {points('recall@10', -base['gap'])} lower (real: 95% CI {points('recall@10', -base['ci_high'], unit=False)}"
            f" to {points('recall@10', -base['ci_low'], unit=False)})") in said
    assert "(n = 260 vs 60)" in said and said.endswith("overstates what customers get.")
    assert sources_headline(gaps.gaps, "recall@10", list(RUNS), min_n=1000).startswith("Too few queries to compare")


def test_fragments_are_a_third_kind_of_failure_in_the_headline_and_the_story() -> None:
    from evalcore.analyses.drill_down import drill_down
    from evalcore.analyses.failure_story import failure_story
    from tests.chunk_sample import evaluation

    chunked = evaluation()
    counts = failure_counts(chunked, 5, mode="fragment")
    listed = failure_list(chunked, 5, mode="fragment").per_run()
    assert {r.run: r.failed for r in counts.runs} == listed and listed["sent1"] == 74
    said = failures_headline(counts)
    assert said.startswith(f"At k = 5, {listed['char400']} of 320 queries (4%) got only a fragment with char400, the "
                           f"fewest of the runs shown (sent3 {listed['sent3']}, sent1 74)")
    assert said.endswith("the rest still get only a fragment.")

    story = failure_story(drill_down(chunked, "q308", 5), mode="fragment")
    assert story.headline == "sent1, sent3 and char400 got only a fragment at k = 5."
    sent1 = story.runs[0]
    evidence = chunked["sent1"].score("evidence_recall@5")[list(chunked["sent1"].queries).index("q308")]
    assert sent1.failed and sent1.evidence_recall == evidence < 0.5
    assert [(d.chunk_id, d.rank, d.evidence) for d in sent1.chunks_found] == [("security-scim-01#s3", 4, ((0, 94),))]
