"""The Sources page through Streamlit's AppTest: the split by source, the gap, k and selections in the URL."""

from __future__ import annotations

import json

from tests.dashboard.apptest_helpers import RUN_A, app, charts, no_exceptions, plain, texts

PAGE = "views/sources.py"


def test_sources_page_splits_every_metric_and_states_the_gap() -> None:
    at = app(PAGE)  # the sample's 224 tune queries (its holdout is sealed)
    assert at.title[0].value == "Sources"
    table = at.dataframe[0].value
    assert {"run", "model", "source", "n", "status", "recall@10", "recall@10 95% CI", "recall@1", "hit@10",
            "precision@10", "ndcg@10", "judged@10", "mrr", "k", "labels"} <= set(table.columns)
    per_run = table.groupby("run")["n"].sum()
    assert (per_run == 224).all() and sorted(per_run.index) == ["base", "tuned", "tuned-256d"]
    base = table[table["run"] == "base"].set_index("source")
    assert base.at["team_written", "n"] == 42 and base.at["team_written", "status"] == "rank 1 of 4 on recall@10"
    assert base.at["failed_search", "status"] == "rank 4 of 4 on recall@10"
    words = texts(at)
    assert "The gap on recall@10" in words
    assert "base: customers' queries score 11.7 points lower on recall@10 than team-written ones (95% CI" in words
    assert "customers' queries = failed_search, search_log, support_ticket" in words
    assert "k = 10 · n = 224 queries · models: base = acme-embed-base-v2" in words
    assert "labels labels:tune#75455c70275d · tune split (exploratory) · 96 holdout queries sealed" in words
    gaps = at.dataframe[1].value
    assert (gaps["gap"] < 0).all() and set(gaps["n_a"]) == {182} and set(gaps["n_b"]) == {42}
    chart = json.loads(charts(at)[0].proto.spec)
    assert len(chart["hconcat"]) == 3  # one panel per run
    assert chart["title"]["text"] == "recall@10 by source, with 95% intervals"
    assert chart["title"]["subtitle"][0].startswith("k = 10 · n = 224 queries · labels labels:tune#")
    assert chart["hconcat"][0]["title"]["subtitle"][0].startswith("gap -11.7 points (95% CI -18.6 to -4.7): lower")


def test_changing_k_metric_and_minimum_n_updates_the_page_and_the_url() -> None:
    at = app(PAGE)
    at.number_input(key="sources.k").set_value(5).run()
    no_exceptions(at)
    assert at.query_params["k"] == "5"
    assert "recall@5" in at.dataframe[0].value.columns and "recall@10" not in at.dataframe[0].value.columns
    assert "The gap on recall@5" in texts(at)

    at.selectbox(key="sources.metric").set_value("mrr").run()
    no_exceptions(at)
    assert at.query_params["metric"] == "mrr"
    assert "base: customers' queries score 0.249 lower on mrr than team-written ones" in texts(at)

    at.number_input(key="sources.minn").set_value(50).run()
    no_exceptions(at)
    assert at.query_params["minn"] == "50"
    table = at.dataframe[0].value
    small = table[table["status"] == "too few to rank"]
    assert set(small["source"]) == {"team_written", "failed_search"} and (small["n"] < 50).all()
    assert table[table["run"] == "base"]["status"].tolist()[:2] == ["rank 1 of 2 on mrr", "rank 2 of 2 on mrr"]
    words = texts(at)
    assert "base: too few queries to compare customers' queries with team-written ones on mrr (n = 182 vs 42; " \
           "each side needs at least 50)." in words
    assert set(at.dataframe[1].value["verdict"]) == {"too few"}


def test_a_copied_link_opens_the_same_view() -> None:
    at = app(PAGE, k="3", metric="hit@k", minn="65", runs="tuned")
    assert at.number_input(key="sources.k").value == 3
    assert at.selectbox(key="sources.metric").value == "hit@k"
    table = at.dataframe[0].value
    assert table["run"].unique().tolist() == ["tuned"] and "hit@3" in table.columns
    assert table.set_index("source").at["team_written", "status"] == "too few to rank"
    assert "The gap on hit@3" in texts(at)
    assert len(json.loads(charts(at)[0].proto.spec)["hconcat"]) == 1


def test_labels_without_a_source_field_get_a_clear_message() -> None:
    at = app("views/data.py")
    at.file_uploader(key="data.labels.0").set_value(
        ("plain.csv", b"query,doc_id,grade\nq1,d1,1\nq2,d2,1\nq3,d3,1\nq4,d5,1\n", "text/csv"))
    at.file_uploader(key="data.runs.0").set_value([("a.trec", RUN_A.encode(), "text/plain")])
    at.run()
    no_exceptions(at)
    at.switch_page(PAGE).run()
    no_exceptions(at)
    words = plain(" ".join(i.value for i in at.info))
    assert "The labels file plain.csv has no source field" in words
    assert "support_ticket, search_log, failed_search or team_written" in words
    assert not at.dataframe and not charts(at)
    assert at.get("page_link")


def test_source_values_are_shown_as_text_and_small_sets_get_no_verdict() -> None:
    labels = ("query,doc_id,grade,source\n"
              "q1,d1,1,**vip** <b>x</b>\nq2,d2,1,team_written\nq3,d3,1,**vip** <b>x</b>\nq4,d5,1,team_written\n")
    at = app("views/data.py")
    at.file_uploader(key="data.labels.0").set_value(("odd.csv", labels.encode(), "text/csv"))
    at.file_uploader(key="data.runs.0").set_value([("a.trec", RUN_A.encode(), "text/plain")])
    at.run()
    at.switch_page(PAGE).run()
    no_exceptions(at)
    table = at.dataframe[0].value
    assert set(table["source"]) == {"**vip** <b>x</b>", "team_written"}
    assert set(table["status"]) == {"too few to rank"}
    for element in [*at.markdown, *at.caption]:
        assert "**vip**" not in element.value and "<b>" not in element.value
    assert "customers' queries = \\*\\*vip\\*\\* \\<b\\>x\\</b\\>" in " ".join(c.value for c in at.caption)
    assert "a: too few queries to compare customers' queries with team-written ones on recall@10 (n = 2 vs 2;" \
        in texts(at)


def test_bad_values_in_a_link_fall_back_to_the_defaults() -> None:
    at = app(PAGE, metric="nope", minn="abc")
    assert at.selectbox(key="sources.metric").value == "recall@k"
    assert at.number_input(key="sources.minn").value == 30
    assert "The gap on recall@10" in texts(at)
    at = app(PAGE, minn="99999999")
    assert at.number_input(key="sources.minn").value == 100_000
    assert set(at.dataframe[0].value["status"]) == {"too few to rank"}
