"""Results several pages share, as plain functions of a data set: the intervals and paired tests at every k
(Overview), the k budget (Choose k, prepared by the Overview), each run's checks at every k (Overview), where every
relevant doc landed and what was missed at k (Failures, Present), the answer grades beside retrieval (Answers,
Overview, Present).

No Streamlit here: `dashboard.caching` keeps these results across reruns and sessions, and the pages reach them
through it. The two long ones (seconds with many queries) run as background jobs (`dashboard.jobs`), keyed on the data
set's content and their settings, so a page can show what it has while they finish. Every number comes from the core.
"""

from __future__ import annotations

from concurrent.futures import Future
from dataclasses import replace
from typing import Any

import pandas as pd

from evalcore.analyses import failures as core_failures
from evalcore.analyses.answer_join import join_grades
from evalcore.analyses.answers import AnswerStudy, answer_study
from evalcore.analyses.budget import k_budget, needs_chunk_size
from evalcore.analyses.compare import ComparisonReport
from evalcore.analyses.coverage import number_caveats
from evalcore.analyses.curves import interval_curves
from evalcore.analyses.k_settings import BudgetSettings
from evalcore.analyses.landed import runs_for_mode
from evalcore.metrics.dataset import Dataset

from dashboard import jobs, loading
from dashboard.loading import DEPTH, Loaded

MORE_METRICS = ("recall", "hit", "precision", "ndcg", "judged")
"""Every cutoff metric: what the Overview shows with "every metric" on. Without it, recall@k and MRR."""

CURVES_KEPT = 4
"""All-k curves kept (each holds the resampled sums paired tests need: about 16 MB per run with 10,000 queries)."""
BUDGETS_KEPT = 16


# ----------------------------------------------------------------------------- intervals at every k


def _curves_job(dataset: Dataset, more: bool) -> Future | None:
    loaded = loading.evaluation(dataset)
    if not loaded.ok:
        return None
    return jobs.start("curves", (dataset.key, bool(more)), CURVES_KEPT,
                      lambda: loading.load(interval_curves, loaded.value,
                                           metrics=MORE_METRICS if more else ("recall",), max_k=DEPTH))


def curves(dataset: Dataset, more: bool = False, *, wait: bool = True) -> Loaded | None:
    """`evalcore.analyses.curves.interval_curves` once per data set: intervals and comparisons at every k 1..`DEPTH`
    (``more``: hit, precision, nDCG and judged too). They equal ``evalcore evaluate --k 1,k`` and ``evalcore compare``
    at that k exactly. Started in the background; with ``wait=False`` None until done (the page then shows the one k
    it needs, `summary`)."""
    future = _curves_job(dataset, more)
    if future is None:
        return loading.evaluation(dataset)
    if not wait and not future.done():
        return None
    return future.result()


def curves_if_ready(dataset: Dataset, more: bool = False) -> Loaded | None:
    """`curves` if they are computed already, else None; never starts them (the Overview starts them after its
    first chart, so that chart does not share the CPU with them)."""
    future = jobs.started("curves", (dataset.key, bool(more)))
    return future.result() if future is not None and future.done() else None


def summary_at(deep: Any, k: int, more: bool = False) -> pd.DataFrame:
    """`Evaluation.summary` at ``--k 1,k`` from the deep evaluation (recall and MRR rows only unless ``more``)."""
    frame = deep.at((1, k)).summary
    if not more:
        frame = frame[frame["metric"].map(lambda m: m.split("@")[0] in ("recall", "mrr"))].reset_index(drop=True)
    return frame


def summary(dataset: Dataset, k: int, more: bool = False) -> pd.DataFrame:
    """`Evaluation.summary` at ``--k 1,k``: looked up in `curves` once they are ready, until then computed for this
    k alone (the same numbers: one bootstrap draw per seed, whatever the columns)."""
    loaded = curves_if_ready(dataset, more)
    if loaded is not None:
        return loaded.value.summary((1, k)) if loaded.ok else pd.DataFrame()
    deep = loading.evaluation(dataset)
    return summary_at(deep.value, k, more) if deep.ok else pd.DataFrame()


def comparison(dataset: Dataset, k: int, baseline: str) -> ComparisonReport | None:
    """Every run against ``baseline`` on recall@1, recall@k and MRR (paired, Holm-corrected), from `curves` (this
    waits for them: they hold the resampled sums the tests need)."""
    deep = loading.evaluation(dataset)
    if not deep.ok or len(deep.value.results) < 2:
        return None
    loaded = curves(dataset)
    return loaded.value.comparison(k, baseline) if loaded.ok else None


def caveats_every_k(dataset: Dataset) -> dict[int, dict[str, dict]]:
    """`evalcore.analyses.coverage.number_caveats` for every k 1..`DEPTH` at once (about the cost of one k):
    k -> run -> its row (blind share, judged depth, bounds)."""
    loaded = loading.evaluation(dataset)
    if not loaded.ok:
        return {}
    every = number_caveats(loaded.value, range(1, min(r.depth for r in loaded.value.results) + 1))
    out: dict[int, dict[str, dict]] = {}
    for row in every.to_dict("records"):
        out.setdefault(int(row["k"]), {})[row["run"]] = row
    return out


# ----------------------------------------------------------------------------- the k budget


def budget_settings(dataset: Dataset, settings: BudgetSettings) -> BudgetSettings:
    """``settings`` for the dashboard's table: every k the pages can choose (1..`DEPTH`)."""
    return replace(settings, max_k=DEPTH)


def budget_job(dataset: Dataset, settings: BudgetSettings) -> Future:
    """The job computing `evalcore.analyses.budget.k_budget` for every run, k = 1..`DEPTH` (k-independent: the k
    control only reads it): started once per data set and settings, shared by every visitor."""
    settings = budget_settings(dataset, settings)
    key = (dataset.key, repr(settings))
    found = jobs.started("budget", key)
    if found is not None:
        return found
    loaded = loading.evaluation(dataset)
    if not loaded.ok:
        return jobs.finished(loaded)
    docs = loading.documents(dataset.documents) if dataset.documents is not None else None
    doc_value = docs.value if docs is not None and docs.ok else None
    return jobs.start("budget", key, BUDGETS_KEPT, lambda: loading.load(k_budget, loaded.value, docs=doc_value,
                                                                       settings=settings))


def prepare_budget(dataset: Dataset) -> None:
    """Start the first visit's Choose k numbers in the background (the Overview calls this after its first chart),
    so that page opens on numbers already computed."""
    budget_job(dataset, BudgetSettings())


def can_size_chunks(dataset: Dataset) -> bool:
    """Whether the documents file can size chunks (text or token counts); else every chunk counts as the core's
    default size, or the size the person gives."""
    if dataset.documents is None:
        return False
    docs = loading.documents(dataset.documents)
    return docs.ok and not needs_chunk_size(docs.value)


# ----------------------------------------------------------------------------- what was missed


def landed(dataset: Dataset) -> core_failures.Landed | None:
    """Where each run put each relevant doc (k-independent)."""
    loaded = loading.evaluation(dataset)
    return core_failures.landed(loaded.value) if loaded.ok else None


def missed(dataset: Dataset, k: int, mode: str, where: core_failures.Landed | None) -> core_failures.FailureList | None:
    """The (run, query) pairs missed at k (`evalcore.analyses.failures.FailureList`), from ``where`` (`landed`)."""
    loaded = loading.evaluation(dataset)
    if not loaded.ok:
        return None
    return core_failures.failure_list(loaded.value, k, mode=mode, runs=list(runs_for_mode(loaded.value, mode)),
                                      where=where)


def drill_down(dataset: Dataset, query: str, k: int, runs: tuple[str, ...],
               where: core_failures.Landed | None) -> Loaded:
    """One query up close: every run's ranking with the relevant docs marked and the text of each doc."""
    loaded = loading.evaluation(dataset)
    if not loaded.ok:
        return loaded
    docs = loading.documents(dataset.documents) if dataset.documents else None
    doc_value = docs.value if docs is not None and docs.ok else None
    return loading.load(core_failures.drill_down, loaded.value, query, k, documents=doc_value, runs=list(runs),
                        where=where)


# ----------------------------------------------------------------------------- answer grades


def answers(dataset: Dataset, k: int) -> Loaded | None:
    """The data set's answer grades beside its runs' retrieval at ``k`` (`evalcore.analyses.answers.answer_study`: the
    grade files joined to the labeled queries the pages score, recall@k from the evaluation every page uses, the same
    settings as ``evalcore answers --k k``, so the numbers are the command's), or why not; None without grades."""
    if not dataset.grades:
        return None
    deep = loading.evaluation(dataset)
    if not deep.ok:
        return deep
    read = [loading.grades(spec) for spec in dataset.grades]
    labels, scope = loading.labels_of(dataset), loading.scope(dataset)
    bad = next((found for found in [*read, labels, scope] if not found.ok), None)
    if bad is not None:
        return bad

    def study() -> AnswerStudy:
        joined = join_grades([found.value for found in read], labels.value, scored=list(scope.value.labels.queries),
                             runs=dataset.run_names)
        return answer_study(joined, deep.value, k=k)

    return loading.attempt(study)
