"""The Real queries page, one smoke test through Streamlit's AppTest: a file that is not a log is refused beside the
upload, a log is uploaded and sampled (the email in it never shown), and the sample sent to Blind judging is offered
there. The numbers themselves are the page model's test's and the core's."""

from __future__ import annotations

from pathlib import Path

from evalcore.store.workspace import Workspace

from tests.dashboard.apptest_helpers import app, no_exceptions, plain, texts

ROOT = Path(__file__).resolve().parents[2]
LOG = ROOT / "tests" / "fixtures" / "logs" / "ubi_queries.ndjson"
EMAIL = "jane.doe@example.com"  # in the log; masked in the sample


def test_upload_a_log_draw_and_send_the_sample_to_blind_judging(workspace) -> None:
    at = app("views/real_queries.py")
    assert "Upload a query log" in texts(at)
    at.file_uploader(key="real_queries.upload").set_value(("notes.txt", b"hello\x00there\n", "text/plain")).run()
    no_exceptions(at)
    errors = [plain(e.value) for e in at.error]
    assert any(e.startswith("notes.txt") and "expected a query log" in e for e in errors), errors
    assert "log" not in at.query_params  # nothing loaded changed

    at.number_input(key="real_queries.n").set_value(3).run()
    at.file_uploader(key="real_queries.upload").set_value((LOG.name, LOG.read_bytes(), "application/x-ndjson")).run()
    no_exceptions(at)
    shown = texts(at)
    assert f"Read {LOG.name} (OpenSearch UBI queries" in shown and "jane.doe" not in shown
    assert at.query_params["n"] == "3" and at.query_params["log"]
    assert len(at.get("arrow_vega_lite_chart") or at.get("vega_lite_chart")) == 1
    sampled = at.dataframe[-1].value["query_id"].tolist()
    assert len(sampled) == 3

    at.button(key="real_queries.send").click().run()
    no_exceptions(at)
    offered = at.selectbox(key="judge.query").options
    assert [o.split(" · ")[0] for o in offered[:3]] == sampled
    assert all(" · customer log · stratum " in o for o in offered[:3])
    stored = " ".join(Workspace(workspace).events()["subject"])  # "Who did what" lists the sample's store
    assert "file ubi_queries.sample-n3-seed0-proportional.csv #" in stored
    assert LOG.name not in stored.replace("ubi_queries.sample", "")  # the raw log, with its emails, is never stored
    assert EMAIL.encode() not in b"".join(p.read_bytes() for p in Path(workspace).rglob("*") if p.is_file())
    assert "file notes.txt" not in stored  # a file that is not a log is never stored


def test_a_first_visit_tries_the_sample_log_with_its_personal_data_masked(workspace) -> None:
    at = app("views/real_queries.py")
    [sample] = [b for b in at.button if b.label == "Try it on the sample log"]
    sample.click().run()
    no_exceptions(at)
    shown = texts(at)
    assert "Read help-centre.ubi.jsonl (OpenSearch UBI queries, JSON lines): 2,538 logged queries" in shown
    tables = "\n".join(d.value.to_csv() for d in at.dataframe)
    assert "<email>" in tables and "<phone>" in tables  # the sample drawn shows where they were, masked
    assert not [s for s in ("jane.doe", "555-0142") if s in shown or s in tables]
    assert "Logged docs:" in shown and at.query_params["log"]
    assert not Workspace(workspace).events().size  # the log is held in memory, never stored
