"""Blind judging: one query's pooled docs from every run, shuffled, with no rank, score or run shown.

A person marks each doc relevant or not. Alone, the marks are saved in the workspace as a new version of the label
set (the query marked blind, the judged depth recorded; earlier versions unchanged). Several judges: each saves their
own marks, kept apart (no judge is shown another's marks, nor how many marked a doc relevant); the adjudicator (an
owner) sees their agreement and disagreements, decides the ties and freezes the marks as one new version.
The pool and the panel come from `dashboard.page_models.judge` (`evalcore.analyses.judging`, `evalcore.analyses.panel`)
and every write goes through `dashboard.saved` (`evalcore.workflows.Session`); this page renders.
"""

import streamlit as st

from evalcore.safe_text import md_text
from evalcore.warning_log import plural

from dashboard import access_ui, caching, layout, saved, state
from dashboard.page_models import judge as page

PAGE = "judge"
DEFAULT_DEPTH = 10
MARKS = ("not marked yet", "relevant", "not relevant")


v = layout.view(PAGE, own=("query", "depth", "show"))
layout.header("Blind judging", v, "Judge one query without seeing any ranking: every run's top docs, pooled and "
                                  "shuffled. The marks become a new label-set version with the query marked blind, "
                                  "or wait, kept apart, for other judges and an adjudicator.")
layout.words("pooled judging", "blind labels", "several judges", "adjudicate", "label set", "fingerprint")
# The judgments extend the whole label set as read, not only the split the pages score: a new version keeps
# every query's split (the holdout stays in it, sealed) and is what "Use this version" loads.
labels = page.labels_as_read(v.dataset).value
queries = page.evaluated_queries(v.dataset)
queue = saved.rejudge_queue(labels.name)  # the one shared workspace ($EVALCORE_WORKSPACE or the per-user default)
if layout.failed(queue):
    layout.stop()
queued = queue.value
queued_queries = [q for q in queued["query"].tolist() if q in set(queries)] if not queued.empty else []
options, named = page.query_choices(v.dataset, queued_queries)

cols = st.columns([3, 1])
current = state.get("query")
if current not in options:
    current = options[0] if options else None
with cols[0]:
    query = st.selectbox(
        "Query", options=options, format_func=lambda q: named.get(q, q),
        help="Queries flagged for re-judging (evalcore audit --flag, or the Integrity page) come first, then a sampled "
             "queries file's (loaded on the Data page, with its source and stratum), then every scored query.",
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
    layout.stop()
pool = pooled.value
texts = page.pool_texts(v.dataset, pool)
names = page.pool_names(v.dataset, pool)

st.subheader("What the customer typed")
st.text(pool.query_text or f"(no query text; query id {pool.query})")
came = " · ".join(f"{word} {value}" for word, value in (("source", pool.source), ("stratum", pool.stratum)) if value)
st.caption(md_text(f"query {pool.query} · {plural(len(pool.docs), 'doc')} pooled from the top {pool.depth} of "
                   f"{plural(pool.n_runs, 'run')}, shuffled; rank, score and run are hidden · labels {v.labels_ref}"
                   + (f" · {came}" if came else "")))

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
log = saved.panel_marks(labels.name)
mine = page.own_marks(log, access_ui.actor().who, pool.query)
if mine:
    st.caption(md_text(f"You saved your marks on this pool on {layout.when(mine)}; saving them again replaces them. "
                       "Other judges' marks are never shown here."))
alone, several = st.columns(2)
with several:
    keep = st.button("Keep my marks apart (several judges)", disabled=bool(missing) or bool(barred),
                     key=f"{PAGE}.save_marks",
                     help=barred or f"Several judges: your marks are kept apart from everyone else's; the adjudicator "
                                    f"freezes them into a version. {saved.who_acts().capitalize()}.")
with alone:
    save_now = st.button("Save as a new label-set version", type="primary", disabled=bool(missing) or bool(barred),
                         key=f"{PAGE}.save", help=barred or f"One judge: your marks become a new version now. The "
                                                            f"judging round is {saved.who_acts()}.")
if keep:
    kept = saved.save_marks(v.dataset, pool, marks)
    if not layout.failed(kept):
        st.success(md_text(f"Your marks on query {pool.query} are saved, apart from every other judge's (depth "
                           f"{pool.depth}, {plural(len(pool.docs), 'doc')}). No version is made until the adjudicator "
                           "freezes the judges' marks."), icon=":material/how_to_vote:")
        log = saved.panel_marks(labels.name)
if save_now:
    judged = saved.save_judging_round(v.dataset, pool, marks)
    if not layout.failed(judged):
        version = judged.value
        n_relevant = sum(marks.values())
        state.remember(f"{PAGE}.use_choice", int(version.version))  # offered below
        st.success(md_text(f"Saved: label set {version.ref}, query {pool.query} judged blind at depth {pool.depth} "
                           f"({n_relevant} relevant of {len(pool.docs)}); {version.change}; earlier versions are "
                           "unchanged. The pages still score the labels as loaded: use this version below to score "
                           "it on every page."), icon=":material/check_circle:")


st.subheader("Several judges on this label set")
status = caching.kept(page.panel_status, entries=16)(labels.name, log)
if not status.judges:
    st.caption("Nobody has kept marks apart with \"Keep my marks apart\" yet. Each judge signs in and marks the "
               "same pools; no judge sees another's marks.")
else:
    st.caption(md_text(f"{plural(len(status.judges), 'judge')} {'has' if len(status.judges) == 1 else 'have'} saved "
                       f"marks; {plural(status.open_queries, 'query', 'queries')} wait to be frozen into a version."))
refused = access_ui.refusal("manage_label_versions")
if status.judges and refused:
    st.info("The adjudicator (a person who may add label-set versions) sees the judges' agreement and disagreements "
            "and freezes the marks; judges never see each other's marks.", icon=":material/visibility_off:")
elif status.judges:
    if status.sentence:
        st.text(status.sentence)
    differ = status.disagreements
    with st.expander(f"Disagreements to adjudicate ({len(differ)}; shows every judge's marks)",
                     expanded=state.get("show") == "disagreements"):
        if differ.empty:
            st.caption("No open pair the judges disagree on.")
        else:
            layout.table(differ[["query", "doc_id", "relevant", "not_relevant", "marks", "decided", "decided_by"]],
                         hide_index=True, width="stretch")
            pairs = list(zip(differ["query"], differ["doc_id"]))
            pair = st.selectbox("Pair to decide", options=range(len(pairs)), key=f"{PAGE}.pair",
                                format_func=lambda i: f"{pairs[i][0]} · {pairs[i][1]}"
                                                      + (" · tied" if differ["tied"].iloc[i] else ""))
            decision = st.radio("Decision", options=MARKS[1:], horizontal=True, key=f"{PAGE}.decision")
            note = st.text_input("Why (optional)", key=f"{PAGE}.decision_note", max_chars=500)
            if st.button("Record the decision", key=f"{PAGE}.adjudicate", help=f"The decision is {saved.who_acts()}."):
                done = saved.adjudicate(labels.name, pairs[pair][0], {pairs[pair][1]: decision == MARKS[1]}, note)
                if not layout.failed(done):
                    st.rerun()
    st.caption(md_text(status.freeze))
    if st.button("Freeze the judges' marks as a new label-set version", key=f"{PAGE}.freeze",
                 disabled=bool(status.unresolved) or not status.open_pairs,
                 help=f"The freeze is {saved.who_acts()}."):
        frozen = saved.freeze_panel(v.dataset)
        if not layout.failed(frozen):
            state.remember(f"{PAGE}.use_choice", int(frozen.value.version))
            st.success(md_text(f"Frozen: label set {frozen.value.ref}; {frozen.value.change}. Use this version below "
                               "to score it on every page."), icon=":material/check_circle:")


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
