"""Choose k: the chart first (recall@k with its band over what k chunks cost, one k axis), then the numbers at k,
the recommendation and the settings.

The k control, the chart and the numbers at k are one fragment (`at_k`): changing k, in the control or by a click
on the chart (Streamlit's selection event, `on_pick`), reruns only them. The chart's spec is cached per data set,
settings, runs and k range; k only moves its dashed rule (`charts.set_k`), which the browser redraws in place.
Every number comes from `dashboard.page_models.choose_k`.
"""

import streamlit as st

from evalcore.analyses.k_settings import DEFAULT_CHUNK_TOKENS, DEFAULT_LAMBDA, DEFAULT_PRICE_PER_MTOK
from evalcore.safe_text import md_text

from dashboard import charts, fragments, layout, state
from dashboard.page_models import choose_k

PAGE = "choose_k"
CHART_KEY = "choose_k.chart"
v = layout.view(PAGE, own=("price", "rpm", "overhead", "lam", "chunk", "every"))
layout.header("Choose k", v, "How many chunks to retrieve: what one more chunk adds to recall, and what it adds to "
                             "the prompt. Click the chart to choose k.")
sizes_known = choose_k.can_size_chunks(v.dataset)


def settings_now():
    """The settings as the URL holds them (the widgets below write each change there)."""
    return choose_k.settings_from(state.get, sizes_known)


def on_pick(key: str) -> None:
    """A click on the chart: its k becomes the page's k (the URL, and the k control as the fragment redraws it)."""
    picked = choose_k.picked_k(state.remembered(key))
    if picked is not None:
        state.set("k", picked)


@st.fragment
def at_k(v: layout.View) -> None:
    """The k control (with the runs shown), the chart marking k and the numbers at k."""
    shown_v = layout.controls(PAGE, fragments.current(v))
    fragments.rerun_page_if(shown_v.runs != v.runs)  # the header and the recommendation show them too
    k = shown_v.k
    settings = settings_now()
    if layout.failed(choose_k.budget(v.dataset, settings)):
        st.stop()
    model = choose_k.at_k(v.dataset, settings, tuple(shown_v.runs), k, bool(state.get("every")), shown_v.n,
                          shown_v.labels_ref)
    left, right = st.columns([7, 3], gap="medium")
    with left:
        # One key per k: the chart's selection starts empty at each k, so a click on a k picked before (and left
        # since, with the k control) is a new selection again.
        key = f"{CHART_KEY}.{k}"
        st.vega_lite_chart(charts.set_k(model.chart, k), width="content", on_select=lambda: on_pick(key),
                           selection_mode=[charts.PICK], key=key)
        if k > model.window and not state.get("every"):
            st.caption(f"k = {k} is beyond the range the chart opens on (1 to {model.window}): it shows every k.")
        st.toggle(f"Show every k up to {layout.DEPTH}", help=f"The chart opens on k = 1 to {model.window}: twice the "
                  "largest recommended k or elbow of the runs shown, where the choice is made.",
                  **state.bind(PAGE, "every", bool(state.get("every")), lambda on: "1" if on else None))
    with right:
        st.subheader(f"At k = {k}", help=(
            f"**recall@{k}**: the share of the relevant chunks that are in the top {k} retrieved, with its 95% "
            "interval in brackets (where the true value lies, given these queries). **Prompt tokens**: what the first "
            f"{k} chunks add to each request's prompt, on average. **$**: those tokens at the LLM input price below."))
        for line in model.lines:
            st.markdown(f"**{md_text(line['run'])}** · recall@{k} **{line['recall']:.3f}** "
                        f"(95% CI {line['low']:.3f} – {line['high']:.3f})  \n"
                        f"{line['tokens']:,.0f} prompt tokens · {line['cost']}")
        st.markdown("**Recommended k**: " + " · ".join(f"{md_text(name)} {best}" for name, best in model.recommended))
        st.caption(md_text(f"k = {k} · {model.context} · {model.models} · recall@k with its 95% interval"))
    st.subheader("Every number for this k, in one table")
    layout.table(model.table, hide_index=True, width="stretch", column_config={
        f"recall@{k}": st.column_config.NumberColumn(format="%.3f",
                                                     help="Share of the relevant chunks found in the top k."),
        f"hit@{k}": st.column_config.NumberColumn(format="%.3f",
                                                  help="Share of queries with any relevant doc in the top k."),
        "tokens (mean)": st.column_config.NumberColumn(format="%.0f", help="Prompt tokens of the first k chunks."),
        "tokens (p90)": st.column_config.NumberColumn(format="%.0f", help="9 in 10 requests stay under this."),
        "$ per 1,000 requests": st.column_config.NumberColumn(format="$%.4f"),
        "$ per month": st.column_config.NumberColumn(format="$%.2f"),
    })
    st.caption(md_text(f"k = {k} · {model.context} · {model.models}"))
    st.download_button("Download the chart (PNG)",
                       data=lambda: charts.to_png(charts.set_k(model.chart, k)), file_name=f"choose_k_k{k}.png",
                       mime="image/png", on_click="ignore", icon=":material/image:", key="choose_k.png")


at_k(v)
layout.words("k", "recall@k", "hit@k", "95% interval", "prompt tokens", "λ (lambda)", "recommended k",
             "Kneedle elbow", "stop at k", "BCa bootstrap")

settings = settings_now()
if not choose_k.budget(v.dataset, settings).ok:
    st.stop()  # the fragment above says why
advice = choose_k.recommendation(v.dataset, settings, tuple(v.runs), v.n, v.labels_ref)

# ---------------------------------------------------------------- the recommendation
st.subheader("Recommended k")
st.caption(md_text(advice.rule))
for name, model_name, sentence in advice.runs:
    st.markdown(f"**{md_text(name)}** ({md_text(model_name)}): {md_text(sentence)}")
st.download_button("Download the k table (CSV)", data=advice.csv, file_name="choose_k.csv",
                   mime="text/csv", on_click="ignore", icon=":material/download:", key="choose_k.csv")


def number(name: str, kind=float):
    try:
        value = kind(state.get(name))
    except (TypeError, ValueError):
        return None
    return value if value >= 0 else None


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
    if not sizes_known:
        st.number_input("Tokens per chunk (no documents file with text or token counts is loaded)",
                        min_value=1, step=50, **state.bind(PAGE, "chunk", number("chunk", int) or DEFAULT_CHUNK_TOKENS))
    st.caption(md_text(f"Prices and volumes apply to every number above. {advice.price_text}."))

if advice.warnings:
    with st.expander(f"Warnings ({len(advice.warnings)})"):
        for w in advice.warnings:
            st.text(w)
