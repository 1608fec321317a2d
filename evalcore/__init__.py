"""evalcore: measure retrieval and embedding quality from labels and ranked runs.

    >>> import evalcore
    >>> r = evalcore.evaluate(run, labels, k=5)
    >>> r["recall@1"], r["mrr"], r.per_query()
"""

from .errors import EvalcoreError, InputError, UsageError
from .metrics.evaluation import Evaluation, RunResult, evaluate, evaluate_runs
from .metrics.measures import Measure
from .metrics.split import SplitView, scoring_labels
from .readers.chunks import ChunkMap, read_chunks
from .readers.documents import Documents, read_documents
from .readers.labels import LabelSet, read_labels
from .readers.queries import QueryTexts, read_queries, with_query_text
from .readers.runs import Run, read_run
from .version import __version__  # noqa: F401  (evalcore.__version__)
from .warning_log import EvalWarning

__all__ = [
    "BudgetReport", "ChunkMap", "Documents", "EvalWarning", "EvalcoreError", "Evaluation", "InputError", "LabelSet", "Measure", "QueryTexts",
    "Run", "RunResult", "SplitView", "UsageError", "compare_evaluation", "evaluate", "evaluate_runs", "k_budget",
    "read_chunks", "read_documents", "read_labels", "read_queries", "read_run", "scoring_labels", "with_query_text",
]

# Comparisons and k budgets pull in scipy.stats and a tokenizer; they load on first use so
# that `evalcore evaluate` does not pay for them.
_LAZY = {"BudgetReport": "analyses.budget", "k_budget": "analyses.budget", "compare_evaluation": "analyses.compare"}


def __getattr__(name: str):
    if name in _LAZY:
        import importlib  # the one deferred import: see _LAZY

        return getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)
    raise AttributeError(f"module 'evalcore' has no attribute {name!r}")
