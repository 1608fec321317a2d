"""Query texts normalised, so that what a person would call the same query is counted as one.

``normalise(text)`` is ``" ".join(unicodedata.normalize("NFKC", text).casefold().split())``: compatibility forms
folded (full-width letters, ligatures, superscripts), case folded (``Straße`` and ``STRASSE`` meet), white space of
any kind collapsed to one space and trimmed. `normalise_texts` gives exactly that for an Arrow array of millions of
texts: the ASCII ones (most of a log) in a few vectorised passes, only the others one by one in Python, so the
cost per text stays small.
"""

from __future__ import annotations

import unicodedata

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

_ASCII_SPACE = "[\\t\\n\\x0b\\x0c\\r\\x1c-\\x1f ]+"
"""The ASCII characters `str.split` splits on (``str.isspace``: the C0 separators 0x1c-0x1f too), for RE2."""


def normalise(text: str) -> str:
    """NFKC, case-folded, white space collapsed: the one definition of "the same query"."""
    return " ".join(unicodedata.normalize("NFKC", text).casefold().split())


def normalise_texts(texts: pa.Array) -> pa.Array:
    """`normalise` of every text (nulls stay null), as a large string array."""
    texts = pc.cast(texts, pa.large_string()) if texts.type != pa.large_string() else texts
    ascii_rows = pc.fill_null(pc.string_is_ascii(texts), True)
    fast = pc.utf8_trim(pc.replace_substring_regex(pc.ascii_lower(texts), _ASCII_SPACE, " "), " ")
    if pc.all(ascii_rows).as_py():
        return fast
    rows = np.flatnonzero(~ascii_rows.to_numpy(zero_copy_only=False))
    values = fast.to_numpy(zero_copy_only=False).astype(object)
    for row, text in zip(rows, texts.take(pa.array(rows)).to_pylist()):
        values[row] = normalise(text)
    return pa.array(values, pa.large_string())
