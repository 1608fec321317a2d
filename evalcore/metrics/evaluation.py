"""evaluate(): runs + labels -> per-query scores, means and the warnings that qualify them."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Mapping, Protocol, Sequence

import numpy as np
import pandas as pd

from ..errors import InputError, UsageError, invalid_parameter
from ..readers.chunks import ChunkMap
from ..readers.labels import LabelSet, LabelsLike, check_min_grade, read_labels
from ..readers.runs import Run, RunLike, read_run
from ..stats.intervals import mean_intervals
from ..warning_log import EvalWarning, agree, plural
from .evidence import evidence_scores
from .kernels import PerQueryScores, score_queries
from .measures import CUTOFF_MEASURES, EVIDENCE_MEASURES, Measure, check_k, default_measures, parse_ks
from .ranked import LabelIndex, RankedGrades, rank_grades


class ScoredSplit(Protocol):
    """What an evaluation keeps of the tune/holdout view its labels came from (`evalcore.metrics.split.SplitView`,
    which sits above this module): the whole label set's queries and the split's own warnings."""

    full_queries: np.ndarray
    warnings: tuple[EvalWarning, ...]

DEFAULT_KS = (1, 5, 10)


@dataclass(frozen=True)
class RunResult:
    """One run scored against one label set: per-query scores for k = 1..depth, and means.

    ``result["recall@5"]`` is a mean; `per_query()` is the table behind it. Means are over
    the evaluated queries (labeled queries with at least one relevant doc, unless the
    ``zero_relevant="zero"`` policy kept the others at 0).
    """

    run: Run
    labels: LabelSet
    ks: tuple[int, ...]
    ranked: RankedGrades
    scores: PerQueryScores
    warnings: tuple[EvalWarning, ...] = ()

    @property
    def name(self) -> str:
        return self.run.name

    @property
    def model(self) -> str:
        return self.run.model

    @property
    def queries(self) -> np.ndarray:
        return self.ranked.queries

    @property
    def n_queries(self) -> int:
        return len(self.queries)

    @property
    def depth(self) -> int:
        return self.ranked.depth

    @property
    def chunks(self) -> ChunkMap | None:
        """The chunk map this run was scored with (its ranks are chunks), or None (its ranks are docs)."""
        return self.ranked.chunks

    @property
    def measures(self) -> list[Measure]:
        """The measures a report lists: each cutoff metric at each requested k, then MRR (then the evidence
        measures, when the labels carry spans and the chunks have a place in their documents)."""
        return default_measures(self.ks, evidence=self.scores.has_evidence)

    def score(self, measure: str | Measure) -> np.ndarray:
        """Per-query scores of one measure (``rr`` per query for ``mrr``), in `queries` order; an evidence measure
        is NaN for the queries without evidence spans."""
        m = Measure.parse(measure)
        if m.k is not None and m.k > self.depth:
            raise UsageError(f"{m} was not computed: evaluate with k up to at least {m.k} "
                             f"(this result goes to k = {self.depth}).")
        if m.name in EVIDENCE_MEASURES and not self.scores.has_evidence:
            raise UsageError(f"{m} needs evidence spans in the labels (start and end columns) and a chunk map that "
                             f"places each chunk in its document (start and end, or text found in the document).")
        return self.scores.column(m.name, m.k)

    def __getitem__(self, measure: str | Measure) -> float:
        return float(np.nanmean(self.score(measure))) if Measure.parse(measure).name in EVIDENCE_MEASURES \
            else float(np.mean(self.score(measure)))

    def means(self, measures: Sequence[str | Measure] | None = None) -> dict[str, float]:
        chosen = [Measure.parse(m) for m in measures] if measures else self.measures
        return {str(m): self[m] for m in chosen}

    def per_query(self, measures: Sequence[str | Measure] | None = None) -> pd.DataFrame:
        """One row per evaluated query: ``query`` then a column per measure (``rr`` for MRR)."""
        chosen = [Measure.parse(m) for m in measures] if measures else self.measures
        data = {"query": self.queries}
        for m in chosen:
            data[m.per_query_name] = self.score(m)
        return pd.DataFrame(data)

    def __repr__(self) -> str:
        shown = ", ".join(f"{k}={v:.4f}" for k, v in list(self.means().items())[:4])
        return f"RunResult(run={self.name!r}, n={self.n_queries}, {shown}, ...)"


@dataclass(frozen=True)
class Evaluation:
    """Several runs scored on the same label set, with all warnings, ready to render."""

    labels: LabelSet
    ks: tuple[int, ...]
    min_grade: float
    results: tuple[RunResult, ...]
    warnings: tuple[EvalWarning, ...] = field(default=())
    zero_relevant: str = "exclude"
    level: float = 0.95
    seed: int = 0
    n_resamples: int = 10_000
    split: "ScoredSplit | None" = None  # which split of the labels these numbers are on (`evalcore.metrics.split`)

    def __getitem__(self, name: str) -> RunResult:
        for result in self.results:
            if result.name == name:
                return result
        raise UsageError(f"No run named {name!r}; runs are: {', '.join(r.name for r in self.results)}.")

    def __iter__(self):
        return iter(self.results)

    def __len__(self) -> int:
        return len(self.results)

    @property
    def run_names(self) -> list[str]:
        return [r.name for r in self.results]

    @property
    def depth(self) -> int:
        """The deepest k every run was scored to: any k up to it can be listed without scoring again."""
        return min(r.depth for r in self.results)

    def check_k(self, k: object) -> int:
        """``k`` if it is a cutoff this evaluation can show (1 to `depth`), else the one usage error for it."""
        return check_k(k, self.depth)

    def settings(self) -> dict:
        """How the numbers were made: cutoffs, relevance threshold, interval level, method and seed."""
        return {"k": list(self.ks), "min_grade": self.min_grade, "zero_relevant": self.zero_relevant,
                "level": self.level, "seed": self.seed, "n_resamples": self.n_resamples,
                "ci_note": "Wilson where every per-query score is 0 or 1, else BCa bootstrap "
                           f"with {self.n_resamples:,} resamples"}

    @cached_property
    def summary(self) -> pd.DataFrame:
        """One row per run and listed measure: mean, interval and the context it travels with.

        All runs and measures share one bootstrap draw (the same resampled queries), so
        intervals are reproducible from ``seed`` and comparable across runs.
        """
        shared, columns = [], []
        for i, result in enumerate(self.results):
            for measure in result.measures:
                if measure.name not in EVIDENCE_MEASURES:
                    shared.append((i, str(measure)))
                    columns.append(result.score(measure))
        found = dict(zip(shared, mean_intervals(np.column_stack(columns), level=self.level,
                                                n_resamples=self.n_resamples, rng=self.seed)))
        records = []
        for i, result in enumerate(self.results):
            for measure in result.measures:
                n = result.n_queries
                interval = found.get((i, str(measure)))
                if interval is None:  # an evidence measure: over the queries with evidence spans, the same seed
                    values = result.score(measure)
                    kept = values[~np.isnan(values)]
                    n = len(kept)
                    interval = mean_intervals(kept[:, None], level=self.level, n_resamples=self.n_resamples,
                                              rng=self.seed)[0]
                records.append({
                    "run": result.name, "model": result.model, "metric": str(measure), "k": measure.k,
                    "mean": float(interval.point), "ci_low": float(interval.low), "ci_high": float(interval.high),
                    "n": n, "labels": self.labels.name, "fingerprint": self.labels.fingerprint,
                    "ci_method": interval.method, "level": self.level,
                    "reliable": bool(interval.reliable), "note": interval.note or "",
                })
        frame = pd.DataFrame.from_records(records)
        frame["k"] = frame["k"].astype("Int64")
        return frame

    def at(self, k: int | str | Sequence[int]) -> "Evaluation":
        """The same scores listed at the cutoffs ``k``, as ``evaluate_runs(..., k=k)`` would list them.

        Summary rows and per-run warnings (ties across a cutoff, short rankings) are those of
        ``k``; nothing is re-read or re-scored, so a deep evaluation (the dashboard scores to
        depth 100 once) can be shown or saved at any k up to its depth.
        """
        ks = parse_ks(k)
        self.check_k(ks[-1])
        known = self.split.full_queries if self.split is not None else None
        results = tuple(replace(r, ks=ks, warnings=tuple(r.run.warnings) + tuple(_run_warnings(r.ranked, ks, known)))
                        for r in self.results)
        return replace(self, ks=ks, results=results)

    @property
    def chunk_maps(self) -> dict[str, ChunkMap]:
        """Each chunk run's map, by run name (empty when every run ranks docs): what scoring again needs."""
        return {r.name: r.chunks for r in self.results if r.chunks is not None}

    @cached_property
    def all_warnings(self) -> tuple[EvalWarning, ...]:
        """Label warnings, evaluation warnings, then each run's, in that order."""
        per_run = tuple(w for r in self.results for w in r.warnings)
        return self.warnings + per_run


def evaluate(
    run: RunLike,
    labels: LabelsLike,
    k: int | str | Sequence[int] = DEFAULT_KS,
    *,
    min_grade: float = 1,
    zero_relevant: str = "exclude",
    chunks: "ChunkMap | None" = None,
) -> RunResult:
    """Score one run against labels; returns a `RunResult` (``r["mrr"]``, ``r.per_query()``).

    ``run`` and ``labels`` may be file paths, dicts shaped like the seed example of docs/metrics.md,
    DataFrames or already-read objects. Metrics are computed for every k from 1 to max(k). With ``chunks`` (a
    `evalcore.readers.chunks.ChunkMap`) the run ranks chunks and the labels name documents: k counts chunks.
    """
    evaluation = evaluate_runs([run], labels, k, min_grade=min_grade, zero_relevant=zero_relevant, chunks=chunks)
    only = evaluation.results[0]
    return RunResult(only.run, only.labels, only.ks, only.ranked, only.scores,
                     evaluation.warnings + only.warnings)


def evaluate_runs(
    runs: Sequence[RunLike],
    labels: LabelsLike,
    k: int | str | Sequence[int] = DEFAULT_KS,
    *,
    min_grade: float = 1,
    zero_relevant: str = "exclude",
    level: float = 0.95,
    seed: int = 0,
    n_resamples: int = 10_000,
    split: "ScoredSplit | None" = None,
    chunks: "ChunkMap | Mapping[str, ChunkMap] | None" = None,
) -> Evaluation:
    """Score several runs on one label set. Run names must be distinct.

    ``chunks``: one chunk map for every run, or a mapping of run name to its own map (runs from different
    chunkings each name theirs; a run left out ranks docs, as without a map).

    ``level``, ``seed`` and ``n_resamples`` set the confidence intervals of `Evaluation.summary`.
    ``split`` is how front ends score: the `evalcore.metrics.split.SplitView` whose labels these are
    (`SplitView.evaluate`); the evaluation carries it, so every renderer names the split.
    """
    if not 0 < level < 1:
        raise invalid_parameter("level", "a number between 0 and 1 (exclusive)", level)
    if isinstance(n_resamples, bool) or not isinstance(n_resamples, int) or n_resamples < 100:
        raise invalid_parameter("n_resamples", "an integer >= 100", n_resamples)
    ks = parse_ks(k)
    threshold = check_min_grade(min_grade)
    label_set = read_labels(labels)
    loaded = [read_run(r) for r in runs]
    if not loaded:
        raise UsageError("At least one run is needed.")
    names = [r.name for r in loaded]
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise UsageError(f"Run names must be distinct; {', '.join(repeated)} appears more than once. "
                         "Give each run its own name (on the command line: --run NAME=FILE).")
    index = LabelIndex.build(label_set, threshold, zero_relevant, depth=max(ks))
    if index.n_queries == 0:
        raise InputError(f"at least one labeled query with a doc graded {threshold:g} or higher",
                         source=label_set.source or label_set.name)
    warnings = list(label_set.warnings)
    if index.n_without_relevant:
        kept = zero_relevant == "zero"
        warnings.append(EvalWarning(
            "no_relevant_doc",
            f"{plural(index.n_without_relevant, 'labeled query', 'labeled queries')} "
            f"{agree(index.n_without_relevant, 'has', 'have')} no doc graded "
            f"{threshold:g} or higher; " + ("kept in every mean with a score of 0 (zero_relevant='zero')"
                                           if kept else "left out of every mean"),
            index.n_without_relevant,
        ))
    if split is None:  # a front end's split names what it scored (all queries only after a recorded reveal)
        warnings.extend(_mixed_split_warning(label_set, index.queries))
    else:
        warnings.extend(split.warnings)
    depth = max(ks)
    known = split.full_queries if split is not None else None
    maps = _chunk_maps(chunks, names)
    results = tuple(_score_run(run, label_set, index, ks, depth, known, maps.get(run.name)) for run in loaded)
    return Evaluation(label_set, ks, threshold, results, tuple(warnings), zero_relevant, level, seed, n_resamples,
                      split)


def _mixed_split_warning(labels: LabelSet, queries: np.ndarray) -> list[EvalWarning]:
    """A warning when the evaluated queries span both sides of the labels' tune/holdout split.

    Such numbers are neither exploratory nor a sealed holdout result: tuning on them also tunes
    on the holdout. Counted in holdout queries (what the whole-set number has already shown).
    """
    values = labels.field("split")
    if values is None:
        return []
    sides = values.reindex(queries)
    n_tune, n_holdout = int((sides == "tune").sum()), int((sides == "holdout").sum())
    if not (n_tune and n_holdout):
        return []
    return [EvalWarning(
        "holdout_mixed_in",
        f"these numbers mix {n_tune:,} tune and {n_holdout:,} holdout queries (the labels' split field); score "
        "through evalcore.metrics.split.scoring_labels (as the CLI and the dashboard do) to tune on the tune split and "
        "report the holdout after a recorded reveal",
        n_holdout,
    )]


def _chunk_maps(chunks, names: list[str]) -> dict[str, ChunkMap]:
    """Each run's chunk map: the one map for every run, or the runs a mapping names (an unknown name is an error)."""
    if chunks is None:
        return {}
    if isinstance(chunks, ChunkMap):
        return {name: chunks for name in names}
    if not isinstance(chunks, Mapping):
        raise invalid_parameter("chunks", "a chunk map, or a mapping of run name to chunk map", type(chunks).__name__)
    unknown = sorted(set(chunks) - set(names))
    if unknown:
        raise UsageError(f"A chunk map is given for run {unknown[0]!r}, which is not among the runs: "
                         f"{', '.join(names)}.")
    for name, found in chunks.items():
        if not isinstance(found, ChunkMap):
            raise invalid_parameter(f"chunks[{name!r}]", "a chunk map (evalcore.readers.chunks.ChunkMap)",
                                    type(found).__name__)
    return dict(chunks)


def _score_run(run: Run, labels: LabelSet, index: LabelIndex, ks: tuple[int, ...], depth: int,
               known: np.ndarray | None = None, chunks: ChunkMap | None = None) -> RunResult:
    ranked = rank_grades(run, index, depth, chunks)
    scores = score_queries(ranked)
    spans = labels.spans
    if chunks is not None and spans is not None and chunks.has_offsets:
        evidence = evidence_scores(ranked, spans, chunks.start, chunks.end)
        if evidence.has_spans.any():  # spans only on queries not scored here (the other split side): no evidence
            scores = replace(scores, evidence_recall=evidence.recall, evidence_precision=evidence.precision)
    return RunResult(run, labels, ks, ranked, scores, tuple(run.warnings) + tuple(_run_warnings(ranked, ks, known)))


def _run_warnings(ranked: RankedGrades, ks: tuple[int, ...], known: np.ndarray | None = None) -> list[EvalWarning]:
    """Per-run warnings. ``known``: every labeled query of the whole label set when only one side of a split is
    scored (run queries on the other side are labeled, not "without labels")."""
    run = ranked.run
    out = []
    missing = int((~ranked.in_run).sum())
    if missing:
        out.append(EvalWarning(
            "query_missing_from_run",
            f"run {run.name}: {plural(missing, 'labeled query', 'labeled queries')} "
            f"{agree(missing, 'is', 'are')} absent from the run; "
            "each scores 0 on every metric and stays in the mean",
            missing,
            run=run.name,
        ))
    labeled = ranked.index.labels.queries if known is None else known
    unlabeled = int((pd.Index(labeled).get_indexer(run.query_ids) < 0).sum())
    if unlabeled:
        out.append(EvalWarning(
            "query_not_in_labels",
            f"run {run.name}: {plural(unlabeled, 'query', 'queries')} in the run "
            f"{agree(unlabeled, 'has no labels and is', 'have no labels and are')} ignored",
            unlabeled,
            run=run.name,
        ))
    depth = max(ks)
    short = int((ranked.in_run & (ranked.n_returned < depth)).sum())
    if short:
        out.append(EvalWarning(
            "short_ranking",
            f"run {run.name}: {plural(short, 'query', 'queries')} returned fewer than {depth} docs; "
            "metrics at deeper cutoffs use what was returned (precision still divides by k)",
            short,
            run=run.name,
        ))
    for k in ks:
        tied = int(ranked.tie_after[:, k - 1].sum())
        if tied:
            names = ", ".join(f"{m}@{k}" for m in CUTOFF_MEASURES)
            out.append(EvalWarning(
                "tie_across_cutoff",
                f"run {run.name}: {plural(tied, 'query', 'queries')} {agree(tied, 'has', 'have')} equal scores at ranks {k} and {k + 1}; "
                f"{names} depend on the tie rule (equal scores ordered by doc id, descending)",
                tied,
                run=run.name,
            ))
    return out
