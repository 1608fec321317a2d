"""The workspace: every file, label set, run and evaluation a team has saved, in one SQLite file.

One class, `Workspace`, owns the connection. Its reads are public; its writes (the methods whose names start with
``_`` and a verb: ``_put_file``, ``_save_evaluation``, ...) are private to the store: every change is made through
`evalcore.workflows.Session`, which checks the person's role and stores the change with its event in one
transaction (`Database.atomic`). It is assembled from one part per concept, each in its own module:

* `database.Database` - the connection, `write` (one ``BEGIN IMMEDIATE`` transaction, retried while another
  writer holds the lock, committed whole or not at all; a write inside another joins it), `atomic`, `read` (one
  consistent snapshot), `verify`, `counts`; read-only on a folder the user cannot write (or ``read_only=True``,
  ``EVALCORE_WORKSPACE_READONLY=1``);
* `upgrade` - the schema steps an older workspace is taken through; `seals` - the digests of saved records that each
  event carries, so the chained record (`chain`) covers the saved numbers too;
* `files.FileStore` - uploads' raw bytes, content-addressed by SHA-256, stored before anything parses them;
  unreferenced ones a killed writer left removed;
* `label_versions.LabelStore` - label sets and their numbered, frozen versions; cases added as a new version;
* `runs.RunStore` - runs with their metadata, grouped into model lines;
* `evaluations.EvaluationStore` - saved evaluations, per-query outcomes, a line's history;
* `reveals.RevealStore` - the append-only record of holdout reveals;
* `rejudging.RejudgingStore` - the re-judging queue and blind judging rounds;
* `deletion.DeletionStore` - deleting, with a plan shown first;
* `events.EventStore` - the append-only log of who did what;
* `manifests.ManifestStore` - saved views: which stored files make up a data set or a set of vector models.

The table layout is in `schema`; the failure ledger over the stored outcomes is `ledger.Archive`. Errors come
out typed: `WorkspaceError` and its subclasses (defined in `evalcore.errors`, re-exported here).
Everything callers import from ``evalcore.store.workspace`` is listed in ``__all__``.
"""

from __future__ import annotations

from ..errors import FrozenError, NotInWorkspace, WorkspaceBusy, WorkspaceCorrupt, WorkspaceError, WorkspaceReadOnly
from .database import BUSY_TIMEOUT_S, ENV_VAR, READ_ONLY_ENV, WRITE_ATTEMPTS, default_location
from .deletion import DELETE_KINDS, Deletion, DeletionStore
from .evaluations import SavedEvaluation
from .events import EVENT_COLUMNS, EventStore
from .files import ORPHAN_GRACE_S, Orphans, StoredFile
from .label_versions import Case, LabelVersion
from .ledger import Archive
from .manifests import ManifestStore
from .rejudging import RejudgingStore
from .reveals import RevealStore
from .runs import StoredRun
from .schema import DB_NAME, SCHEMA_VERSION

__all__ = [
    "BUSY_TIMEOUT_S", "DB_NAME", "DELETE_KINDS", "ENV_VAR", "EVENT_COLUMNS", "ORPHAN_GRACE_S", "READ_ONLY_ENV", "SCHEMA_VERSION",
    "WRITE_ATTEMPTS", "Case", "Deletion", "FrozenError", "LabelVersion", "NotInWorkspace", "Orphans",
    "SavedEvaluation", "StoredFile", "StoredRun", "Workspace", "WorkspaceBusy", "WorkspaceCorrupt", "WorkspaceError",
    "WorkspaceReadOnly", "default_location",
]


class Workspace(DeletionStore, RevealStore, RejudgingStore, EventStore, ManifestStore):
    """The embedded store. Open with ``Workspace()`` (the default folder) or ``Workspace(path)``
    (``read_only=True`` to only read; a folder the user cannot write opens read-only by itself).

    Safe to share between threads (one lock serialises use of the connection) and to open from
    several processes at once (SQLite's locks; writers queue, readers never wait). A forked
    child opens its own connection on first use.
    """

    def __repr__(self) -> str:
        return f"Workspace({str(self.location)!r})"

    def __enter__(self) -> "Workspace":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    @property
    def archive(self) -> Archive:
        """The failure ledger over this workspace (`evalcore.store.ledger.Archive`)."""
        return Archive(self)
