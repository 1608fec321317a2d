"""What "failed at k" means: one definition for every page, command, report and the failure ledger.

A query can fail at k in two senses, and each surface names which one it counts:

* ``any`` - **missed a relevant doc**: some relevant doc is outside the top k (recall@k < 1).
* ``none`` - **found nothing relevant**: no relevant doc in the top k at all (hit@k = 0).

With evidence spans and chunks placed in their documents there is a third kind:

* ``fragment`` - **only a fragment**: a relevant document is in the top k, but its chunks there hold under half
  the query's evidence (evidence_recall@k < 0.5): the chunk was relevant but too small to answer.

Every query that found nothing also missed a relevant doc, so the ``none`` count is never larger.

**A failure is a query that found nothing relevant** (`FAILURE_MODE` = ``none``): the customer's answer is not in
the prompt at all. Every count called "failures" (the Failures page's headline and list, the failure ledger, History,
the meeting report, Present and the command line) counts these, so one word has one number. A regression is a query
that used to find something and now finds nothing. The other two kinds keep their own names ("missed a relevant
doc", "got only a fragment") wherever a person asks for them.
"""

from __future__ import annotations

import numpy as np

from ..errors import UsageError, invalid_parameter

MISS_MODES: dict[str, str] = {
    "any": "missed a relevant doc (some relevant doc outside the top k)",
    "none": "found nothing relevant (no relevant doc in the top k at all)",
    "fragment": "got only a fragment (a relevant document in the top k, but under half the evidence)",
}
"""The meanings of "failed at k", by the name the API, the CLI and the URL use (``fragment`` only with evidence)."""

FRAGMENT_BELOW = 0.5
"""A query is a fragment at k when a relevant document is found but evidence_recall@k is under this."""

MISS_NAMES: dict[str, str] = {"any": "missed a relevant doc", "none": "found nothing relevant",
                              "fragment": "got only a fragment"}
"""The short name of each meaning, as sentences use it ("22 of 224 queries found nothing relevant at k = 10")."""

FAILURE_MODE = "none"
"""What "failure" means on every surface: a query the run found nothing relevant for in its top k."""


def check_mode(mode: str) -> str:
    """``mode`` if it names a meaning of failure, else the usage error every surface shows."""
    if mode not in MISS_MODES:
        raise invalid_parameter("mode", "'any' (some relevant doc outside the top k), 'none' (no relevant doc in "
                                        "the top k) or 'fragment' (found, but under half the evidence)", mode)
    return mode


def failed_at_k(found: np.ndarray, n_relevant: np.ndarray, mode: str,
                evidence: np.ndarray | None = None) -> np.ndarray:
    """Per query, whether it failed at k: ``found`` relevant docs in the top k out of ``n_relevant`` (and, for
    ``fragment``, ``evidence``: each query's evidence_recall@k, NaN where it has no spans, which is never a
    fragment)."""
    found = np.asarray(found)
    mode = check_mode(mode)
    if mode == "any":
        return found < np.asarray(n_relevant)
    if mode == "none":
        return found == 0
    if evidence is None:
        raise UsageError("Fragments need evidence: labels with evidence spans (start and end) and chunks placed "
                         "in their documents.")
    with np.errstate(invalid="ignore"):
        return (found > 0) & (np.asarray(evidence, dtype=np.float64) < FRAGMENT_BELOW)
