"""The index-size study, as one action: query and doc vectors in, every variant searched, scored and compared out.

`evalcore vectors` and the dashboard's Index size page both call `index_size_study` with an `IndexSizeSettings`:
the same queries (those the labels let a front end score), the same variants, the same depth, the same report.
Every default of the study is declared here once.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ..metrics.measures import check_k, parse_ks
from ..readers.labels import LabelSet
from ..readers.vectors import Vectors, check_dimensions
from ..vectors.runs import DEFAULT_DEPTH, search_runs
from ..vectors.search import SIMILARITIES
from ..vectors.variants import PRECISIONS, plan_variants
from ..warning_log import EvalWarning
from .index_size import IndexSizeReport, index_size_report, scoped_queries

DEFAULT_TRUNCATIONS = (512, 256, 128, 64)
"""The truncations tried when none are asked for: those below the vectors' own dimensions."""


@dataclass(frozen=True)
class IndexSizeSettings:
    """What a person asks of the study. ``dims``: the dimensions kept (``"full"`` and numbers; None: full and every
    `DEFAULT_TRUNCATIONS` below the vectors' own; a number not below them is left out); ``precisions``: float32,
    int8, binary; ``rescore``: each binary variant also rescored from its top N candidates (0: off)."""

    dims: tuple[str, ...] | None = None
    precisions: tuple[str, ...] = PRECISIONS
    similarity: str = SIMILARITIES[0]
    depth: int = DEFAULT_DEPTH
    rescore: int = 0
    k: str | tuple[int, ...] = (1, 10)
    metric: str | None = None
    min_grade: float = 1
    zero_relevant: str = "exclude"
    level: float = 0.95
    seed: int = 0
    alpha: float = 0.05

    def dims_for(self, full_dims: int) -> list[str]:
        """The dimensions this study keeps of vectors with ``full_dims`` numbers (full always)."""
        asked = self.dims if self.dims is not None else ("full", *map(str, DEFAULT_TRUNCATIONS))
        kept = [d for d in asked if str(d) == "full" or not str(d).isdigit() or int(d) < full_dims]
        return kept or ["full"]


@dataclass(frozen=True)
class IndexSizeStudy:
    """One model's variants scored and compared (`IndexSizeReport`), and what the query vectors left out."""

    report: IndexSizeReport
    warnings: tuple[EvalWarning, ...]


Progress = Callable[[float, str], None]


def index_size_study(labels: LabelSet, scope, queries: Vectors, docs: Vectors,
                     settings: IndexSizeSettings = IndexSizeSettings(), *, model: str, prefix: str = "",
                     progress: Progress | None = None) -> IndexSizeStudy:
    """Search every variant ``settings`` asks for, for each query ``scope`` scores (a
    `evalcore.metrics.split.SplitView`: the tune side when the labels carry a split), and report each against the
    full float32 vectors. Runs are named ``prefix + variant`` and their model ``MODEL-VARIANT``."""
    check_dimensions(queries, docs)
    variants = plan_variants(docs.dims, settings.dims_for(docs.dims), list(settings.precisions) or ["float32"],
                             rescore=settings.rescore, depth=settings.depth)
    chosen, warnings = scoped_queries(queries, labels, scope)
    found = search_runs(chosen, docs, variants, similarity=settings.similarity, depth=settings.depth, model=model,
                        prefix=prefix, progress=progress)
    report = index_size_report(found, scope, settings.k, metric=settings.metric, min_grade=settings.min_grade,
                               zero_relevant=settings.zero_relevant, level=settings.level, seed=settings.seed,
                               alpha=settings.alpha)
    return IndexSizeStudy(report, tuple(warnings))


def planned_names(settings: IndexSizeSettings, full_dims: int, model: str) -> list[tuple[str, str]]:
    """(run name, model string) of every variant the study will search, before anything is searched: a front end
    records a holdout reveal with them first."""
    variants = plan_variants(full_dims, settings.dims_for(full_dims), list(settings.precisions) or ["float32"],
                             rescore=settings.rescore, depth=settings.depth)
    return [(v.name, f"{model}-{v.name}") for v in variants]


def check_ks_within_depth(settings: IndexSizeSettings) -> None:
    """Every k asked for (and the compared metric's) within the depth searched, before any file is read: a recall@50
    of a 10-doc search would silently score the docs never searched as misses."""
    parse_ks(settings.k, settings.depth)
    metric_k = str(settings.metric or "").partition("@")[2]
    if metric_k.isdigit():
        check_k(int(metric_k), settings.depth)

