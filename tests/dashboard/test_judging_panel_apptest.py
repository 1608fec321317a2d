"""Several judges on the dashboard, one smoke test through Streamlit's AppTest: a judge keeps their marks apart on
Blind judging, a second judge's marks (saved through their own session) disagree on one doc, the Integrity page says
how far they agree and links to the disagreements, and the adjudicator (the owner at this machine) decides the tie and
freezes the marks as a new label-set version. The numbers themselves are the page models' tests' and the core's."""

from __future__ import annotations

from pathlib import Path

from streamlit.testing.v1 import AppTest

from evalcore.access import Actor, Role, login_name
from evalcore.analyses.judging import judging_pool
from evalcore.readers.labels import read_labels
from evalcore.readers.runs import read_run
from evalcore.store.workspace import Workspace
from evalcore.workflows import Session

ROOT = Path(__file__).resolve().parents[2]
APP, S = str(ROOT / "dashboard" / "app.py"), ROOT / "sample_data"
QUERY, DEPTH = "q006", "3"


def open_page(path: str, **params: str) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=300)
    at.query_params.update(params)
    at.switch_page(path)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_two_judges_agreement_on_integrity_then_adjudicated_and_frozen(workspace) -> None:
    at = open_page("views/judge.py", query=QUERY, depth=DEPTH)
    radios = [r for r in at.radio if r.key.startswith(f"judge.mark.{QUERY}.{DEPTH}.")]
    docs = [r.key.rsplit(".", 1)[1] for r in radios]
    for r in radios:
        r.set_value("not relevant")
    at.run()
    at.button(key="judge.save_marks").click().run()
    assert not at.exception and any("apart from every other judge's" in s.value for s in at.success)
    ws = Workspace(workspace)
    assert set(ws.panel_marks("labels")["who"]) == {login_name()} and ws.label_sets().empty  # no version yet

    labels = read_labels(S / "labels.tsv")  # a second judge, signed in elsewhere: relevant where the first said no
    pool = judging_pool([read_run(S / f"{n}.trec") for n in ("base", "tuned", "tuned-256d")], labels, QUERY, 3)
    assert sorted(pool.docs) == sorted(docs)  # the page pooled what the core pools
    Session(ws, Actor("lee@example.com", Role.EDITOR, "signed in")).save_marks(
        "labels", pool, {d: d == pool.docs[0] for d in pool.docs})

    integrity = open_page("views/integrity.py", k="5")
    shown = " ".join(t.value for t in integrity.text)
    assert "Two judges agreed on " in shown and "1 open pair the judges disagree on (1 tied" in shown

    judge = open_page("views/judge.py", query=QUERY, depth=DEPTH, show="disagreements")
    assert [b for b in judge.button if b.key == "judge.freeze"][0].disabled  # a tie waits for its decision
    judge.radio(key="judge.decision").set_value("relevant")
    judge.button(key="judge.adjudicate").click().run()
    assert not judge.exception
    judge.button(key="judge.freeze").click().run()
    assert not judge.exception and any(s.value.startswith("Frozen: label set labels v2") for s in judge.success)
    frozen = ws.load_labels("labels", 2).judgments
    grades = frozen[frozen["query"] == QUERY].set_index("doc_id")["grade"]
    assert grades[pool.docs[0]] == 1.0 and all(grades[d] == 0.0 for d in pool.docs[1:])
    assert ws.judging_rounds("labels")["judge"].tolist() == [", ".join(sorted([login_name(), "lee@example.com"]))]
    assert ws.verify() == []
