"""The Integrity and Blind judging pages through Streamlit's AppTest: what they show, and what they record."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from evalcore.workspace import Workspace

APP = str(Path(__file__).resolve().parents[1] / "dashboard" / "app.py")


@pytest.fixture
def workspace(tmp_path, monkeypatch) -> Path:
    folder = tmp_path / "ws"
    monkeypatch.setenv("EVALCORE_WORKSPACE", str(folder))
    return folder


def open_page(path: str, **params) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=300)
    for name, value in params.items():
        at.query_params[name] = value
    at.switch_page(path)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_integrity_page_warns_compares_sources_and_keeps_the_holdout_sealed(workspace) -> None:
    at = open_page("views/integrity.py", k="5")
    warnings = " ".join(w.value for w in at.warning)
    assert "run base: 15 of the 23 judged non" in warnings.replace("\\", "")
    assert "judged" in warnings and "check" in warnings
    assert at.get("tabs") and len(at.dataframe) >= 6
    captions = " ".join(c.value.replace("\\", "") for c in at.caption)
    assert "k = 5 · n = 320 queries" in captions
    texts = " ".join(t.value for t in at.text)
    assert "base: customers' queries score" in texts and "n = 260 vs 60" in texts  # the gap, from evalcore.segments
    assert "Tune split: 96 queries, exploratory" in captions and "holdout of labels never viewed" in captions
    assert not any(s.value for s in at.success)  # nothing revealed by opening the page

    [reveal] = [b for b in at.button if b.label.startswith("Reveal the holdout")]
    reveal.click()
    at.run()
    assert "viewed once" in " ".join(s.value for s in at.success)
    assert Workspace(workspace).reveals("labels")["version"].tolist() == [1]
    tables = [d.value for d in at.dataframe if "split" in d.value.columns]
    holdout = [t for t in tables if set(t["split"]) == {"holdout"}]
    assert holdout and set(holdout[0]["n"]) == {224} and set(holdout[0]["fingerprint"]) == {"75455c70275d"}
    assert any(set(t["split"]) == {"tune"} and set(t["n"]) == {96} for t in tables)


def test_flagged_queries_come_first_on_the_judging_page(workspace) -> None:
    at = open_page("views/integrity.py", k="5")
    at.multiselect(key="integrity.flag").set_value(["q036"])
    at.run()
    [flag] = [b for b in at.button if b.label == "Flag for blind re-judging"]
    flag.click()
    at.run()
    assert "Queued 1 queries" in " ".join(s.value for s in at.success)
    ws = Workspace(workspace)
    assert ws.rejudge_queue("labels")["query"].tolist() == ["q036"]
    assert ws.label_versions("labels")["version"].tolist() == [1]  # flagged, not edited

    judge = open_page("views/judge.py")
    assert judge.selectbox(key="judge.query").value == "q036"
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
