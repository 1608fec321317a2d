"""Every dashboard page, driven through Streamlit's AppTest: uploads, k, failures, bad files, links."""

from __future__ import annotations

import gzip
import json
import re

import evalcore

from streamlit.testing.v1 import AppTest

from tests.dashboard.apptest_helpers import (DOCS_JSONL, LABELS_CSV, ROOT, RUN_A, RUN_B, app, charts,  # noqa: F401
                                             no_exceptions, plain, texts)


# ---------------------------------------------------------------------------------------------- pages


def test_overview_is_the_first_screen_with_sample_data() -> None:
    at = app()
    assert at.title[0].value == "Overview"
    table = at.dataframe[0].value
    assert table["run"].tolist() == ["base", "tuned", "tuned-256d"]
    assert {"recall@1", "recall@10", "mrr", "recall@10 95% CI", "n", "k", "model", "labels"} <= set(table.columns)
    # The sample labels carry a tune/holdout split: the first screen scores the 224 tune queries, the 96 holdout
    # queries sealed, and says so.
    assert (table["n"] == 224).all() and (table["k"] == 10).all()
    assert table["labels"].str.startswith("labels:tune#").all()
    words = texts(at)
    assert "tune split (exploratory) · 96 holdout queries sealed" in words.replace("\\", "")
    assert "tuned beats base on recall@1 by 14.4 points (95% CI 9.4 to 20.1; p < 0.001 after Holm" in words.replace("\\", "")
    assert len(charts(at)) >= 2  # intervals and the trade-off


def test_overview_baseline_more_metrics_and_k() -> None:
    at = app(k="5", baseline="tuned", more="1")
    table = at.dataframe[0].value
    assert {"recall@5", "hit@5", "precision@5", "ndcg@5", "judged@5"} <= set(table.columns)
    words = texts(at)
    # On the 224 tune queries (the sample's holdout is sealed) the gap is real after Holm.
    assert "against the baseline tuned" in words
    assert "base is worse than tuned on recall@1 by 14.4 points" in words
    at.number_input(key="overview.k").set_value(3).run()
    no_exceptions(at)
    assert at.query_params["k"] == "3"
    assert "recall@3" in at.dataframe[0].value.columns


def test_runs_shown_come_from_the_link() -> None:
    at = app(runs=["tuned", "base"], baseline="tuned")
    assert at.dataframe[0].value["run"].tolist() == ["base", "tuned"]
    assert at.multiselect(key="overview.runs").value == ["base", "tuned"]
    at.multiselect(key="overview.runs").set_value(["tuned-256d"]).run()
    no_exceptions(at)
    assert at.query_params["runs"] == "tuned-256d"
    assert at.dataframe[0].value["run"].tolist() == ["tuned-256d"]
    at.switch_page("views/failures.py").run()
    assert set(at.dataframe[0].value["run"]) == {"tuned-256d"}


def test_every_page_renders() -> None:
    at = app()
    for page, title in (("views/data.py", "Data"), ("views/choose_k.py", "Choose k"),
                        ("views/failures.py", "Failures"), ("views/overview.py", "Overview")):
        at.switch_page(page).run()
        no_exceptions(at)
        assert at.title[0].value == title


def test_choose_k_reads_the_budget_and_moves_with_k() -> None:
    at = app("views/choose_k.py", k="7")
    words = texts(at)
    assert "At k = 7" in words and "How the k is chosen" in words
    table = at.dataframe[0].value
    assert {"recall@7", "hit@7", "tokens (mean)", "k to take", "rule"} <= set(table.columns)
    assert "recommended k" not in table.columns and "elbow" not in table.columns  # one rule, one k per run
    assert len(charts(at)) == 1
    at.number_input(key="choose_k.k").set_value(12).run()
    no_exceptions(at)
    assert "At k = 12" in texts(at) and at.query_params["k"] == "12"
    at.number_input(key="choose_k.rpm").set_value(1_000_000).run()
    no_exceptions(at)
    assert at.dataframe[0].value["$ per month"].notna().all()
    assert at.query_params["rpm"] == "1000000"


def test_chart_png_export() -> None:
    import pandas as pd

    from dashboard import charts, k_charts

    frame = pd.DataFrame({"run": ["a"] * 3, "k": [1, 2, 3], "recall": [0.2, 0.4, 0.5], "recall_ci_low": [0.1, 0.3, 0.4],
                          "recall_ci_high": [0.3, 0.5, 0.6], "tokens_mean": [100.0, 200, 300],
                          "cost_per_1k_requests": [0.1, 0.2, 0.3], "cost_per_month": [None] * 3,
                          "marginal_recall": [0.2, 0.2, 0.1]})
    marks = pd.DataFrame({"run": ["a"], "k": [2], "recall": [0.4], "kind": ["elbow"], "what": ["the elbow"]})
    spec = k_charts.choose_k(frame, marks, ["a"], context="c", models="m", unit="docs", spend="tokens",
                             k_max=3).to_dict()
    at_2 = k_charts.set_k(spec, 2)
    assert at_2["datasets"][k_charts.K_DATA] == [{"k": 2, "label": "k = 2"}]
    assert k_charts.K_DATA not in spec.get("datasets", {})  # the cached spec is left alone
    png = charts.to_png(at_2)
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 2000


# ---------------------------------------------------------------------------------------------- failures


def test_failures_list_pick_walk_and_link() -> None:
    at = app("views/failures.py")
    listing = at.dataframe[0].value
    assert len(listing) > 0 and set(listing["run"]) == {"base", "tuned", "tuned-256d"}
    assert "Select a row in the list above" in texts(at)
    first = listing["query"].iloc[0]
    at.selectbox(key="failures.query").set_value(first).run()
    no_exceptions(at)
    assert at.query_params["query"] == first
    assert at.code[0].value  # what the customer typed, verbatim
    words = texts(at)
    assert "Relevant docs, and where each run put them" in words and "1 of" in words
    # Each relevant doc: its title from the documents file, and where every run put it, in words.
    card = [plain(m.value).replace("**", "") for m in at.markdown if "grade" in m.value and "base" in m.value][0]
    for run in ("base", "tuned", "tuned-256d"):
        assert re.search(rf"[✔✘] {run}: (rank \d+|not in its top \d+|query not in run)", card), card
    titles = evalcore.read_documents(ROOT / "sample_data" / "docs.jsonl").frame["title"]
    assert any(title in card for title in titles), card
    at.button(key="failures.next").click().run()
    no_exceptions(at)
    second, second_text = at.query_params["query"], at.code[0].value
    assert second != first
    at.button(key="failures.previous").click().run()
    assert at.query_params["query"] == first

    # The copied link opens the same drill-down in a new session.
    linked = app("views/failures.py", query=second, k="10")
    assert linked.selectbox(key="failures.query").value == second
    assert linked.code[0].value == second_text


def test_failures_filters_modes_and_runs_compared() -> None:
    at = app("views/failures.py", k="5")
    failures = at.dataframe[0].value  # the page opens on the failures: nothing relevant in the top k
    assert (failures["recall"] == 0).all() and "miss" not in at.query_params
    at.toggle(key="failures.miss").set_value(True).run()
    no_exceptions(at)
    wider = at.dataframe[0].value
    assert len(wider) > len(failures) and (wider["recall"] < 1).all() and (wider["recall"] > 0).any()
    assert at.query_params["miss"] == "any"
    at.multiselect(key="failures.source").set_value(["failed_search"]).run()
    assert set(at.dataframe[0].value["source"]) == {"failed_search"}
    at.text_input(key="failures.search").set_value("PASSWORD").run()
    no_exceptions(at)
    assert at.dataframe[0].value["query_text"].str.lower().str.contains("password").all()
    assert len(at.dataframe) == 1  # the comparison is computed when its tab is opened
    at.session_state["failures.tab"] = "Runs compared"
    at.run()
    no_exceptions(at)
    compared = at.dataframe[1].value
    assert {"gets", "misses", "ranks_gets", "ranks_misses"} <= set(compared.columns)
    # It opens on the best run against the next best (the Overview's headline: tuned, then tuned-256d).
    assert (at.selectbox(key="failures.baseline").value, at.selectbox(key="failures.vs").value) == ("tuned",
                                                                                                      "tuned-256d")


def test_unknown_query_in_link_is_explained() -> None:
    at = app("views/failures.py", query="no-such-query")
    assert "not an evaluated query" in texts(at)
    assert "query" not in at.query_params


# ---------------------------------------------------------------------------------------------- uploads


def upload_everything(at: AppTest) -> AppTest:
    at.file_uploader(key="data.labels.0").set_value(("mine.csv", LABELS_CSV.encode(), "text/csv"))
    at.file_uploader(key="data.runs.0").set_value([
        ("a.trec", RUN_A.encode(), "text/plain"),
        ("b.jsonl.gz", gzip.compress(RUN_B.encode()), "application/gzip"),
        ("a.meta.json", json.dumps({"model": "model-a", "price_per_mtok": 0.5, "dims": 64}).encode(), "application/json"),
    ])
    at.file_uploader(key="data.documents.0").set_value(("docs.jsonl", DOCS_JSONL.encode(), "application/json"))
    return at.run()


def test_upload_checklist_and_every_page_on_uploaded_files() -> None:
    at = app("views/data.py")
    upload_everything(at)
    no_exceptions(at)
    assert "data" in at.query_params
    words = texts(at)
    assert "Runs: a, b" in words and "Labels: mine.csv · 4 queries" in words
    checks = at.dataframe[0].value.set_index("file")
    assert checks.loc["a.trec", "queries"] == "4" and checks.loc["b.jsonl.gz", "role"] == "run b"
    meta = at.data_editor[0].value.set_index("run")
    assert meta.loc["a", "model"] == "model-a" and meta.loc["a", "price_per_mtok"] == 0.5

    at.switch_page("views/overview.py").run()
    no_exceptions(at)
    assert at.dataframe[0].value["run"].tolist() == ["a", "b"]
    assert at.dataframe[0].value.set_index("run").loc["a", "model"] == "model-a"

    at.switch_page("views/failures.py").run()
    no_exceptions(at)
    at.number_input(key="failures.k").set_value(1).run()
    at.selectbox(key="failures.query").set_value("q1").run()
    no_exceptions(at)
    # What the customer typed is shown as text, never as Markdown.
    assert at.code[0].value == "**bold** <b>reset</b> [link](http://x)"
    for element in [*at.markdown, *at.caption]:
        assert "**bold**" not in element.value and "<b>" not in element.value
    # Each run's list reads doc by doc, marks first, text wrapped: run a put d9 (judged not relevant) first.
    ranked = [plain(m.value).replace("**", "") for m in at.markdown if plain(m.value).startswith("**#")]
    assert ranked[0].startswith("#1 :red-background[✘ not relevant] d9") and "text of d9" in ranked[0]
    assert ranked[1].startswith("#2 :green-background[✔ relevant] d1") and "text of d1" in ranked[1]

    at.switch_page("views/choose_k.py").run()
    no_exceptions(at)

    # A copied link to the uploaded data opens it in another session on the same server.
    other = app("views/overview.py", data=at.query_params["data"])
    assert other.dataframe[0].value["run"].tolist() == ["a", "b"]


def test_own_runs_without_documents_ask_for_a_chunk_size() -> None:
    at = app("views/data.py")
    at.file_uploader(key="data.labels.0").set_value(("mine.csv", LABELS_CSV.encode(), "text/csv"))
    at.file_uploader(key="data.runs.0").set_value([("a.trec", RUN_A.encode(), "text/plain")])
    at.run()
    no_exceptions(at)
    assert "Optional: chunk text for drill-downs" in texts(at)  # the sample's documents were dropped
    at.switch_page("views/choose_k.py").run()
    no_exceptions(at)
    assert at.number_input(key="choose_k.chunk").value == 300
    at.number_input(key="choose_k.chunk").set_value(500).run()
    no_exceptions(at)
    assert at.query_params["chunk"] == "500"
    assert at.dataframe[0].value["tokens (mean)"].iloc[0] > 0


def test_bad_files_are_explained_beside_the_upload_and_change_nothing() -> None:
    at = app("views/data.py")
    at.file_uploader(key="data.runs.0").set_value([("broken.trec", b"q1 Q0 d1 1 not-a-number tag\n", "text/plain")])
    at.run()
    no_exceptions(at)
    errors = plain(" ".join(e.value for e in at.error))
    assert "broken.trec, line 1: expected a number in the score column" in errors
    assert "Runs: base, tuned, tuned-256d" in texts(at)
    assert "data" not in at.query_params  # still the sample

    at.file_uploader(key="data.labels.0").set_value(("labels.csv", b"query,doc_id,grade\nq1,,1\n", "text/csv")).run()
    errors = plain(" ".join(e.value for e in at.error))
    assert "labels.csv, line 2: expected a doc id in column 'doc_id'" in errors
    assert "Labels: labels.tsv · 320 queries" in texts(at)

    at.switch_page("views/overview.py").run()
    no_exceptions(at)
    assert at.dataframe[0].value["run"].tolist() == ["base", "tuned", "tuned-256d"]


def test_files_that_cannot_be_scored_are_explained_on_every_page() -> None:
    at = app("views/data.py")
    at.file_uploader(key="data.labels.0").set_value(("zeros.csv", b"query,doc_id,grade\nq1,d1,0\nq2,d2,0\n", "text/csv"))
    at.file_uploader(key="data.runs.0").set_value([("a.trec", RUN_A.encode(), "text/plain")])
    at.run()
    no_exceptions(at)
    assert "at least one labeled query with a doc graded 1 or higher" in plain(" ".join(e.value for e in at.error))
    for page in ("views/overview.py", "views/choose_k.py", "views/failures.py"):
        at.switch_page(page).run()
        no_exceptions(at)
        assert "at least one labeled query" in plain(" ".join(e.value for e in at.error))
        assert at.get("page_link")


def test_metadata_edit_and_bring_back_the_sample() -> None:
    at = app("views/data.py")
    upload_everything(at)
    key = at.query_params["data"]
    editor = f"data.meta.{key}"
    at.session_state[editor] = {"edited_rows": {1: {"model": "model-b", "price_per_mtok": 0.25}}, "added_rows": [],
                                "deleted_rows": []}
    at.run()
    no_exceptions(at)
    assert at.query_params["data"] != key
    meta = at.data_editor[0].value.set_index("run")
    assert meta.loc["b", "model"] == "model-b" and meta.loc["b", "price_per_mtok"] == 0.25
    assert meta.loc["a", "model"] == "model-a"  # the earlier sidecar is kept

    at.button(key="data.sample").click().run()
    no_exceptions(at)
    edited = at.query_params["data"]
    assert edited not in (key,) and "Runs: base, tuned, tuned-256d" in texts(at)  # the sample, named in the URL:
    assert app().query_params["data"] != edited  # the root address opens on the data loaded last


def test_links_with_bad_values_fall_back_with_a_note() -> None:
    at = app(k="abc", data="0123456789ab", baseline="nope", runs="nope")
    words = texts(at)
    assert "no longer holds" in words
    table = at.dataframe[0].value
    assert (table["k"] == 10).all() and table["run"].tolist() == ["base", "tuned", "tuned-256d"]
    at = app(k="1000")
    assert (at.dataframe[0].value["k"] == 10).all()
