"""Every typed error the core raises, in one place; each front end translates them in one place.

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


class VectorFileError(InputError):
    """A query or doc vectors file is malformed: rows of different lengths, NaN or infinite values, a repeated id,
    an empty file, query ids that match no labeled query, or query and doc vectors of different dimensions."""


class UsageError(EvalcoreError):
    """An option or argument is invalid: "The 'k' parameter must be ... Got 0."."""


def invalid_parameter(name: str, must: str, got: object) -> UsageError:
    """The one message template for a bad parameter value."""
    return UsageError(f"The {name!r} parameter must be {must}. Got {got!r}.")


# ----------------------------------------------------------------------------- the holdout


class HoldoutSealed(UsageError):
    """Holdout numbers were asked for without a recorded reveal."""


# ----------------------------------------------------------------------------- the workspace


class WorkspaceError(EvalcoreError):
    """The workspace itself failed: cannot be opened, is busy, is damaged or was made by a newer evalcore.

    ``exit_code`` is what the CLI exits with (1: not the user's input at fault).
    """

    exit_code = 1


class WorkspaceBusy(WorkspaceError):
    """Another process held the write lock through every retry."""


class WorkspaceCorrupt(WorkspaceError):
    """The workspace file is not a database, or its content fails a check."""


class NotInWorkspace(WorkspaceError, UsageError):
    """No label set, version, run, evaluation, line or file by that name or id."""

    exit_code = 2


class FrozenError(WorkspaceError, UsageError):
    """An attempt to change something the workspace keeps frozen (a label-set version, a stored file)."""

    exit_code = 2


class WorkspaceReadOnly(WorkspaceError, UsageError):
    """A save, change or deletion in a workspace whose folder (or file) cannot be written; reading still works.

    Exit 2: nothing failed, the write was asked of a folder the user chose and cannot write.
    """

    exit_code = 2


# ----------------------------------------------------------------------------- who may do what


class NotPermitted(UsageError):
    """The person acting has a role that does not allow the action (`evalcore.access.require`).

    The message names the person, their role, the action and the role it needs, in a plain sentence. Exit 2, as
    for any refused request: nothing was changed.
    """

    exit_code = 2


class AccessConfigError(UsageError):
    """The roles configuration (who may do what, which workspace a team uses) cannot be read: the message names the
    file or section, the key and what was expected."""
