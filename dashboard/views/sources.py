"""Sources: whose words are the queries in? Every metric split by ``source``, and the customers-versus-team gap."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from evalcore.safe_text import md_text, to_csv
from evalcore.metrics.measures import DESCRIPTIONS
from evalcore.analyses.slices import DEFAULT_MIN_SLICE_N

from dashboard import caching, charts, layout, state
from dashboard.page_models import sources as page

PAGE = "sources"
MAX_MIN_N = 100_000

v = layout.view(PAGE, own=("metric", "minn"))
layout.header("Sources", v, "Whose words are the queries in? Team-written queries use the docs' own words; customers "
                            "do not. The gap between them is what lets a demo pass and production fail.")
layout.words("source", "recall@k", "hit@k", "MRR", "95% interval", "n")
v = layout.controls(PAGE, v)
k = v.k

if not caching.kept(page.has_source, entries=16, copies=True)(v.dataset):
    st.info(md_text(f"The labels file {v.dataset.labels.name} has no source field, so the queries cannot be split by "
                    "whose words they are in. Add a source column (or JSONL key) saying where each query came from, e.g. "
                    "support_ticket, search_log, failed_search or team_written, and load the labels again."),
            icon=":material/info:")
    st.page_link("views/data.py", label="Load labels with a source on the Data page", icon=":material/upload_file:")
    layout.stop()


def _min_n() -> int:
    try:
        value = int(str(state.get("minn", DEFAULT_MIN_SLICE_N)))
    except ValueError:
        return DEFAULT_MIN_SLICE_N
    return min(value, MAX_MIN_N) if value >= 1 else DEFAULT_MIN_SLICE_N


left, right = st.columns([2, 1])
with left:
    wanted = state.get("metric", "recall@k")
    family = st.selectbox("Metric for the gap and the chart", options=list(page.METRICS),
                          format_func=lambda m: page.at_k(m, k),
                          help="The table below splits every metric; this one is charted and put in words.",
                          **state.bind(PAGE, "metric", wanted if wanted in page.METRICS else "recall@k"))
with right:
    min_n = int(st.number_input("Fewest queries to rank a source", min_value=1, max_value=MAX_MIN_N, step=5,
                                help="Sources with fewer queries are shown grey and marked too few to rank; "
                                     "no gap verdict is drawn from them.",
                                **state.bind(PAGE, "minn", _min_n(), int)))
loaded = caching.kept(page.by_source, copies=True)(v.dataset, k, family, min_n, tuple(v.runs))
if layout.failed(loaded):
    layout.stop()
model = loaded.value
metric, pair = model.metric, model.pair

# ---------------------------------------------------------------- the answer, then the gap run by run
layout.headline(model.headline, v, k)
st.subheader(f"The gap on {metric}, run by run")
if pair is None:
    st.info(md_text(model.note), icon=":material/info:")
else:
    st.caption(md_text(model.groups))
    for line in model.gaps:
        badge = {"lower": ":red-badge[lower]", "higher": ":green-badge[higher]",
                 "too few": ":gray-badge[too few to compare]"}.get(line.verdict, ":gray-badge[no clear difference]")
        st.markdown(f"{badge} {md_text(line.sentence)}")
layout.context(v, k=k, extra=f"95% interval of the gap: {model.methods} · "
                             f"sources under {min_n:,} queries are too few to rank or compare")


# ---------------------------------------------------------------- the chart
if not model.segments.empty:
    subtitle = (f"k = {k} · n = {v.n:,} queries · labels {v.labels_ref}",
                "models: " + "; ".join(f"{r} = {v.model(r)}" for r in v.runs),
                f"grey, faded: fewer than {min_n:,} queries, too few to rank · lines: each group's pooled mean; "
                "red bar: the gap between them")
    st.vega_lite_chart(caching.kept(page.chart, entries=32)(v.dataset, k, family, min_n, tuple(v.runs), subtitle),
                       width="content")

# ---------------------------------------------------------------- every metric, split by source
st.subheader("Every metric, split by source")
table, names = model.table, model.metrics


def _grey(row: pd.Series) -> list[str]:
    return [f"color: {charts.GREY}" if row["status"] == page.TOO_FEW else ""] * len(row)


styled = table.style.apply(_grey, axis=1).format({m: "{:.3f}" for m in names if m in table.columns})
config = {m: st.column_config.NumberColumn(m, help=DESCRIPTIONS[m.split("@")[0]]) for m in names}
config["status"] = st.column_config.TextColumn(help=f"Sources with fewer than {min_n:,} queries are too few to rank "
                                                    "and are left out of every gap verdict.")
layout.table(styled, hide_index=True, column_config=config, width="stretch")
layout.context(v, k=k, extra="n per row: that source's queries · 95% intervals per source: Wilson for 0/1 scores, "
                             "else BCa bootstrap (seed 0)")

st.download_button("Download this table (CSV)", data=lambda: to_csv(model.export), file_name=f"sources_k{k}.csv",
                   mime="text/csv", on_click="ignore", icon=":material/download:")

if pair is not None:
    st.subheader("The gap on every metric")
    layout.table(model.gap_table, hide_index=True, width="stretch", column_config={
        "gap": st.column_config.NumberColumn(format="%+.3f", help="group a minus group b"),
        "ci_low": st.column_config.NumberColumn("95% CI low", format="%+.3f"),
        "ci_high": st.column_config.NumberColumn("95% CI high", format="%+.3f"),
        "mean_a": st.column_config.NumberColumn(format="%.3f"), "mean_b": st.column_config.NumberColumn(format="%.3f"),
        "method": st.column_config.TextColumn(help="newcombe: every score 0 or 1 (from two Wilson intervals); "
                                                   "welch: difference of two independent means, unequal spreads"),
    })
    layout.context(v, k=k, extra=f"group a = {', '.join(pair.a)}; group b = {', '.join(pair.b)}")
    st.download_button("Download the gaps (CSV)", data=lambda: to_csv(model.gaps_export),
                       file_name=f"source_gaps_k{k}.csv", mime="text/csv", on_click="ignore",
                       icon=":material/download:")
