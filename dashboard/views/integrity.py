"""Integrity: can these numbers be trusted? Whose words the queries are in, blind labels, pooling bias, judged
depth with bounds, tune and a sealed holdout, and labels to check. `evalcore` computes; this page renders.

Every page scores the tune split when the labels carry one (`dashboard.loading.scope`). This page is where the
holdout is revealed: the Reveal button records the view in the workspace, and only then, in this session, can
the holdout or all queries be looked at. The ``split`` URL parameter chooses which, but never unseals by itself:
a link with ``split=holdout`` opens on the sealed notice and the button, so every view is recorded.
"""


import streamlit as st

from evalcore.safe_text import md_text, to_csv

from dashboard import access_ui, caching, layout, saved, state
from dashboard.page_models import integrity as page

PAGE = "integrity"
SPLITS = {"tune": "tune split (exploratory)", "holdout": "holdout", "all": "all queries (tune and holdout)"}
REVEALS = f"{PAGE}.reveals"
"""Session state: the reveal this session recorded, by the full label set's fingerprint."""

v = layout.view(PAGE, own=("split",))
layout.header("Integrity", v, "Whose words the queries are in, who judged them and how deep, and which labels to "
                              "check: the ways an evaluation goes wrong, made visible.")
layout.words("blind labels", "judged@k", "judged depth", "tune / holdout split", "check the label", "fingerprint",
             "95% interval", "several judges", "percent agreement", "Cohen's kappa", "Fleiss' kappa",
             "Krippendorff's alpha", "adjudicate")
v = layout.controls(PAGE, v)
k = v.k
audited = caching.kept(page.audit_at, entries=32, spinner="Auditing the labels…")(v.dataset, k)
if layout.failed(audited) or layout.failed(saved.workspace_opened()):  # the one shared workspace records reveals and flags
    layout.stop()
found = audited.value
ref = v.labels_ref

# ---------------------------------------------------------------- warnings first
for w in found.warnings:
    if w.code in ("non_blind_dominant", "pooled_from_one_run", "judged_depth_exceeded", "check_the_label",
                  "blind_unknown", "judged_depth_unknown"):
        st.warning(md_text(f"{w.message} (labels {ref})"), icon=":material/warning:")

# ---------------------------------------------------------------- the Overview's checks, in a sentence per run
st.subheader("Can each run's numbers be trusted?", anchor=False)
for sentence in caching.kept(page.check_sentences, entries=32, copies=True)(v.dataset, k, tuple(v.runs)):
    st.markdown(md_text(sentence))
layout.context(v, k=k, extra="the Overview's \"Show every check\" columns, in words")

gap_tab, blind_tab, agree_tab, depth_tab, split_tab, check_tab = st.tabs(
    ["Whose words", "Blind labels", "Judges' agreement", "Judged depth", "Tune and holdout", "Check the label"])

with gap_tab:
    gaps = caching.kept(page.source_gaps, copies=True)(v.dataset, k, tuple(v.runs))
    if gaps is None or not gaps.ok:
        st.info("The labels need a source column (team_written, support_ticket, search_log, ...) to compare "
                "whose words the queries are in." + (f" {md_text(gaps.error)}" if gaps is not None else ""))
    else:
        for sentence in gaps.value:
            st.text(sentence)
        layout.context(v, k=k, extra="gap between two groups of different queries: Newcombe interval for 0/1 "
                                     "scores, else Welch")
        st.page_link("views/sources.py", label="Every metric by source, with the chart", icon=":material/arrow_forward:")

with blind_tab:
    layout.table(found.blind[found.blind["run"].isin(v.runs)], hide_index=True, width="stretch",
                 column_config={c: st.column_config.NumberColumn(format="%.4f")
                                for c in ("blind_share", "blind_judgment_share")})
    if not found.blind_metrics.empty:
        st.subheader("Metrics on blind-judged queries only")
        layout.table(found.blind_metrics[found.blind_metrics["run"].isin(v.runs)], hide_index=True, width="stretch",
                     column_config={c: st.column_config.NumberColumn(format="%.4f")
                                    for c in ("mean", "ci_low", "ci_high")})
    st.subheader(f"Pooling: judged docs in each run's top {page.POOL_DEPTH}")
    layout.table(found.pooling[found.pooling["run"].isin(v.runs)], hide_index=True, width="stretch")

with agree_tab:
    judged_set = page.labels_as_read(v.dataset).name
    agreed = caching.kept(page.judges_agreement, entries=16)(judged_set, saved.panel_marks(judged_set))
    if agreed.sentence is None:
        st.info("No two judges have marked the same pair yet. On Blind judging, each judge saves their own marks "
                "(\"Keep my marks apart\"), blind to each other's; their agreement then shows here.")
    else:
        st.text(agreed.sentence)
        with st.expander("The statistics, each with its 95% interval"):
            layout.table(agreed.statistics, hide_index=True, width="stretch",
                         column_config={c: st.column_config.NumberColumn(format="%.3f")
                                        for c in ("value", "ci_low", "ci_high")})
            st.markdown("\n".join(f"- **{name}**: {words}." for name, words in page.STATISTICS.items()))
            st.caption(md_text(
                f"Judges: {', '.join(agreed.judges)} · label set {judged_set} · each judge's latest marks, pairs "
                "(query, doc) two or more judges marked · intervals: percentile bootstrap over queries (a query's "
                "pairs are resampled together), 10,000 resamples, seed 0 · strength: Landis and Koch (below 0 poor, "
                "to 0.20 slight, 0.40 fair, 0.60 moderate, 0.80 substantial, above almost perfect)."))
    if agreed.judges:
        st.text(page.disagreement_line(agreed))
        st.caption(md_text(agreed.freeze))
        st.page_link("views/judge.py", label="Open the disagreements on Blind judging", icon=":material/gavel:",
                     query_params={**layout.link_params(("data",)), "show": "disagreements"})

with depth_tab:
    st.caption(md_text(f"low: unjudged docs in the top k counted as non-relevant (the reported number); high: counted "
                       f"as relevant. Covered depth: the deepest k with judged@k >= {found.min_judged:g} on the queries whose "
                       "judged depth is known (judged_known, n_known: queries with a doc judged non-relevant, as a blind "
                       "judging round records; labels listing only relevant docs leave it unknown). Raise it with a blind judging pool at "
                       "the depth you quote."))
    layout.table(found.coverage[found.coverage["run"].isin(v.runs)], hide_index=True, width="stretch",
                 column_config={c: st.column_config.NumberColumn(format="%.4f")
                                for c in ("mean", "low", "high", "judged")})

with split_tab:
    split = v.evaluation.split
    hashed = v.dataset.split
    if split is None or split.split is None:
        st.info("The labels have no split column, so nothing is sealed: every page scores all their queries. Add a "
                "split column (tune or holdout) to keep a holdout sealed until you report on it, or split them here "
                "by a hash of each query id (every machine puts a query on the same side).")
    if hashed is None and (split is None or split.split is None):
        share_column, button_column = st.columns([2, 1], vertical_alignment="bottom")
        share = share_column.number_input("Share of queries to tune on", min_value=0.05, max_value=0.95, value=0.5,
                                          step=0.05, format="%.2f", key=f"{PAGE}.hash_share",
                                          help="Tune on these (choose the run, k, prompt); the rest is the holdout, "
                                               "sealed until you report.")
        barred = access_ui.refusal("upload")
        if button_column.button("Split by query hash", key=f"{PAGE}.hash_split", disabled=bool(barred),
                                help=barred or "Every page then scores the tune queries only."):
            state.set("data", page.register(v.dataset.with_split(round(float(share), 2))))
            st.rerun()
    elif hashed is not None:
        st.caption(md_text(f"Split by a hash of each query id: {hashed:.0%} of the queries to tune on (this data "
                           "set's split; the labels' own split column, if any, is not used)."))
        if st.button("Stop splitting by hash", key=f"{PAGE}.hash_unsplit", disabled=bool(access_ui.refusal("upload"))):
            state.set("data", page.register(v.dataset.with_split(None)))
            st.rerun()
    if split is not None and split.split is not None:
        full = page.labels_as_read(v.dataset)
        seen = saved.reveal_summary(full.name)
        st.caption(md_text(f"Every page shows the tune split: {split.n_queries} queries, {split.note}. Holdout: "
                           f"{split.n_holdout} queries, sealed until someone reveals them here (each reveal is "
                           f"recorded in the workspace). {seen[:1].upper()}{seen[1:]}."))
        summary = found.evaluation.summary
        summary = summary[summary["run"].isin(v.runs)].assign(split=split.split)
        layout.table(summary[["run", "model", "metric", "mean", "ci_low", "ci_high", "n", "labels", "fingerprint",
                              "split"]], hide_index=True, width="stretch",
                     column_config={c: st.column_config.NumberColumn(format="%.4f")
                                    for c in ("mean", "ci_low", "ci_high")})
        reveals = state.memo(REVEALS)
        reveal = reveals.get(full.fingerprint)
        asked = state.get("split")
        asked = asked if asked in SPLITS else "tune"
        if reveal is None:
            if asked != "tune":
                st.warning(md_text(f"This link asks for the {SPLITS[asked]} numbers. They stay sealed until you reveal "
                                   "them: the reveal is recorded in the workspace (who, when, which labels and runs) "
                                   "and counted."), icon=":material/lock:")
            barred = access_ui.refusal("reveal_holdout")
            if st.button("Reveal the holdout numbers (recorded in the workspace)", key=f"{PAGE}.reveal",
                         disabled=bool(barred), help=barred or f"The reveal is {saved.who_acts()}."):
                recorded = saved.reveal_holdout(v.dataset, [(r.name, r.model) for r in found.evaluation.results])
                if not layout.failed(recorded):
                    reveals[full.fingerprint] = recorded.value
                    if asked == "tune":
                        state.set("split", "holdout")
                    st.rerun()  # redraw without the sealed notice and the button
        if reveal is not None:
            st.success(md_text(f"Holdout revealed in this session (reveal #{reveal.id} by {reveal.who}): "
                               f"{saved.reveal_summary(full.name)}."), icon=":material/visibility:")
            chosen = st.radio("Numbers on", options=list(SPLITS), format_func=SPLITS.get, horizontal=True,
                              **state.bind(PAGE, "split", asked))
            if chosen != "tune":
                unsealed = caching.kept(page.revealed_at, entries=16, spinner="Scoring the revealed queries…")(
                    v.dataset, chosen, reveal, k)
                if not layout.failed(unsealed):
                    held = unsealed.value
                    table = held.summary[held.summary["run"].isin(v.runs)].assign(split=chosen)
                    layout.table(table[["run", "model", "metric", "mean", "ci_low", "ci_high", "n", "labels",
                                        "fingerprint", "split"]], hide_index=True, width="stretch",
                                 column_config={c: st.column_config.NumberColumn(format="%.4f")
                                                for c in ("mean", "ci_low", "ci_high")})
                    st.caption(md_text(f"k = {k} · n = {held.results[0].n_queries:,} queries · models: "
                                       + "; ".join(f"{r.name} = {r.model}" for r in held.results if r.name in v.runs)
                                       + f" · labels {held.labels.name}#{held.labels.fingerprint} · "
                                       + held.split.headline))
                    st.download_button(f"Download the {chosen} numbers (CSV)", data=to_csv(table),
                                       file_name=f"{chosen}_k{k}.csv", mime="text/csv", on_click="ignore",
                                       key=f"{PAGE}.revealed_csv")

with check_tab:
    suspects = found.suspects
    if suspects is None:
        st.info("Load a second run: a label is suspicious when different systems agree on another doc.")
    elif suspects.empty:
        st.success(md_text(f"No query that every run misses at k = {k} while agreeing on another doc."))
    else:
        st.caption(md_text(f"{len(suspects)} queries every run misses at k = {k} while every run puts the same other "
                           f"doc in its top {found.agree_depth}. Labels are never edited here: flag a query to queue it "
                           "for blind re-judging."))
        layout.table(suspects, hide_index=True, width="stretch")
        chosen = st.multiselect("Queries to flag for blind re-judging", options=suspects["query"].tolist(),
                                key=f"{PAGE}.flag")
        barred = access_ui.refusal("judge")
        if st.button("Flag for blind re-judging", disabled=not chosen or bool(barred), key=f"{PAGE}.flag_button",
                     help=barred):
            # The queue of the whole label set as read (not only the scored split): judgments made on the flagged
            # queries become a version of the set every page loads.
            flagged = saved.flag_for_rejudging(v.dataset, chosen, found)
            if not layout.failed(flagged):
                st.success(md_text(f"Queued {len(flagged.value.entries)} queries of {flagged.value.version.ref} for "
                                   "blind re-judging; the labels are unchanged."), icon=":material/flag:")
        st.page_link("views/judge.py", label="Judge them blind", icon=":material/gavel:")
