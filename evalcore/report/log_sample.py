"""A query log's sample in sentences: what was read, what personal data was masked, how many queries were drawn.

The words ``evalcore sample`` prints above its tables, for every front end that shows a `LogSample` (the command,
the dashboard's Real queries page), so both say the same thing the same way.
"""

from __future__ import annotations

from ..logs.detect import KIND_NAMES, LAYOUT_NAMES
from ..logs.sampling import LogSample
from ..warning_log import plural

__all__ = ["logged_sentence", "pii_sentence", "plan_sentence", "read_sentence"]


def read_sentence(data: dict) -> str:
    """What was read (``data``: `LogSample.to_dict`): the file, its kind and layout, the logged queries, what was
    not a query, and the distinct queries before and after merging near-duplicates."""
    read = data["read"]
    skipped = [plural(read[key], word, many) + " " + why for key, word, many, why in (
        ("events", "UBI event", "UBI events", "(events are not queries)"),
        ("other_spans", "span of another kind", "spans of other kinds", "(not retrievals)"),
        ("without_text", "row", "rows", "without a query text"),
        ("too_long", "query", "queries", "too long to be typed")) if read[key]]
    return (f"Read {read['file']} ({KIND_NAMES[read['format']]}, {LAYOUT_NAMES[read['layout']]}): "
            f"{plural(data['queries'], 'logged query', 'logged queries')}"
            + (f"; also {', '.join(skipped)}" if skipped else "")
            + f". {data['distinct']:,} distinct after normalising, {data['clusters']:,} after merging "
              f"near-duplicates ({plural(data['near_duplicates']['groups'], 'group')} merged).")


def pii_sentence(data: dict) -> str:
    """The personal data masked before anything was kept, by kind, and the recogniser that found it."""
    pii = data["pii"]
    if pii["queries"]:
        kinds = ", ".join(f"{kind} {n:,}" for kind, n in pii["kinds"].items())
        masked = plural(pii["queries"], "logged query", "logged queries")
        return (f"Personal data masked before anything was kept: {masked} ({kinds}; recogniser: "
                f"{pii['recogniser']}).")
    return f"Personal data: none found (recogniser: {pii['recogniser']})."


def plan_sentence(found: LogSample) -> str:
    """How many queries were drawn, with what seed and allocation, and (when the planner chose) why that many."""
    plan = found.plan
    drawn = len(found.sample)
    how = f"seed {found.seed}, {found.allocation} allocation"
    if plan.needed is None:
        return f"Sampled {plural(drawn, 'query', 'queries')} of the {plan.n:,} asked for ({how})."
    held = f"; the labels hold {plan.labeled:,}, so {plan.n:,} more" if plan.labeled else ""
    return (f"Sampled {plural(drawn, 'query', 'queries')} ({how}): the planner needs {plan.needed:,} labeled queries "
            f"to detect a difference of {plan.target_diff * 100:g} points between two models (power 80%, alpha "
            f"0.05){held}.")


def logged_sentence(data: dict) -> str:
    """What the log gave the sampled queries: how many have logged results (the production run) and clicked docs,
    both added to their judging pools; said plainly when the log has neither."""
    logged, drawn = data["logged_docs"], len(data["sample"])
    if not drawn:
        return "Logged docs: no query sampled."
    with_results, with_clicks = logged["with_results"], logged["with_clicks"]
    if not with_results and not with_clicks:
        return ("Logged docs: the log lists no results and no clicks for the sampled queries, so there is no "
                "production run; their judging pools hold the runs' docs only.")
    results = (f"the log gave {with_results:,} of the {plural(drawn, 'sampled query', 'sampled queries')} their "
               "results (the latest search's: the production run)" if with_results else
               "the log lists no results for the sampled queries (no production run)")
    clicks = (f"{with_clicks:,} {'has' if with_clicks == 1 else 'have'} clicked docs" if with_clicks
              else "none has a clicked doc")
    return f"Logged docs: {results}; {clicks}. Their judging pools add them to the runs' docs."
