"""What every workflow does around its work: check the person's role, then make the change as one transaction.

`action` wraps a workflow function: `evalcore.access.require` first (`NotPermitted` before anything is read or
written), then the whole body inside `Workspace.atomic`, so the change and the event that records it are stored
together or not at all (a process killed between them leaves neither).
"""

from __future__ import annotations

import functools
from typing import Any, Callable, TypeVar

from ..access import Actor, require

F = TypeVar("F", bound=Callable[..., Any])


def action(needs: str) -> Callable[[F], F]:
    """Decorate ``fn(workspace, ..., actor=...)``: refused unless ``actor`` may take ``needs``, then one transaction."""
    def wrap(fn: F) -> F:
        @functools.wraps(fn)
        def run(workspace: Any, *args: Any, actor: Actor, **kwargs: Any) -> Any:
            require(actor, needs)
            return workspace.atomic(lambda: fn(workspace, *args, actor=actor, **kwargs))

        return run  # type: ignore[return-value]

    return wrap
