"""Answer grades query by query, as a page shows them: which pair of runs to open on (`Lead`: the run that retrieves
better, and the queries where it answers worse all the same), each query's recall@k beside its grade, the diverging
queries with both runs' numbers, and one query's answers with their grades and the judge's reasons.

`evalcore.analyses.answers` computes the study (every count and interval ``evalcore answers`` prints); this module only
reads it query by query, so a page's sentence, chart and list are that study's own numbers: a `Lead` is one direction
of one of its `Diverging` records, its queries exactly the ones the command names.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..metrics.evaluation import Evaluation
from .answer_join import JoinedFile, judge_labels
from .answers import AnswerStudy, Diverging
from .landed import query_fields


@dataclass(frozen=True)
class Lead:
    """One direction of a pair of runs on one grade: ``better`` retrieves strictly more than ``worse`` (recall@k) on
    ``finds_more`` of the ``n`` queries both graded and scored, and of those answers ``answers_worse`` strictly worse
    (the grade)."""

    better: str
    worse: str
    metric: str
    k: int
    n: int
    finds_more: int
    answers_worse: tuple[str, ...]


def _directions(d: Diverging) -> tuple[Lead, Lead]:
    """Both directions of ``d``: b over a (b retrieves more, answers worse), then a over b."""
    return (Lead(d.b, d.a, d.metric, d.k, d.n, d.b_finds_more, d.retrieval_better_answer_worse),
            Lead(d.a, d.b, d.metric, d.k, d.n, d.a_finds_more, d.retrieval_worse_answer_better))


def leads(study: AnswerStudy, metric: str, runs: tuple[str, ...] | None = None) -> list[Lead]:
    """Every direction of every pair of graded runs (among ``runs``, when given) on grade ``metric``, the one to open on
    first: within a pair the run that retrieves better more often leads; pairs with more queries answered worse by
    the better retriever come first (then more queries found more, then the study's order)."""
    pairs = []
    for d in study.diverging:
        if d.metric != metric or (runs is not None and not {d.a, d.b} <= set(runs)):
            continue
        first, second = sorted(_directions(d), key=lambda lead: (-lead.finds_more, -len(lead.answers_worse)))
        pairs.append((first, second))
    pairs.sort(key=lambda pair: (-len(pair[0].answers_worse), -pair[0].finds_more))
    return [lead for pair in pairs for lead in pair]


def main_grade(study: AnswerStudy) -> str | None:
    """The grade a page opens on: the one the most graded runs have (ties: the first read)."""
    counts = Counter(m.metric for m in study.means if m.n)
    order = list(dict.fromkeys(m.metric for m in study.means))
    return max(order, key=lambda m: (counts[m], -order.index(m))) if order else None


def grades_of(study: AnswerStudy) -> list[str]:
    """Every grade name of the study, in the order read."""
    return list(dict.fromkeys(m.metric for m in study.means))


def recall_at(study: AnswerStudy, evaluation: Evaluation) -> dict[str, np.ndarray]:
    """recall@k (the study's k) of each graded run over the joined queries, NaN where the evaluation did not score a
    query: the values the study compared."""
    index = pd.Index(study.joined.queries, dtype=object)
    out = {}
    for run in study.joined.runs:
        result = evaluation[run]
        scores = pd.Series(result.score(f"recall@{study.k}"), index=pd.Index(result.queries, dtype=object))
        out[run] = scores.reindex(index).to_numpy(dtype=np.float64)
    return out


def per_query(study: AnswerStudy, evaluation: Evaluation, metric: str,
              runs: tuple[str, ...] | None = None) -> pd.DataFrame:
    """One row per run and query graded on ``metric`` and scored: ``run``, ``query``, ``query_text``, ``recall``
    (recall@k), ``grade`` and ``good`` (the grade at least the study's ``good``)."""
    recall = recall_at(study, evaluation)
    texts = query_fields(evaluation, study.joined.queries)["query_text"]
    frames = []
    for run in study.joined.runs:
        if (runs is not None and run not in runs) or metric not in study.joined.grades[run]:
            continue
        grade = study.joined.grades[run][metric]
        used = ~np.isnan(grade) & ~np.isnan(recall[run])
        frames.append(pd.DataFrame({"run": run, "query": study.joined.queries[used], "query_text": texts[used],
                                    "recall": recall[run][used], "grade": grade[used],
                                    "good": grade[used] >= study.good}))
    columns = ["run", "query", "query_text", "recall", "grade", "good"]
    return pd.concat(frames, ignore_index=True)[columns] if frames else pd.DataFrame(columns=columns)


def lead_queries(study: AnswerStudy, evaluation: Evaluation, lead: Lead) -> pd.DataFrame:
    """The queries of ``lead`` (better retrieves more, answers worse), the largest fall in the grade first: ``query``,
    ``query_text``, each run's recall@k and grade, and ``drop`` (the worse run's grade minus the better's)."""
    recall = recall_at(study, evaluation)
    index = pd.Index(study.joined.queries, dtype=object)
    rows = index.get_indexer(pd.Index(list(lead.answers_worse), dtype=object))
    grades = study.joined.grades
    frame = pd.DataFrame({
        "query": study.joined.queries[rows], "query_text": query_fields(evaluation, study.joined.queries[rows])[
            "query_text"],
        "recall_better": recall[lead.better][rows], "recall_worse": recall[lead.worse][rows],
        "grade_better": grades[lead.better][lead.metric][rows], "grade_worse": grades[lead.worse][lead.metric][rows]})
    frame["drop"] = (frame["grade_worse"] - frame["grade_better"]).round(12)  # 0.9 - 0.2 ties 1.0 - 0.3
    order = frame.assign(key=frame["query"].astype(str)).sort_values(["drop", "key"], ascending=[False, True],
                                                                      kind="stable").index
    return frame.loc[order].reset_index(drop=True)


@dataclass(frozen=True)
class GradedAnswer:
    """One run's answer to one query: its grade on ``metric`` (None: not graded), the answer and the judge's reason
    as the grade file has them (None where it has none), and the file."""

    run: str
    metric: str
    grade: float | None
    answer: str | None
    reason: str | None
    source: str | None


def _file_of(study: AnswerStudy, run: str, metric: str) -> tuple[JoinedFile, str] | None:
    """The grade file of ``run`` holding ``metric`` (as the study names it: ``NAME (stem)`` when two files share it),
    with the grade's name in that file."""
    files = [f for f in study.joined.files if f.run == run]
    for f, label in zip(files, judge_labels(files)):
        for name in f.values:
            shown = name if name in study.joined.grades[run] else f"{name} ({label})"
            if shown == metric:
                return f, name
    return None


def _note(f: JoinedFile, column: str, row: int) -> str | None:
    values = f.notes.get(column)
    if values is None or row < 0:
        return None
    value = values[row]
    return None if value is None or (isinstance(value, float) and np.isnan(value)) else str(value)


def answers_to(study: AnswerStudy, query: str, metric: str, runs: tuple[str, ...] | None = None) -> list[GradedAnswer]:
    """Each graded run's answer to ``query`` (among ``runs``, when given), with its grade on ``metric``, the answer
    text and the judge's reason for that grade (else the reason given for the whole row)."""
    hit = np.flatnonzero(study.joined.queries == query)
    row = int(hit[0]) if len(hit) else -1
    out = []
    for run in study.joined.runs:
        if runs is not None and run not in runs:
            continue
        found = _file_of(study, run, metric)
        if found is None:
            out.append(GradedAnswer(run, metric, None, None, None, None))
            continue
        f, name = found
        grade = float(f.values[name][row]) if row >= 0 and not np.isnan(f.values[name][row]) else None
        reason = _note(f, f"reason: {name}", row) or _note(f, "reason", row)
        out.append(GradedAnswer(run, metric, grade, _note(f, "answer", row), reason, f.source))
    return out
