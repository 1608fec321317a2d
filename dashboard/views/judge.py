"""Blind judging: one query's pooled docs from every run, shuffled, with no rank, score or run shown.

A person marks each doc relevant or not; the marks are saved in the workspace as a new version of
the label set (the query marked blind, the judged depth recorded; earlier versions unchanged).
The pool comes from `dashboard.page_models.judge` (`evalcore.analyses.judging`) and the round is saved through
`dashboard.saved` (`evalcore.workflows.save_judging_round`, as ``evalcore judge save``); this page renders.
"""

import streamlit as st

from evalcore.safe_text import md_text
from evalcore.warning_log import plural

from dashboard import access_ui, caching, layout, saved, state
from dashboard.page_models import judge as page

PAGE = "judge"
DEFAULT_DEPTH = 10
MARKS = ("not marked yet", "relevant", "not relevant")


v = layout.view(PAGE, own=("query", "depth"))
layout.header("Blind judging", v, "Judge one query without seeing any ranking: every run's top docs, pooled and "
                                  "shuffled. The marks become a new label-set version with the query marked blind.")
layout.words("pooled judging", "blind labels", "label set", "fingerprint")
# The judgments extend the whole label set as read, not only the split the pages score: a new version keeps
# every query's split (the holdout stays in it, sealed) and is what "Use this version" loads.
labels = page.labels_as_read(v.dataset).value
queries = page.evaluated_queries(v.dataset)
queue = saved.rejudge_queue(labels.name)  # the one shared workspace ($EVALCORE_WORKSPACE or the per-user default)
if layout.failed(queue):
    st.stop()
queued = queue.value
queued_queries = [q for q in queued["query"].tolist() if q in set(queries)] if not queued.empty else []

cols = st.columns([3, 1])
current = state.get("query")
if current not in queries:
    current = queued_queries[0] if queued_queries else (queries[0] if queries else None)
with cols[0]:
    query = st.selectbox(
        "Query", options=queries,
        format_func=lambda q: f"{q} · flagged for re-judging" if q in queued_queries else q,
        help="Queries flagged for re-judging (evalcore audit --flag, or the Integrity page) are marked so.",
        **state.bind(PAGE, "query", current))
with cols[1]:
    try:
        depth = int(state.get("depth", DEFAULT_DEPTH))
    except (TypeError, ValueError):
        depth = DEFAULT_DEPTH
    depth = min(max(depth, 1), page.DEPTH)
    depth = st.number_input("Pool depth (top docs of each run)", min_value=1, max_value=page.DEPTH, step=1,
                            help="Raise it to judge deeper before quoting a larger k.",
                            **state.bind(PAGE, "depth", depth, int))

pooled = caching.kept(page.pool)(v.dataset, query, int(depth))
if layout.failed(pooled):
    st.stop()
pool = pooled.value
texts = page.pool_texts(v.dataset, pool)
names = page.pool_names(v.dataset, pool)

st.subheader("What the customer typed")
st.text(pool.query_text or f"(no query text; query id {pool.query})")
st.caption(md_text(f"query {pool.query} · {plural(len(pool.docs), 'doc')} pooled from the top {pool.depth} of "
                   f"{plural(pool.n_runs, 'run')}, shuffled; rank, score and run are hidden · labels {v.labels_ref}"))

marks = {}
for number, doc in enumerate(pool.docs, start=1):
    with st.container(border=True, key=f"judge-doc-{number}"):
        st.markdown(f"Doc {number}: {md_text(doc)}" + (f" · **{md_text(names[doc])}**" if names[doc] else ""))
        if texts is not None:
            st.text(texts.get(doc) or "(no text in the documents file)")
        choice = st.radio("Is this doc relevant to the query?", options=MARKS, horizontal=True,
                          key=f"{PAGE}.mark.{pool.query}.{pool.depth}.{doc}")
        if choice != MARKS[0]:
            marks[doc] = choice == MARKS[1]

missing = len(pool.docs) - len(marks)
barred = access_ui.refusal("judge")
if missing:
    st.caption(md_text(f"{missing:,} of {plural(len(pool.docs), 'doc')} still to mark; a blind judgment covers the "
                       "whole pool."))
if st.button("Save as a new label-set version", type="primary", disabled=bool(missing) or bool(barred),
             key=f"{PAGE}.save", help=barred or f"The judging round is {saved.who_acts()}."):
    judged = saved.save_judging_round(v.dataset, pool, marks)
    if not layout.failed(judged):
        version = judged.value
        n_relevant = sum(marks.values())
        state.remember(f"{PAGE}.use_choice", int(version.version))  # offered below
        st.success(md_text(f"Saved: label set {version.ref}, query {pool.query} judged blind at depth {pool.depth} "
                           f"({n_relevant} relevant of {len(pool.docs)}); {version.change}; earlier versions are "
                           "unchanged. The pages still score the labels as loaded: use this version below to score "
                           "it on every page."), icon=":material/check_circle:")


def use_version(name: str, number: int) -> None:
    """Switch the dashboard to a data set that scores version ``number`` (a new key in the URL; the old data set
    stays as it was, and its link still opens it)."""
    switched = saved.with_label_version(v.dataset, name, number)
    if not switched.ok:
        state.remember(f"{PAGE}.use_error", switched.error)
        return
    state.set("data", page.register(switched.value))
    state.remember(f"{PAGE}.used", number)


versions = saved.label_versions(labels.name)  # None: these labels were never saved, nothing to switch to yet
if versions is not None and not versions.empty:
    st.subheader("Score a saved version")
    numbers = versions["version"].astype(int).tolist()
    by_number = {int(r.version): r for r in versions.itertuples()}
    # The version every page scores: the one with the same judgments as this data set's labels file (the file as
    # read, whatever part of it the pages evaluate).
    as_read = page.labels_as_read(v.dataset)
    scoring = next((n for n in numbers[::-1] if as_read.ok and by_number[n].fingerprint == as_read.value.fingerprint),
                   None)
    st.caption(md_text(
        f"Every page now scores labels {v.labels_ref}"
        + (f", version {scoring} of label set {labels.name}" if scoring else ", not a saved version of the set")
        + f" (data set {v.dataset.key if not v.dataset.sample else 'sample'})."))
    if state.remembered(f"{PAGE}.use_choice") not in numbers:
        state.remember(f"{PAGE}.use_choice", numbers[-1])
    chosen = st.selectbox(
        "Label-set version", options=numbers[::-1],
        format_func=lambda n: (f"v{n} #{by_number[n].fingerprint} · "
                               f"{plural(int(by_number[n].n_queries), 'query', 'queries')} · "
                               f"{by_number[n].change}" + (" · scored now" if n == scoring else "")),
        key=f"{PAGE}.use_choice")
    st.button("Use this version", key=f"{PAGE}.use", disabled=chosen == scoring, on_click=use_version,
              args=(labels.name, int(chosen)),
              help="Every page then scores this version: a new data set whose key goes in the URL (a copied link "
                   "opens it); the data set loaded before stays as it was.")
    problem = state.take(f"{PAGE}.use_error")
    if problem:
        layout.error(problem)
    used = state.take(f"{PAGE}.used")
    if used is not None and scoring == used:
        st.success(md_text(f"Every page now scores version {used} of label set {labels.name} ({v.labels_ref})."),
                   icon=":material/swap_horiz:")
        st.page_link("views/overview.py", label="See the Overview on this version", icon=":material/leaderboard:")

rounds = saved.judging_rounds(labels.name)
if not rounds.empty:
    st.subheader("Judging rounds of this label set")
    layout.table(rounds[["version", "query", "depth", "n_docs", "n_relevant", "judge", "at"]], hide_index=True,
                 width="stretch")
