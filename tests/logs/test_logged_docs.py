"""The docs a log gave each sampled query travel with the sample: its latest results and the docs clicked, from
UBI (query_response_object_ids, click events joined by query_id), OpenInference spans (retrieval.documents, in
every layout) and plain tables (result_ids, clicked_ids), against a plain-Python reference of the rule
(evalcore.logs.logged_docs); bounded per query; no personal data and no query text in them."""

from __future__ import annotations

import json
from collections import Counter, defaultdict

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from evalcore.logs.id_lists import MAX_IDS
from evalcore.logs.logged_docs import RECENT_SEARCHES, kept_ids
from evalcore.logs.normalise import normalise
from evalcore.logs.queries_out import write_queries
from evalcore.logs.sampling import sample_log

DOCS = ["d1", "d2", "d3", "d4", "-d5"]


def logged(path, **options) -> dict:
    """Each sampled query's (logged_doc_ids, clicked_doc_ids), by its text, every query sampled."""
    found = sample_log(str(path), n=10_000, threshold=options.pop("threshold", 1.0), **options).to_dict()
    return {r["query"]: (r["logged_doc_ids"], r["clicked_doc_ids"]) for r in found["sample"]}


def reference(searches: list[dict]) -> dict:
    """The rule, written the obvious way: results of the latest search that lists them (time, then place in the
    file), first occurrences, first MAX_IDS; the clicks of the RECENT_SEARCHES latest searches, most clicked first,
    ties by id."""
    by_query = defaultdict(list)
    for place, s in enumerate(searches):
        by_query[normalise(s["query"])].append(((-1e300 if s["t"] is None else s["t"], place), s))
    out = {}
    for query, found in by_query.items():
        listed = [(key, s["results"]) for key, s in found if s["results"] is not None]
        latest = list(dict.fromkeys(max(listed)[1]))[:MAX_IDS] if listed else []
        recent = sorted(found, key=lambda item: item[0], reverse=True)[:RECENT_SEARCHES]
        clicks = Counter(d for _, s in recent for d in s["clicks"])
        out[query] = (latest, sorted(clicks, key=lambda d: (-clicks[d], d))[:MAX_IDS])
    return out


search = st.fixed_dictionaries({
    "query": st.sampled_from(["reset password", "Reset  PASSWORD", "refund", "pricing", "PRICING"]),
    "t": st.one_of(st.none(), st.integers(1_740_000_000, 1_740_000_004)),
    "results": st.one_of(st.none(), st.lists(st.sampled_from(DOCS), max_size=4)),
    "clicks": st.lists(st.sampled_from(DOCS), max_size=3),
})


def write_table(path, searches: list[dict]) -> None:
    """A plain table as JSON lines: result_ids when the search lists them, clicked_ids."""
    with open(path, "w", encoding="utf-8") as out:
        for s in searches:
            row = {"query": s["query"], "clicked_ids": s["clicks"]}
            if s["t"] is not None:
                row["timestamp"] = s["t"]
            if s["results"] is not None:
                row["result_ids"] = s["results"]
            out.write(json.dumps(row) + "\n")


def write_ubi(path, searches: list[dict]) -> None:
    """UBI as one file of JSON lines: each search's ubi_queries document, then its click events (and an impression,
    which is no click); a search without listed results has no query_response_object_ids."""
    with open(path, "w", encoding="utf-8") as out:
        for i, s in enumerate(searches):
            doc = {"query_id": f"q{i}", "user_query": s["query"], "client_id": "c"}
            if s["t"] is not None:
                doc["timestamp"] = s["t"]
            if s["results"] is not None:
                doc["query_response_object_ids"] = s["results"]
            out.write(json.dumps(doc) + "\n")
            for d in s["clicks"]:
                out.write(json.dumps({"action_name": "click", "query_id": f"q{i}",
                                      "event_attributes": {"object": {"object_id": d}}}) + "\n")
            out.write(json.dumps({"action_name": "impression", "query_id": f"q{i}",
                                  "event_attributes": {"object": {"object_id": "d-seen"}}}) + "\n")


@pytest.mark.parametrize("writer", [write_table, write_ubi], ids=["table", "ubi"])
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(searches=st.lists(search, min_size=1, max_size=20))
def test_logged_and_clicked_docs_equal_a_plain_python_reference(tmp_path, writer, searches: list[dict]) -> None:
    path = tmp_path / "log.jsonl"
    writer(path, searches)
    assert logged(path) == {q: (r, c) for q, (r, c) in reference(searches).items()}


def test_ubi_with_events_in_every_layout(tmp_path) -> None:
    """The same searches and clicks as JSON lines, a bulk file and an index dump: the same docs."""
    queries = [{"query_id": "a1", "user_query": "Reset password", "query_response_object_ids": ["doc-7", "doc-2"],
                "client_id": "c1", "timestamp": "2025-03-01T10:00:00Z"},
               {"query_id": "a2", "user_query": "reset password", "query_response_object_ids": "doc-3,doc-7",
                "client_id": "c2", "timestamp": "2025-03-01T10:05:00Z"},
               {"query_id": "a3", "user_query": "refund", "query_response_object_ids": [], "client_id": "c1",
                "timestamp": "2025-03-01T10:06:00Z"}]
    events = [{"action_name": "click", "query_id": "a1", "event_attributes": {"object": {"object_id": "doc-2"}}},
              {"action_name": "CLICK_THROUGH", "query_id": "a2", "event_attributes": {"object": {"object_id": 42}}},
              {"action_name": "click", "query_id": "a1", "event_attributes": {"object": {"object_id": "doc-2"}}},
              {"action_name": "add_to_cart", "query_id": "a2", "event_attributes": {"object": {"object_id": "x"}}}]
    expected = {"reset password": (["doc-3", "doc-7"], ["doc-2", "42"]), "refund": ([], [])}
    lines = [json.dumps(d) for d in queries + events]
    (tmp_path / "ubi.ndjson").write_text("\n".join(lines) + "\n", encoding="utf-8")
    bulk = [f'{{"index": {{"_index": "{"ubi_events" if "action_name" in d else "ubi_queries"}"}}}}\n{json.dumps(d)}'
            for d in queries + events]
    (tmp_path / "ubi_bulk.ndjson").write_text("\n".join(bulk) + "\n", encoding="utf-8")
    dump = [f"{'ubi_events' if 'action_name' in d else 'ubi_queries'}\t{json.dumps({'_source': d})}"
            for d in queries + events]
    (tmp_path / "ubi_dump.txt").write_text("\n".join(dump) + "\n", encoding="utf-8")
    for name in ("ubi.ndjson", "ubi_bulk.ndjson", "ubi_dump.txt"):
        assert logged(tmp_path / name) == expected, name


def test_openinference_spans_in_every_layout(tmp_path) -> None:
    """Phoenix's list of documents, nested attributes, dotted keys, flattened columns (CSV, Parquet) and OTLP: the
    ids in the order listed (by their number when numbered), non-retriever spans left out."""
    phoenix = [{"name": "retrieve", "span_kind": "RETRIEVER", "context.span_id": "s1",
                "start_time": "2025-03-01T10:00:00Z", "attributes.input.value": "export data",
                "attributes.retrieval.documents": [{"document.id": "doc-3", "document.score": 0.9},
                                                   {"document.id": "doc-1", "document.score": 0.5}]},
               {"name": "llm", "span_kind": "LLM", "context.span_id": "s2", "attributes.input.value": "export data",
                "attributes.retrieval.documents": [{"document.id": "not-a-result"}]}]
    (tmp_path / "phoenix.jsonl").write_text("\n".join(map(json.dumps, phoenix)) + "\n", encoding="utf-8")
    nested = [{"name": "retrieve", "context": {"span_id": "s1"}, "attributes": {
        "openinference": {"span": {"kind": "RETRIEVER"}}, "input": {"value": "export data"},
        "retrieval": {"documents": [{"document": {"id": "doc-3"}}, {"document": {"id": "doc-1"}}]}}},
              {"name": "retrieve", "context": {"span_id": "s2"}, "attributes": {
                  "openinference.span.kind": "RETRIEVER", "input.value": "close account",
                  **{f"retrieval.documents.{i}.document.id": f"doc-{i}" for i in (10, 2, 0, 1)}}}]
    (tmp_path / "nested.jsonl").write_text("\n".join(map(json.dumps, nested)) + "\n", encoding="utf-8")
    flat = pd.DataFrame({"name": ["retrieve"], "span_kind": ["RETRIEVER"], "context.span_id": ["s1"],
                         "attributes.input.value": ["export data"],
                         "attributes.retrieval.documents.1.document.id": ["doc-1"],
                         "attributes.retrieval.documents.0.document.id": ["doc-3"]})
    flat.to_csv(tmp_path / "flat.csv", index=False)
    pq.write_table(pa.Table.from_pandas(flat), tmp_path / "flat.parquet")
    listed = pa.table({"name": ["retrieve"], "span_kind": ["RETRIEVER"], "context.span_id": ["s1"],
                       "attributes.input.value": ["export data"],
                       "attributes.retrieval.documents": [[{"document.id": "doc-3", "document.score": 0.9},
                                                           {"document.id": "doc-1", "document.score": 0.5}]]})
    pq.write_table(listed, tmp_path / "listed.parquet")
    attributes = [{"key": "openinference.span.kind", "value": {"stringValue": "RETRIEVER"}},
                  {"key": "input.value", "value": {"stringValue": "export data"}},
                  {"key": "retrieval.documents.1.document.id", "value": {"stringValue": "doc-1"}},
                  {"key": "retrieval.documents.0.document.id", "value": {"stringValue": "doc-3"}}]
    otlp = {"resourceSpans": [{"scopeSpans": [{"spans": [{"spanId": "s1", "name": "retrieve",
                                                          "attributes": attributes}]}]}]}
    (tmp_path / "otlp.jsonl").write_text(json.dumps(otlp) + "\n", encoding="utf-8")
    for name in ("phoenix.jsonl", "flat.csv", "flat.parquet", "listed.parquet", "otlp.jsonl"):
        assert logged(tmp_path / name) == {"export data": (["doc-3", "doc-1"], [])}, name
    assert logged(tmp_path / "nested.jsonl") == {"export data": (["doc-3", "doc-1"], []),
                                                 "close account": (["doc-0", "doc-1", "doc-2", "doc-10"], [])}


def test_a_plain_table_as_csv_and_parquet(tmp_path) -> None:
    csv = tmp_path / "log.csv"
    csv.write_text("query,timestamp,result_ids,clicked_ids\n"
                   "Pricing,2025-03-01T10:00:00Z,doc-1 doc-2,doc-2\n"
                   "pricing,2025-03-01T09:00:00Z,doc-9,doc-9\n"
                   "refund,2025-03-01T10:00:00Z,[],\n"
                   "newsletter,,,\n", encoding="utf-8")
    expected = {"pricing": (["doc-1", "doc-2"], ["doc-2", "doc-9"]), "refund": ([], []), "newsletter": ([], [])}
    assert logged(csv) == expected
    table = pa.table({"query": ["Pricing", "pricing", "refund", "newsletter"],
                      "timestamp": ["2025-03-01T10:00:00Z", "2025-03-01T09:00:00Z", "2025-03-01T10:00:00Z", None],
                      "result_ids": [["doc-1", "doc-2"], ["doc-9"], [], None],
                      "clicked_ids": [["doc-2"], ["doc-9"], [], None]})
    pq.write_table(table, tmp_path / "log.parquet")
    assert logged(tmp_path / "log.parquet") == expected


def test_near_duplicates_bring_their_results_and_clicks(tmp_path) -> None:
    """A group of near-duplicates is one sampled query: the latest results of any member, every member's clicks."""
    log = tmp_path / "log.csv"
    log.write_text("query,timestamp,result_ids,clicked_ids\n"
                   + "reset password,2025-03-01T10:00:00Z,doc-1,doc-1\n" * 3
                   + "reset pasword,2025-03-01T11:00:00Z,doc-2 doc-3,doc-3\n", encoding="utf-8")
    assert logged(log, threshold=0.8) == {"reset password": (["doc-2", "doc-3"], ["doc-1", "doc-3"])}


def test_each_query_is_bounded_however_often_it_was_logged(tmp_path) -> None:
    """A search listing 150 results keeps its first MAX_IDS; clicks come from the RECENT_SEARCHES latest searches
    only: a head query logged 150 times costs what a query logged 100 times does."""
    rows = ["query,timestamp,result_ids,clicked_ids"]
    for i in range(150):
        results = " ".join(f"r{j}" for j in range(150)) if i == 149 else "r0"
        rows.append(f"head query,{1_740_000_000 + i},{results},c{i}")
    (tmp_path / "log.csv").write_text("\n".join(rows) + "\n", encoding="utf-8")
    results, clicks = logged(tmp_path / "log.csv")["head query"]
    assert results == [f"r{j}" for j in range(MAX_IDS)]
    assert sorted(clicks) == sorted(f"c{i}" for i in range(150 - RECENT_SEARCHES, 150))


def test_no_query_text_or_personal_data_travels_with_the_docs(tmp_path) -> None:
    """Ids come from the result and click fields only; an id with white space or ';', an email, or far too long is
    left out and counted; an id of digits alone is kept (it is an id, not a phone number)."""
    log = tmp_path / "log.jsonl"
    rows = [{"query": "orders of jane.doe@example.com", "result_ids": ["doc-1", "jane.doe@example.com", "a b",
                                                                     "x;y", "5551234567", "z" * 300],
             "clicked_ids": ["bob@example.org", "doc-1"]},
            {"query": "call +44 20 7946 0958", "result_ids": ["doc-2"]}]
    log.write_text("\n".join(map(json.dumps, rows)) + "\n", encoding="utf-8")
    found = sample_log(str(log), n=10)
    data = found.to_dict()
    assert data["logged_docs"] == {"with_results": 2, "with_clicks": 1, "left_out": 5}
    assert any(w["code"] == "doc_ids_left_out" and w["count"] == 5 for w in data["warnings"])
    by_query = {r["query"]: (r["logged_doc_ids"], r["clicked_doc_ids"]) for r in data["sample"]}
    assert by_query == {"orders of <email>": (["doc-1", "5551234567"], ["doc-1"]), "call <phone>": (["doc-2"], [])}
    out = tmp_path / "queries.csv"
    write_queries(found.sample, str(out))
    written = out.read_text(encoding="utf-8") + json.dumps(data)
    for secret in ("jane.doe", "bob@", "7946", "a b", "x;y"):
        assert secret not in written


def test_kept_ids_is_columnar_and_exact() -> None:
    ids = ["doc-1", "a\tb", "4111111111111111", "4111-1111-1111-1111", "ip-10.0.0.1", "ok:/path_1.2", "x" * 257]
    assert kept_ids(pa.array(ids)).tolist() == [True, False, True, False, False, True, False]


def test_a_log_without_results_or_clicks_says_so(tmp_path) -> None:
    log = tmp_path / "log.csv"
    log.write_text("query\nreset password\nrefund\n", encoding="utf-8")
    data = sample_log(str(log), n=5).to_dict()
    assert data["logged_docs"] == {"with_results": 0, "with_clicks": 0, "left_out": 0}
    assert all(r["logged"] == r["clicked"] == 0 and r["logged_doc_ids"] == [] for r in data["sample"])
