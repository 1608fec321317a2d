"""The index-size study, as one action: query and doc vectors in, every variant searched, scored and compared out.

`evalcore vectors` and the dashboard's Index size page both call `index_size_study` with an `IndexSizeSettings`:
the same queries (those the labels let a front end score), the same variants, the same depth, the same report.
Every default of the study is declared here once.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ..metrics.evaluation import Evaluation
from ..metrics.measures import CUTOFF_MEASURES, check_k, parse_ks
from ..readers.labels import LabelSet
from ..readers.vectors import Vectors, check_dimensions
from ..vectors.ann_runs import DEFAULT_ENGINE, BuildStore
from ..vectors.index_spec import IndexSpec, parse_index_specs
from ..vectors.runs import DEFAULT_DEPTH, search_runs
from ..vectors.search import SIMILARITIES
from ..vectors.variants import PRECISIONS, Variant, plan_variants
from ..warning_log import EvalWarning, agree, plural
from .index_size import IndexSizeReport, index_size_report, scoped_queries

TIES = "tie_across_cutoff"
"""The warning every variant of degenerate vectors gives at every cutoff: said once for the whole study."""
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

    @property
    def all_warnings(self) -> tuple[EvalWarning, ...]:
        """What the study and the scoring of its variants warn about, each kind once (`one_per_kind`): degenerate
        vectors tie in every variant at every cutoff, and one line per variant and cutoff would bury the rest."""
        return one_per_kind(self.warnings + self.report.evaluation.all_warnings, self.report.evaluation)


Progress = Callable[[float, str], None]


def index_size_study(labels: LabelSet, scope, queries: Vectors, docs: Vectors,
                     settings: IndexSizeSettings = IndexSizeSettings(), *, model: str, prefix: str = "",
                     progress: Progress | None = None, builds: BuildStore | None = None) -> IndexSizeStudy:
    """Search every variant ``settings`` asks for, for each query ``scope`` scores (a
    `evalcore.metrics.split.SplitView`: the tune side when the labels carry a split), and report each against the
    full float32 vectors. Runs are named ``prefix + variant`` and their model ``MODEL-VARIANT``; ``builds`` keeps
    the approximate indexes built, for the next study of the same doc vectors."""
    check_dimensions(queries, docs)
    variants = check_indexes(settings, docs.n, docs.dims)
    chosen, warnings = scoped_queries(queries, labels, scope)
    found = search_runs(chosen, docs, variants, similarity=settings.similarity, depth=settings.depth, model=model,
                        prefix=prefix, progress=progress, build_threads=settings.build_threads, seed=settings.seed,
                        engine=settings.engine, builds=builds)
    report = index_size_report(found, scope, settings.k, metric=settings.metric, min_grade=settings.min_grade,
                               zero_relevant=settings.zero_relevant, level=settings.level, seed=settings.seed,
                               alpha=settings.alpha)
    return IndexSizeStudy(report, tuple(warnings) + found[0].warnings)


def check_indexes(settings: IndexSizeSettings, n_docs: int, full_dims: int) -> list[Variant]:
    """Every variant the study will search, each approximate index checked against the docs first (its ranges and
    the memory it will take, `evalcore.vectors.index_spec.IndexSpec.check`): a SPEC the docs cannot take, or one
    over the memory budget, is refused before anything is searched or recorded."""
    variants = settings.variants(full_dims)
    for variant in variants:
        if variant.index is not None:
            variant.index.check(n_docs, full_dims)
    return variants


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


def one_per_kind(warnings: Sequence[EvalWarning], evaluation: Evaluation) -> tuple[EvalWarning, ...]:
    """``warnings`` with each code once, in the order first seen: ties across a cutoff become one warning naming the
    variants and the cutoffs (`_ties`); other codes said about several runs become one naming the runs, its count
    the most any of them affects; a code said once stays as it is."""
    groups: dict[str, list[EvalWarning]] = {}
    for warning in warnings:
        groups.setdefault(warning.code, []).append(warning)
    out = []
    for code, group in groups.items():
        if len(group) == 1:
            out.append(group[0])
        elif code == TIES:
            out.append(_ties(evaluation) or group[0])
        else:
            out.append(_merged(code, group))
    return tuple(out)


def _ties(evaluation: Evaluation) -> EvalWarning | None:
    """One warning for every tie across a cutoff: the variants tied, and at each cutoff the most queries tied."""
    most: dict[int, int] = {}
    runs: list[str] = []
    for result in evaluation.results:
        for k in result.ks:
            tied = int(result.ranked.tie_after[:, k - 1].sum())
            if tied:
                most[k] = max(most.get(k, 0), tied)
                runs += [] if result.name in runs else [result.name]
    if not most:
        return None
    where = _and([f"at ranks {k} and {k + 1} (up to {plural(n, 'query', 'queries')})" for k, n in most.items()])
    return EvalWarning(TIES, f"{plural(len(runs), 'variant')} of {len(evaluation.results)} "
                             f"({_listed(runs)}) {agree(len(runs), 'has', 'have')} equal scores across a cutoff "
                             f"{where}; {', '.join(CUTOFF_MEASURES)} at k = {_and(list(map(str, most)))} depend on "
                             "the tie rule (equal scores ordered by doc id, descending)", max(most.values()))


def _merged(code: str, group: Sequence[EvalWarning]) -> EvalWarning:
    """Warnings of one code as one: the runs named once, each different sentence once."""
    runs = list(dict.fromkeys(w.run for w in group if w.run))
    said = list(dict.fromkeys(w.message.removeprefix(f"run {w.run}: ") if w.run else w.message for w in group))
    head = f"{plural(len(runs), 'variant')} ({_listed(runs)}): " if runs else ""
    return EvalWarning(code, head + "; ".join(said), max(w.count for w in group))


def _listed(names: Sequence[str], most: int = 6) -> str:
    """The first ``most`` names, and how many more."""
    shown = ", ".join(names[:most])
    return shown + (f" and {len(names) - most:,} more" if len(names) > most else "")


def _and(items: Sequence[str]) -> str:
    """``a``, ``a and b``, ``a, b and c``."""
    return ", ".join(items[:-1]) + " and " + items[-1] if len(items) > 1 else "".join(items)
