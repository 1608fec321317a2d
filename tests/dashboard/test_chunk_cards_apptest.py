"""A run of chunks in the drill-down and the presenter view: each retrieved chunk's text shows the evidence inside
it highlighted, and the chunk's id beside its document's title; the text stays inert (cut into escaped pieces), so
no evidence range can open or close markup. Drawn with the page's own card functions on the sample's chunking."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest

from evalcore.safe_text import md_text
from tests.dashboard.apptest_helpers import no_exceptions

from dashboard.doc_cards import EVIDENCE, marked


def _cards() -> None:
    import evalcore
    from dashboard import doc_cards
    from evalcore.analyses.drill_down import drill_down
    from tests.chunk_sample import CHUNKING, evaluation

    documents = evalcore.read_documents(CHUNKING.parent / "docs.jsonl")
    drill = drill_down(evaluation(("sent1",)), "q308", 5, documents=documents)
    doc_cards.relevant_docs(drill)
    doc_cards.ranked_list(drill.ranking("sent1"), 5, 6)


def test_the_drill_down_marks_the_evidence_in_each_chunk_and_names_the_chunk() -> None:
    import evalcore
    from evalcore.analyses.drill_down import drill_down
    from tests.chunk_sample import CHUNKING, evaluation

    drill = drill_down(evaluation(("sent1",)), "q308", 5,
                       documents=evalcore.read_documents(CHUNKING.parent / "docs.jsonl"))
    row = drill.ranking("sent1").set_index("rank").loc[4]  # sent1's chunk of the relevant document, at rank 4
    assert row["chunk_id"] == "security-scim-01#s3" and row["evidence"] == [(0, 94)]

    at = AppTest.from_function(_cards, default_timeout=120)
    at.run()
    no_exceptions(at)
    shown = [m.value for m in at.markdown]
    card = next(m for m in shown if m.startswith("**#4**"))
    assert md_text("security-scim-01") in card and f"chunk {md_text('security-scim-01#s3')}" in card
    assert EVIDENCE.format(md_text(" ".join(row["text"][0:94].split()))) in card
    unmarked = next(m for m in shown if m.startswith("**#1**"))
    assert ":orange-background[" not in unmarked  # no evidence in a chunk of another document
    relevant = shown[1]  # the relevant document's text under its name: each evidence span marked
    assert relevant.count(":orange-background[") == len(drill.relevant["evidence"].iloc[0]) >= 1


def test_evidence_in_hostile_text_stays_inert() -> None:
    text = "a ]**b** [x](http://e.com) `c` <b>d</b> :red[e]"
    found = marked(text, [(2, 9), (30, 37)], limit=None)
    assert found == (md_text(text[:2]) + EVIDENCE.format(md_text(text[2:9])) + md_text(text[9:30])
                     + EVIDENCE.format(md_text(text[30:37])) + md_text(text[37:]))
    assert "](http" not in found and "<b>" not in found and ":red[" not in found
    # Ranges past the text, overlapping or empty mark only what is there.
    assert marked("abc", [(1, 2), (1, 9), (5, 7), (2, 2)], limit=None) == md_text("a") + EVIDENCE.format(md_text("bc"))
