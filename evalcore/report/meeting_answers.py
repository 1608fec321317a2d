"""Answer grades on the meeting page (`evalcore report --grades`): each run's mean grade beside recall in the
leaderboard, one sentence on where better retrieval answers worse, the study in words in the appendix, and the
``answers`` key of ``--format json``.

The numbers are `evalcore.analyses.answers.AnswerStudy`'s and the words `evalcore.report.answers`' (what
`evalcore answers` prints). The page shows one grade, the one the dashboard's Answers page and Overview open on (the
grade the most graded runs have: `evalcore.analyses.answer_queries.main_grade`), and its sentence is on the pair that
page opens on (`answer_queries.leads`); the appendix and the JSON have every grade and pair. Grade names, run names
and query ids are user text: never marked `Safe`, so the renderers escape them.
"""

from __future__ import annotations

from ..analyses.answer_queries import leads, main_grade
from ..analyses.answers import AnswerStudy
from .amounts import format_interval
from .answers import (
    answers_dict,
    best_sentences,
    correlation_sentence,
    diverging_sentence,
    diverging_sentences,
    joint_sentence,
    unmatched_sentence,
)
from .compare import comparison_verdict
from .meeting_render import Safe, Section

ANSWER_LINES = 2
"""Page-one lines the grade's sentence may take (the top failures give them up: `meeting_tables.page_one_room`)."""


def primary_grade(study: AnswerStudy | None) -> str | None:
    """The grade the page shows (`evalcore.analyses.answer_queries.main_grade`); None without grades."""
    if study is None or not study.means:
        return None
    return main_grade(study)


def grade_header(study: AnswerStudy, level: int) -> str:
    """The leaderboard's column of the primary grade (user text: the grade's name)."""
    return f"answer grade: {primary_grade(study)} ({level}% CI; n graded)"


def grade_cell(study: AnswerStudy, run: str) -> Safe:
    """One run's mean of the primary grade with its interval and n, in the leaderboard's digits; "not graded"."""
    metric = primary_grade(study)
    for m in study.means:
        if m.run == run and m.metric == metric and m.interval is not None:
            i = m.interval
            return Safe(f"{format_interval(i.low, i.high, digits=4, join=' to ', mean=i.point)[:-1]}; n = {m.n})")
    return Safe("not graded")


def diverging_line(study: AnswerStudy) -> str | None:
    """One sentence on the primary grade, for the pair and direction the Answers page opens on
    (`evalcore.analyses.answer_queries.leads`), worded as `evalcore answers` words it, without the queries' names:
    "tuned finds more than base for 31 queries (recall@10 strictly higher), yet answers 9 of them worse (faithfulness
    strictly lower)." None with fewer than two graded runs."""
    metric = primary_grade(study)
    found = leads(study, metric) if metric is not None else []
    if not found:
        return None
    lead = found[0]
    d = next(d for d in study.diverging if d.metric == metric and {d.a, d.b} == {lead.better, lead.worse})
    return diverging_sentence(d, lead.better, names=False)


def appendix_section(study: AnswerStudy) -> Section:
    """Every grade in words, as `evalcore answers` says it: the best run, the paired comparisons, retrieval against
    the answer, the diverging queries (named), how recall and the grade move together, what matched nothing."""
    said = [*best_sentences(study), *(comparison_verdict(c) for c in study.pairs),
            *(joint_sentence(j, study.good) for j in study.joint),
            *(s for d in study.diverging for s in diverging_sentences(d)),
            *(correlation_sentence(c) for c in study.correlation),
            *(s for m in study.joined.matches if (s := unmatched_sentence(m)))]
    lead = Safe(f"Per run and grade, over the graded queries; good means grade >= {study.good:g}; page one shows the "
                "grade the most graded runs have. Every number: evalcore answers with the same files and k.")
    return "Answer grades beside retrieval", [("p", [lead]), ("list", [[s] for s in said])]


def answers_json(study: AnswerStudy | None) -> dict | None:
    """The ``answers`` key of ``evalcore report --format json``: the primary grade, ``good``, k, and every number of
    ``evalcore answers --format json`` (`evalcore.report.answers.answers_dict`); None without grades."""
    if study is None:
        return None
    return {"metric": primary_grade(study), "good": study.good, "k": study.k, **answers_dict(study)}
