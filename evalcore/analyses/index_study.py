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
from ..vectors.ann_runs import DEFAULT_ENGINE, BuildStore
from ..vectors.index_spec import IndexSpec, parse_index_specs
from ..vectors.runs import DEFAULT_DEPTH, search_runs
from ..vectors.search import SIMILARITIES
from ..vectors.variants import PRECISIONS, Variant, plan_variants
from ..warning_log import EvalWarning
from .index_size import IndexSizeReport, index_size_report, scoped_queries

DEFAULT_TRUNCATIONS = (512, 256, 128, 64)
"""The truncations tried when none are asked for: those below the vectors' own dimensions."""


@dataclass(frozen=True)
class IndexSizeSettings:
    """What a person asks of the study. ``dims``: the dimensions kept (``"full"`` and numbers; None: full and every
    `DEFAULT_TRUNCATIONS` below the vectors' own, or only full when ``indexes`` are asked for; a number not below
    them is left out); ``precisions``: float32, int8, binary (None: all three, or only float32 with ``indexes``);
    ``rescore``: each binary variant also rescored from its top N candidates (0: off); ``indexes``: approximate
    index SPECs (``hnsw:m=16:ef=32``, `evalcore.vectors.index_spec`), built on ``build_threads`` threads (None:
    every core; 1 builds the same index every time) and trained from ``seed``."""

    dims: tuple[str, ...] | None = None
    precisions: tuple[str, ...] | None = None
    indexes: tuple[str, ...] = ()
    build_threads: int | None = None
    engine: str = DEFAULT_ENGINE
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
        default = ("full",) if self.indexes else ("full", *map(str, DEFAULT_TRUNCATIONS))
        asked = self.dims if self.dims is not None else default
        kept = [d for d in asked if str(d) == "full" or not str(d).isdigit() or int(d) < full_dims]
        return kept or ["full"]

    def precisions_asked(self) -> list[str]:
        if self.precisions is not None:
            return list(self.precisions) or ["float32"]
        return ["float32"] if self.indexes else list(PRECISIONS)

    def index_specs(self) -> list[IndexSpec]:
        """The approximate indexes asked for, parsed (one clear sentence for a bad SPEC)."""
        return parse_index_specs(self.indexes)

    def variants(self, full_dims: int) -> list[Variant]:
        """Every variant this study searches of vectors with ``full_dims`` numbers, the full float32 first."""
        return plan_variants(full_dims, self.dims_for(full_dims), self.precisions_asked(), rescore=self.rescore,
                             depth=self.depth, indexes=self.index_specs())


@dataclass(frozen=True)
class IndexSizeStudy:
    """One model's variants scored and compared (`IndexSizeReport`), and what the query vectors and the search left
    out (unlabeled query vectors, labeled queries without one, all-zero doc vectors under cosine)."""

    report: IndexSizeReport
    warnings: tuple[EvalWarning, ...]


Progress = Callable[[float, str], None]


def index_size_study(labels: LabelSet, scope, queries: Vectors, docs: Vectors,
                     settings: IndexSizeSettings = IndexSizeSettings(), *, model: str, prefix: str = "",
                     progress: Progress | None = None, builds: BuildStore | None = None) -> IndexSizeStudy:
    """Search every variant ``settings`` asks for, for each query ``scope`` scores (a
    `evalcore.metrics.split.SplitView`: the tune side when the labels carry a split), and report each against the
    full float32 vectors. Runs are named ``prefix + variant`` and their model ``MODEL-VARIANT``; ``builds`` keeps
    the approximate indexes built, for the next study of the same doc vectors."""
    check_dimensions(queries, docs)
    variants = settings.variants(docs.dims)
    for variant in variants:
        if variant.index is not None:  # a SPEC the docs cannot take is refused before anything is searched
            variant.index.check(docs.n, docs.dims)
    chosen, warnings = scoped_queries(queries, labels, scope)
    found = search_runs(chosen, docs, variants, similarity=settings.similarity, depth=settings.depth, model=model,
                        prefix=prefix, progress=progress, build_threads=settings.build_threads, seed=settings.seed,
                        engine=settings.engine, builds=builds)
    report = index_size_report(found, scope, settings.k, metric=settings.metric, min_grade=settings.min_grade,
                               zero_relevant=settings.zero_relevant, level=settings.level, seed=settings.seed,
                               alpha=settings.alpha)
    return IndexSizeStudy(report, tuple(warnings) + found[0].warnings)


def planned_names(settings: IndexSizeSettings, full_dims: int, model: str) -> list[tuple[str, str]]:
    """(run name, model string) of every variant the study will search, before anything is searched: a front end
    records a holdout reveal with them first."""
    return [(v.name, f"{model}-{v.name}") for v in settings.variants(full_dims)]


def check_ks_within_depth(settings: IndexSizeSettings) -> None:
    """Every k asked for (and the compared metric's) within the depth searched, and every index SPEC readable,
    before any file is read: a recall@50 of a 10-doc search would silently score the docs never searched as
    misses."""
    settings.index_specs()
    parse_ks(settings.k, settings.depth)
    metric_k = str(settings.metric or "").partition("@")[2]
    if metric_k.isdigit():
        check_k(int(metric_k), settings.depth)

