"""Times as people read them: to the minute, in the reader's time zone, named.

The workspace stores every time as UTC ISO 8601 with microseconds (exact, sortable); a person in a meeting needs
"2026-12-01 09:30 CET", not "2026-12-01T08:30:21.404272+00:00". Every front end formats times here, so the same
moment reads the same on every page, the CLI and the report.
"""

from __future__ import annotations

from datetime import timezone
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import pandas as pd

UNKNOWN = "—"
"""What a missing time reads as."""


def zone(name: str | None) -> timezone | ZoneInfo:
    """The time zone called ``name`` (an IANA name such as "Europe/Berlin"), or UTC when it is None or unknown."""
    if not name:
        return timezone.utc
    try:
        return ZoneInfo(str(name))
    except (ZoneInfoNotFoundError, ValueError):
        return timezone.utc


def minute(value: object, tz: str | None = None) -> str:
    """One time as "YYYY-MM-DD HH:MM ZONE" in ``tz`` (UTC by default); `UNKNOWN` for a missing or unreadable one.

    ``value`` is an ISO 8601 string, a datetime or a pandas Timestamp; one without a zone is taken as UTC."""
    return minutes(pd.Series([value]), tz).iloc[0]


def minutes(values: pd.Series, tz: str | None = None) -> pd.Series:
    """`minute` for a whole column at once (one parse, one conversion)."""
    parsed = pd.to_datetime(values, errors="coerce", utc=True, format="mixed")
    local = parsed.dt.tz_convert(zone(tz))
    text = local.dt.strftime("%Y-%m-%d %H:%M ") + local.dt.strftime("%Z")
    return text.where(parsed.notna(), UNKNOWN).astype(object)
