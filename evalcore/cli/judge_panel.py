"""``evalcore judge`` for several judges (`evalcore.analyses.panel`): ``agreement`` (the Integrity page's sentence,
then every statistic with its interval), ``disagreements`` (the open pairs the judges differ on), ``adjudicate`` (an
owner decides one) and ``freeze`` (the consensus as one new label-set version). Each judge's marks are kept with
``evalcore judge save LABEL_SET FILE --keep-apart`` (`evalcore.cli.judge`).

The numbers are the core's, computed as the dashboard's page model computes them (`panel_agreement` over the
workspace's `panel_marks`, seeded the same way), so the command line and the Integrity page print the same numbers.
"""

from __future__ import annotations

import argparse
import json
import math
import textwrap

import pandas as pd

from ..access import local_actor
from ..analyses.judging import parse_mark
from ..analyses.panel import FROZEN, JUDGE, PanelAgreement, agreement_sentence, consensus, disagreements, \
    open_entries, panel_agreement, statistics_table
from ..safe_text import to_csv
from ..stats.intervals import check_level
from ..store.workspace import Workspace
from ..warning_log import plural
from ..workflows.session import Session
from .common import HEADLINE_WIDTH, frame_text, note, recorded_as, write
from .parser import EXIT_OK


def agreement(args: argparse.Namespace) -> int:
    """How far the judges agree: the sentence first, then every statistic with its interval and n."""
    level = check_level(args.level)  # checked even before any judge has marked
    log = Workspace(args.workspace).panel_marks(args.name)
    found = panel_agreement(log, level=level, rng=args.seed) if not log.empty else None
    data = agreement_data(args.name, log, found)
    if args.format == "json":
        write(json.dumps(data, ensure_ascii=False, allow_nan=False, indent=1) + "\n", exact=True)
        return EXIT_OK
    if found is None:
        said = [nobody_yet(args.name, log)] + ([data["freeze"]] if not log.empty else [])
        write("\n".join(paragraph(text) for text in said) + "\n")
        return EXIT_OK
    single = f" ({plural(found.n_single, 'pair')} only one judge marked left out)" if found.n_single else ""
    write(paragraph(data["sentence"]) + "\n\n")
    write(frame_text(statistics_table(found), f"agreement of the judges of {args.name}") + "\n\n")
    write("\n".join(paragraph(text) for text in (
        f"Judges: {', '.join(found.judges)}. Each judge's latest mark of every (query, doc) pair two or more of them "
        f"marked{single}; intervals: percentile bootstrap over queries (a query's pairs resampled together), "
        f"{found.percent.n_resamples:,} resamples, seed {found.percent.seed}.",
        disagreement_line(data), data["freeze"])) + "\n")
    return EXIT_OK


def paragraph(text: str) -> str:
    """Text wrapped at the width of the tables beneath it, never inside a word, a range (0.62-0.79) or a name."""
    return textwrap.fill(text, width=HEADLINE_WIDTH, break_on_hyphens=False, break_long_words=False)


def agreement_data(name: str, log: pd.DataFrame, found: PanelAgreement | None) -> dict:
    """The agreement as JSON: the sentence, every statistic with its interval and n, the judges, the disagreements
    and what a freeze would make (None and empty lists before two judges marked the same pair)."""
    differ = disagreements(log)
    final = consensus(log)
    opened = open_entries(log)
    judges = sorted(log.loc[log["kind"] == JUDGE, "who"].unique().tolist()) if not log.empty else []
    return {
        "label_set": name,
        "sentence": agreement_sentence(found) if found is not None else None,
        "judges": judges,
        "n_judges": len(judges),
        "statistic": found.headline.statistic if found is not None else None,
        "n_pairs": found.n_pairs if found is not None else 0,
        "n_queries": found.n_queries if found is not None else 0,
        "n_single": found.n_single if found is not None else 0,
        "complete": found.complete if found is not None else None,
        "statistics": records(statistics_table(found)) if found is not None else [],
        "disagreements": disagreement_counts(differ),
        "open_queries": int(opened["query"].nunique()) if not opened.empty else 0,
        "open_pairs": int(len(final.marks) + len(final.unresolved)),
        "unresolved": int(len(final.unresolved)),
        "consensus": {how: int(n) for how, n in final.counts.items()},
        "freeze": freeze_sentence(name, final),
    }


def nobody_yet(name: str, log: pd.DataFrame) -> str:
    if log.empty:
        return (f"No judge has kept marks apart on label set {name} yet: each judge saves their own with evalcore "
                f"judge save {name} FILE --keep-apart, blind to each other's.")
    return (f"No two judges have marked the same pair of label set {name} yet, so there is no agreement to measure "
            "(judges so far: " + ", ".join(sorted(log.loc[log["kind"] == JUDGE, "who"].unique())) + ").")


def disagreement_line(data: dict) -> str:
    """The disagreements in one sentence (the Integrity page's numbers), and the command that lists them."""
    counts = data["disagreements"]
    if not counts["open"]:
        return "No open pair the judges disagree on."
    return (f"{counts['open']} open {'pair' if counts['open'] == 1 else 'pairs'} the judges disagree on "
            f"({counts['tied']} tied, {counts['decided']} decided by an adjudicator): evalcore judge disagreements "
            f"{data['label_set']} lists them, evalcore judge adjudicate decides one.")


def freeze_sentence(name: str, final) -> str:
    """What `freeze` would make now, in one sentence."""
    if final.marks.empty and final.unresolved.empty:
        return "Nothing to freeze: every query judged so far is in a label-set version."
    if len(final.unresolved):
        return (f"{plural(len(final.unresolved), 'tied pair')} (as many judges said relevant as not) "
                f"{'waits' if len(final.unresolved) == 1 else 'wait'} for an adjudicator's decision before the marks "
                "can be frozen.")
    how = ", ".join(f"{n} {word}" for word, n in final.counts.items() if n)
    return (f"evalcore judge freeze {name} makes one new label-set version with "
            f"{plural(len(final.rounds), 'query', 'queries')} and {plural(len(final.marks), 'pair')} ({how}).")


def records(frame: pd.DataFrame) -> list[dict]:
    """A frame's rows as JSON-ready dicts (numpy numbers as Python's, NaN as null)."""
    out = []
    for row in frame.to_dict(orient="records"):
        out.append({k: None if isinstance(v, float) and not math.isfinite(v) else
                    v.item() if hasattr(v, "item") else v for k, v in row.items()})
    return out


def disagreements_of(args: argparse.Namespace) -> int:
    """The open pairs the judges differ on, with each judge's mark and any adjudicator's decision."""
    log = Workspace(args.workspace).panel_marks(args.name)
    differ = disagreements(log)
    if args.format == "csv":
        write(to_csv(differ), exact=True)
    elif args.format == "json":
        data = {"label_set": args.name, **disagreement_counts(differ), "pairs": records(differ)}
        write(json.dumps(data, ensure_ascii=False, allow_nan=False, indent=1) + "\n", exact=True)
    elif differ.empty:
        write(f"No open pair the judges of label set {args.name} disagree on.\n")
    else:
        counts = disagreement_counts(differ)
        write(paragraph(f"{plural(counts['open'], 'open pair')} the judges of label set {args.name} disagree on "
                        f"({counts['tied']} tied, {counts['decided']} decided by an adjudicator); each shows every "
                        "judge's mark. Decide one with evalcore judge adjudicate.") + "\n\n")
        write(frame_text(differ, "disagreements") + "\n")
    return EXIT_OK


def disagreement_counts(differ: pd.DataFrame) -> dict[str, int]:
    return {"open": len(differ), "tied": int(differ["tied"].sum()), "decided": int((differ["decided"] != "").sum())}


def adjudicate(args: argparse.Namespace) -> int:
    """An adjudicator's decision on one pair the judges disagree on (`Session.adjudicate`: an owner's action)."""
    relevant = parse_mark(args.relevant, "--relevant")
    actor = local_actor(args.who)
    session = Session(Workspace(args.workspace), actor)
    entry = session.adjudicate(args.name, args.query, {args.doc: relevant}, note=args.note or "")
    note(f"decided query {args.query}, doc {args.doc} as {'relevant' if relevant else 'not relevant'} on label set "
         f"{args.name} (entry {entry}): the freeze takes it over the judges' marks; {recorded_as(actor)}")
    return EXIT_OK


def freeze(args: argparse.Namespace) -> int:
    """The judges' marks as one new label-set version (`Session.freeze_panel`: refused while a tie is undecided)."""
    actor = local_actor(args.who)
    session = Session(Workspace(args.workspace), actor)
    before = session.workspace.panel_marks(args.name)
    last = int(before["entry"].max()) if not before.empty else 0
    version = session.freeze_panel(args.name)
    log = session.workspace.panel_marks(args.name)
    frozen = log[(log["kind"] == FROZEN) & (log["entry"] > last)]  # the rows this freeze wrote
    what = (f"the judges' marks on {plural(frozen['query'].nunique(), 'query', 'queries')} "
            f"({plural(len(frozen), 'pair')}), each query marked blind with its source and stratum when its pool "
            "came from a sampled queries file")
    if version.created:
        note(f"label set {version.ref}: {what}; {version.change}; earlier versions are unchanged; "
             f"{recorded_as(actor)}")
    else:
        note(f"label set {version.ref} already holds {what}; no new version (the freeze is recorded); "
             f"{recorded_as(actor)}")
    return EXIT_OK
