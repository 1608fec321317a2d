"""Near-duplicate queries merged: ``reset pasword`` and ``how do i export my data?`` are the queries ``reset
password`` and ``how do i export my data``, and one of them is enough to label.

Two normalised queries are near-duplicates when the Jaccard similarity of their character 3-grams (the text padded
with a space each side) is at least `THRESHOLD` (0.8: a typo or a punctuation mark in a short query, a word order
swapped; ``iphone 14`` and ``iphone 15``, 0.64, stay apart). Candidates come from MinHash LSH (datasketch, seeded,
each 3-gram hashed with CRC-32, so the same on every run and machine), its bands set so that few pairs at the
threshold are missed (`BANDS`); each candidate's similarity is then computed exactly.

Merging is leader clustering, which never chains: queries are taken most frequent first, and each one not yet
merged leads a group and takes in its unmerged near-duplicates. The group's text is its leader's (the spelling
most customers typed) and its count the sum of its members'.

Bounded: one MinHash per distinct query is a loop in Python (about 0.1 ms each), so only the `MAX_QUERIES` most
frequent distinct queries are looked at; the rest (each logged once or so, in a log of millions) stay as they are,
and the count looked at is reported.
"""

from __future__ import annotations

from dataclasses import dataclass

import zlib

import numpy as np
from datasketch import MinHash, MinHashLSH

THRESHOLD = 0.8
"""Jaccard similarity of character 3-grams at which two queries are the same query."""
MAX_QUERIES = 50_000
"""The most frequent distinct queries looked at for near-duplicates."""
NUM_PERM = 64
BANDS = (12, 5)
"""LSH bands and rows per band (60 of the 64 permutations): a pair of similarity 0.8 is a candidate 99.2% of the time,
0.88 99.99%, 0.5 32% (LSH tuned to 0.8 itself would miss a pair at 0.8 one time in two); each candidate is then
checked exactly."""
SHINGLE = 3
MAX_CHARS = 512
"""Characters of a query shingled (a longer one is compared on its start)."""


@dataclass(frozen=True)
class Merged:
    """``leader[i]``: the index of the query that query ``i`` was merged into (``i`` itself for a leader or a query
    not looked at); ``looked_at``: how many distinct queries were compared."""

    leader: np.ndarray
    looked_at: int

    @property
    def groups(self) -> int:
        """Groups of two or more queries."""
        followers = self.leader[self.leader != np.arange(len(self.leader))]
        return int(len(np.unique(followers)))

    @property
    def merged(self) -> int:
        """Queries merged into another."""
        return int((self.leader != np.arange(len(self.leader))).sum())


def shingles(text: str) -> set[str]:
    padded = f" {text[:MAX_CHARS]} "
    return {padded[i:i + SHINGLE] for i in range(max(1, len(padded) - SHINGLE + 1))}


def jaccard(a: set[str], b: set[str]) -> float:
    shared = len(a & b)
    return shared / (len(a) + len(b) - shared) if a or b else 1.0


def merge_near_duplicates(texts: list[str], counts: np.ndarray, threshold: float = THRESHOLD,
                          max_queries: int = MAX_QUERIES) -> Merged:
    """Leader clustering of ``texts`` (distinct normalised queries, ``counts`` how often each was logged): see the
    module docs. ``threshold`` 1 (or more) merges nothing."""
    n = len(texts)
    leader = np.arange(n)
    if n < 2 or threshold >= 1:
        return Merged(leader, 0)
    order = np.lexsort((np.arange(n), -np.asarray(counts)))[:max_queries]
    sets = [shingles(texts[i]) for i in order]
    hashes = MinHash.bulk([[s.encode("utf-8") for s in shingle] for shingle in sets], num_perm=NUM_PERM, seed=1,
                          hashfunc=zlib.crc32)
    lsh = MinHashLSH(num_perm=NUM_PERM, params=BANDS)
    with lsh.insertion_session() as session:
        for position, minhash in enumerate(hashes):
            session.insert(position, minhash, check_duplication=False)
    taken = np.zeros(len(order), dtype=bool)
    sizes = [len(shingle) for shingle in sets]
    for position, minhash in enumerate(hashes):
        if taken[position]:
            continue
        taken[position] = True
        size = sizes[position]
        for other in sorted(lsh.query(minhash)):
            if taken[other] or min(size, sizes[other]) < threshold * max(size, sizes[other]):
                continue  # taken, or of sizes too far apart to reach the threshold
            if jaccard(sets[position], sets[other]) >= threshold:
                taken[other] = True
                leader[order[other]] = order[position]
    return Merged(leader, len(order))
