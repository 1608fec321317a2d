"""The meeting's answers, computed once: which run, which k for each run, and how many queries each fails.

A `Decision` is built from one evaluation and the person's k settings (`BudgetSettings`: price, requests a month,
what a recall point is worth). Every surface that answers these questions renders this value and nothing else: the
meeting report (Markdown, HTML and ``evalcore report --format json``), ``evalcore budget`` and the dashboard's pages
read the same `BestRun`, `KDecision` and `FailureCounts` it holds, so a manager never meets two k's or two failure
counts for one question.

* **The best run**: `evalcore.analyses.headline.best_run` on ``hit@1`` (a relevant document first), the metric the
  Overview's headline and chart both show.
* **The k to take**: each run's `evalcore.analyses.k_decision.KDecision`, by one rule (the elbow until a trade-off is
  given, then the trade-off), the ``recommended_k`` of ``evalcore budget`` at the same settings.
* **Which chunking** (runs of chunkings only): every chunking at one prompt budget, on evidence held when the labels
  carry evidence spans, paired with the best (`chunking_choice`), the sentence ``evalcore compare --at-tokens`` and
  the Choose k page open on.
* **Which index** (when an index-size study was run): `evalcore.analyses.index_choice.index_choice`, the smallest
  index no worse than the full vectors (the fastest, for approximate indexes), the sentence ``evalcore vectors`` and
  the Index size page open on.
* **Failures at k**: `evalcore.analyses.headline.failure_counts` in the one meaning of failure
  (`evalcore.metrics.failure.FAILURE_MODE`: found nothing relevant in the top k), the count of the Failures page,
  the failure ledger, History and the report.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from ..metrics.evaluation import Evaluation
from ..metrics.failure import FAILURE_MODE, MISS_NAMES
from .budget import k_budget
from .budget_report import BudgetReport
from .headline import BestRun, FailureCounts, best_run, failure_counts
from .index_choice import IndexChoice, index_choice
from .index_size import IndexSizeReport
from .k_decision import KDecision, k_decision
from .k_settings import BudgetSettings
from .token_budget import AtTokens, at_tokens


def default_token_budget(budget: BudgetReport) -> float:
    """The prompt budget chunkings are compared at until the person names one: the mean prompt tokens of the first
    run's k to take, to the nearest 100 (at least 100)."""
    tokens = k_decision(budget.runs[0]).tokens
    return float(max(100, round(tokens / 100) * 100))


def chunking_choice(budget: BudgetReport, evaluation: Evaluation, tokens: float | None = None,
                    metric: str | None = None) -> AtTokens | None:
    """Which chunking, and its k: every run at one prompt budget (``tokens``, default `default_token_budget`),
    compared per query with the best there on ``metric`` (default: evidence held when every run has evidence spans,
    else documents found). None unless every run is scored through a chunk map (runs of chunkings)."""
    if not evaluation.results or not all(r.chunks is not None for r in evaluation.results):
        return None
    if metric is None:
        metric = "evidence_recall" if all("evidence_recall" in r.points.columns for r in budget) else "recall"
    scored = budget.evaluation or evaluation  # scored to every k of the budget's table (each run's k at the budget)
    return at_tokens(budget, scored, default_token_budget(budget) if tokens is None else tokens, metric)


@dataclass(frozen=True)
class Decision:
    """The answers for one evaluation at one k (failures are counted at ``k``) under one set of k settings."""

    best: BestRun
    budget: BudgetReport | None  # None when the evaluation has no run
    failures: FailureCounts
    k: int
    chunking: AtTokens | None = None  # with runs of chunkings: each at the default prompt budget (`chunking_choice`)
    index: tuple[IndexChoice, ...] = ()  # one per index-size study given to `decide` (a model's vectors each)

    def k_to_take(self, run: str) -> KDecision:
        """The k to take for ``run``, by the one rule in force."""
        return k_decision(self.budget[run])

    def failed(self, run: str) -> int:
        """How many queries ``run`` fails at `k` (found nothing relevant)."""
        return next(r.failed for r in self.failures.runs if r.run == run)

    def to_dict(self) -> dict:
        """The decisions as plain values: ``evalcore report --format json``."""
        runs = []
        for counted in self.failures.runs:
            decided = self.k_to_take(counted.run) if self.budget is not None else None
            runs.append({
                "name": counted.run, "model": counted.model,
                "k": None if decided is None else decided.k, "k_basis": None if decided is None else decided.basis,
                "recall_at_k_to_take": None if decided is None else decided.recall,
                "tokens_at_k_to_take": None if decided is None else decided.tokens,
                "failures": counted.failed, "n": counted.n,
                "rescued_at_larger_k": None if self.failures.larger_k is None else counted.rescued,
                "hit@1": self.best.means[counted.run].point,
            })
        settings = {} if self.budget is None else {
            key: self.budget.settings.get(key) for key in ("price_per_mtok", "price_source", "requests_per_month",
                                                           "value_per_point", "lambda", "lambda_source", "tokenizer")
            if key not in ("lambda", "lambda_source") or self.budget.settings["lambda_source"] != "default"}
        return {
            "best_run": self.best.best, "best_run_metric": self.best.metric, "best_run_clear": self.best.clear,
            "failures_at_k": self.k, "failure_means": MISS_NAMES[self.failures.mode],
            "larger_k": self.failures.larger_k,
            "labels": {"name": self.best.labels, "fingerprint": self.best.fingerprint}, "n": self.best.n,
            "k_settings": settings, "runs": runs,
            "chunking": None if self.chunking is None else {
                "at_tokens": self.chunking.tokens, "metric": self.chunking.metric,
                "take": None if self.chunking.best is None else {"name": self.chunking.best.name,
                                                                 "k": self.chunking.best.k},
                "runs": [{"name": r.name, "k": r.k, "mean": r.value, "tokens_mean": r.tokens_mean,
                          "significantly_behind": (None if r.name not in self.chunking.comparisons
                                                   else bool(self.chunking.comparisons[r.name].significant))}
                         for r in self.chunking.runs]},
            "index": [choice.to_dict() for choice in self.index],
        }


def decide(evaluation: Evaluation, k: int, settings: BudgetSettings | None = None, *, docs=None,
           index_studies: tuple[IndexSizeReport, ...] = ()) -> Decision:
    """The meeting's answers for ``evaluation``: the best run, each run's k to take under ``settings`` (the k budget
    reads chunk sizes from ``docs``), each run's failures at ``k``, and the index to take from each of
    ``index_studies`` (`evalcore.analyses.index_study`: searching vectors is the study's work, not the decision's).

    The k to take comes from the point curves, so the k budget's bootstrap (intervals, stability, what stopping
    costs) waits until a surface reads it (``k_budget(..., lazy=True)``): the same numbers, drawn when shown (with
    runs of chunkings at once, as the chunking comparison reads recall's intervals). The best run's paired
    comparison resamples on a worker thread meanwhile (NumPy draws and gathers without holding the GIL); it has
    its own generator from the evaluation's seed, so working side by side changes no number."""
    k = evaluation.check_k(k)
    given = settings or BudgetSettings()
    if not evaluation.results:
        best_run(evaluation)  # says why there is no best run
    with ThreadPoolExecutor(max_workers=1) as worker:
        best = worker.submit(best_run, evaluation)
        budget = k_budget(evaluation, docs=docs, settings=given, max_k=max(given.max_k, k), level=evaluation.level,
                          rng=evaluation.seed, lazy=True)
        failures = failure_counts(evaluation, k, mode=FAILURE_MODE)
        chunking = chunking_choice(budget, evaluation)
        index = tuple(index_choice(report) for report in index_studies)
        return Decision(best.result(), budget, failures, k, chunking, index)
