"""Times as people read them: to the minute, in the reader's zone, named; a missing time reads as a dash."""

import pandas as pd

from evalcore.timestamps import UNKNOWN, minute, minutes


def test_a_stored_utc_time_reads_to_the_minute_in_the_readers_zone():
    stored = "2026-12-01T07:30:59.404272+00:00"
    assert minute(stored) == "2026-12-01 07:30 UTC"
    assert minute(stored, "Europe/Berlin") == "2026-12-01 08:30 CET"
    assert minute("2026-07-01T07:30:00+00:00", "America/New_York") == "2026-07-01 03:30 EDT"  # summer time


def test_missing_unreadable_or_unknown_zone_never_shows_raw_values():
    assert minute(None) == UNKNOWN and minute("not a time") == UNKNOWN and minute(float("nan")) == UNKNOWN
    assert minute("2026-12-01T07:30:00+00:00", "Mars/Olympus") == "2026-12-01 07:30 UTC"  # unknown zone: UTC


def test_a_column_is_formatted_at_once_and_keeps_its_order():
    column = pd.Series(["2026-12-01 07:30:21.1+00:00", None, "2026-12-01T23:59:59+00:00"])
    assert minutes(column, "Asia/Kolkata").tolist() == ["2026-12-01 13:00 IST", UNKNOWN, "2026-12-02 05:29 IST"]
