"""The results the log gave the sampled queries as a run named ``production``: what customers were shown, scored
against the labels the sample becomes like any other run (``evalcore evaluate --run production=FILE``).

A TREC run, one line per logged result: ``query_id Q0 doc_id rank score production``. The query ids are the queries
file's (``log-`` and a hash of the text, `evalcore.logs.sampling.query_id`), so the run meets the label-set version
the judged sample is frozen into. The results are each query's most recent logged search's, in the order logged
(`evalcore.logs.logged_docs`): rank 1 first, the score `MAX_IDS` + 1 - rank, falling with the rank, so every
reader ranks them as logged. A query whose latest search found nothing, or whose results the log does not list,
has no line: scored, it retrieves nothing, as it did for the customer.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from ..errors import InputError
from .id_lists import MAX_IDS

PRODUCTION = "production"
"""The run's name (its TREC tag)."""


def production_frame(sample: list[dict]) -> pd.DataFrame:
    """One row per logged result of a sampled query (`evalcore.logs.sampling.LogSample.sample`'s rows): query,
    doc_id, rank, score; empty when the log lists no results for any of them."""
    lists = [r.get("logged_doc_ids") or [] for r in sample]
    sizes = np.array([len(docs) for docs in lists], dtype=np.int64)
    starts = np.cumsum(sizes) - sizes
    rank = np.arange(int(sizes.sum()), dtype=np.int64) - np.repeat(starts, sizes) + 1
    return pd.DataFrame({"query": np.repeat(np.array([r["query_id"] for r in sample], dtype=object), sizes),
                         "doc_id": np.array([d for docs in lists for d in docs], dtype=object),
                         "rank": rank, "score": MAX_IDS + 1 - rank},
                        columns=["query", "doc_id", "rank", "score"])


def production_text(sample: list[dict]) -> str:
    """The run as TREC text (``query_id Q0 doc_id rank score production`` a line); empty without results."""
    frame = production_frame(sample)
    if frame.empty:
        return ""
    return "\n".join(frame["query"] + " Q0 " + frame["doc_id"] + " " + frame["rank"].astype(str) + " "
                     + frame["score"].astype(str) + f" {PRODUCTION}") + "\n"


def write_production_run(sample: list[dict], path: str) -> int:
    """Write the run at ``path``; the lines written (nothing is written when there are none)."""
    text = production_text(sample)
    if not text:
        return 0
    try:
        Path(path).write_text(text, encoding="utf-8", newline="")
    except OSError as exc:
        raise InputError(f"a file that can be written ({exc.strerror})", source=path) from None
    return text.count("\n")
