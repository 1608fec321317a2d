"""One failure told in plain words, for a meeting: what was asked, what was relevant, where it landed in each
run's list and what came instead.

Built from a drill-down (`evalcore.analyses.drill_down`), so the ranks, marks and the meaning of failed
at k (`evalcore.metrics.failure`) are the drill-down's own; this module only chooses and words them.
A doc is named by its title when the documents file has one, else by its id (cut to ``name_chars``), and read
as a short excerpt (`excerpt`) cut at a word; the name counts against the excerpt's length, so a long title leaves
less text and the story keeps its size on a projector. For a run of chunks the excerpt is the chunk's own text.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..errors import invalid_parameter
from ..metrics.failure import FAILURE_MODE, MISS_MODES, check_mode, failed_at_k
from .drill_down import MARK_RELEVANT, DrillDown
from .landed import NOT_RETURNED

EXCERPT_CHARS = 220
"""How much of a doc's text a story shows: about two lines on a projector."""
SHARE_CHARS = 80
"""The least text a relevant doc gets when several share `EXCERPT_CHARS` (about one line)."""
NAME_CHARS = 90
"""The longest name a story gives a doc: a paper's title can otherwise fill three lines of a run's column."""
LEAST_CHARS = 40
"""The least excerpt a doc keeps beside a long name (about a line of a run's column)."""


def excerpt(text: str | None, limit: int = EXCERPT_CHARS) -> str | None:
    """The start of ``text``, whitespace collapsed, at most ``limit`` characters, cut after a word and ending in
    "…" when it was cut; None for no text."""
    if text is None:
        return None
    flat = " ".join(str(text).split())
    if not flat:
        return None
    if len(flat) <= limit:
        return flat
    cut = flat[:limit + 1].rsplit(" ", 1)[0] if " " in flat[:limit + 1] else flat[:limit]
    return cut.rstrip(" ,.;:-") + "…"


def _given(value: object) -> str | None:
    """A title or text from a table as text, or None where it is missing (None, NaN, NA) or empty."""
    if value is None or (not isinstance(value, str) and pd.isna(value)):
        return None
    return str(value) or None


@dataclass(frozen=True)
class StoryDoc:
    """One doc as a person reads it: ``name`` (its title, or its id when it has none, cut to ``name_chars``) and a
    short excerpt; for a run of chunks also the chunk's id, and its whole ``text`` (the chunk's own) with the
    ``evidence`` in it as (start, end) ranges (for a renderer that marks them, `evalcore.safe_text.marked_pieces`)."""

    doc_id: str
    title: str | None
    excerpt: str | None
    rank: int | None = None
    mark: str | None = None  # relevant / judged non-relevant / unjudged (the drill-down's marks); None: not ranked
    chunk_id: str | None = None
    text: str | None = None
    evidence: tuple[tuple[int, int], ...] = ()
    name_chars: int = NAME_CHARS

    @property
    def name(self) -> str:
        return _name(self.doc_id, self.title, self.name_chars)


@dataclass(frozen=True)
class Landing:
    """Where one relevant doc landed in one run: ``words`` as the drill-down says it ("rank 14", "not in its top 100",
    "query not in run") and `said`, the same for a room ("rank 14, below the top 10")."""

    doc_id: str
    name: str
    rank: int | None
    words: str
    in_top_k: bool
    k: int

    @property
    def said(self) -> str:
        if self.rank is not None:
            return f"rank {self.rank}, {'in' if self.in_top_k else 'below'} the top {self.k}"
        if self.words.startswith(NOT_RETURNED):
            return self.words
        return "no list for this query"


@dataclass(frozen=True)
class RunStory:
    """One run's part: whether it failed at k, where each relevant doc landed, and what came first instead."""

    run: str
    model: str
    k: int
    failed: bool
    found: int  # relevant docs in the top k
    landings: tuple[Landing, ...]
    instead: tuple[StoryDoc, ...]  # the docs not labeled relevant that took places in its top k, best first
    more_instead: int  # how many more of those than ``instead`` shows
    chunks_found: tuple[StoryDoc, ...] = ()  # a run of chunks: its top k chunks of relevant documents, evidence marked
    evidence_recall: float | None = None  # share of the query's evidence in its top k chunks (with evidence spans)

    @property
    def summary(self) -> str:
        """One plain line: "1 of 2 relevant in its top 10", "nothing relevant in its top 10", "the relevant doc in
        its top 10"."""
        total, k = len(self.landings), self.k
        if self.found == 0:
            return f"nothing relevant in its top {k}"
        if self.found == total:
            return f"{'the relevant doc' if total == 1 else f'all {total} relevant'} in its top {k}"
        return f"{self.found} of {total} relevant in its top {k}"


@dataclass(frozen=True)
class FailureStory:
    """One query's failure for a meeting (see the module)."""

    query: str
    query_text: str | None
    k: int
    mode: str
    relevant: tuple[StoryDoc, ...]
    runs: tuple[RunStory, ...]
    labels: str
    fingerprint: str

    @property
    def missed_by(self) -> list[str]:
        return [r.run for r in self.runs if r.failed]

    @property
    def headline(self) -> str:
        """The sentence a presenter reads first: which runs failed, in the words of `MISS_MODES`."""
        missed = self.missed_by
        meaning = MISS_MODES[self.mode].split(" (")[0]
        if not missed:
            return f"No run shown failed this query at k = {self.k}: every one of them kept what is relevant."
        who = missed[0] if len(missed) == 1 else ", ".join(missed[:-1]) + " and " + missed[-1]
        return f"{who} {meaning} at k = {self.k}."


def _name(doc_id: object, title: object, name_chars: int) -> str:
    """A doc's name as a story gives it: its title (its id without one), cut to ``name_chars``."""
    return excerpt(_given(title) or str(doc_id), name_chars) or str(doc_id)


def _beside(text: object, name: str, chars: int) -> str | None:
    """The excerpt of ``text`` that fits ``chars`` with ``name`` before it (at least `LEAST_CHARS`)."""
    return excerpt(_given(text), max(LEAST_CHARS, chars - len(name)))


def _docs(rows: pd.DataFrame, chars: int, name_chars: int) -> tuple[StoryDoc, ...]:
    """Ranked rows of a drill-down as `StoryDoc`s: each with its excerpt (its name and excerpt within ``chars``) and,
    for a chunk, its id, text and evidence."""
    has_chunks = "chunk_id" in rows.columns
    evidence = rows["evidence"] if "evidence" in rows.columns else [()] * len(rows)
    return tuple(StoryDoc(str(d), _given(t), _beside(x, _name(d, t, name_chars), chars), int(r), m,
                          chunk_id=_given(c) if has_chunks else None, text=_given(x),
                          evidence=tuple(tuple(int(v) for v in span) for span in (e or ())), name_chars=name_chars)
                 for d, t, x, r, m, c, e in zip(rows["doc_id"], rows["title"], rows["text"], rows["rank"],
                                                rows["mark"], rows["chunk_id"] if has_chunks else [None] * len(rows),
                                                evidence))


def failure_story(drill: DrillDown, *, mode: str = FAILURE_MODE, instead: int = 3, chars: int = EXCERPT_CHARS,
                  instead_chars: int | None = None, name_chars: int = NAME_CHARS) -> FailureStory:
    """The drill-down ``drill`` told as a `FailureStory`: per run, at most ``instead`` of the docs that took its
    top k places without being labeled relevant (what came instead). Every name is cut to ``name_chars``. A relevant
    doc's name and text together take at most ``chars`` characters (with several relevant docs, each an equal
    share of it, at least `SHARE_CHARS`: the story stays the same length), one that came instead ``instead_chars``
    (default: ``chars``); the text keeps at least `LEAST_CHARS` beside a long name."""
    mode = check_mode(mode)
    if instead < 0:
        raise invalid_parameter("instead", "a whole number >= 0", instead)
    if name_chars < 1:
        raise invalid_parameter("name_chars", "a whole number >= 1", name_chars)
    k = drill.k
    rel = drill.relevant
    names = {d: _name(d, t, name_chars) for d, t in zip(rel["doc_id"].tolist(), rel["title"].tolist())}
    share = chars if len(rel) < 2 else max(SHARE_CHARS, chars // len(rel))
    relevant = tuple(StoryDoc(str(d), _given(t), _beside(x, names[d], share), mark=MARK_RELEVANT,
                              name_chars=name_chars)
                     for d, t, x in zip(rel["doc_id"].tolist(), rel["title"].tolist(), rel["text"].tolist()))
    runs = []
    for run in drill.runs:
        spots = drill.landed[drill.landed["run"] == run].set_index("doc_id")
        landings = []
        for doc in rel["doc_id"].tolist():
            rank = spots["rank"].get(doc)
            rank = None if rank is None or pd.isna(rank) else int(rank)  # NA: not returned
            landings.append(Landing(str(doc), names[doc], rank, str(rel[run][rel["doc_id"] == doc].iloc[0]),
                                    rank is not None and rank <= k, k))
        found = sum(x.in_top_k for x in landings)
        ranking = drill.ranking(run)
        top = ranking["in_top_k"].to_numpy(dtype=bool)
        above = ranking[top & (ranking["mark"] != MARK_RELEVANT).to_numpy()]
        shown = above.head(instead)
        came = _docs(shown, instead_chars or chars, name_chars)
        chunks = _docs(ranking[top & (ranking["mark"] == MARK_RELEVANT).to_numpy()], chars, name_chars) \
            if "chunk_id" in ranking and ranking["chunk_id"].notna().any() else ()
        scored = drill.scores.set_index("run")
        column = f"evidence_recall@{k}"
        evidence = float(scored.at[run, column]) if column in scored.columns else None
        evidence = None if evidence is None or np.isnan(evidence) else evidence
        failed = bool(failed_at_k(np.array([found]), np.array([len(landings)]), mode,
                                  None if mode != "fragment" else np.array([np.nan if evidence is None else evidence]))[0])
        runs.append(RunStory(run, drill.models[run], k, failed, found, tuple(landings), came, len(above) - len(shown),
                             chunks, evidence))
    return FailureStory(query=drill.query, query_text=drill.query_text, k=k, mode=mode, relevant=relevant,
                        runs=tuple(runs), labels=drill.labels, fingerprint=drill.fingerprint)


__all__ = ["EXCERPT_CHARS", "LEAST_CHARS", "NAME_CHARS", "FailureStory", "Landing", "RunStory", "StoryDoc", "excerpt",
           "failure_story"]
