"""Choose k: recall@k against k with its band, what k chunks cost in prompt tokens, and the recommended k.

The k control, the numbers at k and the PNG download (which marks k) are one fragment (`at_k`):
changing k reruns only them. The chart, the settings and the recommendation do not depend on k.
"""

import pandas as pd
import streamlit as st

from evalcore.analyses.budget import DEFAULT_LAMBDA, DEFAULT_PRICE_PER_MTOK
from evalcore.safe_text import md_text

from dashboard import budget_data, charts, data, fragments, layout, state

PAGE = "choose_k"
v = layout.view(PAGE, own=("price", "rpm", "overhead", "lam", "chunk"))
layout.header("Choose k", v, "How many chunks to retrieve: recall gained against prompt tokens paid, for every k "
                             f"from 1 to {data.DEPTH}.")


def number(name: str, kind=float):
    try:
        value = kind(state.get(name))
    except (TypeError, ValueError):
        return None
    return value if value >= 0 else None


def settings_now(v: layout.View) -> budget_data.BudgetSettings:
    """The settings as the widgets below hold them (they write each change to the URL)."""
    rpm = number("rpm", int)
    chunk = None if budget_data.has_chunk_sizes(v.dataset) else (number("chunk", int) or 300)
    return budget_data.BudgetSettings(price_per_mtok=number("price"), requests_per_month=float(rpm) if rpm else None,
                                      overhead_tokens=int(number("overhead", int) or 0), lam=number("lam"),
                                      chunk_tokens=int(chunk) if chunk else None)


def describe(v: layout.View, settings: budget_data.BudgetSettings, report) -> tuple[str, str]:
    """The context every number of the page carries, and the price it assumes."""
    price_text = f"${report.settings['price_per_mtok']:g} per million input tokens" + (
        " (placeholder: set your LLM's price below)" if report.settings["price_source"] == "default" else "")
    context = (f"n = {v.n:,} queries · labels {v.labels_ref} · tokens: {report[v.runs[0]].tokenizer} · {price_text}"
               + (f" · {settings.requests_per_month:,.0f} requests per month"
                  if settings.requests_per_month is not None else ""))
    return context, price_text


@st.fragment
def at_k(v: layout.View) -> None:
    """The k control (with the runs shown), the numbers at k and the chart's PNG marking k."""
    shown_v = layout.controls(PAGE, fragments.current(v))
    fragments.rerun_page_if(shown_v.runs != v.runs)  # the header, the chart and the recommendation show them too
    k = shown_v.k
    settings = settings_now(v)
    loaded = budget_data.budget(v.dataset, settings)
    if layout.failed(loaded):
        st.stop()
    report = loaded.value
    shown = [report[name] for name in shown_v.runs]
    money = settings.requests_per_month is not None
    context, price_text = describe(shown_v, settings, report)
    st.subheader(f"At k = {k}")
    rows = []
    for run in shown:
        at = run.row(k)
        rows.append({
            "run": run.name, "model": run.model, f"recall@{k}": at["recall"],
            "recall 95% CI": f"{at['recall_ci_low']:.3f} – {at['recall_ci_high']:.3f}", f"hit@{k}": at["hit"],
            "hit 95% CI": f"{at['hit_ci_low']:.3f} – {at['hit_ci_high']:.3f}", "tokens (mean)": at["tokens_mean"],
            "tokens (p90)": at["tokens_p90"], "$ per 1,000 requests": at["cost_per_1k_requests"],
            **({"$ per month": at["cost_per_month"]} if money else {}), "recommended k": run.recommended_k,
            "n": run.n_queries,
        })
    st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch", column_config={
        f"recall@{k}": st.column_config.NumberColumn(format="%.3f"),
        f"hit@{k}": st.column_config.NumberColumn(format="%.3f",
                                                  help="Share of queries with any relevant doc in the top k."),
        "tokens (mean)": st.column_config.NumberColumn(format="%.0f"),
        "tokens (p90)": st.column_config.NumberColumn(format="%.0f"),
        "$ per 1,000 requests": st.column_config.NumberColumn(format="$%.4f"),
        "$ per month": st.column_config.NumberColumn(format="$%.2f"),
    })
    st.caption(md_text(f"k = {k} · {context} · models: " + "; ".join(f"{r.name} = {r.model}" for r in shown)))
    built = budget_data.chart_spec(v.dataset, settings, tuple(shown_v.runs), tuple(v.all_runs), context, price_text, money)
    st.caption(md_text(f"The PNG download marks k = {k} on the chart below with a dashed line."))
    st.download_button("Download the chart (PNG)",
                       data=lambda: charts.to_png(charts.set_k(built, k)), file_name=f"choose_k_k{k}.png",
                       mime="image/png", on_click="ignore", icon=":material/image:", key="choose_k.png")


at_k(v)

with st.expander("What a chunk costs, and what recall is worth", expanded=True):
    cols = st.columns(4)
    with cols[0]:
        price = st.number_input("LLM input price ($ per million tokens)", min_value=0.0, step=0.25, format="%.2f",
                                help="The generator's price: the retrieved chunks go into its prompt. "
                                     f"Empty = ${DEFAULT_PRICE_PER_MTOK:.2f}, a placeholder.",
                                **state.bind(PAGE, "price", number("price")))
    with cols[1]:
        rpm = st.number_input("Requests per month", min_value=0, step=10_000,
                              help="Needed for cost per month. Empty = no monthly figure.",
                              **state.bind(PAGE, "rpm", number("rpm", int)))
    with cols[2]:
        overhead = st.number_input("Prompt tokens besides the chunks", min_value=0, step=50,
                                   help="System prompt, question and instructions, the same at every k.",
                                   **state.bind(PAGE, "overhead", number("overhead", int) or 0))
    with cols[3]:
        lam = st.number_input("Recall points worth 1,000 tokens (λ)", min_value=0.0, step=0.25, format="%.2f",
                              help="The rule picks the k where one more chunk gains fewer recall points per 1,000 "
                                   f"prompt tokens than this. Empty = {DEFAULT_LAMBDA:g} points.",
                              **state.bind(PAGE, "lam", number("lam")))
    chunk = None
    if not budget_data.has_chunk_sizes(v.dataset):
        chunk = st.number_input("Tokens per chunk (no documents file with text or token counts is loaded)",
                                min_value=1, step=50, **state.bind(PAGE, "chunk", number("chunk", int) or 300))

settings = budget_data.BudgetSettings(price_per_mtok=price, requests_per_month=float(rpm) if rpm else None,
                                      overhead_tokens=int(overhead or 0), lam=lam,
                                      chunk_tokens=int(chunk) if chunk else None)
loaded = budget_data.budget(v.dataset, settings)
if not loaded.ok:
    st.stop()  # the fragment above says why
report = loaded.value
shown = [report[name] for name in v.runs]
money = settings.requests_per_month is not None
context, price_text = describe(v, settings, report)
# On screen the chart is the same for every k (the table above gives the numbers at k); the PNG marks k.
built = budget_data.chart_spec(v.dataset, settings, tuple(v.runs), tuple(v.all_runs), context, price_text, money)
st.vega_lite_chart(spec=charts.set_k(built, None), width="content")

# ---------------------------------------------------------------- the recommendation
st.subheader("Recommended k")
rule = shown[0].rule
curve = f"a smooth fit ({rule['fit']['model']}) of the recall curve" if rule["fit"]["used"] else "the recall curve itself"
st.caption(md_text(f"Rule: {rule['description']}, with λ = {rule['lambda']:g} {rule['lambda_unit']} "
                   f"({rule['lambda_source']}), read on {curve}. Stability: the same rule on bootstrap resamples of the "
                   f"queries. The elbow (Kneedle) ignores cost and is shown as a landmark."))
for run in shown:
    elbow = f" · elbow of the curve (Kneedle): k = {run.kneedle_k}" if run.kneedle_k else ""
    st.markdown(f"**{md_text(run.name)}** ({md_text(run.model)}): {md_text(run.summary())}{md_text(elbow)}")
st.download_button("Download the k table (CSV)", data=lambda: report.to_csv(), file_name="choose_k.csv",
                   mime="text/csv", on_click="ignore", icon=":material/download:", key="choose_k.csv")
if report.warnings:
    with st.expander(f"Warnings ({len(report.warnings)})"):
        for w in report.warnings:
            st.text(str(w))
