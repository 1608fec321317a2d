"""The Integrity page's model: the audit, the source gaps beside it, the numbers a recorded reveal unseals, and how
far several judges agree.

Plain functions over the all-k evaluation every page scores (the view keeps what they return in `dashboard.caching`);
every number comes from `evalcore.analyses.audit`, `evalcore.metrics.split` and `evalcore.analyses.panel`. Recording a
reveal and flagging queries are writes: `dashboard.saved`.
"""

from __future__ import annotations

import pandas as pd

from evalcore.analyses.audit import audit
from evalcore.analyses.coverage import number_caveats
from evalcore.metrics.split import Reveal, SplitRule, scoring_labels
from evalcore.report.checks import check_sentence
from evalcore.report.segments import gap_sentence
from evalcore.metrics.dataset import Dataset

from dashboard import loading
from dashboard.loading import Loaded
from dashboard.page_models import sources
from dashboard.page_models.judge import PanelStatus, panel_status

STATISTICS = {
    "percent agreement": "the share of pairs on which every judge who marked it gave the same mark; easy to read, "
                         "but high by chance alone when most docs are not relevant",
    "Cohen's kappa": "two judges: their agreement beyond what chance gives from each one's own mix of marks; 1 is "
                     "full agreement, 0 what chance gives",
    "Fleiss' kappa": "the same idea for any number of judges, on the pairs every judge marked",
    "Krippendorff's alpha": "agreement beyond chance that allows marks to be missing (a judge who skipped a pool); "
                            "used as the headline when not every judge marked every pair",
}
"""Each statistic of the agreement table in one sentence, for the page's explanation."""

POOL_DEPTH = 10
"""The depth the audit's pooling table looks at (each run's top 10)."""


def audit_at(dataset: Dataset, k: int) -> Loaded:
    """`evalcore.analyses.audit.audit` of the scored labels at ``--k 1,k``, suspects at k (shared, never changed)."""
    loaded = loading.evaluation(dataset)
    if not loaded.ok:
        return loaded
    return loading.load(audit, loaded.value.at(sorted({1, k})), pool_depth=POOL_DEPTH, suspect_k=k)


def revealed_at(dataset: Dataset, split: str, reveal: Reveal, k: int) -> Loaded:
    """The numbers on the holdout (or all queries) at ``--k 1,k``, against a reveal recorded in the workspace."""
    full = loading.labels(dataset.labels)
    if not full.ok:
        return full
    runs = [r.value for r in loading.runs_of(dataset)]
    return loading.load(lambda: scoring_labels(full.value, SplitRule(dataset.split), reveal, split).evaluate(runs, sorted({1, k})))


def register(dataset: Dataset) -> str:
    """Keep ``dataset`` (the same files with another split) and return the key its link names."""
    return loading.register(dataset)


def labels_as_read(dataset: Dataset):
    """The labels file as read (the whole set, holdout included): its name and fingerprint are the reveal's."""
    return loading.labels(dataset.labels).value


def source_gaps(dataset: Dataset, k: int, runs: tuple[str, ...]) -> Loaded | None:
    """The customers-versus-team gap of the Sources page on recall@k, one sentence per run shown
    (`evalcore.report.segments.gap_sentence`), or why the queries cannot be split; None without a source field."""
    if not sources.has_source(dataset):
        return None
    found = sources.source_gaps(dataset, k)
    if not found.ok:
        return found
    gaps = found.value.gaps
    shown = gaps[gaps["run"].isin(runs) & (gaps["metric"] == f"recall@{k}")]
    return Loaded([gap_sentence(row, found.value.min_n) for row in shown.itertuples()])


def check_sentences(dataset: Dataset, k: int, runs: tuple[str, ...]) -> list[str]:
    """The Overview's checks (blind share, judged depth, bounds) at ``k`` as one plain sentence per run shown
    (`evalcore.report.checks.check_sentence`)."""
    loaded = loading.evaluation(dataset)
    if not loaded.ok:
        return []
    rows = number_caveats(loaded.value, k)
    return [check_sentence(row) for row in rows.to_dict("records") if row["run"] in runs]


def judges_agreement(label_set: str, log: pd.DataFrame) -> PanelStatus:
    """How far the judges of ``label_set`` agree, their disagreements and what a freeze would make
    (`dashboard.page_models.judge.panel_status` over `dashboard.saved.panel_marks`)."""
    return panel_status(label_set, log)


def disagreement_line(status: PanelStatus) -> str:
    """The disagreements in one sentence: how many, how many tied, how many decided."""
    differ = status.disagreements
    if differ.empty:
        return "No open pair the judges disagree on."
    decided = int((differ["decided"] != "").sum())
    tied = int(differ["tied"].sum())
    return (f"{len(differ)} open {'pair' if len(differ) == 1 else 'pairs'} the judges disagree on ({tied} tied, "
            f"{decided} decided by an adjudicator); the adjudicator settles them on Blind judging.")
