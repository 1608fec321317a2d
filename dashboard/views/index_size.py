"""Index size: from each model's vectors, what every smaller index (fewer dimensions, int8, binary) costs in recall
against the full vectors, with intervals, a sentence per variant, and a button that adds a variant to the runs."""

import streamlit as st

from evalcore.report.index_size import variant_verdict
from evalcore.safe_text import md_text

from dashboard import access_ui, charts, layout, state
from dashboard.page_models import index_size as page

PAGE = "index-size"

v = layout.view(PAGE, own=("dims", "precision", "similarity", "models", "vectors", "rescore"))
layout.header("Index size", v, "How much recall each smaller index costs against the full vectors, searched exactly "
                               "from each model's own vectors, with 95% intervals and paired tests.")
v = layout.controls(PAGE, v, runs=False)
layout.words("index size", "dimensions kept", "precision (storage)", "rescoring", "similarity", "frontier",
             "recall@k", "95% interval", "paired comparison", "Holm correction")

barred = access_ui.refusal("upload")  # viewers read the sample's variants: uploads and new runs need an editor
uploaded = list(page.remembered_models(state.get("vectors")))
models = [*page.sample_models(v.dataset), *uploaded]

with st.expander("Add your model's vectors", expanded=not models, icon=":material/upload_file:"):
    st.caption("Query vectors and doc vectors from the same model: Parquet (an id column and a vector column), JSONL "
               '({"id": ..., "vector": [...]}) or .npy with its ids file (one id per line). A file that cannot be '
               "read is explained here and changes nothing already loaded.")
    with st.form("index_size.upload", clear_on_submit=False, border=False):
        name = st.text_input("Model name", help=barred or "How its runs are named (for example tuned-v3).",
                             disabled=bool(barred))
        cols = st.columns(2)
        with cols[0]:
            query_file = st.file_uploader("Query vectors", key="index_size.queries", help=barred or "Parquet, JSONL or .npy",
                                         disabled=bool(barred))
            query_ids = st.file_uploader("Query ids (for .npy only)", key="index_size.query_ids", disabled=bool(barred),
                                         help="One id per line, row by row.")
        with cols[1]:
            doc_file = st.file_uploader("Doc vectors", key="index_size.docs", help=barred or "Parquet, JSONL or .npy",
                                         disabled=bool(barred))
            doc_ids = st.file_uploader("Doc ids (for .npy only)", key="index_size.doc_ids", disabled=bool(barred),
                                       help="One id per line, row by row.")
        submitted = st.form_submit_button("Use these vectors", icon=":material/add:", disabled=bool(barred),
                                          help=barred)
    if submitted and not barred:
        if query_file is None or doc_file is None:
            layout.error("Upload both the query vectors and the doc vectors.")
        else:
            loaded = page.upload_model(name, query_file, doc_file, query_ids, doc_ids)
            if loaded.ok and loaded.value.name in {m.name for m in models if m.sample}:
                layout.error(f"{loaded.value.name} is one of the sample's models: give yours another name.")
            elif not layout.failed(loaded):
                kept = [m for m in uploaded if m.name != loaded.value.name] + [loaded.value]
                state.set("vectors", page.remember_models(kept))
                st.rerun()

if not models:
    st.info("No vectors yet: the sample's vectors go with the sample labels only. Upload a model's vectors above.")
    st.stop()

names = [m.name for m in models]
controls = st.columns([3, 2, 2, 1])
with controls[0]:
    wanted_models = str(state.get("models", "")).split(",")
    chosen = st.multiselect("Models", names, help="Whose vectors are searched.",
                            **state.bind(PAGE, "models", [n for n in names if n in wanted_models] or names,
                                         lambda picked: ",".join(picked))) or names
with controls[1]:
    dims = st.multiselect("Dimensions kept", page.DIMS_CHOICES, help=layout.explain("dimensions kept"),
                          **state.bind(PAGE, "dims", [d for d in state.get("dims", "").split(",") if d in
                                                      page.DIMS_CHOICES] or list(page.DEFAULT_DIMS),
                                       lambda chosen_dims: ",".join(chosen_dims)))
with controls[2]:
    precisions = st.multiselect("Precisions", list(page.PRECISIONS), help=layout.explain("precision (storage)"),
                                **state.bind(PAGE, "precision", [p for p in state.get("precision", "").split(",") if p in
                                                                 page.PRECISIONS] or
                                             list(page.DEFAULT_PRECISIONS),
                                             lambda chosen_p: ",".join(chosen_p)))
with controls[3]:
    similarity = st.radio("Similarity", ["cosine", "dot"], help=layout.explain("similarity"),
                          **state.bind(PAGE, "similarity", state.get("similarity", "cosine")
                                       if state.get("similarity") in ("cosine", "dot") else "cosine"))

rescore = 0
if "binary" in (precisions or []):
    rescore_on = st.toggle(f"Also rescore binary with the float vectors (top {page.RESCORE_CANDIDATES} "
                           "candidates)", help=layout.explain("rescoring"),
                           **state.bind(PAGE, "rescore", state.get("rescore") == "1", lambda on: "1" if on else None))
    rescore = page.RESCORE_CANDIDATES if rescore_on else 0

reports = {}
by_name = {m.name: m for m in models}
ordered = [m for m in models if m.name in chosen]
settings = page.settings_for(dims or ["full"], precisions or ["float32"], similarity, v.k, rescore)
for model in ordered:
    loaded = page.cached_study(v.dataset, model, settings)
    if loaded is None:
        bar = st.progress(0.0, text=f"Searching the vectors of {layout.safe(model.name)}…")
        loaded = page.study(v.dataset, model, settings, progress=lambda share, what, bar=bar, model=model: bar.progress(
            min(1.0, share), text=f"Searching the vectors of {layout.safe(model.name)}: {layout.safe(what)}…"))
        bar.empty()
    if layout.failed(loaded):
        continue
    reports[model.name] = loaded.value.report
    for warning in loaded.value.warnings:
        st.caption(md_text(f"{model.name}: {warning.message}"))

if not reports:
    st.stop()
points = page.points(reports)
metric = f"recall@{v.k}"
n = int(points["n"].iloc[0])
labels_ref = v.labels_ref
context = f"{metric} with 95% intervals · n = {n:,} queries · labels {labels_ref}" + (f" · {v.split}" if v.split
                                                                                    else "")

st.subheader("Quality against index size", help=layout.explain("frontier"))
st.vega_lite_chart(spec=charts.index_frontier(points, list(reports), metric=metric,
                                              title=f"{metric} against index size, every variant",
                                              subtitle=[context, ("line and band: the frontier (no smaller index "
                                                                  "scores higher); bars: 95% intervals")]),
                   width="content")
st.caption(md_text(context + " · models: " + "; ".join(f"{name} = {by_name[name].model}"
                                                       for name in reports)))

st.subheader("What each smaller index costs", help=layout.explain("index size"))
for name, report in reports.items():
    st.markdown(f"**{layout.safe(name)}** ({layout.safe(by_name[name].model)}): full vectors "
                f"{layout.safe(report.reference.variant.dims)} dims, {metric} "
                f"{report.metrics(report.reference)[metric]['mean']:.3f}, n = {n:,}, labels {layout.safe(labels_ref)}")
    for item in report.variants[1:]:
        st.text(variant_verdict(report, item))

table = points[["name", "variant", "dims", "precision", "index_mb", "ratio", "metric", "mean", "ci_low", "ci_high",
                "n", "model", "frontier"]].rename(columns={"name": "model name", "index_mb": "index MB",
                                                           "ratio": "x smaller"})
table.insert(table.columns.get_loc("n") + 1, "labels", labels_ref)
layout.table(table, hide_index=True, width="stretch",
             column_config={"mean": st.column_config.NumberColumn(format="%.4f"),
                            "ci_low": st.column_config.NumberColumn(format="%.4f"),
                            "ci_high": st.column_config.NumberColumn(format="%.4f"),
                            "index MB": st.column_config.NumberColumn(format="%.3f"),
                            "x smaller": st.column_config.NumberColumn(format="%.1f")})

st.subheader("Add a variant to the runs")
st.caption("Its run joins the loaded runs like an uploaded one: Overview, Choose k and Failures show it, and the "
           "link names the new data set.")
added = state.take("index_size.added")
if added:
    st.success(md_text(f"Added run {added} to the loaded runs."), icon=":material/check:")
    st.page_link("views/overview.py", label="See it on the Overview", icon=":material/leaderboard:")
choices = [run for name in reports for run in points.loc[points["name"] == name, "run"]]
picked = st.selectbox("Variant", choices, key="index_size.pick", help="The variant whose run is added.")
if st.button("Add to the loaded runs", icon=":material/playlist_add:", key="index_size.add", disabled=bool(barred),
             help=barred) and not barred:
    owner = next(name for name in reports if picked in set(points.loc[points["name"] == name, "run"]))
    candidate = page.variant_dataset(v.dataset, reports[owner], picked)
    state.set("data", page.register(candidate))
    state.remember("index_size.added", candidate.run_names[-1])
    st.rerun()
