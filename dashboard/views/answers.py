"""Answers: whether the run that retrieves better also answers better. Opens on one sentence (which run retrieves
better for how many queries, and how many of those it answers worse all the same), then the chart of retrieval
against the answer's grade, query by query, the list of those queries (a row opens the query: both answers, the
judge's reasons, what each run retrieved), and the numbers of ``evalcore answers`` one click away.

The grade files are uploaded on the Data page, one per run; the numbers come from `dashboard.page_models.answers`.
"""

import streamlit as st

from evalcore.safe_text import md_text, to_csv

from dashboard import caching, doc_cards, layout, state
from dashboard.page_models import answers

PAGE = "answers"
PRESENTED = ("data", "runs", "k", "grade", "pair")  # what the presenter view follows, with walk=answers
v = layout.view(PAGE, own=("grade", "pair", "query"))
layout.header("Answers", v, "Whether the run that retrieves better also answers better: each answer's grade (from "
                            "ragas, DeepEval, RAGChecker, promptfoo or a person) set beside what the run retrieved, "
                            "query by query.")
layout.words("answer grade", "answered well", "retrieval better, answer worse", "recall@k", "k", "n", "95% interval",
             "paired comparison", "p-value", "Holm correction", "rank correlation")
k = v.k
shown = caching.kept(answers.page, entries=32)(v.dataset, k, tuple(v.runs), state.get("grade"), state.get("pair"))
if shown is None:
    st.info(answers.NO_GRADES, icon=":material/grading:")
    st.page_link("views/data.py", label="Upload grade files on the Data page", icon=":material/upload_file:")
    layout.stop()
if layout.failed(shown):
    st.page_link("views/data.py", label="Fix the grade files on the Data page", icon=":material/upload_file:")
    layout.stop()
page = shown.value
lead = page.choice.lead


def present_link(label: str) -> None:
    st.page_link("views/present.py", label=label, icon=":material/co_present:",
                 query_params={**layout.link_params(PRESENTED), "walk": "answers"},
                 help="One query at a time in large type for a shared screen, in this list's order; the arrow keys "
                      "walk it.")


# ---------------------------------------------------------------- the answer, first
with st.container(key="headline"):
    link = f": [see them](#{answers.ANCHOR})" if page.queries else "."
    st.subheader(md_text(page.sentence) + link, anchor=False)
    st.markdown(md_text(page.words))
    if page.grades:
        st.markdown(md_text(page.grades))
    if page.queries:
        present_link("Present these queries in a meeting, one at a time")
    for line in page.files:
        st.caption(md_text(line))

# ---------------------------------------------------------------- what the page is about
v = layout.controls(PAGE, v)
chosen = page.choice
picks = st.columns(2)
with picks[0]:
    if len(chosen.metrics) > 1:
        st.selectbox("Grade", options=list(chosen.metrics), help="Each grade the grade files hold; the page shows one.",
                     **state.bind(PAGE, "grade", chosen.metric))
with picks[1]:
    if len(chosen.leads) > 1:
        keys = [answers.pair_key(x) for x in chosen.leads]
        labels = {answers.pair_key(x): answers.lead_label(x) for x in chosen.leads}
        st.selectbox("Runs compared", options=keys, format_func=labels.get,
                     help="Which run's better retrieval to look at, against which run.",
                     **state.bind(PAGE, "pair", answers.pair_key(lead) if lead else keys[0]))

if page.chart is not None:
    st.vega_lite_chart(spec=page.chart, width="content")
if not page.joint.empty:
    st.markdown(md_text(f"What retrieval found (a relevant doc in the top {k}, or none) against how the answer was "
                        f"graded ({chosen.metric}), in queries:"))
    layout.table(page.joint, hide_index=True, width="stretch")
st.caption(md_text(page.context))

# ---------------------------------------------------------------- the queries the sentence counts
st.subheader("Retrieval better, answer worse", anchor=answers.ANCHOR)
st.caption(md_text(page.list_caption))
query = state.get("query")


def open_query(q: str | None) -> None:
    state.set("query", q)


def picked() -> None:
    """A row selected in the list opens that query below."""
    selection = state.remembered("answers.table")["selection"]["rows"]
    rows = state.remembered("answers.rows", [])
    if selection and selection[0] < len(rows):
        open_query(rows[selection[0]])


if len(page.listed):
    rows = page.listed["query"].astype(str).tolist()
    state.remember("answers.rows", rows)
    selected = [rows.index(query)] if query in rows else []
    grade_columns = [c for c in page.listed.columns if c.startswith(chosen.metric + " ")]
    layout.table(page.listed, key="answers.table", on_select=picked, selection_mode="single-row",
                 selection_default={"selection": {"rows": selected}} if selected else None, hide_index=True,
                 width="stretch", column_config={
                     "query text": st.column_config.TextColumn("what the customer typed", width="large"),
                     **{c: st.column_config.NumberColumn(c, format="%.2f") for c in page.listed.columns
                        if c.startswith("recall@") or c in grade_columns}})
    st.download_button("Download this list (CSV)", data=lambda: to_csv(page.listed), mime="text/csv",
                       file_name=f"retrieval_better_answer_worse_k{k}.csv", on_click="ignore",
                       icon=":material/download:", key="answers.csv")

# ---------------------------------------------------------------- one query up close
st.divider()
st.subheader("One query up close", anchor=False)
if query is None:
    st.info("Select a row in the list above to read both answers, the judge's reasons and what each run retrieved.")
else:
    told = answers.query_answers(v.dataset, k, query, chosen.metric, tuple(v.runs))
    if told is not None and not layout.failed(told):
        said = told.value
        st.markdown("**What the customer typed**")
        st.code(said.query_text or f"(no query text in the labels; query id {said.query})", language=None,
                wrap_lines=True)
        columns = st.columns(max(len(said.answers), 1), border=True)
        for column, answer in zip(columns, said.answers):
            with column:
                recall = said.recall.get(answer.run)
                found = "not scored" if recall is None else f"recall@{k} {recall:.2f}"
                grade = "not graded" if answer.grade is None else f"{answer.grade:g}"
                st.markdown(f"**{md_text(answer.run)}** · {md_text(found)} · {md_text(answer.metric)} "
                            f"**{md_text(grade)}**")
                st.caption("Its answer")
                st.text(answer.answer or "(the grade file holds no answer text)")
                st.caption("The judge's reason")
                st.text(answer.reason or "(the grade file gives no reason)")
        drill = answers.drill_down(v.dataset, query, k, tuple(v.runs))
        if not layout.failed(drill):
            dd = drill.value
            st.markdown("**Relevant docs, and where each run put them**")
            doc_cards.relevant_docs(dd)
            st.markdown(f"**What each run retrieved: its top {k}**")
            st.caption("Green ✔ relevant, red ✘ judged not relevant, grey: unjudged (no label either way).")
            for column, run in zip(st.columns(len(dd.runs)), dd.runs):
                with column:
                    st.markdown(f"**{md_text(run)}** · {md_text(dd.models[run])}")
                    with st.container(height=560 if dd.has_text else "content", border=True):
                        doc_cards.ranked_list(dd.ranking(run), k, k, dd.has_text)
        st.page_link("views/failures.py", label="Open this query on the Failures page (every ranked doc, the ledger)",
                     icon=":material/search_insights:", query_params={**layout.link_params(("data", "runs", "k")),
                                                                      "query": query})

# ---------------------------------------------------------------- the numbers, one click away
with st.expander("The numbers behind this page (as evalcore answers prints them)", icon=":material/functions:"):
    numbers = caching.kept(answers.numbers, entries=16)(v.dataset, k)
    if numbers is not None:
        for line in numbers.sentences:
            st.markdown(md_text(line))
        for title, frame in (("Each run's mean grade, with its 95% interval", numbers.means),
                             ("Paired: b minus a, over the queries both graded (p after Holm across the table)",
                              numbers.pairs),
                             ("Retrieval against the answer", numbers.joint),
                             ("Where retrieval and the answer diverge", numbers.diverging),
                             ("How closely recall@k and the grade move together (Spearman)", numbers.correlation)):
            if len(frame):
                st.markdown(f"**{title}**")
                layout.table(frame, hide_index=True, width="stretch")
        st.caption("The same numbers from the command line, with the files where you keep them:")
        st.code(numbers.command, language="bash", wrap_lines=True)
