"""Choose k: the answer first (each run's k, what it keeps and what it costs, from what the person said), then the
chart beside the person's numbers (price, requests a month, what a recall point is worth), then the numbers at k,
the recommendation and the settings for experts.

The chart has two views (`axis` in the URL): against k (recall@k with its band over what k chunks cost, one k axis;
a click picks k) and against prompt tokens (each run, each chunking, a curve over the mean prompt tokens of its top k
chunks, with the sentence at the person's token budget). The k control, the chart and the numbers at k are one
fragment (`at_k`): changing k reruns only them; k only moves the chart's dashed rule (`k_charts.set_k`). Every number
comes from `dashboard.page_models.choose_k`.
"""

import streamlit as st

from evalcore.analyses.k_settings import DEFAULT_CHUNK_TOKENS, DEFAULT_LAMBDA, DEFAULT_PRICE_PER_MTOK
from evalcore.safe_text import md_text
from evalcore.glossary import explain

from dashboard import caching, charts, fragments, k_charts, layout, state
from dashboard.page_models import choose_k

PAGE = "choose_k"
CHART_KEY = "choose_k.chart"
SPEND_LABELS = {"tokens": "prompt tokens", "request": "$ per 1,000 requests", "month": "$ per month"}
AXES = {"k": "against k", "tokens": "against prompt tokens"}
METRIC_LABELS = {"recall": "documents found (recall)", "evidence_recall": "evidence held (evidence recall)"}
v = layout.view(PAGE, own=("price", "rpm", "vpp", "overhead", "lam", "chunk", "every", "spend", "axis", "budget",
                           "metric"))
layout.header("Choose k", v, "How many chunks to put in every prompt: what one more chunk adds to recall, and what "
                             "it costs.")
sizes_known = choose_k.can_size_chunks(v.dataset)


def number(name: str, kind=float):
    try:
        value = kind(state.get(name))
    except (TypeError, ValueError):
        return None
    return value if value >= 0 else None


def settings_now():
    """The settings as the URL holds them (the inputs write each change there)."""
    return choose_k.settings_from(state.get, sizes_known)


settings = settings_now()
if layout.failed(choose_k.budget(v.dataset, settings)):
    layout.stop()
said = caching.kept(choose_k.headline, entries=32, copies=True)(v.dataset, settings, tuple(v.runs), number("budget"),
                                                               state.get("metric"))
# The page's k is the k to take, as the headline says, until the person picks another: when no k was asked for, or
# the k is the one this page set and the k to take moved (a price, a recall point's worth), k follows it.
asked_k, set_here = state.get("k"), state.remembered("choose_k.k_set_here")
if asked_k is None or (set_here is not None and str(asked_k) == str(set_here) and set_here != said.k):
    state.set("k", said.k)
    state.remember("choose_k.k_set_here", said.k)
with st.container(key="choose_k-headline"):
    st.markdown(f"##### {md_text(said.text)}")

chart_column, inputs = st.columns([7, 3], gap="medium")
with inputs:
    axis = st.segmented_control("Chart", options=list(AXES), format_func=AXES.get,
                                help="Against k: one chunking, how many chunks. Against prompt tokens: chunkings "
                                     "of different sizes compared at the same cost.",
                                **state.bind(PAGE, "axis", state.get("axis") if state.get("axis") in AXES else "k",
                                             lambda chosen: None if chosen in (None, "k") else chosen))
    st.markdown("**Your numbers**", help="They set what k costs and what a recall point is worth; until they are "
                                         "set the page shows where recall stops rising steeply (the elbow).")
    st.number_input("LLM input price ($ per million tokens)", min_value=0.0, step=0.25, format="%.2f",
                    placeholder=f"not set (${DEFAULT_PRICE_PER_MTOK:.2f} assumed)",
                    help="The generator's price: the retrieved chunks go into its prompt.",
                    **state.bind(PAGE, "price", number("price")))
    st.number_input("Requests per month", min_value=0, step=10_000, placeholder="not set",
                    help="For what k costs a month, and to weigh a recall point against it.",
                    **state.bind(PAGE, "rpm", number("rpm", int)))
    st.number_input("A recall point is worth ($ a month)", min_value=0.0, step=50.0, format="%.2f",
                    placeholder="not set", disabled=number("lam") is not None,
                    help="What one more point of recall (1% more of the relevant documents found) is worth to you a "
                         "month. With your price and requests a month the k to take becomes the trade-off; without it "
                         "the k to take is the elbow." + (" Off: lambda is set for experts below." if number("lam")
                                                    is not None else ""),
                    **state.bind(PAGE, "vpp", number("vpp")))
    if number("vpp") and not number("rpm", int):
        st.caption("A recall point's worth needs the requests per month, to weigh it against the cost of tokens.")
    spend = choose_k.spend_shown(state.get("spend"), settings)
    if axis != "tokens":  # against prompt tokens the chart has no lower panel
        st.radio("Lower panel", options=list(SPEND_LABELS), format_func=SPEND_LABELS.get, horizontal=True,
                 help="What k chunks cost per request, in tokens or dollars, or a month ($ per month needs the "
                      "requests per month).", **state.bind(PAGE, "spend", spend))


def on_pick(key: str) -> None:
    """A click on the chart: its k becomes the page's k (the URL, and the k control as the fragment redraws it)."""
    picked = choose_k.picked_k(state.remembered(key))
    if picked is not None:
        state.set("k", picked)


@st.fragment
def at_k(v: layout.View, spend: str) -> None:
    """The k control (with the runs shown), the chart marking k and the numbers at k."""
    shown_v = layout.controls(PAGE, fragments.current(v))
    fragments.rerun_page_if(shown_v.runs != v.runs)  # the headline and the recommendation name them too
    k = shown_v.k
    model = choose_k.at_k(v.dataset, settings, tuple(shown_v.runs), k, bool(state.get("every")), shown_v.n,
                          shown_v.labels_ref, spend)
    chart = caching.kept(choose_k.chart, entries=32, copies=True)(v.dataset, settings, tuple(shown_v.runs),
                                                                  model.context, spend, model.k_max)
    # One key per k: the chart's selection starts empty at each k, so a click on a k picked before (and left since,
    # with the k control) is a new selection again.
    key = f"{CHART_KEY}.{k}"
    st.vega_lite_chart(k_charts.set_k(chart, k), width="content", on_select=lambda: on_pick(key),
                       selection_mode=[k_charts.PICK], key=key)
    if k > model.window and not state.get("every"):
        st.caption(f"k = {k} is beyond the range the chart opens on (1 to {model.window}): it shows every k.")
    st.toggle(f"Show every k up to {layout.DEPTH}", help=f"The chart opens on k = 1 to {model.window}: twice the "
              "largest k to take of the runs shown, where the choice is made.",
              **state.bind(PAGE, "every", bool(state.get("every")), lambda on: "1" if on else None))
    st.markdown(f"**At k = {k}**: " + "  \n".join(
        f"**{md_text(line['run'])}** recall {line['recall']:.3f} (95% CI {line['interval']}) · "
        + (f"evidence held {line['evidence']:.3f} · " if line["evidence"] is not None else "")
        + f"{line['tokens']:,.0f} prompt tokens · {line['cost']} · the {k}th chunk added {line['added']:+.1f} points"
        for line in model.lines))
    st.caption(md_text(f"k = {k} · {model.context} · {model.models} · recall@k with its 95% interval"))
    with st.expander("Every number for this k, in one table"):
        layout.table(model.table, hide_index=True, width="stretch", column_config={
            f"recall@{k}": st.column_config.NumberColumn(format="%.3f", help=explain("recall@k")),
            f"hit@{k}": st.column_config.NumberColumn(format="%.3f", help=explain("hit@k")),
            "tokens (mean)": st.column_config.NumberColumn(format="%.0f", help="Prompt tokens of the first k chunks."),
            "tokens (p90)": st.column_config.NumberColumn(format="%.0f", help="9 in 10 requests stay under this."),
            "$ per 1,000 requests": st.column_config.NumberColumn(format="$%.4f"),
            "$ per month": st.column_config.NumberColumn(format="$%.2f"),
        })
        st.caption(md_text(f"k = {k} · {model.context} · {model.models}"))
    st.download_button("Download the chart (PNG)",
                       data=lambda: charts.to_png(k_charts.set_k(chart, k)), file_name=f"choose_k_k{k}.png",
                       mime="image/png", on_click="ignore", icon=":material/image:", key="choose_k.png")


def against_tokens(v: layout.View) -> None:
    """The sentence at the token budget, then every run over the mean prompt tokens of its top k chunks."""
    asked = number("budget") or choose_k.default_budget(v.dataset, settings, tuple(v.runs))
    cols = st.columns([2, 3])
    with cols[0]:
        budget = st.number_input("Prompt-token budget (mean per request)", min_value=1.0, step=100.0, format="%.0f",
                                 help=explain("prompt-token budget"),
                                 **state.bind(PAGE, "budget", float(asked)))
    with cols[1]:
        shown_v = layout.controls(PAGE, v, k=False)
    fragments.rerun_page_if(shown_v.runs != v.runs)
    model = caching.kept(choose_k.against_tokens, entries=32, copies=True)(
        v.dataset, settings, tuple(shown_v.runs), float(budget), state.get("metric"), shown_v.n, shown_v.labels_ref)
    if len(model.metrics) > 1:
        st.radio("Compare on", options=list(model.metrics), format_func=METRIC_LABELS.get, horizontal=True,
                 help=explain("evidence recall@k"), **state.bind(PAGE, "metric", model.metric))
    with st.container(key="choose_k-at-tokens"):  # the answer at the budget, then the curves behind it
        st.markdown(f"**{md_text(model.sentence)}**")
    st.vega_lite_chart(model.chart, width="content")


with chart_column:
    if axis == "tokens":
        against_tokens(v)
    else:
        at_k(v, spend)

layout.words("k", "recall@k", "hit@k", "95% interval", "prompt tokens", "k to take", "Kneedle elbow",
             "a recall point's worth", "λ (lambda)", "stop at k", "BCa bootstrap", "evidence recall@k")

advice = choose_k.recommendation(v.dataset, settings, tuple(v.runs), v.n, v.labels_ref)
st.subheader("How the k is chosen")
st.caption(md_text(advice.rule))
for name, model_name, sentence in advice.runs:
    st.markdown(f"**{md_text(name)}** ({md_text(model_name)}): {md_text(sentence)}")
st.download_button("Download the k table (CSV)", data=advice.csv, file_name="choose_k.csv",
                   mime="text/csv", on_click="ignore", icon=":material/download:", key="choose_k.csv")

with st.expander("For experts: lambda, prompt overhead, chunk size", icon=":material/tune:"):
    cols = st.columns(3)
    with cols[0]:
        st.number_input("Recall points worth 1,000 tokens (λ)", min_value=0.0, step=0.25, format="%.2f",
                        placeholder=f"not set ({DEFAULT_LAMBDA:g} for the rule's table)",
                        help="Set directly instead of a recall point's worth: the rule picks the k where one more "
                             "chunk gains fewer recall points per 1,000 prompt tokens than this.",
                        **state.bind(PAGE, "lam", number("lam")))
    with cols[1]:
        st.number_input("Prompt tokens besides the chunks", min_value=0, step=50,
                        help="System prompt, question and instructions, the same at every k.",
                        **state.bind(PAGE, "overhead", number("overhead", int) or 0))
    with cols[2]:
        if not sizes_known:
            st.number_input("Tokens per chunk (no text or token counts are loaded)", min_value=1, step=50,
                            **state.bind(PAGE, "chunk", number("chunk", int) or DEFAULT_CHUNK_TOKENS))
    st.caption(md_text(f"Prices and volumes apply to every number above. {advice.price_text}."))

if advice.warnings:
    with st.expander(f"Warnings ({len(advice.warnings)})"):
        for w in advice.warnings:
            st.text(w)
