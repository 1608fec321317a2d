"""What "failed at k" means: one definition for every page, command, report and the failure ledger.

A query can fail at k in two senses, and each surface names which one it counts:

* ``any`` - **missed a relevant doc**: some relevant doc is outside the top k (recall@k < 1).
* ``none`` - **found nothing relevant**: no relevant doc in the top k at all (hit@k = 0).

Every query that found nothing also missed a relevant doc, so the ``none`` count is never larger.
The failure ledger (`evalcore.store.ledger`) and the meeting report count ``none``: a regression is a
query that used to find something and now finds nothing. The Failures list starts on ``any``.
"""

from __future__ import annotations

import numpy as np

from ..errors import invalid_parameter

MISS_MODES: dict[str, str] = {
    "any": "missed a relevant doc (some relevant doc outside the top k)",
    "none": "found nothing relevant (no relevant doc in the top k at all)",
}
"""The two meanings of "failed at k", by the name the API, the CLI and the URL use."""

MISS_NAMES: dict[str, str] = {"any": "missed a relevant doc", "none": "found nothing relevant"}
"""The short name of each meaning, as sentences use it ("22 of 224 queries found nothing relevant at k = 10")."""

LEDGER_MODE = "none"
"""The meaning the failure ledger and the report count: a query the run found nothing relevant for."""


def check_mode(mode: str) -> str:
    """``mode`` if it names a meaning of failure, else the usage error every surface shows."""
    if mode not in MISS_MODES:
        raise invalid_parameter("mode", "'any' (some relevant doc outside the top k) or 'none' "
                                        "(no relevant doc in the top k)", mode)
    return mode


def failed_at_k(found: np.ndarray, n_relevant: np.ndarray, mode: str) -> np.ndarray:
    """Per query, whether it failed at k: ``found`` relevant docs in the top k out of ``n_relevant``."""
    found = np.asarray(found)
    return found < np.asarray(n_relevant) if check_mode(mode) == "any" else found == 0
