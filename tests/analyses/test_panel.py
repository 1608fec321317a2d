"""Judging by several people (`evalcore.analyses.panel`): a sampled queries file read with its sources and strata, the
log of marks read as each judge's latest marks, the disagreements, the consensus a freeze takes, the sentence."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from evalcore.analyses.judging import judging_pool
from evalcore.analyses.panel import (
    agreement_sentence,
    consensus,
    consensus_labels,
    disagreements,
    latest_marks,
    open_entries,
    panel_agreement,
    read_sampled_queries,
)
from evalcore.errors import InputError, UsageError
from evalcore.readers.labels import read_labels
from evalcore.readers.runs import read_run

COLUMNS = ["entry", "label_set", "query", "kind", "who", "depth", "doc_id", "relevant", "query_text", "source",
           "stratum", "version", "note", "at"]


def log(*entries: tuple) -> pd.DataFrame:
    """A log as `Workspace.panel_marks` gives it, from (kind, who, query, {doc: mark}[, source, stratum]) entries."""
    rows = []
    for number, (kind, who, query, marks, *info) in enumerate(entries, start=1):
        source, stratum = (info + [None, None])[:2]
        for doc, mark in marks.items():
            rows.append((number, "labels", query, kind, who, 5, doc, bool(mark), f"text of {query}", source, stratum,
                         None, "", "2026-01-01"))
    return pd.DataFrame(rows, columns=COLUMNS)


def test_a_sampled_queries_file_gives_each_querys_text_source_stratum_and_log_docs(tmp_path) -> None:
    path = tmp_path / "sample.csv"
    path.write_text("query_id,query_text,source,stratum,count,logged_doc_ids,clicked_doc_ids\n"
                    "c1,reset my password,customer log,head,41,d1;d2,d3\n"
                    "c2,export to csv,customer log,tail,2,,\n", encoding="utf-8")  # evalcore sample's columns, and more
    found = read_sampled_queries(path)
    assert found.queries == ["c1", "c2"]
    assert found.info("c1") == {"query_text": "reset my password", "source": "customer log", "stratum": "head",
                                "extra": ("d1", "d2", "d3")}
    assert found.info("c2")["extra"] == () and found.info("nope") == {}
    plain = tmp_path / "plain.tsv"
    plain.write_text("query_id\tquery_text\nc1\treset\n", encoding="utf-8")
    assert read_sampled_queries(plain).info("c1")["source"] is None
    bad = tmp_path / "bad.csv"
    bad.write_text("query_id,source\nc1,customer log\n", encoding="utf-8")
    with pytest.raises(InputError) as error:
        read_sampled_queries(bad)
    assert "\n" not in str(error.value) and "bad.csv" in str(error.value)


def test_the_pool_adds_the_logs_docs_and_the_samples_text_and_hides_where_they_came_from() -> None:
    labels = read_labels({"q": ["d1"]})
    runs = [read_run({"c1": ["d1", "d2", "d3"]}, name="a"), read_run({"c1": ["d4", "d1"]}, name="b")]
    pool = judging_pool(runs, labels, "c1", 2, extra=("d9", "d1"), query_text="reset my password",
                        source="customer log", stratum="head")
    assert sorted(pool.docs) == ["d1", "d2", "d4", "d9"]
    assert (pool.query_text, pool.source, pool.stratum) == ("reset my password", "customer log", "head")
    assert list(pool.to_frame().columns) == ["query", "query_text", "source", "stratum", "doc_id", "pool_depth",
                                            "labels", "fingerprint", "relevant"]  # which doc came from where: not said


def test_each_judges_latest_marks_count_and_a_freeze_closes_them() -> None:
    found = log(("judge", "ana", "q1", {"a": 1, "b": 0}), ("judge", "ana", "q1", {"a": 0, "b": 0}),
                ("judge", "lee", "q1", {"a": 1, "b": 0}), ("frozen", "ow", "q1", {"a": 1, "b": 0}),
                ("judge", "ana", "q2", {"c": 1}))
    latest = latest_marks(found)
    assert latest[latest["query"] == "q1"][["doc_id", "who", "relevant"]].values.tolist() == [
        ["a", "ana", False], ["a", "lee", True], ["b", "ana", False], ["b", "lee", False]]
    assert open_entries(found)["entry"].unique().tolist() == [5]  # q1 was frozen after its marks


def test_disagreements_and_the_consensus_majority_tie_adjudication_one_judge() -> None:
    found = log(("judge", "ana", "q1", {"a": 1, "b": 1, "c": 0, "d": 1}, "customer log", "head"),
                ("judge", "lee", "q1", {"a": 1, "b": 0, "c": 1, "d": 1}),
                ("judge", "kim", "q1", {"a": 1, "b": 0}),
                ("judge", "ana", "q2", {"e": 1}))
    differ = disagreements(found)
    assert differ[["query", "doc_id", "relevant", "not_relevant", "tied"]].values.tolist() == [
        ["q1", "b", 1, 2, False], ["q1", "c", 1, 1, True]]
    assert differ.iloc[1]["marks"] == "ana: not relevant; lee: relevant"
    tied = consensus(found)
    assert tied.unresolved.values.tolist() == [["q1", "c"]]
    decided = pd.concat([found, log(("adjudication", "ow", "q1", {"c": 0})).assign(entry=5)], ignore_index=True)
    final = consensus(decided)
    assert final.unresolved.empty
    assert final.marks[["query", "doc_id", "relevant", "how"]].values.tolist() == [
        ["q1", "a", True, "unanimous"], ["q1", "b", False, "majority"], ["q1", "c", False, "adjudicated"],
        ["q1", "d", True, "unanimous"], ["q2", "e", True, "one judge"]]
    assert final.counts == {"unanimous": 2, "majority": 1, "adjudicated": 1, "one judge": 1}
    assert disagreements(decided).iloc[1][["decided", "decided_by"]].tolist() == ["not relevant", "ow"]
    rounds = {r["query"]: r for r in final.rounds}
    assert rounds["q1"]["judges"] == ["ana", "kim", "lee"] and rounds["q1"]["n_relevant"] == 2
    assert (rounds["q1"]["source"], rounds["q1"]["stratum"]) == ("customer log", "head")
    labels = consensus_labels(final, "labels")
    assert labels.field("source")["q1"] == "customer log" and labels.field("stratum")["q1"] == "head"
    assert bool(labels.field("blind")["q2"]) and labels.n_queries == 2
    with pytest.raises(UsageError, match="Nothing to freeze"):
        consensus_labels(consensus(log(("frozen", "ow", "q1", {"a": 1}))), "labels")


def test_the_sentence_opens_on_the_share_then_kappa_with_its_word_and_interval() -> None:
    gen = np.random.default_rng(2)
    entries = []
    for q in range(20):
        marks = {f"d{i}": int(gen.random() < 0.4) for i in range(8)}
        entries.append(("judge", "ana", f"q{q}", marks))
        entries.append(("judge", "lee", f"q{q}", {d: m if gen.random() < 0.85 else 1 - m for d, m in marks.items()}))
    found = panel_agreement(log(*entries), rng=0, n_resamples=2000)
    head = found.headline
    assert head.statistic == "Cohen's kappa" and found.n_pairs == 160 and found.n_queries == 20
    sentence = agreement_sentence(found)
    assert sentence.startswith(f"Two judges agreed on {found.percent.value:.0%} of the pairs they both marked; kappa "
                               f"{head.value:.2f} (")
    assert f"95% interval {head.low:.2f}-{head.high:.2f} (Cohen's kappa; n = 160 pairs of 20 queries)." in sentence
    three = panel_agreement(log(*entries, ("judge", "kim", "q0", {"d0": 1})), rng=0, n_resamples=2000)
    assert three.headline.statistic == "Krippendorff's alpha"  # kim marked one pair: marks are missing
    assert agreement_sentence(three).startswith("Three judges all agreed on ")
    assert panel_agreement(log(("judge", "ana", "q1", {"a": 1}))) is None
