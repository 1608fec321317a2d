"""The Real queries page's model, called directly: its counts are ``evalcore sample``'s on the same log, the same
seed draws the same sample, no personal data from the log reaches what the page shows, a file that is not a log is
refused with one line naming it, and the sample handed to Blind judging is offered there with source and stratum."""

from __future__ import annotations

from pathlib import Path

from evalcore.logs.sampling import sample_log
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
