"""Edit the failure ledger: a query's status, cause tags and note, as a person changes them in a form.

Only what changed is written (a status a person sets stands until a later run changes the query's outcome), and
each change is logged under the person's name.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..access import Actor
from ..store.ledger import LedgerEntry, normalise_tag
from ..store.workspace import Workspace
from .acting import action


@action("edit_ledger")
def edit_entry(workspace: Workspace, current: LedgerEntry, *, actor: Actor, status: str | None,
               tags: Sequence[str], note: str) -> list[str]:
    """Apply the wanted ``status``, ``tags`` and ``note`` to the ledger entry ``current``; returns what changed
    ("status", "tags", "note"). An editor's action (`NotPermitted` otherwise, before anything is written); a bad tag
    stops before anything is written."""
    archive = workspace.archive
    line, query, labels = current.line, current.query, current.labels
    subject = f"line {line}, query {query} ({labels})"
    wanted = {normalise_tag(t) for t in tags if str(t).strip()}
    done = []
    if status and status != current.status:
        archive._set_status(line, query, status, labels=labels)
        workspace._record_event(actor.who, "ledger status", subject, f"{current.status or 'none'} -> {status}")
        done.append("status")
    old = set(current.tags)
    for tag in sorted(wanted - old):
        archive._add_tag(line, query, tag, labels=labels)
    for tag in sorted(old - wanted):
        archive._remove_tag(line, query, tag, labels=labels)
    if wanted != old:
        changed = [f"+{t}" for t in sorted(wanted - old)] + [f"-{t}" for t in sorted(old - wanted)]
        workspace._record_event(actor.who, "ledger tags", subject, " ".join(changed))
        done.append("tags")
    if note != current.note:
        archive._set_note(line, query, note, labels=labels)
        workspace._record_event(actor.who, "ledger note", subject, note)
        done.append("note")
    return done
