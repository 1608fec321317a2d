"""Documents files of every format that can hold them turned into a table: one parser per format, for
`evalcore.readers.formats`.

A documents file is a table (CSV, TSV, Parquet) or JSON lines, one doc per row: a doc id and its text and/or token
count, and optionally a title. TREC and single JSON documents cannot hold documents (their record has none).
"""

from __future__ import annotations

import pandas as pd

from .json_files import read_jsonl_records
from .sources import Source
from .tables import DOC_ALIASES, Table, read_delimited, read_parquet

ID_ALIASES = DOC_ALIASES + ("id", "_id")
TEXT_ALIASES = ("text", "chunk", "content", "body")
TOKEN_ALIASES = ("tokens", "token_count", "n_tokens")
TITLE_ALIASES = ("title", "doc_title", "heading")
_DESCRIBE = "doc_id and text or tokens columns"


def from_csv(src: Source) -> Table:
    return read_delimited(src, ",", _DESCRIBE)


def from_tsv(src: Source) -> Table:
    return read_delimited(src, "\t", _DESCRIBE)


def from_parquet(src: Source) -> Table:
    """Only the columns a documents file may use are read (a wide export's others cost nothing)."""
    return read_parquet(src, columns=ID_ALIASES + TEXT_ALIASES + TOKEN_ALIASES + TITLE_ALIASES)


def from_jsonl(src: Source) -> Table:
    records = read_jsonl_records(src)
    return Table(pd.DataFrame([r for _, r in records]), src, 0, False, "row")
