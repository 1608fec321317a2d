"""The Blind judging and Integrity pages' models for several judges, called directly: a sampled queries file's
queries offered with their source and stratum, their pools carrying both, what a judge is told of the log (only their
own marks), and the agreement, disagreements and freeze the adjudicator and the Integrity page are shown, against the
core's own numbers."""

from __future__ import annotations

import json

import numpy as np

from evalcore.access import Actor, Role
from evalcore.analyses.panel import agreement_sentence, disagreements, panel_agreement
from evalcore.metrics.dataset import Dataset, RunSpec
from evalcore.workflows import Session

from dashboard import loading
from dashboard.page_models import integrity, judge
from tests.page_models.dump import to_json
from tests.page_models.small_data import held, labels_csv, trec

ANA = Actor("ana@example.com", Role.EDITOR, "signed in")
LEE = Actor("lee@example.com", Role.EDITOR, "signed in")
DOCS = [f"d{i}" for i in range(10)]
CUSTOMER = [f"c{i}" for i in range(6)]


def sampled_dataset() -> Dataset:
    """Labels of two team-written queries, a run over them and six customer-log queries, and the sample file."""
    gen = np.random.default_rng(4)
    ranked = {q: list(gen.permutation(DOCS)[:5]) for q in ["t1", "t2", *CUSTOMER]}
    sample = "query_id,query_text,source,stratum,clicked_doc_ids\n" + "".join(
        f"{q},words of {q},customer log,{'head' if i < 3 else 'tail'},{'d9' if q == 'c0' else ''}\n"
        for i, q in enumerate(CUSTOMER))
    return Dataset(labels=held("labels.csv", labels_csv({"t1": ["d1"], "t2": ["d2"]},
                                                        {"t1": "team_written", "t2": "team_written"})),
                   runs=(RunSpec(file=held("base.trec", trec("base", ranked)), name="base", model="m"),),
                   queries=held("sample.csv", sample))


def test_sampled_queries_come_after_flagged_ones_named_by_source_and_stratum() -> None:
    dataset = sampled_dataset()
    options, names = judge.query_choices(dataset, ["t2"])
    assert options == ["t2", *CUSTOMER, "t1"]
    assert names["t2"] == "t2 · flagged for re-judging" and names["c4"] == "c4 · customer log · stratum tail"
    pool = judge.pool(dataset, "c0", 3).value
    assert (pool.query_text, pool.source, pool.stratum) == ("words of c0", "customer log", "head")
    assert "d9" in pool.docs and len(pool.docs) == 4  # the run's top 3 and the clicked doc


def test_a_judge_is_told_only_of_their_own_marks_and_the_adjudicator_sees_the_cores_numbers() -> None:
    dataset = sampled_dataset()
    ws = loading.workspace().value
    gen = np.random.default_rng(0)
    pools = [judge.pool(dataset, q, 3).value for q in CUSTOMER]
    for pool in pools:
        marks = {d: bool(gen.random() < 0.5) for d in pool.docs}
        Session(ws, ANA).save_marks("labels", pool, marks)
    log = ws.panel_marks("labels")
    assert judge.own_marks(log, ANA.who, "c0") is not None and judge.own_marks(log, LEE.who, "c0") is None
    early = judge.panel_status("labels", log)
    assert early.sentence is None and early.judges == (ANA.who,) and early.open_queries == len(CUSTOMER)
    assert early.freeze.startswith("Freezing makes one new label-set version with 6 queries")

    for pool in pools:
        Session(ws, LEE).save_marks("labels", pool, {d: bool(gen.random() < 0.5) for d in pool.docs})
    log = ws.panel_marks("labels")
    status = judge.panel_status("labels", log)
    assert status.sentence == agreement_sentence(panel_agreement(log, rng=0))
    assert status.sentence.startswith("Two judges agreed on ")
    assert status.disagreements.equals(disagreements(log)) and status.unresolved == len(status.disagreements)
    assert list(status.statistics["statistic"]) == ["percent agreement", "Cohen's kappa", "Fleiss' kappa",
                                                    "Krippendorff's alpha"]
    assert status.freeze.endswith("for an adjudicator's decision before the marks can be frozen.")

    shown = integrity.judges_agreement("labels", log)  # the Integrity page: the same numbers
    assert shown.sentence == status.sentence
    assert integrity.disagreement_line(shown) == (f"{len(status.disagreements)} open pairs the judges disagree on "
                                                  f"({status.unresolved} tied, 0 decided by an adjudicator); the "
                                                  "adjudicator settles them on Blind judging.")
    assert set(integrity.STATISTICS) == set(status.statistics["statistic"])
    dumped = json.loads(to_json(status))  # dumpable, the sentence where a person diffing two dumps looks
    assert dumped["sentence"] == status.sentence and dumped["unresolved"] == status.unresolved
