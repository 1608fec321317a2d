"""Failures: the queries missed at k, each one opened up (every run's ranked list), and runs compared.

With a workspace, this evaluation can be saved (each run under a model line), which shows what each
run changed against its line's earlier runs, regressions first; an opened query then shows its
failure-ledger entry (first seen failing, fixed, regressed) with its status, cause tags and note,
which a person edits here.
"""

import pandas as pd
import streamlit as st

from evalcore.store.ledger import CAUSE_TAGS, STATUS_LABELS, STATUSES
from evalcore.safe_text import md_text, to_csv
from evalcore.analyses.failures import SORT_ORDERS, neighbours
from evalcore.metrics.failure import FAILURE_MODE, MISS_MODES, MISS_NAMES
from evalcore.warning_log import plural

from dashboard import access_ui, caching, doc_cards, layout, saved, state
from dashboard.page_models import failures
from dashboard.page_models.failures import COMPARE_COLUMNS, LIST_COLUMNS

PAGE = "failures"
PICKER_SIZE = 100  # queries offered in the query picker around the open one; next / previous walk all of them
PRESENTED = ("data", "runs", "k", "query", "miss", "source", "search", "sort")  # what the presenter view follows
ORDER_LABELS = {"worst": "worst first", "query": "query id", "first_rank": "deepest first relevant doc",
                "source": "by source, worst first"}
SCROLL = """<script>/* row {n} */
(function scroll(tries) {{
  const heading = document.querySelector('.st-key-failures-drill');
  if (heading) {{
    heading.scrollIntoView({{block: 'start'}});
    document.querySelector('[data-testid="stMain"]')?.scrollBy(0, -16);  // a little room above the heading
  }}
  else if (tries > 0) setTimeout(() => scroll(tries - 1), 100);
}})(20);
</script>"""
"""Brings the drill-down's heading to the top of the screen after a row click (static script; the number makes each
click's script differ, so it runs again)."""
v = layout.view(PAGE, own=("query", "miss", "source", "search", "sort", "vs"))
layout.header("Failures", v, "The queries a run misses at k and why: open one to see what every run returned.")
layout.words("missed a relevant doc", "found nothing relevant", "got only a fragment", "first relevant rank", "unjudged",
             "came instead",
             "recall@k", "k",
             "source", "model line", "failure ledger", "regression")
v = layout.controls(PAGE, v)
k = v.k

# ---------------------------------------------------------------- filters
sources_known = caching.kept(failures.source_values, entries=16, copies=True)(v.dataset)
cols = st.columns([2, 2, 2, 2])
with cols[0]:
    # A third kind of failure with evidence spans: relevant, but too little of the evidence.
    if caching.kept(failures.has_evidence, entries=16)(v.dataset):
        asked = state.get("miss", FAILURE_MODE)
        mode = st.selectbox("A query failed when it", options=list(MISS_MODES), format_func=MISS_NAMES.get,
                            help="; ".join(f"{MISS_NAMES[m]}: {MISS_MODES[m].split(' (', 1)[1].rstrip(')')}"
                                           for m in MISS_MODES) + ". Fragments count the runs with evidence only.",
                            **state.bind(PAGE, "miss", asked if asked in MISS_MODES else FAILURE_MODE,
                                         lambda m: None if m == FAILURE_MODE else m))
    else:
        wider = st.toggle("Also the queries that missed some relevant doc",
                          help=f"Off: the failures, queries that {MISS_MODES[FAILURE_MODE]}, hit@k = 0 (the count "
                               f"the ledger, History and the report use). On: every query that {MISS_MODES['any']}, "
                               "recall@k < 1.",
                          **state.bind(PAGE, "miss", state.get("miss") == "any", lambda on: "any" if on else None))
        mode = "any" if wider else FAILURE_MODE
with cols[1]:
    chosen_sources = [s for s in state.get("source", []) if s in sources_known]
    sources = st.multiselect("Source", options=sources_known, placeholder="every source",
                             help="Where the query came from (the labels' source column).",
                             **state.bind(PAGE, "source", chosen_sources, list))
with cols[2]:
    search = st.text_input("Search query text", placeholder="words or a query id",
                           help="Matches the query id or text, ignoring case; taken literally.",
                           **state.bind(PAGE, "search", state.get("search", "")))
with cols[3]:
    order = state.get("sort", "worst")
    order = order if order in SORT_ORDERS else "worst"
    order = st.selectbox("Order", options=list(SORT_ORDERS), format_func=ORDER_LABELS.get,
                         help="Next and previous walk through the list in this order.",
                         **state.bind(PAGE, "sort", order))

said = caching.kept(failures.headline)(v.dataset, k, mode, tuple(v.runs))
layout.headline(said, v, k)

missed = caching.kept(failures.missed_at_k, entries=128)(v.dataset, k, mode, tuple(v.runs), tuple(sources),
                                                         search or "", order)
if missed is None:  # the header has said why the files cannot be scored
    layout.stop()
table, sequence = missed.table, missed.sequence
evaluated = set(failures.evaluated_queries(v.dataset))
query = state.get("query")
if query is not None and query not in evaluated:
    layout.error(f"The link asks for query {query}, which is not an evaluated query of these labels.")
    state.set("query", None)
    query = None


def open_query(q: str | None) -> None:
    state.set("query", q)
    state.show_in_widget(PAGE, "query", q)


def picked(table_key: str, rows_key: str) -> None:
    """A row selected in a table opens that query below, and the page scrolls to it."""
    selection = state.remembered(table_key)["selection"]["rows"]
    shown = state.remembered(rows_key, [])
    if selection and selection[0] < len(shown):
        open_query(shown[selection[0]])
        state.remember("failures.scroll", state.remembered("failures.scroll", 0) + 1)
        state.remember("failures.scroll_now", True)


# The comparison is computed only while its tab is open (a new k costs as much again as the list).
missed_tab, compare_tab = st.tabs(["Missed at k", "Runs compared"], key="failures.tab", on_change="rerun")

# ---------------------------------------------------------------- the list
with missed_tab:
    st.markdown(md_text(missed.counts))
    st.caption(md_text(missed.caption))
    shown = missed.shown
    if missed.more:
        st.caption(md_text(missed.more))
    state.remember("failures.rows", shown["query"].to_numpy(dtype=object).tolist())
    selected = failures.selected_row(shown, query)
    layout.table(
        shown, key="failures.table", on_select=lambda: picked("failures.table", "failures.rows"),
        selection_mode="single-row", selection_default={"selection": {"rows": selected}} if selected else None,
        hide_index=True, width="stretch", height=320,
        column_order=LIST_COLUMNS,
        column_config={
            "query_text": st.column_config.TextColumn("what the customer typed", width="large"),
            "found": st.column_config.TextColumn(f"relevant in top {k}"),
            "recall": st.column_config.NumberColumn(f"recall@{k}", format="%.2f"),
            "first_rank": st.column_config.TextColumn("first relevant rank", alignment="right",
                                                      help="The rank of the run's first relevant doc, at any depth; "
                                                           "not in its top N: no relevant doc in its whole list "
                                                           "of N"),
            "ranks": st.column_config.TextColumn("where each relevant doc landed", width="medium"),
        })
    st.download_button("Download this list (CSV)", data=lambda: to_csv(table.frame()), file_name=f"failures_k{k}.csv",
                       mime="text/csv", on_click="ignore", icon=":material/download:", key="failures.csv")
    st.page_link("views/present.py", label="Present this list in a meeting, one failure at a time",
                 icon=":material/co_present:", query_params=layout.link_params(PRESENTED),
                 help="Large type for a shared screen, in this order; the arrow keys walk it.")

# ---------------------------------------------------------------- runs compared
with compare_tab:
    if len(v.all_runs) < 2:
        st.info("Load a second run to see which queries one run gets and another misses.")
    elif not compare_tab.open:
        pass
    else:
        pair = st.columns(2)
        # Best first: the best against the next best.
        ranked = caching.kept(failures.ranked_runs, entries=32)(v.dataset, tuple(v.all_runs))
        with pair[0]:
            a = st.selectbox("Run", options=v.all_runs, **state.bind(
                PAGE, "baseline", v.baseline if state.get("baseline") in v.all_runs else ranked[0]))
        others = [r for r in v.all_runs if r != a]
        vs = state.get("vs")
        vs = vs if vs in others else next(r for r in ranked if r != a)
        with pair[1]:
            b = st.selectbox("against", options=others, **state.bind(PAGE, "vs", vs))
        compared = caching.kept(failures.runs_compared, copies=True)(
            v.dataset, k, a, b, FAILURE_MODE if mode == "fragment" else mode, tuple(sources), search or "")
        diffs, diffs_shown = compared.frame, compared.shown
        st.caption(md_text(compared.caption))
        if compared.more:
            st.caption(md_text(compared.more))
        state.remember("failures.compare_rows", diffs_shown["query"].tolist())
        layout.table(
            diffs_shown, key="failures.compare", on_select=lambda: picked("failures.compare", "failures.compare_rows"),
            selection_mode="single-row", hide_index=True, width="stretch", height=320,
            column_order=COMPARE_COLUMNS,
            column_config={
                "query_text": st.column_config.TextColumn("what the customer typed", width="large"),
                "recall_gets": st.column_config.NumberColumn(f"recall@{k} (gets)", format="%.2f"),
                "recall_misses": st.column_config.NumberColumn(f"recall@{k} (misses)", format="%.2f"),
                "ranks_gets": st.column_config.TextColumn("relevant ranks (gets)"),
                "ranks_misses": st.column_config.TextColumn("relevant ranks (misses)"),
            })
        st.download_button("Download these queries (CSV)", data=lambda: to_csv(diffs),
                           file_name=f"runs_compared_k{k}.csv", mime="text/csv", on_click="ignore",
                           icon=":material/download:", key="failures.compare_csv")

opened = saved.workspace_opened()
known = saved.saved_runs(v.dataset) if opened.ok else {}

# ---------------------------------------------------------------- drill-down
def one_query() -> None:
    """The open query up close: what the customer typed, the relevant docs and each run's ranked list, then its
    failure-ledger entry."""
    st.divider()
    with st.container(key="failures-drill"):
        st.subheader("One query up close", anchor=False)
    if state.take("failures.scroll_now"):  # a row was clicked: bring the query into view
        st.html(SCROLL.format(n=state.remembered("failures.scroll", 0)), unsafe_allow_javascript=True)
    # The picker offers the queries around the open one (thousands of options would slow every rerun).
    centre = sequence.index(query) if query in sequence else 0
    low = max(0, centre - PICKER_SIZE // 2)
    options = list(sequence[low:low + PICKER_SIZE])
    if query is not None and query not in options:
        options = [query] + options
    previous_q, next_q = neighbours(sequence, query)
    nav = st.columns([2, 6, 2, 3], vertical_alignment="bottom")  # wide enough for "Previous", its icon and key
    with nav[0]:
        st.button("Previous", on_click=open_query, args=(previous_q,), disabled=previous_q is None, shortcut="P",
                  icon=":material/arrow_back:", key="failures.previous", width="stretch")
    with nav[1]:
        texts = table.query_texts(options)

        def describe(q: str) -> str:
            text = texts.get(q)
            return f"{q} · {text}" if text else q

        st.selectbox("Query", options=options, format_func=describe, placeholder="pick a failure from the list",
                     **state.bind(PAGE, "query", query))
    with nav[2]:
        st.button("Next", on_click=open_query, args=(next_q,), disabled=next_q is None, shortcut="N",
                  icon=":material/arrow_forward:", key="failures.next", width="stretch")
    with nav[3]:
        position = f"{sequence.index(query) + 1} of {len(sequence)}" if query in sequence else f"{len(sequence)} in the list"
        st.caption(md_text(f"{position} · keys: N next, P previous"))
        st.page_link("views/present.py", label="Present these failures", icon=":material/co_present:",
                     query_params=layout.link_params(PRESENTED),
                     help="One failure at a time in large type for a shared screen, same list and order; arrow keys "
                          "walk it.")

    if query is None:
        st.info("Select a row in the list above, pick a query, or press N to open the first failure.")
        return

    loaded = failures.drill_down(v.dataset, query, k, tuple(v.runs))
    if layout.failed(loaded):
        return
    dd = loaded.value
    if query not in sequence:
        st.caption(md_text(f"{query} is not in the list above (it is not missed at k = {k} with these filters); "
                           "shown because it was asked for."))

    st.markdown("**What the customer typed**")
    st.code(dd.query_text if dd.query_text else "(the labels give no query_text; the query id is all there is)",
            language=None, wrap_lines=True)
    blind = None if dd.blind is None else ("blind judgment" if dd.blind else "judged after seeing rankings")
    facts = [f"query id {dd.query}"] + [f"{name} {value}" for name, value in (("source", dd.source), ("split", dd.split))
                                        if value is not None] + ([blind] if blind else [])
    facts.append(f"{plural(len(dd.relevant), 'relevant doc')}, {dd.judged_non_relevant} judged non-relevant")
    st.caption(md_text(" · ".join(facts) + f" · k = {k} · n = 1 query (this one's own scores) · labels "
                                          f"{dd.labels}#{dd.fingerprint}"))
    for note in dd.notes:
        st.warning(md_text(note))
    docs_slot = st.container()  # the docs come first (filled at the end of this page), then the ledger

    # ---------------------------------------------------------------- this query in the failure ledger
    st.markdown("**In the failure ledger**")
    tracked = [r for r in dd.runs if r in known]
    if not opened.ok:
        st.caption("No workspace: the ledger is not available.")
    elif not tracked:
        st.info("Save this evaluation to the workspace (below) to track this query: first seen failing, fixed, "
                "regressed, with a status, cause tags and a note.")
    else:
        ledger_run = tracked[0]
        if len(tracked) > 1:
            ledger_run = st.selectbox("Run (its model line)", options=tracked, key="failures.ledger_run",
                                      format_func=lambda r: f"{r} · line {known[r].line}")
        where = known[ledger_run]
        got = saved.entry(where.line, query, where.labels)
        if not got.ok:
            st.info(md_text(got.error))
        else:
            entry = got.value
            row = entry.row
            facts = [f"line {entry.line}", f"status {row.get('status_label') or 'none (never failed)'}"
                     + (f" (set by {row['status_by']})" if row.get("status_by") else "")]
            for label, run_col, when in (("first seen failing", "first_failed_run", "first_failed_at"),
                                         ("fixed", "fixed_run", None), ("regressed", "regressed_run", None)):
                value = row.get(run_col)
                if value is not None and not pd.isna(value) and str(value):
                    stamp = row.get(when) if when else None
                    facts.append(f"{label} in run {value}" + (f" ({layout.when(stamp)})" if stamp is not None
                                                              and not pd.isna(stamp) else ""))
            facts.append(f"k = {row.get('k')} · labels {entry.labels}")
            st.caption(md_text(" · ".join(facts)))
            layout.table(entry.timeline, hide_index=True, width="stretch",
                         column_order=["run_id", "run", "model", "uploaded_at", "labels_version", "passed", "first_rank",
                                       "event"],
                         column_config={"passed": st.column_config.CheckboxColumn(f"passed at k = {row.get('k')}"),
                                        "first_rank": st.column_config.NumberColumn("first relevant rank")})
            flash = state.take("failures.ledger_saved")
            if flash:
                st.success(md_text(flash), icon=":material/check_circle:")
            statuses = list(STATUS_LABELS)
            tag_options = list(dict.fromkeys([*CAUSE_TAGS, *entry.tags]))
            form_key = f"ledger.{entry.line}.{entry.labels}.{entry.query}"
            with st.form(form_key):
                cols = st.columns([1, 2])
                with cols[0]:
                    status = st.selectbox("Status", options=statuses, format_func=STATUS_LABELS.get,
                                          index=statuses.index(entry.status) if entry.status in statuses else None,
                                          placeholder="no status", key=f"{form_key}.status",
                                          help="; ".join(f"{STATUS_LABELS[s]}: {d}" for s, d in STATUSES.items()))
                with cols[1]:
                    tags = st.multiselect("Cause tags", options=tag_options, default=list(entry.tags),
                                          accept_new_options=True, key=f"{form_key}.tags",
                                          help="; ".join(f"{t}: {d}" for t, d in CAUSE_TAGS.items())
                                          + ". Type to add your own.")
                note = st.text_area("Note", value=entry.note, key=f"{form_key}.note", max_chars=10_000,
                                    placeholder="What a person found out about this query")
                if st.form_submit_button("Save to the ledger", icon=":material/save:", help=access_ui.refusal("edit_ledger"),
                                         disabled=bool(access_ui.refusal("edit_ledger"))):
                    done = saved.edit_entry(entry, status, tags, note)
                    if not layout.failed(done):
                        changed_parts = ", ".join(done.value) or "nothing changed"
                        state.remember("failures.ledger_saved",
                                       f"Saved to the ledger of line {entry.line}, query {entry.query}: {changed_parts}.")
                        for suffix in ("status", "tags", "note"):
                            state.take(f"{form_key}.{suffix}")
                        st.rerun()
            if len(entry.log):
                with st.expander(f"Edit log ({len(entry.log)})"):
                    layout.table(entry.log, hide_index=True, width="stretch")
            st.page_link("views/history.py", label=f"Line {md_text(entry.line)} over time, and its whole ledger",
                         icon=":material/history:", query_params={"line": entry.line})

    with docs_slot:
        st.markdown("**Relevant docs, and where each run put them**")
        st.caption(md_text(f"✔ in the run's top {k} (retrieved), ✘ below it. Titles come from the documents file when it "
                           "has a title column.") + ("" if dd.has_text else " No text for these docs: load a documents "
                                                     "file with text (and titles) on the Data page to read them here."))
        doc_cards.relevant_docs(dd)

        depth_shown = st.slider("Ranks shown", min_value=min(5, dd.depth), max_value=dd.depth,
                                value=min(dd.depth, max(k + 5, 20)), key="failures.ranks_shown",
                                help="How far down each run's list to show. Relevant docs further down are listed above.")
        st.markdown("**Each run's ranked list**")
        st.caption(md_text(f"Green ✔ relevant, red ✘ judged not relevant, grey: unjudged (no label either way). The top {k} "
                           "docs are the chunks retrieved; the docs below k are grey. Each list scrolls on its own."))
        for i, (column, run) in enumerate(zip(st.columns(len(dd.runs)), dd.runs)):
            with column:
                st.markdown(f"**{md_text(run)}** · {md_text(dd.models[run])}")
                ranking = dd.ranking(run)
                if ranking.empty:
                    st.info("No ranking for this query.")
                    continue
                with st.container(height=760 if dd.has_text else "content", border=True, key=f"failures.list.{i}"):
                    doc_cards.ranked_list(ranking, k, depth_shown, dd.has_text)
        with st.expander("This query's numbers in each run (recall, reciprocal rank)", icon=":material/functions:"):
            st.caption(md_text(f"query {dd.query} · k = {k} · n = 1 query (this one's own scores) · labels "
                               f"{dd.labels}#{dd.fingerprint}"))
            layout.table(failures.scores_shown(dd), hide_index=True, width="stretch", column_config={
                f"recall@{k}": st.column_config.NumberColumn(format="%.2f",
                                                             help=f"Share of this query's relevant docs in the top {k}"),
                f"hit@{k}": st.column_config.NumberColumn(format="%.0f", help=f"1 if a relevant doc is in the top {k}"),
                "rr": st.column_config.NumberColumn("reciprocal rank", format="%.3f",
                                                    help="1 / the rank of the first relevant doc; 0 if none was returned"),
                "first_rank": st.column_config.TextColumn("first relevant rank", alignment="right"),
                "n_returned": st.column_config.NumberColumn("docs returned"),
            })


# ---------------------------------------------------------------- the failure archive: save this evaluation
def archive() -> None:
    """Save this evaluation to the workspace (each run under a model line) and what each run changed against its
    line, regressions first. Below the drill-down: a row click shows the query first."""
    st.divider()
    st.subheader("Failure archive")
    if not layout.failed(opened):
        status_line = st.empty()  # filled below, after a save this run may make
        every_run_saved = all(r in known for r in v.all_runs)
        with st.expander("Save this evaluation to the workspace" + (" again" if every_run_saved else ""),
                         expanded=not every_run_saved, icon=":material/save:"):
            with st.form("failures.save_form", border=True):
                st.markdown(md_text(f"Save this evaluation at k = {k} (scored at k = 1 and k = {k}; n = {v.n:,} queries; "
                                    f"labels {v.labels_ref}). A model line groups the runs of one model over time: by "
                                    "default the model string."))
                line_columns = st.columns(min(len(v.all_runs), 4))
                line_inputs = {}
                for i, run_name in enumerate(v.all_runs):
                    default_line = known[run_name].line if run_name in known else v.model(run_name)
                    with line_columns[i % len(line_columns)]:
                        line_inputs[run_name] = st.text_input(
                            f"Model line of {md_text(run_name)}", value=default_line,
                            key=f"failures.line.{v.dataset.key}.{i}", max_chars=200)
                save_clicked = st.form_submit_button("Save this evaluation to the workspace", icon=":material/save:",
                                                     disabled=bool(access_ui.refusal("save_evaluation")),
                                                     help=access_ui.refusal("save_evaluation"))
        if save_clicked:
            with st.spinner("Saving the evaluation and comparing each run with its line…"):
                result = saved.save_evaluation(v.dataset, k, {r: (x or "").strip() for r, x in line_inputs.items()})
            state.remember("failures.saved", (v.dataset.key, k, result))
            if result.ok:
                st.rerun()  # the drill-down's ledger above follows the save
        if known:
            status_line.caption(md_text("Saved in the server's workspace: " + "; ".join(
                f"{r} as run #{s.run_id} of line {s.line} (evaluation {s.evaluation_id})" for r, s in known.items())
                + f" · labels {saved.labels_name(v.dataset)}"))
        else:
            status_line.caption(md_text(f"Not saved yet. Saving records every query's hit or miss at k = {k} for each "
                                        "run, so the failure ledger can say what was first seen failing, fixed or "
                                        "regressed (kept in the server's workspace)"))
        last = state.remembered("failures.saved")
        if last is not None and last[0] == v.dataset.key and last[1] == k:
            result = last[2]
            if not layout.failed(result):
                stored, line_changes = result.value.saved, result.value.changes
                verb = "Saved" if stored.created else "Already saved (nothing new written)"
                st.success(md_text(f"{verb}: {stored.describe()}"), icon=":material/check_circle:")
                for change in sorted(line_changes, key=lambda c: -len(c.regressions)):  # regressions first
                    st.markdown(md_text(change.summary()))
                    if len(change.regressions):
                        st.markdown("**Regressions first**: " + md_text(
                            f"{len(change.regressions):,} queries line {change.line} passed before and fail now"))
                        layout.table(change.regressions, hide_index=True, width="stretch",
                                     column_order=["query", "query_text", "first_rank", "first_rank_before", "status_label",
                                                   "tags", "note"])
                    for title, frame in (("fixed", change.fixed), ("new failures", change.new_failures)):
                        if len(frame):
                            with st.expander(f"{title.capitalize()} in run #{change.run_id} ({len(frame):,})"):
                                layout.table(frame, hide_index=True, width="stretch",
                                             column_order=["query", "query_text", "event", "first_rank",
                                                           "first_rank_before", "status_label"])


def use_case_version(name: str, number: int, case: str) -> None:
    """Score label-set version ``number`` on every page (the data set in the URL changes) and open the new case."""
    switched = saved.with_label_version(v.dataset, name, number)
    if layout.failed(switched):
        return
    state.set("data", failures.register(switched.value))
    state.set("search", case)
    state.remember("failures.case_version", None)


def production_miss() -> None:
    """A query that failed in production, added to the labels as a new case (a new label-set version, as
    ``evalcore workspace add-cases`` makes): the next evaluation scores it."""
    if not opened.ok:
        return
    refused = access_ui.refusal("manage_label_versions")
    flash = state.take("failures.case_added")
    with st.expander("Add a production miss to the labels", icon=":material/playlist_add:", expanded=bool(flash)):
        if flash:
            st.success(md_text(flash), icon=":material/check_circle:")
        st.caption(md_text(f"A query a customer asked that came back wrong: what they typed and the docs that should "
                           f"have come back. It becomes a new version of the label set {saved.labels_name(v.dataset)} "
                           "(earlier versions stay as they were); the next evaluation scores it."))
        with st.form("failures.case_form", clear_on_submit=False, border=False):
            cols = st.columns([1, 3])
            with cols[0]:
                case_id = st.text_input("Query id", placeholder="prod-001", max_chars=200, key="failures.case_id")
                case_source = st.text_input("Source", value="production", max_chars=100, key="failures.case_source")
            with cols[1]:
                case_text = st.text_input("Query text (as the customer typed it)", max_chars=2000, key="failures.case_text")
                case_docs = st.text_area("Relevant doc ids (commas or one per line)", height=68, max_chars=20_000,
                                         key="failures.case_docs")
            new_docs = st.checkbox("These docs are not in the corpus yet",
                                   help="Off: a doc id the loaded documents do not hold is refused (a typo would "
                                        "make the case unanswerable). On: add it anyway, for a doc still to be "
                                        "written.", key="failures.case_new_docs")
            added = st.form_submit_button("Add to the labels", icon=":material/playlist_add:",
                                          disabled=bool(refused), help=refused)
        if added:
            done = saved.add_production_miss(v.dataset, case_id or "", case_text or "", case_docs or "",
                                             case_source or "", not_in_corpus_yet=bool(new_docs))
            if not layout.failed(done):
                version = done.value.version
                state.remember("failures.case_added", (f"Added query {case_id.strip()} to {version.ref}: "
                                                       f"{version.change}." if version.created else
                                                       f"{version.ref} already has this case: nothing new written."))
                state.remember("failures.case_version", (version.name, version.version, case_id.strip()))
                st.rerun()
        offered = state.remembered("failures.case_version")
        if offered is not None:
            name, number, case = offered
            st.button(f"Score {name} v{number} on every page", icon=":material/published_with_changes:",
                      key="failures.case_use", on_click=use_case_version, args=(name, number, case),
                      help="Every page then scores the new version (a new data set in the URL; the one before stays "
                           "one link away), so the case is counted and can be searched here.")


one_query()
archive()
production_miss()
