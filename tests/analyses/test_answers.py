"""Answer grades beside retrieval: every number of `answer_study` against a plain reference (means, their intervals
as `mean_intervals` gives them, paired comparisons as `compare_runs` gives them, Holm, the four counts, the diverging
queries, Spearman and its bootstrap, kappa), with gaps in the grades and without."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from scipy.stats import spearmanr

import evalcore
from evalcore.analyses.answer_join import join_grades
from evalcore.analyses.answers import CORRELATION_RESAMPLES, answer_study
from evalcore.readers.grades import read_grades
from evalcore.stats.agreement import cohen_kappa
from evalcore.stats.intervals import bca_bounds, mean_intervals
from evalcore.stats.paired import compare_runs, holm
from tests.readers.files import write

N, R, SEED = 80, 400, 3
RUNS = ("bm25", "dense", "hybrid")


def _scenario(tmp_path, *, gaps: bool, seed: int = 0):
    """N labeled queries (one relevant doc each, with text), three runs that find it at random ranks, and a grade
    file per run (faithfulness on a 0..1 scale of quarters, a pass/fail grade, gaps when asked)."""
    rng = np.random.default_rng(seed)
    ids = [f"q{i:03d}" for i in range(N)]
    lines = ["query\tdoc_id\tgrade\tquery_text"] + [f"{q}\t{q}-rel\t1\tquestion number {i}" for i, q in enumerate(ids)]
    labels = evalcore.read_labels(write(tmp_path, "labels.tsv", "\n".join(lines) + "\n"))
    runs, grade_sets = [], []
    for name in RUNS:
        ranking = {}
        for q in ids:
            docs = [f"{q}-x{j}" for j in range(6)]
            where = int(rng.integers(0, 8))
            if where < 6:
                docs[where] = f"{q}-rel"
            ranking[q] = docs
        runs.append(evalcore.read_run(ranking, name=name))
        faith = rng.integers(0, 5, N) / 4
        passed = (rng.random(N) < 0.6).astype(float)
        if gaps:
            faith[rng.random(N) < 0.15] = np.nan
            passed[rng.random(N) < 0.1] = np.nan
        rows = ["query_text,faithfulness,pass"] + [
            f"Question  NUMBER {i},{'' if np.isnan(f) else f},{'' if np.isnan(p) else ('pass' if p else 'fail')}"
            for i, (f, p) in enumerate(zip(faith, passed))]
        grade_sets.append(read_grades(write(tmp_path, f"{name}.csv", "\n".join(rows) + "\n"), run=name))
    evaluation = evalcore.evaluate_runs(runs, labels, k=(3,), n_resamples=R)
    joined = join_grades(grade_sets, labels, runs=list(RUNS))
    return joined, evaluation


def _recall(evaluation, run: str, queries) -> np.ndarray:
    result = evaluation[run]
    found = dict(zip(result.queries, result.score("recall@3")))
    return np.array([found.get(q, np.nan) for q in queries])


@pytest.fixture(scope="module")
def full(tmp_path_factory):
    joined, evaluation = _scenario(tmp_path_factory.mktemp("full"), gaps=False)
    return joined, evaluation, answer_study(joined, evaluation, k=3, good=0.5, seed=SEED, n_resamples=R)


@pytest.fixture(scope="module")
def gappy(tmp_path_factory):
    joined, evaluation = _scenario(tmp_path_factory.mktemp("gappy"), gaps=True, seed=1)
    return joined, evaluation, answer_study(joined, evaluation, k=3, good=0.5, seed=SEED, n_resamples=R)


def test_means_and_intervals_are_the_house_ones_when_every_query_is_graded(full) -> None:
    joined, _, study = full
    columns = np.column_stack([joined.grades[run][m] for run in RUNS for m in ("faithfulness", "pass")])
    house = mean_intervals(columns, 0.95, R, SEED)
    assert [m.interval for m in study.means] == house  # exactly: one draw, the house's stream and sums
    assert [m.n for m in study.means] == [N] * 6
    assert [m.interval.method for m in study.means] == ["bca", "wilson"] * 3
    assert study.run_n("bm25") == N


def test_paired_comparisons_are_compare_runs_with_holm_across_the_table(full) -> None:
    joined, _, study = full
    scores = {run: {m: joined.grades[run][m] for m in ("faithfulness", "pass")} for run in RUNS}
    house = compare_runs(scores, ["faithfulness", "pass"], level=0.95, n_resamples=R, rng=SEED)
    ours = {(c.baseline, c.run, c.metric): c for c in study.pairs}
    assert len(ours) == len(house) == 6
    for c in house:
        mine = ours[c.baseline, c.run, c.metric]
        assert (mine.diff, mine.ci_low, mine.ci_high, mine.wins, mine.ties, mine.losses, mine.n, mine.test) == \
               (c.diff, c.ci_low, c.ci_high, c.wins, c.ties, c.losses, c.n, c.test)
        assert mine.p_value == pytest.approx(c.p_value, abs=1e-12)
        assert mine.p_adjusted == pytest.approx(c.p_adjusted, abs=1e-12)  # Holm across all 6, as compare_runs
    diff = joined.grades["dense"]["faithfulness"] - joined.grades["bm25"]["faithfulness"]
    mine = ours["bm25", "dense", "faithfulness"]
    assert mine.diff == pytest.approx(diff.mean()) and mine.wins == int((diff > 0).sum())


def test_gaps_keep_each_grade_its_own_n_and_resample_only_its_queries(gappy) -> None:
    joined, _, study = gappy
    every = np.column_stack([joined.grades[run][m] for run in RUNS for m in ("faithfulness", "pass")])
    universe = (~np.isnan(every)).any(axis=1)
    draw = np.random.default_rng(SEED).integers(0, universe.sum(), size=(R, universe.sum()), dtype=np.int32)
    for m in study.means:
        values = joined.grades[m.run][m.metric]
        own = values[~np.isnan(values)]
        assert m.n == len(own) and m.interval.point == pytest.approx(own.mean())
        if m.metric == "pass":  # 0/1: Wilson, closed form
            assert m.interval == mean_intervals(own[:, None], 0.95, R, SEED)[0]
            continue
        resampled = values[universe][draw]  # each resample's mean over the drawn queries that have the grade
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            deviations = np.nanmean(resampled, axis=1) - own.mean()
        low, high, _ = bca_bounds(own[:, None], deviations[np.isfinite(deviations)][:, None], 0.95)
        assert (m.interval.low, m.interval.high) == pytest.approx((low[0], high[0]), abs=2e-7)
    for c in study.pairs:
        a, b = joined.grades[c.baseline][c.metric], joined.grades[c.run][c.metric]
        both = ~np.isnan(a) & ~np.isnan(b)
        assert c.n == both.sum() and c.diff == pytest.approx((b - a)[both].mean())
        assert c.wins + c.ties + c.losses == c.n and c.wins == int(((b - a)[both] > 0).sum())
    assert [c.p_adjusted for c in study.pairs] == pytest.approx(list(holm([c.p_value for c in study.pairs])))


def test_retrieval_against_the_answer_counts_and_diverging_queries(gappy) -> None:
    joined, evaluation, study = gappy
    queries = list(joined.queries)
    for j in study.joint:
        recall, grade = _recall(evaluation, j.run, queries), joined.grades[j.run][j.metric]
        counts = {"hit_good": 0, "hit_bad": 0, "miss_good": 0, "miss_bad": 0}
        for r, g in zip(recall, grade):
            if not math.isnan(r) and not math.isnan(g):
                counts[("hit" if r > 0 else "miss") + ("_good" if g >= 0.5 else "_bad")] += 1
        assert (j.hit_good, j.hit_bad, j.miss_good, j.miss_bad) == tuple(counts.values()) and j.k == 3
    assert len(study.diverging) == 6
    for d in study.diverging:
        ra, rb = _recall(evaluation, d.a, queries), _recall(evaluation, d.b, queries)
        ga, gb = joined.grades[d.a][d.metric], joined.grades[d.b][d.metric]
        better_worse, worse_better, b_more = [], [], 0
        for q, xa, xb, ya, yb in zip(queries, ra, rb, ga, gb):
            if any(math.isnan(v) for v in (xa, xb, ya, yb)):
                continue
            b_more += xb > xa
            if xb > xa and yb < ya:
                better_worse.append(q)
            if xb < xa and yb > ya:
                worse_better.append(q)
        assert list(d.retrieval_better_answer_worse) == better_worse
        assert list(d.retrieval_worse_answer_better) == worse_better and d.b_finds_more == b_more


def test_spearman_and_its_bootstrap_over_the_shared_draw(gappy) -> None:
    joined, evaluation, study = gappy
    every = np.column_stack([joined.grades[run][m] for run in RUNS for m in ("faithfulness", "pass")])
    universe = np.flatnonzero((~np.isnan(every)).any(axis=1))
    draw = np.random.default_rng(SEED).integers(0, len(universe), size=(R, len(universe)), dtype=np.int32)
    b = min(R, CORRELATION_RESAMPLES)
    for c in study.correlation:
        x = _recall(evaluation, c.run, joined.queries)[universe]
        y = joined.grades[c.run][c.metric][universe]
        used = ~np.isnan(x) & ~np.isnan(y)
        assert c.value.n == used.sum()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            assert c.value.rho == pytest.approx(spearmanr(x[used], y[used]).statistic, abs=1e-12)
            rhos = [spearmanr(x[row][used[row]], y[row][used[row]]).statistic for row in draw[:b]]
        rhos = np.array(rhos)[np.isfinite(rhos)]
        assert (c.value.low, c.value.high) == pytest.approx(tuple(np.percentile(rhos, [2.5, 97.5])), abs=1e-9)


def test_two_judges_kappa_and_disagreements(tmp_path) -> None:
    labels = evalcore.read_labels(write(tmp_path, "l.tsv", "query\tdoc_id\tgrade\n" +
                                        "".join(f"q{i}\td\t1\n" for i in range(12))))
    person = [0, 0.5, 1, 1, 0.5, 0, 1, 1, 0.5, 0, 1, 1]
    llm = [0, 1, 1, 1, 0.5, 0.5, 1, 0, 0.5, 0, 1, None]
    files = [write(tmp_path, name, "query_id,correct\n" + "".join(f"q{i},{'' if v is None else v}\n"
                                                               for i, v in enumerate(values)))
             for name, values in (("person.csv", person), ("llm.csv", llm))]
    joined = join_grades([read_grades(f, run="base") for f in files], labels)
    study = answer_study(joined, None, n_resamples=R, seed=SEED)
    (agreement,) = study.agreement
    assert (agreement.a, agreement.b, agreement.metric, agreement.kappa.weights) == ("person", "llm", "correct",
                                                                                    "linear")
    assert agreement.kappa.n == 11 and agreement.disagree == ("q1", "q5", "q7")
    assert agreement.kappa.kappa == pytest.approx(cohen_kappa(person[:11], llm[:11], "linear"))
    assert agreement.kappa.low <= agreement.kappa.kappa <= agreement.kappa.high
    assert [m.metric for m in study.means] == ["correct (person)", "correct (llm)"]
    assert study.joint == () and study.correlation == () and study.k is None  # no runs: the answer side only


def test_continuous_judges_are_compared_as_good_or_bad(tmp_path) -> None:
    rng = np.random.default_rng(4)
    a = rng.random(40).round(3)
    b = np.clip(a + rng.normal(0, 0.2, 40), 0, 1).round(3)
    files = [write(tmp_path, name, "query_id,score\n" + "".join(f"q{i},{v}\n" for i, v in enumerate(values)))
             for name, values in (("one.csv", a), ("two.csv", b))]
    study = answer_study(join_grades([read_grades(f, run="r") for f in files]), None, n_resamples=R)
    (agreement,) = study.agreement
    assert agreement.split_at == 0.5 and agreement.kappa.weights == "none"
    assert agreement.kappa.kappa == pytest.approx(cohen_kappa((a >= 0.5) * 1.0, (b >= 0.5) * 1.0))
    assert len(agreement.disagree) == int(((a >= 0.5) != (b >= 0.5)).sum())
