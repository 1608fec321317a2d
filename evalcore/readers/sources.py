"""Opening user files: gzip, byte-order marks, line endings and size limits.

Every reader starts here, so a file is read from disk (or an upload) exactly once and every
later error can name it (which format it is, `evalcore.readers.formats` decides). No file grows
past `max_file_bytes` in memory: gzip is inflated in a stream that stops at the limit, and only
when the whole file is needed (`Source.head` inflates the first bytes alone). A format made of
lines sets its longest line (`LineLimit`) before the file is inflated, and each line is counted
as it inflates: a small gzip file whose first line is a gigabyte of zeros is refused after the
first few megabytes, not after the gigabyte. `quiet_in_pyarrow` keeps pyarrow's parser callbacks
from printing tracebacks.
"""

from __future__ import annotations

import io
import mmap
import os
import sys
import threading
import zlib
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, Iterable, Iterator, Union

import numpy as np

from ..errors import InputError, UsageError, invalid_parameter
from ..warning_log import EvalWarning

DEFAULT_MAX_FILE_MB = 2048
"""Largest size of one input file, after decompression, in MB (``EVALCORE_MAX_FILE_MB`` overrides)."""
DEFAULT_MAX_ID_CHARS = 1024
"""Longest query or doc id, in characters (``EVALCORE_MAX_ID_CHARS`` overrides)."""
DEFAULT_MAX_LINE_MB = 64
"""Longest line of a CSV, TSV or JSON lines file, in MB (``EVALCORE_MAX_LINE_MB`` overrides): a document's whole
text fits many times over."""
MAX_FILE_ENV = "EVALCORE_MAX_FILE_MB"
MAX_ID_ENV = "EVALCORE_MAX_ID_CHARS"
MAX_LINE_ENV = "EVALCORE_MAX_LINE_MB"
_MB = 1 << 20
_READ_BLOCK = 1 << 20  # compressed bytes fed to the inflater at a time
_INFLATE_STEP = 1 << 22  # most bytes one inflate call may produce
_GZIP = b"\x1f\x8b"


@dataclass(frozen=True)
class LineLimit:
    """The longest line a format allows, in bytes, and how to allow longer (for the message). ``plain``: checked in a
    plain file larger than the limit too (probed, `_has_long_line`), not only as a gzip file inflates."""

    most: int
    setting: str
    plain: bool = False

PathLike = Union[str, os.PathLike]
SourceLike = Union[PathLike, bytes, BinaryIO, "Source"]


class Source:
    """One user file, decompressed, with its display name; bytes are read on first use.

    ``repairs`` lists what opening the file fixed silently-but-visibly (a BOM removed,
    CRLF line endings), for the reader to pass on as warnings. A plain file on disk can also
    be handed to a parser by ``path`` without ever holding its bytes (see `plain_path`).
    ``line_limit``, set by the reader before the file is first read whole, is checked line by
    line as a gzip file inflates (a plain file holds no more than its own size).
    """

    def __init__(self, name: str, data: bytes | None = None, repairs: tuple[str, ...] = (), *,
                 path: Path | None = None) -> None:
        self.name = name
        self.path = path
        self.line_limit: LineLimit | None = None
        self._data: bytes | None = None
        self._packed: bytes | None = None  # gzip bytes given, inflated on first use
        self._repairs = tuple(repairs)
        self._read_in_place = False  # handed to a binary reader by `binary_path`: no text to repair
        self._lines_checked = False  # its lines held to `line_limit` (a gzip file's as it inflated)
        if data is not None:
            data = bytes(data)
            if data[:2] == _GZIP:
                self._packed = data
            else:
                check_size(len(data), name)
                self._data, found = _repair(data)
                self._repairs += found

    @property
    def data(self) -> bytes:
        """The whole file: gunzipped (within the size and line limits), BOM removed, line endings LF."""
        if self._data is None:
            if self._packed is not None:
                view = memoryview(self._packed)
                raw = _gunzip((view[i:i + _READ_BLOCK] for i in range(0, len(view), _READ_BLOCK)), self.name,
                              max_file_bytes(), self.line_limit)
                del view
                self._packed = None
                self._lines_checked = self.line_limit is not None  # counted as it inflated
            else:
                raw = read_limited(self.path, self.name, self.line_limit)
                self._lines_checked = self.line_limit is not None and _starts_gzip(self.path)
            self._data, found = _repair(raw)
            self._repairs += found
        self._check_lines(self._data)
        return self._data

    def stream(self) -> BinaryIO:
        """The file's (decompressed, repaired) bytes as a binary stream to read a block at a time: a plain file on disk
        is read from disk as the stream is read (never held whole), anything else from memory."""
        path = self.plain_path
        return open(path, "rb") if path is not None else io.BytesIO(self.data)

    def _check_lines(self, data: bytes | None = None) -> None:
        """Hold a plain file's lines (``data``, else the file on disk) to a `LineLimit` that asks for it, once: a line
        past it is an InputError naming the line, as it is in a gzip file. Only a file larger than the limit can
        hold such a line, and only one in `_has_long_line`'s probe is counted a line at a time."""
        limit = self.line_limit
        if self._lines_checked or limit is None or not limit.plain:
            return
        self._lines_checked = True
        if data is not None:
            if len(data) > limit.most and _has_long_line(data, limit.most):
                counter = _LineCounter(limit, self.name)
                for at in range(0, len(data), _INFLATE_STEP):
                    counter.feed(data[at:at + _INFLATE_STEP])
            return
        with open(self.path, "rb") as handle:
            if os.fstat(handle.fileno()).st_size <= limit.most:
                return
            with mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as mapped:
                if not _has_long_line(mapped, limit.most):
                    return
            counter = _LineCounter(limit, self.name)
            while block := handle.read(_INFLATE_STEP):
                counter.feed(block)

    @property
    def repairs(self) -> tuple[str, ...]:
        if self._data is None and (self._read_in_place or self.plain_path is not None):
            return ()  # a binary file read in place, or a plain one, needs no repair, and need not be read to say so
        self.data
        return self._repairs

    def head(self, size: int = 65536) -> bytes:
        """The first bytes of the (decompressed, repaired) file, without reading or inflating it whole: what format
        detection looks at."""
        if self._data is not None:
            return self._data[:size]
        if self._packed is not None:
            return _repair(_inflate_start(self._packed[:_READ_BLOCK], size))[0][:size]
        with open(self.path, "rb") as handle:
            start = handle.read(max(size, _READ_BLOCK))
        if start[:2] == _GZIP:
            start = _inflate_start(start, size)
        return _repair(start[:size])[0][:size]

    @property
    def binary_path(self) -> Path | None:
        """The path, when the file on disk is not gzip and is unread (a binary format can read it in place).

        The file must be within `max_file_bytes`: an InputError says so otherwise.
        """
        if self.path is None or self._data is not None:
            return None
        with open(self.path, "rb") as handle:
            if handle.read(2) == b"\x1f\x8b":
                return None
            check_size(os.fstat(handle.fileno()).st_size, self.name)
        self._read_in_place = True
        return self.path

    @property
    def plain_path(self) -> Path | None:
        """The path, when the file on disk needs no repair (not gzip, no BOM, no CR) and is unread."""
        if self.path is None or self._data is not None:
            return None
        with open(self.path, "rb") as handle:
            start = handle.read(65536)
            size = os.fstat(handle.fileno()).st_size
        if start[:2] == b"\x1f\x8b" or start.startswith(b"\xef\xbb\xbf") or b"\r" in start:
            return None
        check_size(size, self.name)  # streamed, never held whole: still no larger than a file read whole
        self._check_lines()  # and no line longer than the same file read whole may hold
        return self.path

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
        display = name or getattr(source, "name", None) or "<upload>"
        raw = _read_within_limit(source, max_file_bytes())
        check_size(len(raw), display)
        return Source(display, raw)
    if isinstance(source, (str, os.PathLike)):
        path = Path(source)
        display = name or str(source)
        if not path.exists():
            raise InputError("an existing file", source=display, text=str(source))
        if path.is_dir():
            raise InputError("a file, not a directory", source=display)
        if not path.resolve().is_file():
            raise InputError("a regular file (not a device, pipe or socket)", source=display, text=str(source))
        if not os.access(path, os.R_OK):
            raise InputError("a readable file (permission denied)", source=display)
        return Source(display, path=path)
    raise invalid_parameter("source", "a path, bytes or a binary file object", type(source).__name__)


def repair_warnings(src: Source) -> tuple[EvalWarning, ...]:
    """One ``file_repaired`` warning for each repair opening ``src`` made (a byte-order mark, CRLF line ends)."""
    return tuple(EvalWarning("file_repaired", f"{src.name}: {r}", 1) for r in src.repairs)


def max_file_bytes() -> int:
    """The most bytes one input file may hold after decompression: ``EVALCORE_MAX_FILE_MB`` or the default."""
    return int(_env_limit(MAX_FILE_ENV, DEFAULT_MAX_FILE_MB, "a positive number of megabytes") * _MB)


def text_line_limit() -> LineLimit:
    """The longest line of a CSV, TSV or JSON lines file: ``EVALCORE_MAX_LINE_MB`` or the default."""
    most = int(_env_limit(MAX_LINE_ENV, DEFAULT_MAX_LINE_MB, "a positive number of megabytes") * _MB)
    return LineLimit(most, f"set {MAX_LINE_ENV} to allow longer", plain=True)


def trec_line_limit() -> LineLimit:
    """The longest TREC line: two ids of the longest length (4 UTF-8 bytes a character) and the short fields."""
    return LineLimit(8 * max_id_chars() + 4096, f"set {MAX_ID_ENV} to allow longer ids")


def max_id_chars() -> int:
    """The longest query or doc id accepted, in characters: ``EVALCORE_MAX_ID_CHARS`` or the default."""
    return int(_env_limit(MAX_ID_ENV, DEFAULT_MAX_ID_CHARS, "a whole number of characters, 1 or more",
                          whole=True))


def _env_limit(variable: str, default: float, must: str, whole: bool = False) -> float:
    """The setting ``variable`` as a positive finite number (``whole``: a whole number, 1 or more), ``default`` when
    it is not set; anything else is a UsageError naming the variable, in one sentence."""
    raw = os.environ.get(variable, "").strip()
    if not raw:
        return default
    try:
        value = float(raw)
    except ValueError:
        value = float("nan")
    if not 0 < value < float("inf") or (whole and (value != int(value) or value < 1)):
        raise UsageError(f"The setting {variable} (an environment variable) must be {must}; got {raw!r}.")
    return value


def too_large(display: str, what: str = "a file of") -> InputError:
    """The error for a file past `max_file_bytes`, naming the limit and how to raise it."""
    limit = max_file_bytes() / _MB
    return InputError(f"{what} at most {limit:,.0f} MB (set {MAX_FILE_ENV} to allow more)", source=display)


def check_size(size: int, display: str) -> None:
    """An InputError when ``size`` bytes are more than one input file may hold."""
    if size > max_file_bytes():
        raise too_large(display)


def read_limited(path: Path, display: str, line_limit: LineLimit | None = None) -> bytes:
    """The bytes of a file on disk, gunzipped when it is gzip; never more than `max_file_bytes` in memory, and a
    gzip file's lines within ``line_limit`` as it inflates."""
    limit = max_file_bytes()
    try:
        with open(path, "rb") as handle:
            start = handle.read(2)
            if start == _GZIP:
                blocks = _blocks(handle, start)
                return _gunzip(blocks, display, limit, line_limit)
            size = os.fstat(handle.fileno()).st_size
            check_size(size, display)
            if size:  # one buffer the file's size (not a copy of it): a byte more tells whether it grew meanwhile
                handle.seek(0)
                raw = handle.read(size + 1)
                if len(raw) > size:
                    raw += _read_within_limit(handle, limit - len(raw))
            else:  # /proc files report size 0
                raw = start + _read_within_limit(handle, limit - len(start))
    except OSError as exc:
        raise InputError(f"a readable file ({exc.strerror})", source=display) from None
    check_size(len(raw), display)  # the file grew since its size was read
    return raw


def _has_long_line(data: bytes | mmap.mmap, most: int) -> bool:
    """Whether a line of ``data`` is longer than ``most`` bytes: from the start of each line, the last newline within
    the next ``most`` + 1 bytes starts the next probe, and there is none only past a line too long. A search back
    from the end of each window finds a newline at once in ordinary text, so a file is probed, not read: a plain
    file of 500 MB costs a few milliseconds."""
    at, size = 0, len(data)
    while size - at > most:
        last = data.rfind(b"\n", at, at + most + 1)
        if last < 0:
            return True
        at = last + 1
    return False


def _starts_gzip(path: Path) -> bool:
    with open(path, "rb") as handle:
        return handle.read(2) == _GZIP


def _read_within_limit(handle, limit: int) -> bytes:
    """Everything ``handle`` holds, read a block at a time, stopping one byte past ``limit`` (the caller refuses
    that): ``read(limit)`` would reserve the whole limit up front, and one read may return less than asked."""
    out = io.BytesIO()
    while out.tell() <= limit:
        block = handle.read(min(_READ_BLOCK, limit + 1 - out.tell()))
        if not block:
            break
        out.write(block.encode("utf-8") if isinstance(block, str) else block)
    return out.getvalue()


def _blocks(handle: BinaryIO, first: bytes) -> Iterator[bytes]:
    yield first
    while True:
        block = handle.read(_READ_BLOCK)
        if not block:
            return
        yield block


def _gunzip(blocks: Iterable[bytes], display: str, limit: int, line_limit: LineLimit | None = None) -> bytes:
    """Inflate a gzip stream (one member or several, as ``gzip.decompress``), stopping past ``limit`` bytes, or at
    the first line longer than ``line_limit`` allows.

    Zero bytes between or after members are padding; anything else after a member must be
    another member. A stream that ends inside a member is an incomplete file.
    """
    out = io.BytesIO()
    total = 0
    lines = None if line_limit is None else _LineCounter(line_limit, display)
    inflater = None  # None: between members
    try:
        for block in blocks:
            data = block
            while data:
                if inflater is None:
                    data = bytes(data).lstrip(b"\x00")
                    if not data:
                        break
                    inflater = zlib.decompressobj(wbits=31)
                piece = inflater.decompress(data, _INFLATE_STEP)
                total += len(piece)
                if total > limit:
                    raise too_large(display, "a file that decompresses to")
                if lines is not None:
                    lines.feed(piece)
                out.write(piece)
                if inflater.eof:
                    data, inflater = inflater.unused_data, None
                else:
                    data = inflater.unconsumed_tail
        if inflater is not None:
            raise EOFError("Compressed file ended before the end-of-stream marker was reached")
    except (zlib.error, EOFError) as exc:
        raise InputError(f"a complete gzip file ({exc})", source=display) from None
    return out.getvalue()


class _LineCounter:
    """The lines of inflated text, counted as the pieces come: the first longer than the limit is an InputError
    naming its line and its first bytes. Only a piece longer than the limit can hold a whole line past it, so most
    pieces cost two searches for a newline."""

    def __init__(self, limit: LineLimit, display: str) -> None:
        self.limit, self.display = limit, display
        self.line = 1  # the line being read
        self.length = 0  # its bytes so far
        self.start = b""  # its first bytes, for the message (as many as a message shows of a line)

    def feed(self, piece: bytes | memoryview) -> None:
        piece = bytes(piece)
        first = piece.find(b"\n")
        if first < 0:
            self._grow(piece)
            return
        self._grow(piece[:first])  # the line carried in ends here
        last = piece.rfind(b"\n")
        if last - first - 1 > self.limit.most:  # lines wholly inside the piece: only then can one be too long
            ends = np.flatnonzero(np.frombuffer(piece, dtype=np.uint8, count=last + 1, offset=0) == 10)
            long = np.flatnonzero(np.diff(ends) - 1 > self.limit.most)
            if len(long):
                at = int(ends[long[0]]) + 1
                raise self._error(self.line + int(long[0]) + 1, piece[at:at + 24])
        self.line += piece.count(b"\n")
        self.length, self.start = 0, b""
        self._grow(piece[last + 1:])

    def _grow(self, part: bytes) -> None:
        if not self.length:
            self.start = part[:24]
        self.length += len(part)
        if self.length > self.limit.most:
            raise self._error(self.line, self.start)

    def _error(self, line: int, start: bytes) -> InputError:
        return InputError(f"lines of at most {self.limit.most:,} bytes ({self.limit.setting})", source=self.display,
                          line=line, text=start.decode("utf-8", "replace") + f"... (more than {self.limit.most:,} "
                                                                             "bytes)")


def _inflate_start(packed: bytes, size: int) -> bytes:
    """The first ``size`` bytes a gzip file inflates to (fewer when its first member is shorter), from its first
    compressed bytes; nothing when they are not gzip (reading the file whole then names the problem)."""
    try:
        return zlib.decompressobj(wbits=31).decompress(packed, size)
    except zlib.error:
        return b""


def _repair(raw: bytes) -> tuple[bytes, tuple[str, ...]]:
    """Drop a BOM and turn CRLF into LF, saying what was repaired."""
    repairs: list[str] = []
    if raw.startswith(b"\xef\xbb\xbf"):
        raw = raw[3:]
        repairs.append("removed a UTF-8 byte-order mark at the start of the file")
    if b"\r" in raw and not raw.startswith((b"PAR1", b"\x93NUMPY")):  # binary formats keep their bytes
        raw = raw.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
        repairs.append("converted CRLF line endings to LF")
    return raw, tuple(repairs)


def first_content_line(source: Source | bytes) -> str | None:
    """The first line of ``source`` (or of the first bytes of one) that is neither blank nor a ``#`` comment, as
    text: what format detection looks at, and what a message about a header shows."""
    data = source if isinstance(source, bytes) else source.head()
    for raw in io.BytesIO(data[:65536]):
        line = raw.decode("utf-8", "replace").strip("\n")
        if line.strip() and not line.lstrip().startswith("#"):
            return line
    return None


_quiet_lock = threading.Lock()
_quiet_handlers: dict[int, list[BaseException]] = {}
_hook_before = None


@contextmanager
def quiet_in_pyarrow(handler, failures: list[BaseException]) -> Iterator[None]:
    """While the block runs, pyarrow's "Exception ignored in ``handler``" reports land in ``failures``.

    pyarrow decodes an invalid row's text before calling ``invalid_row_handler``, and prints a
    traceback when that fails (bytes that are not UTF-8); every other report goes where it did.
    """
    global _hook_before
    with _quiet_lock:
        if not _quiet_handlers and sys.unraisablehook is not _record_unraisable:
            _hook_before = sys.unraisablehook  # never our own hook (someone may have restored it), or it recurses
        sys.unraisablehook = _record_unraisable
        _quiet_handlers[id(handler)] = failures
    try:
        yield
    finally:
        with _quiet_lock:
            _quiet_handlers.pop(id(handler), None)
            if not _quiet_handlers and sys.unraisablehook is _record_unraisable:
                sys.unraisablehook = _hook_before


def _record_unraisable(report) -> None:
    failures = _quiet_handlers.get(id(report.object))
    if failures is None:
        (_hook_before or sys.__unraisablehook__)(report)
    else:
        failures.append(report.exc_value)
