"""Queries files of every format that can hold them, read to Arrow columns: one parser per format, for
`evalcore.readers.formats`.

A queries file gives the text of each query id: BEIR's ``queries.jsonl`` (``{"_id": ..., "text": ...}`` per line),
a table with ``query_id`` and ``query_text`` (or the aliases below; a TSV of two columns and no header, as MS MARCO
and the TREC deep-learning tracks ship theirs), or a JSON object ``{query id: text}``. Each parser returns an
`evalcore.readers.arrow_tables.ArrowTable`; `evalcore.readers.queries.read_queries` checks it.
"""

from __future__ import annotations

from collections.abc import Mapping

import pyarrow as pa

from ..errors import InputError
from .arrow_tables import ArrowTable, read_arrow_table
from .json_files import is_json_id, read_json_value
from .sources import Source

ID_ALIASES = ("query_id", "qid", "query-id", "_id", "id", "query")
"""Names of the query id column, first found wins (``query`` last: in ``qid,query`` it is the text)."""
TEXT_ALIASES = ("query_text", "text", "query")
"""Names of the query text column: the first the file has that is not the id column."""
HEADERLESS = ("query_id", "query_text")
"""The columns of a TSV or CSV queries file of two columns whose first line names neither."""
_DESCRIBE = "query_id and query_text columns"


def from_csv(src: Source) -> ArrowTable:
    return _delimited(src, "csv", ",")


def from_tsv(src: Source) -> ArrowTable:
    return _delimited(src, "tsv", "\t")


def _delimited(src: Source, fmt: str, delimiter: str) -> ArrowTable:
    first = read_arrow_table(src, fmt, ID_ALIASES + TEXT_ALIASES, _DESCRIBE)
    named = {n.strip().lower() for n in first.header} & set(ID_ALIASES + TEXT_ALIASES)
    if not named and len(first.header) == 2:  # "1048585<TAB>what is ...": no header line
        return read_arrow_table(src, fmt, HEADERLESS, _DESCRIBE, names=HEADERLESS)
    return first


def from_parquet(src: Source) -> ArrowTable:
    return read_arrow_table(src, "parquet", ID_ALIASES + TEXT_ALIASES, _DESCRIBE)


def from_jsonl(src: Source) -> ArrowTable:
    return read_arrow_table(src, "jsonl", ID_ALIASES + TEXT_ALIASES, _DESCRIBE)


def from_json(src: Source) -> ArrowTable:
    """A JSON object ``{query id: text}``."""
    value = read_json_value(src)
    if not isinstance(value, Mapping):
        raise InputError('a JSON object {"query id": "its text", ...}', source=src.name, text=type(value).__name__)
    for query, text in value.items():
        if not isinstance(text, str) or not is_json_id(query):
            raise InputError(f"the text of query {query!r} as a string", source=src.name, text=repr(text)[:80])
    table = pa.table({"query_id": pa.array(list(value), pa.string()),
                      "query_text": pa.array(list(value.values()), pa.string())})
    return ArrowTable(table, src, where="row", header_lines=0)
