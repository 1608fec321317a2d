"""The Who did what page's model: the workspace's record of every change, filtered by person and action."""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from evalcore.warning_log import plural

from dashboard import saved
from dashboard.loading import Loaded


@dataclass(frozen=True)
class Activity:
    table: pd.DataFrame  # one row per change, newest first
    caption: str


def choices() -> tuple[list[str], list[str]]:
    """Everyone the record names, and every action it holds (for the two filters)."""
    return saved.event_choices()


def activity(who: str | None, action: str | None) -> Loaded:
    """The changes of ``who`` (everyone: None) of kind ``action`` (every kind: None), or why there are none."""
    found = saved.events(who, action)
    if not found.ok:
        return found
    shown = (" by " + who if who else "") + (f" ({action})" if action else "")
    caption = f"{plural(len(found.value), 'change')}{shown}, newest first; times in your time zone, to the minute."
    return Loaded(Activity(found.value, caption))
