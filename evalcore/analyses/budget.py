"""Pick k: recall@k next to what k chunks cost in prompt tokens, and where recall stops paying.

Every extra chunk in a RAG prompt is tokens on every request. `k_budget` lines up, per run
and for k = 1..K, the recall and hit rate the first k chunks reach (with 95% intervals),
the prompt tokens those chunks add (mean and 90th percentile over queries), what that costs
per 1,000 requests and per month, and what the k-th chunk adds; then it recommends a k.

    >>> report = k_budget(["base.trec", "tuned.trec"], "labels.tsv", "docs.jsonl", max_k=20,
    ...                   price_per_mtok=2.5, requests_per_month=1_000_000)
    >>> run = report["tuned"]
    >>> run.recommended_k, run.stability, run.stop_cost["recall_lost"], run.table.head()

Decisions a user should know
----------------------------

**Tokens per query at k** (overhead plus the chunks each query actually retrieved, how chunks
are counted, docs the documents file lacks): `evalcore.analyses.prompt_tokens`.

**The k to take** (``recommended_k``, with its ``basis``): the elbow of recall@k until the person gives a
trade-off, then the largest ``100 * recall(k) - lambda * tokens(k) / 1000`` (read on a smooth fit below
`FIT_BELOW_QUERIES` queries); one rule at a time, and **the stability** of that rule's pick over bootstrap
resamples: `evalcore.analyses.k_choice`. ``rule["rule_k"]`` keeps the trade-off rule's pick at the lambda in force
(the default placeholder too) for experts; no sentence shows it before a trade-off is given.

**Which price.** The cost of k is the *generator LLM's* input-token price: the chunks go
into the prompt of the model that writes the answer. The run sidecar's ``price_per_mtok``
is the *embedding* model's price (one short query embedded per request, the same for every
k), so it does not feed these costs; it is reported beside them as
``embedding_price_per_mtok`` for context. ``price_per_mtok`` defaults to
`DEFAULT_PRICE_PER_MTOK` = $1.00 per million input tokens, a round placeholder within the
range of current mid-size models that makes rescaling easy (costs are linear in price);
``price_source`` says ``"default"`` until the user sets their own. Per month needs
``requests_per_month``; without it that column is empty (NaN / null).

**What stopping costs**: ``stop_cost`` is the recall lost at the k to take against the
reference cutoff (`STOP_REFERENCE_K` = 50, or the table's largest k when it is shorter: one
definition for the command, the dashboard and the report), the paired per-query difference ``recall@K - recall@k`` with its
BCa bootstrap interval (same queries resampled for both, `evalcore.stats.intervals`), with the
tokens and money saved per request.

**Intervals** for recall@k and hit@k follow `evalcore.stats.intervals.mean_intervals`: Wilson for
0/1 columns (every hit@k), BCa otherwise, same conventions. For speed they are computed by
`evalcore.stats.shared_draw.shared_draw_intervals` from one resample draw
(`evalcore.stats.bootstrap.resample_deviations`) that also feeds the stability picks and the
stop-cost interval: one draw, not three, with the same seed, so every random number in a report
comes from the same resampled queries; tests check the result equals `mean_intervals` /
`bca_intervals` with that seed. The default is `evaluate`'s 10,000 resamples and seed 0, and the
resampled sums are exact (`evalcore.stats.bootstrap.on_grid`), so recall@k's interval here is the
one `evaluate --k k`, the dashboard's Overview and its Choose k page show, to the last digit.

**Speed.** Everything is whole-array NumPy: token counts per distinct doc once, an (n_queries, K) token matrix
(`evalcore.analyses.prompt_tokens`), and one bootstrap draw shared by every run and statistic. The k to take, the
table's point numbers and the rule come from the point curves alone; the bootstrap (one draw for every run) feeds
only recall@k's intervals, the stability and the stop cost's interval, so ``k_budget(..., lazy=True)`` leaves it
until one of them is read (`evalcore.analyses.budget_report.Later`; `evalcore.analyses.decision.decide` does so).
What the draw sums is only what is read: recall@k for every k, and the tokens of k = 1..50 only when the trade-off
rule is in force (the elbow never reads them). The sums are exact however the columns are split or grouped
(`evalcore.stats.bootstrap`), so leaving columns out changes no number. ``benchmarks/bench_budget.py`` and
``benchmarks/bench_decision.py`` time it (10,000 queries x K = 100 with 10,000 resamples); what is left is the
resample draw itself (10,000 x 10,000 query indices, drawn on a second thread), their counts, and their products
with the curves. Scoring the run first (`evaluate_runs`) is about 0.3 s more, once per report. Counting chunk text
is the slow part the first time (about 1 million tokens a second, see `evalcore.analyses.tokens`), then cached.
"""

from __future__ import annotations

import math
import numbers
import os
from dataclasses import dataclass, replace
from functools import partial
from typing import Mapping, Sequence

import numpy as np
import pandas as pd

from ..errors import UsageError, invalid_parameter
from ..metrics.evaluation import Evaluation, RunResult, evaluate_runs
from ..metrics.measures import check_k
from ..readers.chunks import ChunkMap
from ..readers.documents import Documents, DocumentsLike, read_documents
from ..readers.runs import Run
from ..stats.bootstrap import resample_deviations
from ..stats.intervals import check_level, check_resamples, mean_intervals, resolve_rng
from ..stats.shared_draw import shared_draw_intervals
from ..warning_log import EvalWarning
from .budget_report import BudgetReport, Later, Resampled, RunBudget
from .k_choice import (
    BASIS_ELBOW,
    BASIS_TRADE_OFF,
    FIT_BELOW_QUERIES,
    FIT_MODEL,
    MIN_STABLE_QUERIES,
    RULE_NAME,
    STABILITY_LEVEL,
    SaturatingFit,
    fit_saturating,
    kneedle_k,
    kneedle_ks,
    pick_k,
    pick_stability,
)
from .prompt_tokens import RunTokens, prompt_tokens
from .k_settings import (
    DEFAULT_BUDGET_RESAMPLES,
    DEFAULT_CHUNK_TOKENS,
    DEFAULT_LAMBDA,
    DEFAULT_MAX_K,
    DEFAULT_PRICE_PER_MTOK,
    STOP_REFERENCE_K,
    BudgetSettings,
)
from .tokens import TOKENIZERS

__all__ = [
    "DEFAULT_BUDGET_RESAMPLES", "DEFAULT_CHUNK_TOKENS", "DEFAULT_LAMBDA", "DEFAULT_MAX_K", "DEFAULT_PRICE_PER_MTOK", "FIT_BELOW_QUERIES",
    "FIT_MODEL", "MIN_STABLE_QUERIES", "RULE_NAME", "STABILITY_LEVEL", "STOP_REFERENCE_K", "TABLE_COLUMNS",
    "BudgetReport", "BudgetSettings", "RunBudget", "k_budget", "needs_chunk_size", "stop_reference_k",
]

TABLE_COLUMNS = [
    "k", "recall", "recall_ci_low", "recall_ci_high", "hit", "hit_ci_low", "hit_ci_high", "recall_fit",
    "tokens_mean", "tokens_p90", "cost_per_1k_requests", "cost_per_month", "marginal_recall",
    "marginal_tokens", "marginal_recall_per_1k_tokens", "rule_value",
]
_POINT_COLUMNS = [c for c in TABLE_COLUMNS if c not in ("recall_ci_low", "recall_ci_high")]


# --------------------------------------------------------------------------- the public function

def _sizes_known(chunks: ChunkMap | None, documents: Documents | None) -> bool:
    """Whether a run's chunks can be sized: from its chunk map's text, from the documents' text at the map's
    offsets, or (a run of docs) from the documents file."""
    if chunks is None:
        return not needs_chunk_size(documents)
    return chunks.has_text or (chunks.has_offsets and documents is not None and documents.has_text)


def needs_chunk_size(documents: Documents | None) -> bool:
    """Whether chunks cannot be sized from ``documents`` (none, or neither text nor token counts): the budget then
    counts every chunk as ``chunk_tokens``, `DEFAULT_CHUNK_TOKENS` unless the person gave a size."""
    return documents is None or not (documents.has_text or documents.has_tokens)


def k_budget(
    evaluation_or_runs,
    labels=None,
    docs: DocumentsLike | None = None,
    settings: BudgetSettings | None = None,
    *,
    min_grade: float = 1,
    zero_relevant: str = "exclude",
    rng: np.random.Generator | int | None = 0,
    lazy: bool = False,
    **changes,
) -> BudgetReport:
    """Recall, hit rate and prompt-token cost at k = 1..``max_k`` per run, and the k to take (one rule: the elbow
    until a trade-off is given, then the trade-off).

    ``evaluation_or_runs`` is an `Evaluation` or `RunResult` (then ``labels`` stays None:
    they come with it), or one run / a list of runs (paths, dicts, DataFrames or `Run`s) to
    score against ``labels``. ``docs`` is the documents file (``tokens`` and/or ``text``);
    without one that can size chunks, every chunk counts ``chunk_tokens`` (default
    `DEFAULT_CHUNK_TOKENS`, said in the warnings). ``settings`` (a `BudgetSettings`), changed by any of its fields
    given as keywords (``max_k=20, price_per_mtok=2.5``): ``price_per_mtok`` is the generator LLM's price per
    million *input* tokens (default $1.00, see the module docs); ``lam`` (recall points per
    1,000 tokens) or ``value_per_point`` (worth of one recall point per month, with
    ``requests_per_month``) set the trade-off. ``rng`` seeds every resample. With ``lazy`` the bootstrap's numbers
    (recall@k's intervals in each run's ``table``, ``stability``, ``stop_cost``) are computed when first read, for
    every run at once: the same numbers, for a caller that may show none of them (`RunBudget.points` and the k to
    take never wait for them).
    """
    given = settings or BudgetSettings()
    unknown = sorted(set(changes) - set(BudgetSettings.__dataclass_fields__))
    if unknown:
        raise UsageError(f"k_budget has no setting {unknown[0]!r}; the settings are "
                         + ", ".join(BudgetSettings.__dataclass_fields__) + ".")
    given = replace(given, **changes)
    checked_max_k = check_k(given.max_k, name="max_k")
    price, price_source = _price(given.price_per_mtok)
    rpm = _optional_number(given.requests_per_month, "requests_per_month", minimum=0.0)
    lam_value, lam_source = _lambda(given.lam, given.value_per_point, price, rpm)
    generator, seed = resolve_rng(rng)
    if seed is None:  # a Generator was passed: fix one seed so every resample below shares the draw
        seed = int(generator.integers(0, 2**62))
    documents = None if docs is None else read_documents(docs)
    chunk = None if given.chunk_tokens is None else _positive_int(given.chunk_tokens, "chunk_tokens")
    evaluation = _evaluation(evaluation_or_runs, labels, checked_max_k, min_grade, zero_relevant)
    assumed = chunk is None and not all(_sizes_known(r.chunks, documents) for r in evaluation.results)
    cfg = _Checked(
        max_k=checked_max_k, price=price, price_source=price_source, rpm=rpm,
        overhead=_non_negative_int(given.overhead_tokens, "overhead_tokens"),
        chunk=DEFAULT_CHUNK_TOKENS if assumed else chunk,
        tokenizer=_tokenizer_name(given.tokenizer), lam=lam_value, lam_source=lam_source,
        value_per_point=None if given.value_per_point is None else float(given.value_per_point),
        level=check_level(given.level), n_resamples=check_resamples(given.n_resamples), seed=seed,
    )

    # Token counts: each doc any run returns in its top K, counted once.
    results = evaluation.results
    prepared, token_notes = prompt_tokens(results, documents, max_k=cfg.max_k, overhead=cfg.overhead,
                                          chunk=cfg.chunk, tokenizer=cfg.tokenizer, chunk_assumed=assumed)
    warnings = list(evaluation.warnings) + list(documents.warnings if documents is not None else ()) + token_notes
    if assumed:
        warnings.append(EvalWarning("chunk_size_assumed", f"no text or token counts for the chunks of every run "
                                    f"(a documents file, or a chunk map with text): each chunk without is counted as "
                                    f"{DEFAULT_CHUNK_TOKENS} tokens (give them, or your chunk size, for real costs)", 1))

    # Every point number now, the k to take among them (it reads the point curves, never a resample). What the
    # bootstrap gives (intervals, stability, the stop cost's interval) is one draw for every run, now or, when
    # ``lazy``, on first read (`budget_report.Later`): the same numbers either way.
    points = [_run_points(result, run_tokens, cfg) for result, run_tokens in zip(results, prepared)]
    resampled = Later(partial(_resample_runs, tuple(points), cfg))
    if not lazy:
        resampled.get()
    runs = [_run_budget(p, slot, resampled, evaluation, cfg) for slot, p in enumerate(points)]
    for run_tokens in prepared:
        warnings.extend(run_tokens.warnings)
    settings = {
        "max_k": cfg.max_k, "price_per_mtok": cfg.price, "price_source": cfg.price_source,
        "price_note": _PRICE_NOTE, "requests_per_month": cfg.rpm, "overhead_tokens": cfg.overhead,
        "chunk_tokens": cfg.chunk, "tokenizer": cfg.tokenizer, "lambda": cfg.lam, "lambda_source": cfg.lam_source,
        "value_per_point": cfg.value_per_point, "min_grade": evaluation.min_grade,
        "zero_relevant": evaluation.zero_relevant, "level": cfg.level, "n_resamples": cfg.n_resamples,
        "seed": seed, "documents": None if documents is None else documents.name,
    }
    labels_set = evaluation.labels
    return BudgetReport(runs, labels_set.name, labels_set.fingerprint, labels_set.n_queries, settings,
                        tuple(warnings) + tuple(w for r in results for w in r.warnings), evaluation)


_PRICE_NOTE = ("price_per_mtok is the generator LLM's input-token price (the chunks go into its prompt); a run "
               "sidecar's price_per_mtok is the embedding model's and is shown as embedding_price_per_mtok only")


@dataclass(frozen=True)
class _Checked:
    """One `k_budget` call's settings, validated, with where the price and lambda came from and the seed."""

    max_k: int
    price: float
    price_source: str
    rpm: float | None
    overhead: int
    chunk: int | None
    tokenizer: str
    lam: float
    lam_source: str
    value_per_point: float | None
    level: float
    n_resamples: int
    seed: int


def stop_reference_k(max_k: int, recommended: int) -> int:
    """The k a "stop at k" cost is measured against (`STOP_REFERENCE_K`, within the table, never above the pick)."""
    return max(min(int(max_k), STOP_REFERENCE_K), int(recommended))


@dataclass(frozen=True)
class _Points:
    """One run's point numbers and what its bootstrap needs: its scores, the k to take and how it was taken."""

    result: RunResult
    run_tokens: RunTokens
    recall: np.ndarray  # (n, max_k) per-query recall@k
    recall_mean: np.ndarray
    tokens_mean: np.ndarray
    span: int  # the k's the decision looks at: 1..span
    fit: SaturatingFit | None
    use_fit: bool
    elbow: int | None
    trade_off: bool
    decided: int
    reference: int
    lost: np.ndarray  # per query, recall at the reference k minus recall at the k to take
    table: pd.DataFrame  # every column but the bootstrap intervals
    rule: dict

    @property
    def n(self) -> int:
        return self.result.n_queries


def _run_points(result: RunResult, run_tokens: RunTokens, cfg: _Checked) -> _Points:
    """Table, rule and k to take of one run: point numbers only, no resample."""
    max_k, n, lam = cfg.max_k, result.n_queries, cfg.lam
    recall = result.scores.recall[:, :max_k]
    hit = result.scores.hit[:, :max_k]
    tokens = run_tokens.tokens
    recall_mean, hit_mean, tokens_mean = recall.mean(axis=0), hit.mean(axis=0), tokens.mean(axis=0)
    hit_iv = shared_draw_intervals(hit, None, cfg.level)  # every hit@k is 0/1: Wilson, no resample

    # The decision is made on k = 1..50 (`STOP_REFERENCE_K`) whatever the table's depth, so the command (to 50), the
    # dashboard (to 100) and the report pick the same k and the same elbow. The rule on the point estimate: the fit
    # below FIT_BELOW_QUERIES queries, else the raw curve.
    span = min(max_k, STOP_REFERENCE_K)
    fit = fit_saturating(recall_mean[:span]) if span >= 3 else None
    use_fit = fit is not None and n < FIT_BELOW_QUERIES
    rule_curve = fit.curves[0] if use_fit else recall_mean[:span]
    rule_k = int(pick_k(rule_curve, tokens_mean[:span], lam))
    elbow = kneedle_k(recall_mean[:span])

    # One rule at a time: the elbow until a trade-off is given (`k_choice`).
    trade_off = cfg.lam_source != "default" or elbow is None
    decided = rule_k if trade_off else elbow
    reference = stop_reference_k(max_k, decided)
    rule = {
        "name": RULE_NAME,
        "description": "the k maximising 100 * recall(k) - lambda * tokens(k) / 1000 (smallest k on ties)",
        "lambda": lam, "lambda_unit": "recall points per 1,000 prompt tokens", "lambda_source": cfg.lam_source,
        "value_per_point": cfg.value_per_point, "price_per_mtok": cfg.price, "requests_per_month": cfg.rpm,
        "overhead_tokens": cfg.overhead, "curve": "fitted" if use_fit else "raw",
        "fit": {
            "model": FIT_MODEL, "used": use_fit, "used_below_n": FIT_BELOW_QUERIES,
            **({"a": float(fit.a[0]), "b": float(fit.b[0]), "d": float(fit.d[0]),
                "rmse_points": 100 * float(fit.rmse[0])} if fit is not None else
               {"note": "no fit with fewer than 3 values of k"}),
        },
        "max_k": max_k, "decided_within_k": span, "n": n,
        "kneedle": "plain Kneedle on the raw recall@k curve (elbow; ignores cost)",
        "basis": BASIS_TRADE_OFF if trade_off else BASIS_ELBOW, "rule_k": rule_k,
    }
    table = _table(recall_mean, hit_mean, hit_iv, fit, rule_curve, tokens, tokens_mean, cfg)
    if result.scores.has_evidence:
        table["evidence_recall"] = _with_evidence(result.scores.evidence_recall[:, :max_k]).mean(axis=0)
    lost = recall[:, reference - 1] - recall[:, decided - 1]
    return _Points(result, run_tokens, recall, recall_mean, tokens_mean, span, fit, use_fit, elbow, trade_off,
                   decided, reference, lost, table, rule)


def _run_budget(points: _Points, slot: int, resampled: Later, evaluation: Evaluation, cfg: _Checked) -> RunBudget:
    run, run_tokens = points.result.run, points.run_tokens
    return RunBudget(
        name=run.name, model=run.model, n_queries=points.n, labels_name=evaluation.labels.name,
        fingerprint=evaluation.labels.fingerprint, points=points.table, recommended_k=points.decided,
        basis=points.rule["basis"], kneedle_k=points.elbow, reference_k=points.reference, rule=points.rule,
        tokenizer=run_tokens.name, token_sources={"docs": run_tokens.sources, "fallback_tokens": run_tokens.fallback},
        price_per_mtok=cfg.price, price_source=cfg.price_source, requests_per_month=cfg.rpm,
        overhead_tokens=cfg.overhead, embedding_price_per_mtok=run.price_per_mtok, resampled=resampled, slot=slot,
        warnings=run_tokens.warnings,
    )


def _resample_runs(runs: tuple[_Points, ...], cfg: _Checked) -> tuple[Resampled, ...]:
    """Every run's bootstrap numbers from one resample draw (the same queries for every run, in the evaluated
    order): recall@k for every k of the table; with a trade-off, the tokens of the k's the decision looks at too
    (the elbow never reads them). Each column's resampled sums are exact (`evalcore.stats.bootstrap`), so which
    columns share the draw changes no number."""
    if not runs:
        return ()
    blocks = [np.column_stack([run.recall, run.run_tokens.tokens[:, :run.span if run.trade_off else 0]])
              for run in runs]  # the scores themselves: their resampled means are exact, as evaluate's
    deviations = resample_deviations(np.column_stack(blocks), cfg.n_resamples, np.random.default_rng(cfg.seed))
    ends = np.cumsum([block.shape[1] for block in blocks])
    return tuple(_resampled_run(run, deviations[:, end - block.shape[1]:end], cfg)
                 for run, block, end in zip(runs, blocks, ends))


def _resampled_run(run: _Points, deviations: np.ndarray, cfg: _Checked) -> Resampled:
    """One run's intervals, stability and stop cost; ``deviations`` is its [recall@1..max_k | tokens@1..span]
    block (tokens with a trade-off only)."""
    max_k, span, n, lam = cfg.max_k, run.span, run.n, cfg.lam
    recall_iv = shared_draw_intervals(run.recall, deviations[:, :max_k], cfg.level)

    # Stability: the rule in force on every resample of the queries.
    boot_recall = run.recall_mean[:span] + deviations[:, :span]
    if run.trade_off:
        boot_tokens = run.tokens_mean[:span] + deviations[:, max_k:max_k + span]
        picks = pick_k(fit_saturating(boot_recall).curves if run.use_fit else boot_recall, boot_tokens, lam)
    else:
        picks = kneedle_ks(boot_recall)
        picks = np.where(picks == 0, span, picks)  # a resample that never bends: recall still rising at the end
    stability = pick_stability(picks, run.decided, n, cfg.n_resamples, cfg.seed)

    # What stopping at the k to take costs against the reference cutoff: a paired interval. The
    # resampled mean of recall@K - recall@k is the difference of the two resampled means.
    decided, reference = run.decided, run.reference
    lost_dev = deviations[:, reference - 1] - deviations[:, decided - 1]
    lost_iv = shared_draw_intervals(run.lost[:, None], lost_dev[:, None], cfg.level, wilson=False)
    saved = float(run.tokens_mean[reference - 1] - run.tokens_mean[decided - 1])
    stop_cost = {
        "k": decided, "reference_k": reference, "max_k": max_k,
        "recall_at_k": float(run.recall_mean[decided - 1]),
        "recall_at_reference_k": float(run.recall_mean[reference - 1]),
        "recall_lost": float(run.lost.mean()), "ci_low": float(lost_iv.low[0]), "ci_high": float(lost_iv.high[0]),
        "level": cfg.level, "ci_method": lost_iv.method[0],
        "tokens_saved_mean": saved, "cost_saved_per_1k_requests": saved * cfg.price / 1000.0,
        "cost_saved_per_month": None if cfg.rpm is None else saved * cfg.price / 1e6 * cfg.rpm,
        "n": n,
    }
    table = run.table.copy()
    table.insert(2, "recall_ci_low", recall_iv.low)
    table.insert(3, "recall_ci_high", recall_iv.high)
    if run.result.scores.has_evidence:
        low, high = _evidence_intervals(run.result.scores.evidence_recall[:, :max_k], cfg)
        table["evidence_recall_ci_low"], table["evidence_recall_ci_high"] = low, high
    return Resampled(table, stability, stop_cost)


def _with_evidence(evidence: np.ndarray) -> np.ndarray:
    """The rows of the queries with evidence spans (the others are NaN)."""
    return evidence[~np.isnan(evidence[:, 0])]


def _evidence_intervals(evidence: np.ndarray, cfg: _Checked) -> tuple[list[float], list[float]]:
    """Evidence recall's interval at each k, over the queries with evidence spans (their own draw, the same seed,
    as `Evaluation.summary` draws them)."""
    intervals = mean_intervals(_with_evidence(evidence), level=cfg.level, n_resamples=cfg.n_resamples, rng=cfg.seed)
    return [i.low for i in intervals], [i.high for i in intervals]


def _padded(values: np.ndarray, length: int) -> np.ndarray:
    """``values`` followed by NaN up to ``length`` (a column the decision's span does not reach)."""
    return np.concatenate([values, np.full(length - len(values), np.nan)])


def _table(recall_mean, hit_mean, hit_iv, fit, rule_curve, tokens, tokens_mean, cfg: _Checked) -> pd.DataFrame:
    """The table's point columns: `TABLE_COLUMNS` but recall@k's interval (the bootstrap's, `_resampled_run`)."""
    max_k = cfg.max_k
    marginal_recall = np.diff(recall_mean, prepend=0.0)
    marginal_tokens = np.diff(tokens_mean, prepend=float(cfg.overhead))
    with np.errstate(divide="ignore", invalid="ignore"):
        per_1k = np.where(marginal_tokens > 0, marginal_recall / marginal_tokens * 1000.0, np.nan)
    return pd.DataFrame({
        "k": np.arange(1, max_k + 1),
        "recall": recall_mean,
        "hit": hit_mean,
        "hit_ci_low": hit_iv.low,
        "hit_ci_high": hit_iv.high,
        "recall_fit": _padded(fit.curves[0], max_k) if fit is not None else np.full(max_k, np.nan),
        "tokens_mean": tokens_mean,
        "tokens_p90": np.percentile(tokens, 90, axis=0),
        "cost_per_1k_requests": tokens_mean * cfg.price / 1000.0,
        "cost_per_month": tokens_mean * cfg.price / 1e6 * cfg.rpm if cfg.rpm is not None else np.full(max_k, np.nan),
        "marginal_recall": marginal_recall,
        "marginal_tokens": marginal_tokens,
        "marginal_recall_per_1k_tokens": per_1k,
        "rule_value": _padded(100.0 * rule_curve - cfg.lam * tokens_mean[:len(rule_curve)] / 1000.0, max_k),
    })[_POINT_COLUMNS]


# --------------------------------------------------------------------------- inputs

def _evaluation(evaluation_or_runs, labels, max_k: int, min_grade: float, zero_relevant: str) -> Evaluation:
    given = evaluation_or_runs
    if isinstance(given, RunResult):
        index = given.ranked.index
        kept_zero = index.n_without_relevant > 0 and index.n_queries == index.labels.n_queries
        given = Evaluation(given.labels, given.ks, index.min_grade, (given,),
                           zero_relevant="zero" if kept_zero else "exclude")
    if isinstance(given, Evaluation):
        if labels is not None:
            raise UsageError("The labels come with the Evaluation; call k_budget(evaluation) with labels=None.")
        if all(r.depth >= max_k for r in given.results):
            return given
        return evaluate_runs([r.run for r in given.results], given.labels, max_k, chunks=given.chunk_maps or None,
                             min_grade=given.min_grade,
                             zero_relevant=given.zero_relevant)
    if labels is None:
        raise UsageError("Labels are needed to score the runs: k_budget(runs, labels, docs, ...).")
    if isinstance(given, (str, os.PathLike, bytes, Run, Mapping, pd.DataFrame)):
        runs: Sequence = [given]
    else:
        try:
            runs = list(given)
        except TypeError:
            raise invalid_parameter("evaluation_or_runs", "an Evaluation, a run or a list of runs",
                                    type(given).__name__) from None
    return evaluate_runs(runs, labels, max_k, min_grade=min_grade, zero_relevant=zero_relevant)


def _is_number(value: object) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool) and math.isfinite(float(value))


def _positive_int(value: object, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
        raise invalid_parameter(name, "an integer >= 1", value)
    return int(value)


def _non_negative_int(value: object, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 0:
        raise invalid_parameter(name, "an integer >= 0", value)
    return int(value)


def _optional_number(value: object, name: str, minimum: float) -> float | None:
    if value is None:
        return None
    if not _is_number(value) or float(value) < minimum:
        raise invalid_parameter(name, f"a finite number >= {minimum:g}", value)
    return float(value)


def _tokenizer_name(tokenizer: object) -> str:
    if tokenizer not in TOKENIZERS:
        raise invalid_parameter("tokenizer", "one of " + ", ".join(TOKENIZERS), tokenizer)
    return str(tokenizer)


def _price(price_per_mtok: float | None) -> tuple[float, str]:
    if price_per_mtok is None:
        return DEFAULT_PRICE_PER_MTOK, "default"
    if not _is_number(price_per_mtok) or float(price_per_mtok) < 0:
        raise invalid_parameter("price_per_mtok", "a finite number >= 0 (dollars per million input tokens)",
                                price_per_mtok)
    return float(price_per_mtok), "given"


def _lambda(lam: float | None, value_per_point: float | None, price: float, rpm: float | None) -> tuple[float, str]:
    if lam is not None and value_per_point is not None:
        raise UsageError("Give either lam (recall points per 1,000 tokens) or value_per_point, not both.")
    if lam is not None:
        if not _is_number(lam) or float(lam) < 0:
            raise invalid_parameter("lam", "a finite number >= 0 (recall points per 1,000 prompt tokens)", lam)
        return float(lam), "given"
    if value_per_point is not None:
        if not _is_number(value_per_point) or float(value_per_point) <= 0:
            raise invalid_parameter("value_per_point", "a finite number > 0 (dollars per recall point per month)",
                                    value_per_point)
        if rpm is None:
            raise UsageError("value_per_point needs requests_per_month to turn token prices into a monthly cost.")
        monthly = price * rpm / 1000.0  # dollars a month for 1,000 more prompt tokens on every request
        return monthly / float(value_per_point), (
            f"derived: ${monthly:,.2f} a month for 1,000 more tokens per request / "
            f"${float(value_per_point):,.2f} per recall point per month")
    return DEFAULT_LAMBDA, "default"
