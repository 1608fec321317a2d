"""Docs as a person reads them: title, id, mark and wrapped text, for the Failures drill-down.

Every piece of user text (titles, ids, doc text, run names) goes through `evalcore.safe_text.md_text`
before it meets Markdown; only this module's own words carry markup (bold, colour).
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from evalcore.analyses.failure_story import excerpt
from evalcore.analyses.failures import MARK_NON_RELEVANT, MARK_RELEVANT, DrillDown
from evalcore.safe_text import md_text

FULL_TEXT_CHARS = 900
"""Doc text shown in full up to this length; a longer doc shows its start and says how much is left."""
MARK_SYMBOL = {MARK_RELEVANT: "✔ relevant", MARK_NON_RELEVANT: "✘ not relevant"}
MARK_BADGE = {MARK_RELEVANT: ":green-background[**✔ relevant**]", MARK_NON_RELEVANT: ":red-background[✘ not relevant]"}
UNJUDGED = "unjudged"


def mark_words(mark: str) -> str:
    """The mark as the page says it: ✔ relevant, ✘ not relevant, unjudged."""
    return MARK_SYMBOL.get(mark, UNJUDGED)


def _text(text: object, grey: bool = False) -> str:
    """The doc's text as inert Markdown: in full up to `FULL_TEXT_CHARS`, else its start and how much is left."""
    if text is None or (not isinstance(text, str) and pd.isna(text)) or not str(text).strip():
        return ":gray[(no text for this doc in the documents file)]"
    flat = " ".join(str(text).split())
    shown, left = flat, ""
    if len(flat) > FULL_TEXT_CHARS:
        shown = excerpt(flat, FULL_TEXT_CHARS) or ""
        left = f" :gray[(about {len(flat[len(shown) - 1:].split()):,} more words)]"
    return (f":gray[{md_text(shown)}]" if grey else md_text(shown)) + left


def _name(doc_id: str, title: object) -> str:
    """**Title** · doc id, or just the **doc id** when the documents file has no title for it."""
    if isinstance(title, str) and title:
        return f"**{md_text(title)}** · :gray[{md_text(doc_id)}]"
    return f"**{md_text(doc_id)}**"


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
                st.markdown(_text(row.get("text")))


def ranked_list(ranking: pd.DataFrame, k: int, depth: int, with_text: bool = True) -> None:
    """A run's ranked list down to ``depth``: per doc its rank, mark, name and wrapped text (without a documents
    file, ``with_text`` False: names only); the docs below k in grey, after a line that says where the top k ends."""
    for row in ranking.head(depth).to_dict(orient="records"):
        if row["rank"] == k + 1:
            st.markdown(f":gray[**Below the top {k}** (not retrieved at k = {k}; shown for context)]")
        badge = MARK_BADGE.get(row["mark"], f":gray[{UNJUDGED}]")
        head = f"**#{int(row['rank'])}** {badge} {_name(row['doc_id'], row.get('title'))}"
        st.markdown(f"{head}  \n{_text(row.get('text'), grey=not row['in_top_k'])}" if with_text else head)
