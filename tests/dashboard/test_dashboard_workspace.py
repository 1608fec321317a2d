"""The dashboard over the workspace, driven through AppTest: uploads kept, links that outlive the server,
saving an evaluation (regressions first), editing the failure ledger, the History page, deleting."""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

import streamlit as st
from streamlit.testing.v1 import AppTest

from evalcore.access import local_actor
from evalcore.store.workspace import Workspace
from evalcore.workflows import Session

from tests.dashboard.apptest_helpers import app, no_exceptions  # noqa: E402  (one way to open a page)

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:  # the store tests import `dashboard.store` directly
    sys.path.insert(0, str(ROOT))

LABELS = b"query,doc_id,grade,query_text\nq1,d1,1,reset password\nq2,d2,1,=cancel plan\nq3,d3,1,export data\n"
RUN_V1 = b"q1 Q0 d1 1 9 t\nq2 Q0 x 1 9 t\nq2 Q0 d2 2 8 t\nq3 Q0 d3 1 9 t\n"
RUN_V2 = b"q1 Q0 x 1 9 t\nq1 Q0 d1 2 8 t\nq2 Q0 d2 1 9 t\nq3 Q0 d3 1 9 t\n"  # q1 regresses, q2 is fixed at k = 1
META = json.dumps({"model": "acme-m", "price_per_mtok": 0.02, "dims": 256}).encode()


def words(at: AppTest) -> str:
    parts = [m.value for m in at.markdown] + [c.value for c in at.caption] + [e.value for e in at.error]
    parts += [w.value for w in at.warning] + [i.value for i in at.info] + [s.value for s in at.success]
    return "\n".join(parts).replace("\\", "")


def restart_server() -> None:
    """What a server restart forgets: every cached object (the store, its memory, the workspace handle)."""
    st.cache_resource.clear()
    st.cache_data.clear()


def upload(at: AppTest, runs: list[tuple[str, bytes]]) -> AppTest:
    at.file_uploader(key="data.labels.0").set_value(("mine.csv", LABELS, "text/csv"))
    at.file_uploader(key="data.runs.0").set_value([(name, data, "text/plain") for name, data in runs])
    at.run()
    no_exceptions(at)
    return at


def test_uploads_are_stored_before_parsing_once_and_listed_in_the_workspace(workspace: Path) -> None:
    at = app("views/data.py")
    at.file_uploader(key="data.runs.0").set_value([("broken.trec", b"q1 Q0 d1 1 not-a-number t\n", "text/plain")])
    at.run()
    assert "broken.trec, line 1" in words(at)
    ws = Workspace(workspace)
    assert "broken.trec" in ws.files()["name"].tolist()  # kept even though it could not be read

    upload(at, [("v1.trec", RUN_V1), ("v1.meta.json", META)])
    assert "data" in at.query_params
    files = ws.files()
    assert {"mine.csv", "v1.trec", "v1.meta.json"} <= set(files["name"])
    assert ws.label_sets()["name"].tolist() == ["mine"]
    runs = ws.runs()
    assert runs[["name", "model", "line", "price_per_mtok", "dims"]].values.tolist() == [
        ["v1", "acme-m", "acme-m", 0.02, 256]]

    # The same bytes uploaded again (another session, another name) are stored once.
    again = app("views/data.py")
    again.file_uploader(key="data.labels.0").set_value(("copy.csv", LABELS, "text/csv")).run()
    after = Workspace(workspace).files()
    assert (after["sha256"] == hashlib.sha256(LABELS).hexdigest()).sum() == 1 and "copy.csv" not in set(after["name"])

    # Metadata edited on the Data page is what the workspace records for the run.
    at.session_state[f"data.meta.{at.query_params['data']}"] = {
        "edited_rows": {0: {"model": "acme-m-2"}}, "added_rows": [], "deleted_rows": []}
    at.run()
    no_exceptions(at)
    assert "acme-m-2" in Workspace(workspace).runs()["model"].tolist()


def test_a_copied_link_opens_the_uploads_after_a_server_restart(workspace: Path) -> None:
    at = upload(app("views/data.py"), [("v1.trec", RUN_V1), ("v2.trec", RUN_V2)])
    key = at.query_params["data"]
    restart_server()
    other = app("views/overview.py", data=key)
    assert other.dataframe[0].value["run"].tolist() == ["v1", "v2"]
    assert not other.warning, [w.value for w in other.warning]
    assert Workspace(workspace).manifest("dataset", key) is not None  # kept in the database, not a file
    assert not (workspace / "dashboard").exists()  # the dashboard writes no files of its own

    # A key this workspace never saw falls back to the sample, with a note.
    unknown = app(data="0123456789ab")
    assert "no longer holds: it is not in the server's workspace" in words(unknown)
    assert str(workspace) not in words(unknown)  # the folder's path is the server's business


def test_save_shows_regressions_first_and_the_ledger_is_edited_from_the_drill_down(workspace: Path) -> None:
    at = upload(app("views/data.py"), [("v1.trec", RUN_V1), ("v1.meta.json", META)])
    at.switch_page("views/failures.py").run()
    at.number_input(key="failures.k").set_value(1).run()
    assert "Not saved yet" in words(at)
    assert at.text_input(key=next(t.key for t in at.text_input if t.key.startswith("failures.line."))).value == "acme-m"
    at.button(key="FormSubmitter:failures.save_form-Save this evaluation to the workspace").click().run()
    no_exceptions(at)
    assert "Saved: evaluation 1" in words(at) and "1 new failure" in words(at)

    # The model's next run arrives: its regression is listed first.
    at.switch_page("views/data.py").run()
    upload(at, [("v2.trec", RUN_V2), ("v2.meta.json", META)])
    at.switch_page("views/failures.py").run()
    at.button(key="FormSubmitter:failures.save_form-Save this evaluation to the workspace").click().run()
    no_exceptions(at)
    text = words(at)
    assert "Saved: evaluation 2" in text
    assert "run #2 v2 vs #1 v1 at k = 1 on mine (n = 3): 1 regression (q1), 1 fixed" in text
    assert text.index("run #2 v2 vs #1 v1") < text.index("run #1 v1 (the line's first run)")  # regressions first
    regressions = [d.value for d in at.dataframe if "first_rank_before" in d.value.columns][0]
    assert regressions["query"].tolist() == ["q1"]

    # Open q1: its ledger entry, then edit status, tags and note.
    at.selectbox(key="failures.query").set_value("q1").run()
    no_exceptions(at)
    assert "status regressed" in words(at) and "regressed in run v2" in words(at)
    form = "ledger.acme-m.mine.q1"
    # A tag too long is refused with a message, and nothing of the form is written.
    at.selectbox(key=f"{form}.status").set_value("known")
    at.multiselect(key=f"{form}.tags").set_value(["x" * 61])
    at.button(key=f"FormSubmitter:{form}-Save to the ledger").click().run()
    no_exceptions(at)
    assert "a tag of 1 to 60 characters" in words(at)
    assert Workspace(workspace).archive.entry("acme-m", "q1").status == "regressed"

    at.selectbox(key=f"{form}.status").set_value("known")
    at.multiselect(key=f"{form}.tags").set_value(["ranking", "label wrong"])
    at.text_area(key=f"{form}.note").set_value("d1 is at rank 2; ticket 4711")
    at.button(key=f"FormSubmitter:{form}-Save to the ledger").click().run()
    no_exceptions(at)
    assert "Saved to the ledger of line acme-m, query q1: status, tags, note." in words(at)
    entry = Workspace(workspace).archive.entry("acme-m", "q1")
    assert entry.status == "known" and set(entry.tags) == {"ranking", "label wrong"}
    assert entry.note == "d1 is at rank 2; ticket 4711"

    # A fresh session after a restart shows the same entry.
    restart_server()
    fresh = app("views/failures.py", data=at.query_params["data"], k="1", query="q1")
    assert fresh.selectbox(key=f"{form}.status").value == "known"
    assert fresh.text_area(key=f"{form}.note").value == "d1 is at rank 2; ticket 4711"
    assert set(fresh.multiselect(key=f"{form}.tags").value) == {"ranking", "label wrong"}


def test_history_page_charts_a_line_with_its_ledger_and_offers_the_report(workspace: Path) -> None:
    empty = app("views/history.py")
    assert "Nothing saved yet" in words(empty)

    at = upload(app("views/data.py"), [("v1.trec", RUN_V1), ("v1.meta.json", META)])
    at.switch_page("views/failures.py").run()
    at.number_input(key="failures.k").set_value(1).run()
    at.button(key="FormSubmitter:failures.save_form-Save this evaluation to the workspace").click().run()
    at.switch_page("views/data.py").run()
    upload(at, [("v2.trec", RUN_V2), ("v2.meta.json", META)])
    at.switch_page("views/failures.py").run()
    at.button(key="FormSubmitter:failures.save_form-Save this evaluation to the workspace").click().run()

    history = app("views/history.py", line="acme-m")
    assert history.selectbox(key="history.line").value == "acme-m"
    assert len(history.get("vega_lite_chart")) == 1
    table = [d.value for d in history.dataframe if "metric" in d.value.columns][0]
    assert table["run"].unique().tolist() == ["v1", "v2"] and {"recall@1", "mrr"} <= set(table["metric"])
    text = words(history)
    assert "line acme-m · 2 runs · labels mine v1 · n = 3 queries" in text
    assert "1 regression (q1)" in text
    ledger = [d.value for d in history.dataframe if "status_label" in d.value.columns and "n_runs" in d.value.columns][0]
    assert ledger["query"].tolist()[0] == "q1"  # regressions first

    history.button(key="history.prepare").click().run()
    no_exceptions(history)
    labels = [b.proto.label for b in history.get("download_button")]
    assert {"Report (HTML)", "Report (Markdown)", "Failures (CSV)"} <= set(labels)

    unknown = app("views/history.py", line="nope")
    assert "model line nope, which this workspace does not have" in words(unknown)


def test_deleting_asks_first_and_shows_what_would_go(workspace: Path) -> None:
    at = upload(app("views/data.py"), [("v1.trec", RUN_V1)])
    at.switch_page("views/failures.py").run()
    at.button(key="FormSubmitter:failures.save_form-Save this evaluation to the workspace").click().run()
    at.switch_page("views/data.py").run()
    no_exceptions(at)

    at.selectbox(key="data.delete.evaluation").set_value(1).run()
    at.button(key="data.delete.evaluation.ask").click().run()
    assert "Delete evaluation 1 (labels mine v1" in words(at) and "3 per-query outcomes" in words(at)
    assert len(Workspace(workspace).evaluations()) == 1  # nothing deleted before the confirmation
    at.button(key="data.delete.evaluation.no").click().run()
    assert len(Workspace(workspace).evaluations()) == 1

    at.button(key="data.delete.evaluation.ask").click().run()
    at.button(key="data.delete.evaluation.yes").click().run()
    no_exceptions(at)
    assert "Deleted evaluation 1" in words(at)
    assert Workspace(workspace).evaluations().empty

    at.selectbox(key="data.delete.labels").set_value("mine").run()
    at.button(key="data.delete.labels.ask").click().run()
    assert "Delete label set 'mine': 1 version" in words(at)
    at.button(key="data.delete.labels.yes").click().run()
    assert Workspace(workspace).label_sets().empty

    # Uploading the same labels again records them again.
    upload(app("views/data.py"), [("v1.trec", RUN_V1)])
    assert Workspace(workspace).label_sets()["name"].tolist() == ["mine"]


# ---------------------------------------------------------------------------------------------- the store itself


def test_store_keeps_files_and_manifests_in_the_workspace_across_a_restart(tmp_path: Path) -> None:
    from dashboard.uploads import Uploads
    from evalcore.metrics.dataset import Dataset, RunSpec

    ws = Workspace(tmp_path / "ws")
    door = Session(ws, local_actor())
    store = Uploads(ws, max_bytes=1)  # a tiny memory cap: only the newest file stays in memory
    labels = store.add_file("mine.csv", LABELS, session=door)
    run = store.add_file("v1.trec", RUN_V1, session=door)
    assert labels.sha256 == hashlib.sha256(LABELS).hexdigest()
    assert store.add_file("again.csv", LABELS, session=door) == labels.__class__("again.csv", labels.sha256,
                                                                                 labels.size)
    assert len(ws.files()) == 2  # the same bytes are stored once
    assert store.file(labels) == LABELS  # dropped from memory, read back from the workspace

    dataset = Dataset(labels=labels, runs=(RunSpec(file=run, name="v1", model="acme-m", price_per_mtok=0.5, dims=64),))
    key = store.put_dataset(dataset, door)
    assert set(ws.events()["action"]) == {"store file", "save view"}  # each change recorded under the person

    restarted = Uploads(Workspace(tmp_path / "ws"))
    again = restarted.dataset(key)
    assert again == dataset and again.key == key
    assert restarted.file(run) == RUN_V1
    assert restarted.dataset("0123456789ab") is None and restarted.dataset("../../etc") is None

    # A file known only through the fallback (a sample file) is stored when a data set names it.
    sample = Uploads(ws, fallback=lambda ref: b"q9,d9,1\n" if ref.name == "sample.csv" else None)
    ref = sample.add_file("sample.csv", b"q9,d9,1\n")  # no session: held in memory only
    assert ref.sha256 not in set(ws.files()["sha256"])
    sample.put_dataset(Dataset(labels=ref, runs=(RunSpec(file=run, name="v1"),)), door)
    assert ref.sha256 in set(ws.files()["sha256"])


def test_store_without_a_workspace_keeps_files_in_memory() -> None:
    from dashboard.uploads import Uploads
    from evalcore.metrics.dataset import Dataset, RunSpec

    store = Uploads(None)
    labels = store.add_file("mine.csv", LABELS)
    dataset = Dataset(labels=labels, runs=(RunSpec(file=store.add_file("v1.trec", RUN_V1), name="v1"),))
    assert store.dataset(store.put_dataset(dataset)) == dataset
    assert store.file(labels) == LABELS


def test_uploaded_runs_join_the_data_set_by_these_rules() -> None:
    """What the Data page does with run uploads: the sample's runs make way for the user's first run, later runs
    are added, a run of the same name is replaced, re-uploading the same file keeps its edited metadata unless a
    sidecar came along, names stay distinct, and the sample's documents go once a run is the user's own."""
    from evalcore.metrics.dataset import Dataset, FileRef, RunSpec, unique_name

    def ref(name: str) -> FileRef:
        return FileRef(name, hashlib.sha256(name.encode()).hexdigest(), 10)

    sample = Dataset(labels=ref("labels"), runs=(RunSpec(ref("base.trec"), "base"), RunSpec(ref("tuned.trec"), "tuned")),
                     documents=ref("docs"), sample=True)
    mine = sample.with_uploaded_runs([sample.spec_for_upload(ref("v1.trec"), "v1")], sample)
    assert mine.run_names == ["v1"] and not mine.sample
    assert mine.fitted_to(sample).documents is None
    assert sample.fitted_to(sample).documents == ref("docs")  # the sample as it is keeps its chunks

    edited = mine.with_runs((RunSpec(ref("v1.trec"), "v1", model="acme-m", price_per_mtok=0.5),))
    assert edited.spec_for_upload(ref("v1.trec"), "v1").model == "acme-m"  # the same file again: edits kept
    assert edited.spec_for_upload(ref("v1.trec"), "v1", {"model": "from-sidecar"}).model == "from-sidecar"
    assert edited.spec_for_upload(ref("v1-new.trec"), "v1").model is None  # new content under the name: fresh

    more = edited.with_uploaded_runs([RunSpec(ref("v2.trec"), "v2"), RunSpec(ref("v1-new.trec"), "v1")], sample)
    assert more.run_names == ["v1", "v2"] and more.runs[0].file == ref("v1-new.trec")  # replaced where it stood
    mapped = edited.with_chunks("v1", ref("v1.chunks.csv"))
    assert mapped.spec_for_upload(ref("v1-new.trec"), "v1").chunks == ref("v1.chunks.csv")  # its chunking kept
    assert unique_name("v1", ["v1", "v1 (2)"]) == "v1 (3)" and unique_name("v3", ["v1"]) == "v3"


def test_two_sessions_storing_at_once_lose_nothing(tmp_path: Path) -> None:
    """Two writers at once (one shared store, as two browser sessions on one server, and a second
    server process's own store on the same folder): every file and data set is kept."""
    import threading

    from dashboard.uploads import Uploads
    from evalcore.metrics.dataset import Dataset, RunSpec

    shared = Uploads(Workspace(tmp_path / "ws"))
    other_server = Uploads(Workspace(tmp_path / "ws"))
    keys: dict[tuple[int, int], str] = {}

    def session(worker: int, store: Uploads) -> None:
        door = Session(store.workspace, local_actor())
        for i in range(8):
            labels = store.add_file(f"labels-{worker}-{i}.csv", LABELS + f"q{worker}x{i},d1,1\n".encode(), session=door)
            run = store.add_file(f"run-{worker}-{i}.trec", RUN_V1 + f"q{worker}x{i} Q0 d1 1 9 t\n".encode(),
                                 session=door)
            keys[worker, i] = store.put_dataset(Dataset(labels=labels, runs=(RunSpec(file=run, name="v1"),)), door)

    threads = [threading.Thread(target=session, args=(w, shared if w < 2 else other_server)) for w in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(keys) == 24 and len(Workspace(tmp_path / "ws").files()) == 48
    fresh = Uploads(Workspace(tmp_path / "ws"))
    assert all(fresh.dataset(key) is not None for key in keys.values())


def test_the_report_from_history_takes_the_k_choose_k_says_at_the_price_given(workspace: Path) -> None:
    # One answer per question: the price, requests a month and a recall point's worth typed on Choose k reach the
    # meeting report, so the report's k to take is the page's (the trade-off), not the elbow.
    at = app("views/failures.py", k="10")
    at.button(key="FormSubmitter:failures.save_form-Save this evaluation to the workspace").click().run()
    no_exceptions(at)
    at.query_params.update({"price": "3", "rpm": "100000", "vpp": "20"})
    at.switch_page("views/choose_k.py").run()
    no_exceptions(at)
    said = next(m.value for m in at.markdown if m.value.startswith("##### ")).removeprefix("##### ")
    assert said.startswith("With your numbers, k = ")  # the trade-off, not the elbow
    at.switch_page("views/history.py").run()
    at.button(key="history.prepare").click().run()
    no_exceptions(at)
    assert said in [m.value for m in at.markdown]


def test_the_root_address_and_history_open_on_the_data_loaded_last(workspace: Path) -> None:
    # One answer per question: after an upload, a colleague typing the root address sees the team's data, not the
    # demo; History opens on its model line and makes its report without a detour through Failures.
    at = upload(app("views/data.py"), [("v1.trec", RUN_V1), ("v1.meta.json", META)])
    no_exceptions(at)
    colleague = app()  # a new session at the root address
    assert colleague.query_params["data"] == at.query_params["data"]  # the uploaded data set, named in the URL
    history = app("views/history.py")
    assert "has no saved evaluation yet" in words(history)
    history.button(key="history.save_in_view").click().run()
    no_exceptions(history)
    assert history.selectbox(key="history.line").value == "acme-m"
    assert {"Report (HTML)", "Report (Markdown)"} <= {b.proto.label for b in history.get("download_button")}
    assert "failures at k = 10" in words(history)
    events = Workspace(workspace).events()
    assert "save evaluation" in set(events["action"])  # the save is recorded, under the person acting
    again = app("views/history.py")  # now saved: no offer to save, the report of the data on screen is chosen
    assert "has no saved evaluation yet" not in words(again)
    assert again.selectbox(key="history.evaluation").value == Workspace(workspace).evaluations()["id"].max()
    back = app("views/data.py")  # the sample stays one click (and one link) away
    back.button(key="data.sample").click().run()
    no_exceptions(back)
    assert "the sample data (a fictional help centre" in words(back) and back.query_params["data"]
    assert app(data=back.query_params["data"]).query_params["data"] == back.query_params["data"]


def test_a_file_stored_by_a_refused_change_is_stored_again_when_next_needed(tmp_path: Path) -> None:
    """A change that stores the labels and is then refused rolls the file back too; the memory in front of the
    workspace must not go on believing it is there (the next save would fail with "No stored file")."""
    from dashboard.uploads import Uploads
    from evalcore.errors import UsageError

    ws = Workspace(tmp_path / "ws")
    door = Session(ws, local_actor())
    store = Uploads(ws)
    ref = store.add_file("mine.csv", LABELS)

    def refused() -> None:
        store.stored_file(ref, door)
        raise UsageError("refused after storing")

    try:
        ws.atomic(refused)
    except UsageError:
        pass
    assert ws.files().empty and ws.events().empty  # nothing of the refused change is kept
    assert store.stored_file(ref, door).sha256 == ref.sha256 and len(ws.files()) == 1
