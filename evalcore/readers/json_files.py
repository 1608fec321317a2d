"""JSON files: a whole document, or one object per line, with errors naming the line (and column).

Constants such as ``NaN`` and ``Infinity`` are refused (no reader accepts a number that is not finite), and so is
a key repeated in one object (a repeated query would silently replace the first). `is_json_id` and `json_number`
say which JSON values can be an id or a number.
"""

from __future__ import annotations

import json
import math

from ..errors import InputError
from .sources import Source


def read_json_value(source: Source) -> object:
    """Parse a whole JSON document, naming the line and column of a syntax error."""
    try:
        return json.loads(source.text(), parse_constant=_reject_constant, object_pairs_hook=_unique_keys)
    except (RecursionError, ValueError) as exc:
        if not isinstance(exc, json.JSONDecodeError):
            raise InputError(f"valid JSON ({_why(exc)})", source=source.name) from None
        line_text = source.lines()[exc.lineno - 1] if exc.lineno <= len(source.lines()) else ""
        raise InputError(
            f"valid JSON ({exc.msg} at column {exc.colno})", source=source.name, line=exc.lineno, text=line_text
        ) from None


def read_jsonl_records(source: Source) -> list[tuple[int, dict]]:
    """Parse one JSON object per line; returns (line number, object) pairs, blank lines skipped."""
    records = []
    for number, line in enumerate(source.text().split("\n"), start=1):
        if not line.strip():
            continue
        try:
            value = json.loads(line, parse_constant=_reject_constant)
        except (RecursionError, ValueError) as exc:
            raise InputError(f"one JSON object per line ({_why(exc)})", source=source.name, line=number,
                             text=line) from None
        if not isinstance(value, dict):
            raise InputError("one JSON object per line", source=source.name, line=number, text=line)
        records.append((number, value))
    return records


def _unique_keys(pairs: list[tuple[str, object]]) -> dict:
    """A JSON object whose keys are all distinct (a repeated query would silently replace the first)."""
    out: dict = {}
    for key, value in pairs:
        if key in out:
            raise ValueError(f"the key {key!r} appears twice in one object")
        out[key] = value
    return out


def _reject_constant(name: str) -> float:
    raise ValueError(f"{name} is not a number evalcore accepts")


def _why(exc: Exception) -> str:
    if isinstance(exc, json.JSONDecodeError):
        return exc.msg
    if isinstance(exc, RecursionError):
        return "nested too deeply"
    return str(exc)


def is_json_id(value: object) -> bool:
    """JSON ids are strings or whole numbers (written as their text); nothing else."""
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def json_number(value: object) -> float | None:
    """A finite float from a JSON number (not a bool), else None."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    try:
        number = float(value)
    except OverflowError:
        return None
    return number if math.isfinite(number) else None
