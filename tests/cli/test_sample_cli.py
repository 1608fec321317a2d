"""``evalcore sample``: its JSON keys and counts, the same seed giving the same sample, labels left out, the
planner's size, both allocations, and the queries file the judging commands and the Data page read."""

from __future__ import annotations

import csv
import hashlib
import json
from pathlib import Path

import pytest
from cli_runner import run_cli

from evalcore.analyses.panel import read_sampled_queries
from evalcore.analyses.segments import is_team_written
from evalcore.logs.sampling import query_id
from evalcore.readers.queries import read_queries
from evalcore.readers.runs import read_run
from evalcore.store.workspace import Workspace

LOGS = Path(__file__).resolve().parents[1] / "fixtures" / "logs"


def rare(i: int) -> str:
    """Ten letters from a hash: no two tail queries are near-duplicates, and no digits look like a phone number."""
    return hashlib.md5(str(i).encode()).hexdigest()[:10].translate(str.maketrans("0123456789", "ghijklmnop"))


RARE_151 = f"rare question {rare(151)}"


def big_log(tmp_path: Path) -> Path:
    """300 searches: a head of 3 queries, a torso, a tail of 150 typed once, zero-result ones, sessions."""
    rows = ["query,session,timestamp,result_ids"]
    clock = 1_740_000_000
    for i in range(300):
        if i < 90:
            text = ("reset password", "pricing", "export data")[i % 3]
        elif i < 150:
            text = f"invoice question {i % 20}"
        else:
            text = f"rare question {rare(i)}"
        results = "" if i % 17 == 0 else "d1 d2"
        clock += 30 if i % 5 else 600
        rows.append(f"{text},s{i // 5},{clock},{results}")
    path = tmp_path / "log.csv"
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return path


def sample_json(*args) -> dict:
    done = run_cli("sample", *args, "--format", "json")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_the_json_has_the_keys_and_counts_of_the_issue(tmp_path) -> None:
    found = sample_json("--log", big_log(tmp_path), "--n", "40")
    assert {"read", "queries", "distinct", "clusters", "pii", "strata", "sample"} <= set(found)
    assert {"queries", "action"} <= set(found["pii"])
    assert found["queries"] == 300 and found["distinct"] == 3 + 20 + 150
    for stratum in found["strata"]:
        assert {"name", "queries", "distinct", "sampled"} <= set(stratum)
    names = [s["name"] for s in found["strata"]]
    assert names == ["head", "torso", "tail", "zero-result", "reformulated"] and any("zero" in n for n in names)
    assert sum(s["queries"] for s in found["strata"]) == 300
    assert sum(s["distinct"] for s in found["strata"]) == found["distinct"]
    assert sum(s["sampled"] for s in found["strata"]) == len(found["sample"]) == 40
    for row in found["sample"]:
        assert {"query", "count", "stratum"} <= set(row) and row["query_id"] == query_id(row["query"])
    head = next(r for r in found["sample"] if r["query"] == "reset password") if any(
        r["query"] == "reset password" for r in found["sample"]) else None
    assert head is None or head["count"] == 30


def test_the_same_seed_gives_the_same_sample_and_another_seed_another(tmp_path) -> None:
    log = big_log(tmp_path)
    first = sample_json("--log", log, "--n", "25", "--seed", "7")["sample"]
    assert sample_json("--log", log, "--n", "25", "--seed", "7")["sample"] == first
    assert sample_json("--log", log, "--n", "25", "--seed", "8")["sample"] != first


def test_queries_the_labels_hold_are_left_out(tmp_path) -> None:
    log = big_log(tmp_path)
    everything = sample_json("--log", log, "--n", "1000")
    labels = tmp_path / "labels.tsv"
    labels.write_text("query\tdoc_id\tgrade\tquery_text\n"
                      "q1\td1\t1\tRESET  password\n"
                      f"{query_id('pricing')}\td2\t1\t\n"
                      f"{RARE_151}\td3\t1\t\n", encoding="utf-8")
    found = sample_json("--log", log, "--n", "1000", "--labels", labels)
    left = {r["query"] for r in everything["sample"]} - {r["query"] for r in found["sample"]}
    assert left == {"reset password", "pricing", RARE_151}
    assert sum(s["labeled"] for s in found["strata"]) == 3


def test_without_n_the_planner_sets_the_size_less_the_labeled(tmp_path) -> None:
    found = sample_json("--log", big_log(tmp_path))
    assert found["plan"]["needed"] == 387 and found["plan"]["n"] == 387  # 5 points, sigma 0.35, power 0.8
    assert len(found["sample"]) == found["clusters"]  # the log holds fewer: every group of near-duplicates once
    labels = tmp_path / "labels.tsv"
    labels.write_text("query\tdoc_id\n" + "".join(f"t{i}\td\n" for i in range(100)), encoding="utf-8")
    assert sample_json("--log", big_log(tmp_path), "--labels", labels)["plan"]["n"] == 287
    assert sample_json("--log", big_log(tmp_path), "--target-diff", "0.1")["plan"]["needed"] == 99


@pytest.mark.parametrize("allocation", ["proportional", "equal"])
def test_allocation(tmp_path, allocation: str) -> None:
    found = sample_json("--log", big_log(tmp_path), "--n", "20", "--allocate", allocation)
    given = {s["name"]: s["sampled"] for s in found["strata"]}
    assert sum(given.values()) == 20
    if allocation == "equal":
        assert given["head"] == min(4, next(s["distinct"] for s in found["strata"] if s["name"] == "head"))
    else:
        volume = {s["name"]: s["queries"] for s in found["strata"]}
        tail_share = volume["tail"] / 300
        assert abs(given["tail"] - 20 * tail_share) <= 1


@pytest.mark.parametrize("ending", [".jsonl", ".csv", ".tsv", ".parquet"])
def test_the_queries_file_reads_back_with_source_and_stratum(tmp_path, ending: str) -> None:
    out = tmp_path / f"queries{ending}"
    done = run_cli("sample", "--log", LOGS / "queries.tsv", "--n", "5", "--output", out)
    assert done.returncode == 0, done.stderr
    assert f"wrote {out}" in done.stderr
    texts = read_queries(str(out))
    assert set(texts.texts.values) == {'"exact phrase" search', "newsletter"}
    assert set(texts) == {query_id('"exact phrase" search'), query_id("newsletter")}
    if ending != ".parquet":
        raw = out.read_text(encoding="utf-8")
        assert "customer log" in raw and "stratum" in raw
    assert not is_team_written("customer log")  # the Sources page counts them as customers' queries


def test_table_and_csv_outputs(tmp_path) -> None:
    done = run_cli("sample", "--log", LOGS / "spans_phoenix.jsonl", "--n", "5")
    assert done.returncode == 0
    assert done.stdout.startswith("Read ") and "OpenInference retriever spans" in done.stdout
    assert "zero-result" in done.stdout and "how do i export my data" in done.stdout
    table = run_cli("sample", "--log", LOGS / "spans_phoenix.jsonl", "--n", "5", "--format", "csv")
    assert table.stdout.splitlines()[0] == "query,count,stratum,query_id,source,variants,logged,clicked"


def test_bad_options_are_one_line(tmp_path) -> None:
    done = run_cli("sample", "--log", LOGS / "queries.csv", "--n", "0")
    assert done.returncode == 2 and "'n' parameter" in done.stderr
    done = run_cli("sample", "--log", LOGS / "queries.csv", "--target-diff", "3")
    assert done.returncode == 2 and "target_diff" in done.stderr


UBI_SEARCHES = [  # (query_id, text, results, minute, clicked docs)
    ("a1", "Reset password", ["doc-7", "doc-2"], 0, ["doc-2"]),
    ("a2", "reset password", ["doc-3", "doc-7"], 5, ["doc-9"]),
    ("a3", "refund", [], 6, []),
    ("a4", "pricing plans", ["doc-5"], 7, []),
    ("a5", "contact jane.doe@example.com", ["doc-1"], 8, []),
]
LOGGED = {"reset password": (["doc-3", "doc-7"], ["doc-2", "doc-9"]), "refund": ([], []),
          "pricing plans": (["doc-5"], []), "contact <email>": (["doc-1"], [])}
"""What the log gave each query: the latest search's results; the clicks of every search (ties by id)."""


def ubi_log(tmp_path: Path) -> Path:
    """UBI queries and their click events (and an impression, no click) in one file of JSON lines."""
    lines = []
    for qid, text, results, minute, clicks in UBI_SEARCHES:
        lines.append(json.dumps({"query_id": qid, "user_query": text, "query_response_object_ids": results,
                                 "client_id": qid, "timestamp": f"2025-03-01T10:{minute:02d}:00Z"}))
        lines += [json.dumps({"action_name": "click", "query_id": qid, "event_attributes": {"object": {
            "object_id": doc}}}) for doc in clicks]
        lines.append(json.dumps({"action_name": "impression", "query_id": qid,
                                 "event_attributes": {"object": {"object_id": "doc-seen"}}}))
    path = tmp_path / "ubi.ndjson"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.mark.parametrize("ending", [".csv", ".jsonl", ".parquet"])
def test_the_queries_file_and_the_production_run_carry_what_the_log_gave(tmp_path, ending: str) -> None:
    out, run = tmp_path / f"sample{ending}", tmp_path / "production.trec"
    done = run_cli("sample", "--log", ubi_log(tmp_path), "--n", "10", "--output", out, "--production-run", run,
                   "--format", "json")
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout)
    assert found["logged_docs"] == {"with_results": 3, "with_clicks": 1, "left_out": 0}
    assert {r["query"]: (r["logged_doc_ids"], r["clicked_doc_ids"]) for r in found["sample"]} == LOGGED
    assert {r["query"]: (r["logged"], r["clicked"]) for r in found["sample"]} == {
        q: (len(r), len(c)) for q, (r, c) in LOGGED.items()}
    sampled = read_sampled_queries(str(out))
    for query, (results, clicks) in LOGGED.items():
        assert sampled.info(query_id(query))["extra"] == tuple(results + clicks)
    lines = run.read_text(encoding="utf-8").splitlines()
    expected = [f"{query_id(q)} Q0 {d} {rank} {101 - rank} production" for q, (results, _) in LOGGED.items()
                for rank, d in enumerate(results, start=1)]
    assert sorted(lines) == sorted(expected) and len(lines) == 4
    read = read_run(str(run))
    assert read.ranking(query_id("reset password"))[:2] == ["doc-3", "doc-7"]
    assert f"wrote {run}: the results the log gave 3 sampled queries as a TREC run named production" in done.stderr
    assert "jane.doe" not in run.read_text(encoding="utf-8") + (out.read_bytes().decode("utf-8", "replace"))


def test_a_log_without_results_writes_no_production_run(tmp_path) -> None:
    run = tmp_path / "production.trec"
    done = run_cli("sample", "--log", LOGS / "queries.tsv", "--n", "5", "--production-run", run)
    assert done.returncode == 0, done.stderr
    assert not run.exists()
    assert f"no production run written to {run}: the log lists no results for the sampled queries" in done.stderr
    assert "Logged docs: the log lists no results and no clicks for the sampled queries" in done.stdout


def test_sampled_judged_frozen_then_the_production_run_scored_against_it(tmp_path) -> None:
    """The whole way: sample a log, pool each query (a team run's top doc, the logged results, the clicks), judge
    it blind into a label-set version, and score the production run against that version, as a plain-Python
    recall of the same files says."""
    ws = {"EVALCORE_WORKSPACE": str(tmp_path / "ws")}
    (tmp_path / "labels.csv").write_text("query,doc_id,grade,query_text\nt1,doc-1,1,team words\n", encoding="utf-8")
    ids = [query_id(q) for q in LOGGED]
    (tmp_path / "team.trec").write_text("".join(f"{q} Q0 doc-1 1 1 team\n" for q in ["t1", *ids]), encoding="utf-8")
    assert run_cli("evaluate", "--labels", tmp_path / "labels.csv", "--run", tmp_path / "team.trec", "--save",
                   env=ws).returncode == 0
    sampled, run = tmp_path / "sample.csv", tmp_path / "production.trec"
    assert run_cli("sample", "--log", ubi_log(tmp_path), "--n", "10", "--output", sampled, "--production-run", run
                   ).returncode == 0
    relevant = {"reset password": {"doc-7", "doc-9"}, "refund": set(), "pricing plans": {"doc-5"},
                "contact <email>": {"doc-1"}}
    for query, (results, clicks) in LOGGED.items():
        pool = tmp_path / f"{query_id(query)}.csv"
        made = run_cli("judge", "pool", "--labels", tmp_path / "labels.csv", "--run", tmp_path / "team.trec",
                       "--queries", sampled, "--query", query_id(query), "--depth", "1", "--output", pool, env=ws)
        assert made.returncode == 0, made.stderr
        with pool.open(encoding="utf-8", newline="") as handle:
            rows = list(csv.DictReader(handle))
        assert {r["doc_id"] for r in rows} == {"doc-1", *results, *clicks}  # the run's top 1, logged, clicked
        assert {(r["source"], r["query_text"]) for r in rows} == {("customer log", query)}
        for row in rows:
            row["relevant"] = "yes" if row["doc_id"] in relevant[query] else "no"
        with pool.open("w", encoding="utf-8", newline="") as handle:
            writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
            writer.writeheader()
            writer.writerows(rows)
        saved = run_cli("judge", "save", "labels", pool, env=ws)
        assert saved.returncode == 0, saved.stderr
    frozen = Workspace(tmp_path / "ws").load_labels("labels")
    assert set(frozen.query_info.loc[ids, "source"]) == {"customer log"}
    qrels = tmp_path / "frozen.qrels"
    qrels.write_text("".join(f"{q} 0 {d} {int(g)}\n" for q, d, g in frozen.judgments[["query", "doc_id", "grade"]]
                             .itertuples(index=False)), encoding="utf-8")
    scored = run_cli("evaluate", "--labels", qrels, "--run", f"production={run}", "--k", "1,2", "--format", "json")
    assert scored.returncode == 0, scored.stderr
    metrics = json.loads(scored.stdout)["runs"][0]["metrics"]
    ranked = {}
    for line in run.read_text(encoding="utf-8").splitlines():
        q, _, d, rank, _, _ = line.split()
        ranked.setdefault(q, []).append((int(rank), d))
    wanted = {}
    for q, d, g in frozen.judgments[["query", "doc_id", "grade"]].itertuples(index=False):
        if g >= 1:
            wanted.setdefault(q, set()).add(d)
    for k in (1, 2):
        per_query = [len({d for r, d in ranked.get(q, []) if r <= k} & docs) / len(docs) for q, docs in wanted.items()]
        assert metrics[f"recall@{k}"]["mean"] == pytest.approx(sum(per_query) / len(per_query))
    assert (metrics["recall@1"]["mean"], metrics["recall@2"]["mean"]) == (pytest.approx(2 / 4), pytest.approx(2.5 / 4))
