"""Judging by several people, through the one door: two judges mark the pools of a customer-log sample blind (each
person's marks kept apart, none shown to the other), their agreement is computed, an adjudicator decides the ties, and
the freeze makes one new label-set version whose queries carry their source and stratum, so the Sources gap is there
on it. Every step is an event under the person who took it; a role that may not take a step changes nothing."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from evalcore.access import Actor, Role
from evalcore.analyses.judging import judging_pool
from evalcore.analyses.panel import agreement_sentence, consensus, disagreements, panel_agreement, \
    read_sampled_queries
from evalcore.analyses.segments import segment_gaps
from evalcore.errors import NotPermitted, UsageError
from evalcore.metrics.evaluation import evaluate_runs
from evalcore.readers.labels import read_labels
from evalcore.readers.runs import read_run
from evalcore.store.workspace import Workspace
from evalcore.workflows import Session

ANA = Actor("ana@example.com", Role.EDITOR, "signed in")
LEE = Actor("lee@example.com", Role.EDITOR, "signed in")
OWNER = Actor("ow@example.com", Role.OWNER, "signed in")
VIEWER = Actor("vi@example.com", Role.VIEWER, "signed in")
DOCS = [f"d{i}" for i in range(12)]
CUSTOMER = [f"c{i}" for i in range(8)]
TEAM = [f"t{i}" for i in range(8)]


@pytest.fixture
def panel(tmp_path):
    """Labels of 8 team-written queries, runs over them and over 8 sampled customer-log queries, the sample file."""
    gen = np.random.default_rng(5)
    labels = read_labels(pd.DataFrame({"query": TEAM, "doc_id": DOCS[:8], "source": "team_written"}), name="labels")
    rankings = {q: list(gen.permutation(DOCS)[:6]) for q in TEAM + CUSTOMER}
    runs = [read_run(rankings, name="base"), read_run({q: r[::-1] for q, r in rankings.items()}, name="tuned")]
    sample = tmp_path / "sample.csv"
    sample.write_text("query_id,query_text,source,stratum\n" + "".join(
        f"{q},customer words {q},customer log,{'head' if i < 4 else 'tail'}\n" for i, q in enumerate(CUSTOMER)),
        encoding="utf-8")
    ws = Workspace(tmp_path / "ws")
    return ws, labels, runs, read_sampled_queries(sample)


def pools(labels, runs, sampled):
    return [judging_pool(runs, labels, q, 3, **{k: v for k, v in sampled.info(q).items() if k != "extra"})
            for q in sampled.queries]


def test_two_judges_blind_then_agreement_adjudication_and_a_frozen_version_with_sources(panel) -> None:
    ws, labels, runs, sampled = panel
    ana, lee, owner = Session(ws, ANA), Session(ws, LEE), Session(ws, OWNER)
    judged = pools(labels, runs, sampled)
    gen = np.random.default_rng(1)
    for pool in judged:
        first = {d: bool(gen.random() < 0.5) for d in pool.docs}
        ana.save_marks("labels", pool, first)
        lee.save_marks("labels", pool, {d: m if gen.random() < 0.75 else not m for d, m in first.items()})

    log = ws.panel_marks("labels")
    assert set(log["who"]) == {ANA.who, LEE.who} and log.groupby("entry")["who"].nunique().eq(1).all()
    events = ws.events()
    assert sorted(events["who"].tolist()) == sorted([ANA.who, LEE.who] * len(judged))
    assert set(events["action"]) == {"judge marks"}
    assert not events["detail"].str.contains("relevant").any()  # the record says who judged, never what they marked

    found = panel_agreement(log, rng=0, n_resamples=2000)
    assert found.judges == (ANA.who, LEE.who) and found.n_queries == len(CUSTOMER)
    assert agreement_sentence(found).startswith("Two judges agreed on ")

    differ = disagreements(log)
    assert not differ.empty and differ["tied"].all()  # two judges: every disagreement is a tie
    with pytest.raises(NotPermitted):  # an editor judges; deciding over other people's marks is an owner's
        ana.adjudicate("labels", differ.iloc[0]["query"], {differ.iloc[0]["doc_id"]: True})
    before = (ws.counts(), len(ws.events()))
    with pytest.raises(UsageError, match=r"pairs are tied .* decide them first"):
        owner.freeze_panel("labels", base=labels)
    assert (ws.counts(), len(ws.events())) == before  # refused: nothing written
    with pytest.raises(UsageError, match="do not disagree"):
        owner.adjudicate("labels", "c0", {"no-such-doc": True})
    for query, group in differ.groupby("query"):
        owner.adjudicate("labels", query, {doc: True for doc in group["doc_id"]}, note="read the doc")

    version = owner.freeze_panel("labels", base=labels)
    assert version.version == 2 and ws.label_version("labels", 1).n_queries == len(TEAM)
    frozen = ws.load_labels("labels", 2)
    assert frozen.n_queries == len(TEAM) + len(CUSTOMER)
    assert frozen.field("source")[CUSTOMER].eq("customer log").all()
    assert frozen.field("stratum")[CUSTOMER].tolist() == ["head"] * 4 + ["tail"] * 4
    assert frozen.field("query_text")["c3"] == "customer words c3" and frozen.field("blind")[CUSTOMER].all()
    final = consensus(log.iloc[:0])  # nothing open any more: the freeze closed every query
    assert consensus(ws.panel_marks("labels")).marks.empty and final.marks.empty
    grades = frozen.judgments.set_index(["query", "doc_id"])["grade"]
    for _, row in differ.iterrows():
        assert grades[(row["query"], row["doc_id"])] == 1.0  # the adjudicated mark, not either judge's
    rounds = ws.judging_rounds("labels")
    assert sorted(rounds["query"]) == CUSTOMER and set(rounds["judge"]) == {f"{ANA.who}, {LEE.who}"}
    last = ws.events().iloc[0]
    assert (last["who"], last["action"], last["subject"]) == (OWNER.who, "freeze judging panel", version.ref)
    assert set(ws.events(action="adjudicate")["who"]) == {OWNER.who}
    assert ws.verify() == []

    # Sources on the new version: the customers' queries against the team's.
    gaps = segment_gaps(evaluate_runs(runs, frozen, k=[1, 5]), "source")
    assert gaps.pair is not None and gaps.pair.a == ("customer log",) and gaps.pair.b == ("team_written",)
    assert set(gaps.gaps["n_a"]) == {len(CUSTOMER)} and set(gaps.gaps["n_b"]) == {len(TEAM)}


def test_a_second_round_after_a_freeze_starts_afresh_and_one_judge_alone_is_taken(panel) -> None:
    ws, labels, runs, sampled = panel
    ana, owner = Session(ws, ANA), Session(ws, OWNER)
    pool = pools(labels, runs, sampled)[0]
    ana.save_marks("labels", pool, {d: True for d in pool.docs})
    assert owner.freeze_panel("labels", base=labels).version == 2
    with pytest.raises(UsageError, match="Nothing to freeze"):
        owner.freeze_panel("labels")
    ana.save_marks("labels", pool, {d: False for d in pool.docs})  # re-judged later: a new round of the query
    again = owner.freeze_panel("labels")
    grades = ws.load_labels("labels", again.version).judgments.set_index(["query", "doc_id"])["grade"]
    assert again.version == 3 and all(grades[(pool.query, d)] == 0.0 for d in pool.docs)


def test_marks_cover_the_whole_pool_and_a_viewer_changes_nothing(panel) -> None:
    ws, labels, runs, sampled = panel
    pool = pools(labels, runs, sampled)[0]
    with pytest.raises(UsageError, match="covers the whole pool"):
        Session(ws, ANA).save_marks("labels", pool, {pool.docs[0]: True})
    with pytest.raises(UsageError, match="not in the pool"):
        Session(ws, ANA).save_marks("labels", pool, {**{d: True for d in pool.docs}, "elsewhere": True})
    viewer = Session(ws, VIEWER)
    for step in (lambda: viewer.save_marks("labels", pool, {d: True for d in pool.docs}),
                 lambda: viewer.adjudicate("labels", pool.query, {pool.docs[0]: True}),
                 lambda: viewer.freeze_panel("labels", base=labels)):
        with pytest.raises(NotPermitted):
            step()
    assert ws.panel_marks().empty and ws.events().empty and ws.label_sets().empty
