"""Text out: spreadsheet-formula neutralising, Markdown escaping of user text, and plain and Markdown tables.

Every layer that renders a result as text uses these, so user text is made inert in one place."""

from __future__ import annotations

import csv
import io
import re
from typing import Iterable, Sequence

import pandas as pd

_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
_MARKDOWN_SPECIAL = re.compile(r"([\\`*_{}\[\]<>()#+\-.!|~])")


def safe_cell(value: object) -> object:
    """A CSV cell that a spreadsheet will not run: text starting with = + - @ gets a leading '.

    Numbers pass through unchanged (a negative number is data, not a formula).
    """
    if isinstance(value, str) and value.startswith(_FORMULA_START):
        return "'" + value
    return value


def safe_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """A copy of ``frame`` with every text cell (and column name) passed through `safe_cell`."""
    out = frame.copy()
    for column in out.columns:
        if not pd.api.types.is_numeric_dtype(out[column].dtype):
            out[column] = out[column].map(safe_cell)
    out.columns = [safe_cell(str(c)) for c in out.columns]
    return out


def to_csv(frame: pd.DataFrame) -> str:
    """CSV text with formula-safe cells and full-precision numbers."""
    return safe_frame(frame).to_csv(index=False, lineterminator="\n")


def write_csv_rows(header: Sequence[str], rows: Iterable[Sequence[object]]) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow([safe_cell(h) for h in header])
    for row in rows:
        writer.writerow([safe_cell(v) for v in row])
    return buffer.getvalue()


def terminal_safe(text: str) -> str:
    """Text that a terminal shows as written: control characters (an ESC colour or clipboard sequence, a carriage
    return that overwrites the line) appear escaped as ``\\xNN``; newlines and tabs are kept."""
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


def md_text(value: object) -> str:
    """User text made inert inside Markdown: special characters escaped, newlines flattened."""
    text = str(value).replace("\r", " ").replace("\n", " ")
    return _MARKDOWN_SPECIAL.sub(r"\\\1", text)


def text_table(header: list[str], body: list[list[str]], *, right: set[int] = frozenset(),
               title: str | None = None) -> str:
    """A plain-text table: columns padded to width, those in ``right`` right-aligned."""
    widths = [max([len(h)] + [len(r[i]) for r in body]) for i, h in enumerate(header)]

    def fmt(cells: list[str]) -> str:
        return "  ".join(c.rjust(w) if i in right else c.ljust(w)
                         for i, (c, w) in enumerate(zip(cells, widths))).rstrip()

    lines = ([title] if title else []) + [fmt(header), fmt(["-" * w for w in widths])]
    return "\n".join(lines + [fmt(r) for r in body])


def md_table(title: str, header: list[str], body: list[list[str]]) -> str:
    """A Markdown table under a ``###`` title, every cell escaped (`md_text`)."""
    lines = [f"### {md_text(title)}", "", "| " + " | ".join(md_text(h) for h in header) + " |",
             "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(md_text(c) for c in row) + " |" for row in body]
    return "\n".join(lines)
