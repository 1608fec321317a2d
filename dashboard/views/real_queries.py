"""Real queries: upload a query log, see its head, torso, tail and zero-result share, draw a seeded sample of the
queries customers typed, and send it to Blind judging.

Everything shown comes from `dashboard.page_models.real_queries` (``evalcore sample`` on the upload: personal data
masked by the core before this page sees a query); storing the log and the sample goes through the person's session.
The stored log's key, n, seed and allocation are in the URL, so a copied link draws the same sample.
"""

import streamlit as st

from evalcore.safe_text import md_text
from evalcore.warning_log import plural

from dashboard import access_ui, caching, charts, layout, state
from dashboard.page_models import real_queries as page

PAGE = "real_queries"
HELD = "real_queries.logs"  # logs uploaded on this server, by key (without a workspace, the only way back to one)
UPLOADS = "real_queries.uploads"  # this session's uploads already read: file id -> log key, or the error shown

v = layout.view(PAGE, own=("log", "logformat", "n", "seed", "allocation"))
layout.header("Real queries", v, "The queries customers typed, from your search or RAG log: how they spread from the "
                                 "few typed often to the many typed once, how many found nothing, and a seeded "
                                 "sample of them to judge blind. Personal data is masked before anything is shown.")
layout.words("source", "planner", "blind labels", "pooled judging", "who did what")


def _number(name: str, default: int, low: int, high: int) -> int:
    try:
        value = int(str(state.get(name, default)))
    except ValueError:
        return default
    return min(max(value, low), high)


barred = access_ui.refusal("upload")
up, kind = st.columns([3, 1])
with kind:
    wanted = state.get("logformat", page.LOG_FORMATS[0])
    log_format = st.selectbox("Kind of log", options=page.LOG_FORMATS,
                              help="detect: told from the file's content. ubi: OpenSearch User Behavior Insights; "
                                   "openinference: retriever spans (Phoenix, OpenTelemetry); table: a query column.",
                              **state.bind(PAGE, "logformat", wanted if wanted in page.LOG_FORMATS else "detect"))
n_col, seed_col, how_col = st.columns(3)
with n_col:
    n = int(st.number_input("Queries to draw", min_value=1, max_value=page.MAX_N, step=10,
                            help="How many queries to judge; the queries the loaded labels hold are left out.",
                            **state.bind(PAGE, "n", _number("n", page.DEFAULT_N, 1, page.MAX_N), int)))
with seed_col:
    seed = int(st.number_input("Seed", min_value=0, max_value=2**31 - 1, step=1,
                               help="The same log, seed and settings draw the same queries, here and with "
                                    "evalcore sample.", **state.bind(PAGE, "seed", _number("seed", 0, 0, 2**31 - 1),
                                                                     int)))
with how_col:
    wanted = state.get("allocation", page.ALLOCATIONS[0])
    allocation = st.selectbox("Share the draw between strata", options=page.ALLOCATIONS,
                              help="proportional: by how often each stratum's queries were logged; equal: the same "
                                   "number from each.",
                              **state.bind(PAGE, "allocation", wanted if wanted in page.ALLOCATIONS else "proportional"))

held = caching.held(HELD)
drawn = caching.kept(page.draw, entries=16, spinner="Reading the log, masking personal data, drawing the sample…")
with up:
    uploaded = st.file_uploader("Query log", disabled=bool(barred), key=f"{PAGE}.upload",
                                help=barred or "OpenSearch UBI queries, OpenInference retriever spans, or a table with "
                                               "a query column (CSV, TSV, JSON lines, Parquet; .gz accepted).")
    if uploaded is not None:
        read = state.memo(UPLOADS)
        if uploaded.file_id not in read:
            ref = page.hold(uploaded.name, uploaded.getvalue())  # in memory only: the log is never stored
            trial = drawn(v.dataset, ref, log_format, n, seed, allocation)
            if trial.ok:
                held[page.log_key(ref)] = ref
                state.set("log", page.log_key(ref))
                read[uploaded.file_id] = ("ok", page.log_key(ref))
            else:
                read[uploaded.file_id] = ("error", trial.error)
        outcome, said = read[uploaded.file_id]
        if outcome == "error":
            layout.error(said)  # beside the upload; the log shown below, if any, is unchanged

key = state.get("log")
log = held.get(key)
if key and log is None:
    st.warning(md_text(f"The link names log {key}, which this server no longer holds: upload it again."),
               icon=":material/link_off:")
    state.set("log", None)
if log is None:
    st.info("Upload a query log to see what customers typed. Evaluating on queries the team wrote lets a demo pass; "
            "customers use other words, and some of their searches find nothing. The page counts the log's queries, "
            "merges near-duplicates, puts each in a stratum (head: the few typed most often; torso; tail: the many "
            "typed once or twice; zero-result; reformulated: tried again at once) and draws a seeded sample to judge "
            "blind, as evalcore sample does.", icon=":material/upload_file:")
    if st.button("Try it on the sample log", icon=":material/play_arrow:", key=f"{PAGE}.sample_log",
                 help="A month of the sample help centre's searches and clicks (2,538 searches), as OpenSearch UBI "
                      "writes them."):
        ref = page.sample_log()
        held[page.log_key(ref)] = ref
        state.set("log", page.log_key(ref))
        st.rerun()
    layout.stop()

found = drawn(v.dataset, log, log_format, n, seed, allocation)
if layout.failed(found):
    layout.stop()
model = found.value

for sentence in model.sentences:
    st.text(sentence)
for warning in model.warnings:
    st.warning(md_text(warning), icon=":material/warning:")

counts = model.counts
cols = st.columns(4)
cols[0].metric("Logged queries", f"{counts['queries']:,}")
cols[1].metric("Distinct queries", f"{counts['distinct']:,}")
cols[2].metric("After merging near-duplicates", f"{counts['clusters']:,}")
cols[3].metric("Found nothing", "not in the log" if model.zero_result_share is None
               else f"{model.zero_result_share:.0%}",
               help="The share of logged queries whose searches all found nothing (the log's results say so).")
zero = ("the log says nothing of results" if model.zero_result_share is None
        else f"{model.zero_result_share:.0%} of them found nothing")
st.altair_chart(charts.strata_chart(model.strata, title="Where the customers' queries fall",
                                    subtitle=f"{plural(counts['queries'], 'logged query', 'logged queries')} in "
                                             f"{model.file}; {zero}"), width="stretch")
with st.expander("Strata in numbers"):
    layout.table(model.strata, width="stretch",
                 column_config={"share": st.column_config.NumberColumn("share of logged", format="percent")})

st.subheader(f"The sample: {plural(len(model.sample), 'query', 'queries')}")
st.caption(md_text(f"seed {seed}, {allocation} allocation, {plural(n, 'query', 'queries')} asked for; each with its "
                   "stratum, how often it (with its near-duplicates) was logged, and its id in the queries file."))
layout.table(model.sample, width="stretch")

left, right = st.columns(2)
with left:
    st.download_button("Download the queries file", data=model.queries_file, file_name=model.queries_name,
                       mime="text/csv", key=f"{PAGE}.download",
                       help="query_id, query_text, source, stratum, count: run your retriever on these queries and "
                            "upload its runs on the Data page, so Blind judging can pool their results.")
with right:
    send = st.button("Send to Blind judging", type="primary", key=f"{PAGE}.send", disabled=bool(barred) or
                     model.sample.empty,
                     help=barred or "Stores the sample and opens Blind judging with it: its queries come first, with "
                                    f"their source and stratum. The store is {access_ui.actor().who}'s, recorded.")
if v.dataset.queries is not None:
    st.caption(md_text(f"Sending replaces this data set's queries file ({v.dataset.queries.name}) with the sample."))
if send:
    sent = page.send_to_judging(v.dataset, model)
    if not layout.failed(sent):
        state.set("data", sent.value)
        st.switch_page("views/judge.py", query_params={"data": sent.value})
