"""Evaluation integrity (issue 7): tune/holdout with a sealed holdout, judged coverage and bounds, blind share and
pooling bias, label suspects, blind judging into a new label-set version."""

from __future__ import annotations

import hashlib
import sqlite3
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from evalcore.analyses.audit import audit_runs
from evalcore.analyses.blindness import blind_metrics, blind_share, blindness_warnings, pooling
from evalcore.analyses.coverage import coverage_bounds, coverage_warnings, covered_depth
from evalcore.errors import UsageError
from evalcore.metrics.evaluation import evaluate_runs
from evalcore.metrics.split import HoldoutSealed, SplitRule, evaluate_split, hash_split, scoring_labels, select_split
from evalcore.analyses.judging import judging_pool, marks_to_labels
from evalcore.readers.labels import read_labels
from evalcore.readers.runs import read_run
from evalcore.analyses.suspects import label_suspects
from evalcore.store.workspace import FrozenError, Workspace

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "sample_data"


def labels_frame(rows, **fields) -> pd.DataFrame:
    frame = pd.DataFrame(rows, columns=["query", "doc_id", "grade"])
    for name, values in fields.items():
        frame[name] = frame["query"].map(values)
    return frame


def run_of(name: str, rankings: dict) -> object:
    return read_run({q: list(docs) for q, docs in rankings.items()}, name=name)


# ----------------------------------------------------------------------------- tune / holdout


def test_hash_split_is_sha256_of_the_query_id_and_stable() -> None:
    ids = [f"q{i:04d}" for i in range(2000)]
    sides = hash_split(ids, 0.3)
    for query, side in list(zip(ids, sides))[:50]:
        share = int.from_bytes(hashlib.sha256(query.encode("utf-8")).digest()[:8], "big") / 2 ** 64
        assert side == ("tune" if share < 0.3 else "holdout")
    assert 0.27 < float(np.mean(sides == "tune")) < 0.33
    # A query keeps its side when others are added or the order changes.
    again = hash_split(list(reversed(ids)) + ["new-1", "new-2"], 0.3)
    assert list(reversed(again[:2000])) == list(sides)


@pytest.mark.parametrize("fraction", [0, 1, -0.1, 1.5, True])
def test_hash_split_fraction_must_be_strictly_between_0_and_1(fraction) -> None:
    with pytest.raises(UsageError, match="tune fraction"):
        hash_split(["a"], fraction)


def test_file_split_tune_is_open_and_holdout_sealed() -> None:
    labels = read_labels(SAMPLE / "labels.tsv")
    tune = select_split(labels, "tune")
    assert (tune.n_queries, tune.n_other, tune.n_unassigned) == (224, 96, 0)
    assert set(tune.labels.field("split")) == {"tune"}
    assert "exploratory" in tune.note
    with pytest.raises(HoldoutSealed, match="sealed"):
        select_split(labels, "holdout")


def test_labels_without_a_split_need_a_hash_split() -> None:
    labels = read_labels({"a": ["d1"], "b": ["d2"]})
    with pytest.raises(UsageError, match="no 'split' field"):
        select_split(labels, "tune")
    many = read_labels({f"q{i}": ["d"] for i in range(40)})
    view = select_split(many, "tune", SplitRule(0.5))
    expected = [q for q, side in zip(many.queries, hash_split(many.queries, 0.5)) if side == "tune"]
    assert list(view.labels.queries) == expected and view.n_queries + view.n_other == 40
    assert "hash split" in str(view.rule)


def test_queries_without_a_split_value_are_left_out_with_a_warning() -> None:
    frame = labels_frame([("a", "d1", 1), ("b", "d2", 1), ("c", "d3", 1)], split={"a": "tune", "b": "holdout", "c": ""})
    view = select_split(read_labels(frame), "tune")
    assert list(view.labels.queries) == ["a"]
    assert [w.code for w in view.warnings] == ["split_unassigned"] and view.warnings[0].count == 1


def test_a_reveal_is_recorded_counted_and_unseals_only_its_own_labels(tmp_path) -> None:
    ws = Workspace(tmp_path / "ws")
    labels = read_labels(SAMPLE / "labels.tsv")
    assert ws.reveal_summary("labels") == "holdout of labels never viewed"
    first = ws._record_reveal(labels, rule="file", runs=[("base", "acme")], who="ana")
    second = ws._record_reveal(labels, rule="file", runs=[("base", "acme")], who="bo")
    assert (first.views, second.views) == (1, 2)
    assert ws.reveal_summary("labels").startswith("holdout of labels viewed 2 times, last on ")
    assert ws.reveal_summary("labels").endswith("by bo")
    seen = ws.reveals("labels")
    assert list(seen["who"]) == ["ana", "bo"] and list(seen["version"]) == [1, 1]
    view = select_split(labels, "holdout", reveal=second)
    assert view.n_queries == 96 and "viewed 2 times" in view.note
    with pytest.raises(HoldoutSealed):  # a reveal of the file split does not unseal a hash split
        select_split(labels, "holdout", SplitRule(0.3), reveal=second)
    other = read_labels({"x": ["d"]})
    with pytest.raises(HoldoutSealed):
        select_split(other, "holdout", reveal=second)


def test_scoring_labels_without_a_split_field_changes_nothing() -> None:
    """Labels without a split: the whole set, the same numbers and output as evaluate_runs."""
    labels = read_labels(labels_frame([("a", "d1", 1), ("b", "d2", 1), ("c", "d3", 1)]))
    scope = scoring_labels(labels)
    assert scope.split is None and scope.labels is labels and scope.sealed == 0
    assert scope.label == "" and scope.headline == "" and not scope.warnings
    runs = [run_of("r", {"a": ["d1"], "b": ["x", "d2"], "c": ["x"], "z": ["d9"]})]
    plain, scoped = evaluate_runs(runs, labels, [1, 2]), scope.evaluate(runs, [1, 2])
    pd.testing.assert_frame_equal(plain.summary, scoped.summary)
    assert [w.to_dict() for w in plain.all_warnings] == [w.to_dict() for w in scoped.all_warnings]
    from evalcore.report.render import evaluation_json, evaluation_table

    assert evaluation_table(plain) == evaluation_table(scoped)
    assert evaluation_json(plain) == evaluation_json(scoped)
    with pytest.raises(UsageError, match="no 'split' field"):  # asking for a side of labels without one
        scoring_labels(labels, split="tune")


def test_scoring_labels_with_a_split_field_gives_the_tune_queries_and_seals_the_holdout(tmp_path) -> None:
    labels = read_labels(SAMPLE / "labels.tsv")
    scope = scoring_labels(labels)
    assert scope.split == "tune" and scope.n_queries == 224 and scope.sealed == 96 and scope.n_holdout == 96
    assert set(scope.labels.field("split")) == {"tune"} and scope.labels.name == "labels:tune"
    assert scope.full_fingerprint == labels.fingerprint == "109ae50aeaba"
    assert scope.label == "tune (exploratory)"
    assert scope.headline == "tune split (exploratory) · 96 holdout queries sealed"
    for split in ("holdout", "all"):
        with pytest.raises(HoldoutSealed, match="sealed"):
            scoring_labels(labels, split=split)
    runs = [SAMPLE / "base.trec"]
    tuned = scope.evaluate(runs, [1, 5])
    assert tuned.split is scope and tuned.results[0].n_queries == 224
    whole = evaluate_runs(runs, labels, [1, 5]).results[0].per_query().set_index("query")
    assert tuned.results[0]["recall@5"] == pytest.approx(whole.loc[list(scope.labels.queries), "recall@5"].mean())
    from evalcore.analyses.curves import warnings_at

    codes = {w.code for w in tuned.all_warnings} | {w.code for w in tuned.at([1, 3]).all_warnings}
    codes |= {w.code for w in warnings_at(tuned, (1, 3))}  # what the dashboard lists at a k
    assert "holdout_mixed_in" not in codes and "query_not_in_labels" not in codes  # holdout queries are labeled

    ws = Workspace(tmp_path / "ws")
    reveal = ws._record_reveal(labels, rule="file", runs=[("base", "acme-embed-base-v2")], who="ana")
    held = scoring_labels(labels, reveal=reveal, split="holdout")
    assert held.split == "holdout" and held.n_queries == 96 and held.labels.name == "labels:holdout"
    assert held.label.startswith("holdout (revealed ") and held.label.endswith("viewed once)")
    assert held.sealed == 0 and held.to_dict()["reveal"]["who"] == "ana"
    whole_view = scoring_labels(labels, reveal=reveal, split="all")
    assert whole_view.labels is labels and whole_view.n_queries == 320 and whole_view.split == "all"
    assert whole_view.label.startswith("all queries (holdout revealed ")
    everything = whole_view.evaluate(runs, [1])
    assert everything.results[0].n_queries == 320
    assert "holdout_mixed_in" not in {w.code for w in everything.all_warnings}  # revealed on purpose, and named
    again = ws._record_reveal(labels, rule="file", runs=[], who="bo")
    assert again.views == 2 and ws.reveal_summary("labels").startswith("holdout of labels viewed 2 times, last on ")
    assert ws.reveal_summary("labels").endswith("by bo")
    with pytest.raises(HoldoutSealed):  # a reveal of the file split does not unseal a hash split
        scoring_labels(labels, SplitRule(0.5), reveal=reveal, split="all")


def test_a_hash_split_is_asked_for_and_works_on_labels_without_a_split_field() -> None:
    many = read_labels({f"q{i}": [f"d{i}"] for i in range(400)})
    scope = scoring_labels(many, SplitRule(0.25))
    expected = [q for q, side in zip(many.queries, hash_split(many.queries, 0.25)) if side == "tune"]
    assert list(scope.labels.queries) == expected and scope.sealed == 400 - len(expected)
    assert scope.labels.name == "labels:tune@hash0.25" and scope.rule.key == "hash:0.25"
    assert 60 < scope.n_queries < 140
    assert scoring_labels(many, SplitRule(0.25)).labels.fingerprint == scope.labels.fingerprint  # deterministic


def test_labels_with_only_holdout_queries_say_how_to_reveal() -> None:
    labels = read_labels(labels_frame([("a", "d1", 1), ("b", "d2", 1)], split={"a": "holdout", "b": "holdout"}))
    with pytest.raises(UsageError, match="2 holdout queries are sealed"):
        scoring_labels(labels)


def test_reveals_can_never_be_changed_or_erased(tmp_path) -> None:
    ws = Workspace(tmp_path / "ws")
    ws._record_reveal(read_labels(SAMPLE / "labels.tsv"), rule="file", runs=[], who="ana")
    with pytest.raises(FrozenError):
        ws.write(lambda conn: conn.execute("UPDATE holdout_reveals SET who = 'nobody'"))
    with pytest.raises(FrozenError):
        ws.write(lambda conn: conn.execute("DELETE FROM holdout_reveals"))
    assert len(ws.reveals()) == 1


def test_a_version_1_workspace_gets_the_integrity_tables_on_open(tmp_path) -> None:
    ws = Workspace(tmp_path / "ws")
    ws._save_labels(read_labels({"a": ["d1"]}), name="old")
    ws.close()
    conn = sqlite3.connect(tmp_path / "ws" / "workspace.sqlite")
    for table in ("holdout_reveals", "rejudge_queue", "judging_rounds", "events", "manifest_files", "manifests",
                  "panel_marks"):  # what version 1 did not have
        conn.execute(f"DROP TABLE {table}")
    conn.execute("PRAGMA user_version = 1")
    conn.commit()
    conn.close()
    reopened = Workspace(tmp_path / "ws")
    assert reopened.label_version("old").version == 1
    assert reopened.rejudge_queue().empty and reopened.reveals().empty
    reopened._flag_for_rejudging("old", "a", reason="check")
    assert list(reopened.rejudge_queue()["query"]) == ["a"]


def test_evaluate_split_scores_one_side_and_does_not_call_the_other_side_unlabeled() -> None:
    runs = [SAMPLE / "base.trec"]
    whole = evaluate_runs(runs, SAMPLE / "labels.tsv", [1])
    evaluation, view = evaluate_split(runs, SAMPLE / "labels.tsv", "tune", k=[1])
    assert evaluation.results[0].n_queries == 224
    tune_queries = set(view.labels.queries)
    per_query = whole.results[0].per_query().set_index("query")
    expected = per_query.loc[sorted(tune_queries), "recall@1"].mean()
    assert evaluation.results[0]["recall@1"] == pytest.approx(expected)
    assert not [w for w in evaluation.all_warnings if w.code == "query_not_in_labels"]


# ----------------------------------------------------------------------------- judged coverage and bounds


def _slow_bounds(labels: dict, ranking: list, k: int) -> dict:
    """Obvious per-query bounds: unjudged docs in the top k counted as relevant."""
    top = ranking[:k]
    relevant = {d for d, g in labels.items() if g >= 1}
    unjudged = [d for d in top if d not in labels]
    found = sum(d in relevant for d in top) + len(unjudged)
    return {"recall": found / (len(relevant) + len(unjudged)), "hit": float(found > 0), "precision": found / k}


def test_bounds_count_unjudged_top_k_docs_as_relevant_and_low_is_the_reported_number() -> None:
    qrels = {"q1": {"a": 1, "b": 0, "z": 1}, "q2": {"c": 1}, "q3": {"e": 1, "f": 0}}
    rankings = {"q1": ["a", "x", "b", "y"], "q2": ["u", "v", "c"], "q3": ["f", "e", "g", "h"]}
    ev = evaluate_runs([run_of("r", rankings)], qrels, [1, 2, 3])
    bounds = coverage_bounds(ev).set_index("metric")
    for k in (1, 2, 3):
        slow = [_slow_bounds(qrels[q], rankings[q], k) for q in qrels]
        for name in ("recall", "hit", "precision"):
            row = bounds.loc[f"{name}@{k}"]
            assert row["high"] == pytest.approx(np.mean([s[name] for s in slow]))
            assert row["low"] == pytest.approx(ev.results[0][f"{name}@{k}"]) == pytest.approx(row["mean"])
        assert bounds.loc[f"recall@{k}", "judged"] == pytest.approx(ev.results[0][f"judged@{k}"])
    # nDCG at k = 2 for q2 (u, v unjudged): as relevant, DCG = 1 + 1/log2(3), ideal of 3 relevant docs the same.
    assert bounds.loc["ndcg@2", "high"] >= bounds.loc["ndcg@2", "low"]
    assert set(bounds.columns) >= {"k", "n", "model", "labels", "fingerprint"}


def test_a_fully_judged_run_has_no_gap_and_is_not_flagged() -> None:
    qrels = {"q1": {"a": 1, "b": 0, "c": 0}, "q2": {"d": 1, "e": 0, "f": 0}}
    rankings = {"q1": ["b", "a", "c"], "q2": ["d", "e", "f"]}
    ev = evaluate_runs([run_of("r", rankings)], qrels, [1, 3])
    bounds = coverage_bounds(ev)
    assert (bounds["low"] == bounds["high"]).all()
    assert not bounds["flagged"].any() and covered_depth(ev.results[0]) == 3
    assert coverage_warnings(bounds) == []


def test_quoting_k_deeper_than_the_judgments_is_flagged_with_bounds() -> None:
    qrels = {f"q{i}": {"a": 1, "b": 0} for i in range(5)}
    rankings = {f"q{i}": ["a", "b", "x", "y", "z"] for i in range(5)}
    ev = evaluate_runs([run_of("r", rankings)], qrels, [2, 5])
    bounds = coverage_bounds(ev)
    assert covered_depth(ev.results[0]) == 2
    assert set(bounds.loc[bounds["flagged"], "k"]) == {5}
    [warning] = coverage_warnings(bounds)
    assert warning.code == "judged_depth_exceeded" and "k = 5" in warning.message and "n = 5" in warning.message
    p5 = bounds.set_index("metric").loc["precision@5"]
    assert (p5["low"], p5["high"]) == (pytest.approx(0.2), pytest.approx(0.8))


# ----------------------------------------------------------------------------- blind labels and pooling


def test_blind_share_and_blind_only_metrics_on_the_sample() -> None:
    ev = evaluate_runs([SAMPLE / "base.trec"], SAMPLE / "labels.tsv", [1])
    share = blind_share(ev).iloc[0]
    raw = pd.read_csv(SAMPLE / "labels.tsv", sep="\t", dtype=str).drop_duplicates("query")
    assert share["n_blind"] == int((raw["blind"] == "true").sum()) == 270
    assert share["blind_share"] == pytest.approx(270 / 320)
    only = blind_metrics(ev).set_index("metric")
    per_query = ev.results[0].per_query().set_index("query")
    blind_queries = raw.loc[raw["blind"] == "true", "query"]
    assert only.loc["recall@1", "n"] == 270
    assert only.loc["recall@1", "mean"] == pytest.approx(per_query.loc[blind_queries, "recall@1"].mean())


def test_non_blind_labels_dominating_are_warned() -> None:
    frame = labels_frame([(q, "d", 1) for q in "abcd"], blind={"a": "true", "b": "false", "c": "false", "d": "false"})
    ev = evaluate_runs([run_of("r", {q: ["d"] for q in "abcd"})], frame, [1])
    codes = {w.code: w for w in blindness_warnings(ev)}
    assert codes["non_blind_dominant"].count == 3
    without = evaluate_runs([run_of("r", {"a": ["d"]})], {"a": ["d"]}, [1])
    assert "blind_unknown" in {w.code for w in blindness_warnings(without)}


def test_labels_pooled_from_one_run_are_warned_about_that_run() -> None:
    # Every judged non-relevant doc sits in run A's top 3 and in no other run's.
    queries = [f"q{i}" for i in range(12)]
    qrels = {q: {"rel": 1, f"{q}-a1": 0, f"{q}-a2": 0} for q in queries}
    run_a = run_of("A", {q: [f"{q}-a1", f"{q}-a2", "rel"] for q in queries})
    run_b = run_of("B", {q: ["rel", f"{q}-b1", f"{q}-b2"] for q in queries})
    ev = evaluate_runs([run_a, run_b], qrels, [3])
    pools = pooling(ev, 3).set_index("run")
    assert pools.loc["A", "exclusive_nonrelevant"] == 24 and pools.loc["B", "exclusive_nonrelevant"] == 0
    [warning] = [w for w in blindness_warnings(ev, depth=3) if w.code == "pooled_from_one_run"]
    assert warning.message.startswith("run A:") and warning.count == 24
    balanced = evaluate_runs([run_a, run_of("C", {q: [f"{q}-a2", f"{q}-a1", "rel"] for q in queries})], qrels, [3])
    assert not [w for w in blindness_warnings(balanced, depth=3) if w.code == "pooled_from_one_run"]


# ----------------------------------------------------------------------------- label suspects


def test_queries_every_run_misses_while_agreeing_on_another_doc_are_suspects() -> None:
    qrels = {"q1": {"gold": 1}, "q2": {"gold": 1}, "q3": {"gold": 1, "odd": 0}}
    run_a = run_of("A", {"q1": ["same", "x1", "gold"], "q2": ["gold", "same"], "q3": ["odd", "y", "z"]})
    run_b = run_of("B", {"q1": ["x2", "same", "gold"], "q2": ["same", "gold"], "q3": ["odd", "w", "z"]})
    ev = evaluate_runs([run_a, run_b], qrels, [1, 2])
    found = label_suspects(ev, 2, agree_depth=2)
    assert list(found["query"]) == ["q3", "q1"]  # q2 is found by run A; q3's agreed doc ranks higher on average
    q1 = found.set_index("query").loc["q1"]
    assert q1["doc_id"] == "same" and q1["doc_label"] == "unjudged" and q1["ranks"] == "A 1, B 2"
    assert found.set_index("query").loc["q3", "doc_label"] == "judged non-relevant (grade 0)"
    assert set(found.columns) >= {"k", "n", "models", "labels", "fingerprint"}
    with pytest.raises(UsageError, match="two runs"):
        label_suspects(evaluate_runs([run_a], qrels, [2]), 2)


# ----------------------------------------------------------------------------- blind judging


def test_the_judging_pool_is_every_runs_top_d_deduplicated_shuffled_and_stable() -> None:
    labels = read_labels(SAMPLE / "labels.tsv")
    runs = [read_run(SAMPLE / "base.trec"), read_run(SAMPLE / "tuned.trec")]
    pool = judging_pool(runs, labels, "q006", 5, seed=0)
    expected = set(runs[0].ranking("q006")[:5]) | set(runs[1].ranking("q006")[:5])
    assert set(pool.docs) == expected and len(pool.docs) == len(expected)
    assert pool == judging_pool(runs, labels, "q006", 5, seed=0)
    orders = {judging_pool(runs, labels, "q006", 5, seed=s).docs for s in range(6)}
    assert len(orders) > 1  # the order comes from the seed, not from any ranking
    frame = pool.to_frame()
    assert not {"rank", "score", "run"} & set(frame.columns)
    assert pool.query_text == "changed outlook"
    deeper = judging_pool(runs, labels, "q006", 10)
    assert set(pool.docs) < set(deeper.docs)


def test_marks_become_a_new_blind_version_and_older_versions_stay(tmp_path) -> None:
    ws = Workspace(tmp_path / "ws")
    labels = read_labels(SAMPLE / "labels.tsv")
    first = ws._save_labels(labels, name="labels")
    ws._flag_for_rejudging("labels", "q002", reason="check the label", who="ana")
    runs = [read_run(SAMPLE / "base.trec"), read_run(SAMPLE / "tuned.trec")]
    pool = judging_pool(runs, labels, "q002", 3)
    relevant = pool.docs[0]
    with pytest.raises(UsageError, match="no mark"):
        marks_to_labels(pool, {relevant: "yes"})
    marks = {d: ("yes" if d == relevant else "no") for d in pool.docs}
    version = ws._save_blind_judgments("labels", marks_to_labels(pool, marks), query="q002", depth=3, who="bo")
    assert version.version == 2 and version.parent_version == 1
    new = ws.load_labels("labels", 2)
    judged = new.judgments[new.judgments["query"] == "q002"].set_index("doc_id")["grade"]
    for doc in pool.docs:
        assert judged[doc] == (1.0 if doc == relevant else 0.0)
    assert bool(new.field("blind")["q002"]) is True
    old = ws.load_labels("labels", 1)
    assert old.fingerprint == first.fingerprint == labels.fingerprint
    assert bool(old.field("blind")["q002"]) is False
    rounds = ws.judging_rounds("labels")
    assert rounds[["version", "query", "depth", "n_docs", "judge"]].values.tolist() == [[2, "q002", 3, len(pool.docs), "bo"]]
    assert ws.rejudge_queue("labels").empty
    assert ws.rejudge_queue("labels", open_only=False)["resolved_version"].tolist() == [2]


def test_flagging_queues_once_and_never_edits_labels(tmp_path) -> None:
    ws = Workspace(tmp_path / "ws")
    ws._save_labels(read_labels(SAMPLE / "labels.tsv"), name="labels")
    before = ws.label_versions("labels")
    a = ws._flag_for_rejudging("labels", "q006", reason="every run misses")
    b = ws._flag_for_rejudging("labels", "q006", reason="again")
    assert a == b and len(ws.rejudge_queue("labels")) == 1
    pd.testing.assert_frame_equal(ws.label_versions("labels"), before)


def test_audit_runs_gathers_everything_with_context() -> None:
    runs = [SAMPLE / "base.trec", SAMPLE / "tuned.trec", SAMPLE / "tuned-256d.trec"]
    found = audit_runs(runs, SAMPLE / "labels.tsv", "1,5")
    assert found.evaluation.ks == (1, 5) and found.pooling["depth"].tolist() == [10, 10, 10]
    codes = {w.code for w in found.warnings}
    assert {"pooled_from_one_run", "judged_depth_exceeded", "check_the_label"} <= codes
    pooled = next(w for w in found.warnings if w.code == "pooled_from_one_run")
    assert pooled.message.startswith("run base:")  # the sample's non-blind labels were judged from base's top 10
    assert "q006" in set(found.suspects["query"])
    data = found.to_dict()
    assert {row["metric"] for row in data["coverage"]} == {f"{m}@{k}" for m in ("recall", "hit", "precision", "ndcg")
                                                          for k in (1, 5)}


def test_whole_set_numbers_over_a_tune_holdout_split_carry_a_warning() -> None:
    """Scoring tune and holdout queries together is flagged; one side alone is not."""
    from evalcore.metrics.split import evaluate_split

    whole = evaluate_runs([SAMPLE / "base.trec"], SAMPLE / "labels.tsv", [1])
    [mixed] = [w for w in whole.all_warnings if w.code == "holdout_mixed_in"]
    assert mixed.count == 96 and "224 tune and 96 holdout" in mixed.message
    tune, _ = evaluate_split([SAMPLE / "base.trec"], SAMPLE / "labels.tsv", "tune", k=[1])
    assert not [w for w in tune.all_warnings if w.code == "holdout_mixed_in"]


def test_a_sampled_querys_source_and_stratum_travel_from_the_pool_file_into_its_labels() -> None:
    from evalcore.analyses.judging import JudgingPool, read_marks

    pool = JudgingPool("log-1", "refnd late", ("d1", "d2"), 2, 0, 1, "labels", "abc", "customer log", "tail")
    frame = pool.to_frame().assign(relevant=["yes", "no"])
    back, marks = read_marks(frame, "pool.csv")
    assert (back.source, back.stratum) == ("customer log", "tail")
    info = marks_to_labels(back, marks).query_info
    assert info.loc["log-1", "source"] == "customer log" and info.loc["log-1", "stratum"] == "tail"
    plain = marks_to_labels(JudgingPool("q1", None, ("d1",), 1, 0, 1, "labels", "abc"), {"d1": "no"}).query_info
    assert "source" not in plain.columns  # a query of the team's own set gains no source it did not have
