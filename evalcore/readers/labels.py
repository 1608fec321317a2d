"""The labeled set: who judged which doc for which query, and how relevant it is.

A `LabelSet` keeps every judgment, including explicit non-relevant ones (a grade below the
threshold), because they tell how deep the judging went. Per-query fields (what the
customer typed, where the query came from, whether judging was blind, its split) live in a
separate per-query table.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from functools import cached_property
from typing import Mapping, Union

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from ..errors import InputError, invalid_parameter
from ..warning_log import EvalWarning, plural
from .documents import DocumentsLike, read_documents
from .formats import file_stem, parse_file
from .ids import first_long_id, long_id_error
from .label_parsers import ParsedLabels, from_mapping, from_table
from .sources import Source, SourceLike, repair_warnings
from .spans import check_span_ends, file_lines, span_lines, split_spans
from .tables import Table


@dataclass(eq=False)
class LabelSet:
    """Judgments (query, doc_id, grade), one row per pair, plus per-query fields.

    ``judgments`` has string columns ``query`` and ``doc_id`` and a float ``grade``;
    ``query_info`` is indexed by query id with whichever of ``query_text``, ``source``,
    ``blind``, ``split`` the file carried.
    """

    name: str
    judgments: pd.DataFrame
    query_info: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(index=pd.Index([], name="query")))
    warnings: tuple[EvalWarning, ...] = ()
    source: str | None = None
    spans: pd.DataFrame | None = None  # evidence: query, doc_id, start, end (`evalcore.readers.spans`)
    span_lines: np.ndarray | None = field(default=None, repr=False)
    """The line (``span_where``: the row, for Parquet) of each span in ``spans`` in the file it was read from, to
    name it later (`check_spans`); None when not known (labels built in Python, one side of a split)."""
    span_where: str = "line"

    @cached_property
    def queries(self) -> np.ndarray:
        """Query ids in the order they first appear in the file."""
        return pd.unique(self.judgments["query"].to_numpy())

    @cached_property
    def fingerprint(self) -> str:
        """A short hash of the normalised judgments (and evidence spans): same pairs, grades and spans -> same
        fingerprint.

        Row order, file format and per-query fields do not change it. The hashed text is one
        line per judgment, sorted by (query, doc id): ``<len>:<query><len>:<doc>=<grade>``
        (length-prefixed ids cannot run into each other; grades at full float precision). Labels with evidence
        spans add, after a newline, one line per distinct span (`evalcore.readers.spans.span_lines`); labels
        without spans hash the judgments alone, so their fingerprints are what they always were.
        """

        query = pa.array(self.judgments["query"].astype(str).to_numpy(dtype=object), pa.string())
        doc = pa.array(self.judgments["doc_id"].astype(str).to_numpy(dtype=object), pa.string())
        grade = np.ascontiguousarray(self.judgments["grade"].to_numpy(dtype=np.float64))
        # Each distinct grade (by bit pattern, so -0.0 stays "-0.0") printed once, as str(float) does.
        bits, which = np.unique(grade.view(np.uint64), return_inverse=True)
        grade_text = pa.array([str(g) for g in bits.view(np.float64).tolist()], pa.string())
        grade_text = grade_text.take(pa.array(which.reshape(-1)))
        # Arrow sorts UTF-8 bytewise, which is code-point order: the order Python sorts str in.
        order = pc.sort_indices(pa.table({"q": query, "d": doc}),
                                sort_keys=[("q", "ascending"), ("d", "ascending")])
        query, doc, grade_text = query.take(order), doc.take(order), grade_text.take(order)

        def length(values: pa.Array) -> pa.Array:  # code points, as Python's len()
            return pc.cast(pc.utf8_length(values), pa.string())

        lines = pc.binary_join_element_wise(length(query), ":", query, length(doc), ":", doc, "=", grade_text,
                                            "\n", "")
        offsets = np.frombuffer(lines.buffers()[1], dtype=np.int32, count=len(lines) + 1, offset=lines.offset * 4)
        text = memoryview(lines.buffers()[2])[int(offsets[0]):int(offsets[-1]) - 1]  # without the last "\n"
        digest = hashlib.sha256(text)
        if self.spans is not None and len(self.spans):
            digest.update(b"\n" + span_lines(self.spans))
        return digest.hexdigest()[:12]

    @property
    def n_queries(self) -> int:
        return len(self.queries)

    def relevant_counts(self, min_grade: float = 1) -> pd.Series:
        """Number of relevant docs per query (0 for queries judged only non-relevant)."""
        relevant = self.judgments["grade"] >= min_grade
        counts = relevant.groupby(self.judgments["query"], sort=False).sum()
        return counts.reindex(self.queries, fill_value=0).astype(np.int64)

    def field(self, name: str) -> pd.Series | None:
        """A per-query field (``source``, ``split``, ...) aligned to `queries`, or None if absent."""
        if name not in self.query_info.columns:
            return None
        return self.query_info[name].reindex(self.queries)

    def __repr__(self) -> str:
        return (f"LabelSet(name={self.name!r}, queries={self.n_queries}, "
                f"judgments={len(self.judgments)}, fingerprint={self.fingerprint!r})")


LabelsLike = Union[LabelSet, SourceLike, Mapping, pd.DataFrame]


def read_labels(source: LabelsLike, *, format: str | None = None, name: str | None = None,
                documents: DocumentsLike | None = None) -> LabelSet:
    """Read labels from a file path, bytes, an upload, a dict or a DataFrame.

    Dicts follow the JSON shapes of docs/formats.md: ``{query: [doc, ...]}`` (all grade 1; sets too) or
    ``{query: {doc: grade}}``. DataFrames use the tabular column names and aliases. With ``documents`` (a
    `Documents` or anything `read_documents` takes), every evidence span is checked against them (`check_spans`).
    """
    if documents is not None:
        return check_spans(read_labels(source, format=format, name=name), documents)
    if isinstance(source, LabelSet):
        return source
    if isinstance(source, Mapping):
        return _finish(name or "labels", from_mapping(source, "<dict>"), "<dict>")
    if isinstance(source, pd.DataFrame):
        table = Table(source.reset_index(drop=True), Source(name or "<DataFrame>", b""), 0, False, "row")
        return _finish(name or "labels", from_table(table), table.source.name)
    src, parsed = parse_file(source, "labels", format, "a labels file")
    result = _finish(name or file_stem(src.name), parsed, src.name)
    result.warnings = repair_warnings(src) + result.warnings
    result.source = src.name
    return result


def _finish(name: str, parsed: ParsedLabels, source: str) -> LabelSet:
    """One judgment per (query, doc) with its evidence spans (`evalcore.readers.spans`); other duplicate judgments
    dropped (keeping the highest grade, with a warning); the set built."""
    judgments, info = parsed.judgments, parsed.info
    warnings: list[EvalWarning] = list(parsed.conflicts)
    if judgments.empty:
        raise InputError("at least one judgment (query, doc, grade)", source=source or name)
    spans = lines = None
    if "start" in judgments.columns:
        given = np.flatnonzero(judgments["start"].to_numpy(np.int64) >= 0)
        lines = file_lines(parsed.rows, given, len(judgments))
        judgments, spans = split_spans(judgments, parsed.rows)
    for column, role in (("query", "a query id"), ("doc_id", "a doc id")):
        values = pa.array(judgments[column].to_numpy(dtype=object), pa.string(), from_pandas=True)
        row = first_long_id(values)  # the table readers name the line; this catches JSON and Python values
        if row is not None:
            raise long_id_error(values[row].as_py(), role, source or name, None)
    duplicated = judgments.duplicated(["query", "doc_id"], keep=False)
    if duplicated.any():
        dups = judgments[duplicated]
        n_pairs = int(dups.drop_duplicates(["query", "doc_id"]).shape[0])
        conflicting = int((dups.groupby(["query", "doc_id"])["grade"].nunique() > 1).sum())
        order = judgments.sort_values("grade", ascending=False, kind="stable")
        kept = order.drop_duplicates(["query", "doc_id"], keep="first").index.sort_values()
        judgments = judgments.loc[kept].reset_index(drop=True)
        detail = f"; {plural(conflicting, 'pair')} had different grades, the highest was kept" if conflicting else ""
        warnings.append(EvalWarning(
            "duplicate_judgment",
            f"{plural(n_pairs, '(query, doc) pair')} judged more than once; one judgment kept per pair{detail}",
            n_pairs,
        ))
    if info is None or info.empty:
        info = pd.DataFrame(index=pd.Index(pd.unique(judgments["query"].to_numpy()), name="query"))
    info.index = info.index.astype(str)
    info.index.name = "query"
    return LabelSet(name=name, judgments=judgments.reset_index(drop=True), query_info=info,
                    warnings=tuple(warnings), spans=spans, span_lines=lines if spans is not None else None,
                    span_where=getattr(parsed.rows, "where", "line"))


def check_spans(labels: LabelSet, documents: DocumentsLike) -> LabelSet:
    """``labels``, once every evidence span is found to end within its document's text in ``documents`` (a
    `Documents` or anything `read_documents` takes). A span past it is an InputError naming the labels file, the
    span's line (the row, for Parquet), the span and the document's length, as a chunk past its document's text is
    refused; spans of documents the file lacks (or of a file without text) are not checked."""
    docs = read_documents(documents)
    if labels.spans is None or not docs.has_text:
        return labels
    lengths = docs.frame["text"].fillna("").astype(str).str.len()
    check_span_ends(labels.spans, lengths, labels.span_lines, labels.span_where, labels.source or labels.name)
    return labels


def check_min_grade(min_grade: float) -> float:
    """The relevance threshold must be a finite number."""
    try:
        value = float(min_grade)
    except (TypeError, ValueError):
        raise invalid_parameter("min_grade", "a number", min_grade) from None
    if not np.isfinite(value):
        raise invalid_parameter("min_grade", "a finite number", min_grade)
    return value
