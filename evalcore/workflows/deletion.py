"""Delete a label set, run, evaluation or stored file: an owner's action, logged under their name.

The plan (what would go) is a read and open to anyone who may read; the deletion itself is refused to anyone but
an owner before anything is removed.
"""

from __future__ import annotations

from ..access import Actor
from ..store.workspace import Deletion, Workspace
from .acting import action


@action("delete")
def delete(workspace: Workspace, kind: str, key: str | int, *, actor: Actor) -> Deletion:
    """Delete one thing (`Workspace.delete`) after checking ``actor`` is an owner; the deletion and its record in the
    log of who did what are one transaction."""
    return workspace._delete(kind, key, who=actor.who)
