"""Metrics per source and the customers-versus-team gap: hand-computed cases, coverage, small segments, errors."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from scipy.stats import t as student_t
from scipy.stats import ttest_ind

import evalcore
from evalcore.errors import UsageError
from evalcore.analyses.segments import chosen_pair, default_pair, difference_intervals, segment_gaps
from evalcore.report.segments import gap_sentence

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "sample_data"

# Team-written queries are all found at rank 1; customers' queries less often. Ranks of the one relevant doc:
TEAM = {"t1": 1, "t2": 1, "t3": 1, "t4": 1}
TICKETS = {"c1": 1, "c2": 1, "c3": 3, "c4": None}
SEARCHES = {"c5": 3, "c6": None}


def _case(tmp_path: Path, *, with_source: bool = True) -> evalcore.Evaluation:
    lines = ["query\tdoc_id\tgrade" + ("\tsource" if with_source else "")]
    run = {}
    for source, ranks in (("team_written", TEAM), ("support_ticket", TICKETS), ("search_log", SEARCHES)):
        for query, rank in ranks.items():
            lines.append(f"{query}\t{query}-rel\t1" + (f"\t{source}" if with_source else ""))
            ranking = [f"{query}-x{i}" for i in range(4)]
            if rank is not None:
                ranking.insert(rank - 1, f"{query}-rel")
            run[query] = ranking
    labels = tmp_path / "labels.tsv"
    labels.write_text("\n".join(lines) + "\n")
    return evalcore.evaluate_runs([evalcore.read_run(run, name="r")], labels, k=5, n_resamples=200)


def _sentence(report, metric: str) -> str:
    """The sentence the pages show for ``metric``'s gap (the first run's)."""
    row = report.gaps[report.gaps["metric"] == metric].iloc[0]
    return gap_sentence(row, report.min_n)


def _wilson(successes: int, n: int, z: float = 1.959963984540054) -> tuple[float, float]:
    p = successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return (0.0 if successes == 0 else centre - half), (1.0 if successes == n else centre + half)


def test_newcombe_matches_the_published_example() -> None:
    # Newcombe (1998), Statistics in Medicine 17:873, example (a): 56/70 - 48/80, method 10: 0.0524 to 0.3339.
    a = np.r_[np.ones(56), np.zeros(14)][:, None]
    b = np.r_[np.ones(48), np.zeros(32)][:, None]
    found = difference_intervals(a, b)
    assert found["gap"][0] == pytest.approx(0.2)
    assert found["ci_low"][0] == pytest.approx(0.0524, abs=1e-4)
    assert found["ci_high"][0] == pytest.approx(0.3339, abs=1e-4)
    assert found["method"][0] == "newcombe"


def test_welch_interval_by_hand_and_against_scipy() -> None:
    a, b = [0.2, 0.4, 0.6, 1.0], [0.0, 0.5, 0.5]
    va, vb = np.var(a, ddof=1) / 4, np.var(b, ddof=1) / 3
    df = (va + vb) ** 2 / (va**2 / 3 + vb**2 / 2)
    half = student_t.ppf(0.975, df) * math.sqrt(va + vb)
    found = difference_intervals(np.array(a)[:, None], np.array(b)[:, None])
    assert found["method"][0] == "welch"
    assert found["gap"][0] == pytest.approx(0.55 - 1 / 3)
    assert (found["ci_low"][0], found["ci_high"][0]) == pytest.approx((0.55 - 1 / 3 - half, 0.55 - 1 / 3 + half))
    reference = ttest_ind(a, b, equal_var=False).confidence_interval()
    assert (found["ci_low"][0], found["ci_high"][0]) == pytest.approx((reference.low, reference.high))


def test_constant_groups_give_the_point() -> None:
    found = difference_intervals(np.full((40, 1), 0.5), np.full((30, 1), 0.25))
    assert found["method"][0] == "constant"
    assert (found["ci_low"][0], found["gap"][0], found["ci_high"][0]) == (0.25, 0.25, 0.25)


@pytest.mark.parametrize("kind", ["binary", "graded"])
def test_intervals_cover_the_true_gap_about_95_percent_of_the_time(kind: str) -> None:
    # 2,000 simulated label sets at once (one per column): 260 customers' queries against 60 team-written.
    rng = np.random.default_rng(11)
    reps = 2000
    if kind == "binary":
        a = (rng.random((260, reps)) < 0.55).astype(float)
        b = (rng.random((60, reps)) < 0.80).astype(float)
        truth = 0.55 - 0.80
    else:  # recall@k of queries with two relevant docs: 0, 0.5 or 1
        values = np.array([0.0, 0.5, 1.0])
        a = rng.choice(values, size=(260, reps), p=[0.3, 0.3, 0.4])
        b = rng.choice(values, size=(60, reps), p=[0.1, 0.3, 0.6])
        truth = (0.15 + 0.4) - (0.15 + 0.6)
    found = difference_intervals(a, b)
    assert set(found["method"]) == ({"newcombe"} if kind == "binary" else {"welch"})
    covered = np.mean((found["ci_low"] <= truth) & (truth <= found["ci_high"]))
    assert 0.935 <= covered <= 0.965, covered


def test_hand_computed_gap_on_a_small_label_set(tmp_path: Path) -> None:
    ev = _case(tmp_path)
    report = segment_gaps(ev, "source", ["hit@1", "mrr"], min_n=2)
    assert report.pair.a == ("search_log", "support_ticket") and report.pair.b == ("team_written",)
    gaps = report.gaps.set_index("metric")
    # hit@1: customers 2 of 6, team 4 of 4.
    low_a, high_a = _wilson(2, 6)
    low_b, high_b = _wilson(4, 4)
    d = 2 / 6 - 1
    assert gaps.at["hit@1", "gap"] == pytest.approx(d)
    assert gaps.at["hit@1", "ci_low"] == pytest.approx(d - math.sqrt((2 / 6 - low_a) ** 2 + (high_b - 1) ** 2))
    assert gaps.at["hit@1", "ci_high"] == pytest.approx(d + math.sqrt((high_a - 2 / 6) ** 2 + (1 - low_b) ** 2))
    assert gaps.at["hit@1", "ci_high"] < 0
    assert gaps.at["hit@1", "verdict"] == "lower"
    assert _sentence(report, "hit@1").startswith("r: customers' queries score 66.7 points lower on hit@1 than "
                                                 "team-written ones (95% CI ")
    assert _sentence(report, "hit@1").endswith("; n = 6 vs 4).")
    # mrr: customers 1, 1, 1/3, 0, 1/3, 0; team all 1 (constant): Welch on the customers' spread alone.
    rr = np.array([1, 1, 1 / 3, 0, 1 / 3, 0])
    half = student_t.ppf(0.975, 5) * rr.std(ddof=1) / math.sqrt(6)
    assert gaps.at["mrr", "gap"] == pytest.approx(rr.mean() - 1)
    assert gaps.at["mrr", "ci_high"] == pytest.approx(rr.mean() - 1 + half)
    assert (gaps["n_a"] == 6).all() and (gaps["n_b"] == 4).all()
    assert set(gaps["labels"]) == {"labels"} and gaps["fingerprint"].str.len().gt(0).all()


def test_small_segments_are_kept_marked_and_not_ranked(tmp_path: Path) -> None:
    ev = _case(tmp_path)
    report = segment_gaps(ev, "source", ["hit@1"], min_n=3)
    seg = report.segments.set_index("value")
    assert seg.at["search_log", "n"] == 2 and bool(seg.at["search_log", "small"])
    assert seg.at["search_log", "mean"] == 0.0  # shown, never dropped
    assert seg.index.tolist() == ["search_log", "support_ticket", "team_written"]
    assert seg["rank"].isna().tolist() == [True, False, False]
    assert seg.at["team_written", "rank"] == 1 and seg.at["support_ticket", "rank"] == 2


def test_groups_under_min_n_get_no_verdict(tmp_path: Path) -> None:
    ev = _case(tmp_path)
    report = segment_gaps(ev, "source", ["hit@1"], min_n=5)  # team-written has 4
    row = report.gaps.iloc[0]
    assert row["verdict"] == "too few"
    assert _sentence(report, "hit@1") == ("r: too few queries to compare customers' queries with team-written ones "
                                          "on hit@1 (n = 6 vs 4; each side needs at least 5).")
    assert row["gap"] == pytest.approx(2 / 6 - 1)  # the number is still there
    assert report.segments["rank"].isna().all()  # every segment has fewer than 5: none is ranked


def test_a_gap_in_the_other_direction_reads_higher(tmp_path: Path) -> None:
    ev = _case(tmp_path)
    report = segment_gaps(ev, "source", ["hit@1"], min_n=2, a="team_written")
    row = report.gaps.iloc[0]
    assert report.pair.b == ("search_log", "support_ticket")
    assert row["gap"] == pytest.approx(1 - 2 / 6) and row["verdict"] == "higher"
    assert "team_written queries score 66.7 points higher on hit@1 than search_log + support_ticket ones" in \
        _sentence(report, "hit@1")


def test_a_missing_field_is_a_usage_error(tmp_path: Path) -> None:
    ev = _case(tmp_path, with_source=False)
    with pytest.raises(UsageError, match="no 'source' field"):
        segment_gaps(ev, "source")


def test_unknown_or_overlapping_groups_are_usage_errors(tmp_path: Path) -> None:
    ev = _case(tmp_path)
    with pytest.raises(UsageError, match="No segment named 'Support_Ticket'"):
        segment_gaps(ev, "source", ["hit@1"], a="Support_Ticket")
    with pytest.raises(UsageError, match="both sides"):
        segment_gaps(ev, "source", ["hit@1"], a=["search_log"], b=["search_log", "team_written"])


def test_default_pair_rules() -> None:
    team = default_pair({"support_ticket": 100, "Team-Written": 60, "(not set)": 9, "search_log": 95})
    assert team.a == ("search_log", "support_ticket") and team.b == ("Team-Written",)
    assert (team.name_a, team.name_b) == ("customers' queries", "team-written ones")
    largest = default_pair({"search_log": 30, "support_ticket": 95, "failed_search": 30, "(not set)": 500})
    assert (largest.a, largest.b) == (("support_ticket",), ("failed_search",))  # ties by name; (not set) never
    assert default_pair({"support_ticket": 10, "(not set)": 3}) is None
    assert default_pair({"team_written": 10}) is None
    assert chosen_pair({"a": 1, "b": 2, "c": 3}, None, "c").a == ("a", "b")


def test_one_source_only_gives_a_note_not_a_gap(tmp_path: Path) -> None:
    labels = tmp_path / "one.csv"
    labels.write_text("query,doc_id,source\nq1,d1,support_ticket\nq2,d2,support_ticket\n")
    ev = evalcore.evaluate_runs([evalcore.read_run({"q1": ["d1"], "q2": ["x"]}, name="r")], labels, k=1,
                                n_resamples=200)
    report = segment_gaps(ev, "source", ["hit@1"])
    assert report.pair is None and report.gaps.empty
    assert report.note == "Only one source (support_ticket): there is no second group to compare with."
    assert report.segments["value"].tolist() == ["support_ticket"]


def test_sample_data_shows_the_demo_production_gap() -> None:
    runs = [SAMPLE / f"{name}.trec" for name in ("base", "tuned")]
    ev = evalcore.evaluate_runs(runs, SAMPLE / "labels.tsv", k=[1, 5, 10], n_resamples=1000)
    report = segment_gaps(ev, "source", ["recall@5"])
    assert report.pair.b == ("team_written",)
    assert report.pair.a == ("failed_search", "search_log", "support_ticket")
    assert (report.gaps["n_a"] == 260).all() and (report.gaps["n_b"] == 60).all()
    assert (report.gaps["gap"] < 0).all() and set(report.gaps["verdict"]) == {"lower"}
    # The pooled customers' mean is the query-weighted mean of its segments.
    seg = report.segments[(report.segments["run"] == "base")].set_index("value")
    pooled = sum(seg.at[v, "mean"] * seg.at[v, "n"] for v in report.pair.a) / 260
    assert report.gaps.set_index("run").at["base", "mean_a"] == pytest.approx(pooled)


@pytest.mark.parametrize("page", ["README.md", "docs/metrics.md"])
def test_the_docs_quote_the_real_sentence(page: str) -> None:
    """The README's Sources page and docs/metrics.md quote the sample's source gap as the code says it."""
    ev = evalcore.evaluate_runs([SAMPLE / "base.trec"], SAMPLE / "labels.tsv", k=10, n_resamples=200)
    sentence = _sentence(segment_gaps(ev, "source", ["recall@10"]), "recall@10")
    assert sentence.startswith("base: ")
    text = " ".join((ROOT / page).read_text(encoding="utf-8").split())
    assert f'"{sentence.removeprefix("base: ").removesuffix(".")}"' in text


def test_reused_slices_give_the_same_report_for_another_min_n(tmp_path: Path) -> None:
    from evalcore.analyses.slices import slice_metrics

    ev = _case(tmp_path)
    slices = slice_metrics(ev, "source", ["hit@1", "mrr"], min_n=1)
    for min_n in (2, 3, 5):
        fresh = segment_gaps(ev, "source", ["hit@1", "mrr"], min_n=min_n)
        reused = segment_gaps(ev, "source", ["hit@1", "mrr"], min_n=min_n, slices=slices)
        assert reused.segments.equals(fresh.segments) and reused.gaps.equals(fresh.gaps)
    with pytest.raises(UsageError, match="'min_n' parameter must be an integer >= 1"):
        segment_gaps(ev, "source", ["hit@1"], min_n=0)
