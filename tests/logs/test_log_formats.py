"""Every log format of tests/fixtures/logs read to the same counts: UBI (JSON lines, bulk, index dump),
OpenInference spans (Phoenix JSON lines, nested attributes, OTLP, CSV, Parquet) and plain tables (CSV, TSV, JSON
lines, Parquet), each told apart by its content."""

from __future__ import annotations

import gzip
import shutil
from pathlib import Path

import pytest

from evalcore.errors import InputError, UsageError
from evalcore.logs.detect import detect, log_file
from evalcore.logs.scan import count_queries

LOGS = Path(__file__).resolve().parents[1] / "fixtures" / "logs"

# file: kind, layout, logged queries, {normalised query: (count, results known, results empty)}, other rows
EXPECTED = {
    "ubi_queries.ndjson": ("ubi", "jsonl", 5, {"reset password": (2, 2, 0), "refund for order": (1, 1, 1),
                                               "refund policy": (1, 1, 0), "my email is <email>": (1, 1, 1)},
                           {"event": 2}),
    "ubi_bulk.ndjson": ("ubi", "bulk", 3, {"reset password": (1, 1, 0), "refund for order": (1, 1, 1),
                                           "refund policy": (1, 1, 0)}, {"event": 1, "action": 5}),
    "ubi_dump.txt": ("ubi", "dump", 3, {"reset password": (1, 1, 0), "call me on <phone>": (1, 1, 1),
                                        "refund policy": (1, 1, 0)}, {"event": 1}),
    "spans_phoenix.jsonl": ("openinference", "jsonl", 3, {"how do i export my data?": (1, 1, 0),
                                                          "export data csv": (1, 1, 1),
                                                          "how do i export my data": (1, 1, 0)}, {"span": 1}),
    "spans_nested.jsonl": ("openinference", "jsonl", 2, {"delete my account": (1, 1, 0),
                                                         "close account": (1, 1, 0)}, {"span": 1}),
    "spans_otlp.jsonl": ("openinference", "otlp", 2, {"pricing for teams": (2, 2, 1)}, {"span": 1}),
    "spans.csv": ("openinference", "csv", 2, {"reset 2fa": (1, 1, 0), "reset two factor": (1, 1, 1)}, {"span": 1}),
    "spans.parquet": ("openinference", "parquet", 2, {"invoice history": (1, 1, 0), "invoices": (1, 1, 1)}, {}),
    "queries.csv": ("table", "csv", 5, {"reset password": (2, 2, 0), "refund, partial": (1, 1, 1),
                                        "refund policy": (1, 1, 0), "card <card> declined": (1, 1, 1)}, {}),
    "queries.tsv": ("table", "tsv", 2, {'"exact phrase" search': (1, 0, 0), "newsletter": (1, 0, 0)}, {}),
    "queries.jsonl": ("table", "jsonl", 3, {"pricing": (2, 1, 0), "pricing plans": (1, 1, 1)}, {}),
    "queries.parquet": ("table", "parquet", 3, {"a b": (2, 2, 1), "c": (1, 1, 1)}, {}),
}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_each_format_is_detected_and_counted(name: str) -> None:
    kind, layout, queries, per_query, other = EXPECTED[name]
    shape = detect(log_file(str(LOGS / name)))
    assert (shape.kind, shape.layout) == (kind, layout)
    counts = count_queries(shape)
    assert counts.queries == queries
    found = {q: (c, k, e) for q, c, k, e in zip(*(counts.table[col].to_pylist()
                                                   for col in ("query", "count", "known", "empty")))}
    assert found == per_query
    for key, value in other.items():
        assert counts.rows.get(key) == value, key


def test_every_fixture_is_small() -> None:
    assert all(path.stat().st_size < 8192 for path in LOGS.iterdir())


def test_sessions_and_reformulations_are_read_where_the_log_has_them() -> None:
    counts = count_queries(detect(log_file(str(LOGS / "ubi_queries.ndjson"))))
    by_query = dict(zip(counts.table["query"].to_pylist(), counts.table["reformulated"].to_pylist()))
    # client c1: "Reset password" 10:00:00, "refund for order" 10:00:30, "refund policy" 10:00:50
    assert by_query == {"reset password": 1, "refund for order": 1, "refund policy": 0, "my email is <email>": 0}
    assert counts.sessions and counts.results
    tsv = count_queries(detect(log_file(str(LOGS / "queries.tsv"))))
    assert not tsv.sessions and not tsv.results  # a session without times cannot tell a minute


def test_gzip_is_read_without_its_ending(tmp_path) -> None:
    packed = tmp_path / "spans.log"
    with open(LOGS / "spans_phoenix.jsonl", "rb") as plain, gzip.open(packed, "wb") as out:
        shutil.copyfileobj(plain, out)
    counts = count_queries(detect(log_file(str(packed))))
    assert counts.queries == 3 and counts.shape.log.gzip


def test_the_log_format_option_names_the_kind(tmp_path) -> None:
    odd = tmp_path / "log.csv"
    odd.write_text("when,who\n2025-01-01,a\n", encoding="utf-8")
    with pytest.raises(InputError, match="log.csv, line 1: expected a query log"):
        detect(log_file(str(odd)))
    with pytest.raises(UsageError, match="--log-format must be one of"):
        detect(log_file(str(LOGS / "queries.csv")), "xml")
    assert detect(log_file(str(LOGS / "queries.csv")), "plain").kind == "table"
