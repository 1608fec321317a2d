"""Generated vectors with a planted structure, shared by the vector tests: each query lies near its relevant docs,
and the first dimensions carry most of the signal (as in Matryoshka-trained models), so truncation costs a little."""

from __future__ import annotations

import numpy as np
import pandas as pd

from evalcore.readers.labels import read_labels
from evalcore.readers.vectors import Vectors


def planted(n_docs: int = 1500, n_queries: int = 60, dims: int = 48, seed: int = 0, noise: float = 0.9):
    """(query Vectors, doc Vectors, LabelSet): query i is a noisy copy of docs 2i and 2i+1 (its relevant docs)."""
    rng = np.random.default_rng(seed)
    weight = np.linspace(1.5, 0.3, dims).astype(np.float32)  # earlier dims matter more
    docs = rng.standard_normal((n_docs, dims)).astype(np.float32) * weight
    centres = (docs[0:2 * n_queries:2] + docs[1:2 * n_queries:2]) / 2
    queries = (centres + noise * rng.standard_normal(centres.shape).astype(np.float32) * weight).astype(np.float32)
    doc_ids = np.array([f"d{i:05d}" for i in rng.permutation(n_docs)], dtype=object)  # id order is not row order
    query_ids = np.array([f"q{i:03d}" for i in range(n_queries)], dtype=object)
    rows = [(q, doc_ids[2 * i + j]) for i, q in enumerate(query_ids) for j in (0, 1)]
    labels = read_labels(pd.DataFrame(rows, columns=["query", "doc_id"]), name="planted")
    return Vectors("queries.npy", query_ids, queries), Vectors("docs.npy", doc_ids, docs), labels


def ranked(scores: np.ndarray, doc_ids: np.ndarray, depth: int) -> list[int]:
    """Row numbers of the best ``depth`` docs, sorting ALL docs: score descending, then doc id descending."""
    order = sorted(range(len(scores)), key=lambda i: (-scores[i], _desc(doc_ids[i])))
    return order[:depth]


class _desc(str):
    """A string that sorts in reverse."""

    def __lt__(self, other: str) -> bool:
        return str.__gt__(self, other)
