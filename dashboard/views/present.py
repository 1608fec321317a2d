"""Present: one failure at a time, in large type, for a meeting around a shared screen (1280 x 720 and up).

The same list as the Failures page (k, runs, meaning of failed, source, search and order come from the URL, so
the link from there opens it as it was), walked with the arrow keys, a clicker's Page Down / Page Up or the buttons;
the query follows in the URL.
Plain words first: what the customer typed, what was relevant, where it landed in each run's list and what came
instead (titles, the first two, with a count of the rest); for a run of chunks, its chunk of the relevant document
with the evidence in it marked. The numbers behind it (recall, reciprocal rank, the labels' fingerprint) are one click
away. A presenter layout: no page navigation, so one failure with three runs fits 1280 x 720 without scrolling.
"""

import streamlit as st

from evalcore.analyses.failures import SORT_ORDERS, neighbours
from evalcore.metrics.failure import FAILURE_MODE, MISS_MODES
from evalcore.safe_text import md_text

from dashboard import doc_cards, layout, state
from dashboard.page_models import present

PAGE = "present"
FOLLOWED = ("data", "runs", "k", "query", "miss", "source", "search", "sort")  # the Failures page's selections
MAX_RELEVANT = 3  # relevant docs told on the first screen; the rest are named
CHUNK_CHARS = 150  # a retrieved chunk of a relevant document: about two lines of a run's column
# This page's own type sizes (no user text here): large for a room, scoped to this page's containers; the page's
# navigation is hidden (a presenter layout: the Failures link is in the numbers panel).
STYLE = """<style>
.stApp:has(.st-key-present) [data-testid="stHeader"] { display: none; }
.stMainBlockContainer:has(.st-key-present) { padding-top: 1.2rem; padding-bottom: 0.5rem; }
.st-key-present p, .st-key-present li { font-size: 1.3rem; line-height: 1.4; }
.st-key-present [data-testid="stVerticalBlock"] { gap: 0.65rem; }
.st-key-present [data-testid="stCaptionContainer"] p { font-size: 1.05rem; }
.st-key-present-query p { font-size: 2.3rem; line-height: 1.15; font-weight: 600; }
[class*="st-key-present-landed"] { margin-top: -0.7rem; }
.st-key-present-relevant p { font-size: 1.15rem; }
[class*="st-key-present-landed"] p { font-size: 1.5rem; }
[class*="st-key-present-instead"] p, [class*="st-key-present-small"] p { font-size: 1.05rem; line-height: 1.3; }
</style>"""
# Each failure opens at its top, the query first, however far down the page that led here was scrolled (Streamlit
# keeps the scroll position across pages and reruns); and a presentation clicker's keys (Page Down / Page Up) press
# Next / Previous like the arrow keys (the buttons' own shortcuts). Static script, installed once per browser tab;
# the number only makes each failure's script differ so it runs again.
SCRIPT = """<script>/* failure {position} */
for (const el of document.querySelectorAll('[data-testid="stMain"], [data-testid="stAppViewContainer"]')) {{
  el.scrollTo(0, 0);
}}
window.scrollTo(0, 0);
if (!window.evalcorePresenterKeys) {{
  window.evalcorePresenterKeys = true;
  document.addEventListener("keydown", (event) => {{
    const which = {{PageDown: "next", PageUp: "previous"}}[event.key];
    const button = which && document.querySelector(`.st-key-present-${{which}} button`);
    if (!button || event.target.closest("input, textarea, [contenteditable]")) return;
    event.preventDefault();
    if (!button.disabled) button.click();
  }});
}}
</script>"""

v = layout.view(PAGE, own=("query", "miss", "source", "search", "sort"))
st.html(STYLE)
if v.evaluation is None:
    layout.error(v.error or "The files cannot be scored.")
    st.page_link("views/data.py", label="Fix the files on the Data page", icon=":material/upload_file:")
    st.stop()
k = v.k
mode = state.get("miss") if state.get("miss") in MISS_MODES else FAILURE_MODE
order = state.get("sort", "worst")
order = order if order in SORT_ORDERS else "worst"
sequence = present.sequence(v.dataset, k, mode, tuple(v.runs), tuple(state.get("source", [])),
                            state.get("search", "") or "", order)
query = state.get("query")
if query is not None and not present.is_evaluated(v.dataset, query):
    layout.error(f"The link asks for query {query}, which is not an evaluated query of these labels; showing the "
                 "first failure instead.")
    query = None
if query is None and sequence:
    query = sequence[0]
    state.set("query", query)


def go(q: str | None) -> None:
    state.set("query", q)


previous_q, next_q = neighbours(sequence, query)
with st.container(key="present"):
    top = st.columns([5, 3, 2, 2], vertical_alignment="center")
    with top[0]:
        where = (f"Failure {sequence.index(query) + 1} of {len(sequence)}" if query in sequence
                 else f"Not in the list of {len(sequence)} failures (opened by its link)")
        st.caption(md_text(f"{where} at k = {k} · arrow keys: next, previous"),
                   help=f"k = {k}: the top {k} docs of a run's list are retrieved. Listed: the queries that "
                        f"{MISS_MODES[mode]} in at least one run shown, in the Failures page's order. Walk them "
                        "with the arrow keys (left, right), a presentation clicker (Page Down / Page Up) or the buttons.")
    with top[1]:
        numbers = st.popover("The numbers", icon=":material/functions:", width="stretch")
    with top[2]:
        st.button("Previous", on_click=go, args=(previous_q,), disabled=previous_q is None, shortcut="Left",
                  key="present.previous", width="stretch")
    with top[3]:
        st.button("Next", on_click=go, args=(next_q,), disabled=next_q is None, shortcut="Right",
                  key="present.next", width="stretch", type="primary")

    if query is None:
        st.info(md_text(f"No query fails at k = {k} with these settings: nothing to present."))
        st.page_link("views/failures.py", label="Back to the Failures page", icon=":material/search_insights:",
                     query_params=layout.link_params(FOLLOWED))
        st.stop()
    loaded = present.story(v.dataset, query, k, tuple(v.runs), mode)
    if layout.failed(loaded):
        st.stop()
    story = loaded.value

    st.caption("The customer typed")
    with st.container(key="present-query"):
        st.markdown(md_text(story.query_text) if story.query_text else
                    md_text(f"query {story.query}") + " :gray[(no query text in the labels)]")
    st.markdown(md_text(story.headline))

    relevant = story.relevant
    st.caption("What was relevant" if len(relevant) == 1 else f"What was relevant ({len(relevant)} docs)")
    if len(relevant) == 1:
        doc = relevant[0]
        st.markdown(f":green-background[**✔ {md_text(doc.name)}**]"
                    + (f" – {md_text(doc.excerpt)}" if doc.excerpt else ""))
    else:  # titles only, on one line, so each run's part stays on the first screen
        st.container(key="present-relevant").markdown(" ".join(f":green-background[**✔ {md_text(doc.name)}**]" for doc in relevant[:MAX_RELEVANT])
                    + (md_text(f" and {len(relevant) - MAX_RELEVANT} more") if len(relevant) > MAX_RELEVANT else ""))

    st.caption(f"Where it landed in each run's list, and what came instead (the top {k} are retrieved)")
    for i, (column, run) in enumerate(zip(st.columns(len(story.runs), border=True), story.runs)):
        with column:
            st.markdown(f"**{md_text(run.run)}** :gray[:small[{md_text(run.model)}]]  \n"
                        + (f":red[**✘ {md_text(run.summary)}**]" if run.failed else f":green[✔ {md_text(run.summary)}]"))
            lines = []
            for spot in run.landings[:MAX_RELEVANT]:  # several: the rank alone beside each title
                several = len(run.landings) > 1
                words = md_text(f"#{spot.rank}" if several and spot.rank is not None else spot.said)
                name = f" :gray[{md_text(spot.name)}]" if several else ""
                lines.append(f":green[**{words}**]{name}" if spot.in_top_k else f":red[**{words}**]{name}")
            if len(run.landings) > MAX_RELEVANT:
                lines.append(f":gray[and {len(run.landings) - MAX_RELEVANT} more relevant docs]")
            with st.container(key=f"present-landed-{i}" if len(run.landings) == 1 else f"present-small-{i}"):
                st.markdown("  \n".join(lines))
            if run.chunks_found:  # a run of chunks: what it took from the relevant document, evidence marked
                chunk = run.chunks_found[0]
                share = ("" if run.evidence_recall is None
                         else f" · {run.evidence_recall:.0%} of the evidence in its top {k}")
                with st.container(key=f"present-chunk-{i}"):
                    st.markdown(f":gray[Its chunk of the relevant document{share}:]  \n"
                                f"#{chunk.rank} {doc_cards.name(chunk.doc_id, chunk.title, chunk.chunk_id, False)}  \n"
                                + doc_cards.marked(chunk.text, chunk.evidence, CHUNK_CHARS))
            with st.container(key=f"present-instead-{i}"):
                if run.instead:  # titles first, the first two; the rest counted
                    st.markdown(f":gray[Came instead, in the top {k}:]  \n" + "  \n".join(
                        f"#{doc.rank} {doc_cards.name(doc.doc_id, doc.title, doc.chunk_id, with_id=False)}"
                        for doc in run.instead)
                        + (f"  \n:gray[and {run.more_instead} more in the top {k}]" if run.more_instead else ""))
                else:
                    st.markdown(f":gray[Nothing else in the top {k}: every place went to a relevant doc.]")

with numbers:
    drill = present.drill_down(v.dataset, query, k, tuple(v.runs))
    if not layout.failed(drill):
        dd = drill.value
        st.markdown("**The numbers behind this failure**")
        st.caption(md_text(f"query id {dd.query} · source {dd.source or 'not given'} · k = {k} · n = 1 query (this "
                           f"one's own scores) · labels {dd.labels}#{dd.fingerprint} · models: "
                           + "; ".join(f"{r} = {m}" for r, m in dd.models.items())))
        shown = present.scores_shown(dd)
        layout.table(shown, hide_index=True, width="stretch", column_order=[c for c in shown.columns if c != "model"],
                     column_config={
            f"recall@{k}": st.column_config.NumberColumn(
                format="%.2f", help=f"Share of this query's relevant docs in the top {k}"),
            f"hit@{k}": st.column_config.NumberColumn(format="%.0f", help=f"1 if any relevant doc is in the top {k}"),
            "rr": st.column_config.NumberColumn("reciprocal rank", format="%.3f",
                                                help="1 / the rank of the first relevant doc (0 if none returned)"),
            "first_rank": st.column_config.TextColumn("first relevant rank", alignment="right"),
            "n_returned": st.column_config.NumberColumn("docs returned"),
        })
    st.page_link("views/failures.py", label="Open this query on the Failures page (every doc, the ledger)",
                 icon=":material/search_insights:", query_params=layout.link_params(FOLLOWED))
st.html(SCRIPT.format(position=sequence.index(query) if query in sequence else -1), unsafe_allow_javascript=True)
