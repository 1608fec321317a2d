"""The Real queries page's model, called directly: its counts are ``evalcore sample``'s on the same log, the same
seed draws the same sample, no personal data from the log reaches what the page shows, a file that is not a log is
refused with one line naming it, and the sample handed to Blind judging is offered there with source and stratum,
each pool holding the docs the log gave, and the logged results along as the run production."""

from __future__ import annotations

import json
from pathlib import Path

from evalcore.logs.sampling import query_id, sample_log
from evalcore.readers.labels import read_labels

from dashboard import loading
from dashboard.page_models import judge
from dashboard.page_models import real_queries as page
from tests.page_models.dump import to_json

ROOT = Path(__file__).resolve().parents[2]
LOG = ROOT / "tests" / "fixtures" / "logs" / "ubi_queries.ndjson"
EMAIL = "jane.doe@example.com"


def uploaded(path: Path = LOG):
    return page.hold(path.name, path.read_bytes())


def test_counts_are_the_commands_and_the_same_seed_draws_the_same_sample(sample) -> None:
    log = uploaded()
    found = page.draw(sample, log, "detect", 3, 1, "proportional")
    assert found.ok, found.error
    model = found.value
    expected = sample_log(str(LOG), labels=read_labels(ROOT / "sample_data" / "labels.tsv"), n=3, seed=1).to_dict()
    assert model.counts["read"] == {**expected["read"], "file": LOG.name}
    assert [model.counts[k] for k in ("queries", "distinct", "clusters")] == [expected[k] for k in
                                                                              ("queries", "distinct", "clusters")]
    assert model.counts["strata"] == expected["strata"]
    assert model.strata["queries"].tolist() == [s["queries"] for s in expected["strata"]]
    assert model.sample["query_id"].tolist() == [r["query_id"] for r in expected["sample"]]
    assert model.zero_result_share == 2 / 5  # two of five logged queries found nothing
    again = page.draw(sample, log, "ubi", 3, 1, "proportional").value
    assert again.sample.equals(model.sample) and again.queries_file == model.queries_file


def test_no_email_from_the_log_reaches_the_page(sample) -> None:
    assert EMAIL in LOG.read_text(encoding="utf-8")
    shown = to_json(page.draw(sample, uploaded(), "detect", 10, 0, "equal"))
    assert EMAIL not in shown and "jane.doe" not in shown and "<email>" in shown


def test_a_file_that_is_not_a_log_is_refused_in_one_line_naming_it(sample) -> None:
    for name, data in (("notes.txt", b"hello\x00there\n"), ("blank.csv", b"query\n\n"), ("empty.csv", b"")):
        found = page.draw(sample, page.hold(name, data), "detect", 5, 0, "proportional")
        assert not found.ok and found.error.startswith(name) and "\n" not in found.error, found.error
        assert "expected" in found.error and "/tmp" not in found.error


def test_the_sample_sent_to_judging_is_offered_there_with_source_and_stratum(sample) -> None:
    model = page.draw(sample, uploaded(), "detect", 3, 1, "proportional").value
    key = page.send_to_judging(sample, model)
    assert key.ok, key.error
    dataset, note = loading.resolve(key.value)
    assert note is None and dataset.queries is not None and dataset.labels == sample.labels
    options, names = judge.query_choices(dataset, [])
    ids = model.sample["query_id"].tolist()
    assert options[:len(ids)] == ids
    assert all(names[q].startswith(f"{q} · customer log · stratum ") for q in ids)
    stored = set(loading.workspace().value.files()["name"])
    assert model.queries_name in stored and LOG.name not in stored  # the sample is kept; the raw log never is


def ubi_bytes() -> bytes:
    """UBI queries and click events: "reset password" logged twice (latest results doc-3, doc-7; clicks doc-2 and
    doc-9, neither in the latest results), "refund" found nothing."""
    rows = [{"query_id": "a1", "user_query": "Reset password", "query_response_object_ids": ["doc-7", "doc-2"],
             "timestamp": "2025-03-01T10:00:00Z"},
            {"action_name": "click", "query_id": "a1", "event_attributes": {"object": {"object_id": "doc-2"}}},
            {"query_id": "a2", "user_query": "reset password", "query_response_object_ids": ["doc-3", "doc-7"],
             "timestamp": "2025-03-01T10:05:00Z"},
            {"action_name": "click", "query_id": "a2", "event_attributes": {"object": {"object_id": "doc-9"}}},
            {"query_id": "a3", "user_query": "refund", "query_response_object_ids": [],
             "timestamp": "2025-03-01T10:06:00Z"}]
    return "".join(json.dumps(r) + "\n" for r in rows).encode("utf-8")


def test_sending_adds_the_production_run_and_every_pool_holds_the_logged_docs(sample) -> None:
    model = page.draw(sample, page.hold("ubi.ndjson", ubi_bytes()), "detect", 10, 0, "proportional").value
    assert model.sample.set_index("query")[["logged", "clicked"]].to_dict("index") == {
        "reset password": {"logged": 2, "clicked": 2}, "refund": {"logged": 0, "clicked": 0}}
    assert any(s.startswith("Logged docs: the log gave 1 of the 2 sampled queries their results")
               for s in model.sentences)
    reset = query_id("reset password")
    assert model.production_file.decode() == f"{reset} Q0 doc-3 1 100 production\n{reset} Q0 doc-7 2 99 production\n"
    key = page.send_to_judging(sample, model)
    assert key.ok, key.error
    dataset, _ = loading.resolve(key.value)
    assert dataset.run_names == sample.run_names + ["production"]
    production = dataset.runs[-1]
    assert loading.file_bytes(production.file) == model.production_file
    stored = set(loading.workspace().value.files()["name"])
    assert {model.queries_name, model.production_name} <= stored and "ubi.ndjson" not in stored
    pooled = judge.pool(dataset, reset, 1)
    assert pooled.ok, pooled.error
    assert {"doc-3", "doc-7", "doc-2", "doc-9"} <= set(pooled.value.docs)  # logged results and clicks
    assert pooled.value.source == "customer log"
    again = page.send_to_judging(dataset, model)  # sent twice: still one production run
    assert loading.resolve(again.value)[0].run_names == sample.run_names + ["production"]


def test_a_log_without_results_adds_no_run(sample) -> None:
    model = page.draw(sample, page.hold("plain.csv", b"query\nreset password\nrefund\n"), "detect", 5, 0,
                      "proportional").value
    assert model.production_file == b""
    assert any("no production run" in s for s in model.sentences)
    key = page.send_to_judging(sample, model)
    assert key.ok, key.error
    assert loading.resolve(key.value)[0].run_names == sample.run_names
