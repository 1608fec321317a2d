"""Which index to ship, by one rule: among the indexes that score no worse than the full vectors, the smallest (or,
in a study of approximate indexes, the fastest).

The Index size study compares every variant (fewer dimensions, int8, binary, an approximate index at each setting)
with the full float32 vectors on one metric, paired per query and Holm-corrected (`IndexSizeReport.comparisons`).
The candidates are the full vectors and every variant whose comparison is not significantly worse. Smaller vectors
are about memory: the smallest candidate is taken, then the faster, then the higher scoring. Approximate indexes
are about speed (their graph or lists make them no smaller than exact search): the candidate answering most queries
a second is taken, then the smaller, then the higher scoring. "No worse" means the data could not tell them apart: with few
queries a real loss can hide in the interval, so the choice carries its comparison and n, and every surface that
says it (``evalcore vectors``, the Index size page, `evalcore.analyses.decision.Decision`) shows them.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..stats.paired import Comparison
from ..vectors.runs import VariantRun
from .index_size import IndexSizeReport


@dataclass(frozen=True)
class IndexChoice:
    """The index to take from one study: ``take`` (a variant, or the full vectors themselves), its comparison with
    the full vectors (None when the full vectors are taken), and the variants left out for scoring worse."""

    take: VariantRun
    reference: VariantRun
    metric: str
    comparison: Comparison | None
    ratio: float
    """How many times smaller than the full vectors' index the taken one is (1.0 for the full vectors)."""
    worse: tuple[str, ...]
    """Variants significantly worse than the full vectors on `metric`, by run name."""
    by_speed: bool = False
    """Taken as the fastest candidate (a study of approximate indexes), not the smallest."""

    @property
    def is_reference(self) -> bool:
        return self.take.name == self.reference.name

    def to_dict(self) -> dict:
        found = self.comparison
        return {"name": self.take.name, "model": self.take.run.model, "variant": self.take.variant.name,
                "words": self.take.variant.words,
                "index_bytes": self.take.index_bytes, "times_smaller": self.ratio, "metric": self.metric,
                "vs_full": None if found is None else {"diff": found.diff, "ci_low": found.ci_low,
                                                       "ci_high": found.ci_high, "p_adjusted": found.p_adjusted,
                                                       "n": found.n},
                "significantly_worse": list(self.worse),
                "rule": "fastest no worse than full vectors" if self.by_speed else
                "smallest no worse than full vectors"}


def index_choice(report: IndexSizeReport) -> IndexChoice:
    """The index to take from ``report`` by the rule in this module's docstring."""
    worse = tuple(item.name for item in report.variants[1:] if _worse(report.comparisons.get(item.name)))
    candidates = [item for item in report.variants if item.name not in worse]
    by_speed = any(item.variant.index is not None for item in report.variants)

    def order(item: VariantRun) -> tuple:
        speed, size, mean = -_speed(item), item.index_bytes, -_mean(report, item)
        return (speed, size, mean) if by_speed else (size, speed, mean)

    take = min(candidates, key=order)
    return IndexChoice(take, report.reference, report.metric, report.comparisons.get(take.name),
                       report.ratio(take), worse, by_speed)


def _worse(found: Comparison | None) -> bool:
    return found is not None and bool(found.significant) and found.diff < 0


def _speed(item: VariantRun) -> float:
    return item.speed.queries_per_second if item.speed is not None else 0.0


def _mean(report: IndexSizeReport, item: VariantRun) -> float:
    return report.metrics(item)[report.metric]["mean"] if report.metric in report.metric_names() else 0.0
