"""Answer grades joined to the labeled queries: which graded row answers which query, and what matched nothing.

Each grade file's rows (`evalcore.readers.grades.GradeSet`) meet the labels one way, columnar:

1. **by query id**: a row whose id is a labeled query's id is that query;
2. **else by text**: a row whose text, compared as `evalcore.readers.grades.query_keys` compares texts (NFKC,
   case-folded, white space collapsed), is a labeled query's text (the labels' ``query_text``, or a queries file's)
   is that query.

Nothing is dropped silently: rows that match no labeled query, and labeled queries a file has no row for, are
counted and named (`FileMatch`); rows that are holdout queries of a sealed split are counted, not named. These are
errors, each a sentence naming the file and row: a text that is the text of two labeled queries (which one?), two
rows of one file landing on one query, a row whose id names one query and whose text is another's.

Without labels the grade files are joined to each other: a row is its text (compared the same way), or its id when
it has no text. A run with two grade files that share a grade name (a person and an LLM grading the same answers)
keeps both, as ``NAME (file stem)``: `evalcore.analyses.answers` measures how well they agree.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ..errors import UsageError
from ..readers.grades import GradeSet, query_keys
from ..readers.labels import LabelSet
from ..warning_log import EvalWarning

DEFAULT_K = 10
"""The k of recall@k set beside the answers (``evalcore answers --k``)."""
DEFAULT_GOOD = 0.5
"""An answer is good when its grade is at least this (``--good``). Both settings are declared here, a light module,
so the command line's help shows them without loading the statistics (`evalcore.analyses.answers` uses them)."""


@dataclass(frozen=True)
class FileMatch:
    """How one grade file met the labeled queries: the rows that match none (named by id, else text), the scored
    queries it has no row for, and the rows that are sealed holdout queries (a count)."""

    run: str
    label: str
    source: str
    format: str
    n_rows: int
    n_matched: int
    rows_unmatched: tuple[str, ...] = ()
    queries_ungraded: tuple[str, ...] = ()
    sealed: int = 0


@dataclass(frozen=True)
class JoinedFile:
    """One grade file's grades laid over the joined queries (NaN: no grade for that query), and its notes when it was
    read with them (each note column of `GradeSet.notes` as text per query, None where none)."""

    run: str
    label: str
    source: str
    format: str
    values: dict[str, np.ndarray]
    metadata: dict = field(default_factory=dict)
    notes: dict[str, np.ndarray] = field(default_factory=dict)


@dataclass(frozen=True)
class JoinedGrades:
    """Every grade file over one list of queries.

    ``queries`` are the scored labeled query ids (with labels) or the queries the files name (without: their text,
    else id); ``grades[run][metric]`` is that run's grade of each query, NaN where it has none; ``files`` keeps each
    file's own columns (for the agreement of two judges); ``matches`` says what met nothing.
    """

    queries: np.ndarray
    labeled: bool
    runs: tuple[str, ...]
    grades: dict[str, dict[str, np.ndarray]]
    files: tuple[JoinedFile, ...]
    matches: tuple[FileMatch, ...]
    warnings: tuple[EvalWarning, ...] = ()

    @property
    def n_queries(self) -> int:
        return len(self.queries)

    def metrics(self, run: str) -> list[str]:
        """The grade names of ``run`` (with the file stem when two of its files share one)."""
        return list(self.grades[run])


def join_grades(grade_sets: Sequence[GradeSet], labels: LabelSet | None = None, *,
                scored: Sequence[str] | None = None, runs: Sequence[str] | None = None,
                metrics: Sequence[str] | None = None) -> JoinedGrades:
    """Join ``grade_sets`` to ``labels`` (module docs). ``scored``: the labeled query ids the numbers are on (the tune
    side of a split; default every labeled query); ``runs``: the runs loaded, when any (a grade file for another run is
    a usage error); ``metrics``: the grade names kept (default every grade read)."""
    if not grade_sets:
        raise UsageError("At least one grade file is needed: --grades NAME=FILE.")
    _check_runs(grade_sets, runs)
    grade_sets = _keep_metrics(grade_sets, metrics)
    if labels is not None:
        queries, positions, matches = _to_labels(grade_sets, labels, scored)
    else:
        queries, positions, matches = _to_each_other(grade_sets)
    files = tuple(_laid_over(g, rows, len(queries)) for g, rows in zip(grade_sets, positions))
    order = tuple(dict.fromkeys(g.run for g in grade_sets))
    grades = {run: _run_columns([f for f in files if f.run == run]) for run in order}
    return JoinedGrades(np.asarray(queries, dtype=object), labels is not None, order, grades, files, tuple(matches),
                        tuple(w for g in grade_sets for w in g.warnings))


def _check_runs(grade_sets: Sequence[GradeSet], runs: Sequence[str] | None) -> None:
    if not runs:
        return
    for g in grade_sets:
        if g.run not in runs:
            raise UsageError(f"--grades {g.run}={g.source}: there is no run named {g.run!r} to join these answers "
                             f"to; the runs loaded are {', '.join(runs)} (name the grade file after its run: "
                             "--grades RUN=FILE).")


def _keep_metrics(grade_sets: Sequence[GradeSet], metrics: Sequence[str] | None) -> list[GradeSet]:
    if not metrics:
        return list(grade_sets)
    read = list(dict.fromkeys(m for g in grade_sets for m in g.metrics))
    unknown = [m for m in metrics if m not in read]
    if unknown:
        raise UsageError(f"--metric {unknown[0]}: no grade file has a grade named {unknown[0]!r}; the grades read "
                         f"are {', '.join(read)}.")
    return [g.only(list(metrics)) for g in grade_sets]


# ----------------------------------------------------------------------------- rows to labeled queries


def _to_labels(grade_sets: Sequence[GradeSet], labels: LabelSet, scored: Sequence[str] | None):
    ids = pd.Index(np.asarray(labels.queries, dtype=object))
    texts = labels.field("query_text")
    keys = query_keys(texts.to_numpy(dtype=object)) if texts is not None else np.full(len(ids), None, dtype=object)
    key_series = pd.Series(keys, dtype=object)
    given = key_series.notna()
    ambiguous = set(key_series[given & key_series.duplicated(keep=False)])
    unique = given & ~key_series.isin(ambiguous)
    by_text = pd.Index(key_series[unique].to_numpy(dtype=object))
    text_position = np.flatnonzero(unique.to_numpy())
    in_scope = np.ones(len(ids), dtype=bool) if scored is None else ids.isin(list(scored))
    scope_position = np.cumsum(in_scope) - 1
    queries = ids[in_scope].to_numpy(dtype=object)
    positions, matches = [], []
    for g in grade_sets:
        found = _match_rows(g, ids, by_text, text_position, ambiguous, labels)
        sealed = (found >= 0) & ~in_scope[np.maximum(found, 0)]
        inside = (found >= 0) & ~sealed
        rows = np.where(inside, scope_position[np.maximum(found, 0)], -1)
        graded = np.zeros(len(queries), dtype=bool)
        graded[rows[inside]] = True
        matches.append(FileMatch(g.run, g.label, g.source, g.format, g.n_rows, int(inside.sum()),
                                 tuple(map(str, g.names[found < 0])), tuple(map(str, queries[~graded])),
                                 int(sealed.sum())))
        positions.append(rows)
    return queries, positions, matches


def _match_rows(g: GradeSet, ids: pd.Index, by_text: pd.Index, text_position: np.ndarray, ambiguous: set,
                labels: LabelSet) -> np.ndarray:
    """Each row's labeled query (its position in ``ids``), -1 where none: by id, else by text."""
    n = g.n_rows
    by_id = ids.get_indexer(pd.Index(g.ids, dtype=object)) if g.ids is not None else np.full(n, -1)
    text_hit = np.full(n, -1)
    if g.keys is not None:
        hit = by_text.get_indexer(pd.Index(g.keys, dtype=object))
        if len(text_position):
            text_hit = np.where(hit >= 0, text_position[np.maximum(hit, 0)], -1)
        unsure = (by_id < 0) & pd.Series(g.keys, dtype=object).isin(ambiguous).to_numpy()
        if unsure.any():
            row = int(np.flatnonzero(unsure)[0])
            named = [str(q) for q, k in zip(ids, _label_keys(labels)) if k == g.keys[row]]
            raise g.error(row, f"a query text that names one labeled query (it is the text of {' and '.join(named)} "
                               f"in {labels.source or labels.name}; give the grade file a query_id column)",
                          text=str(g.texts[row]))
        crossed = (by_id >= 0) & (text_hit >= 0) & (text_hit != by_id)
        if crossed.any():
            row = int(np.flatnonzero(crossed)[0])
            raise g.error(row, f"a row whose query id and text name the same query (the id is labeled query "
                               f"{ids[by_id[row]]!r}, the text is that of {ids[text_hit[row]]!r})")
    found = np.where(by_id >= 0, by_id, text_hit)
    _check_one_row_each(g, found, lambda position: str(ids[position]))
    return found


def _label_keys(labels: LabelSet) -> np.ndarray:
    texts = labels.field("query_text")
    return query_keys(texts.to_numpy(dtype=object))


def _check_one_row_each(g: GradeSet, found: np.ndarray, name) -> None:
    """Two rows of one file on one query is an error naming both rows (which grade would count?)."""
    hit = pd.Series(found[found >= 0])
    twice = hit.duplicated(keep="first").to_numpy()
    if twice.any():
        rows = np.flatnonzero(found >= 0)
        second = int(rows[np.flatnonzero(twice)[0]])
        first = int(rows[np.flatnonzero((found[rows] == found[second]))[0]])
        raise g.error(second, f"one row per query in a grade file (this row and {g.where} {g.place(first)[0]} are "
                              f"both query {name(found[second])!r})")


# ----------------------------------------------------------------------------- files to each other


def _to_each_other(grade_sets: Sequence[GradeSet]):
    """Without labels: the queries are the rows' texts (compared as `query_keys`), or ids where a row has no text."""
    row_keys = [_own_keys(g) for g in grade_sets]
    every = pd.Series(np.concatenate(row_keys), dtype=object)
    names = np.concatenate([g.names for g in grade_sets])
    first = ~every.duplicated(keep="first").to_numpy()
    index = pd.Index(every[first].to_numpy(dtype=object))
    queries = names[first]
    positions, matches = [], []
    for g, keys in zip(grade_sets, row_keys):
        found = index.get_indexer(pd.Index(keys, dtype=object))
        _check_one_row_each(g, found, lambda position: str(queries[position]))
        positions.append(found)
        matches.append(FileMatch(g.run, g.label, g.source, g.format, g.n_rows, g.n_rows))
    return queries, positions, matches


def _own_keys(g: GradeSet) -> np.ndarray:
    keys = np.full(g.n_rows, None, dtype=object)
    if g.ids is not None:
        given = pd.notna(g.ids)
        keys[given] = "id\0" + g.ids[given].astype(str)
    if g.keys is not None:
        given = pd.notna(g.keys)
        keys[given] = "text\0" + g.keys[given]
    return keys


# ----------------------------------------------------------------------------- columns


def _laid_over(g: GradeSet, rows: np.ndarray, n: int) -> JoinedFile:
    kept = rows >= 0
    values = {}
    for metric in g.metrics:
        column = np.full(n, np.nan)
        column[rows[kept]] = g.grades[metric].to_numpy(dtype=np.float64)[kept]
        values[metric] = column
    notes = {}
    for name in g.notes.columns if g.notes is not None else ():
        column = np.full(n, None, dtype=object)
        column[rows[kept]] = g.notes[name].to_numpy(dtype=object)[kept]
        notes[str(name)] = column
    return JoinedFile(g.run, g.label, g.source, g.format, values, dict(g.metadata), notes)


def _run_columns(files: list[JoinedFile]) -> dict[str, np.ndarray]:
    """A run's grades: each file's, a grade two files share named ``NAME (stem)`` for each (stems made distinct)."""
    labels = _distinct([f.label for f in files])
    counts = pd.Series([m for f in files for m in f.values]).value_counts()
    out = {}
    for f, label in zip(files, labels):
        for metric, column in f.values.items():
            out[metric if counts[metric] == 1 else f"{metric} ({label})"] = column
    return out


def judge_labels(files: Sequence[JoinedFile]) -> list[str]:
    """The names of a run's files as its grades use them (stems, made distinct)."""
    return _distinct([f.label for f in files])


def _distinct(labels: list[str]) -> list[str]:
    seen: dict[str, int] = {}
    out = []
    for label in labels:
        seen[label] = seen.get(label, 0) + 1
        out.append(label if seen[label] == 1 else f"{label}-{seen[label]}")
    return out

