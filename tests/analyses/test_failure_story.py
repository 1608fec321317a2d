"""One failure told for a meeting: the words a presenter reads agree with the ranked lists they come from."""

from __future__ import annotations

import pandas as pd
import pytest

import evalcore
from evalcore import UsageError
from evalcore.analyses.drill_down import MARK_NON_RELEVANT, MARK_UNJUDGED, drill_down
from evalcore.analyses.failure_story import excerpt, failure_story

LABELS = pd.DataFrame({"query": ["q", "q", "q"], "doc_id": ["r1", "r2", "n1"], "grade": [1, 1, 0],
                       "query_text": ["how do I reset my password"] * 3})
DOCS = pd.DataFrame({"doc_id": ["r1", "r2", "n1", "u1", "u2"],
                     "title": ["Password reset", "", "Sign-in help", "Billing", "SSO setup"],
                     "text": ["Open Settings and choose Reset. " * 20, "Second relevant.", "Help.", "Invoices.", "SAML."]})


def story(k: int, mode: str = "any", **kwargs):
    runs = [evalcore.read_run({"q": ["n1", "u1", "r1", "u2", "r2"]}, name="a"),
            evalcore.read_run({"q": ["r1", "r2"]}, name="b"),
            evalcore.read_run({"z": ["r1"]}, name="c")]
    ev = evalcore.evaluate_runs(runs, LABELS, k=10)
    return failure_story(drill_down(ev, "q", k, documents=evalcore.read_documents(DOCS)), mode=mode, **kwargs)


def test_the_story_of_one_failure() -> None:
    told = story(3)
    assert told.query_text == "how do I reset my password" and told.k == 3
    # Relevant docs by title (by id when the title is empty), with short text.
    assert [d.name for d in told.relevant] == ["Password reset", "r2"]
    # Two relevant docs share the text length one would have (at least a line each).
    assert told.relevant[0].excerpt.endswith("…") and len(told.relevant[0].excerpt) <= 111
    a, b, c = told.runs
    # Run a put r1 at rank 3 (inside the top 3) and r2 at rank 5 (below): it missed a relevant doc.
    assert [(x.name, x.rank, x.in_top_k) for x in a.landings] == [("Password reset", 3, True), ("r2", 5, False)]
    assert [x.said for x in a.landings] == ["rank 3, in the top 3", "rank 5, below the top 3"]
    assert a.failed and a.found == 1 and a.summary == "1 of 2 relevant in its top 3"
    # What came instead: the docs of its top 3 not labeled relevant, best first, each marked as the drill-down marks it.
    assert [(d.rank, d.name, d.mark) for d in a.instead] == [(1, "Sign-in help", MARK_NON_RELEVANT),
                                                             (2, "Billing", MARK_UNJUDGED)]
    assert a.more_instead == 0
    # Run b found both; run c has no list for this query.
    assert not b.failed and b.instead == () and b.summary == "all 2 relevant in its top 3"
    assert c.failed and [x.said for x in c.landings] == ["no list for this query"] * 2
    assert c.summary == "nothing relevant in its top 3"
    assert told.missed_by == ["a", "c"] and told.headline == "a and c missed a relevant doc at k = 3."


def test_the_story_follows_the_one_meaning_of_failed() -> None:
    strict = story(3, mode="none")
    assert strict.missed_by == ["c"] and strict.headline == "c found nothing relevant at k = 3."
    wide = story(1, instead=1)
    a = wide.runs[0]
    assert [x.said for x in a.landings] == ["rank 3, below the top 1", "rank 5, below the top 1"]
    assert [d.name for d in a.instead] == ["Sign-in help"] and a.more_instead == 0
    assert [d.name for d in story(2, instead=1).runs[0].instead] == ["Sign-in help"]
    assert story(2, instead=1).runs[0].more_instead == 1
    assert story(5).runs[1].landings[1].said == "rank 2, in the top 5"
    with pytest.raises(UsageError):
        story(3, mode="sometimes")


def test_excerpt_cuts_after_a_word() -> None:
    assert excerpt(None) is None and excerpt("   ") is None
    assert excerpt("short  text\nhere") == "short text here"
    assert excerpt("one two three four", 9) == "one two…"
    assert excerpt("abcdefghijkl", 5) == "abcde…"
