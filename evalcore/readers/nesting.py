"""How deep JSON lines nest, measured before a parser sees them: Arrow's JSON reader recurses once per level and a
line nested 10,000 deep (20 KB) ends the whole process with a segmentation fault, so a file is checked first.

`deepest_line` scans the bytes with numpy, a block at a time (memory bounded by the block, whatever the file), and
tracks only what decides nesting: brackets and braces outside strings, the quotes that open and close strings, the
backslashes that escape a quote, and the newlines that end a line (each line is its own JSON value, as the readers
take it). A line that turns invalid (a backslash outside a string, a raw newline inside one) may be measured
differently after that point, but a parser stops there, so what it would reach is measured exactly.
"""

from __future__ import annotations

import numpy as np

MAX_NESTING = 64
"""The deepest nesting a JSON line may have (a vector line has 2: an object holding a list of numbers)."""

BLOCK_BYTES = 1 << 20
"""Bytes scanned at once: the arrays of one block stay a few tens of MB even when every byte is a bracket."""

_OPEN, _CLOSE, _QUOTE, _BACKSLASH, _NEWLINE = 1, 2, 3, 4, 5
_KIND = np.zeros(256, dtype=np.int8)
_KIND[[ord("["), ord("{")]] = _OPEN
_KIND[[ord("]"), ord("}")]] = _CLOSE
_KIND[ord('"')] = _QUOTE
_KIND[ord("\\")] = _BACKSLASH
_KIND[ord("\n")] = _NEWLINE
_TABLE = _KIND.astype(np.uint8).tobytes()
"""`_KIND` as a `bytes.translate` table."""
_OPENS_TABLE = np.where((_KIND == _OPEN) | (_KIND == _NEWLINE), _KIND, 0).astype(np.uint8).tobytes()
"""Only the opening brackets and braces and the newlines, for `_few_opens`."""


def deepest_line(data: bytes | memoryview, limit: int = MAX_NESTING,
                 block_bytes: int = BLOCK_BYTES) -> tuple[int, int, int] | None:
    """The first line (1-based) whose nesting goes past ``limit``: (line, the depth reached there, the byte offset
    where it went past; the scan of a line stops at the first level past the limit). None when every line is within
    it."""
    if _few_opens(data, limit, block_bytes):
        return None
    line, depth, in_string, backslashes = 1, 0, False, 0  # the state where the block starts
    for start in range(0, len(data), block_bytes):
        block = bytes(data[start:start + block_bytes])
        kinds = np.frombuffer(block.translate(_TABLE), dtype=np.int8)  # each byte's kind, 0 for most
        pos = np.flatnonzero(kinds.view(np.bool_))  # a scan for non-zero bytes, twice as fast as on int8
        kinds = kinds[pos]
        found, line, depth, in_string, backslashes = _scan(pos, kinds, len(block), line, depth, in_string,
                                                           backslashes, limit)
        if found is not None:
            return found[0], found[1], start + found[2]
    return None


def _few_opens(data: bytes | memoryview, limit: int, block_bytes: int) -> bool:
    """True when no line holds more than ``limit`` opening brackets and braces, in strings or not: a line starts at
    depth 0, so none can then nest past ``limit``. The common case, and it needs only those bytes and the newlines
    looked at (a tenth of the full scan's work on lines of short strings)."""
    carried = 0  # the opens of the line the block before ended in
    for start in range(0, len(data), block_bytes):
        block = bytes(data[start:start + block_bytes])
        kinds = np.frombuffer(block.translate(_OPENS_TABLE), dtype=np.int8)
        kinds = kinds[np.flatnonzero(kinds.view(np.bool_))]
        if not len(kinds):
            continue
        newline = kinds == _NEWLINE
        segment = np.cumsum(newline)  # the line (0: the carried one) of each byte; a newline starts the next
        counts = np.bincount(segment[~newline], minlength=int(segment[-1]) + 1)
        counts[0] += carried
        if counts.max() > limit:
            return False
        carried = int(counts[-1])
    return True


def _scan(pos: np.ndarray, kinds: np.ndarray, size: int, line: int, depth: int, in_string: bool, backslashes: int,
          limit: int) -> tuple[tuple[int, int, int] | None, int, int, bool, int]:
    """One block's structural bytes (positions and kinds), with the state carried in from the block before: the
    first line past ``limit`` (line, depth, offset in the block; or None), then the state carried out."""
    n = len(pos)
    if n == 0:  # no backslash either: a streak carried in ends here
        return None, line, depth, in_string, 0
    index = np.arange(n)
    # A backslash streak's length up to each backslash, the streak carried in counted when the block starts
    # with it.
    is_bs = kinds == _BACKSLASH
    follows = np.zeros(n, dtype=bool)
    follows[1:] = is_bs[1:] & is_bs[:-1] & (pos[1:] - pos[:-1] == 1)
    streak_start = np.maximum.accumulate(np.where(is_bs & ~follows, index, 0))
    streak = np.where(is_bs, index - streak_start + 1, 0)
    if backslashes and is_bs[0] and pos[0] == 0:
        streak[(streak_start == 0) & is_bs] += backslashes
    # A quote is escaped when the bytes right before it are an odd streak of backslashes.
    before = np.zeros(n, dtype=np.int64)
    before[1:] = np.where(pos[1:] - pos[:-1] == 1, streak[:-1], 0)
    if pos[0] == 0:
        before[0] = backslashes
    quote = (kinds == _QUOTE) & (before % 2 == 0)
    # Lines: a newline ends one; the block's first line continues the one carried in.
    newline = kinds == _NEWLINE
    segment = np.cumsum(newline) - newline  # the line (0: the carried one) each structural byte belongs to
    line_start = np.maximum.accumulate(np.where(newline, index + 1, 0))  # the first byte after the latest newline
    quotes_before = np.cumsum(quote) - quote
    in_str = (quotes_before - _at(quotes_before + quote, line_start - 1)) % 2 == 1
    in_str ^= (segment == 0) & in_string
    # Depth: brackets outside strings, counted from each line's start (the carried depth for the first line).
    step = np.where(in_str, 0, np.where(kinds == _OPEN, 1, np.where(kinds == _CLOSE, -1, 0)))
    total = np.cumsum(step)
    level = total - _at(total, line_start - 1) + np.where(segment == 0, depth, 0)
    past = np.flatnonzero(level > limit)
    if len(past):
        first = int(past[0])
        return (line + int(segment[first]), int(level[first]), int(pos[first])), line, depth, in_string, backslashes
    ends = int(newline.sum())
    last = n - 1
    carried_depth = int(level[last]) if not newline[last] else 0
    carried_string = bool(in_str[last] ^ quote[last]) if not newline[last] else False
    carried_streak = int(streak[last]) if is_bs[last] and pos[last] == size - 1 else 0
    return None, line + ends, carried_depth, carried_string, carried_streak


def _at(values: np.ndarray, where: np.ndarray) -> np.ndarray:
    """``values[where]``, 0 where ``where`` is -1 (before the block's first byte)."""
    return np.where(where >= 0, values[np.maximum(where, 0)], 0)
