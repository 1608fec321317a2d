"""The label fingerprint's fast implementation hashes exactly the text the plain definition gives."""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st

from evalcore.readers.labels import read_labels


def plain_fingerprint(judgments: pd.DataFrame) -> str:
    """The definition, written with pandas: sort by (query, doc), one length-prefixed line each."""
    frame = judgments.sort_values(["query", "doc_id"], kind="stable")
    query, doc = frame["query"].astype(str), frame["doc_id"].astype(str)
    lines = (query.str.len().astype(str) + ":" + query + doc.str.len().astype(str) + ":" + doc + "="
             + frame["grade"].astype(np.float64).astype(str))
    return hashlib.sha256("\n".join(lines.tolist()).encode("utf-8")).hexdigest()[:12]


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
