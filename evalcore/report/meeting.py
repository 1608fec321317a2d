"""A one-page report for a meeting: the answers on page one (the best run, the k to take, the leaderboard, with answer
grades each run's mean grade beside it and one sentence on where better retrieval answers worse
(`evalcore.report.meeting_answers`), each run's failures and the top open ones), then an appendix on pages of its
own: the paired comparison, the answer grades in words, the k to take and the cost at the report's k with recall
against k, the leaderboard drawn, how each model line moved, and where every number came from.

`build_report` takes an `Evaluation` (and optionally the failure ledger, history and provenance);
`report_from_workspace` fills those from a saved evaluation. The `MeetingReport` renders as
Markdown (`to_markdown`), as one self-contained HTML file (`to_html`: charts are PNGs made with
vl-convert and embedded as data URIs) and as a CSV of failures (`failures_csv`, formula-safe).

What the page says is here (`MeetingReport` and its sections); the tables it is built from are in
`evalcore.report.meeting_tables`, the charts in `evalcore.report.charts`, and the Markdown / HTML
rendering, which escapes every piece of user text, in `evalcore.report.meeting_render`. Every number
travels with its context (docs/metrics.md): metric and k, n, model, label set name, version and
fingerprint, interval level and seed.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping

import pandas as pd

from ..analyses.answer_join import DEFAULT_GOOD, join_grades
from ..analyses.answers import AnswerStudy, answer_study
from ..analyses.budget_report import BudgetReport
from ..analyses.compare import ComparisonReport, compare_evaluation
from ..analyses.decision import Decision, decide
from ..analyses.k_decision import BASIS_TRADE_OFF
from ..analyses.k_settings import BudgetSettings
from ..analyses.landed import landed_text
from ..errors import UsageError, invalid_parameter
from ..metrics.evaluation import Evaluation
from ..metrics.failure import FAILURE_MODE, MISS_NAMES
from ..metrics.measures import DESCRIPTIONS, Measure, check_k
from ..readers.grades import GradeSet
from ..safe_text import to_csv
from ..store.workspace import Workspace
from ..timestamps import minute
from ..version import __version__
from .amounts import format_interval
from .budget import budget_summary
from .charts import history_spec, leaderboard_spec, recall_k_spec
from .choose_k import choose_k_headline
from .compare import comparison_verdict, plan_summary
from .headlines import overview_headline
from .meeting_answers import ANSWER_LINES, answers_json, appendix_section, diverging_line, grade_cell, grade_header
from .meeting_render import CHART_SCALE, Safe, Section, compact_png, labels_ref, render_html, render_markdown
from .meeting_tables import (
    FAILURE_COLUMNS,
    UNTRACKED,
    default_provenance,
    leaderboard,
    ledger_failures,
    now,
    order_failures,
    page_one_failures,
    page_one_room,
    untracked_failures,
)

__all__ = [
    "MeetingReport", "Safe", "build_report", "report_from_workspace",
    # defined in evalcore.report.meeting_tables, importable from here as before
    "FAILURE_COLUMNS", "UNTRACKED", "default_provenance", "untracked_failures",
]

_OPEN = ("regressed", "new", "known", UNTRACKED)


# ----------------------------------------------------------------------------- the report


@dataclass(frozen=True)
class MeetingReport:
    """Everything on the page, as values; render with `to_markdown`, `to_html`, `failures_csv`."""

    title: str
    generated_at: str
    k: int
    leaderboard: pd.DataFrame
    metrics: tuple[str, ...]
    comparison: "ComparisonReport | None"
    decision: Decision
    failures: pd.DataFrame
    top_failures: int
    history: pd.DataFrame | None
    provenance: dict
    warnings: tuple[str, ...] = ()
    notes: tuple[str, ...] = field(default=())
    headline: str = ""  # the Overview's headline (`evalcore.report.headlines.overview_headline`)
    answers: AnswerStudy | None = None  # answer grades beside retrieval (`evalcore.report.meeting_answers`)

    @property
    def budget(self) -> BudgetReport | None:
        """Every run's k budget under the report's settings (the decision's)."""
        return self.decision.budget

    def to_dict(self) -> dict:
        """``evalcore report --format json``: the decisions (`Decision.to_dict`) with the report's title, k and
        headlines, and ``answers``: the answer grades (`evalcore.report.meeting_answers.answers_json`; null without
        them)."""
        return {"title": self.title, "k": self.k, "headline": self.headline, "k_headline": self.k_headline,
                **self.decision.to_dict(), "answers": answers_json(self.answers)}

    @property
    def k_headline(self) -> str | None:
        """The Choose k headline (`evalcore.report.choose_k.choose_k_headline`), the same sentence as the page's."""
        return choose_k_headline(self.decision) if self.budget is not None and self.budget.runs else None

    # ------------------------------------------------------------------ renderers

    def failures_csv(self) -> str:
        """Every failure at k (not only the top ones) with its context, formula-safe."""
        return to_csv(self.failures[FAILURE_COLUMNS])

    def chart_specs(self) -> dict[str, dict]:
        """Vega-Lite specs (plain dicts) of the charts: ``leaderboard`` and, with history, ``history``."""
        specs = {"leaderboard": leaderboard_spec(self.leaderboard, self.metrics, self.provenance)}
        if self.budget is not None and self.budget.runs:
            specs["recall_k"] = recall_k_spec(self.budget, self.k, self.provenance)
        if self.history is not None and not self.history.empty and self.history["step"].max() > 1:
            specs["history"] = history_spec(self.history, self.k, self.leaderboard["level"].iloc[0], self.provenance)
        return specs

    def chart_pngs(self, scale: float = CHART_SCALE) -> dict[str, bytes]:
        """The charts as PNG bytes (vl-convert), recompressed (`compact_png`). Empty when vl-convert-python is not
        installed."""
        try:
            import vl_convert  # optional (the dashboard extra) and slow to load: only when charts are drawn
        except ImportError:
            return {}
        return {name: compact_png(bytes(vl_convert.vegalite_to_png(spec, scale=scale)))
                for name, spec in self.chart_specs().items()}

    def to_markdown(self, images: Mapping[str, str] | None = None) -> str:
        """Markdown: the answers, then "Appendix: details"; ``images`` maps chart names to image paths or URLs to link
        (none by default)."""
        answers, appendix = _sections(self)
        return render_markdown(self.title, answers, self.notes, dict(images or {}), appendix)

    def to_html(self, charts: bool = True) -> str:
        """One self-contained HTML page: printed, the answers fill one A4 page and "Appendix: details" starts the next;
        charts embedded as PNG data URIs (unless ``charts`` is False)."""
        pngs = self.chart_pngs(CHART_SCALE) if charts else {}
        notes = list(self.notes)
        if charts and not pngs:
            notes.append("Charts left out: vl-convert-python is not installed (pip install 'evalcore[dashboard]').")
        answers, appendix = _sections(self)
        return render_html(self.title, answers, notes, pngs, appendix)

    def write(self, path: str | os.PathLike, *, charts: bool = True) -> list[Path]:
        """Write the report by extension: ``.html``/``.htm`` one file; ``.md`` the Markdown plus one PNG per
        chart beside it (``<stem>-leaderboard.png``). Returns the paths written."""
        target = Path(path)
        suffix = target.suffix.lower()
        if suffix in (".html", ".htm"):
            target.write_text(self.to_html(charts=charts), encoding="utf-8")
            return [target]
        if suffix not in (".md", ".markdown"):
            raise invalid_parameter("output", "a file name ending in .html, .htm or .md", str(path))
        written, images = [], {}
        if charts:
            for name, png in self.chart_pngs().items():
                image = target.with_name(f"{target.stem}-{name}.png")
                image.write_bytes(png)
                written.append(image)
                images[name] = image.name
        target.write_text(self.to_markdown(images), encoding="utf-8")
        return [target] + written


def build_report(
    evaluation: Evaluation,
    *,
    k: int | None = None,
    docs=None,
    settings: BudgetSettings | None = None,
    baseline: str | None = None,
    top_failures: int = 5,
    title: str | None = None,
    failures: pd.DataFrame | None = None,
    history: pd.DataFrame | None = None,
    provenance: dict | None = None,
    answers: AnswerStudy | None = None,
) -> MeetingReport:
    """The report of one evaluation at the chosen cutoff ``k`` (default: its largest k).

    The answers (the best run, each run's k to take, the failures at k) are one `evalcore.analyses.decision.Decision`
    under the k ``settings`` (price, requests a month, what a recall point is worth: the same as ``evalcore budget``
    and the Choose k page); the cost of k sizes chunks from ``docs``, else as ``settings.chunk_tokens`` each, else at
    the core's default chunk size (said in the warnings). ``baseline`` is the run the others are
    compared with (default: the first). ``failures`` (columns `FAILURE_COLUMNS`, from the ledger)
    and ``history`` (`Workspace.history` rows) come from a workspace; without ``failures`` the
    queries each run misses at k (hit@k = 0) are listed as untracked. ``provenance`` overrides
    what is said about where the inputs came from. ``answers``: answer grades studied beside this evaluation at ``k``
    (`evalcore.analyses.answers.answer_study`), shown beside recall.
    """
    chosen = evaluation.check_k(max(evaluation.ks) if k is None else k)
    if isinstance(top_failures, bool) or not isinstance(top_failures, int) or top_failures < 0:
        raise invalid_parameter("top_failures", "an integer >= 0", top_failures)
    if answers is not None and answers.k not in (None, chosen):
        raise invalid_parameter("answers", f"answer grades studied beside recall@{chosen}", f"recall@{answers.k}")
    if baseline is not None and baseline not in evaluation.run_names:
        raise UsageError(f"No run named {baseline!r} to use as baseline; runs are: {', '.join(evaluation.run_names)}.")
    metrics = tuple(dict.fromkeys(["recall@1", f"recall@{chosen}", f"hit@{chosen}", "mrr"]))
    provenance = dict(provenance) if provenance is not None else default_provenance(evaluation)
    provenance.setdefault("generated_at", now())
    provenance["settings"] = {**evaluation.settings(), "chosen_k": chosen, **provenance.get("settings", {})}
    board = leaderboard(evaluation, metrics, chosen, provenance)

    comparison = None
    if len(evaluation.results) >= 2:
        compared = tuple(dict.fromkeys(["recall@1", f"recall@{chosen}", "mrr"]))
        comparison = compare_evaluation(evaluation, list(compared), baseline or evaluation.run_names[0])

    decision = decide(evaluation, chosen, settings, docs=docs)
    budget = decision.budget
    if budget is not None:
        provenance["budget"] = {key: budget.settings.get(key) for key in
                                ("documents", "tokenizer", "price_per_mtok", "price_source", "requests_per_month",
                                 "value_per_point", "max_k", "lambda", "lambda_source", "seed")}

    if failures is None:
        failures = untracked_failures(evaluation, chosen, provenance)
    missing = [c for c in FAILURE_COLUMNS if c not in failures.columns]
    if missing:
        raise invalid_parameter("failures", "a table with the columns " + ", ".join(FAILURE_COLUMNS),
                                "missing " + ", ".join(missing))
    labels = provenance["labels"]
    version = f" v{labels['version']}" if labels.get("version") is not None else ""
    return MeetingReport(
        title=title or f"Retrieval quality: {labels['name']}{version}, k = {chosen}",
        generated_at=provenance["generated_at"], k=chosen, leaderboard=board, metrics=metrics,
        comparison=comparison, decision=decision, failures=order_failures(failures), top_failures=top_failures,
        history=history, provenance=provenance, headline=overview_headline(decision.best), answers=answers,
        warnings=tuple(f"[{w.code}] x{w.count}: {w.message}" for w in evaluation.all_warnings)
        + (tuple(f"[{w.code}] x{w.count}: {w.message}" for w in budget.warnings if w.code not in
                 {x.code for x in evaluation.all_warnings}) if budget is not None else ())
        + (tuple(f"[{w.code}] x{w.count}: {w.message}" for w in answers.joined.warnings) if answers else ()),
    )


def report_from_workspace(workspace: Workspace, evaluation: int | str = "latest", *, k: int | None = None,
                          workspace_name: str | None = None, grades: list[GradeSet] | None = None,
                          good: float | None = None, **options) -> MeetingReport:
    """The report of a saved evaluation: recomputed from its stored files (same seed, same numbers), its
    failures annotated from the ledger (status, tags, notes, regressions in each run), each model
    line's history, and the stored provenance. ``workspace_name``: what follows "in the workspace" (default its
    folder; the dashboard says "of the dashboard's server": a server shows its visitors no path). ``grades``: answer
    grade files joined to the saved labels and set beside recall at k (an answer is good at ``good``, default as
    `evalcore answers`), with the evaluation's level and seed. ``options`` are those of `build_report`."""
    saved = workspace.evaluation(evaluation)
    chosen = saved.k if k is None else k
    chosen = check_k(chosen, max(saved.ks))
    computed = workspace.load_evaluation(saved.id)
    provenance = {
        "evaluation": {"id": saved.id, "saved_at": saved.created_at,
                       "workspace": workspace_name or str(workspace.location),
                       "note": saved.note, "evalcore_version": saved.evalcore_version},
        "labels": {"name": saved.labels.name, "version": saved.labels.version,
                   "fingerprint": saved.labels.fingerprint, "n_labeled": saved.labels.n_queries,
                   "n_evaluated": saved.n_queries, "file": saved.labels.source_name,
                   "sha256": saved.labels_file_sha256 or saved.labels.source_sha256,
                   "change": saved.labels.change},
        "runs": [{"name": r.name, "model": r.model, "line": r.line, "file": r.file_name, "sha256": r.file_sha256,
                  "uploaded_at": r.uploaded_at, "price_per_mtok": r.price_per_mtok, "dims": r.dims,
                  "index_bytes": r.index_bytes, "n_queries": r.n_queries, "run_id": r.id} for r in saved.runs],
    }
    failures = ledger_failures(workspace, saved, computed, chosen)
    histories = []
    for model_line in dict.fromkeys(r.line for r in saved.runs):
        frame = workspace.history(model_line, [f"recall@{chosen}"], labels=saved.labels.name)
        if not frame.empty:
            histories.append(frame)
    history = pd.concat(histories, ignore_index=True) if histories else None
    answers = None
    if grades:
        joined = join_grades(grades, computed.labels, runs=list(computed.run_names))
        answers = answer_study(joined, computed, k=chosen, good=DEFAULT_GOOD if good is None else good,
                               level=computed.level, seed=computed.seed)
    return build_report(computed, k=chosen, failures=failures, history=history, provenance=provenance,
                        answers=answers, **options)


# ----------------------------------------------------------------------------- page content


def _ci(mean: float, low: float, high: float) -> Safe:
    return Safe(format_interval(low, high, digits=4, join=" to ", mean=mean))


def _context(report: MeetingReport) -> list:
    """The sentence every number on the page is read with."""
    settings = report.provenance["settings"]
    level = int(round(float(settings["level"]) * 100))
    n = int(report.leaderboard["n"].iloc[0])
    return [Safe(f"n = {n} evaluated queries; labels "), labels_ref(report.provenance),
            Safe(f"; cutoffs k = {', '.join(str(x) for x in settings['k'])}, report at k = {report.k}; "
                 f"relevant = grade >= {settings['min_grade']:g}; {level}% intervals ({settings['ci_note']}); "
                 f"seed {settings['seed']}.")]


def _sections(report: MeetingReport) -> tuple[list[Section], list[Section]]:
    """The page as sections of blocks (("p", parts), ("lead", parts), ("table", header, rows), ("list", items),
    ("image", name, alt)): first the answers a meeting needs, one A4 page (the best run, the k to take, the
    leaderboard, each run's failures and the top ones), then the appendix of the details behind them."""
    board = report.leaderboard
    level = int(round(float(board["level"].iloc[0]) * 100))
    out: list[Section] = []
    appendix: list[Section] = []

    # The answer first: the best run, and the k to take
    answer: list = [("lead", [report.headline])]
    if report.k_headline is not None:
        answer.append(("lead", [report.k_headline]))
    out.append(("The answer", answer))

    # Leaderboard
    header = [Safe("#"), Safe("run"), Safe("model")] + [Safe(f"{m} ({level}% CI)") for m in report.metrics] + [Safe("n")]
    graded = report.answers is not None and bool(report.answers.means)
    if graded:
        header.append(grade_header(report.answers, level))
    show_cost = board["price_per_mtok"].notna().any() or board["dims"].notna().any()
    if show_cost:
        header += [Safe("embedding $/Mtok"), Safe("dims")]
    rows = []
    for row in board.to_dict(orient="records"):
        cells = [Safe(str(row["rank"])), row["run"], row["model"]]
        cells += [_ci(row[m], row[f"{m}_ci_low"], row[f"{m}_ci_high"]) for m in report.metrics]
        cells.append(Safe(str(row["n"])))
        if graded:
            cells.append(grade_cell(report.answers, row["run"]))
        if show_cost:
            cells += [Safe("" if pd.isna(row["price_per_mtok"]) else f"{row['price_per_mtok']:g}"),
                      Safe("" if pd.isna(row["dims"]) else f"{int(row['dims'])}")]
        rows.append(cells)

    blocks: list = [("p", _context(report)), ("table", header, rows)]
    notes = sorted({n for n in board["note"] if n})
    if notes:
        blocks.append(("p", [Safe("Note: "), *notes]))
    said = diverging_line(report.answers) if graded else None
    if said:
        blocks.append(("p", [said]))
    out.append((f"Leaderboard at k = {report.k}", blocks))

    # Each run's failures, and the top open ones (as many as the page has room for; all of them in the appendix)
    failures = report.failures
    open_rows = failures[failures["status"].isin(_OPEN)]
    runs = [str(run) for run in board["run"]]
    counts = []
    for run in runs:
        mine = failures[failures["run"] == run]
        opened = open_rows[open_rows["run"] == run]
        regressed = int(mine["regressed"].astype(bool).sum())
        counts.append([run, Safe(f": {len(mine)} of {int(board.loc[board['run'] == run, 'n'].iloc[0])} queries "
                                 f"{MISS_NAMES[FAILURE_MODE]} at k = {report.k} (no relevant doc in the top "
                                 f"{report.k}); {len(opened)} open"
                                 + (f", {regressed} regressed in this run" if regressed else ""))])
    top = pd.concat([open_rows[open_rows["run"] == run].head(report.top_failures) for run in runs])
    room = page_one_room(len(runs), report.top_failures, ANSWER_LINES if graded else 0)
    shown, cut = page_one_failures(top, runs, room)
    full = f"Top open failures at k = {report.k} in full (up to {report.top_failures} per run, regressions first)"
    blocks = [("list", counts)]
    if len(shown):
        blocks.append(("table", _FAILURE_HEADER, _failure_rows(shown)))
    else:
        blocks.append(("p", [Safe("No open failures.")]))
    if cut:
        blocks.append(("p", [Safe(f"Cut to fit the page; the appendix has them in full (\u201c{full}\u201d).")]))
    out.append((f"Top open failures at k = {report.k} (up to {room} per run, regressions first)", blocks))

    # The appendix: the details behind the answers
    if report.comparison is not None:
        models = {r["run"]: r["model"] for r in board.to_dict(orient="records")}
        items = []
        for c in report.comparison.comparisons:
            context = (f" [{c.metric}, n = {c.n}, {c.baseline} = {models.get(c.baseline)}, {c.run} = "
                       f"{models.get(c.run)}, labels {labels_ref(report.provenance)}; p {c.p_value:.3g} raw, "
                       f"{c.p_adjusted:.3g} after Holm over {c.n_comparisons}; {c.test}]")
            items.append([comparison_verdict(c), context])
        blocks = [("list", items)]
        if report.comparison.planner is not None:
            base, run = report.comparison.planner_pair
            blocks.append(("p", [f"Planner ({base} vs {run}): {plan_summary(report.comparison.planner)}"]))
        appendix.append(("Paired comparison", blocks))
    if graded:
        appendix.append(appendix_section(report.answers))

    # The k to take, and the cost at the report's k
    if report.budget is not None:
        settings = report.budget.settings
        header = [Safe("run"), Safe("model"), Safe("k to take (rule)"), Safe(f"recall@{report.k} (interval: leaderboard)"),
                  Safe(f"prompt tokens at k = {report.k} (mean)"), Safe("$ per 1,000 requests")]
        with_month = settings.get("requests_per_month") is not None
        if with_month:
            header.append(Safe("$ per month"))
        rows, sentences = [], []
        for run in report.budget:
            at = run.row(report.k)
            decided = report.decision.k_to_take(run.name)
            why = "trade-off" if decided.basis == BASIS_TRADE_OFF else "elbow: no trade-off given"
            cells = [run.name, run.model, Safe(f"{decided.k} ({why})"), Safe(f"{at['recall']:.4f}"),
                     Safe(f"{at['tokens_mean']:,.0f}"), Safe(f"{at['cost_per_1k_requests']:.4f}")]
            if with_month:
                cells.append(Safe(f"{at['cost_per_month']:,.2f}"))
            rows.append(cells)
            sentences.append([run.name, Safe(": "), budget_summary(run)])
        price = (f"Prompt cost at ${settings['price_per_mtok']:g} per million input tokens of the generator LLM "
                 f"({settings['price_source']}); tokens counted with {settings['tokenizer']}")
        docs = settings.get("documents")
        blocks = [("table", header, rows), ("p", [Safe(price), Safe("; documents "), docs or "(none)", Safe(".")]),
                  ("list", sentences),
                  ("image", "recall_k", f"Recall against k with {level}% bands, the report's k and each run's k to take")]
        appendix.append((f"The k to take, and the cost at k = {report.k}", blocks))

    # The leaderboard drawn, and what its metrics mean
    meanings = [[Safe(f"{m}: "), Safe(DESCRIPTIONS[Measure.parse(m).name])] for m in report.metrics]
    appendix.append((f"The leaderboard at k = {report.k} drawn, and what its metrics mean",
                     [("image", "leaderboard", f"Leaderboard chart: means with {level}% intervals"),
                      ("list", meanings)]))

    if cut:
        appendix.append((full, [("table", _FAILURE_HEADER, _failure_rows(top))]))

    # History
    if report.history is not None and not report.history.empty and report.history["step"].max() > 1:
        metric = f"recall@{report.k}"
        frame = report.history[report.history["metric"] == metric]
        header = [Safe("line"), Safe("step"), Safe("run"), Safe("model"), Safe(f"{metric} ({level}% CI)"), Safe("n"),
                  Safe("labels version")]
        rows = [[r.line, Safe(str(r.step)), r.run, r.model, _ci(r.mean, r.ci_low, r.ci_high), Safe(str(r.n)),
                 Safe(f"v{r.labels_version} #{r.fingerprint}")] for r in frame.itertuples(index=False)]
        appendix.append(("Model lines over time", [("table", header, rows),
                                                   ("image", "history", f"{metric} over each model line's runs")]))

    # Provenance
    prov = report.provenance
    labels = prov["labels"]
    items = []
    if prov.get("evaluation"):
        e = prov["evaluation"]
        items.append([Safe(f"Evaluation {e['id']}, saved {minute(e['saved_at'])} with evalcore {e['evalcore_version']} in the "
                           "workspace "), e["workspace"]])
    items.append([Safe("Labels: "), labels_ref(prov), Safe(f" ({labels['n_labeled']} labeled queries, "
                                                            f"{labels['n_evaluated']} evaluated); file "),
                  labels.get("file") or "(not a file)",
                  Safe(f" sha256 {labels['sha256'][:12]}" if labels.get("sha256") else "")]
                 + ([Safe("; this version: "), labels["change"]] if labels.get("change") else []))
    if prov.get("split"):
        split = prov["split"]
        items.append([Safe("Split: "), f"{split['headline']} ({split['rule']}); {split['n_queries']} queries of the "
                                       f"whole label set {split['full_labels']} #{split['full_fingerprint']}"])
    settings = prov["settings"]
    items.append([Safe(f"Settings: k = {', '.join(str(x) for x in settings['k'])}; report at k = {report.k}; relevant = "
                       f"grade >= {settings['min_grade']:g}; queries without a relevant doc: "
                       f"{settings['zero_relevant']}; {int(round(settings['level'] * 100))}% intervals, "
                       f"{settings['ci_note']}; seed {settings['seed']}.")])
    if prov.get("budget"):
        b = prov["budget"]
        items.append([Safe(f"Cost of k: tokenizer {b['tokenizer']}; ${b['price_per_mtok']:g} per million tokens "
                           f"({b['price_source']}); lambda {b['lambda']:g} ({b['lambda_source']}); max k {b['max_k']}; "
                           f"seed {b['seed']}; documents "), b.get("documents") or "(none)"])
    items.append([Safe(f"Generated {minute(prov['generated_at'])} by evalcore {_version()}.")])
    blocks = [("list", items)]
    header = [Safe("run"), Safe("model"), Safe("line"), Safe("file"), Safe("sha256"), Safe("uploaded"),
              Safe("$/Mtok"), Safe("dims"), Safe("index bytes"), Safe("queries in run")]
    rows = [[r["name"], r["model"], r.get("line") or "", r.get("file") or "", Safe((r.get("sha256") or "")[:12]),
             Safe(minute(r["uploaded_at"]) if r.get("uploaded_at") else ""), Safe(_num(r.get("price_per_mtok"))), Safe(_num(r.get("dims"))),
             Safe(_num(r.get("index_bytes"))), Safe(_num(r.get("n_queries")))] for r in prov["runs"]]
    blocks.append(("table", header, rows))
    appendix.append(("Provenance", blocks))
    if report.warnings:
        appendix.append(("Warnings", [("list", [[w] for w in report.warnings])]))
    return out, appendix


_FAILURE_HEADER = [Safe("run"), Safe("query"), Safe("what the customer typed"), Safe("status"),
                   Safe("first relevant rank"), Safe("failing since"), Safe("tags"), Safe("note")]


def _failure_rows(frame: pd.DataFrame) -> list[list]:
    """One row per failure of ``frame`` (columns `FAILURE_COLUMNS`) under `_FAILURE_HEADER`."""
    rows = []
    for row in frame.to_dict(orient="records"):
        status = row["status"] + (" (regressed in this run)" if row["regressed"] and row["status"] != "regressed"
                                  else "")
        returned = 0 if pd.isna(row["n_returned"]) else int(row["n_returned"])
        rank = landed_text(row["first_rank"], returned, returned > 0)  # as the Failures page says it
        rows.append([row["run"], row["query"], row["query_text"] or "", status, Safe(rank), row["since"] or "",
                     row["tags"] or "", row["note"] or ""])
    return rows


def _num(value: object) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    if isinstance(value, float) and not value.is_integer():
        return f"{value:g}"
    return f"{int(value):,}"


def _version() -> str:
    return __version__
