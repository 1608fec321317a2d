"""Docs as a person reads them: title, id (and, for a run of chunks, the chunk id), mark and wrapped text with the
evidence in it marked, for the Failures drill-down and the presenter view.

Every piece of user text (titles, ids, doc text, run names) goes through `evalcore.safe_text.md_text`
before it meets Markdown; only this module's own words carry markup (bold, colour). Evidence is marked by cutting
the text into pieces (`evalcore.safe_text.marked_pieces`), escaping each, and wrapping the evidence pieces in this
module's highlight: no range of user text can open or close markup.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from evalcore.analyses.failures import MARK_NON_RELEVANT, MARK_RELEVANT, DrillDown
from evalcore.safe_text import marked_pieces, md_text

FULL_TEXT_CHARS = 900
"""Doc text shown in full up to this length; a longer doc shows its start and says how much is left."""
MARK_SYMBOL = {MARK_RELEVANT: "✔ relevant", MARK_NON_RELEVANT: "✘ not relevant"}
MARK_BADGE = {MARK_RELEVANT: ":green-background[**✔ relevant**]", MARK_NON_RELEVANT: ":red-background[✘ not relevant]"}
UNJUDGED = "unjudged"
EVIDENCE = ":orange-background[{}]"
"""How evidence inside a text is marked (the piece inside is escaped user text)."""


def marked(text: object, evidence: object = (), limit: int | None = FULL_TEXT_CHARS, grey: bool = False) -> str:
    """``text`` as inert Markdown with its ``evidence`` ranges highlighted: in full up to ``limit`` characters, else
    its start and how much is left."""
    if text is None or (not isinstance(text, str) and pd.isna(text)) or not str(text).strip():
        return ":gray[(no text for this doc in the documents file)]"
    ranges = list(evidence) if isinstance(evidence, (list, tuple)) else []
    pieces = marked_pieces(str(text), ranges, limit)
    left = ""
    if pieces and pieces[-1] == ("…", False):
        shown_words = sum(len(p.split()) for p, _ in pieces[:-1])
        left = f" :gray[(about {max(len(str(text).split()) - shown_words, 1):,} more words)]"
    body = "".join(EVIDENCE.format(md_text(piece)) if is_evidence else
                   (f":gray[{md_text(piece)}]" if grey else md_text(piece)) for piece, is_evidence in pieces)
    return body + left


def _text(text: object, grey: bool = False, evidence: object = ()) -> str:
    """The doc's text as inert Markdown, evidence marked: in full up to `FULL_TEXT_CHARS`, else its start."""
    return marked(text, evidence, FULL_TEXT_CHARS, grey)


def name(doc_id: str, title: object, chunk_id: object = None, with_id: bool = True) -> str:
    """**Title** · doc id (``with_id`` False: the title alone), or just the **doc id** when the documents file has no
    title for it; a chunk's id beside its document's (``· chunk sent1-0042``)."""
    chunk = f" · :gray[chunk {md_text(chunk_id)}]" if isinstance(chunk_id, str) and chunk_id else ""
    if isinstance(title, str) and title:
        return f"**{md_text(title)}**" + (f" · :gray[{md_text(doc_id)}]" if with_id else "") + chunk
    return f"**{md_text(doc_id)}**{chunk}"


_name = name


def _grade(value: object) -> str:
    number = float(value)
    return str(int(number)) if number.is_integer() else f"{number:g}"


def relevant_docs(drill: DrillDown) -> None:
    """One bordered card per relevant doc of ``drill``: its name and grade, where each run put it (✔ inside the
    top k, in bold; ✘ below it), and its text, wrapped."""
    spots = drill.landed.set_index(["run", "doc_id"])
    for row in drill.relevant.to_dict(orient="records"):
        places = []
        for run in drill.runs:
            words, inside = spots.at[(run, row["doc_id"]), "landed"], bool(spots.at[(run, row["doc_id"]), "in_top_k"])
            places.append(f"✔ {md_text(run)}: **{md_text(words)}**" if inside else f"✘ {md_text(run)}: {md_text(words)}")
        with st.container(border=True):
            st.markdown(f"{_name(row['doc_id'], row.get('title'))} · grade {_grade(row['grade'])}  \n"
                        + " · ".join(places))
            if drill.has_text:
                st.markdown(_text(row.get("text"), evidence=row.get("evidence", ())))


def ranked_list(ranking: pd.DataFrame, k: int, depth: int, with_text: bool = True) -> None:
    """A run's ranked list down to ``depth``: per doc its rank, mark, name and wrapped text (without a documents
    file, ``with_text`` False: names only); the docs below k in grey, after a line that says where the top k ends."""
    for row in ranking.head(depth).to_dict(orient="records"):
        if row["rank"] == k + 1:
            st.markdown(f":gray[**Below the top {k}** (not retrieved at k = {k}; shown for context)]")
        badge = MARK_BADGE.get(row["mark"], f":gray[{UNJUDGED}]")
        head = f"**#{int(row['rank'])}** {badge} {_name(row['doc_id'], row.get('title'), row.get('chunk_id'))}"
        text = _text(row.get("text"), grey=not row["in_top_k"], evidence=row.get("evidence", ()))
        st.markdown(f"{head}  \n{text}" if with_text else head)
