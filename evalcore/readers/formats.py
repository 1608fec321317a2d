"""The formats the readers take, declared once: one `Format` record per format, in `REGISTRY`.

A record says how a file is recognised as that format (its endings, its first bytes, the shape of its first line)
and, for each kind of file (labels, a run, documents, a chunk map, a queries file), the parser that reads it, or
None when that kind cannot come in that format. `read_labels`, `read_run`, `read_documents`, `read_chunks` and
`read_queries` take their parser from here, the command line's
``--*-format`` help lists the names from here, and a test checks that docs/formats.md describes exactly this
table. Adding a format is adding a record (and its parsers); no reader chooses a parser any other way.

Detection (`detect_format`), when no format is named: first bytes that only one format has (Parquet's ``PAR1``);
else an ending that names a format whatever the content (``.trec``, ``.json``, ...); else the shape of the
content (`content_shape`: a JSON document or JSON lines, a table header naming a query or doc column, a line that
reads as TREC); else an ending the content did not overrule (``.csv``, ``.tsv``); else `DEFAULT_FORMAT`.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from ..errors import InputError, invalid_parameter
from . import chunk_parsers, document_parsers, label_parsers, query_parsers, run_parsers
from .sources import LineLimit, Source, SourceLike, first_content_line, open_source, text_line_limit, trec_line_limit
from .tables import DOC_ALIASES, QUERY_ALIASES

KINDS = ("labels", "run", "documents", "chunks", "queries")
"""The kinds of file the readers take in these formats (vectors have their own, `evalcore.readers.vectors`)."""

JSON_DOCUMENT = "a JSON document"
JSON_LINES = "JSON lines"
COMMA_HEADER = "a comma-separated header"
TAB_HEADER = "a tab-separated header"
TREC_LINE = "a TREC line"


@dataclass(frozen=True)
class Format:
    """One format: its name and aliases, how a file is recognised as it, and its parser for each kind of file.

    ``endings`` name the format whatever the content; ``likely_endings`` only when the content does not say
    otherwise; ``magic`` are first bytes no other format starts with; ``shapes`` the `content_shape` values
    that make a file this format. A parser takes a `Source`: ``labels`` returns
    `evalcore.readers.label_parsers.ParsedLabels`, ``run`` the parts of a run
    (`evalcore.readers.run_parsers`), ``documents`` a `evalcore.readers.tables.Table`, ``chunks`` and
    ``queries`` an `evalcore.readers.arrow_tables.ArrowTable`. ``lines`` gives the longest line the format
    allows (None for formats not made of lines), checked as a gzip file inflates.
    """

    name: str
    aliases: tuple[str, ...] = ()
    endings: tuple[str, ...] = ()
    likely_endings: tuple[str, ...] = ()
    magic: bytes | None = None
    shapes: tuple[str, ...] = ()
    labels: Callable | None = None
    run: Callable | None = None
    documents: Callable | None = None
    chunks: Callable | None = None
    queries: Callable | None = None
    lines: Callable[[], LineLimit] | None = None

    def parser(self, kind: str) -> Callable | None:
        """The parser of ``kind`` (one of `KINDS`) in this format; None when that kind cannot come in it."""
        if kind not in KINDS:
            raise invalid_parameter("kind", "one of " + ", ".join(KINDS), kind)
        return getattr(self, kind)


REGISTRY: dict[str, Format] = {f.name: f for f in (
    Format("trec", aliases=("qrels", "run"), endings=(".trec", ".run", ".qrels", ".res"), likely_endings=(".txt",),
           shapes=(TREC_LINE,), labels=label_parsers.from_trec, run=run_parsers.from_trec, lines=trec_line_limit),
    Format("csv", likely_endings=(".csv",), shapes=(COMMA_HEADER,),
           labels=label_parsers.from_csv, run=run_parsers.from_csv, documents=document_parsers.from_csv,
           chunks=chunk_parsers.from_csv, queries=query_parsers.from_csv, lines=text_line_limit),
    Format("tsv", aliases=("beir",), likely_endings=(".tsv",), shapes=(TAB_HEADER,),
           labels=label_parsers.from_tsv, run=run_parsers.from_tsv, documents=document_parsers.from_tsv,
           chunks=chunk_parsers.from_tsv, queries=query_parsers.from_tsv, lines=text_line_limit),
    Format("parquet", aliases=("pq",), endings=(".parquet", ".pq"), magic=b"PAR1",
           labels=label_parsers.from_parquet, run=run_parsers.from_parquet, documents=document_parsers.from_parquet,
           chunks=chunk_parsers.from_parquet, queries=query_parsers.from_parquet),
    Format("json", endings=(".json",), shapes=(JSON_DOCUMENT,), labels=label_parsers.from_json,
           run=run_parsers.from_json, queries=query_parsers.from_json),
    Format("jsonl", aliases=("ndjson",), endings=(".jsonl", ".ndjson"), shapes=(JSON_LINES,),
           labels=label_parsers.from_jsonl, run=run_parsers.from_jsonl, documents=document_parsers.from_jsonl,
           chunks=chunk_parsers.from_jsonl, queries=query_parsers.from_jsonl, lines=text_line_limit),
)}
"""Every format, by name, in the order they are listed to people."""

FORMATS = tuple(REGISTRY)
"""The names of the formats (``trec``, ``csv``, ...), in `REGISTRY` order."""

ALIASES = {alias: f.name for f in REGISTRY.values() for alias in f.aliases}
"""Other names a format may be given by (``qrels`` -> ``trec``)."""

DEFAULT_FORMAT = "trec"
"""What a file nothing else identifies is read as: whitespace-separated TREC."""

_ENDINGS = {ending for f in REGISTRY.values() for ending in f.endings + f.likely_endings}
_ID_COLUMNS = set(QUERY_ALIASES + DOC_ALIASES) | {"chunk_id", "chunkid", "chunk-id"}


def formats_for(kind: str) -> tuple[str, ...]:
    """The names of the formats that can hold ``kind`` (one of `KINDS`), in `REGISTRY` order."""
    return tuple(f.name for f in REGISTRY.values() if f.parser(kind) is not None)


def parser_for(fmt: str, kind: str) -> Callable | None:
    """The parser of ``kind`` for the format named ``fmt`` (canonical, as `detect_format` returns it)."""
    return REGISTRY[fmt].parser(kind)


def parse_file(source: SourceLike, kind: str, format: str | None, expected: str) -> tuple[Source, object]:
    """``source`` opened, its format detected (or ``format``), and parsed as ``kind``: the `Source` and what the
    parser returned. A format that cannot hold ``kind`` is an InputError saying ``expected`` (what such a file is)
    and naming the format found. The format's longest line is set before the file is read whole, so a gzip file
    is refused at the first line past it, as it inflates."""
    src, fmt = open_as(source, format)
    parse = parser_for(fmt, kind)
    if parse is None:
        raise InputError(expected, source=src.name, text=f"{fmt} format")
    return src, parse(src)


def open_as(source: SourceLike, format: str | None) -> tuple[Source, str]:
    """``source`` opened and its format detected (or ``format``), with the format's longest line set before the
    file is read (see `parse_file`)."""
    src = open_source(source)
    fmt = detect_format(src, format)
    if REGISTRY[fmt].lines is not None:
        src.line_limit = REGISTRY[fmt].lines()
    return src, fmt


def normalise_format(fmt: str | None) -> str | None:
    """Map a user-given format name to a canonical one, or raise a usage error."""
    if fmt is None:
        return None
    key = fmt.strip().lower().lstrip(".")
    key = ALIASES.get(key, key)
    if key not in REGISTRY:
        raise invalid_parameter("format", "one of " + ", ".join(FORMATS + tuple(ALIASES)), fmt)
    return key


def detect_format(source: Source, explicit: str | None = None) -> str:
    """The format of ``source``: the explicit one, else as the module docs say (first bytes, ending, content).

    A ``.csv``/``.tsv`` file whose first line is a TREC line is TREC (public qrels often are); one whose first
    line is neither a header nor TREC is read as its ending says, and a header it lacks is reported with the line
    as read and the format override.
    """
    fmt = normalise_format(explicit)
    if fmt:
        return fmt
    head = source.head()
    for found in REGISTRY.values():
        if found.magic is not None and head.startswith(found.magic):
            return found.name
    ending = source.extension
    for found in REGISTRY.values():
        if ending in found.endings:
            return found.name
    shape = content_shape(head)
    for found in REGISTRY.values():
        if shape in found.shapes:
            return found.name
    if first_content_line(head) is not None:
        for found in REGISTRY.values():
            if ending in found.likely_endings:
                return found.name
    return DEFAULT_FORMAT


def content_shape(head: bytes) -> str | None:
    """What the first bytes of a file look like, one of the shape names above, or None.

    ``[`` starts a JSON document; ``{`` starts JSON lines when the first line is a whole object and more lines
    follow (or it names a query), else a JSON document. Otherwise the first line that is not blank or a ``#``
    comment decides: tab- or comma-separated with a whole field naming a query or doc id column is a header; a
    line that reads as TREC qrels (``qid iter docid grade``, a number last) or a TREC run (``qid Q0 docid rank
    score tag ...``, an integer rank and a numeric score) is a TREC line, which cannot be a header.
    """
    start = head[:65536].lstrip()
    if start.startswith(b"["):
        return JSON_DOCUMENT
    if start.startswith(b"{"):
        first, _, rest = start.partition(b"\n")
        record = _json_object(first)
        if record is not None and (rest.strip() or {"query", "query_id", "qid"} & set(record)):
            return JSON_LINES
        return JSON_DOCUMENT
    line = first_content_line(head)
    if line is None:
        return None
    if _is_table_header(line):
        return TAB_HEADER if "\t" in line else COMMA_HEADER
    if _is_trec_line(line):
        return TREC_LINE
    return None


def file_stem(name: str) -> str:
    """The file name without directories and format endings (``base.trec.gz`` -> ``base``): a run's default name."""
    base = Path(name).name
    for _ in range(2):
        stem, ext = os.path.splitext(base)
        if ext.lower() in _ENDINGS or ext.lower() == ".gz":
            base = stem
    return base


def _is_table_header(line: str) -> bool:
    if "\t" not in line and "," not in line:
        return False
    return any(field.strip().strip('"').lower() in _ID_COLUMNS for field in re.split(r"[\t,]", line))


def _is_trec_line(line: str) -> bool:
    fields = line.split()
    if len(fields) == 4:
        return _is_number(fields[3])
    return len(fields) >= 6 and fields[3].lstrip("+-").isdigit() and _is_number(fields[4])


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _json_object(line: bytes) -> dict | None:
    try:
        value = json.loads(line)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None
