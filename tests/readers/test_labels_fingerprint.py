"""The label fingerprint's fast implementation hashes exactly the text the plain definition gives (with evidence spans
too)."""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st

from evalcore.readers.labels import read_labels


def plain_fingerprint_text(judgments: pd.DataFrame) -> str:
    """The definition, written with pandas: sort by (query, doc), one length-prefixed line each."""
    frame = judgments.sort_values(["query", "doc_id"], kind="stable")
    query, doc = frame["query"].astype(str), frame["doc_id"].astype(str)
    lines = (query.str.len().astype(str) + ":" + query + doc.str.len().astype(str) + ":" + doc + "="
             + frame["grade"].astype(np.float64).astype(str))
    return "\n".join(lines.tolist())


def plain_fingerprint(judgments: pd.DataFrame) -> str:
    return hashlib.sha256(plain_fingerprint_text(judgments).encode("utf-8")).hexdigest()[:12]


ids = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=6)
grades = st.one_of(st.integers(-2, 4), st.floats(-1e6, 1e25, allow_nan=False, allow_infinity=False))


@given(st.dictionaries(ids, st.dictionaries(ids, grades, min_size=1, max_size=5), min_size=1, max_size=6))
@settings(max_examples=80, deadline=None)
def test_fast_fingerprint_equals_the_definition(labels) -> None:
    label_set = read_labels(labels)
    assert label_set.fingerprint == plain_fingerprint(label_set.judgments)


def test_the_sample_labels_keep_their_fingerprint() -> None:
    sample = Path(__file__).resolve().parents[2] / "sample_data" / "labels.tsv"
    assert read_labels(sample).fingerprint == "109ae50aeaba"


def plain_span_text(spans: pd.DataFrame) -> str:
    """The spans' part of the definition: one line per distinct span, sorted, ``<len>:<query><len>:<doc>@<s>-<e>``."""
    rows = sorted({(q, d, int(s), int(e)) for q, d, s, e in spans.itertuples(index=False)})
    return "\n".join(f"{len(q)}:{q}{len(d)}:{d}@{s}-{e}" for q, d, s, e in rows)


table_ids = st.text(alphabet="ab9é\u4e2d:=@-", min_size=1, max_size=6)  # a table's ids: no blank ones
spans_of = st.lists(st.tuples(st.integers(0, 50), st.integers(1, 50)).map(lambda p: [p[0], p[0] + p[1]]),
                    min_size=1, max_size=3)  # a span holds at least one character


@given(st.dictionaries(table_ids, st.dictionaries(table_ids, st.tuples(st.integers(0, 2), spans_of), min_size=1,
                                                 max_size=4),
                       min_size=1, max_size=5))
@settings(max_examples=80, deadline=None)
def test_fast_fingerprint_with_spans_equals_the_definition(labels) -> None:
    rows = [(q, d, grade, s, e) for q, judged in labels.items() for d, (grade, spans) in judged.items()
            for s, e in spans]
    label_set = read_labels(pd.DataFrame(rows, columns=["query", "doc_id", "grade", "start", "end"]))
    text = plain_fingerprint_text(label_set.judgments) + "\n" + plain_span_text(label_set.spans)
    assert label_set.fingerprint == hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]
