"""Warnings that travel with results: what was repaired, skipped or is ambiguous, with a count."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class EvalWarning:
    """One warning: a stable ``code`` for machines, a sentence for people, how many it affects, and the run it is
    about (None for the labels, the documents or the whole evaluation)."""

    code: str
    message: str
    count: int
    run: str | None = None

    def to_dict(self) -> dict:
        return {"code": self.code, "message": self.message, "count": int(self.count)}

    def __str__(self) -> str:
        return f"[{self.code}] {self.message}"


def plural(count: int, singular: str, plural_form: str | None = None) -> str:
    """``plural(1, "query", "queries")`` -> ``1 query``; ``plural(3, "doc")`` -> ``3 docs``."""
    word = singular if count == 1 else (plural_form or singular + "s")
    return f"{count:,} {word}"


def agree(count: int, singular: str, plural_form: str) -> str:
    """The verb form that agrees with ``count``: ``agree(1, "is", "are")`` -> ``is``."""
    return singular if count == 1 else plural_form
