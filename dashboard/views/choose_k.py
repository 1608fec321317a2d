"""Choose k: the chart first (recall@k with its band over what k chunks cost, one k axis), then the numbers at k,
the recommendation and the settings.

The k control, the chart and the numbers at k are one fragment (`at_k`): changing k, in the control or by a click
on the chart (Streamlit's selection event, `on_pick`), reruns only them. The chart's spec is cached per data set,
settings, runs and k range; k only moves its dashed rule (`charts.set_k`), which the browser redraws in place.
"""

import pandas as pd
import streamlit as st

from evalcore.analyses.budget import DEFAULT_LAMBDA, DEFAULT_PRICE_PER_MTOK
from evalcore.report.budget import budget_summary
from evalcore.safe_text import md_text

from dashboard import budget_data, charts, data, fragments, layout, state

PAGE = "choose_k"
CHART_KEY = "choose_k.chart"
v = layout.view(PAGE, own=("price", "rpm", "overhead", "lam", "chunk", "every"))
layout.header("Choose k", v, "How many chunks to retrieve: what one more chunk adds to recall, and what it adds to "
                             "the prompt. Click the chart to choose k.")


def number(name: str, kind=float):
    try:
        value = kind(state.get(name))
    except (TypeError, ValueError):
        return None
    return value if value >= 0 else None


def settings_now(v: layout.View) -> budget_data.BudgetSettings:
    """The settings as the URL holds them (the widgets below write each change there); None = the default."""
    rpm = number("rpm", int)
    chunk = None if budget_data.has_chunk_sizes(v.dataset) else (number("chunk", int)
                                                                  or budget_data.DEFAULT_CHUNK_TOKENS)
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


def on_pick(key: str) -> None:
    """A click on the chart: its k becomes the page's k (the URL, and the k control as the fragment redraws it)."""
    picked = budget_data.picked_k(st.session_state.get(key))
    if picked is not None and 1 <= picked <= data.DEPTH:
        state.set("k", picked)


@st.fragment
def at_k(v: layout.View) -> None:
    """The k control (with the runs shown), the chart marking k and the numbers at k."""
    shown_v = layout.controls(PAGE, fragments.current(v))
    fragments.rerun_page_if(shown_v.runs != v.runs)  # the header and the recommendation show them too
    k = shown_v.k
    settings = settings_now(v)
    loaded = budget_data.budget(v.dataset, settings)
    if layout.failed(loaded):
        st.stop()
    report = loaded.value
    shown = [report[name] for name in shown_v.runs]
    money = settings.requests_per_month is not None
    context, _ = describe(shown_v, settings, report)
    window = budget_data.k_window(shown)
    every = bool(state.get("every")) or k > window
    k_max = data.DEPTH if every else window
    built = budget_data.chart_spec(v.dataset, settings, tuple(shown_v.runs), tuple(v.all_runs), context, money,
                                   k_max)
    left, right = st.columns([7, 3], gap="medium")
    with left:
        # One key per k: the chart's selection starts empty at each k, so a click on a k picked before (and left
        # since, with the k control) is a new selection again.
        key = f"{CHART_KEY}.{k}"
        st.vega_lite_chart(charts.set_k(built, k), width="content", on_select=lambda: on_pick(key),
                           selection_mode=[charts.PICK], key=key)
        if k > window and not state.get("every"):
            st.caption(f"k = {k} is beyond the range the chart opens on (1 to {window}): it shows every k.")
        st.toggle(f"Show every k up to {data.DEPTH}", help=f"The chart opens on k = 1 to {window}: twice the "
                  "largest recommended k or elbow of the runs shown, where the choice is made.",
                  **state.bind(PAGE, "every", bool(state.get("every")), lambda on: "1" if on else None))
    with right:
        st.subheader(f"At k = {k}", help=(
            f"**recall@{k}**: the share of the relevant chunks that are in the top {k} retrieved, with its 95% "
            "interval in brackets (where the true value lies, given these queries). **Prompt tokens**: what the first "
            f"{k} chunks add to each request's prompt, on average. **$**: those tokens at the LLM input price below."))
        for run in shown:
            at = run.row(k)
            cost = (f"${at['cost_per_month']:,.0f} per month" if money
                    else f"${at['cost_per_1k_requests']:,.2f} per 1,000 requests")
            st.markdown(f"**{md_text(run.name)}** · recall@{k} **{at['recall']:.3f}** "
                        f"(95% CI {at['recall_ci_low']:.3f} – {at['recall_ci_high']:.3f})  \n"
                        f"{at['tokens_mean']:,.0f} prompt tokens · {cost}")
        st.markdown("**Recommended k**: " + " · ".join(f"{md_text(r.name)} {r.recommended_k}" for r in shown))
        st.caption(md_text(f"k = {k} · {context} · models: " + "; ".join(f"{r.name} = {r.model}" for r in shown)
                           + " · recall@k with its 95% interval"))
    st.subheader("Every number for this k, in one table")
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
    layout.table(pd.DataFrame(rows), hide_index=True, width="stretch", column_config={
        f"recall@{k}": st.column_config.NumberColumn(format="%.3f",
                                                     help="Share of the relevant chunks found in the top k."),
        f"hit@{k}": st.column_config.NumberColumn(format="%.3f",
                                                  help="Share of queries with any relevant doc in the top k."),
        "tokens (mean)": st.column_config.NumberColumn(format="%.0f", help="Prompt tokens of the first k chunks."),
        "tokens (p90)": st.column_config.NumberColumn(format="%.0f", help="9 in 10 requests stay under this."),
        "$ per 1,000 requests": st.column_config.NumberColumn(format="$%.4f"),
        "$ per month": st.column_config.NumberColumn(format="$%.2f"),
    })
    st.caption(md_text(f"k = {k} · {context} · models: " + "; ".join(f"{r.name} = {r.model}" for r in shown)))
    st.download_button("Download the chart (PNG)",
                       data=lambda: charts.to_png(charts.set_k(built, k)), file_name=f"choose_k_k{k}.png",
                       mime="image/png", on_click="ignore", icon=":material/image:", key="choose_k.png")


at_k(v)
layout.words("k", "recall@k", "hit@k", "95% interval", "prompt tokens", "λ (lambda)", "recommended k",
             "Kneedle elbow", "stop at k", "BCa bootstrap")

settings = settings_now(v)
loaded = budget_data.budget(v.dataset, settings)
if not loaded.ok:
    st.stop()  # the fragment above says why
report = loaded.value
shown = [report[name] for name in v.runs]

# ---------------------------------------------------------------- the recommendation
st.subheader("Recommended k")
rule = shown[0].rule
curve = f"a smooth fit ({rule['fit']['model']}) of the recall curve" if rule["fit"]["used"] else "the recall curve itself"
st.caption(md_text(f"Rule: {rule['description']}, with λ = {rule['lambda']:g} {rule['lambda_unit']} "
                   f"({rule['lambda_source']}), read on {curve}. Stability: the same rule on bootstrap resamples of the "
                   f"queries. The elbow (Kneedle) ignores cost and is shown as a landmark."))
for run in shown:
    elbow = f" · elbow of the curve (Kneedle): k = {run.kneedle_k}" if run.kneedle_k else ""
    st.markdown(f"**{md_text(run.name)}** ({md_text(run.model)}): {md_text(budget_summary(run))}{md_text(elbow)}")
st.download_button("Download the k table (CSV)", data=lambda: report.to_csv(), file_name="choose_k.csv",
                   mime="text/csv", on_click="ignore", icon=":material/download:", key="choose_k.csv")

# ---------------------------------------------------------------- the settings (defaults shown as values)
with st.expander("What a chunk costs, and what recall is worth", expanded=False):
    cols = st.columns(4)
    with cols[0]:
        st.number_input("LLM input price ($ per million tokens)", min_value=0.0, step=0.25, format="%.2f",
                        help="The generator's price: the retrieved chunks go into its prompt. "
                             f"${DEFAULT_PRICE_PER_MTOK:.2f} until you set yours (a placeholder).",
                        **state.bind(PAGE, "price", number("price") if number("price") is not None
                                     else DEFAULT_PRICE_PER_MTOK))
    with cols[1]:
        st.number_input("Requests per month", min_value=0, step=10_000, placeholder="not set",
                        help="Needed for cost per month. Not set = no monthly figure.",
                        **state.bind(PAGE, "rpm", number("rpm", int)))
    with cols[2]:
        st.number_input("Prompt tokens besides the chunks", min_value=0, step=50,
                        help="System prompt, question and instructions, the same at every k.",
                        **state.bind(PAGE, "overhead", number("overhead", int) or 0))
    with cols[3]:
        st.number_input("Recall points worth 1,000 tokens (λ)", min_value=0.0, step=0.25, format="%.2f",
                        help="The rule picks the k where one more chunk gains fewer recall points per 1,000 "
                             f"prompt tokens than this. {DEFAULT_LAMBDA:g} points until you set it.",
                        **state.bind(PAGE, "lam", number("lam") if number("lam") is not None else DEFAULT_LAMBDA))
    if not budget_data.has_chunk_sizes(v.dataset):
        st.number_input("Tokens per chunk (no documents file with text or token counts is loaded)",
                        min_value=1, step=50, **state.bind(PAGE, "chunk", number("chunk", int) or budget_data.DEFAULT_CHUNK_TOKENS))
    st.caption(md_text(f"Prices and volumes apply to every number above. {describe(v, settings, report)[1]}."))

if report.warnings:
    with st.expander(f"Warnings ({len(report.warnings)})"):
        for w in report.warnings:
            st.text(str(w))
