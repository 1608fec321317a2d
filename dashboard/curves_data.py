"""The Overview's numbers: intervals and paired comparisons at every k (computed once, in the background),
the summary at one k until they are ready, and the caveats beside each run's recall@k.

Keyed on content hashes as `dashboard.data` is; every number comes from `evalcore.analyses.curves` and
`evalcore.analyses.coverage`.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

import pandas as pd
import streamlit as st

from evalcore.analyses.compare import ComparisonReport

from dashboard import data
from dashboard.store import Dataset


MORE_METRICS = ("recall", "hit", "precision", "ndcg", "judged")
"""Every cutoff metric: what the Overview shows with "every metric" on. Without it, recall@k and MRR."""


_CURVES: "OrderedDict[tuple[str, bool], Future]" = OrderedDict()
_CURVES_LOCK = threading.Lock()
_CURVES_POOL = ThreadPoolExecutor(max_workers=1, thread_name_prefix="evalcore-curves")
_CURVES_KEPT = 4


def _curves_future(dataset: Dataset, more: bool) -> Future | None:
    """The all-k computation for ``dataset``, started once in a background thread (keyed by content)."""
    from evalcore.analyses.curves import interval_curves

    key = (dataset.key, bool(more))
    with _CURVES_LOCK:
        future = _CURVES.get(key)
        if future is not None:
            _CURVES.move_to_end(key)
            return future
    loaded = data.evaluation(dataset)
    if not loaded.ok:
        return None
    with _CURVES_LOCK:
        future = _CURVES.get(key)
        if future is None:
            future = _CURVES_POOL.submit(data.load, interval_curves, loaded.value,
                                         metrics=MORE_METRICS if more else ("recall",), max_k=data.DEPTH)
            _CURVES[key] = future
            while len(_CURVES) > _CURVES_KEPT:
                _CURVES.popitem(last=False)
    return future


def curves(dataset: Dataset, more: bool = False, *, wait: bool = True) -> data.Loaded | None:
    """`evalcore.analyses.curves.interval_curves` once per data set: intervals and comparisons at every k 1..`DEPTH`.

    Changing k then only looks numbers up; they equal ``evalcore evaluate --k 1,k`` and
    ``evalcore compare`` at that k exactly. ``more`` adds hit, precision, nDCG and judged
    (precision@k and judged@k change at almost every k, so they cost more). Each entry keeps
    the resampled sums paired tests need, about 16 MB per run with 10,000 queries, so few are kept.

    The computation runs in a background thread (seconds for 10,000 queries x 5 runs), so a
    page does not wait on every k to show one: with ``wait=False`` this returns None until it
    is done, and the page computes the one k it shows directly (`summary`, `comparison`).
    """
    future = _curves_future(dataset, more)
    if future is None:
        return data.evaluation(dataset)
    if not wait and not future.done():
        return None
    return future.result()


def curves_if_ready(dataset: Dataset, more: bool = False) -> data.Loaded | None:
    """`curves` if they are computed already, else None; never starts them (the Overview starts them after its
    first chart, so that chart does not share the CPU with them)."""
    with _CURVES_LOCK:
        future = _CURVES.get((dataset.key, bool(more)))
    return future.result() if future is not None and future.done() else None


@st.cache_resource(max_entries=64, show_spinner=False, hash_funcs=data.HASH)
def summary(dataset: Dataset, k: int, more: bool = False) -> pd.DataFrame:
    """`Evaluation.summary` at ``--k 1,k`` (recall and MRR rows only unless ``more``; shared, never changed).

    Looked up in `curves` once they are ready; until then computed for this k alone from the
    deep evaluation (the same numbers: one bootstrap draw per seed, whatever the columns).
    """
    loaded = curves_if_ready(dataset, more)
    if loaded is not None:
        return loaded.value.summary((1, int(k))) if loaded.ok else pd.DataFrame()
    deep = data.evaluation(dataset)
    return summary_at(deep.value, k, more) if deep.ok else pd.DataFrame()


def summary_at(deep: Any, k: int, more: bool = False) -> pd.DataFrame:
    """`summary` for one k without the curves: the deep evaluation listed at ``--k 1,k``."""
    frame = deep.at((1, int(k))).summary
    if not more:
        frame = frame[frame["metric"].map(lambda m: m.split("@")[0] in ("recall", "mrr"))].reset_index(drop=True)
    return frame


@st.cache_resource(max_entries=64, show_spinner=False, hash_funcs=data.HASH)
def comparison(dataset: Dataset, k: int, baseline: str) -> ComparisonReport | None:
    """Every run against ``baseline`` on recall@1, recall@k and MRR (paired, Holm-corrected), from `curves`.

    This waits for the curves (they hold the resampled sums the tests need; computing the tests
    for one k beside them would do the same work twice). The page shows it below its first chart."""
    deep = data.evaluation(dataset)
    if not deep.ok or len(deep.value.results) < 2:
        return None
    loaded = curves(dataset)
    return loaded.value.comparison(int(k), baseline) if loaded.ok else None


@st.cache_resource(max_entries=8, show_spinner=False, hash_funcs=data.HASH)
def _caveats_every_k(dataset: Dataset) -> dict[int, dict[str, dict]]:
    """`evalcore.analyses.coverage.number_caveats` for every k 1..`DEPTH` at once (about the cost of one k), per data set:
    k -> run -> its row (a k change is a lookup; shared, never changed)."""
    from evalcore.analyses.coverage import number_caveats

    loaded = data.evaluation(dataset)
    if not loaded.ok:
        return {}
    every = number_caveats(loaded.value, range(1, min(r.depth for r in loaded.value.results) + 1))
    out: dict[int, dict[str, dict]] = {}
    for row in every.to_dict("records"):
        out.setdefault(int(row["k"]), {})[row["run"]] = row
    return out


def caveats(dataset: Dataset, k: int) -> dict[str, dict]:
    """Per run, what to know about its recall@k: the share of blind labels behind it, and whether k goes deeper
    than the judgments cover, with bounds (`evalcore.analyses.coverage.number_caveats` on the scored evaluation)."""
    return _caveats_every_k(dataset).get(int(k), {})


CAVEAT_HELP = {
    "blind share": "Share of this row's n queries whose labels were judged blind (without seeing any system's "
                   "ranking; the labels' blind field). Empty: the labels have no blind field.",
    "judged depth": "Whether k goes deeper than the judgments cover: covered to k = the deepest k where at least 90% "
                    "of the returned docs are judged, on the queries whose judged depth is known (a doc judged "
                    "non-relevant, as a blind judging round records). Labels listing only relevant docs leave it "
                    "unknown.",
    "bounds": "When k goes deeper than judged: recall@k with the unjudged docs of the top k counted as non-relevant "
              "(the number shown) and as relevant.",
}


def caveat_cells(row: dict | None, k: int) -> dict:
    """The Overview's cells for one run's row of `caveats`: blind share, judged depth at k, bounds when flagged."""
    if row is None:
        return {}
    covered = None if pd.isna(row["covered_k"]) else int(row["covered_k"])
    reach = "under 90% judged even at k = 1" if covered == 0 else f"covered to k = {covered}"
    if row["flagged"]:
        depth = f"deeper than judged ({reach})"
    elif covered is None:
        depth = "unknown: labels list only relevant docs"
    else:
        depth = f"within judged depth ({reach})"
    return {"blind share": float(row["blind_share"]) if row["blind_known"] else None,
            f"recall@{k} judged depth": depth,
            f"recall@{k} bounds": f"{row['low']:.3f} – {row['high']:.3f}" if row["flagged"] else None}
