"""The Overview's checks in plain words, one sentence per run: how many of its queries were judged blind, and whether
k reads deeper than the judgments cover (with the range the true number lies in).

The numbers are `evalcore.analyses.coverage.number_caveats`' rows; the Integrity page says these sentences, and the
Overview shows the same checks as columns behind "Show every check".
"""

from __future__ import annotations

from typing import Mapping

import pandas as pd

from .headlines import percent


def check_sentence(row: Mapping) -> str:
    """One run's checks at k in a sentence a product manager can read aloud (``row``: a `number_caveats` row)."""
    run, metric, k, n = row["run"], row["metric"], int(row["k"]), int(row["n"])
    parts = []
    if row["blind_known"]:
        parts.append(f"{percent(float(row['blind_share']))} of its {n:,} queries were judged blind (without seeing "
                     "any system's ranking)")
    else:
        parts.append("the labels do not say which queries were judged blind")
    covered = None if pd.isna(row["covered_k"]) else int(row["covered_k"])
    if covered is None:
        parts.append(f"whether k = {k} goes deeper than the judgments is unknown: the labels list only relevant docs")
    elif row["flagged"]:
        reach = ("not even the first result is 90% judged" if covered == 0
                 else f"90% of results are judged only down to k = {covered}")
        parts.append(f"at k = {k} it reads deeper than the judgments cover ({reach}), so its {metric} lies between "
                     f"{row['low']:.3f} and {row['high']:.3f} depending on the unjudged documents")
    else:
        parts.append(f"k = {k} is within the judged depth (90% judged down to k = {covered})")
    return f"{run}: " + "; ".join(parts) + "."
