"""The actions a person takes, written once for every front end, and the one door to them: `Session`.

The CLI and the dashboard parse input, build one `Session` for the person acting (``Session(workspace, actor)``)
and call its methods; neither writes the workspace itself (the `Workspace` write methods are private to
`evalcore.store`). Each action validates, writes through the workspace and returns a small result value for the
front end to put into words:

* `Session.store_file`, `Session.store_view` - keep an upload's bytes, or a saved view (a data set's files).
* `save_evaluation` - keep an evaluation (and its files) so the failure ledger and history can follow it.
* `reveal_holdout` - unseal the holdout on purpose: the view is recorded (who, when, which labels and runs).
* `flag_for_rejudging` - queue queries whose labels look wrong for blind re-judging (labels never edited).
* `save_judging_round` - turn a blind judging round into a new label-set version.
* `save_marks`, `adjudicate`, `freeze_panel` - several judges: each person's marks kept apart, disagreements
  decided, the result frozen as one new label-set version.
* `add_cases` - add or correct labeled cases, as a new label-set version (`add_production_miss`: one query seen
  failing in production, with its relevant docs).
* `edit_entry` - change a failure-ledger entry's status, cause tags or note.
* `delete` - delete a label set, run, evaluation or file.
* `record_upload` - keep uploaded labels and runs as a label-set version and stored runs, and log uploaded documents
  and chunk maps.

Every action takes the person acting (``actor``, an `evalcore.access.Actor`; the session passes its own), checks
their role first (`evalcore.access.require`: `NotPermitted` before anything is written) and logs what it did under
their name (`Workspace.events`) in the same transaction as the change (`acting.action`). This is where permissions
are enforced; front ends only hide what a person may not use.
"""

from .cases import AddedCases, add_cases, add_production_miss
from .deletion import delete
from .evaluations import SavedRound, save_evaluation
from .holdout import reveal_holdout
from .ledger import edit_entry
from .rejudging import Flagged, adjudicate, flag_for_rejudging, freeze_panel, save_judging_round, save_marks
from .session import Session
from .uploads import record_upload

__all__ = ["AddedCases", "Flagged", "SavedRound", "Session", "add_cases", "add_production_miss", "adjudicate", "delete",
           "edit_entry", "flag_for_rejudging", "freeze_panel", "record_upload", "reveal_holdout", "save_evaluation",
           "save_judging_round", "save_marks"]
