"""Normalisation and the stratum counts of `evalcore sample` against a plain-Python reference, on logs Hypothesis
makes: every count the JSON reports is the one a few lines of obvious Python give."""

from __future__ import annotations

import json
import unicodedata
from collections import Counter, defaultdict

import pyarrow as pa
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from evalcore.logs.normalise import normalise, normalise_texts
from evalcore.logs.sampling import sample_log

WHITE = " \t\n\x0b\x0c\r\x1c\x1f\x85\xa0\u2003\u3000"
LETTERS = "aAbBßẞﬁÅåǅΣσςİı\u0301ＡＢ"


def reference_normal(text: str) -> str:
    return " ".join(unicodedata.normalize("NFKC", text).casefold().split())


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(st.text(), st.text(alphabet=LETTERS + WHITE + "xyz.?")), max_size=30))
def test_normalise_texts_is_the_python_definition(texts: list[str]) -> None:
    got = normalise_texts(pa.array(texts, pa.large_string())).to_pylist()
    assert got == [reference_normal(t) for t in texts] == [normalise(t) for t in texts]


row = st.fixed_dictionaries({
    "query": st.one_of(st.none(), st.text(alphabet=LETTERS + WHITE + "xyz", max_size=6)),
    "session": st.one_of(st.none(), st.sampled_from(["s1", "s2", "s3"])),
    "timestamp": st.one_of(st.none(), st.integers(1_700_000_000, 1_700_000_300)),
    "result_ids": st.one_of(st.just("absent"), st.just([]), st.just(["d1", "d2"])),
})


def reference(rows: list[dict]) -> dict:
    """What the JSON should say, computed the obvious way."""
    count, known, empty, timed, again = Counter(), Counter(), Counter(), Counter(), Counter()
    by_session = defaultdict(list)
    for r in rows:
        if r["query"] is None or not reference_normal(r["query"]):
            continue
        q = reference_normal(r["query"])
        count[q] += 1
        if r["result_ids"] != "absent":
            known[q] += 1
            empty[q] += not r["result_ids"]
        if r["session"] is not None and r["timestamp"] is not None:
            by_session[r["session"]].append((r["timestamp"], q))
    for searches in by_session.values():
        searches.sort()
        for (t, q), (t2, q2) in zip(searches, searches[1:] + [(None, None)]):
            timed[q] += 1
            again[q] += q2 is not None and q2 != q and t2 - t <= 60
    total = sum(count.values())
    results, sessions = sum(known.values()) > 0, sum(timed.values()) > 0
    stratum, before = {}, 0
    for q in sorted(count, key=lambda q: (-count[q], q)):
        stratum[q] = ("head", "torso", "tail")[min(2, 3 * before // total)]
        before += count[q]
        if sessions and timed[q] and again[q] >= timed[q] / 2:
            stratum[q] = "reformulated"
        if results and known[q] and empty[q] == known[q]:
            stratum[q] = "zero-result"
    names = ["head", "torso", "tail"] + ["zero-result"] * results + ["reformulated"] * sessions
    return {"queries": total, "distinct": len(count),
            "strata": {s: (sum(count[q] for q in count if stratum[q] == s),
                           sum(1 for q in count if stratum[q] == s)) for s in names}}


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(row, min_size=1, max_size=25))
def test_counts_and_strata_equal_a_plain_python_reference(tmp_path, rows: list[dict]) -> None:
    expected = reference(rows)
    path = tmp_path / "log.jsonl"
    with open(path, "w", encoding="utf-8") as out:
        for r in rows:
            line = {k: v for k, v in r.items() if v is not None and v != "absent"}
            out.write(json.dumps(line) + "\n")
    if not expected["distinct"]:
        return  # a log without a query text is an error, tested elsewhere
    found = sample_log(str(path), n=1, threshold=1.0).to_dict()
    assert found["queries"] == expected["queries"]
    assert found["distinct"] == found["clusters"] == expected["distinct"]
    assert {s["name"]: (s["queries"], s["distinct"]) for s in found["strata"]} == expected["strata"]
    assert len(found["sample"]) == 1
