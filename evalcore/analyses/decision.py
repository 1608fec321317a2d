"""The meeting's answers, computed once: which run, which k for each run, which chunking and index, and how many
queries each run fails.

A `Decision` is built from one evaluation, the runs in view and the person's k settings (`BudgetSettings`: price,
requests a month, what a recall point is worth). Every surface that answers these questions renders it and nothing
else: the dashboard's headlines, tables and chart marks (one `Decision` per data set, runs and settings, shared by
every page), the meeting report (Markdown, HTML and ``evalcore report --format json``) and the CLI (``evaluate``'s
headline, ``budget``, ``compare --at-tokens``), so a manager never meets two k's or two failure counts for one
question.

* **The best run** (`best`): `evalcore.analyses.headline.best_run` on ``hit@1`` (a relevant document first), the
  metric the Overview's headline and chart both show.
* **The k to take** (`k_to_take`): each run's `evalcore.analyses.k_decision.KDecision`, by one rule (the elbow until a
  trade-off is given, then the trade-off), the ``recommended_k`` of ``evalcore budget`` at the same settings.
* **Which chunking** (`chunking`, runs of chunkings only): every chunking at one prompt budget (the person's, else
  `default_token_budget`), on evidence held when the labels carry evidence spans, paired with the best.
* **Which index** (`index`, when an index-size study was run): `evalcore.analyses.index_choice.index_choice`, the
  smallest index no worse than the full vectors (the fastest, for approximate indexes).
* **Failures at k** (`failures_at`): `evalcore.analyses.headline.failure_counts`, by default in the one meaning of
  failure (`evalcore.metrics.failure.FAILURE_MODE`: found nothing relevant in the top k): the count of the Failures
  page, the failure ledger, History and the report.

Each answer is computed when first read and then kept (a page that shows only failures never waits for the paired
tests), so one `Decision` can be shared; `decide` reads every answer at once, the best run's paired tests on a worker
thread beside the rest.
"""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from typing import Callable, Iterable

from ..metrics.evaluation import Evaluation
from ..metrics.failure import FAILURE_MODE, MISS_NAMES, check_mode
from .budget import k_budget
from .budget_report import BudgetReport
from .headline import BestRun, FailureCounts, best_run, failure_counts
from .index_choice import IndexChoice, index_choice
from .index_size import IndexSizeReport
from .k_decision import KDecision, k_decision
from .k_settings import BudgetSettings
from .landed import Landed, chosen_results, runs_for_mode
from .token_budget import AtTokens, at_tokens

EVIDENCE = "evidence_recall"
"""What chunkings are compared on when every run carries evidence spans: the evidence held, not only documents
found."""


def default_token_budget(budget: BudgetReport) -> float:
    """The prompt budget chunkings are compared at until the person names one: the mean prompt tokens of the first
    run's k to take, to the nearest 100 (at least 100)."""
    tokens = k_decision(budget.runs[0]).tokens
    return float(max(100, round(tokens / 100) * 100))


def _ready(value):
    """``value``, or what it gives when it is a function (a part the caller computes on its own schedule)."""
    return value() if callable(value) else value


class Decision:
    """The answers for one evaluation's runs in view under one set of k settings; failures are counted at ``k`` by
    default. Read-only: each answer is computed on first read and then fixed."""

    def __init__(self, evaluation: Evaluation, settings: BudgetSettings | None = None, *, k: int | None = None,
                 runs: Iterable[str] | None = None, docs=None,
                 budget: BudgetReport | Callable[[], BudgetReport] | None = None,
                 where: Landed | Callable[[], Landed] | None = None,
                 index_studies: tuple[IndexSizeReport, ...] = ()) -> None:
        """``runs``: the runs in view (default every run); ``docs`` sizes chunks for the k budget; ``budget``: every
        run's k budget when the caller has it (or a function giving it), else computed here; ``where``: where each
        run put each relevant doc (`evalcore.analyses.landed`), to reuse; ``index_studies``: one per model whose
        vectors were searched (`evalcore.analyses.index_study`: searching is the study's work)."""
        self.evaluation = evaluation
        self.settings = settings or BudgetSettings()
        self.k = None if k is None else evaluation.check_k(k)
        self.runs = tuple(r.name for r in chosen_results(evaluation, runs))
        self._docs, self._budget, self._where, self._studies = docs, budget, where, tuple(index_studies)
        self._kept: dict[tuple, object] = {}
        self._lock = threading.Lock()

    def _once(self, key: tuple, compute: Callable[[], object]):
        """The answer kept under ``key``, computed on first read. No lock is held while computing (two sessions
        reading the same answer at once may both compute it; the first kept wins), so one slow answer never holds
        up another decision's."""
        if key not in self._kept:
            found = compute()
            with self._lock:
                self._kept.setdefault(key, found)
        return self._kept[key]

    @property
    def best(self) -> BestRun:
        """The best run in view on hit@1 and every other against it (`evalcore.analyses.headline.best_run`)."""
        return self._once(("best",), lambda: best_run(self.evaluation, self.runs))

    @property
    def budget(self) -> BudgetReport | None:
        """Every run's k budget under the settings (None without a run): its k to take, recall and cost at each k."""
        return self._once(("budget",), self._budget_now)

    def _budget_now(self) -> BudgetReport | None:
        if not self.runs:
            return None
        given = _ready(self._budget)
        if given is None:
            given = k_budget(self.evaluation, docs=self._docs, settings=self.settings,
                             max_k=max(self.settings.max_k, self.k or 0), level=self.evaluation.level,
                             rng=self.evaluation.seed, lazy=True)
        if [r.name for r in given] == list(self.runs):
            return given
        return replace(given, runs=[given[name] for name in self.runs])

    def k_to_take(self, run: str) -> KDecision:
        """The k to take for ``run``, by the one rule in force."""
        return k_decision(self.budget[run])

    @property
    def failures(self) -> FailureCounts:
        """Every run's failures at the decision's k, in the one meaning of failure."""
        if self.k is None:
            raise ValueError("This decision was made without a k: ask failures_at(k).")
        return self.failures_at(self.k)

    def failures_at(self, k: int, mode: str = FAILURE_MODE) -> FailureCounts:
        """How many queries each run in view fails at ``k`` in ``mode`` (a fragment counts only on runs with evidence
        spans), and how many of those twice k would rescue."""
        k, mode = self.evaluation.check_k(k), check_mode(mode)
        return self._once(("failures", k, mode), lambda: failure_counts(
            self.evaluation, k, mode=mode, runs=self.failure_runs(mode), where=_ready(self._where)))

    def failure_runs(self, mode: str = FAILURE_MODE) -> tuple[str, ...]:
        """The runs in view ``mode`` applies to (`evalcore.analyses.landed.runs_for_mode`)."""
        return runs_for_mode(self.evaluation, mode, self.runs)

    def failed(self, run: str) -> int:
        """How many queries ``run`` fails at the decision's k (found nothing relevant)."""
        return next(r.failed for r in self.failures.runs if r.run == run)

    def chunking_metric(self) -> str:
        """What chunkings are compared on: evidence held when every run in view carries evidence spans."""
        return EVIDENCE if all(EVIDENCE in r.points.columns for r in self.budget) else "recall"

    def at_tokens(self, tokens: float | None = None, metric: str | None = None, *, alpha: float = 0.05) -> AtTokens:
        """Every run in view at its largest k within ``tokens`` mean prompt tokens (default `default_token_budget`),
        compared per query with the best there on ``metric`` (default `chunking_metric`)."""
        tokens = default_token_budget(self.budget) if tokens is None else tokens
        metric = self.chunking_metric() if metric is None else metric
        # scored to every k of the budget's table (each run's k at the budget)
        return self._once(("at_tokens", tokens, metric, alpha), lambda: at_tokens(
            self.budget, self.budget.evaluation or self.evaluation, tokens, metric, alpha=alpha))

    def chunking_at(self, tokens: float | None = None, metric: str | None = None) -> AtTokens | None:
        """Which chunking, and its k (`at_tokens`); None unless every run in view is scored through a chunk map."""
        if not self.runs or not all(r.chunks is not None for r in chosen_results(self.evaluation, self.runs)):
            return None
        return self.at_tokens(tokens, metric)

    @property
    def chunking(self) -> AtTokens | None:
        """Which chunking at the default prompt budget (`chunking_at`)."""
        return self.chunking_at()

    @property
    def index(self) -> tuple[IndexChoice, ...]:
        """The index to take from each index-size study given."""
        return self._once(("index",), lambda: tuple(index_choice(report) for report in self._studies))

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
        chunking = self.chunking
        return {
            "best_run": self.best.best, "best_run_metric": self.best.metric, "best_run_clear": self.best.clear,
            "failures_at_k": self.k, "failure_means": MISS_NAMES[self.failures.mode],
            "larger_k": self.failures.larger_k,
            "labels": {"name": self.best.labels, "fingerprint": self.best.fingerprint}, "n": self.best.n,
            "k_settings": settings, "runs": runs,
            "chunking": None if chunking is None else {
                "at_tokens": chunking.tokens, "metric": chunking.metric,
                "take": None if chunking.best is None else {"name": chunking.best.name, "k": chunking.best.k},
                "runs": [{"name": r.name, "k": r.k, "mean": r.value, "tokens_mean": r.tokens_mean,
                          "significantly_behind": (None if r.name not in chunking.comparisons
                                                   else bool(chunking.comparisons[r.name].significant))}
                         for r in chunking.runs]},
            "index": [choice.to_dict() for choice in self.index],
        }


def decide(evaluation: Evaluation, k: int, settings: BudgetSettings | None = None, *, docs=None,
           index_studies: tuple[IndexSizeReport, ...] = ()) -> Decision:
    """The meeting's answers for every run of ``evaluation``, read at once: the best run, each run's k to take under
    ``settings`` (the k budget reads chunk sizes from ``docs``), each run's failures at ``k``, the chunking and the
    index to take from each of ``index_studies``.

    The k to take comes from the point curves, so the k budget's bootstrap (intervals, stability, what stopping
    costs) waits until a surface reads it (``k_budget(..., lazy=True)``): the same numbers, drawn when shown. The best
    run's paired comparison resamples on a worker thread meanwhile (NumPy draws and gathers without holding the GIL);
    it has its own generator from the evaluation's seed, so working side by side changes no number."""
    k = evaluation.check_k(k)
    if not evaluation.results:
        best_run(evaluation)  # says why there is no best run
    decision = Decision(evaluation, settings, k=k, docs=docs, index_studies=index_studies)
    with ThreadPoolExecutor(max_workers=1) as worker:
        best = worker.submit(lambda: decision.best)
        decision.budget, decision.failures, decision.chunking, decision.index  # noqa: B018 (read now, kept)
        best.result()
    return decision
