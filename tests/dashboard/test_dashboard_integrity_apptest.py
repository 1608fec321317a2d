"""The Integrity and Blind judging pages through Streamlit's AppTest: what they show, and what they record."""

from __future__ import annotations

from pathlib import Path

from streamlit.testing.v1 import AppTest

from evalcore.access import login_name
from evalcore.store.workspace import Workspace

ME = login_name()  # who the dashboard records without sign-in: the server's login name
APP = str(Path(__file__).resolve().parents[2] / "dashboard" / "app.py")
SAMPLE_LABELS = Path(__file__).resolve().parents[2] / "sample_data" / "labels.tsv"


def open_page(path: str, **params) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=300)
    for name, value in params.items():
        at.query_params[name] = value
    at.switch_page(path)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def _text(at, kind: str) -> str:
    return " ".join(e.value.replace("\\", "") for e in getattr(at, kind))


def test_integrity_page_audits_the_tune_split_and_keeps_the_holdout_sealed(workspace) -> None:
    at = open_page("views/integrity.py", k="5")
    warnings = _text(at, "warning")
    assert "run base: 7 of the 13 judged non" in warnings  # the audit of the 224 tune queries
    assert "judged" in warnings and "check" in warnings
    assert at.get("tabs") and len(at.dataframe) >= 6
    captions = _text(at, "caption")
    assert "k = 5 · n = 224 queries" in captions and "tune split (exploratory) · 96 holdout queries sealed" in captions
    assert "n = 182 vs 42" in _text(at, "text")  # whose words: the tune queries only
    assert "Every page shows the tune split: 224 queries, exploratory" in captions
    assert "Holdout of labels never viewed" in captions
    assert not any(s.value for s in at.success)  # nothing revealed by opening the page
    assert not [d for d in at.dataframe if "split" in d.value.columns and set(d.value["split"]) != {"tune"}]
    assert Workspace(workspace).reveals().empty

    [reveal] = [b for b in at.button if b.label.startswith("Reveal the holdout")]
    reveal.click()  # no name asked for: without sign-in the reveal names the server's login name
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert "holdout of labels viewed once, last on" in _text(at, "success") and f"by {ME}" in _text(at, "success")
    assert Workspace(workspace).reveals("labels")["version"].tolist() == [1]
    assert Workspace(workspace).reveals("labels")["who"].tolist() == [ME]
    log = Workspace(workspace).events()  # and the log of who did what says so (the labels file stored, then seen)
    assert list(zip(log["who"], log["action"])) == [(ME, "reveal holdout"), (ME, "store file")]
    assert at.query_params["split"] in ("holdout", ["holdout"])  # the URL now says what is shown
    tables = [d.value for d in at.dataframe if "split" in d.value.columns]
    holdout = [t for t in tables if set(t["split"]) == {"holdout"}]
    assert holdout and set(holdout[0]["n"]) == {96} and set(holdout[0]["fingerprint"]) == {"22389d948558"}
    assert set(holdout[0]["labels"]) == {"labels:holdout"}
    assert any(set(t["split"]) == {"tune"} and set(t["n"]) == {224} for t in tables)

    at.radio(key="integrity.split").set_value("all")  # the same session: no second reveal
    at.run()
    tables = [d.value for d in at.dataframe if "split" in d.value.columns]
    whole = [t for t in tables if set(t["split"]) == {"all"}]
    assert whole and set(whole[0]["n"]) == {320} and set(whole[0]["fingerprint"]) == {"109ae50aeaba"}
    assert len(Workspace(workspace).reveals("labels")) == 1


def test_a_link_to_the_holdout_does_not_unseal_it(workspace) -> None:
    """``split=holdout`` in the URL shows the sealed notice and the button; only a recorded reveal unseals."""
    Workspace(workspace)._record_reveal(__import__("evalcore").read_labels(SAMPLE_LABELS), rule="file",
                                       runs=[], who="someone-else")  # a reveal in another session unseals nothing here
    at = open_page("views/integrity.py", k="5", split="holdout")
    assert "They stay sealed until you reveal them" in _text(at, "warning")
    assert [b for b in at.button if b.label.startswith("Reveal the holdout")]
    tables = [d.value for d in at.dataframe if "split" in d.value.columns]
    assert tables and all(set(t["split"]) == {"tune"} and set(t["n"]) == {224} for t in tables)
    assert not any(s.value for s in at.success)
    assert len(Workspace(workspace).reveals("labels")) == 1  # opening the link recorded nothing


def test_overview_shows_the_tune_split_labelled_exploratory_with_the_sealed_count(workspace) -> None:
    at = open_page("views/overview.py", k="5")
    header = " ".join(m.value.replace("\\", "") for m in at.markdown)
    assert "**n** = 224 queries" in header and "tune split (exploratory) · 96 holdout queries sealed" in header
    captions = _text(at, "caption")
    assert "n = 224 queries" in captions and "labels labels:tune#75455c70275d" in captions
    assert "tune split (exploratory) · 96 holdout queries sealed" in captions
    tables = [d.value for d in at.dataframe if "n" in d.value.columns]
    assert tables and all(set(t["n"].dropna()) == {224} for t in tables)


def test_flagged_queries_come_first_on_the_judging_page(workspace) -> None:
    at = open_page("views/integrity.py", k="5")
    at.multiselect(key="integrity.flag").set_value(["q006"])  # a tune query: the page audits the tune split
    at.run()
    [flag] = [b for b in at.button if b.label == "Flag for blind re-judging"]
    flag.click()
    at.run()
    assert "Queued 1 queries" in " ".join(s.value for s in at.success)
    ws = Workspace(workspace)
    # The queue of the whole label set as loaded (blind judgments extend it, holdout and all), not of the tune side.
    assert ws.rejudge_queue("labels")["query"].tolist() == ["q006"]
    assert ws.label_versions("labels")["version"].tolist() == [1]  # flagged, not edited
    assert ws.label_version("labels").n_queries == 320

    judge = open_page("views/judge.py")
    assert judge.selectbox(key="judge.query").value == "q006"
    radios = judge.radio
    assert len(radios) >= 3 and all(r.value == "not marked yet" for r in radios)
    [save] = [b for b in judge.button if b.label.startswith("Save")]
    assert save.disabled
    for r in radios:
        r.set_value("not relevant")
    judge.run()
    [save] = [b for b in judge.button if b.label.startswith("Save")]
    save.click()
    judge.run()
    assert "judged blind at depth 10" in " ".join(s.value for s in judge.success)
    assert ws.rejudge_queue("labels").empty
    assert ws.label_versions("labels")["version"].tolist() == [1, 2]
    judged = ws.load_labels("labels", 2)
    assert judged.n_queries == 320 and judged.field("split")["q006"] == "tune"  # every query keeps its split
    assert judged.field("split").value_counts().to_dict() == {"tune": 224, "holdout": 96}


def test_the_data_checklist_does_not_call_sealed_holdout_queries_unlabeled(workspace) -> None:
    """The runs answer the 96 holdout queries too: they are labeled (sealed), not "run queries without labels"."""
    at = open_page("views/data.py")
    [checklist] = [d.value for d in at.dataframe if "run queries without labels" in d.value.columns]
    runs = checklist[checklist["role"].str.startswith("run ")]
    assert len(runs) == 3 and (runs["run queries without labels"].astype(int) == 0).all()
    assert (checklist[checklist["role"] == "labels"]["queries"].astype(int) == 320).all()  # the file as loaded


def test_labels_without_a_split_column_are_split_by_query_hash_on_the_integrity_page(workspace) -> None:
    from dashboard import loading  # after the workspace is set: the dashboard keeps the files there

    sample = loading.sample_dataset()
    unsplit = "\n".join(line.rsplit("\t", 1)[0] if "\t" in line else line
                        for line in SAMPLE_LABELS.read_text().splitlines()) + "\n"
    assert "split" in SAMPLE_LABELS.read_text().splitlines()[0].split("\t")[-1]  # the sample's last column
    mine = sample.with_labels(loading.uploads().add_file("mine.tsv", unsplit.encode("utf-8")))
    key = loading.register(mine)

    at = open_page("views/integrity.py", data=key, k="10")
    assert "The labels have no split column" in _text(at, "info")
    [share] = [n for n in at.number_input if n.label == "Share of queries to tune on"]
    share.set_value(0.5)
    [split] = [b for b in at.button if b.label == "Split by query hash"]
    split.click()
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    hashed = at.query_params["data"][0] if isinstance(at.query_params["data"], list) else at.query_params["data"]
    assert hashed != key
    captions = _text(at, "caption")
    assert "Split by a hash of each query id: 50% of the queries to tune on" in captions
    n = loading.evaluation(mine.with_split(0.5)).value.split.n_queries
    assert f"Every page shows the tune split: {n} queries, exploratory" in captions and n != 224

    [stop] = [b for b in at.button if b.label == "Stop splitting by hash"]
    stop.click()
    at.run()
    assert "The labels have no split column" in _text(at, "info")
