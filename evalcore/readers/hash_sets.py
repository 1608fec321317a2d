"""A set of 64-bit id hashes, for finding which of millions of hashes are in it, and where.

A chunk map of 5 million rows is filtered down to the million chunks a run names, and a run's chunks are then found
among those kept: each a million lookups or more. A pandas hash table of the set costs about 32 bytes a value and a
binary search over the sorted values a cache miss per step; here the values stay sorted, and two small arrays find
them instead:

* a bitmap of the values' top bits (16 to 32 bits a value) rules out all but 3 to 6% of the hashes that are not in
  the set with one gather;
* a directory of buckets (the values sharing their top bits, about one value each) gives where each bucket starts in
  the sorted values, so a hash is compared with the one or two values of its bucket.

Hashes are `evalcore.readers.ids.hash_strings` values: well mixed, so the top bits spread evenly.
"""

from __future__ import annotations

import numpy as np


_SLICE = 1 << 20
"""Hashes looked up at a time (a run of 10 million rows is looked up in ten slices)."""
_DEEPEST = 32
"""Buckets are searched a value per round; a set whose hashes crowd one bucket past this (not hash_strings values:
a test's, or an adversary's) is binary-searched instead."""


def distinct_sorted(hashes: np.ndarray) -> np.ndarray:
    """The distinct values of ``hashes``, sorted (by a sort: NumPy's own unique hashes, several times slower here)."""
    ordered = np.sort(hashes)
    return ordered[np.r_[True, ordered[1:] != ordered[:-1]]] if len(ordered) else ordered


class HashSet:
    """Distinct 64-bit hashes, sorted (`values`), with `positions` finding any array of hashes among them."""

    def __init__(self, hashes: np.ndarray) -> None:
        """The set of ``hashes`` (uint64, any order, repeats allowed)."""
        self.values = distinct_sorted(np.asarray(hashes, dtype=np.uint64))
        size_bits = max(int(len(self.values)).bit_length(), 1)
        bitmap_bits, bucket_bits = min(size_bits + 4, 30), min(size_bits + 1, 27)
        self._bitmap_shift, self._bucket_shift = np.uint64(64 - bitmap_bits), np.uint64(64 - bucket_bits)
        self._bitmap = np.zeros(1 << (bitmap_bits - 3), dtype=np.uint8)
        if len(self.values):
            self._set_bits((self.values >> self._bitmap_shift).astype(np.intp))
        counts = np.bincount((self.values >> self._bucket_shift).astype(np.intp), minlength=1 << bucket_bits)
        self._starts = np.zeros(len(counts) + 1, dtype=np.int32 if len(self.values) < 2**31 else np.int64)
        np.cumsum(counts, out=self._starts[1:])
        self._deep = int(counts.max()) > _DEEPEST

    def _set_bits(self, slots: np.ndarray) -> None:
        """Set the bitmap's bits at ``slots`` (ascending, not empty): one OR per byte, reduced over the slots sharing
        it."""
        byte = slots >> 3
        starts = np.flatnonzero(np.r_[True, byte[1:] != byte[:-1]])
        self._bitmap[byte[starts]] = np.bitwise_or.reduceat(np.left_shift(1, slots & 7).astype(np.uint8), starts)

    def __len__(self) -> int:
        return len(self.values)

    def maybe(self, hashes: np.ndarray) -> np.ndarray:
        """Positions in ``hashes`` that may be in the set (by the bitmap): every one that is, and a few percent of
        the others."""
        slot = (hashes >> self._bitmap_shift).astype(np.intp)
        return np.flatnonzero((self._bitmap[slot >> 3] >> (slot & 7).astype(np.uint8)) & 1)

    def positions(self, hashes: np.ndarray) -> np.ndarray:
        """Where each of ``hashes`` is in `values` (int64), -1 where it is not in the set. For hashes that are
        mostly in the set (a run's ids among the chunks kept for it)."""
        out = np.empty(len(hashes), dtype=np.int64)
        for start in range(0, len(hashes), _SLICE):  # a slice at a time: the temporaries stay small
            out[start:start + _SLICE] = self._in_buckets(hashes[start:start + _SLICE])
        return out

    def rows_in(self, hashes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The positions in ``hashes`` of those in the set (ascending), and where each is in `values`. For hashes
        that are mostly not (a map's rows, most of them chunks no run names): the bitmap rules those out first."""
        rows, places = [np.zeros(0, dtype=np.intp)], [np.zeros(0, dtype=np.int64)]
        for start in range(0, len(hashes), _SLICE):
            part = hashes[start:start + _SLICE]
            maybe = self.maybe(part)
            at = self._in_buckets(part[maybe])
            found = at >= 0
            rows.append(maybe[found] + start)
            places.append(at[found])
        return np.concatenate(rows), np.concatenate(places)

    def _in_buckets(self, hashes: np.ndarray) -> np.ndarray:
        """Where each of ``hashes`` is in `values`, -1 where not: compared with the first value of its bucket, all
        at once, then the few left with the second value of theirs, and so on (a bucket holds few)."""
        if not len(self.values):
            return np.full(len(hashes), -1, dtype=np.int64)
        if self._deep:
            at = np.minimum(np.searchsorted(self.values, hashes), len(self.values) - 1)
            return np.where(self.values[at] == hashes, at, -1)
        bucket = (hashes >> self._bucket_shift).astype(np.intp)
        at, end = self._starts[bucket], self._starts[bucket + 1]
        same = (self.values[np.minimum(at, len(self.values) - 1)] == hashes) & (at < end)
        out = np.where(same, at, -1).astype(np.int64, copy=False)
        rows = np.flatnonzero(~same & (end - at > 1))
        at, end = at[rows].astype(np.int64) + 1, end[rows]
        while len(rows):
            same = self.values[at] == hashes[rows]
            out[rows[same]] = at[same]
            at += 1
            on = ~same & (at < end)
            rows, at, end = rows[on], at[on], end[on]
        return out
