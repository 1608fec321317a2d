"""The presenter view's model: the Failures page's list, in its order, and one failure told in plain words
(`evalcore.analyses.failure_story`) for a shared screen; or (``walk=answers``) the Answers page's list, the queries
where the run that retrieves better answers worse, each told the same way with both answers, their grades and the
judge's reasons. Plain functions: the lists are the ones those pages keep (`dashboard.caching`), and the view keeps
the story there."""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

from evalcore.analyses.answer_queries import GradedAnswer, Lead
from evalcore.analyses.failure_story import FailureStory, excerpt, failure_story
from evalcore.metrics.dataset import Dataset

from dashboard import caching, loading
from dashboard.loading import Loaded
from dashboard.page_models import answers, failures

INSTEAD = 2
"""What came instead: the first entries shown of each run's list above the relevant doc (the rest are counted)."""
RELEVANT_CHARS = 190
"""A relevant doc's title and text together: two lines across a 1280 px screen."""
INSTEAD_CHARS = 100
"""A doc that came instead (title, and for a chunk its text): under three lines of a run's column."""
NAME_CHARS = 60
"""The longest title a doc keeps: under two lines of a run's column."""
QUERY_CHARS = 320
"""The most of what the customer typed shown in large type (three lines at the smallest size); the whole text is
one click away, under "The numbers"."""
ANSWER_CHARS = 230
"""An answer shown in a run's column: about three lines of it (the whole text is on the Answers page)."""
REASON_CHARS = 150
"""The judge's reason in a run's column: about two lines."""
QUERY_SIZES = ((56, "large"), (110, "medium"), (190, "small"))
"""A query's type size by its length in characters: one line large, two lines medium, about three lines small,
else "smaller" (up to `QUERY_CHARS`): a long claim shrinks rather than push the runs off a 1280 x 720 screen."""


class ShownQuery(NamedTuple):
    """What the customer typed as the presenter view shows it: the ``text`` (cut to `QUERY_CHARS`), its type
    ``size`` (`QUERY_SIZES`) and whether it was ``cut``."""

    text: str
    size: str
    cut: bool


def shown_query(text: str) -> ShownQuery:
    """``text`` at the type size that keeps it within about three lines of a 1280 px screen, cut if longer."""
    flat = " ".join(text.split())
    shown = excerpt(flat, QUERY_CHARS) or flat
    size = next((name for limit, name in QUERY_SIZES if len(shown) <= limit), "smaller")
    return ShownQuery(shown, size, shown != flat)


def sequence(dataset: Dataset, k: int, mode: str, runs: tuple[str, ...], sources: tuple[str, ...], text: str,
             order: str) -> list[str]:
    """The queries the Failures page lists with these selections, in its order (what the arrow keys walk): the list
    that page keeps, so a link from it opens on a list already computed."""
    known = set(failures.source_values(dataset))
    missed = caching.kept(failures.missed_at_k, entries=128)(dataset, k, mode, runs,
                                                            tuple(s for s in sources if s in known), text, order)
    return missed.sequence if missed is not None else []


def is_evaluated(dataset: Dataset, query: str) -> bool:
    return query in set(loading.evaluated_queries(dataset))


def story(dataset: Dataset, query: str, k: int, runs: tuple[str, ...], mode: str) -> Loaded:
    """One failure for the presenter view: the drill-down, told in plain words."""
    loaded = caching.drill_down(dataset, query, k, runs)
    if not loaded.ok:
        return loaded
    return loading.attempt(failure_story, loaded.value, mode=mode, instead=INSTEAD, chars=RELEVANT_CHARS,
                           instead_chars=INSTEAD_CHARS, name_chars=NAME_CHARS)


drill_down = failures.drill_down
scores_shown = failures.scores_shown


# ----------------------------------------------------------------------------- walk=answers


def answer_sequence(dataset: Dataset, k: int, runs: tuple[str, ...], metric: str | None,
                    pair: str | None) -> tuple[Lead | None, list[str]]:
    """The pair of runs the Answers page shows with these selections, and its list of queries where the better
    retriever answers worse, in the page's order (largest fall in the grade first): what the arrow keys walk."""
    return answers.walk(dataset, k, runs, metric, pair)


@dataclass(frozen=True)
class AnswerStory:
    """One query where ``better`` retrieves more than ``worse`` and answers worse, for a shared screen: the drill-down
    told as a story (both runs, "missed a relevant doc" as the meaning of failed), each run's answer with its grade and
    the judge's reason (cut to a few lines), and the sentence a presenter reads first."""

    story: FailureStory
    answers: tuple[GradedAnswer, ...]
    headline: str


def answer_story(dataset: Dataset, query: str, k: int, metric: str, better: str, worse: str) -> Loaded:
    """The query ``query`` for the room: where the relevant docs landed in ``better``'s and ``worse``'s lists, and the
    answer each wrote from them, graded on ``metric``."""
    runs = (better, worse)
    told = story(dataset, query, k, runs, "any")
    graded = answers.query_answers(dataset, k, query, metric, runs)
    if not told.ok or graded is None or not graded.ok:
        return told if not told.ok else (graded or Loaded(error="No answer grades are loaded."))
    said = {a.run: a for a in graded.value.answers}
    short = tuple(GradedAnswer(a.run, a.metric, a.grade, excerpt(a.answer, ANSWER_CHARS),
                               excerpt(a.reason, REASON_CHARS), a.source) for a in graded.value.answers)

    def grade(run: str) -> str:
        value = said[run].grade if run in said else None
        return "no grade" if value is None else f"{value:g}"

    headline = (f"{better} found more of what is relevant in its top {k}, yet its answer was graded lower on {metric}: "
                f"{grade(better)} against {worse}'s {grade(worse)}.")
    return Loaded(AnswerStory(told.value, short, headline))
