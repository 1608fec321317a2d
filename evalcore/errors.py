"""Typed errors raised by the core; each front end translates them in one place.

`InputError` is for anything wrong with what a user gave us (a file, an option); its
message always names where (file and line or row), what was found and what was expected,
so the CLI can print it on one line and the dashboard beside the upload.
"""

from __future__ import annotations


class EvalcoreError(Exception):
    """Base class for every error evalcore raises on purpose."""


class InputError(EvalcoreError):
    """A user-provided file or value is malformed.

    The message reads: ``FILE, line N: expected WHAT, got 'TEXT'``; parts that do not apply
    (no line for a whole-file problem, no file for an option) are left out.
    """

    def __init__(
        self,
        expected: str,
        *,
        source: str | None = None,
        line: int | None = None,
        text: str | None = None,
        where: str = "line",
    ) -> None:
        self.expected = expected
        self.source = source
        self.line = line
        self.text = text
        self.where = where
        super().__init__(self._format())

    def _format(self) -> str:
        place = []
        if self.source:
            place.append(str(self.source))
        if self.line is not None:
            place.append(f"{self.where} {self.line}")
        head = ", ".join(place)
        body = f"expected {self.expected}"
        if self.text is not None:
            shown = self.text if len(self.text) <= 120 else self.text[:117] + "..."
            body += f", got {shown!r}"
        return f"{head}: {body}" if head else body


class UsageError(EvalcoreError):
    """An option or argument is invalid: "The 'k' parameter must be ... Got 0."."""


def invalid_parameter(name: str, must: str, got: object) -> UsageError:
    """The one message template for a bad parameter value."""
    return UsageError(f"The {name!r} parameter must be {must}. Got {got!r}.")
