"""Evidence spans in labels: where, inside a relevant document's text, the answer to the query is.

A labels table (or JSONL) may carry ``start`` and ``end`` on each row: character offsets of the document's text,
0-based, end exclusive. Several rows for one (query, doc) are one judgment with several spans, so their grades must
agree; the judgment counts once, and every span is kept (`LabelSet.spans`; overlapping spans are merged where the
evidence is measured, `evalcore.metrics.evidence`). A row without ``start`` and ``end`` is a judgment without a
span, as grade-0 rows usually are. With the documents, every span must end within its document's text
(`check_span_ends`), as every chunk of a chunk map must.
"""

from __future__ import annotations

from typing import Protocol

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from ..errors import InputError
from .json_files import content_lines

SPAN_COLUMNS = ("query", "doc_id", "start", "end")


class Rows(Protocol):
    """How a parser names the place of a row: `evalcore.readers.tables.Table` is one."""

    where: str

    def line_of(self, row: int) -> int: ...

    def error(self, row: int, expected: str, text: str | None = None) -> InputError: ...


def split_spans(judgments: pd.DataFrame, rows: Rows) -> tuple[pd.DataFrame, pd.DataFrame | None]:
    """``judgments`` (query, doc_id, grade, start, end; one row per file row, `NO_OFFSET` where a row gives no
    span) as one row per judgment for each (query, doc) with a span, the other rows as they are (without ``start``
    and ``end``), and the spans (None when no row has one). Rows of a judgment with spans whose grades differ are an
    error naming both places."""
    start = judgments["start"].to_numpy(np.int64)
    end = judgments["end"].to_numpy(np.int64)
    plain = judgments.drop(columns=["start", "end"])
    has = start >= 0
    if not has.any():
        return plain, None
    pair = plain.groupby(["query", "doc_id"], sort=False).ngroup().to_numpy()
    spanned = np.zeros(int(pair.max()) + 1, dtype=bool)
    spanned[pair[has]] = True
    _, first = np.unique(pair, return_index=True)  # the first row of each pair
    first_row = first[pair]
    grade = plain["grade"].to_numpy(np.float64)
    in_span_pair = spanned[pair]
    differs = in_span_pair & (grade != grade[first_row])
    if differs.any():
        row = int(np.flatnonzero(differs)[0])
        was = int(first_row[row])
        raise rows.error(row, f"the same grade on every row of one judgment with evidence spans (query "
                              f"{plain['query'].iat[row]!r}, doc {plain['doc_id'].iat[row]!r} has grade "
                              f"{grade[was]:g} at {rows.where} {rows.line_of(was)})")
    keep = ~in_span_pair | (np.arange(len(plain)) == first_row)
    spans = pd.DataFrame({"query": plain["query"].to_numpy()[has], "doc_id": plain["doc_id"].to_numpy()[has],
                          "start": start[has], "end": end[has]})
    return plain[keep].reset_index(drop=True), spans


def span_lines(spans: pd.DataFrame) -> bytes:
    """The text the label fingerprint hashes for the spans: one line per distinct span, sorted by (query, doc, start,
    end), ``<len>:<query><len>:<doc>@<start>-<end>`` (lengths in code points, as for the judgments' lines)."""
    distinct = spans.drop_duplicates(list(SPAN_COLUMNS))
    query = pa.array(distinct["query"].astype(str).to_numpy(dtype=object), pa.string())
    doc = pa.array(distinct["doc_id"].astype(str).to_numpy(dtype=object), pa.string())
    start = pa.array(distinct["start"].to_numpy(np.int64))
    end = pa.array(distinct["end"].to_numpy(np.int64))
    order = pc.sort_indices(pa.table({"q": query, "d": doc, "s": start, "e": end}),
                            sort_keys=[("q", "ascending"), ("d", "ascending"), ("s", "ascending"),
                                       ("e", "ascending")])
    query, doc, start, end = (column.take(order) for column in (query, doc, start, end))

    def length(values: pa.Array) -> pa.Array:
        return pc.cast(pc.utf8_length(values), pa.string())

    lines = pc.binary_join_element_wise(length(query), ":", query, length(doc), ":", doc, "@",
                                        pc.cast(start, pa.string()), "-", pc.cast(end, pa.string()), "")
    return "\n".join(lines.to_pylist()).encode("utf-8")


def file_lines(rows: Rows | None, picked: np.ndarray, n_rows: int) -> np.ndarray | None:
    """The line (the row, for Parquet and tables given in Python) of each of the file rows ``picked`` (0-based,
    of ``n_rows``), worked out at once: what a span carries to name its place after the file is gone. None when the
    lines cannot be told without reading the file again (a CSV whose quoted cells run over several lines)."""
    if rows is None:
        return None
    if rows.where == "row":
        return picked.astype(np.int64) + 1
    lines = getattr(rows, "lines", None)  # JSON lines: each row's line, kept by the parser
    if lines is not None:
        return np.asarray(lines, dtype=np.int64)[picked]
    source, header = getattr(rows, "source", None), getattr(rows, "header_lines", None)
    if source is None or header is None or getattr(rows, "skip_comments", False):
        return None
    numbers = content_lines(source.data)[header:]  # one line a row, unless a quoted cell holds a line break
    return numbers[picked] if len(numbers) == n_rows else None


def check_span_ends(spans: pd.DataFrame, lengths: pd.Series, lines: np.ndarray | None, where: str,
                    source: str) -> None:
    """An InputError for the first span (of ``spans``: query, doc_id, start, end) that ends past its document's
    text (``lengths``: the text length of each document, by doc id), naming ``source``, the span's line (``lines``,
    aligned with ``spans``; None: not known), the span and the document's length. Spans of documents ``lengths``
    lacks are not checked."""
    if not len(spans) or not len(lengths):
        return
    length = spans["doc_id"].map(lengths).to_numpy(dtype=np.float64, na_value=np.nan)
    with np.errstate(invalid="ignore"):
        past = np.flatnonzero(spans["end"].to_numpy(np.int64) > length)  # NaN: a document without text
    if not len(past):
        return
    i = int(past[0])
    query, doc, start, end = (spans[c].iat[i] for c in SPAN_COLUMNS)
    line = int(lines[i]) if lines is not None and len(lines) == len(spans) else None
    raise InputError(f"an end within its document's text ({int(length[i]):,} characters)", source=source, line=line,
                     where=where, text=f"query {query}, doc {doc}, start {start}, end {end}")
