"""Index size, two questions about the index a team will ship, each answered by a chart first:

- Smaller vectors: what every smaller index (fewer dimensions, int8, binary) costs in recall against the full
  vectors, with intervals, a sentence per variant, and a button that adds a variant to the runs;
- Approximate index: a sweep of an HNSW or IVF index's ef or nprobe, each setting's recall@k against its latency
  (or memory) with exact search as the ceiling, a sentence per setting, and its lost queries opened in Failures
  beside exact search."""

import streamlit as st

from evalcore.report.index_size import index_verdict, variant_verdict
from evalcore.safe_text import md_text
from evalcore.warning_log import plural
from evalcore.glossary import explain

from dashboard import access_ui, charts, layout, state
from dashboard.page_models import index_size as page

PAGE = "index-size"
PARTS = ("Smaller vectors", "Approximate index")
BUILD = ("m", "efc", "nlist", "nbits")
ANN = ("ann_model", "ann_kind", "ann_sweep", "ann_dims", "ann_x", *(f"ann_{name}" for name in BUILD))

v = layout.view(PAGE, own=("part", "dims", "precision", "similarity", "models", "vectors", "rescore", *ANN))
layout.header("Index size", v, "The index you will ship, measured against the labels: how much recall smaller "
                               "vectors or an approximate index cost, with 95% intervals, searched from each "
                               "model's own vectors.")
part = st.segmented_control("Question", PARTS, required=True, label_visibility="collapsed",
                            **state.bind(PAGE, "part", PARTS[1] if state.get("part") == "approximate" else PARTS[0],
                                         lambda chosen: "approximate" if chosen == PARTS[1] else None))
answer = st.container()  # the chart and its sentence: first on the screen, filled once the settings below are read
settings_area = st.container()
barred = access_ui.refusal("upload")  # viewers read the sample's variants: uploads and new runs need an editor
build_barred = access_ui.refusal("build_index")  # building an index takes the server's memory: editors and owners

with settings_area:
    st.subheader("What is searched")
    v = layout.controls(PAGE, v, runs=False)
    uploaded = list(page.remembered_models(state.get("vectors")))
    models = [*page.sample_models(v.dataset), *uploaded]
    names = [m.name for m in models]
    similarity = "cosine"
    if models:
        columns = st.columns([3, 2, 2, 1] if part == PARTS[0] else [2, 2, 2, 3, 1])
        with columns[-1]:
            similarity = st.radio("Similarity", ["cosine", "dot"], help=explain("similarity"),
                                  **state.bind(PAGE, "similarity", state.get("similarity", "cosine")
                                               if state.get("similarity") in ("cosine", "dot") else "cosine"))

# ============================================================================ smaller vectors
if part == PARTS[0] and models:
    with settings_area:
        with columns[0]:
            wanted_models = str(state.get("models", "")).split(",")
            chosen = st.multiselect("Models", names, help="Whose vectors are searched.",
                                    **state.bind(PAGE, "models", [n for n in names if n in wanted_models] or names,
                                                 lambda picked: ",".join(picked))) or names
        with columns[1]:
            dims = st.multiselect("Dimensions kept", page.DIMS_CHOICES, help=explain("dimensions kept"),
                                  **state.bind(PAGE, "dims", [d for d in state.get("dims", "").split(",") if d in
                                                              page.DIMS_CHOICES] or list(page.DEFAULT_DIMS),
                                               lambda chosen_dims: ",".join(chosen_dims)))
        with columns[2]:
            precisions = st.multiselect("Precisions", list(page.PRECISIONS), help=explain("precision (storage)"),
                                        **state.bind(PAGE, "precision", [p for p in state.get("precision", "").split(",")
                                                                         if p in page.PRECISIONS] or
                                                     list(page.DEFAULT_PRECISIONS), lambda chosen_p: ",".join(chosen_p)))
        rescore = 0
        if "binary" in (precisions or []):
            rescore_on = st.toggle(f"Also rescore binary with the float vectors (top {page.RESCORE_CANDIDATES} "
                                   "candidates)", help=explain("rescoring"),
                                   **state.bind(PAGE, "rescore", state.get("rescore") == "1",
                                                lambda on: "1" if on else None))
            rescore = page.RESCORE_CANDIDATES if rescore_on else 0
    reports = {}
    by_name = {m.name: m for m in models}
    settings = page.settings_for(dims or ["full"], precisions or ["float32"], similarity, v.k, rescore)
    with answer:
        for model in [m for m in models if m.name in chosen]:
            loaded = page.cached_study(v.dataset, model, settings)
            if loaded is None:
                bar = st.progress(0.0, text=f"Searching the vectors of {md_text(model.name)}…")
                loaded = page.study(v.dataset, model, settings, progress=lambda share, what, bar=bar, model=model:
                                    bar.progress(min(1.0, share), text=f"Searching the vectors of "
                                                 f"{md_text(model.name)}: {md_text(what)}…"))
                bar.empty()
            if layout.failed(loaded):
                continue
            reports[model.name] = loaded.value.report
            for warning in loaded.value.warnings:
                st.caption(md_text(f"{model.name}: {warning.message}"))
    if reports:
        points = page.points(reports)
        metric = f"recall@{v.k}"
        n = int(points["n"].iloc[0])
        context = f"{metric} with 95% intervals · n = {plural(n, 'query', 'queries')} · labels {v.labels_ref}" + (
            f" · {v.split}" if v.split else "")
        with answer:
            st.markdown(f"**{md_text(page.take_line(reports))}**", help=explain("index to take"))
            st.vega_lite_chart(spec=charts.index_frontier(
                points, list(reports), metric=metric, title=f"{metric} against index size, every variant",
                subtitle=[context, "line and band: the frontier (no smaller index scores higher); bars: 95% "
                                   "intervals; shapes: precision"]), width="content")
            st.caption(md_text(context + " · models: " + "; ".join(f"{name} = {by_name[name].model}"
                                                                   for name in reports)))
        note = page.stand_ins(models, {name: r.reference.variant.dims for name, r in reports.items()})
        if note:
            st.info(md_text(note), icon=":material/straighten:")
        st.subheader("What each smaller index costs", help=explain("index size"))
        for name, report in reports.items():
            st.markdown(f"**{md_text(name)}** ({md_text(by_name[name].model)}): "
                        f"{md_text(page.full_vectors(by_name[name], report, v.k))}, n = {n:,}, labels "
                        f"{md_text(v.labels_ref)}")
            if len(reports) > 1:  # each model's index to take, in the words `evalcore vectors` uses
                st.text(page.take(report))
            for item in report.variants[1:]:
                st.text(variant_verdict(report, item))
        table = page.variants_table(points, v.labels_ref)
        # What every row shares (metric, n, labels) is said in the caption under the table: the rest fits 1400 px.
        layout.table(table, hide_index=True, width="stretch",
                     column_order=[c for c in table.columns if c not in ("metric", "n", "labels")],
                     column_config={"mean": st.column_config.NumberColumn(metric, format="%.4f"),
                                    "ci_low": st.column_config.NumberColumn(format="%.4f"),
                                    "ci_high": st.column_config.NumberColumn(format="%.4f"),
                                    "index MB": st.column_config.NumberColumn(format="%.3f"),
                                    "x smaller": st.column_config.NumberColumn(format="%.1f")})
        st.caption(md_text(context))

        st.subheader("Add a variant to the runs")
        st.caption("Its run joins the loaded runs like an uploaded one: Overview, Choose k and Failures show it, and "
                   "the link names the new data set.")
        added = state.take("index_size.added")
        if added:
            st.success(md_text(f"Added run {added} to the loaded runs."), icon=":material/check:")
            st.page_link("views/overview.py", label="See it on the Overview", icon=":material/leaderboard:")
        choices = [run for name in reports for run in points.loc[points["name"] == name, "run"]]
        picked = st.selectbox("Variant", choices, key="index_size.pick", help="The variant whose run is added.")
        if st.button("Add to the loaded runs", icon=":material/playlist_add:", key="index_size.add",
                     disabled=bool(barred), help=barred) and not barred:
            candidate = page.variant_dataset(v.dataset, reports[page.owner_of(points, picked)], picked)
            state.set("data", page.register(candidate))
            state.remember("index_size.added", candidate.run_names[-1])
            st.rerun()

# ============================================================================ approximate index
if part == PARTS[1] and models:
    with settings_area:
        with columns[0]:
            model_name = st.selectbox("Model", names, help="Whose vectors the index is built on.",
                                      **state.bind(PAGE, "ann_model", state.get("ann_model")
                                                   if state.get("ann_model") in names else names[0]))
        with columns[1]:
            kind = st.selectbox("Index", page.INDEX_KINDS, format_func=page.index_title,
                                help=explain("approximate index"),
                                **state.bind(PAGE, "ann_kind", state.get("ann_kind") if state.get("ann_kind") in
                                             page.INDEX_KINDS else page.INDEX_KINDS[0]))
        knob = page.search_param(kind)
        with columns[2]:
            wanted = [int(x) for x in str(state.get("ann_sweep", "")).split(",") if x.isdigit()]
            values = st.multiselect(f"Sweep of {knob}", page.SWEEP_CHOICES, help=explain(knob),
                                    **state.bind(PAGE, "ann_sweep", [x for x in wanted if x in page.SWEEP_CHOICES]
                                                 or list(page.DEFAULT_SWEEP[knob]),
                                                 lambda chosen_values: ",".join(map(str, sorted(chosen_values)))))
        with columns[3]:
            build_columns = st.columns(len(page.build_params(kind)) + 1)
            build, brought = {}, []
            for (name, default), column in zip(page.build_params(kind), build_columns):
                least, most = page.bounds(kind, name)
                value, note = page.from_link(kind, name, str(state.get(f"ann_{name}", "")), default)
                if note:  # said once, and the link now holds the value used
                    brought.append(note)
                    state.set(f"ann_{name}", value)
                with column:
                    build[name] = int(st.number_input(
                        name, min_value=least, max_value=most, step=1, help=page.BUILD_HELP[name],
                        **state.bind(PAGE, f"ann_{name}", value, int)))
            with build_columns[-1]:
                dims_choice = st.selectbox("Dims", page.DIMS_CHOICES, help=explain("dimensions kept"),
                                           **state.bind(PAGE, "ann_dims", state.get("ann_dims") if
                                                        state.get("ann_dims") in page.DIMS_CHOICES else "full"))
        against = st.segmented_control("Draw against", page.AGAINST, required=True,
                                       format_func=lambda a: "latency" if a == "latency" else "memory (index size)",
                                       **state.bind(PAGE, "ann_x", "memory" if state.get("ann_x") == "memory"
                                                    else "latency", lambda a: "memory" if a == "memory" else None))
        for note in brought:  # a link's value out of range, said beside the inputs it was brought into range in
            st.warning(md_text(note), icon=":material/tune:")
        specs = page.sweep_specs(kind, build, values or list(page.DEFAULT_SWEEP[knob]), dims_choice)
        st.caption("Built on one thread (the same index every time), every search timed on one thread; the same as "
                   "this command:")
        st.code("evalcore vectors " + " ".join(f"--index {s}" for s in specs) +
                f" --build-threads {page.BUILD_THREADS}", language="bash", wrap_lines=True)
    model = next(m for m in models if m.name == model_name)
    settings = page.sweep_settings(specs, similarity, v.k)
    loaded, problem = page.cached_study(v.dataset, model, settings), None  # what was built: every role sees it
    if loaded is None:
        with settings_area:
            problem = page.check_sweep(model, specs)  # out of range for these vectors, or over the memory budget
            if build_barred:
                st.button("Build and search these indexes", icon=":material/build:", key="index_size.build",
                          disabled=True, help=build_barred)
                problem = problem or f"Nothing was built: {build_barred}"
            if problem is not None:
                layout.error(problem)
    failed = True
    if loaded is not None or problem is None:
        with answer:
            if loaded is None:
                bar = st.progress(0.0, text=f"Building the indexes of {md_text(model.name)}…")
                loaded = page.study(v.dataset, model, settings, refused=build_barred,
                                    progress=lambda share, what: bar.progress(
                                        min(1.0, share), text=f"Building and searching {md_text(what)}…"))
                bar.empty()
            failed = layout.failed(loaded)
    if not failed:
        report = loaded.value.report
        sweep = page.sweep_points(report)
        metric = f"recall@{v.k}"
        n = int(sweep["n"].iloc[0])
        context = (f"{metric} with 95% intervals · n = {plural(n, 'query', 'queries')} · labels {v.labels_ref} · "
                   "model "
                   f"{model.model}" + (f" · {v.split}" if v.split else ""))
        with answer:
            st.markdown(f"**{md_text(page.take(report))}**", help=explain("index to take"))
            title = f"{metric} against {'latency' if against == 'latency' else 'index size'}, {page.index_title(kind)}"
            st.vega_lite_chart(spec=charts.index_speed(
                sweep, metric=metric, against=against, title=title,
                subtitle=[context, "dashed line and band: exact search, the most an index can find; bars: 95% "
                                   "intervals; every search on one thread"]), width="content")
            for item in report.variants:
                sentence = index_verdict(report, item)
                if sentence:
                    st.markdown(md_text(sentence))
            st.caption(md_text(context))
        note = page.stand_ins([model], {model.name: report.reference.variant.dims})
        if note:
            st.info(md_text(note), icon=":material/straighten:")

        st.subheader("The queries an index loses", help=explain("lost queries"))
        lost = page.lost_queries(v.dataset, report)
        if lost.empty:
            st.success(md_text(f"No setting of this sweep loses an answer exact search found in its top {v.k}."),
                       icon=":material/check:")
        else:
            st.caption(md_text(f"A relevant doc exact search had in its top {v.k} is missing from the index's top "
                               f"{v.k}. Open one in Failures: the index's ranked list beside exact search's."))
            options = list(range(len(lost)))
            picked_row = st.selectbox(
                "Lost query", options, key="index_size.lost",
                format_func=lambda i: f"{lost.at[i, 'setting']} · {lost.at[i, 'query']}"
                                      + (f" · {lost.at[i, 'query_text']}" if lost.at[i, 'query_text'] else ""))
            if st.button("Open in Failures, beside exact search", icon=":material/compare:", key="index_size.open",
                         disabled=bool(barred), help=barred) and not barred:
                opened, pair = page.beside_exact(v.dataset, report, str(lost.at[picked_row, "run"]))
                state.set("data", page.register(opened))
                state.set("runs", pair)
                state.set("query", str(lost.at[picked_row, "query"]))
                st.switch_page("views/failures.py")
            layout.table(lost, hide_index=True, width="stretch", height=240,
                         column_config={"query_text": st.column_config.TextColumn("what the customer typed",
                                                                                  width="large")})

        st.subheader("Every setting")
        table = page.settings_table(sweep, v.k, v.labels_ref)
        # What every row shares (metric, n, labels, model) is said in the caption under the table: the rest fits.
        layout.table(table, hide_index=True, width="stretch",
                     column_order=[c for c in table.columns if c not in ("metric", "n", "labels", "model")],
                     column_config={name: st.column_config.NumberColumn(format=fmt) for name, fmt in (
                         (metric, "%.4f"), ("ci_low", "%.4f"), ("ci_high", "%.4f"),
                         (f"neighbour recall@{v.k}", "%.3f"), ("5th percentile", "%.2f"), ("lost queries", "%d"),
                         ("queries/s (1 thread)", "%.0f"), ("p50 ms", "%.3f"), ("p99 ms", "%.3f"),
                         ("build s", "%.2f"), ("index MB", "%.3f"))})
        st.caption(md_text(context))

# ============================================================================ the words, and the models' vectors
with settings_area:
    layout.words("index size", "dimensions kept", "precision (storage)", "rescoring", "similarity", "frontier",
                 "approximate index", "neighbour recall", "lost queries", "ef", "nprobe", "recall@k", "95% interval",
                 "paired comparison", "Holm correction")
    with st.expander("Add your model's vectors", expanded=not models, icon=":material/upload_file:"):
        st.caption("Query vectors and doc vectors from the same model: Parquet (an id column and a vector column), "
                   'JSONL ({"id": ..., "vector": [...]}) or .npy with its ids file (one id per line). A file that '
                   "cannot be read is explained here and changes nothing already loaded.")
        with st.form("index_size.upload", clear_on_submit=False, border=False):
            name = st.text_input("Model name", help=barred or "How its runs are named (for example tuned-v3).",
                                 disabled=bool(barred))
            cols = st.columns(2)
            with cols[0]:
                query_file = st.file_uploader("Query vectors", key="index_size.queries",
                                              help=barred or "Parquet, JSONL or .npy", disabled=bool(barred))
                query_ids = st.file_uploader("Query ids (for .npy only)", key="index_size.query_ids",
                                             disabled=bool(barred), help="One id per line, row by row.")
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
                loaded_model = page.upload_model(name, query_file, doc_file, query_ids, doc_ids)
                if loaded_model.ok and loaded_model.value.name in {m.name for m in models if m.sample}:
                    layout.error(f"{loaded_model.value.name} is one of the sample's models: give yours another name.")
                elif not layout.failed(loaded_model):
                    kept = [m for m in uploaded if m.name != loaded_model.value.name] + [loaded_model.value]
                    state.set("vectors", page.remember_models(kept))
                    st.rerun()
    if not models:
        st.info("No vectors yet: the sample's vectors go with the sample labels only. Upload a model's vectors above.")
