"""Queries files: the text of each query id, for labels that name their queries by id alone (BEIR, MS MARCO).

`read_queries` reads one (formats in `evalcore.readers.query_parsers`) into a `QueryTexts` mapping;
`with_query_text` puts its texts into a label set's per-query fields, so every page and report shows what the
customer typed instead of an id. A query whose text the labels already give must have the same text in the
queries file (surrounding white space aside): anything else is an error naming both files.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, replace

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from ..errors import InputError
from ..warning_log import EvalWarning, agree, plural
from .arrow_tables import ArrowTable, id_column, text_column
from .formats import file_stem, parse_file
from .ids import IdArray, first_repeat
from .json_files import content_lines
from .labels import LabelSet
from .query_parsers import ID_ALIASES, TEXT_ALIASES
from .sources import Source, SourceLike, repair_warnings


@dataclass(eq=False)
class QueryTexts(Mapping):
    """Query id -> text, in the file's order; ``lines[i]`` is where query ``i`` is in the file (line, or row for
    Parquet and JSON: ``where``), so a later disagreement can name it."""

    name: str
    texts: pd.Series
    source: str | None = None
    lines: np.ndarray | None = None
    where: str = "line"
    warnings: tuple[EvalWarning, ...] = field(default=())

    def __getitem__(self, query: str) -> str:
        return self.texts[query]

    def __iter__(self) -> Iterator[str]:
        return iter(self.texts.index)

    def __len__(self) -> int:
        return len(self.texts)

    def place(self, query: str) -> int | None:
        """The line (or row) of ``query`` in the file, None when unknown."""
        if self.lines is None:
            return None
        return int(self.lines[self.texts.index.get_loc(query)])

    def __repr__(self) -> str:
        return f"QueryTexts(name={self.name!r}, queries={len(self)})"


def read_queries(source: QueryTexts | SourceLike | Mapping, *, format: str | None = None,
                 name: str | None = None) -> QueryTexts:
    """Read a queries file: BEIR's ``queries.jsonl`` (``_id``, ``text``), a TSV / CSV / Parquet table with
    ``query_id`` and ``query_text`` (or the labels' query id names; a TSV of two columns without a header reads as
    id and text), a JSON object ``{id: text}``; gzip too. A Python mapping ``{id: text}`` is taken as it is.

    Every query needs an id and a text and appears once; anything else is an InputError naming the file, the line
    and the text there."""
    if isinstance(source, QueryTexts):
        return source
    if isinstance(source, Mapping):
        src = Source(name or "<dict>", b"")
        found = ArrowTable(pa.table({"query_id": pa.array([str(k) for k in source], pa.string()),
                                     "query_text": pa.array([None if v is None else str(v) for v in source.values()],
                                                            pa.string())}), src, where="row", header_lines=0)
    else:
        src, found = parse_file(source, "queries", format,
                                "a queries file in CSV, TSV, JSON, JSONL or Parquet with query ids and their text")
    texts = _from_table(found, name or file_stem(src.name))
    repairs = repair_warnings(src)
    return replace(texts, warnings=repairs + texts.warnings) if repairs else texts


def _from_table(found: ArrowTable, name: str) -> QueryTexts:
    id_col = found.column(ID_ALIASES, "query id")
    text_col = next((c for c in (found.column((alias,), "query text", required=False) for alias in TEXT_ALIASES)
                     if c is not None and c != id_col), None)
    if text_col is None:
        raise InputError(f"a query text column named one of {', '.join(TEXT_ALIASES)} beside the query id column "
                         f"{id_col!r}", source=found.source.name, line=1 if found.where == "line" else None,
                         text=",".join(found.header or found.table.column_names))
    ids = id_column(found, id_col, "a query id")
    texts = text_column(found, text_col)
    empty = pc.or_kleene(pc.is_null(texts), pc.equal(pc.utf8_trim_whitespace(pc.fill_null(texts, "")), ""))
    if pc.any(empty).as_py():
        raise found.error(pc.index(empty, True).as_py(), f"a query text in column {text_col!r}")
    again = first_repeat(IdArray(ids))
    if again is not None:
        first, row = again
        raise found.error(row, f"each query once (it is also on {found.where} {found.line_of(first)})")
    values = pd.Series(texts.to_numpy(zero_copy_only=False), index=pd.Index(ids.to_numpy(zero_copy_only=False),
                                                                            dtype=object, name="query"), dtype=object)
    return QueryTexts(name, values, found.source.name, _lines(found, len(values)), found.where)


def _lines(found: ArrowTable, n: int) -> np.ndarray | None:
    """The line of each query (the row, for Parquet and JSON): the file's lines that hold something, after the
    header, when there is one per query (None when a quoted cell runs over several lines: a message then names the
    query alone)."""
    if found.where == "row":
        return np.arange(1, n + 1)
    numbers = content_lines(found.source.data)[found.header_lines:]
    return numbers if len(numbers) == n else None


def with_query_text(labels: LabelSet, queries: QueryTexts | SourceLike | Mapping, *,
                    format: str | None = None) -> LabelSet:
    """``labels`` with each labeled query's text from ``queries`` (a `QueryTexts` or anything `read_queries`
    takes) where the labels give none; the labels themselves are not changed.

    A query whose text in the labels differs from the queries file's (white space at either end aside) is an
    InputError naming both files. Queries of the file the labels lack are ignored, and labeled queries the file
    has no text for keep none: each is counted in a warning. The fingerprint is the labels' own (query text is
    not a judgment)."""
    texts = read_queries(queries, format=format)
    labeled = pd.Index(labels.queries, dtype=object)
    given = texts.texts.reindex(labeled)
    info = labels.query_info.reindex(labeled)
    own = info["query_text"] if "query_text" in info.columns else pd.Series(None, index=labeled, dtype=object)
    both = own.notna().to_numpy() & given.notna().to_numpy()
    differs = both & (own.astype(str).str.strip().to_numpy() != given.astype(str).str.strip().to_numpy())
    if differs.any():
        query = labeled[int(np.flatnonzero(differs)[0])]
        place = texts.place(query)
        raise InputError(f"the text {labels.source or labels.name} gives query {query!r}: {own[query]!r}",
                         source=texts.source or texts.name, line=place, where=texts.where, text=given[query])
    filled = own.where(own.notna(), given)
    info = info.assign(query_text=filled.astype(object).where(filled.notna(), None))
    info.index.name = "query"
    warnings = list(labels.warnings) + list(texts.warnings)
    extra = int((~texts.texts.index.isin(labeled)).sum())
    if extra:
        warnings.append(EvalWarning("queries_not_in_labels", f"{texts.source or texts.name}: "
                                    f"{plural(extra, 'query', 'queries')} without labels in {labels.name} ignored",
                                    extra))
    missing = int(filled.isna().sum())
    if missing:
        warnings.append(EvalWarning("query_text_missing", f"{labels.name}: {plural(missing, 'labeled query', 'labeled queries')} "
                                    f"{agree(missing, 'has', 'have')} no text in {texts.source or texts.name} or the "
                                    "labels (shown by id)", missing))
    return replace(labels, query_info=info, warnings=tuple(warnings))
