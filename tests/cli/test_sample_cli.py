"""``evalcore sample``: its JSON keys and counts, the same seed giving the same sample, labels left out, the
planner's size, both allocations, and the queries file the judging commands and the Data page read."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from cli_runner import run_cli

from evalcore.analyses.segments import is_team_written
from evalcore.logs.sampling import query_id
from evalcore.readers.queries import read_queries

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
    csv = run_cli("sample", "--log", LOGS / "spans_phoenix.jsonl", "--n", "5", "--format", "csv")
    assert csv.stdout.splitlines()[0] == "query,count,stratum,query_id,source,variants"


def test_bad_options_are_one_line(tmp_path) -> None:
    done = run_cli("sample", "--log", LOGS / "queries.csv", "--n", "0")
    assert done.returncode == 2 and "'n' parameter" in done.stderr
    done = run_cli("sample", "--log", LOGS / "queries.csv", "--target-diff", "3")
    assert done.returncode == 2 and "target_diff" in done.stderr
