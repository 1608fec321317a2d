"""Which query log a file is, told from its content: the log's kind (UBI, OpenInference spans, a plain table) and
how it is laid out (JSON lines, an index dump, CSV, TSV, Parquet).

Only the first 64 KB are looked at (inflated when the file is gzip); the extension is never needed. ``--log-format``
names the kind when the content does not say it; the layout is always read from the content. A file none of the
kinds fits is an InputError that shows its first line and says what each kind looks like.
"""

from __future__ import annotations

import csv
import json
import re
from dataclasses import dataclass

import pyarrow.parquet as pq

from ..errors import InputError, UsageError
from ..readers.sources import first_content_line, open_source
from .engine import SHOWN, LogFile
from .personal_data import mask_text

KINDS = {"ubi": "ubi", "opensearch-ubi": "ubi", "openinference": "openinference", "spans": "openinference",
         "phoenix": "openinference", "otel": "openinference", "table": "table", "plain": "table"}
"""``--log-format`` values and the kind each names."""
KIND_NAMES = {"ubi": "OpenSearch UBI queries", "openinference": "OpenInference retriever spans",
              "table": "a plain table of queries"}
LAYOUT_NAMES = {"jsonl": "JSON lines", "bulk": "a bulk file (an action line, then the document)",
                "dump": "an index dump (index name, tab, document)", "csv": "CSV", "tsv": "TSV",
                "parquet": "Parquet", "otlp": "OTLP JSON lines"}
EXPECTED = ("a query log: OpenSearch UBI (ubi_queries documents with user_query, as JSON lines, a bulk file or an "
            "index dump), OpenInference retriever spans (input.value; JSON lines, CSV or Parquet) or a table with a "
            "query or query_text column (CSV, TSV, JSON lines or Parquet); --log-format ubi|openinference|table "
            "names it")

_UBI_KEYS = {"user_query", "query_response_object_ids", "query_response_hit_ids"}
_BULK_ACTIONS = {"index", "create", "update", "delete"}
_SPAN_KEYS = {"span_kind", "context.span_id", "context.trace_id", "span_id", "trace_id", "parent_id",
              "openinference.span.kind", "attributes.openinference.span.kind"}
_TABLE_KEYS = {"query", "query_text"}
_DUMP_LINE = re.compile(r"^[^\s{\[\"]+\t\{")


@dataclass(frozen=True)
class LogShape:
    """A log file's kind (``ubi``, ``openinference``, ``table``), its layout and, for tables, its columns as the
    file names them."""

    log: LogFile
    kind: str
    layout: str
    columns: tuple[str, ...] = ()

    def describe(self) -> str:
        return f"{KIND_NAMES[self.kind]}, {LAYOUT_NAMES[self.layout]}"


def log_file(path: str) -> LogFile:
    """``path`` checked as a readable regular file (`evalcore.readers.sources.open_source`'s checks)."""
    source = open_source(path)
    with open(source.path, "rb") as handle:
        packed = handle.read(2) == b"\x1f\x8b"
    return LogFile(source.path, source.name, packed)


def detect(log: LogFile, kind: str | None = None) -> LogShape:
    """The shape of ``log``: its layout from its first bytes, its kind from what they hold (``kind``, a
    ``--log-format`` value, when given)."""
    named = None
    if kind is not None:
        named = KINDS.get(kind.strip().lower())
        if named is None:
            raise UsageError(f"--log-format must be one of ubi, openinference or table; got {kind!r}.")
    with open(log.path, "rb") as handle:
        magic = handle.read(4)
    if magic == b"PAR1":
        columns = tuple(pq.read_schema(log.path).names)
        return LogShape(log, named or _kind_of_columns(columns, log), "parquet", columns)
    head = open_source(str(log.path), name=log.name).head(1 << 16)
    first = first_content_line(head)
    if first is None:
        raise InputError(EXPECTED, source=log.name, text="an empty file")
    if _DUMP_LINE.match(first):
        if named not in (None, "ubi"):
            raise InputError(f"{KIND_NAMES[named]} (--log-format {kind}); an index dump holds UBI documents",
                             source=log.name, line=1, text=_shown(first))
        return LogShape(log, "ubi", "dump")
    if first.lstrip().startswith("{"):
        found, layout = _kind_of_json_lines(head)
        if named is None and found is None:
            raise InputError(EXPECTED, source=log.name, line=1, text=_shown(first))
        return LogShape(log, named or found, layout)
    delimiter = "\t" if "\t" in first else ","
    quoting = csv.QUOTE_MINIMAL if delimiter == "," else csv.QUOTE_NONE
    columns = tuple(next(csv.reader([first], delimiter=delimiter, quoting=quoting)))
    layout = "tsv" if delimiter == "\t" else "csv"
    return LogShape(log, named or _kind_of_columns(columns, log, first), layout, columns)


def _shown(text: str) -> str:
    return mask_text(text[:SHOWN])[0]


def _kind_of_columns(columns: tuple[str, ...], log: LogFile, first: str | None = None) -> str:
    lowered = {c.strip().lower() for c in columns}
    if any(c.endswith("input.value") for c in lowered) or lowered & _SPAN_KEYS:
        return "openinference"
    if lowered & _UBI_KEYS:
        return "ubi"
    if lowered & _TABLE_KEYS:
        return "table"
    raise InputError(EXPECTED, source=log.name, line=1 if first is not None else None,
                     text=_shown(first if first is not None else ",".join(columns)))


def _kind_of_json_lines(head: bytes) -> tuple[str | None, str]:
    """The kind the first JSON lines hold (None when none is recognised) and their layout."""
    layout, kind = "jsonl", None
    for raw in head.split(b"\n")[:200]:
        try:
            value = json.loads(raw)
        except (ValueError, RecursionError):
            continue
        if not isinstance(value, dict):
            continue
        keys = set(value)
        if len(keys) == 1 and keys <= _BULK_ACTIONS and isinstance(value[next(iter(keys))], dict):
            layout = "bulk"
            kind = kind or "ubi"
            continue
        inner = value.get("_source") if isinstance(value.get("_source"), dict) else value
        inner_keys = set(inner)
        if "resourceSpans" in keys:
            return kind or "openinference", "otlp"
        if inner_keys & _UBI_KEYS or {"action_name", "query_id"} <= inner_keys:
            kind = kind or "ubi"
        elif any(k.endswith("input.value") for k in keys) or keys & _SPAN_KEYS or _nested_span(value):
            kind = kind or "openinference"
        elif keys & _TABLE_KEYS:
            kind = kind or "table"
    return kind, layout


def _nested_span(value: dict) -> bool:
    """Whether an object carries span attributes nested (``{"attributes": {"input": {"value": ...}}}``) or flattened
    inside ``attributes`` (``{"attributes": {"input.value": ...}}``)."""
    attributes = value.get("attributes")
    if not isinstance(attributes, dict):
        return False
    return ("input.value" in attributes or "openinference.span.kind" in attributes
            or isinstance(attributes.get("input"), dict) or isinstance(attributes.get("openinference"), dict))
