"""The Overview's model: one row per run with intervals, the chart of hit@1 (the headline's metric), recall@k and MRR,
the paired comparison in words, and the quality-against-cost points.

The table and its chart are built for the one k shown (`overview`), fast, from the deep evaluation or the all-k
curves once they are ready (with answer grades loaded, the table has each graded run's mean answer grade beside its
recall@k: `answer_grade`, the Answers page's numbers); the paired comparison (`comparison`) waits for those curves
(they hold the resampled sums the tests need), so the page draws it below its first chart. Plain functions: the
shared results come through `dashboard.caching`, and the view keeps what these return there.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from evalcore.analyses.answer_queries import main_grade
from evalcore.analyses.headline import HEADLINE_METRIC, BestRun
from evalcore.metrics.measures import DESCRIPTIONS
from evalcore.report.amounts import format_interval
from evalcore.report.compare import comparison_verdict, plan_summary
from evalcore.report.headlines import best_run_line, overview_evidence
from evalcore.metrics.dataset import Dataset

from dashboard import caching, charts, computed, loading
from dashboard.page_models.answers import TOOLS

CAVEAT_HELP = {
    "blind share": "Share of this row's n queries whose labels were judged blind (without seeing any system's "
                   "ranking; the labels' blind field). Empty: the labels have no blind field.",
    "judged depth": "Whether k goes deeper than the judgments cover: covered to k = the deepest k where at least 90% "
                    "of the returned docs are judged, on the queries whose judged depth is known (a doc judged "
                    "non-relevant, as a blind judging round records). Labels listing only relevant docs leave it "
                    "unknown.",
    "bounds": "When k goes deeper than judged: recall@k with the unjudged docs of the top k counted as non-relevant "
              "(the number shown) and as relevant.",
}


@dataclass(frozen=True)
class Overview:
    """Everything the Overview shows at one k (besides the paired comparison)."""

    k: int
    metrics: list[str]  # the metric columns of the table, in order
    table: pd.DataFrame  # one row per run shown
    export: pd.DataFrame  # the table's numbers in long form, with their context, for the CSV download
    chart: dict  # hit@1 (the headline's), recall@k and MRR with their intervals (a Vega-Lite spec)
    tradeoff: dict | None  # recall@k against price and index size; None when no run has either
    help: dict[str, str]  # column -> what it means
    grades: tuple[str, ...] = ()  # the answer-grade columns beside recall@k (none without grade files)
    graded: str | None = None  # with grade files: which runs' answers are graded, by what, where to read more


@dataclass(frozen=True)
class Headline:
    """The answer the page opens on (`evalcore.report.headlines`: the CLI's and the meeting report's sentence), and
    the paired tests behind it."""

    best: str  # the best run in one line
    evidence: str  # the sentence that backs it
    details: list[str]  # every other run against the best, in the words of `comparison_verdict`
    caption: str  # what the numbers are: metric, n, labels, method


def headline(dataset: Dataset, runs: tuple[str, ...]) -> Headline | None:
    """The page's headline for the runs shown (None when the files cannot be scored). k-independent and fast (one
    metric, one paired test per other run): drawn before the table."""
    decision = caching.decision(dataset, runs)
    if decision is None:
        return None
    found = decision.best
    caption = (f"{found.metric}: share of queries whose first result is a relevant document · n = {found.n:,} queries "
               f"· labels {found.labels}#{found.fingerprint} · paired bootstrap interval of each difference, "
               "sign-flip test, Holm across the comparisons with the best run · models: "
               + "; ".join(f"{r} = {m}" for r, m in found.models.items()))
    return Headline(best_run_line(found), overview_evidence(found), [comparison_verdict(c) for c in found.comparisons],
                    caption)


@dataclass(frozen=True)
class Verdict:
    """One run against the baseline, in words: ``better``, ``worse`` or ``no clear difference``."""

    kind: str
    text: str


@dataclass(frozen=True)
class Comparison:
    """The paired comparison of every run shown with the baseline, at k."""

    caption: str
    verdicts: list[Verdict]
    counts: pd.DataFrame  # one row per comparison: difference, interval, wins / ties / losses, p (Holm)
    planner: str | None  # how many more labeled queries would settle the closest pair


def metrics_shown(k: int, more: bool) -> list[str]:
    """The table's metric columns: the headline's (`HEADLINE_METRIC`, a relevant document first) and recall@1,
    recall@k and MRR, then with ``more`` every other cutoff metric."""
    main = list(dict.fromkeys([HEADLINE_METRIC, "recall@1", f"recall@{k}", "mrr"]))
    extra = [f"hit@{k}", f"precision@{k}", f"ndcg@{k}", f"judged@{k}"] + (
        ["precision@1", "ndcg@1", "judged@1"] if k != 1 else [])
    return main + [m for m in extra if m not in main] if more else main


def _with_headline_metric(summary: pd.DataFrame, best: BestRun) -> pd.DataFrame:
    """``summary`` with the headline metric's rows first (the decision's best run: the numbers the headline says),
    in place of any it had."""
    means = best.means
    first = summary.drop_duplicates("run").set_index("run")
    rows = pd.DataFrame([{**first.loc[run].to_dict(), "run": run, "metric": HEADLINE_METRIC, "k": 1,
                          "mean": i.point, "ci_low": i.low, "ci_high": i.high, "ci_method": i.method}
                         for run, i in means.items() if run in first.index], columns=summary.columns)
    return pd.concat([rows, summary[summary["metric"] != HEADLINE_METRIC]], ignore_index=True)


def caveat_cells(row: dict | None, k: int) -> dict:
    """The cells for one run's caveats at k: blind share, judged depth at k, bounds when k goes deeper than judged."""
    if row is None:
        return {}
    covered = None if pd.isna(row["covered_k"]) else int(row["covered_k"])
    reach = "under 90% judged even at k = 1" if covered == 0 else f"covered to k = {covered}"
    if row["flagged"]:
        depth = f"deeper than judged ({reach})"
    elif covered is None:
        depth = "unknown: labels list only relevant docs"
    else:
        depth = f"within judged depth ({reach})"
    return {"blind share": float(row["blind_share"]) if row["blind_known"] else None,
            f"recall@{k} judged depth": depth,
            f"recall@{k} bounds": format_interval(row["low"], row["high"]) if row["flagged"] else None}


@dataclass(frozen=True)
class AnswerGrades:
    """Each graded run's mean answer grade at k with its 95% interval, beside its recall@k."""

    column: str  # "answer grade (Correctness)"
    cells: dict[str, dict]  # run -> its cells
    help: str
    said: str  # which runs are graded, by what, and where the rest is


def answer_grade(dataset: Dataset, k: int) -> AnswerGrades | None:
    """The answer grade the Answers page opens on (the one most graded runs have), per graded run: its mean with its
    95% interval and n, as ``evalcore answers --k k`` gives it; None without grade files (or when they cannot be
    joined: the Answers page says why)."""
    loaded = caching.answers(dataset, k)
    if loaded is None or not loaded.ok:
        return None
    found = loaded.value
    metric = main_grade(found)
    if metric is None:
        return None
    column = f"answer grade ({metric})"
    cells = {m.run: {column: m.interval.point, f"{column} 95% CI": format_interval(m.interval.low, m.interval.high)}
             for m in found.means if m.metric == metric and m.interval is not None}
    tools = sorted({TOOLS.get(f.format, f.format) for f in found.joined.files})
    n = {m.run: m.n for m in found.means if m.metric == metric}
    said = (f"Answer grades ({metric}, 0 to 1, from {', '.join(tools)}) of "
            + ", ".join(f"{run} (n = {n.get(run, 0):,})" for run in found.joined.runs)
            + ": whether the run that retrieves better also answers better is on the Answers page.")
    help_text = (f"The mean {metric} grade of the run's answers, 0 to 1 (each answer written from this run's retrieved "
                 "chunks and graded by the grade file's tool or person), over the labeled queries it graded. Empty: "
                 "no grade file for this run.")
    return AnswerGrades(column, cells, help_text, said)


def overview(dataset: Dataset, k: int, runs: tuple[str, ...], more: bool, checks: bool = False) -> Overview:
    """The Overview at ``k`` for the runs shown (``more``: every cutoff metric, not only recall and MRR; ``checks``:
    the blind share, judged depth and bounds columns, whose plain sentences the Integrity page says)."""
    evaluation = loading.evaluation(dataset).value
    summary = caching.summary(dataset, k, more)
    summary = _with_headline_metric(summary[summary["run"].isin(runs)], caching.decision(dataset, runs).best)
    metrics = metrics_shown(k, more)
    runs_meta = {r.name: r.run.metadata() for r in evaluation.results}
    labels = evaluation.labels
    labels_ref = f"{labels.name}#{labels.fingerprint}"
    n = evaluation.results[0].n_queries
    cells = {(run, m): (mean, low, high, count) for run, m, mean, low, high, count in zip(
        *(summary[c].tolist() for c in ("run", "metric", "mean", "ci_low", "ci_high", "n")))}
    caveats = caching.caveats_every_k(dataset).get(k, {}) if checks else {}
    grades = answer_grade(dataset, k)
    rows = []
    for run in runs:
        meta = runs_meta[run]
        row = {"run": run, "model": meta["model"]}
        for m in metrics:
            if (run, m) in cells:
                mean, low, high, _ = cells[run, m]
                row[m] = mean
                row[f"{m} 95% CI"] = format_interval(low, high)
            if m == f"recall@{k}" and grades is not None:  # the answer beside the retrieval
                row.update(grades.cells.get(run, {grades.column: None, f"{grades.column} 95% CI": None}))
        row.update(caveat_cells(caveats.get(run), k))
        row.update({"n": int(cells[run, "mrr"][3]), "k": k, "price $/M tokens": meta["price_per_mtok"],
                    "dims": meta["dims"], "index MB": (meta["index_bytes"] / 1e6 if meta["index_bytes"] else None),
                    "labels": labels_ref})
        rows.append(row)
    export = summary[summary["metric"].isin(metrics)][
        ["run", "model", "metric", "k", "mean", "ci_low", "ci_high", "n", "labels", "fingerprint", "ci_method", "level"]]
    models = "; ".join(f"{r} = {runs_meta[r]['model']}" for r in runs)
    main = [m for m in metrics_shown(k, False) if m != "recall@1"]  # the chart: the headline's metric first
    chart = charts.metric_intervals(
        summary[summary["metric"].isin(main)], list(dataset.run_names),
        title="A relevant document first (hit@1), recall@k and MRR with 95% intervals",  # the same spec at every k
        subtitle=f"n = {n:,} queries · labels {labels_ref} · {models}")
    points = pd.DataFrame([{
        "run": run, "model": runs_meta[run]["model"], "metric": f"recall@{k}",
        "mean": float(cells[run, f"recall@{k}"][0]), "ci_low": float(cells[run, f"recall@{k}"][1]),
        "ci_high": float(cells[run, f"recall@{k}"][2]), "price_per_mtok": runs_meta[run]["price_per_mtok"],
        "index_mb": runs_meta[run]["index_bytes"] / 1e6 if runs_meta[run]["index_bytes"] else None,
        "dims": runs_meta[run]["dims"],
    } for run in runs])
    tradeoff = None
    if not points[["price_per_mtok", "index_mb"]].isna().all().all():
        tradeoff = charts.tradeoff(points, list(dataset.run_names), metric="recall@k",
                                   title="Recall@k against what the run costs",
                                   subtitle=[f"n = {n:,} queries · labels {labels_ref} · bars: 95% intervals",
                                             f"models: {models}"])
    helps = {m: DESCRIPTIONS[m.split("@")[0]] for m in metrics}
    if checks:
        helps.update({"blind share": CAVEAT_HELP["blind share"], f"recall@{k} judged depth": CAVEAT_HELP["judged depth"],
                      f"recall@{k} bounds": CAVEAT_HELP["bounds"]})
    if grades is not None:
        helps[grades.column] = grades.help
    return Overview(k, metrics, pd.DataFrame(rows), export, chart, tradeoff, helps,
                    (grades.column,) if grades is not None else (), grades.said if grades is not None else None)


def curves_pending(dataset: Dataset, more: bool) -> bool:
    """Whether the intervals at every k are still being computed (they are started here, after the first chart;
    the Choose k page's numbers are started too, so its first visit finds them ready)."""
    pending = computed.curves(dataset, more, wait=False) is None
    computed.prepare_budget(dataset)
    return pending


def comparison(dataset: Dataset, k: int, baseline: str, runs: tuple[str, ...]) -> Comparison | None:
    """The runs shown against ``baseline`` at ``k``; None with fewer than two runs loaded."""
    evaluation = loading.evaluation(dataset).value
    if evaluation is None or len(evaluation.results) < 2:
        return None
    report = caching.comparison(dataset, k, baseline)
    shown = [c for c in report.comparisons if c.run in runs] if report else []
    model = {r.name: r.model for r in evaluation.results}
    labels = evaluation.labels
    n = evaluation.results[0].n_queries
    caption = (f"Every run against the baseline {baseline} ({model[baseline]}) on the same {n:,} queries: paired "
               f"bootstrap interval of the difference, sign-flip test, Holm-corrected across all "
               f"{len(report.comparisons) if report else 0} comparisons · k = {k} · labels "
               f"{labels.name}#{labels.fingerprint}")
    verdicts = [Verdict(("better" if c.diff > 0 else "worse") if c.significant else "no clear difference",
                        comparison_verdict(c))
                for c in shown]
    counts = pd.DataFrame([{
        "run": c.run, "baseline": c.baseline, "metric": c.metric, "difference": c.diff,
        "95% CI": format_interval(c.ci_low, c.ci_high, join=" to ", number=lambda v: f"{v:+.3f}"),
        "wins": c.wins, "ties": c.ties, "losses": c.losses,
        "p (Holm)": c.p_adjusted, "n": c.n, "k": k,
        "models": f"{c.run} = {model[c.run]}; {c.baseline} = {model[c.baseline]}",
    } for c in shown])
    planner = None
    if report is not None and report.planner is not None:
        planner = (f"Planning more labels ({report.planner_pair[0]} vs {report.planner_pair[1]}): "
                   f"{plan_summary(report.planner)}")
    return Comparison(caption, verdicts, counts, planner)


def warnings(dataset: Dataset, k: int) -> pd.DataFrame:
    """The warnings ``evaluate --k 1,k`` prints (computed only when the page's panel is opened)."""
    return loading.warnings_frame(dataset, k)
