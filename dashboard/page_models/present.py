"""The presenter view's model: the Failures page's list, in its order, and one failure told in plain words
(`evalcore.analyses.failure_story`) for a shared screen. Plain functions: the list is the one the Failures page keeps
(`dashboard.caching`), and the view keeps the story there."""

from __future__ import annotations

from typing import NamedTuple

from evalcore.analyses.failure_story import excerpt, failure_story
from evalcore.metrics.dataset import Dataset

from dashboard import caching, loading
from dashboard.loading import Loaded
from dashboard.page_models import failures

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
