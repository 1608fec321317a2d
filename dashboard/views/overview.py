"""Overview: one row per run with intervals, the paired comparison in words, and the trade-off chart.

Everything below the header depends on k, so it is one fragment (`body`): changing k, the baseline or
the metrics shown reruns only that, not the page's set-up (the URL still follows each change). A
change of the runs shown reruns the page, as the header names them.
"""

import pandas as pd
import streamlit as st

from evalcore.safe_text import md_text, to_csv
from evalcore.metrics.measures import DESCRIPTIONS
from evalcore.report.compare import comparison_verdict, plan_summary

from dashboard import budget_data, charts, curves_data, data, fragments, layout, state

PAGE = "overview"
CURVES_PENDING = ("The intervals and paired tests for every k are being computed in the background (seconds with many "
                  "queries); the table and chart above were computed for this k alone, with the same numbers.")
v = layout.view(PAGE, own=("more",))
layout.header("Overview", v, "How each run scores on the labeled queries, whether the differences are real, "
                             "and what each run costs.")
layout.words("recall@k", "MRR", "n", "k", "95% interval", "Wilson interval", "BCa bootstrap", "paired comparison",
             "sign-flip test", "mid-p", "McNemar test", "p-value", "Holm correction", "wins / ties / losses",
             "fingerprint", "judged@k", "blind labels", "planner")


@st.fragment
def body(v: layout.View) -> None:
    """The table, its chart, the paired comparison, the trade-off and the warnings, at the k chosen here."""
    shown = layout.controls(PAGE, fragments.current(v), baseline=True)
    fragments.rerun_page_if(shown.runs != v.runs)  # the header above lists the runs shown
    more = st.toggle("Show every metric (hit@k, precision@k, nDCG@k, judged@k)",
                     **state.bind(PAGE, "more", state.get("more") == "1", lambda on: "1" if on else None))
    _body(shown, more)


def _body(v: layout.View, more: bool) -> None:
    k = v.k
    summary = curves_data.summary(v.dataset, k, more)
    if len(v.runs) < len(v.all_runs):
        summary = summary[summary["run"].isin(v.runs)]
    main_metrics = list(dict.fromkeys(["recall@1", f"recall@{k}", "mrr"]))
    extra_metrics = [f"hit@{k}", f"precision@{k}", f"ndcg@{k}", f"judged@{k}"] + (
        ["hit@1", "precision@1", "ndcg@1", "judged@1"] if k != 1 else [])
    metrics = main_metrics + (extra_metrics if more else [])

    # ---------------------------------------------------------------- the table: one row per run
    runs_meta = {r.name: r.run.metadata() for r in v.evaluation.results}
    cells = {(run, m): (mean, low, high, n) for run, m, mean, low, high, n in zip(
        *(summary[c].tolist() for c in ("run", "metric", "mean", "ci_low", "ci_high", "n")))}
    caveats = curves_data.caveats(v.dataset, k)  # blind share and judged depth beside each run's numbers
    rows = []
    for run in v.runs:
        meta = runs_meta[run]
        row = {"run": run, "model": meta["model"]}
        for m in metrics:
            if (run, m) in cells:
                mean, low, high, _ = cells[run, m]
                row[m] = mean
                row[f"{m} 95% CI"] = f"{low:.3f} – {high:.3f}"
        row.update(curves_data.caveat_cells(caveats.get(run), k))
        row.update({"n": int(cells[run, "mrr"][3]), "k": k, "price $/M tokens": meta["price_per_mtok"],
                    "dims": meta["dims"], "index MB": (meta["index_bytes"] / 1e6 if meta["index_bytes"] else None),
                    "labels": v.labels_ref})
        rows.append(row)
    table = pd.DataFrame(rows)
    config = {m: st.column_config.NumberColumn(m, format="%.3f", help=DESCRIPTIONS[m.split("@")[0]]) for m in metrics}
    helps = curves_data.CAVEAT_HELP
    config.update({"blind share": st.column_config.NumberColumn(format="percent", help=helps["blind share"]),
                   f"recall@{k} judged depth": st.column_config.TextColumn(help=helps["judged depth"]),
                   f"recall@{k} bounds": st.column_config.TextColumn(help=helps["bounds"]),
                   "index MB": st.column_config.NumberColumn(format="%.2f"),
                   "n": st.column_config.NumberColumn(help=layout.explain("n")),
                   "labels": st.column_config.TextColumn(help=layout.explain("fingerprint")),
                   "price $/M tokens": st.column_config.NumberColumn(format="$%.3f")})
    layout.table(table, hide_index=True, column_config=config, width="stretch")
    layout.context(v, k=k, extra="95% intervals: Wilson for 0/1 scores, else BCa bootstrap (10,000 resamples, seed 0)")

    export = summary[summary["metric"].isin(metrics)][
        ["run", "model", "metric", "k", "mean", "ci_low", "ci_high", "n", "labels", "fingerprint", "ci_method", "level"]]
    st.download_button("Download this table (CSV)", data=lambda: to_csv(export), file_name=f"overview_k{k}.csv",
                       mime="text/csv", on_click="ignore", icon=":material/download:")

    chart = charts.metric_intervals(
        summary[summary["metric"].isin(main_metrics)], v.all_runs,
        title="Recall@1, recall@k and MRR with 95% intervals",  # the panels name k: the spec is the same for every k
        subtitle=f"n = {v.n:,} queries · labels {v.labels_ref} · " + "; ".join(f"{r} = {v.model(r)}" for r in v.runs))
    st.vega_lite_chart(spec=chart, width="content")
    if curves_data.curves(v.dataset, more, wait=False) is None:  # starts them, after the first chart
        st.caption(CURVES_PENDING)
    budget_data.prepare(v.dataset)  # and the Choose k page's numbers, so its first visit finds them ready

    # ---------------------------------------------------------------- paired comparison
    st.subheader("Is the difference real?")
    if len(v.all_runs) < 2:
        st.info("Load a second run to compare runs on the same queries.")
    else:
        report = curves_data.comparison(v.dataset, k, v.baseline)
        shown = [c for c in report.comparisons if c.run in v.runs] if report else []
        st.caption(md_text(f"Every run against the baseline {v.baseline} ({v.model(v.baseline)}) on the same {v.n:,} "
                           f"queries: paired bootstrap interval of the difference, sign-flip test, Holm-corrected "
                           f"across all {len(report.comparisons) if report else 0} comparisons · k = {k} · "
                           f"labels {v.labels_ref}"))
        for c in shown:
            badge = (":green-badge[better]" if c.diff > 0 else ":red-badge[worse]") if c.significant \
                else ":gray-badge[no clear difference]"
            st.markdown(f"{badge} {md_text(comparison_verdict(c))}")
        if shown:
            counts = pd.DataFrame([{
                "run": c.run, "baseline": c.baseline, "metric": c.metric, "difference": c.diff,
                "95% CI": f"{c.ci_low:+.3f} to {c.ci_high:+.3f}", "wins": c.wins, "ties": c.ties, "losses": c.losses,
                "p (Holm)": c.p_adjusted, "n": c.n, "k": k,
                "models": f"{c.run} = {v.model(c.run)}; {c.baseline} = {v.model(c.baseline)}",
            } for c in shown])
            layout.table(counts, hide_index=True, width="stretch", column_config={
                "difference": st.column_config.NumberColumn(format="%+.3f", help="run minus baseline"),
                "p (Holm)": st.column_config.NumberColumn(format="%.4f", help=layout.explain("p-value") + " "
                                                          + layout.explain("Holm correction")),
                "95% CI": st.column_config.TextColumn(help=layout.explain("95% interval")),
                "n": st.column_config.NumberColumn(help=layout.explain("n")),
                "wins": st.column_config.NumberColumn(help="queries where the run scores higher than the baseline"),
                "losses": st.column_config.NumberColumn(help="queries where the run scores lower than the baseline"),
            })
        elif report is not None:
            st.info("Only the baseline is shown; pick other runs above to compare them with it.")
        if report is not None and report.planner is not None:
            st.caption(md_text(f"Planning more labels ({report.planner_pair[0]} vs {report.planner_pair[1]}): "
                               f"{plan_summary(report.planner)}"))

    # ---------------------------------------------------------------- trade-off
    st.subheader("Quality, price and index size")
    points = pd.DataFrame([{
        "run": run, "model": runs_meta[run]["model"], "metric": f"recall@{k}",
        "mean": float(cells[run, f"recall@{k}"][0]), "ci_low": float(cells[run, f"recall@{k}"][1]),
        "ci_high": float(cells[run, f"recall@{k}"][2]),
        "price_per_mtok": runs_meta[run]["price_per_mtok"],
        "index_mb": runs_meta[run]["index_bytes"] / 1e6 if runs_meta[run]["index_bytes"] else None,
        "dims": runs_meta[run]["dims"],
    } for run in v.runs])
    if points[["price_per_mtok", "index_mb"]].isna().all().all():
        st.info("No run has a price or an index size yet: set them on the Data page to see the trade-off.")
    else:
        st.vega_lite_chart(spec=charts.tradeoff(points, v.all_runs, metric="recall@k",
                                        title="Recall@k against what the run costs",
                                        subtitle=[f"n = {v.n:,} queries · labels {v.labels_ref} · bars: 95% intervals",
                                                  "models: " + "; ".join(f"{r} = {v.model(r)}" for r in v.runs)]),
                        width="content")
        layout.context(v, k=k, extra=f"the chart's recall@k is recall@{k}")

    # Computed only when opened (the warnings at a new k cost as much as the rest of this fragment).
    with st.expander("Warnings about these files and scores", key="overview.warnings", on_change="rerun") as box:
        if box.open:
            layout.table(data.warnings_frame(v.dataset, k), hide_index=True, width="stretch")


body(v)
