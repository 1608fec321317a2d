"""History: a model line's metrics over its runs in time, its failure ledger, and the meeting report."""

import streamlit as st

from evalcore.safe_text import md_text, to_csv
from evalcore.warning_log import plural

from dashboard import access_ui, charts, layout, saved, state
from dashboard.page_models import history as page

PAGE = "history"
state.start(PAGE, own=("line",))
layout.header("History", None, "What the workspace remembers about a model line: its metrics over its runs, the queries "
                               "it has failed (regressions first), and the one-page report for the meeting.")
layout.words("model line", "failure ledger", "regression", "fingerprint", "label set")

opened = saved.workspace_opened()
if layout.failed(opened):
    layout.stop()
st.caption("Read from the server's workspace, where every saved evaluation is kept.")

# The data on screen first: History opens on its model line, and makes its report without a detour (saving it first).
here = page.in_view(state.get("data"))
if here.evaluation_id is None:
    refused = access_ui.refusal("save_evaluation")
    k_now = layout.selections(())[2]
    st.info(f"The data on screen ({md_text(here.name)}) has no saved evaluation yet; the meeting report is made "
            "from one.")
    if st.button("Save it and prepare its report", icon=":material/description:", key="history.save_in_view",
                 disabled=bool(refused), help=refused or f"Saves its evaluation at k = {k_now} (recorded under your "
                                                          "name, as Failures' save), then prepares the report."):
        with st.spinner("Saving the evaluation, then recomputing it and drawing the charts…"):
            done = saved.save_evaluation(here.dataset, k_now, {})  # each run on its model string's line
            if not layout.failed(done):
                new_id = done.value.saved.id
                state.set("line", page.in_view(state.get("data")).line)
                state.remember("history.evaluation", new_id)
                state.remember("history.report", (new_id, page.prepare_report(state.get("data"), new_id, state.get)))

lines = saved.lines()
if lines.empty:
    st.info("Nothing saved yet. Save an evaluation on the Failures page (\"Save this evaluation to the workspace\"), "
            "or from the command line with `evalcore evaluate ... --save`.")
    layout.stop()

names = lines["line"].astype(str).tolist()
line = state.get("line")
if line is not None and line not in names:
    layout.error(f"The link asks for model line {line}, which this workspace does not have.")
    state.set("line", None)
    line = None
line = line or (here.line if here.line in names else names[0])
line = st.selectbox("Model line", options=names, help="Runs that share a model string (or the line name given when "
                    "saving), in the order they reached the workspace.", **state.bind(PAGE, "line", line))

# ---------------------------------------------------------------- metrics over time
if saved.evaluations(line).empty:
    st.info(f"The model line {md_text(line)} has runs in the workspace but no saved evaluation yet. Save one on "
            "the Failures page (\"Save this evaluation to the workspace\") to start its history.")
    layout.stop()
found = saved.history(line)
if layout.failed(found):
    layout.stop()
history = found.value
if history.empty:
    st.info("This line has no saved evaluation yet.")
    layout.stop()
st.subheader("Metrics over the line's runs")
metrics_known, metrics_main = page.metric_choices(history)
metrics = st.multiselect("Metrics", options=metrics_known, default=metrics_main, key=f"history.metrics.{line}")
shown = page.line_history(history, line, metrics)
label_set = shown.label_set
st.altair_chart(charts.history_chart(shown.table, line, subtitle=shown.context), width="stretch")
st.caption(md_text(shown.context))
table = shown.table
layout.table(table, hide_index=True, width="stretch",
             column_order=["step", "run_id", "run", "model", "uploaded_at", "labels_version", "metric", "mean",
                           "interval", "n", "fingerprint", "chunks", "evaluation_id"],
             column_config={"mean": st.column_config.NumberColumn(format="%.4f"),
                            "interval": st.column_config.TextColumn("95% interval"),
                            "uploaded_at": st.column_config.TextColumn("uploaded")})

# ---------------------------------------------------------------- what the latest run changed
st.subheader("What the latest run changed")
changed = saved.changes(line, label_set)
if not layout.failed(changed):
    st.markdown(md_text(changed.value.summary()))
    if len(changed.value.regressions):
        st.markdown("**Regressions** (passed in the line's previous run, fail now)")
        layout.table(changed.value.regressions, hide_index=True, width="stretch",
                     column_order=["query", "query_text", "first_rank", "first_rank_before", "status_label", "tags",
                                   "note"])

# ---------------------------------------------------------------- the ledger
st.subheader("Failure ledger")
found_ledger = saved.ledger(line, label_set)
if not layout.failed(found_ledger):
    ledger = page.ledger(found_ledger.value, label_set)
    frame = ledger.table
    st.caption(md_text(ledger.caption))
    layout.table(frame, hide_index=True, width="stretch", height=min(35 * len(frame) + 40, 400),
                 column_order=["query", "query_text", "status_label", "status_by", "first_rank", "first_failed_run",
                               "first_failed_at", "fixed_run", "regressed_run", "n_failed", "n_runs", "tags", "note"],
                 column_config={"status_label": st.column_config.TextColumn("status"),
                                "query_text": st.column_config.TextColumn("what the customer typed", width="medium"),
                                "note": st.column_config.TextColumn(width="medium")})
    st.download_button("Download the ledger (CSV)", data=lambda: to_csv(frame), file_name="ledger.csv",
                       mime="text/csv", on_click="ignore", icon=":material/download:", key="history.ledger_csv")

# ---------------------------------------------------------------- the meeting report
st.subheader("Report for the meeting")
evaluations = saved.evaluations(line)
if evaluations.empty:
    st.info("No saved evaluation of this line.")
    layout.stop()
ids = page.evaluation_ids(evaluations)
described = {int(r.id): f"evaluation {r.id} · {layout.when(r.created_at)} · labels {r.labels} v{r.labels_version} · k = {r.k} · "
                        f"runs {r.runs}" for r in evaluations.itertuples()}
if here.evaluation_id in ids and state.remembered("history.evaluation") not in ids:
    state.remember("history.evaluation", here.evaluation_id)  # the data on screen's evaluation, until one is chosen
chosen = st.selectbox("Saved evaluation", options=ids, format_func=lambda i: described[i], key="history.evaluation",
                      help="The report recomputes it from its stored files (same seed, same numbers).")


if st.button("Prepare the report", icon=":material/description:", key="history.prepare"):
    with st.spinner("Recomputing the evaluation and drawing the charts…"):
        built = page.prepare_report(state.get("data"), chosen, state.get)
    state.remember("history.report", (chosen, built))
ready = state.remembered("history.report")
if ready is not None and ready[0] == chosen:
    built = ready[1]
    if not layout.failed(built):
        report = built.value
        if report.k_headline:  # the k to take at the settings given on Choose k, as the report says it
            st.markdown(md_text(report.k_headline))
        st.caption(md_text(f"{report.title} · generated {layout.when(report.generated_at)} · "
                           f"{plural(len(report.failures), 'failure')} at k = {report.k}"))
        cols = st.columns(3)
        with cols[0]:
            st.download_button("Report (HTML)", data=lambda: report.to_html(), file_name=f"report-{chosen}.html",
                               mime="text/html", on_click="ignore", icon=":material/download:",
                               key="history.report_html")
        with cols[1]:
            st.download_button("Report (Markdown)", data=lambda: page.markdown_with_charts(report),
                               file_name=f"report-{chosen}.md", mime="text/markdown", on_click="ignore",
                               icon=":material/download:", key="history.report_md")
        with cols[2]:
            st.download_button("Failures (CSV)", data=lambda: report.failures_csv(),
                               file_name=f"failures-{chosen}.csv", mime="text/csv", on_click="ignore",
                               icon=":material/download:", key="history.report_csv")
