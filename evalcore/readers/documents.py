"""The optional documents file: chunk text and titles for drill-downs, token counts for k budgets."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Union

import numpy as np
import pandas as pd

from ..errors import InputError
from ..warning_log import EvalWarning, agree, plural
from .document_parsers import ID_ALIASES, TEXT_ALIASES, TITLE_ALIASES, TOKEN_ALIASES
from .formats import file_stem, parse_file
from .sources import Source, SourceLike, repair_warnings
from .id_columns import table_ids
from .tables import Table, find_column, first_empty, parse_numbers


@dataclass(eq=False)
class Documents:
    """Docs indexed by id, with ``text`` and/or ``tokens`` (a token count) columns, and an optional ``title``."""

    name: str
    frame: pd.DataFrame
    warnings: tuple[EvalWarning, ...] = ()
    source: str | None = None
    of_chunks: bool = False
    """The text of a chunk map's chunks (`evalcore.readers.chunks.chunk_texts`), not a documents file."""

    @property
    def has_text(self) -> bool:
        return "text" in self.frame.columns

    @property
    def has_title(self) -> bool:
        """Whether the file named its docs (a title column or field): a drill-down then shows titles."""
        return "title" in self.frame.columns

    @property
    def has_tokens(self) -> bool:
        return "tokens" in self.frame.columns

    def text(self, doc_id: str) -> str | None:
        if not self.has_text or doc_id not in self.frame.index:
            return None
        return self.frame.at[doc_id, "text"]

    def title(self, doc_id: str) -> str | None:
        if not self.has_title or doc_id not in self.frame.index:
            return None
        return self.frame.at[doc_id, "title"] or None

    def __len__(self) -> int:
        return len(self.frame)


DocumentsLike = Union[Documents, SourceLike, pd.DataFrame, Mapping]


def read_documents(source: DocumentsLike, *, format: str | None = None, name: str | None = None) -> Documents:
    """Read a CSV / TSV / JSONL / Parquet documents file with ``doc_id`` and ``text`` and/or ``tokens``, and
    optionally ``title`` (shown beside the doc id wherever a person reads a doc).

    A mapping ``{doc_id: text}`` is accepted from Python.
    """
    if isinstance(source, Documents):
        return source
    if isinstance(source, Mapping):
        frame = pd.DataFrame({"doc_id": [str(k) for k in source], "text": [str(v) for v in source.values()]})
        return _build(Table(frame, Source(name or "<dict>", b""), 0, False, "row"), name or "documents")
    if isinstance(source, pd.DataFrame):
        return _build(Table(source.reset_index(drop=True), Source(name or "<DataFrame>", b""), 0, False, "row"),
                      name or "documents")
    src, table = parse_file(source, "documents", format,
                            "a documents file in CSV, TSV, JSONL or Parquet with doc_id and text or tokens")
    docs = _build(table, name or file_stem(src.name))
    docs.warnings = repair_warnings(src) + docs.warnings
    docs.source = src.name
    return docs


def _build(table: Table, name: str) -> Documents:
    d_col = find_column(table, ID_ALIASES, "doc id")
    t_col = find_column(table, TEXT_ALIASES, "text", required=False)
    k_col = find_column(table, TOKEN_ALIASES, "tokens", required=False)
    h_col = find_column(table, TITLE_ALIASES, "title", required=False)
    if t_col is None and k_col is None:
        raise InputError("a text or tokens column beside doc_id", source=table.source.name,
                         text=",".join(table.column_names))
    row = first_empty(table, d_col)
    if row is not None:
        raise table.error(row, f"a doc id in column {d_col!r}")
    frame = pd.DataFrame({"doc_id": table_ids(table, d_col, "a doc id").to_numpy()})
    if t_col is not None:  # a TSV's quoted cells read as pandas reads them (`Table.text`)
        frame["text"] = table.text(t_col).to_numpy()
    if h_col is not None:  # optional; an empty title is no title
        frame["title"] = table.text(h_col).str.strip().to_numpy()
    if k_col is not None:
        tokens = parse_numbers(table, k_col, f"a whole number of tokens in column {k_col!r}")
        bad = (tokens < 0) | (tokens != np.floor(tokens))
        if bad.any():
            raise table.error(int(np.flatnonzero(bad)[0]), f"a whole, non-negative number of tokens in {k_col!r}")
        frame["tokens"] = tokens.astype(np.int64)
    warnings = []
    dup = frame["doc_id"].duplicated()
    if dup.any():
        warnings.append(EvalWarning("duplicate_document",
                                    f"{plural(int(dup.sum()), 'doc id')} {agree(int(dup.sum()), 'appears', 'appear')} more than once; "
                                    "the first is kept",
                                    int(dup.sum())))
        frame = frame[~dup]
    return Documents(name=name, frame=frame.set_index("doc_id"), warnings=tuple(warnings))
