"""Opening user files: gzip, byte-order marks, line endings and format detection.

Every reader starts here, so a file is read from disk (or an upload) exactly once and every
later error can name it. Formats are detected from the extension first and the content
second; an explicit format always wins.
"""

from __future__ import annotations

import gzip
import io
import json
import os
import re
from pathlib import Path
from typing import BinaryIO, Union

from ..errors import InputError, invalid_parameter

FORMATS = ("trec", "csv", "tsv", "parquet", "json", "jsonl")
"""Formats a reader understands. ``qrels`` and ``beir`` are accepted as aliases."""

FORMAT_ALIASES = {"qrels": "trec", "run": "trec", "beir": "tsv", "ndjson": "jsonl", "pq": "parquet"}

_EXTENSIONS = {
    ".trec": "trec", ".run": "trec", ".qrels": "trec", ".txt": None, ".res": "trec",
    ".csv": "csv", ".tsv": "tsv", ".parquet": "parquet", ".pq": "parquet",
    ".json": "json", ".jsonl": "jsonl", ".ndjson": "jsonl",
}

PathLike = Union[str, os.PathLike]
SourceLike = Union[PathLike, bytes, BinaryIO, "Source"]


class Source:
    """One user file, decompressed, with its display name; bytes are read on first use.

    ``repairs`` lists what opening the file fixed silently-but-visibly (a BOM removed,
    CRLF line endings), for the reader to pass on as warnings. A plain file on disk can also
    be handed to a parser by ``path`` without ever holding its bytes (see `plain_path`).
    """

    def __init__(self, name: str, data: bytes | None = None, repairs: tuple[str, ...] = (), *,
                 path: Path | None = None) -> None:
        self.name = name
        self.path = path
        self._data: bytes | None = None
        self._repairs = tuple(repairs)
        if data is not None:
            self._data, found = _normalise(bytes(data), name)
            self._repairs += found

    @property
    def data(self) -> bytes:
        """The whole file: gunzipped, BOM removed, line endings LF."""
        if self._data is None:
            self._data, self._repairs = _normalise(_read_path(self.path, self.name), self.name)
        return self._data

    @property
    def repairs(self) -> tuple[str, ...]:
        if self._data is None and self.plain_path is not None:
            return ()  # a plain file needs no repair, and need not be read to say so
        self.data
        return self._repairs

    def head(self, size: int = 65536) -> bytes:
        """The first bytes of the (decompressed) file, without reading a plain file whole."""
        if self._data is None and self.plain_path is not None:
            with open(self.path, "rb") as handle:
                return handle.read(size)
        return self.data[:size]

    @property
    def plain_path(self) -> Path | None:
        """The path, when the file on disk needs no repair (not gzip, no BOM, no CR) and is unread."""
        if self.path is None or self._data is not None:
            return None
        with open(self.path, "rb") as handle:
            start = handle.read(65536)
        if start[:2] == b"\x1f\x8b" or start.startswith(b"\xef\xbb\xbf") or b"\r" in start:
            return None
        return self.path

    @property
    def stem(self) -> str:
        """The file name without directories and format extensions (``base.trec.gz`` -> ``base``)."""
        base = Path(self.name).name
        for _ in range(2):
            stem, ext = os.path.splitext(base)
            if ext.lower() in _EXTENSIONS or ext.lower() == ".gz":
                base = stem
        return base

    @property
    def extension(self) -> str:
        name = self.name.lower()
        if name.endswith(".gz"):
            name = name[:-3]
        return os.path.splitext(name)[1]

    def text(self) -> str:
        """The whole file as text; a decoding error names the line it is on."""
        try:
            return self.data.decode("utf-8")
        except UnicodeDecodeError as exc:
            line = self.data.count(b"\n", 0, exc.start) + 1
            bad = self.data[max(0, exc.start - 10): exc.end + 10]
            raise InputError(
                "UTF-8 text", source=self.name, line=line, text=bad.decode("utf-8", "replace")
            ) from None

    def lines(self) -> list[str]:
        return self.text().split("\n")


def open_source(source: SourceLike, name: str | None = None) -> Source:
    """A path, bytes or binary file object as a `Source`.

    Gzip is recognised by its magic bytes, not only by the ``.gz`` extension. A UTF-8 BOM is
    removed and CRLF line endings become LF; both are recorded in ``repairs``. A path is
    checked now and read when first needed.
    """
    if isinstance(source, Source):
        return source
    if isinstance(source, (bytes, bytearray, memoryview)):
        return Source(name or "<bytes>", bytes(source))
    if hasattr(source, "read"):
        raw = source.read()
        if isinstance(raw, str):
            raw = raw.encode("utf-8")
        return Source(name or getattr(source, "name", None) or "<upload>", raw)
    if isinstance(source, (str, os.PathLike)):
        path = Path(source)
        display = name or str(source)
        if not path.exists():
            raise InputError("an existing file", source=display, text=str(source))
        if path.is_dir():
            raise InputError("a file, not a directory", source=display)
        if not os.access(path, os.R_OK):
            raise InputError("a readable file (permission denied)", source=display)
        return Source(display, path=path)
    raise invalid_parameter("source", "a path, bytes or a binary file object", type(source).__name__)


def _read_path(path: Path, display: str) -> bytes:
    try:
        return path.read_bytes()
    except OSError as exc:
        raise InputError(f"a readable file ({exc.strerror})", source=display) from None


def _normalise(raw: bytes, display: str) -> tuple[bytes, tuple[str, ...]]:
    """Gunzip, drop a BOM and turn CRLF into LF, saying what was repaired."""
    repairs: list[str] = []
    if raw[:2] == b"\x1f\x8b":
        try:
            raw = gzip.decompress(raw)
        except (OSError, EOFError) as exc:
            raise InputError(f"a complete gzip file ({exc})", source=display) from None
    if raw.startswith(b"\xef\xbb\xbf"):
        raw = raw[3:]
        repairs.append("removed a UTF-8 byte-order mark at the start of the file")
    if b"\r" in raw and not raw.startswith(b"PAR1"):
        raw = raw.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
        repairs.append("converted CRLF line endings to LF")
    return raw, tuple(repairs)


def normalise_format(fmt: str | None) -> str | None:
    """Map a user-given format name to a canonical one, or raise a usage error."""
    if fmt is None:
        return None
    key = fmt.strip().lower().lstrip(".")
    key = FORMAT_ALIASES.get(key, key)
    if key not in FORMATS:
        raise invalid_parameter("format", "one of " + ", ".join(FORMATS + tuple(FORMAT_ALIASES)), fmt)
    return key


_ID_COLUMNS = {"query", "query_id", "qid", "query-id", "doc_id", "docid", "doc", "corpus-id"}


def _is_table_header(line: str) -> bool:
    """A tab- or comma-separated line with a whole field naming a query or doc id column."""
    if "\t" not in line and "," not in line:
        return False
    return any(field.strip().strip('"').lower() in _ID_COLUMNS for field in re.split(r"[\t,]", line))


def _is_trec_line(line: str) -> bool:
    """A line that reads as whitespace-separated TREC: qrels ``qid iter docid grade`` (a number last) or a run
    ``qid Q0 docid rank score tag ...`` (an integer rank and a numeric score). Such a line cannot be a header, so
    a ``.tsv`` or ``.csv`` file that starts with one is headerless TREC, as public qrels often are."""
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


def detect_format(source: Source, explicit: str | None = None) -> str:
    """The format of ``source``: the explicit one, else extension, else content.

    A ``.trec``/``.run``/``.qrels``/``.res``, Parquet, JSON or JSONL extension is trusted.
    Otherwise plain-text tables are told apart from TREC files by their first line: a tab- or
    comma-separated header naming a query or doc column makes a TSV/CSV table; a line that reads
    as TREC qrels or a TREC run (a number where a column name would be) makes TREC, whatever the
    extension; a ``.csv``/``.tsv`` file is otherwise read as its extension says (and a header it
    lacks is reported with the line as read and the format override).
    """
    fmt = normalise_format(explicit)
    if fmt:
        return fmt
    data = source.head()
    if data.startswith(b"PAR1"):
        return "parquet"
    by_ext = _EXTENSIONS.get(source.extension)
    if by_ext in ("parquet", "json", "jsonl", "trec"):
        return by_ext
    head = data[:65536].lstrip()
    if head.startswith(b"["):
        return "json"
    if head.startswith(b"{"):
        first, _, rest = head.partition(b"\n")
        record = _json_object(first)
        if record is not None and (rest.strip() or {"query", "query_id", "qid"} & set(record)):
            return "jsonl"
        return "json"
    first_line = _first_content_line(data)
    if first_line is not None and _is_table_header(first_line):
        return "tsv" if "\t" in first_line else "csv"
    if first_line is not None and _is_trec_line(first_line):
        return "trec"
    if by_ext in ("csv", "tsv") and first_line is not None:
        return by_ext
    return "trec"


def _json_object(line: bytes) -> dict | None:
    try:
        value = json.loads(line)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def first_content_line(source: Source) -> str | None:
    """The first line of ``source`` that is neither blank nor a ``#`` comment, as text (for messages)."""
    return _first_content_line(source.head())


def _first_content_line(data: bytes) -> str | None:
    for raw in io.BytesIO(data[:65536]):
        line = raw.decode("utf-8", "replace").strip("\n")
        if line.strip() and not line.lstrip().startswith("#"):
            return line
    return None
