"""Doc ids kept as one Arrow string array, one entry per row, instead of Python objects.

A 10 M-line run names about 2 M distinct docs. A global dictionary of them (a hash table of
2 M strings, then 2 M Python ``str`` objects) was the largest cost of reading a run, yet
scoring only needs to know which rows hold a *labeled* doc (`IdArray.index_in`) and which
rows repeat a doc earlier in the same ranking (`repeated_rows`). Both use one 64-bit hash
per row (computed once, from the Arrow buffers, on two threads): repeats by sorting the
(query, hash) keys, labeled docs by looking the hashes up among the labels' few. Ids stay
exact strings throughout: a hash only proposes, string equality decides.

`IdArray` indexes like a NumPy object array (``ids[codes]`` gives an object array), so
code that reads ``run.doc_ids[codes]`` keeps working.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Callable, Iterable

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..errors import InputError
from .hash_sets import HashSet
from .sources import MAX_ID_ENV, max_id_chars

_M64 = np.uint64(0xFFFFFFFFFFFFFFFF)
_K_LEN = np.uint64(0x9E3779B97F4A7C15)
_K_WORD = np.uint64(0xBF58476D1CE4E5B9)
_K_MIX = np.uint64(0x94D049BB133111EB)
_PARALLEL_ROWS = 1 << 20
"""Below this many rows a kernel runs in the calling thread; above, on two halves at once."""


class IdArray:
    """Id strings as an Arrow string array; ``ids[i]``, ``ids[codes]``, ``len(ids)`` as NumPy.

    Integer arrays and boolean masks select like NumPy's fancy indexing and return object
    arrays of ``str``; ``ids[i]`` is one ``str``; ``np.asarray(ids)`` materialises all of them.
    """

    __slots__ = ("_values", "_hashes", "_starts")

    def __init__(self, values: pa.Array | pa.ChunkedArray | Iterable[str]) -> None:
        if not isinstance(values, (pa.Array, pa.ChunkedArray)):
            values = to_arrow_strings(values)
        if isinstance(values, pa.Array):
            values = pa.chunked_array([values], type=values.type)
        if not pa.types.is_string(values.type):
            values = values.cast(pa.string())
        self._values = values
        self._hashes: np.ndarray | None = None
        self._starts: np.ndarray | None = None  # first row of each chunk, for `take_arrow`

    @classmethod
    def hashed(cls, values: pa.Array | pa.ChunkedArray, hashes: np.ndarray) -> "IdArray":
        """Ids whose `hashes` are known already (`hash_strings` of the same strings, computed as they were read)."""
        ids = cls(values)
        if len(hashes) != len(ids):
            raise ValueError(f"{len(hashes)} hashes for {len(ids)} ids")
        ids._hashes = np.asarray(hashes, dtype=np.uint64)
        ids._hashes.flags.writeable = False
        return ids

    @property
    def arrow(self) -> pa.ChunkedArray:
        return self._values

    @property
    def dtype(self) -> np.dtype:
        return np.dtype(object)

    @property
    def shape(self) -> tuple[int]:
        return (len(self._values),)

    @property
    def ndim(self) -> int:
        return 1

    def __len__(self) -> int:
        return len(self._values)

    def __getitem__(self, key):
        if isinstance(key, (int, np.integer)):
            i = int(key)
            if i < 0:
                i += len(self)
            if not 0 <= i < len(self):
                raise IndexError(f"index {int(key)} is out of bounds for {len(self)} ids")
            return self._values[i].as_py()
        if isinstance(key, slice):
            return self._values[key].to_numpy(zero_copy_only=False).astype(object, copy=False)
        index = np.asarray(key)
        if index.dtype == bool:
            if index.shape != (len(self),):
                raise IndexError(f"boolean index of shape {index.shape} for {len(self)} ids")
            index = np.flatnonzero(index)
        elif not np.issubdtype(index.dtype, np.integer):
            if index.size:
                raise IndexError(f"ids are indexed by integers or a boolean mask, not {index.dtype}")
            index = index.astype(np.int64)
        return self.take(index)

    def take(self, index: np.ndarray) -> np.ndarray:
        """``ids[index]`` for an integer array of any shape (negative counts from the end)."""
        flat = np.asarray(index).reshape(-1).astype(np.int64, copy=False)
        if flat.size and (flat.min() < -len(self) or flat.max() >= len(self)):
            raise IndexError(f"an index is out of bounds for {len(self)} ids")
        if flat.size and flat.min() < 0:
            flat = np.where(flat < 0, flat + len(self), flat)
        picked = self.take_arrow(flat)
        out = picked.to_numpy(zero_copy_only=False).astype(object, copy=False)
        return out.reshape(np.shape(index))

    def take_arrow(self, index: np.ndarray) -> pa.Array:
        """The ids at non-negative ``index`` as one Arrow string array.

        Taken chunk by chunk: Arrow's own take on a chunked array first concatenates every
        chunk, a copy of all the ids (140 MB for 10 M rows) to pick a few.
        """
        index = np.asarray(index, dtype=np.int64)
        chunks = self._values.chunks
        if not len(index) or not chunks:
            return pa.array([], pa.string())
        if len(chunks) == 1:
            return chunks[0].take(pa.array(index))
        if self._starts is None:
            self._starts = np.cumsum([0] + [len(c) for c in chunks[:-1]], dtype=np.int64)
        which = np.searchsorted(self._starts, index, side="right") - 1
        in_order = bool((which[1:] >= which[:-1]).all())
        order = None if in_order else np.argsort(which, kind="stable")
        grouped = which if order is None else which[order]
        wanted = index if order is None else index[order]
        cuts = np.flatnonzero(grouped[1:] != grouped[:-1]) + 1
        pieces = [chunks[int(grouped[lo])].take(pa.array(wanted[lo:hi] - self._starts[grouped[lo]]))
                  for lo, hi in zip(np.r_[0, cuts], np.r_[cuts, len(wanted)])]
        picked = pa.concat_arrays(pieces) if len(pieces) > 1 else pieces[0]
        if order is None:
            return picked
        back = np.empty(len(order), dtype=np.int64)
        back[order] = np.arange(len(order))
        return picked.take(pa.array(back))

    def __array__(self, dtype=None, copy=None) -> np.ndarray:
        values = self._values.to_numpy().astype(object, copy=False)
        return values if dtype is None else values.astype(dtype)

    def __iter__(self):
        return iter(self._values.to_pylist())

    def tolist(self) -> list[str]:
        return self._values.to_pylist()

    def __repr__(self) -> str:
        return f"IdArray({len(self)} ids)"

    def index_in(self, values: Iterable[str]) -> np.ndarray:
        """Position (int32) of each id in ``values`` (distinct strings), -1 where it is not there.

        Matched on the ids' hashes (`hashes`, computed once per array) against the few values',
        then every match confirmed on the exact strings; if two values share a hash, one Arrow
        lookup over the strings answers instead.
        """
        value_set = to_arrow_strings(values)
        out = np.full(len(self), -1, dtype=np.int32)
        if not len(value_set) or not len(self):
            return out
        value_hashes = hash_strings(value_set)
        by_hash = np.argsort(value_hashes, kind="stable")
        sorted_hashes = value_hashes[by_hash]
        if (sorted_hashes[1:] == sorted_hashes[:-1]).any():
            return self._index_in_strings(value_set)
        rows, slot = HashSet(sorted_hashes).rows_in(self.hashes())
        found = by_hash[slot]
        same = pc.equal(self.take_arrow(rows), value_set.take(pa.array(found))).to_numpy(zero_copy_only=False)
        out[rows[same]] = found[same]
        return out

    def _index_in_strings(self, value_set: pa.Array) -> np.ndarray:
        """`index_in` by Arrow's hash lookup on the strings themselves."""

        def lookup(part: pa.ChunkedArray, out: np.ndarray) -> None:
            found = pc.fill_null(pc.index_in(part, value_set=value_set), -1)
            at = 0
            for chunk in found.chunks:
                out[at:at + len(chunk)] = chunk.to_numpy()
                at += len(chunk)

        return _by_halves(lookup, self._values, np.int32)

    def hashes(self) -> np.ndarray:
        """A 64-bit hash of every id (uint64), equal for equal strings; see `hash_strings`.

        Computed once and kept (8 bytes per row): duplicate detection and every label join
        of the run reuse it. Callers must not write into it.
        """
        if self._hashes is None:

            def hash_part(part: pa.ChunkedArray, out: np.ndarray) -> None:
                at = 0
                for chunk in part.chunks:
                    out[at:at + len(chunk)] = hash_strings(chunk)
                    at += len(chunk)

            self._hashes = _by_halves(hash_part, self._values, np.uint64)
            self._hashes.flags.writeable = False
        return self._hashes


def to_arrow_strings(values: Iterable[str]) -> pa.Array:
    """Python or NumPy strings as an Arrow string array (a clear error for text Arrow cannot hold)."""
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks()
    if isinstance(values, pa.Array):
        return values if pa.types.is_string(values.type) else values.cast(pa.string())
    if not isinstance(values, (list, tuple, np.ndarray)) and not hasattr(values, "to_numpy"):
        values = list(values)  # a pandas Series goes to Arrow as it is
    try:
        return pa.array(values, type=pa.string(), from_pandas=False)
    except (pa.ArrowException, UnicodeEncodeError) as exc:
        raise InputError(f"ids as text that UTF-8 can hold ({type(exc).__name__}: {exc})") from None


def hash_strings(strings: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """A 64-bit hash of each string of one Arrow string array, from its raw buffers.

    Each id is read 8 bytes at a time (little-endian, zero beyond its end) and folded with
    a multiply-xorshift step, the length mixed in first; equal strings always hash equal and
    distinct ones collide with probability about 2^-64 per pair. When every id has the same
    length (common: ``doc0012345``) the words are read with one strided view, no gather.
    Otherwise each step works on the rows still long enough, so the cost follows each id's
    own length; the last few long ids are finished one at a time.
    """
    if isinstance(strings, pa.ChunkedArray):
        strings = strings.combine_chunks()
    n = len(strings)
    if n == 0:
        return np.zeros(0, dtype=np.uint64)
    offset_type = np.int64 if pa.types.is_large_string(strings.type) else np.int32
    buffers = strings.buffers()
    width = np.dtype(offset_type).itemsize
    offsets = np.frombuffer(buffers[1], dtype=offset_type, count=n + 1, offset=strings.offset * width)
    lo, hi = int(offsets[0]), int(offsets[-1])
    padded = np.zeros(hi - lo + 8, dtype=np.uint8)
    if hi > lo:
        padded[:hi - lo] = np.frombuffer(buffers[2], dtype=np.uint8, count=hi - lo, offset=lo)
    lengths = np.diff(offsets)
    longest = int(lengths.max())
    h = lengths.astype(np.uint64) * _K_LEN
    if int(lengths.min()) == longest and n > _ONE_BY_ONE_ROWS:
        for w in range(0, longest, 8):
            word = np.ndarray(shape=(n,), dtype="<u8", buffer=padded, offset=w, strides=(longest,)).copy()
            if longest - w < 8:
                word &= np.uint64((1 << (8 * (longest - w))) - 1)
            _fold(h, word)
        return _mix(h)
    words = _unaligned_words(padded)
    rows = None  # the rows still hashed, once fewer than half are (None: every row)
    row_lengths = lengths
    row_starts = (offsets[:-1] - lo).astype(np.int64)
    shortest = int(lengths.min())
    for w in range(0, longest, 8):
        longer, count = None, len(row_lengths)
        if w >= shortest:  # a row with no bytes at w keeps its hash: it depends on the id alone
            longer = row_lengths > w
            count = int(np.count_nonzero(longer))
        if count <= _ONE_BY_ONE_ROWS or 2 * count <= len(row_lengths):
            if longer is not None:
                rows = np.flatnonzero(longer) if rows is None else rows[longer]
                row_lengths, row_starts = row_lengths[longer], row_starts[longer]
                shortest = int(row_lengths.min()) if len(row_lengths) else longest
            longer = None
        if count <= _ONE_BY_ONE_ROWS:
            at = np.arange(n) if rows is None else rows
            for row, start, length in zip(at.tolist(), row_starts.tolist(), row_lengths.tolist()):
                h[row] = _fold_one(int(h[row]), padded[start + w:start + length], length - w)
            break
        word = words[np.minimum(row_starts + w, len(words) - 1)]
        left = row_lengths - w
        partial = left < 8
        if partial.any():
            keep = np.clip(left, 0, 7).astype(np.uint64) * np.uint64(8)
            word &= np.where(partial, (np.uint64(1) << keep) - np.uint64(1), _M64)
        part = h if rows is None else h[rows]
        before = None if longer is None else part.copy()
        _fold(part, word)
        if before is not None:
            np.copyto(part, before, where=~longer)
        if rows is not None:
            h[rows] = part
    return _mix(h)


_ONE_BY_ONE_ROWS = 16
"""When no more rows than this are still being hashed, each is finished in a plain loop over its words."""
_MASK = (1 << 64) - 1


def _fold(h: np.ndarray, word: np.ndarray) -> None:
    """One step of the hash, in place: ``h = xorshift(h ^ word) * K``."""
    h ^= word
    h *= _K_WORD
    h ^= h >> np.uint64(31)


def _fold_one(h: int, tail: np.ndarray, left: int) -> int:
    """`_fold` over every remaining word of one id (``left`` bytes from a word boundary), as Python ints."""
    buffer = np.zeros(-(-left // 8) * 8, dtype=np.uint8)
    buffer[:left] = tail[:left]
    k = int(_K_WORD)
    for word in buffer.view("<u8").tolist():
        h = ((h ^ word) * k) & _MASK
        h ^= h >> 31
    return h


def _unaligned_words(padded: np.ndarray) -> np.ndarray:
    """A view giving the 8 bytes starting at every byte offset as one little-endian uint64."""
    return np.ndarray(shape=(len(padded) - 7,), dtype="<u8", buffer=padded, strides=(1,))


def _mix(h: np.ndarray) -> np.ndarray:
    """SplitMix64's finaliser, in place: every input bit reaches every output bit."""
    h ^= h >> np.uint64(30)
    h *= _K_WORD
    h ^= h >> np.uint64(27)
    h *= _K_MIX
    h ^= h >> np.uint64(31)
    return h


def mix64(h: np.ndarray) -> np.ndarray:
    """SplitMix64's finaliser on a copy of ``h`` (as uint64, wrapping): every input bit reaches every output bit."""
    return _mix(np.array(h, dtype=np.uint64, copy=True))


def repeated_rows(groups: np.ndarray, ids: IdArray, codes: np.ndarray | None = None, *,
                  hasher: Callable[[IdArray], np.ndarray] | None = None) -> np.ndarray | None:
    """Mask of rows whose id already appeared in an earlier row of the same group; None if none.

    Row ``i`` holds id ``ids[codes[i]]`` (``ids[i]`` when ``codes`` is None) in group
    ``groups[i]``; "earlier" is row order, so in a ranking the best-ranked copy is kept.
    A hash of (group, id) per row, sorted once, answers the common no-repeat case; rows whose
    hash repeats are then compared on the exact strings, so a hash collision never merges
    two distinct ids. ``hasher`` replaces `IdArray.hashes` (tests force collisions with it);
    it is only read.
    """
    n = len(groups)
    if n < 2:
        return None
    hashes = (hasher or IdArray.hashes)(ids)

    def pair_keys() -> np.ndarray:
        # The id hashes are already mixed: adding an odd multiple of the group keeps pairs apart.
        key = np.empty(n, dtype=np.uint64)
        np.multiply(groups, _K_LEN, out=key, dtype=np.uint64, casting="unsafe")
        np.add(key, hashes if codes is None else hashes[codes], out=key)
        return key

    ordered = pair_keys()
    ordered.sort()  # in place: no second copy of 8 bytes per row
    same = ordered[1:] == ordered[:-1]
    if not same.any():
        return None
    repeated_keys = np.unique(ordered[1:][same])
    del ordered, same
    key = pair_keys()
    slot = np.minimum(np.searchsorted(repeated_keys, key), len(repeated_keys) - 1)
    candidates = np.flatnonzero(repeated_keys[slot] == key)
    del key, slot
    rows = candidates if codes is None else np.asarray(codes)[candidates]
    strings = ids.take_arrow(rows)
    first = _first_of_each_pair(np.asarray(groups)[candidates], strings)
    mask = np.zeros(n, dtype=bool)
    mask[candidates[~first]] = True
    return mask if mask.any() else None


def first_repeat(ids: IdArray) -> tuple[int, int] | None:
    """(first row, repeating row) of the first id listed twice, in file order; None when all are distinct.

    The common case, every id distinct, is one sort of the ids' hashes; only a repeated hash (a repeat, or a
    collision the exact strings rule out) costs a permutation."""
    hashes = ids.hashes()
    ordered = np.sort(hashes)
    if not (ordered[1:] == ordered[:-1]).any():
        return None
    del ordered
    order = np.argsort(hashes, kind="stable")
    same = np.flatnonzero(hashes[order][1:] == hashes[order][:-1])
    pairs = [(int(order[i]), int(order[i + 1])) for i in same]
    exact = [(a, b) for a, b in pairs if ids[a] == ids[b]]  # a hash only proposes
    return min(exact, key=lambda pair: pair[1]) if exact else None


def _first_of_each_pair(groups: np.ndarray, strings: pa.Array) -> np.ndarray:
    """True where (group, string) appears for the first time in the given order."""
    table = pa.table({"g": pa.array(np.asarray(groups, dtype=np.int64)), "s": strings,
                      "i": pa.array(np.arange(len(groups), dtype=np.int64))})
    firsts = table.group_by(["g", "s"], use_threads=False).aggregate([("i", "min")])
    out = np.zeros(len(groups), dtype=bool)
    out[firsts["i_min"].to_numpy()] = True
    return out


def _by_halves(kernel: Callable[[pa.ChunkedArray, np.ndarray], None], values: pa.ChunkedArray,
               dtype: type) -> np.ndarray:
    """An array of ``dtype`` per row that ``kernel(part, out)`` fills, on two halves at once when large.

    Arrow's compute kernels and NumPy's whole-array operations release the GIL, so on two
    cores the halves run at the same time; the result is the same as one call.
    """
    n = len(values)
    out = np.empty(n, dtype=dtype)
    if n < _PARALLEL_ROWS:
        kernel(values, out)
        return out
    half = n // 2
    with ThreadPoolExecutor(max_workers=2) as pool:
        done = [pool.submit(kernel, values.slice(0, half), out[:half]),
                pool.submit(kernel, values.slice(half), out[half:])]
        for future in done:
            future.result()
    return out


def first_long_id(values: pa.Array | pa.ChunkedArray) -> int | None:
    """The first row holding an id longer than `max_id_chars`, or None (one kernel on the lengths in bytes)."""
    limit = max_id_chars()
    if not len(values) or _longest_in_bytes(values) <= limit:
        return None
    too_long = pc.greater(pc.utf8_length(values), limit)  # bytes over the limit; characters decide
    at = pc.index(too_long, True).as_py()
    return None if at < 0 else at


def _longest_in_bytes(values: pa.Array | pa.ChunkedArray, rows: int = 1 << 20) -> int:
    """The longest string's length in bytes, from the offsets buffer a million rows at a time: no lengths array
    the size of the column (40 MB for 10 M run rows) at the moment the reader's memory peaks."""
    longest = 0
    for chunk in values.chunks if isinstance(values, pa.ChunkedArray) else [values]:
        if pa.types.is_dictionary(chunk.type):
            chunk = chunk.dictionary
        if not len(chunk):
            continue
        offset_type = np.int64 if pa.types.is_large_string(chunk.type) or pa.types.is_large_binary(chunk.type) \
            else np.int32
        width = np.dtype(offset_type).itemsize
        offsets = np.frombuffer(chunk.buffers()[1], dtype=offset_type, count=len(chunk) + 1,
                                offset=chunk.offset * width)
        for start in range(0, len(chunk), rows):
            longest = max(longest, int(np.diff(offsets[start:start + rows + 1]).max()))
    return longest


def long_id_error(value: str, role: str, source: str | None, line: int | None, where: str = "line") -> InputError:
    """The error for an id past `max_id_chars`: the start of the id and its length."""
    return InputError(
        f"{role} of at most {max_id_chars():,} characters (set {MAX_ID_ENV} to allow longer)",
        source=source, line=line, text=f"{value[:40]}... ({len(value):,} characters)", where=where)


def used_ids(dictionary, codes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Query ids in order of first appearance, with codes into them; ids no row uses are dropped.

    Arrow's unified dictionary is normally in that order already; values only a dropped
    comment line used are what this puts right.
    """
    n = len(dictionary)
    values = np.asarray(dictionary.to_pylist(), dtype=object)
    if not len(codes):
        return np.zeros(0, dtype=object), codes
    # Rows of one query are usually contiguous: the first row of each stretch of equal codes suffices.
    starts = np.flatnonzero(np.concatenate([[True], codes[1:] != codes[:-1]]))
    used, first = np.unique(codes[starts], return_index=True)
    order = used[np.argsort(starts[first], kind="stable")]
    if len(order) == n and (order == np.arange(n)).all():
        return values, codes
    remap = np.full(n, -1, dtype=np.int32)
    remap[order] = np.arange(len(order), dtype=np.int32)
    return values[order], remap[codes]
