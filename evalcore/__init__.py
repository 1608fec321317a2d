"""evalcore: measure retrieval and embedding quality from labels and ranked runs.

    >>> import evalcore
    >>> r = evalcore.evaluate(run, labels, k=5)
    >>> r["recall@1"], r["mrr"], r.per_query()
"""

from .budget import BudgetReport, k_budget
from .compare import compare_evaluation
from .documents import Documents, read_documents
from .errors import EvalcoreError, InputError, UsageError
from .evaluation import Evaluation, RunResult, evaluate, evaluate_runs
from .labels import LabelSet, read_labels
from .measures import Measure
from .runs import Run, read_run
from .warning_log import EvalWarning

__all__ = [
    "BudgetReport", "Documents", "EvalWarning", "EvalcoreError", "Evaluation", "InputError", "LabelSet", "Measure",
    "Run", "RunResult", "UsageError", "compare_evaluation", "evaluate", "evaluate_runs", "k_budget", "read_documents",
    "read_labels", "read_run",
]
__version__ = "0.1.0"
