"""The k budget's answer: `RunBudget` per run and `BudgetReport` for several, as numbers.

`evalcore.analyses.budget.k_budget` computes them; here they read as plain dicts (NaN -> None) and as a long
frame and CSV with every row's context (run, model, labels, fingerprint, n, tokenizer, price). The recommendation
in words and the text tables the CLI prints are `evalcore.report.budget`'s.

A run's numbers come in two parts. The point numbers (``points``: means, tokens, costs, the fit, the k to take and
its rule) are there at once. What the bootstrap gives (recall@k's interval in ``table``, the ``stability`` of the k
to take, the interval of ``stop_cost``) is one `Resampled` for every run of the report, computed by `Later` when
first read (at once unless ``k_budget(..., lazy=True)``): a caller that shows none of it, such as the meeting's
decision (`evalcore.analyses.decision.decide`), does not pay for 10,000 resamples. Read or not, the numbers are
the same.
"""

from __future__ import annotations

import math
import threading
from dataclasses import dataclass, field
from typing import Callable, Generic, TypeVar

import numpy as np
import pandas as pd

from ..errors import UsageError
from ..metrics.measures import check_k
from ..safe_text import to_csv
from ..warning_log import EvalWarning


T = TypeVar("T")


class Later(Generic[T]):
    """A value computed on first read, once, then kept: threads that ask together wait for the one computation.
    Pickled as the value itself (computed then if it was not yet)."""

    def __init__(self, compute: Callable[[], T]) -> None:
        self._compute: Callable[[], T] | None = compute
        self._value: T | None = None
        self._lock = threading.Lock()

    @property
    def done(self) -> bool:
        """Whether the value has been computed."""
        return self._compute is None

    def get(self) -> T:
        """The value, computed now if this is the first read."""
        if self._compute is not None:
            with self._lock:
                if self._compute is not None:
                    self._value = self._compute()
                    self._compute = None
        return self._value  # type: ignore[return-value]

    def __getstate__(self) -> dict:
        return {"value": self.get()}

    def __setstate__(self, state: dict) -> None:
        self._compute, self._value, self._lock = None, state["value"], threading.Lock()


@dataclass(frozen=True)
class Resampled:
    """One run's numbers from the bootstrap: its whole table (``points`` with recall@k's interval, and evidence
    recall's when there is one), the stability of its k to take, and what stopping there costs with its interval."""

    table: pd.DataFrame
    stability: dict
    stop_cost: dict


@dataclass(frozen=True)
class RunBudget:
    """One run's k budget: the per-k table, the k to take (by one rule: ``basis``), and the context of every
    number. ``table``, ``stability`` and ``stop_cost`` are read from the report's shared bootstrap (`Later`);
    ``points`` and everything else never wait for it."""

    name: str
    model: str
    n_queries: int
    labels_name: str
    fingerprint: str
    points: pd.DataFrame  # the table's point numbers: every column but the bootstrap intervals
    recommended_k: int  # the k to take: the elbow, or with a trade-off the rule's pick (``basis``)
    basis: str  # `k_choice.BASIS_ELBOW` or `k_choice.BASIS_TRADE_OFF`
    kneedle_k: int | None
    reference_k: int  # the k a "stop at k" cost is measured against (``stop_cost["reference_k"]``)
    rule: dict
    tokenizer: str
    token_sources: dict
    price_per_mtok: float
    price_source: str
    requests_per_month: float | None
    overhead_tokens: int
    embedding_price_per_mtok: float | None
    resampled: Later[tuple[Resampled, ...]] = field(repr=False, compare=False)  # every run's, in report order
    slot: int = field(repr=False, compare=False)  # this run's place in ``resampled``
    warnings: tuple[EvalWarning, ...] = ()

    @property
    def table(self) -> pd.DataFrame:
        """One row per k: ``points`` with the intervals of recall@k (and of evidence recall, when present)."""
        return self.resampled.get()[self.slot].table

    @property
    def stability(self) -> dict:
        """How stable the k to take is over bootstrap resamples of the queries (`k_choice.pick_stability`)."""
        return self.resampled.get()[self.slot].stability

    @property
    def stop_cost(self) -> dict:
        """What stopping at the k to take costs against ``reference_k``, with a paired interval."""
        return self.resampled.get()[self.slot].stop_cost

    @property
    def max_k(self) -> int:
        return int(self.points["k"].iloc[-1])

    def row(self, k: int) -> pd.Series:
        """The table row at ``k``."""
        return self.table.iloc[check_k(k, self.max_k) - 1]

    def point_row(self, k: int) -> pd.Series:
        """The row of ``points`` at ``k``: every number of `row` but the bootstrap intervals, without waiting
        for them."""
        return self.points.iloc[check_k(k, self.max_k) - 1]

    def to_dict(self) -> dict:
        """Plain types only (NaN -> None): the CLI's JSON run entry without its summary sentence
        (`evalcore.report.budget.budget_dict` adds it)."""
        rows = [{key: _plain_value(value) for key, value in record.items()}
                for record in self.table.to_dict(orient="records")]
        return {
            "name": self.name, "model": self.model, "n_queries": self.n_queries,
            "labels": {"name": self.labels_name, "fingerprint": self.fingerprint},
            "recommended_k": self.recommended_k, "basis": self.basis, "kneedle_k": self.kneedle_k,
            "rule": _plain(self.rule), "stability": _plain(self.stability), "stop_cost": _plain(self.stop_cost),
            "tokenizer": self.tokenizer, "token_sources": _plain(self.token_sources),
            "price_per_mtok": self.price_per_mtok, "price_source": self.price_source,
            "requests_per_month": self.requests_per_month, "overhead_tokens": self.overhead_tokens,
            "embedding_price_per_mtok": self.embedding_price_per_mtok,
            "table": rows,
        }

    def __repr__(self) -> str:
        return (f"RunBudget(run={self.name!r}, n={self.n_queries}, recommended_k={self.recommended_k}, "
                f"max_k={self.max_k}, tokenizer={self.tokenizer!r})")


@dataclass(frozen=True)
class BudgetReport:
    """k budgets of several runs on one label set, as a dict, a long frame and CSV (in words:
    `evalcore.report.budget`)."""

    runs: list[RunBudget]
    labels_name: str
    fingerprint: str
    n_labeled_queries: int
    settings: dict
    warnings: tuple[EvalWarning, ...] = field(default=())
    evaluation: object = field(default=None, repr=False, compare=False)  # the `Evaluation` scored to max_k behind it

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

    def __repr__(self) -> str:
        shown = ", ".join(f"{r.name}: k={r.recommended_k}" for r in self.runs)
        return f"BudgetReport(labels={self.labels_name}#{self.fingerprint}, {shown})"


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
