"""The index-size decision in words: one sentence per variant, and the table and JSON of ``evalcore vectors``.

`evalcore.analyses.index_size` computes the numbers (`IndexSizeReport`); the sentence here is what the CLI and the
dashboard's Index size page show, word for word: "binary 256 loses 4.1 points of recall@10 against full vectors
(95% CI 2.0 to 6.3; p < 0.001 after Holm; n = 224); the index is 24x smaller." An approximate index gets a second:
"HNSW ef = 32 loses the answer for 7 of 224 queries (3.1%, 95% CI 1.5% to 6.3%) and answers 4.0x faster than exact
search; it returns 96.7% of exact search's top 10 (the worst 5% of queries: 80% or less)."
"""

from __future__ import annotations

import pandas as pd

from ..analyses.index_choice import IndexChoice, index_choice
from ..analyses.index_size import IndexSizeReport
from ..vectors.runs import VariantRun
from ..warning_log import plural
from .amounts import format_amount, format_interval, format_p, human_bytes, times
from .render import titled_table

REFERENCE_VERDICT = "the full vectors (reference)"
"""What the chart says of the full vectors, which are not compared with themselves."""


def variant_verdict(report: IndexSizeReport, item: VariantRun) -> str | None:
    """The plain sentence for one variant against the full vectors (None for the full vectors themselves)."""
    found = report.comparisons.get(item.name)
    if found is None:
        return None
    metric, words, ratio = found.metric, item.variant.words, report.ratio(item)
    level = f"{found.level * 100:g}% CI"
    p_text = format_p(found.p_adjusted) + (" after Holm" if found.n_comparisons > 1 else "")
    size = f"the index is {times(ratio)} smaller" if ratio >= 1 else f"the index is {times(1 / ratio)} larger"
    if found.wins == 0 and found.losses == 0:
        return f"{words} scores the same as full vectors on {metric} on every one of the {found.n} queries; {size}."
    if found.significant:
        verb, amount, low, high = (("gains", found.diff, found.ci_low, found.ci_high) if found.diff > 0 else
                                   ("loses", -found.diff, -found.ci_high, -found.ci_low))
        return (f"{words} {verb} {format_amount(metric, amount)} of {metric} against full vectors ({level} "
                f"{format_interval(low, high, metric=metric, join=' to ')}; {p_text}; "
                f"n = {found.n}); {size}.")
    return (f"{words} is indistinguishable from full vectors on {metric} with {found.n} queries (difference "
            f"{format_amount(metric, found.diff)}, {level} "
            f"{format_interval(found.ci_low, found.ci_high, metric=metric, join=' to ')}; {p_text}); {size}.")


def index_verdict(report: IndexSizeReport, item: VariantRun) -> str | None:
    """The sentence for an approximate index against exact search of its dims (None for an exact variant)."""
    loss = report.losses.get(item.name)
    if item.variant.is_exact or loss is None:
        return None
    interval = loss.lost_interval
    count, level = len(loss.lost), f"{interval.level * 100:g}% CI"
    if count:
        lost = (f"{item.variant.words} loses the answer for {count:,} of {loss.n:,} queries ({percent(count / loss.n)}"
                f", {level} {format_interval(interval.low, interval.high, number=percent, join=' to ')})")
    else:
        lost = (f"{item.variant.words} keeps the answer for every one of the {loss.n:,} queries (lost: 0, {level} up "
                f"to {percent(interval.high)})")
    speedup = report.speedup(item)
    if speedup is None:
        speed = f"answers {item.speed.queries_per_second:,.0f} queries a second on one thread"
    elif speedup >= 1:
        speed = f"answers {times(speedup)} faster than exact search"
    else:
        speed = f"answers {times(1 / speedup)} slower than exact search"
    return (f"{lost} and {speed}; it returns {percent(loss.mean)} of exact search's top {loss.k} (the worst 5% of "
            f"queries: {percent(loss.p5)} or less).")


def index_choice_line(choice: IndexChoice) -> str:
    """The index to take, in one sentence (`evalcore.analyses.index_choice`): what ``evalcore vectors`` prints first
    and the Index size page opens on."""
    metric = choice.metric
    if choice.is_reference:
        if not choice.worse:
            return "Keep the full vectors: no other index was searched."
        others = "faster setting" if choice.by_speed else "smaller index"
        return (f"Keep the full vectors: every {others} scores worse on {metric} "
                f"({plural(len(choice.worse), 'variant')} significantly worse, after Holm).")
    found = choice.comparison
    if choice.by_speed and choice.take.speed and choice.reference.speed:
        speedup = choice.take.speed.queries_per_second / choice.reference.speed.queries_per_second
        gain = f"it answers {times(speedup)} faster than exact search"
    elif choice.ratio >= 1:
        gain = f"its index is {times(choice.ratio)} smaller"
    else:
        gain = f"its index is {times(1 / choice.ratio)} larger"
    level = f"{found.level * 100:g}% CI"
    return (f"Take {choice.take.variant.words}: {gain}, and it scores no worse than the full vectors on {metric} "
            f"(difference {format_amount(metric, found.diff)}, {level} "
            f"{format_interval(found.ci_low, found.ci_high, metric=metric, join=' to ')}; n = {found.n}).")


def percent(share: float) -> str:
    """``3.1%``, ``0.45%``, ``100%``: one decimal (two digits under 1%), never rounded to 0% or 100% when it is
    not."""
    value = share * 100
    if 0 < value < 1:
        return f"{value:.2g}%"
    if 99.9 < value < 100:
        return "99.9%"
    return f"{value:.1f}%".replace(".0%", "%")


def index_size_dict(report: IndexSizeReport) -> dict:
    """``evalcore vectors --format json``: the numbers of `IndexSizeReport.to_dict`, each comparison with the full
    vectors (``vs_full``) ending in its verdict, and each approximate index's sentence (``index_verdict``)."""
    out = report.to_dict()
    for entry, item in zip(out["variants"], report.variants):
        if entry["vs_full"] is not None:
            entry["vs_full"]["verdict"] = variant_verdict(report, item)
        entry["index_verdict"] = index_verdict(report, item)
    choice = index_choice(report)
    out["take"] = {**choice.to_dict(), "sentence": index_choice_line(choice)}
    return out


def index_size_points(report: IndexSizeReport, metric: str | None = None) -> pd.DataFrame:
    """`IndexSizeReport.points` with each variant's ``verdict`` (before ``frontier``) and, for an approximate
    index, its ``index_verdict``, for the charts' tooltips."""
    frame = report.points(metric)
    verdicts = [variant_verdict(report, item) or REFERENCE_VERDICT for item in report.variants]
    frame.insert(frame.columns.get_loc("frontier"), "verdict", verdicts)
    frame["index_verdict"] = [index_verdict(report, item) or "" for item in report.variants]
    return frame


def index_loss_table(report: IndexSizeReport) -> str:
    """Neighbour recall, lost queries and speed of every variant measured against exact search of its dims, the
    queries each index loses (20 at most each; the JSON lists them all), and how the speeds were measured."""
    k = report.evaluation.ks[-1]
    header = ["variant", f"neighbour recall@{k}", "5th percentile", "lost queries", "queries/s", "p50 ms", "p99 ms",
              "build s", "index"]
    body = []
    for item in report.variants:
        loss, speed = report.losses.get(item.name), item.speed
        if loss is None:
            continue
        timing = ([f"{speed.queries_per_second:,.0f}", f"{speed.latency_p50_ms:.3f}", f"{speed.latency_p99_ms:.3f}",
                   f"{speed.build_seconds:.2f}"] if speed else ["", "", "", ""])
        body.append([item.name, f"{loss.mean:.4f}", f"{loss.p5:.4f}", f"{len(loss.lost):,} of {loss.n:,}", *timing,
                     human_bytes(item.index_bytes)])
    title = (f"against exact search of the same dims, at k = {k}: neighbour recall (share of the exact top {k} "
             f"returned) and lost queries (a relevant doc exact search had in its top {k} is missing)")
    lines = [titled_table(title, header, body)]
    listed = [(item.name, report.losses[item.name].lost) for item in report.variants
              if item.name in report.losses and report.losses[item.name].lost and not item.variant.is_exact]
    if listed:
        lines.append("")
        lines += [f"lost by {name}: {', '.join(queries[:20])}" + (f" and {len(queries) - 20:,} more (--format json "
                  "lists them all)" if len(queries) > 20 else "") for name, queries in listed]
    built = next((v.speed for v in report.variants if v.speed is not None and not v.variant.is_exact), None)
    speed = next((v.speed for v in report.variants if v.speed is not None), None)
    if speed is None:
        return "\n".join(lines)
    threads = built.build_threads if built is not None else None
    lines += ["", f"Speed: {speed.engine}; every search on one thread (queries/s over the whole batch, latency one "
              f"query at a time); indexes built on {'every core' if threads is None else plural(threads, 'thread')}"
              f", trained with seed {report.evaluation.seed}; exact search timed in the engine's flat index. Index "
              "size of an approximate index = its size written to a file + the doc ids."]
    return "\n".join(lines)


def index_size_rows(report: IndexSizeReport) -> tuple[list[str], list[list[str]]]:
    """The table for people: one row per variant with its size, every metric with its interval, and vs full."""
    names = report.metric_names()
    headers = ["variant", "dims", "precision", "index", "smaller", *names, f"vs full ({report.metric})", "p (Holm)",
               "n", "model"]
    body = []
    for item in report.variants:
        values = report.metrics(item)
        cells = [format_interval(values[m]["ci_low"], values[m]["ci_high"], digits=4, join="-", mean=values[m]["mean"])
                 for m in names]
        found = report.comparisons.get(item.name)
        if found is None:
            versus, p = "reference", ""
        else:
            versus = format_interval(found.ci_low, found.ci_high, metric=found.metric, join=" to ", mean=found.diff)
            p = format_p(found.p_adjusted).removeprefix("p ").removeprefix("= ")
        body.append([item.name, str(item.variant.dims), item.variant.precision, human_bytes(item.index_bytes),
                     times(report.ratio(item)), *cells, versus, p, str(report.evaluation[item.name].n_queries),
                     item.run.model])
    return headers, body
