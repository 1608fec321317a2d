"""The actions a person takes, written once for every front end.

The CLI and the dashboard parse input, call one of these and render what it returns; neither writes the
workspace itself. Each action validates, writes through `evalcore.store.workspace.Workspace` and returns a
small result value for the front end to put into words.

* `save_evaluation` - keep an evaluation (and its files) so the failure ledger and history can follow it.
* `reveal_holdout` - unseal the holdout on purpose: the view is recorded (who, when, which labels and runs).
* `flag_for_rejudging` - queue queries whose labels look wrong for blind re-judging (labels never edited).
* `save_judging_round` - turn a blind judging round into a new label-set version.
* `add_cases` - add or correct labeled cases, as a new label-set version.
"""

from .cases import AddedCases, add_cases
from .evaluations import SavedRound, save_evaluation
from .holdout import reveal_holdout
from .rejudging import Flagged, flag_for_rejudging, save_judging_round

__all__ = ["AddedCases", "Flagged", "SavedRound", "add_cases", "flag_for_rejudging", "reveal_holdout",
           "save_evaluation", "save_judging_round"]
