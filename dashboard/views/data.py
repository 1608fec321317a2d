"""Data: upload labels, runs and documents; check each file before any metric; edit run metadata."""

import streamlit as st

from evalcore.safe_text import md_text
from evalcore.readers.formats import file_stem
from evalcore.warning_log import agree, plural

from dashboard import access_ui, caching, layout, saved, state
from dashboard.page_models import data as page
from dashboard.page_models.data import unique_name

PAGE = "data"
LABEL_FORMATS = ("TREC qrels, BEIR qrels TSV, CSV / TSV / Parquet (query, doc_id, optional grade, query_text, "
                 "source, blind, split), JSON or JSONL; .gz accepted")
RUN_FORMATS = ("TREC run, CSV / TSV / Parquet (query, doc_id, rank and/or score), JSON or JSONL; .gz accepted. "
               "Add a <run>.meta.json sidecar here to set model, price_per_mtok, dims and index_bytes")
DOC_FORMATS = "CSV / TSV / JSONL / Parquet with doc_id and text and/or tokens; .gz accepted"
QUERY_FORMATS = ("BEIR queries.jsonl (_id, text), or CSV / TSV / Parquet with query_id and query_text; .gz accepted. "
                 "A text that differs from the labels' own is refused, naming both files")
CHUNK_FORMATS = ("CSV / TSV / JSONL / Parquet with chunk_id and doc_id, optionally start and end (character offsets "
                 "in the document's text) and text; .gz accepted")
CHUNK_HELP = ("When a run ranks chunks and the labels name documents: a chunk map says which document each chunk "
              "belongs to (and where in its text). k then counts chunks, relevance is the document's, and the "
              "prompt tokens are each chunk's own text. Runs from different chunkings each take their own map.")
GRADE_FORMATS = ("ragas (result.to_pandas() as CSV, TSV, JSONL, Parquet or JSON), DeepEval's .latest_test_run.json, "
                 "RAGChecker's output JSON, promptfoo's -o results.json, or a table with query_id or query_text and "
                 "a column per grade (0 to 1, pass/fail or true/false); .gz accepted")
GRADE_HELP = ("How good the answers written from each run's retrieved chunks were, as your grading tool or a person "
              "scored them: one file per run, its rows joined to the labeled queries by query id, else by text. The "
              "Answers page then sets them beside what the run retrieved; the Overview shows the grade beside recall.")
FORMAT_HELP = ("How the file is read. detect: from its name and first lines. Choose the format when detection gets it "
               "wrong: a file without a header line, or a name that does not say what it holds (a .txt TREC file, a "
               ".csv holding JSON). Every file of this upload is read so.")

v = layout.view(PAGE)
dataset = v.dataset
layout.header("Data", None, "The files every page is computed from. A file that cannot be read is explained beside "
                            "its upload and changes nothing already loaded.")
layout.words("label set", "run", "fingerprint", "source", "blind labels", "tune / holdout split")


PER_DATA_SET = ("query", "source", "search", "vs")  # selections that only make sense for one data set


def bring_back_sample() -> None:
    state.forget(*PER_DATA_SET)
    state.set("data", page.sample_dataset().key)  # named: the root address opens on the data loaded last
    state.remember("data.nonce", state.remembered("data.nonce", 0) + 1)
    state.take("data.applied")


def load_chunking_sample() -> None:
    state.forget(*PER_DATA_SET)
    state.set("data", page.chunking_sample().key)
    state.remember("data.nonce", state.remembered("data.nonce", 0) + 1)
    state.take("data.applied")


chunked_sample = dataset.key == page.chunking_sample().key
top = st.columns([4, 2, 2])
with top[0]:
    where = ("the chunking sample (the sample's documents chunked three ways: one sentence, three sentences, "
             "400-character windows; labels with evidence spans)" if chunked_sample else
             "the sample data (a fictional help centre, 320 labeled queries, three embedding models)"
             if dataset.sample else f"your files (data set {dataset.key})")
    st.markdown(md_text(f"Now loaded: {where}."))
with top[1]:
    st.button("Bring back the sample data", on_click=bring_back_sample, icon=":material/restart_alt:",
              disabled=dataset.sample and not chunked_sample, key="data.sample")
with top[2]:
    st.button("Load the chunking sample", on_click=load_chunking_sample, icon=":material/splitscreen:",
              disabled=chunked_sample, key="data.chunking_sample",
              help="The sample's documents chunked three ways, each chunking's run and chunk map, and labels that "
                   "mark the evidence inside each relevant document: the chunking decision on Choose k.")

opened = page.workspace_opened()
if opened.ok:
    st.caption("Every upload is stored in the server's workspace before it is read, so a reload, a copied link or a "
               "server restart loses nothing.")
else:
    layout.error(opened.error)
stored_problem = state.take(page.WORKSPACE_PROBLEM)
if stored_problem:
    layout.error(stored_problem)

nonce = state.remembered("data.nonce", 0)
applied = state.memo("data.applied")
taken_now: dict = {}  # uploads taken in this run, counted as applied once the data set naming them is registered


def new_files(slot: str, files, fmt: str | None) -> bool:
    """True until a set of uploads (with this format) is part of the registered data set (re-applying it later
    would undo later edits). A run stopped early by the next upload has registered nothing: it is taken again."""
    ids = tuple(getattr(f, "file_id", f.name) for f in files)
    if not ids or applied.get(slot) == (ids, fmt):
        return False
    taken_now[slot] = (ids, fmt)
    return True


def format_choice(slot: str, what: str, options=page.FORMAT_CHOICES) -> str | None:
    """The format choice beside an upload: None for detect, else the format every file of that upload is read with."""
    choice = st.selectbox(f"{what} format", options=options, key=f"data.{slot}.format.{nonce}", help=FORMAT_HELP)
    return page.read_format(choice)


def read_as(ref) -> str:
    return f" (read as {ref.format})" if ref.format else ""


candidate = dataset
barred = access_ui.refusal("upload")  # viewers read what is loaded: uploading and editing runs need an editor
st.subheader("Files")
COLUMNS = [5, 2, 8]  # upload, its format, what was read (or why not)


def one_file(candidate, slot: str, label: str, key: str, formats: str, what: str, choices, read, take, clear=None):
    """One upload slot in its row: the uploader, its format choice, and the file read. A file that reads is taken
    into the candidate data set (``take(ref)``), one that does not is explained beside it; with ``clear``, emptying
    the uploader after its file was taken undoes it (``clear()``). Returns the candidate and the row's right
    column, where the caller says what is loaded."""
    left, middle, right = st.columns(COLUMNS, vertical_alignment="center")
    with left:
        upload = st.file_uploader(label, key=key, help=barred or formats, disabled=bool(barred))
        upload = None if barred else upload  # a disabled uploader sends nothing; a forged upload is ignored too
    with middle:
        fmt = format_choice(slot, what, choices)
    with right:
        if upload is not None:
            ref = page.upload_ref(upload, fmt)
            tried = read(ref)
            if not tried.ok:
                layout.error(tried.error)
            elif new_files(slot, [upload], fmt):
                candidate = take(ref)
        elif clear is not None and applied.get(slot, ((), None))[0]:
            taken_now[slot] = ((), fmt)
            candidate = clear()
    return candidate, right


# ---------------------------------------------------------------- labels
candidate, right = one_file(candidate, "labels", "Labels file", f"data.labels.{nonce}", LABEL_FORMATS, "Labels",
                            page.FORMAT_CHOICES, page.labels, candidate.with_labels)
with right:
    current = page.labels(candidate.labels)
    if current.ok:
        ls = current.value
        st.text(f"Labels: {candidate.labels.name}{read_as(candidate.labels)} · "
                f"{plural(ls.n_queries, 'query', 'queries')} · {plural(len(ls.judgments), 'judgment')} · "
                f"fingerprint {ls.fingerprint}")

# ---------------------------------------------------------------- runs
left, middle, right = st.columns(COLUMNS, vertical_alignment="center")
with left:
    uploads = st.file_uploader("Run files", key=f"data.runs.{nonce}", accept_multiple_files=True,
                               help=barred or RUN_FORMATS, disabled=bool(barred))
    uploads = None if barred else uploads
with middle:
    runs_format = format_choice("runs", "Run")
with right:
    if uploads:
        sidecars, run_files = {}, []
        for f in uploads:
            if f.name.lower().endswith(".meta.json"):
                meta = page.sidecar(page.upload_ref(f))
                if meta.ok:
                    sidecars[f.name[: -len(".meta.json")]] = meta.value
                else:
                    layout.error(meta.error)
            else:
                run_files.append(f)
        good = []
        for f in run_files:
            stem = unique_name(file_stem(f.name), [s.name for s in good])
            spec = candidate.spec_for_upload(page.upload_ref(f, runs_format), stem, sidecars.get(stem))
            loaded = page.run(spec)
            if loaded.ok:
                good.append(spec)
            else:
                layout.error(loaded.error)
        if good and new_files("runs", uploads, runs_format):
            # The user's own runs: the sample's documents go with the sample's runs (documents uploaded later stay,
            # even the sample's own file).
            candidate = candidate.with_uploaded_runs(good, page.sample_dataset()).fitted_to(page.sample_dataset())
    st.text("Runs: " + ", ".join(f"{r.name}{read_as(r.file)}" for r in candidate.runs))

# ---------------------------------------------------------------- documents
candidate, right = one_file(candidate, "documents", "Documents file", f"data.documents.{nonce}", DOC_FORMATS,
                            "Documents", page.DOCUMENT_FORMAT_CHOICES, lambda ref: page.documents_for(candidate, ref),
                            candidate.with_documents)
with right:
    if candidate.documents is not None:
        docs = page.documents(candidate.documents)
        if docs.ok:
            st.text(f"Documents: {candidate.documents.name}{read_as(candidate.documents)} · "
                    f"{plural(len(docs.value), 'doc')}")
    else:
        st.caption("Optional: chunk text for drill-downs and token counts for choosing k.")

# ---------------------------------------------------------------- queries file
candidate, right = one_file(candidate, "queries", "Queries file", f"data.queries.{nonce}", QUERY_FORMATS, "Queries",
                            page.QUERY_FORMAT_CHOICES, lambda ref: page.queries_text(candidate.with_queries(ref)),
                            candidate.with_queries)
with right:
    if candidate.queries is not None:
        st.text(f"Queries: {candidate.queries.name}{read_as(candidate.queries)} · the text of each labeled query")
    else:
        st.caption("Optional: each query's text, when the labels carry ids only (BEIR queries.jsonl).")

# ---------------------------------------------------------------- answer grades, one file per run
graded_runs = [g.run for g in candidate.grades]
grade_title = (f"Answer grades: {len(graded_runs):,} of {plural(len(candidate.runs), 'run')} graded" if graded_runs
               else "Answer grades (optional): how good the answers written from each run's chunks were")
with st.expander(grade_title, expanded=bool(graded_runs)):
    st.caption(GRADE_HELP)
    for run_spec in candidate.runs:
        name, slot = run_spec.name, f"grades.{run_spec.name}"
        left, middle, right = st.columns(COLUMNS, vertical_alignment="center")
        with left:
            graded_upload = st.file_uploader(f"Grades of {md_text(name)}'s answers", key=f"data.grades.{nonce}.{name}",
                                             help=barred or GRADE_FORMATS, disabled=bool(barred))
            graded_upload = None if barred else graded_upload
        with middle:
            tool = page.grade_format(st.selectbox("Grade file from", options=page.GRADE_FORMAT_CHOICES,
                                                  key=f"data.{slot}.format.{nonce}",
                                                  help="The tool that wrote the file. detect: from its content."))
        with right:
            if graded_upload is not None:
                ref = page.upload_ref(graded_upload)
                tried = page.grades_for(candidate, name, ref, tool)
                if not tried.ok:
                    layout.error(tried.error)
                elif new_files(slot, [graded_upload], tool):
                    candidate = candidate.with_grades(name, ref, tool)
            elif applied.get(slot, ((), None))[0]:  # the upload was removed: so are its grades
                taken_now[slot] = ((), tool)
                candidate = candidate.with_grades(name, None)
            spec = candidate.graded(name)
            shown_grades = (caching.kept(page.grades_for, entries=32)(candidate, name, spec.file, spec.format)
                            if spec is not None else None)
            if shown_grades is None:
                st.caption(md_text(f"{name}: no answer grades."))
            elif shown_grades.ok:
                st.text(shown_grades.value.said)
                for line in shown_grades.value.notes:
                    st.caption(md_text(line))
            else:
                layout.error(shown_grades.error)

# ---------------------------------------------------------------- chunk maps, one per run
mapped_runs = [r.name for r in candidate.runs if r.chunks is not None]
chunk_title = (f"Chunk maps: {len(mapped_runs):,} of {plural(len(candidate.runs), 'run')} "
               f"{agree(len(mapped_runs), 'ranks', 'rank')} chunks" if mapped_runs
               else "Chunk maps (optional): for runs that rank chunks rather than documents")
with st.expander(chunk_title, expanded=bool(mapped_runs)):
    st.caption(CHUNK_HELP)
    for run_spec in candidate.runs:
        name = run_spec.name
        candidate, right = one_file(
            candidate, f"chunks.{name}", f"Chunks file of {md_text(name)}", f"data.chunks.{nonce}.{name}",
            CHUNK_FORMATS, "Chunk map", page.CHUNK_FORMAT_CHOICES,
            lambda ref, spec=run_spec: page.chunk_map_of(spec, ref, candidate.documents, candidate.labels),
            lambda ref: candidate.with_chunks(name, ref), clear=lambda: candidate.with_chunks(name, None))
        with right:
            now = next(r for r in candidate.runs if r.name == run_spec.name)
            if now.chunks is not None:
                mapped = page.chunk_map_of(now, now.chunks, candidate.documents, candidate.labels)
                if mapped.ok:
                    st.text(f"{run_spec.name}: chunk map {mapped.value.ref} · "
                            f"{plural(mapped.value.chunks_in_file, 'chunk')} of "
                            f"{plural(mapped.value.docs_in_file, 'document')} · k counts chunks")
                else:
                    layout.error(mapped.error)
            else:
                st.caption(md_text(f"{run_spec.name} ranks documents (no chunk map)."))

if candidate.key != dataset.key:
    state.forget(*PER_DATA_SET)
    state.set("data", page.register(candidate))
    applied.update(taken_now)
    st.rerun()
applied.update(taken_now)

half = dataset.half_sample(page.sample_dataset())
if half == "labels":
    st.info("Your labels are loaded with the sample's runs. Upload your runs next (Run files, above): until then "
            "every page compares the sample's runs with your labels, and the numbers mean nothing.",
            icon=":material/upload_file:")
elif half == "runs":
    st.info("Your runs are loaded with the sample's labels. Upload your labels next (Labels file, above): until "
            "then every page scores your runs against the sample's labels, and the numbers mean nothing.",
            icon=":material/upload_file:")

# ---------------------------------------------------------------- checklist
st.subheader("Checklist")
st.caption(md_text(f"Per file, before any metric (k = {v.k}; set k on any page). Zero is good: every other count "
                   "is explained in the warnings below and in docs/metrics.md (edge cases)."))
found = page.files(dataset, v.k)
checks = found.checklist
layout.table(found.checklist_shown, hide_index=True, width="stretch", column_config={
    "docs": st.column_config.TextColumn(help="Labels: judged (query, doc) pairs. Runs: ranked docs over all queries. "
                                             "Documents: docs in the file."),
    "labeled queries missing from run": st.column_config.TextColumn(
        help="Each scores 0 on every metric and stays in the mean."),
    "run queries without labels": st.column_config.TextColumn(help="Ignored by every metric."),
    "duplicates": st.column_config.TextColumn(help="Labels: pairs judged twice (highest grade kept). "
                                                   "Runs: docs listed twice for a query (best rank kept)."),
})
for file, note in zip(checks["file"], checks["notes"]):  # in full, not cut to a cell's width
    if isinstance(note, str) and note.strip():
        st.text(f"{file}: {note}")
if found.problem:  # why these files cannot be scored, if they cannot
    layout.error(found.problem)
notes = found.notes
if notes:
    with st.expander(f"What the readers repaired or noticed ({len(notes)})"):
        for line in notes:
            st.text(line)
warnings = found.warnings
if not warnings.empty:
    with st.expander(f"Evaluation warnings at k = 1 and k = {v.k} ({len(warnings)})"):
        layout.table(warnings, hide_index=True, width="stretch")

# ---------------------------------------------------------------- run metadata
st.subheader("Runs")
st.caption("Model, price per million tokens (of the embedding model), dimensions and index size of each run. "
           "Edit a cell to change it; delete a row to drop a run. Blank cells keep what the file or its sidecar says.")
meta = found.metadata
edited = st.data_editor(
    meta, key=f"data.meta.{dataset.key}", hide_index=True, width="stretch", num_rows="fixed" if barred else "delete",
    disabled=True if barred else ["run", "file"], placeholder="not set",
    column_config={
        "model": st.column_config.TextColumn("model", help="The embedding model behind this run."),
        "price_per_mtok": st.column_config.NumberColumn("price $/M tokens", min_value=0.0, format="%.4f"),
        "dims": st.column_config.NumberColumn("dims", min_value=1, step=1, format="%d"),
        "index_bytes": st.column_config.NumberColumn("index bytes", min_value=0, step=1, format="%d"),
    })
if len(edited) == 0:
    layout.error("Keep at least one run: every page needs one. Upload another run before removing this one.")
elif not barred and not edited.reset_index(drop=True).equals(meta):
    changed = page.edited_dataset(dataset, edited)
    broken = [page.run(spec) for spec in changed.runs]
    bad = next((b for b in broken if not b.ok), None)
    if bad is not None:
        layout.error(bad.error)
    elif changed.key != dataset.key:
        state.set("data", page.register(changed))
        st.rerun()

# ---------------------------------------------------------------- the workspace: what is kept, and deleting
st.subheader("Saved in the workspace")
if not opened.ok:
    layout.stop()
st.caption("What the server's workspace keeps: label sets (frozen versions), runs with their metadata, and saved "
           "evaluations. Deleting asks first and shows what would go.")
KIND_LABELS = {"labels": "Label sets", "run": "Runs", "evaluation": "Evaluations"}
WRAPPED_ROW = 70  # pixels: above 64 (4 rem) Streamlit wraps a cell's text, here in up to three lines
LISTING_WIDTHS = {  # the long columns narrowed so each listing fits 1400 px, their text wrapped
    "run": {"model": st.column_config.TextColumn(width=150), "line": st.column_config.TextColumn(width=150),
            "file_sha256": st.column_config.TextColumn("file sha256", width=110, help="Its first 12 hex digits."),
            "price_per_mtok": st.column_config.NumberColumn("$/M tokens")},
    "evaluation": {"note": st.column_config.TextColumn(width=360)},
}
tabs = st.tabs(list(KIND_LABELS.values()))
refused = access_ui.refusal("delete")
for tab, kind in zip(tabs, KIND_LABELS):
    with tab:
        listing = saved.listing(kind)
        if listing.empty:
            st.caption(f"No {KIND_LABELS[kind].lower()} saved yet.")
            continue
        row = WRAPPED_ROW if kind in LISTING_WIDTHS else 35
        shown = listing.assign(file_sha256=listing["file_sha256"].astype(str).str[:12]) if kind == "run" else listing
        layout.table(shown, hide_index=True, width="stretch", height=min(row * len(listing) + 38, 300),
                     row_height=row, column_config=LISTING_WIDTHS.get(kind))
        if kind == "labels":
            keys = listing["name"].astype(str).tolist()
            describe = str
        elif kind == "run":
            keys = listing["id"].astype(int).tolist()
            names = dict(zip(keys, listing["name"].astype(str)))
            describe = lambda i, names=names: f"#{i} {names[i]}"  # noqa: E731
        else:
            keys = listing["id"].astype(int).tolist()
            describe = lambda i: f"evaluation {i}"  # noqa: E731
        cols = st.columns([3, 1], vertical_alignment="bottom")
        with cols[0]:
            target = st.selectbox(f"{saved.DELETE_KINDS[kind].capitalize()} to delete", options=keys,
                                  format_func=describe, index=None, placeholder="pick one",
                                  key=f"data.delete.{kind}")
        with cols[1]:
            if st.button("Delete…", key=f"data.delete.{kind}.ask", disabled=target is None or bool(refused),
                         icon=":material/delete:", help=refused):
                state.remember("data.delete.pending", (kind, target))
        pending = state.remembered("data.delete.pending")
        if pending is not None and pending[0] == kind:
            plan = saved.plan_delete(*pending)
            if layout.failed(plan):
                state.take("data.delete.pending")
            else:
                st.warning(md_text(f"Delete {plan.value.description}? This cannot be undone."),
                           icon=":material/warning:")
                yes, no = st.columns(2)
                if yes.button("Yes, delete", key=f"data.delete.{kind}.yes", type="primary"):
                    done = saved.delete(*pending)
                    state.take("data.delete.pending")
                    state.remember("data.delete.done", done.error or f"Deleted {done.value.description}.")
                    st.rerun()
                if no.button("Cancel", key=f"data.delete.{kind}.no"):
                    state.take("data.delete.pending")
                    st.rerun()
done_message = state.take("data.delete.done")
if done_message:
    st.info(md_text(done_message))
