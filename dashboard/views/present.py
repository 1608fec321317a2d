"""Present: one failure at a time, in large type, for a meeting around a shared screen (1280 x 720 and up).

The same list as the Failures page (k, runs, meaning of failed, source, search and order come from the URL, so
the link from there opens it as it was), walked with the arrow keys, a clicker's Page Down / Page Up or the buttons;
the query follows in the URL.
Plain words first: what the customer typed (a long query in smaller type), what was relevant, which runs failed,
and per run where the relevant docs landed in its list and what came instead (titles, the first two, with a count of
the rest; for a run of chunks, each chunk's own text, never its id), with its chunk of the relevant document, the
evidence in it marked. The numbers behind it (recall, reciprocal rank, the labels' fingerprint) are one click away.
A presenter layout: no page navigation, only "Back to Failures" (the same selections); one failure with three runs
fits 1280 x 720 without scrolling, however long its text.

With ``walk=answers`` (the Answers page's link) it walks that page's list instead: the queries where the run that
retrieves better answers worse all the same, each told for the two runs with the answer each wrote, its grade and
the judge's reason in place of what came instead; "Back to Answers" leads out.
"""

import streamlit as st

from evalcore.analyses.failure_story import StoryDoc
from evalcore.analyses.failures import SORT_ORDERS, neighbours
from evalcore.metrics.failure import FAILURE_MODE, MISS_MODES
from evalcore.safe_text import md_text

from dashboard import caching, doc_cards, layout, state
from dashboard.page_models import present

PAGE = "present"
FOLLOWED = ("data", "runs", "k", "query", "miss", "source", "search", "sort")  # the Failures page's selections
ANSWERS_FOLLOWED = ("data", "runs", "k", "query", "grade", "pair")  # the Answers page's, with walk=answers
MAX_RELEVANT = 3  # relevant docs told on the first screen; the rest are named
CHUNK_CHARS = 110  # a retrieved chunk of a relevant document: under three lines of a run's column
# This page's own type sizes (no user text here): large for a room, scoped to this page's containers; a query's size
# follows its length (present.QUERY_SIZES), and every part is held to its lines (the query three, a doc two, a
# caption or a run's name one, ending in "…"), so no text pushes the runs off a 1280 x 720 screen. The page's
# navigation is hidden (a presenter layout: "Back to Failures" is the way out).
STYLE = """<style>
.stApp:has(.st-key-present) [data-testid="stHeader"] { display: none; }
.stMainBlockContainer:has(.st-key-present) { padding-top: 1rem; padding-bottom: 0.5rem; }
.st-key-present p, .st-key-present li { font-size: 1.3rem; line-height: 1.4; overflow-wrap: anywhere; }
.st-key-present [data-testid="stVerticalBlock"] { gap: 0.45rem; }
.st-key-present-runs [data-testid="stColumn"] { padding: 0.7rem 0.8rem; }
.st-key-present [data-testid="stCaptionContainer"] p { font-size: 1.05rem; }
.st-key-present-back a { padding-left: 0; }
.st-key-present-back p { font-size: 1.05rem; font-weight: 600; white-space: nowrap; }
.st-key-present-query p { line-height: 1.15; font-weight: 600; }
.st-key-present-q-large p { font-size: 2.3rem; }
.st-key-present-q-medium p { font-size: 1.9rem; }
.st-key-present-q-small p { font-size: 1.55rem; line-height: 1.2; }
.st-key-present-q-smaller p { font-size: 1.3rem; line-height: 1.25; }
.st-key-present-relevant p { font-size: 1.15rem; }
.st-key-present .st-key-present-relevant p { display: flex; gap: 0.35rem; align-items: baseline; white-space: nowrap; }
.st-key-present-relevant p > span { flex: 0 1 auto; min-width: 0; overflow: hidden; text-overflow: ellipsis; }
[class*="st-key-present-landed"] { margin-top: -0.5rem; }
[class*="st-key-present-landed"] p { font-size: 1.5rem; }
.st-key-present ul { margin: 0 0 1rem; padding: 0; list-style: none; }
.st-key-present li { margin: 0; padding: 0; }
[class*="st-key-present-small"] li, [class*="st-key-present-chunk"] li, [class*="st-key-present-instead"] li {
  font-size: 1.05rem; line-height: 1.3; }
.st-key-present-query p, .st-key-present-headline p, .st-key-present-relevant-doc p, .st-key-present-relevant p,
  .st-key-present li {
  display: -webkit-box; -webkit-box-orient: vertical; overflow: hidden; -webkit-line-clamp: 2; }
.st-key-present-query p { -webkit-line-clamp: 3; }
[class*="st-key-present-chunk"] li:nth-child(2) { -webkit-line-clamp: 3; }
[class*="st-key-present-answer"] li { font-size: 1.1rem; line-height: 1.3; }
[class*="st-key-present-answer"] li:first-child { -webkit-line-clamp: 1; }
[class*="st-key-present-answer"] li:nth-child(2) { -webkit-line-clamp: 3; }
[class*="st-key-present-run"] li:first-child, [class*="st-key-present-small"] li,
  [class*="st-key-present-chunk"] li:first-child, [class*="st-key-present-instead"] li:first-child {
  -webkit-line-clamp: 1; }
[data-testid="stLayoutWrapper"]:has(> .st-key-present-script), .st-key-present-script { display: none; }
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

v = layout.view(PAGE, own=("query", "miss", "source", "search", "sort", "walk", "grade", "pair"))
st.html(STYLE)
if v.evaluation is None:
    layout.error(v.error or "The files cannot be scored.")
    st.page_link("views/data.py", label="Fix the files on the Data page", icon=":material/upload_file:")
    layout.stop()
k = v.k
mode = state.get("miss") if state.get("miss") in MISS_MODES else FAILURE_MODE
order = state.get("sort", "worst")
order = order if order in SORT_ORDERS else "worst"
walking_answers = state.get("walk") == "answers"
lead = None
if walking_answers:  # the Answers page's list: retrieval better, answer worse
    lead, sequence = present.answer_sequence(v.dataset, k, tuple(v.runs), state.get("grade"), state.get("pair"))
else:
    sequence = present.sequence(v.dataset, k, mode, tuple(v.runs), tuple(state.get("source", [])),
                                state.get("search", "") or "", order)
back, back_label, followed = (("views/answers.py", "Back to Answers", ANSWERS_FOLLOWED) if walking_answers else
                              ("views/failures.py", "Back to Failures", FOLLOWED))
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


def instead(doc: StoryDoc) -> str:
    """A doc that came instead: its title; for a chunk, the start of the chunk's own text first, then its document's
    title (a chunk's id means nothing to a room)."""
    if doc.chunk_id and doc.excerpt:
        return f"“{md_text(doc.excerpt)}” :gray[{md_text(doc.name)}]"
    return f"**{md_text(doc.name)}**"


def listed(key: str, items: list[str]) -> None:
    """``items`` (Markdown, user text escaped) as one list in the container ``key``, without bullets: the page's
    style holds each entry to its lines (a caption one, an entry two), so a run's part keeps its height."""
    with st.container(key=key):
        st.markdown("\n".join(f"- {item}" for item in items))


previous_q, next_q = neighbours(sequence, query)
with st.container(key="present"):
    top = st.columns([2.1, 4.9, 2.1, 1.5, 1.5], vertical_alignment="center")
    with top[0]:  # the way out of a layout without page navigation, as the Failures page had it
        st.container(key="present-back").page_link(
            back, label=back_label, icon=":material/arrow_back:", query_params=layout.link_params(followed),
            help="The page this list came from, with the same k, runs and query")
    with top[1]:
        what = "Failure" if not walking_answers else f"{lead.better} retrieves better, answers worse: query"
        where = (f"{what} {sequence.index(query) + 1} of {len(sequence)}" if query in sequence
                 else f"Not in the list of {len(sequence)} {'queries' if walking_answers else 'failures'} (opened by "
                      "its link)")
        st.caption(md_text(f"{where} at k = {k} · arrow keys: next, previous"),
                   help=f"k = {k}: the top {k} docs of a run's list are retrieved. Listed: the queries that "
                        f"{MISS_MODES[mode]} in at least one run shown, in the Failures page's order. Walk them "
                        "with the arrow keys (left, right), a presentation clicker (Page Down / Page Up) or the "
                        "buttons.")
    with top[2]:
        numbers = st.popover("The numbers", icon=":material/functions:", width="stretch")
    with top[3]:
        st.button("Previous", on_click=go, args=(previous_q,), disabled=previous_q is None, shortcut="Left",
                  key="present.previous", width="stretch")
    with top[4]:
        st.button("Next", on_click=go, args=(next_q,), disabled=next_q is None, shortcut="Right",
                  key="present.next", width="stretch", type="primary")

    if query is None:
        st.info(md_text(f"No query where the better retriever answers worse at k = {k}: nothing to present (Back to "
                        "Answers, above, leads out)." if walking_answers else
                        f"No query fails at k = {k} with these settings: nothing to present (Back to Failures, "
                        "above, leads out)."))
        layout.stop()
    graded = {}
    if walking_answers:
        loaded = caching.kept(present.answer_story, entries=128)(v.dataset, query, k, lead.metric, lead.better,
                                                                lead.worse)
        if layout.failed(loaded):
            layout.stop()
        story, said_first = loaded.value.story, loaded.value.headline
        graded = {a.run: a for a in loaded.value.answers}
    else:
        loaded = caching.kept(present.story, entries=128)(v.dataset, query, k, tuple(v.runs), mode)
        if layout.failed(loaded):
            layout.stop()
        story = loaded.value
        said_first = story.headline

    typed = present.shown_query(story.query_text or "")
    st.caption("The customer typed" + (" (its start: the whole text is under The numbers)" if typed.cut else ""))
    with st.container(key="present-query"), st.container(key=f"present-q-{typed.size}"):
        st.markdown(md_text(typed.text) if story.query_text else
                    md_text(f"query {story.query}") + " :gray[(no query text in the labels)]")

    relevant = story.relevant
    st.caption("What was relevant" if len(relevant) == 1 else f"What was relevant ({len(relevant)} docs)")
    if len(relevant) == 1:
        doc = relevant[0]
        st.container(key="present-relevant-doc").markdown(
            f":green-background[**✔ {md_text(doc.name)}**]" + (f" – {md_text(doc.excerpt)}" if doc.excerpt else ""))
    else:  # titles only, on one line, so each run's part stays on the first screen
        st.container(key="present-relevant").markdown(
            " ".join(f":green-background[**✔ {md_text(doc.name)}**]" for doc in relevant[:MAX_RELEVANT])
            + (md_text(f" and {len(relevant) - MAX_RELEVANT} more") if len(relevant) > MAX_RELEVANT else ""))

    # Which runs failed, then each run's part: where the relevant docs landed in its list, what came instead.
    st.container(key="present-headline").markdown(md_text(said_first))
    columns = st.container(key="present-runs").columns(len(story.runs), border=True)
    for i, (column, run) in enumerate(zip(columns, story.runs)):
        with column:
            listed(f"present-run-{i}", [f"**{md_text(run.run)}** :gray[:small[{md_text(run.model)}]]",
                                        f":red[**✘ {md_text(run.summary)}**]" if run.failed
                                        else f":green[✔ {md_text(run.summary)}]"])
            if len(run.landings) == 1:
                spot = run.landings[0]
                said = md_text(spot.said)
                st.container(key=f"present-landed-{i}").markdown(
                    f":green[**{said}**]" if spot.in_top_k else f":red[**{said}**]")
            else:  # several: the rank alone beside each title, a line each
                lines = []
                for spot in run.landings[:MAX_RELEVANT]:
                    words = md_text(f"#{spot.rank}" if spot.rank is not None else spot.said)
                    lines.append((f":green[**{words}**]" if spot.in_top_k else f":red[**{words}**]")
                                 + f" :gray[{md_text(spot.name)}]")
                if len(run.landings) > MAX_RELEVANT:
                    lines.append(f":gray[and {len(run.landings) - MAX_RELEVANT} more relevant docs]")
                listed(f"present-small-{i}", lines)
            came = run.instead
            if run.run in graded:  # walk=answers: the answer it wrote, its grade, the judge's reason
                answer = graded[run.run]
                grade = "no grade" if answer.grade is None else f"{answer.grade:g}"
                listed(f"present-answer-{i}", [f":gray[Its answer, graded] **{md_text(grade)}** :gray[on "
                                               f"{md_text(answer.metric)}]",
                                               f"“{md_text(answer.answer)}”" if answer.answer else
                                               ":gray[(no answer text in the grade file)]",
                                               f":gray[Why: {md_text(answer.reason)}]" if answer.reason else
                                               ":gray[(no reason given)]"])
                continue
            if run.chunks_found:  # a run of chunks: what it took from the relevant document, evidence marked
                chunk = run.chunks_found[0]
                share = "" if run.evidence_recall is None else f" · {run.evidence_recall:.0%} of the evidence"
                whose = f" :gray[{md_text(chunk.name)}]" if len(relevant) > 1 else ""  # one: named above
                which = "Its relevant chunk" if len(run.chunks_found) == 1 else "Its first relevant chunk"
                text = doc_cards.marked(chunk.text, chunk.evidence, CHUNK_CHARS)
                listed(f"present-chunk-{i}", [f":gray[{which}{share}]", f"#{chunk.rank} {text}{whose}"])
                came = run.instead[:1]  # the chunk takes the place of a second doc that came instead
            more = run.more_instead + len(run.instead) - len(came)
            if came:  # titles first (a chunk's own text first), the first ones; the rest counted
                listed(f"present-instead-{i}", [f":gray[Came instead, in the top {k}:]"]
                       + [f"#{doc.rank} {instead(doc)}" for doc in came]
                       + ([f":gray[and {more} more in the top {k}]"] if more else []))
            else:
                listed(f"present-instead-{i}", [f":gray[Nothing else in the top {k}: every place went to a relevant "
                                                "doc.]"])

with numbers:
    shown_runs = (lead.better, lead.worse) if walking_answers else tuple(v.runs)
    drill = present.drill_down(v.dataset, query, k, shown_runs)
    if not layout.failed(drill):
        dd = drill.value
        st.markdown("**The numbers behind this failure**")
        if typed.cut:
            st.caption("The customer typed")
            st.markdown(md_text(story.query_text))
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
                                                help="1 / the rank of the first relevant doc (0 when its list holds none)"),
            "first_rank": st.column_config.TextColumn("first relevant rank", alignment="right"),
            "n_returned": st.column_config.NumberColumn("docs returned"),
        })
    if walking_answers:
        st.page_link("views/answers.py", label="Open this query on the Answers page (both answers in full)",
                     icon=":material/grading:", query_params=layout.link_params(ANSWERS_FOLLOWED))
    st.page_link("views/failures.py", label="Open this query on the Failures page (every doc, the ledger)",
                 icon=":material/search_insights:", query_params=layout.link_params(FOLLOWED))
with st.container(key="present-script"):  # hidden: no gap below the failure
    st.html(SCRIPT.format(position=sequence.index(query) if query in sequence else -1), unsafe_allow_javascript=True)
