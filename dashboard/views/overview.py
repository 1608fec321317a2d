"""Overview: one row per run with intervals, the paired comparison in words, and the trade-off chart.

Everything below the header depends on k, so it is one fragment (`body`): changing k, the baseline or the metrics
shown reruns only that, not the page's set-up (the URL still follows each change). A change of the runs shown
reruns the page, as the header names them. The numbers come from `dashboard.page_models.overview`.
"""

import streamlit as st

from evalcore.safe_text import md_text, to_csv
from evalcore.glossary import explain

from dashboard import caching, fragments, layout, state
from dashboard.page_models import overview

PAGE = "overview"
CURVES_PENDING = ("The intervals and paired tests for every k are being computed in the background (seconds with many "
                  "queries); the table and chart above were computed for this k alone, with the same numbers.")
BADGES = {"better": ":green-badge[better]", "worse": ":red-badge[worse]",
          "no clear difference": ":gray-badge[no clear difference]"}
v = layout.view(PAGE, own=("more", "checks"))
layout.header("Overview", v, "How each run scores on the labeled queries, whether the differences are real, "
                             "and what each run costs.")
layout.words("recall@k", "MRR", "n", "k", "95% interval", "Wilson interval", "BCa bootstrap", "paired comparison",
             "sign-flip test", "mid-p", "McNemar test", "p-value", "Holm correction", "wins / ties / losses",
             "fingerprint", "judged@k", "blind labels", "planner")


def answer(v: layout.View) -> None:
    """The headline: the best run in one line, the sentence that backs it, and the paired tests one click away."""
    said = caching.kept(overview.headline, entries=32)(v.dataset, tuple(v.runs))
    if said is None:
        return
    with st.container(key="headline"):
        st.subheader(md_text(said.best), anchor=False)
        st.markdown(md_text(said.evidence))
        if said.details:
            with st.expander("The paired tests behind this sentence", icon=":material/functions:"):
                for line in said.details:
                    st.markdown(md_text(line))
                st.caption(md_text(said.caption))


@st.fragment
def body(v: layout.View) -> None:
    """The chart, its table, the paired comparison, the trade-off and the warnings, at the k chosen here (the chart
    first: the browser draws it before it has loaded the code of tables)."""
    shown = layout.controls(PAGE, fragments.current(v), baseline=True)
    fragments.rerun_page_if(shown.runs != v.runs)  # the header above lists the runs shown
    toggles = st.columns(2)
    with toggles[0]:
        more = st.toggle("Show every metric (hit@k, precision@k, nDCG@k, judged@k)",
                         **state.bind(PAGE, "more", state.get("more") == "1", lambda on: "1" if on else None))
    with toggles[1]:
        checks = st.toggle("Show every check (blind share, judged depth)",
                           help="Whether each run's queries were judged blind and whether k reads deeper than the "
                                "judgments cover; the Integrity page says the same in a sentence per run.",
                           **state.bind(PAGE, "checks", state.get("checks") == "1", lambda on: "1" if on else None))
    _body(shown, more, checks)


def _body(v: layout.View, more: bool, checks: bool) -> None:
    k = v.k
    model = caching.kept(overview.overview)(v.dataset, k, tuple(v.runs), more, checks)
    config = {m: st.column_config.NumberColumn(m, format="%.3f", help=model.help[m])
              for m in [*model.metrics, *model.grades]}
    if checks:
        config.update({
            "blind share": st.column_config.NumberColumn(format="percent", help=model.help["blind share"]),
            f"recall@{k} judged depth": st.column_config.TextColumn(help=model.help[f"recall@{k} judged depth"]),
            f"recall@{k} bounds": st.column_config.TextColumn(help=model.help[f"recall@{k} bounds"])})
    config.update({"index MB": st.column_config.NumberColumn(format="%.2f"),
                   "n": st.column_config.NumberColumn(help=explain("n")),
                   "labels": st.column_config.TextColumn(help=explain("fingerprint")),
                   "price $/M tokens": st.column_config.NumberColumn(format="$%.3f")})
    st.vega_lite_chart(spec=model.chart, width="content")
    layout.table(model.table, hide_index=True, column_config=config, width="stretch")
    layout.context(v, k=k, extra="95% intervals: Wilson for 0/1 scores, else BCa bootstrap (10,000 resamples, seed 0)")
    if model.graded:
        st.page_link("views/answers.py", label=md_text(model.graded), icon=":material/grading:",
                     query_params=layout.link_params(("data", "runs", "k")))
    st.download_button("Download this table (CSV)", data=lambda: to_csv(model.export), file_name=f"overview_k{k}.csv",
                       mime="text/csv", on_click="ignore", icon=":material/download:")
    if overview.curves_pending(v.dataset, more):  # starts them, after the first chart
        st.caption(CURVES_PENDING)

    st.subheader("Is the difference real?")
    if len(v.all_runs) < 2:
        st.info("Load a second run to compare runs on the same queries.")
    else:
        compared = caching.kept(overview.comparison)(v.dataset, k, v.baseline, tuple(v.runs))
        st.caption(md_text(compared.caption))
        for verdict in compared.verdicts:
            st.markdown(f"{BADGES[verdict.kind]} {md_text(verdict.text)}")
        if not compared.counts.empty:
            layout.table(compared.counts, hide_index=True, width="stretch", column_config={
                "difference": st.column_config.NumberColumn(format="%+.3f", help="run minus baseline"),
                "p (Holm)": st.column_config.NumberColumn(format="%.4f", help=explain("p-value") + " "
                                                          + explain("Holm correction")),
                "95% CI": st.column_config.TextColumn(help=explain("95% interval")),
                "n": st.column_config.NumberColumn(help=explain("n")),
                "wins": st.column_config.NumberColumn(help="queries where the run scores higher than the baseline"),
                "losses": st.column_config.NumberColumn(help="queries where the run scores lower than the baseline"),
            })
        else:
            st.info("Only the baseline is shown; pick other runs above to compare them with it.")
        if compared.planner:
            st.caption(md_text(compared.planner))

    st.subheader("Quality, price and index size")
    if model.tradeoff is None:
        st.info("No run has a price or an index size yet: set them on the Data page to see the trade-off.")
    else:
        st.vega_lite_chart(spec=model.tradeoff, width="content")
        layout.context(v, k=k, extra=f"the chart's recall@k is recall@{k}")

    # Computed only when opened (the warnings at a new k cost as much as the rest of this fragment).
    with st.expander("Warnings about these files and scores", key="overview.warnings", on_change="rerun") as box:
        if box.open:
            layout.table(overview.warnings(v.dataset, k), hide_index=True, width="stretch")


answer(v)
body(v)
