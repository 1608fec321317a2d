"""The Answers page's model: the answers' grades (from ragas, DeepEval, RAGChecker, promptfoo or a person) set beside
each run's retrieval, query by query: the sentence the page opens on (the run that retrieves better, and how many of
those queries it answers worse all the same), the chart of retrieval against the grade, the list of those queries,
one query's answers with the judge's reasons, and the numbers of ``evalcore answers`` behind it all.

Every number is the study ``evalcore answers --k K`` computes on the same files (`dashboard.caching.answers`), read
query by query by `evalcore.analyses.answer_queries`; one query up close is the Failures page's drill-down
(`dashboard.page_models.failures.drill_down`) with each run's answer beside it. Plain functions: the view keeps what
these return with `dashboard.caching.kept`.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass

import pandas as pd

from evalcore.analyses.answer_queries import (
    GradedAnswer,
    Lead,
    answers_to,
    grades_of,
    lead_queries,
    leads,
    main_grade,
    per_query,
    recall_at,
)
from evalcore.analyses.answers import AnswerStudy
from evalcore.metrics.dataset import Dataset
from evalcore.report.amounts import format_interval, format_p
from evalcore.report.answers import (
    agreement_sentence,
    answers_dict,
    best_sentences,
    correlation_sentence,
    diverging_sentences,
    joint_sentence,
    unmatched_sentence,
)
from evalcore.report.compare import comparison_verdict
from evalcore.warning_log import plural

from dashboard import caching, charts, loading
from dashboard.loading import Loaded
from dashboard.page_models import failures

TOOLS = {"ragas": "ragas", "deepeval": "DeepEval", "ragchecker": "RAGChecker", "promptfoo": "promptfoo",
         "table": "a grade table"}
"""How the page names the tool that wrote a grade file."""
NO_GRADES = ("No answer grades are loaded for these runs. Upload a grade file per run on the Data page (ragas, "
             "DeepEval, RAGChecker or promptfoo output, or a table of query_id or query_text and a grade per column) "
             "to see whether better retrieval gives better answers.")
ANCHOR = "retrieval-better-answer-worse"
"""Where the list of the queries the sentence counts starts (its "see them" link)."""

drill_down = failures.drill_down
"""One query up close: the Failures page's drill-down (every run's ranked list, the relevant docs with their text)."""


def study(dataset: Dataset, k: int) -> Loaded | None:
    """The answer grades beside retrieval at ``k`` (None: no grades loaded; else the study, or why there is none)."""
    return caching.answers(dataset, k)


@dataclass(frozen=True)
class Choice:
    """What the page is about: the grade shown, the grades there are, and the pair of runs (in the direction the
    sentence reads) with the other directions a person may pick instead."""

    metric: str
    metrics: tuple[str, ...]
    lead: Lead | None
    leads: tuple[Lead, ...]


def pair_key(lead: Lead) -> str:
    """How a pair is named in the page's link: ``tuned over base``."""
    return f"{lead.better} over {lead.worse}"


def choice(found: AnswerStudy, runs: tuple[str, ...], metric: str | None = None, pair: str | None = None) -> Choice:
    """The grade ``metric`` (default: the one most runs have) and the ``pair`` (`pair_key`) when the study has it among
    the runs shown (default: the pair whose better retriever answers the most of those queries worse)."""
    metrics = tuple(grades_of(found))
    metric = metric if metric in metrics else main_grade(found)
    every = tuple(leads(found, metric, runs)) if metric is not None else ()
    picked = next((lead for lead in every if pair_key(lead) == pair), None)
    return Choice(metric or "", metrics, picked or (every[0] if every else None), every)


def lead_label(lead: Lead) -> str:
    """How a pair is offered: "tuned against base (tuned retrieves more for 38 queries)"."""
    more = plural(lead.finds_more, "query", "queries")
    return f"{lead.better} against {lead.worse} ({lead.better} retrieves more for {more})"


def _tool(found: AnswerStudy, run: str) -> str:
    tools = sorted({TOOLS.get(f.format, f.format) for f in found.joined.files if f.run == run})
    return " and ".join(tools) or "its grade file"


def sentence(lead: Lead) -> str:
    """The page's answer: "tuned retrieves better than base for 38 queries but answers 11 of them worse"."""
    more = plural(lead.finds_more, "query", "queries")
    if not lead.finds_more:
        return (f"{lead.better} and {lead.worse} retrieve the same for every one of the {lead.n:,} queries both "
                "graded: where their answers differ, retrieval is not why")
    if not lead.answers_worse:
        return f"{lead.better} retrieves better than {lead.worse} for {more} and answers none of them worse"
    worse = "it" if lead.finds_more == 1 else f"{len(lead.answers_worse):,} of them"
    return f"{lead.better} retrieves better than {lead.worse} for {more} but answers {worse} worse"


def _grades_line(found: AnswerStudy, metric: str, runs: tuple[str, ...]) -> str | None:
    """Which run's answers grade higher, in plain words, and whether the difference could be chance."""
    rated = sorted((m for m in found.means if m.metric == metric and m.run in runs and m.interval is not None),
                   key=lambda m: -m.interval.point)
    if not rated:
        return None
    scale = f"{metric}, from 0 to 1, higher is better"
    if len(rated) == 1:
        m = rated[0]
        graded = plural(m.n, "graded query", "graded queries")
        return f"{m.run}'s answers average {m.interval.point:.2f} ({scale}; {graded})."
    listed = ", ".join(f"{m.run} {m.interval.point:.2f}" for m in rated)
    top, second = rated[0].run, rated[1].run
    pair = next((c for c in found.pairs if c.metric == metric and {c.run, c.baseline} == {top, second}), None)
    if pair is None:
        return f"Answer grades ({scale}): {listed} on average."
    verdict = (f"{top}'s answers really do grade higher than {second}'s" if pair.significant else
               f"the difference between {top} and {second} could be chance")
    both = plural(pair.n, "query", "queries")
    return f"Answer grades ({scale}): {listed} on average; {verdict} ({both} both graded)."


@dataclass(frozen=True)
class AnswersPage:
    """Everything the Answers page shows at one k, for one grade and pair of runs."""

    sentence: str  # the answer, one line (without its "see them" link)
    queries: tuple[str, ...]  # the queries the sentence counts, as listed below it
    words: str  # the sentence's terms in plain words
    grades: str | None  # which run's answers grade higher, in plain words
    files: tuple[str, ...]  # what of each grade file met no scored labeled query, one sentence each
    choice: Choice
    chart: dict | None  # retrieval against the grade, query by query (Vega-Lite)
    joint: pd.DataFrame  # per run: found a relevant doc or not, against answered well or not
    listed: pd.DataFrame  # the sentence's queries, both runs' recall@k and grades, the largest fall first
    list_caption: str
    context: str  # k, n, labels, models and grade files of every number here


def page(dataset: Dataset, k: int, runs: tuple[str, ...], metric: str | None = None,
         pair: str | None = None) -> Loaded | None:
    """The page at ``k`` for the runs shown (None: no grades loaded; else the page, or why there is none)."""
    loaded = study(dataset, k)
    if loaded is None or not loaded.ok:
        return loaded
    found = loaded.value
    graded = tuple(r for r in runs if r in found.joined.runs)
    if not graded:
        return None
    picked = choice(found, graded, metric, pair)
    evaluation = loading.evaluation(dataset).value
    metric, lead = picked.metric, picked.lead
    labels = evaluation.labels
    models = "; ".join(f"{r} = {evaluation[r].model}" for r in graded)
    files = "; ".join(f"{f.run}: {f.source} ({TOOLS.get(f.format, f.format)})" for f in found.joined.files
                      if f.run in graded)
    points = per_query(found, evaluation, metric, graded)
    n = points.groupby("run").size().to_dict() if len(points) else {}
    counted = " · ".join(f"{r}: {plural(n.get(r, 0), 'query', 'queries')}" for r in graded)
    context = (f"k = {k} · n = {counted} graded and scored · labels {labels.name}#{labels.fingerprint} · models: "
               f"{models} · grades: {files}")
    tool = " / ".join(dict.fromkeys(_tool(found, r) for r in graded))
    words = (f"Retrieves better: more of a query's relevant docs in the top {k} (a higher recall@{k}) on the same "
             f"query. Answers worse: a lower {metric} grade, as {tool} scored the answer. An answer counts as answered "
             f"well at {found.good:g} or above.")
    said, queries, shown = None, (), pd.DataFrame(columns=["query", "query text"])
    if not len(points):
        said = ("None of the graded answers is to a labeled query these pages score, so there is nothing to set "
                "beside retrieval yet")
        caption = "Each grade file's line above says which of its rows met no labeled query."
    elif lead is None:
        joint = next((j for j in found.joint if j.metric == metric and j.run in graded), None)
        said = (joint_sentence(joint, found.good).rstrip(".") if joint is not None else
                f"{graded[0]}'s answers are graded on {metric}")
        caption = ("Grade a second run's answers to list the queries where better retrieval did not give a better "
                   "answer.")
    elif not lead.answers_worse:
        caption = (f"No query where {lead.better} retrieves more than {lead.worse} was answered worse."
                   if lead.finds_more else f"No query where {lead.better} retrieves more than {lead.worse}.")
    else:
        queries = lead.answers_worse
        listed = lead_queries(found, evaluation, lead)
        shown = pd.DataFrame({
            "query": listed["query"], "query text": listed["query_text"],
            f"recall@{k} {lead.better}": listed["recall_better"], f"recall@{k} {lead.worse}": listed["recall_worse"],
            f"{metric} {lead.better}": listed["grade_better"], f"{metric} {lead.worse}": listed["grade_worse"]})
        caption = (f"{plural(len(queries), 'query', 'queries')} where {lead.better} has more of the relevant docs in "
                   f"its top {k} than {lead.worse}, and yet its answer was graded lower on {metric}: the largest fall "
                   "in the grade first. Select a row to read both answers, the judge's reasons and what each run "
                   "retrieved.")
    said = said or sentence(lead)
    chart_context = (f"k = {k} · n = {counted} graded and scored · labels {labels.name}#{labels.fingerprint}")
    return Loaded(AnswersPage(
        sentence=said, queries=tuple(queries), words=words, grades=_grades_line(found, metric, graded),
        files=tuple(s for m in found.joined.matches if m.run in graded and (s := unmatched_sentence(m))),
        choice=picked, chart=_chart(points, graded, k, metric, found.good, chart_context) if len(points) else None,
        joint=_joint(found, metric, graded) if len(points) else pd.DataFrame(), listed=shown, list_caption=caption,
        context=context))


def _chart(points: pd.DataFrame, runs: tuple[str, ...], k: int, metric: str, good: float, context: str) -> dict:
    placed = (points.assign(recall=points["recall"].round(4), grade=points["grade"].round(4))
              .groupby(["run", "recall", "grade"], sort=False).size().rename("queries").reset_index())
    return charts.answer_points(
        placed, list(runs), k=k, metric=metric, good=good, title="Retrieval against the answer, query by query",
        subtitle=[f"across: what retrieval found (recall@{k}) · up: how the answer was graded ({metric}) · a "
                  f"circle's size: how many queries sit there · dashed line: answered well ({metric} ≥ {good:g})",
                  context])


def _joint(found: AnswerStudy, metric: str, runs: tuple[str, ...]) -> pd.DataFrame:
    """Per run: the graded queries whose retrieval found a relevant doc in the top k or not, against answered well
    or not (the four counts of ``evalcore answers``)."""
    rows = [{"run": j.run, "found a relevant doc, answered well": j.hit_good,
             "found a relevant doc, answered badly": j.hit_bad, "found none, answered well anyway": j.miss_good,
             "found none, answered badly": j.miss_bad}
            for j in found.joint if j.metric == metric and j.run in runs]
    return pd.DataFrame(rows)


# ----------------------------------------------------------------------------- the numbers behind the page


@dataclass(frozen=True)
class Numbers:
    """``evalcore answers`` on these files at k: its sentences, its tables, and the command that prints them."""

    sentences: tuple[str, ...]
    means: pd.DataFrame
    pairs: pd.DataFrame
    joint: pd.DataFrame
    diverging: pd.DataFrame
    correlation: pd.DataFrame
    command: str


def command(dataset: Dataset, k: int) -> str:
    """The command line that prints these numbers from the same files (named as they were uploaded)."""
    parts = ["evalcore", "answers", "--labels", dataset.labels.name]
    for spec in dataset.runs:
        parts += ["--run", f"{spec.name}={spec.file.name}"]
    if dataset.queries is not None:
        parts += ["--queries", dataset.queries.name]
    for spec in dataset.runs:
        if spec.chunks is not None:
            parts += ["--chunks", f"{spec.name}={spec.chunks.name}"]
    for spec in dataset.grades:
        parts += ["--grades", f"{spec.run}={spec.file.name}"]
    return " ".join(shlex.quote(part) for part in parts + ["--k", str(k)])


def numbers(dataset: Dataset, k: int) -> Numbers | None:
    """The study's every sentence and table, as the command prints them (None without a study)."""
    loaded = study(dataset, k)
    if loaded is None or not loaded.ok:
        return None
    found = loaded.value
    said = [*best_sentences(found), *(comparison_verdict(c) for c in found.pairs),
            *(joint_sentence(j, found.good) for j in found.joint),
            *(s for d in found.diverging for s in diverging_sentences(d)),
            *(correlation_sentence(c) for c in found.correlation), *(agreement_sentence(a) for a in found.agreement),
            *(s for m in found.joined.matches if (s := unmatched_sentence(m)))]
    data = answers_dict(found)
    means = pd.DataFrame([{"run": r["name"], "grade": metric, "mean": v["mean"],
                           "95% CI": format_interval(v["ci_low"], v["ci_high"], join=" to "), "n": v["n"]}
                          for r in data["runs"] for metric, v in r["metrics"].items()])
    pairs = pd.DataFrame([{"a": p["a"], "b": p["b"], "grade": p["metric"], "b minus a": p["mean_diff"],
                           "95% CI": format_interval(p["ci_low"], p["ci_high"], join=" to "),
                           "p": format_p(p["p"])[4:], "p (Holm)": format_p(p["p_holm"])[4:], "wins": p["wins"],
                           "ties": p["ties"], "losses": p["losses"], "n": p["n"]} for p in data["pairs"]])
    joint = pd.DataFrame([{"run": j["run"], "grade": j["metric"], "k": j["k"], "found, good": j["hit_good"],
                           "found, bad": j["hit_bad"], "none found, good": j["miss_good"],
                           "none found, bad": j["miss_bad"]} for j in data["joint"]])
    diverging = pd.DataFrame([{"a": d["a"], "b": d["b"], "grade": d["metric"], "n": d["n"],
                               "b finds more": d["b_finds_more"],
                               "of them b worse": d["retrieval_better_answer_worse"]["count"],
                               "a finds more": d["a_finds_more"],
                               "of them a worse": d["retrieval_worse_answer_better"]["count"]}
                              for d in data["diverging"]])
    correlation = pd.DataFrame([{"run": c["run"], "grade": c["metric"], "Spearman": c["spearman"],
                                 "95% CI": format_interval(c["ci_low"], c["ci_high"], digits=2, join=" to "),
                                 "n": c["n"]} for c in data["correlation"]])
    return Numbers(tuple(said), means, pairs, joint, diverging, correlation, command(dataset, k))


# ----------------------------------------------------------------------------- one query


@dataclass(frozen=True)
class QueryAnswers:
    """One query's answers: each graded run's recall@k, its grade, the answer and the judge's reason."""

    query: str
    query_text: str | None
    answers: tuple[GradedAnswer, ...]
    recall: dict[str, float | None]
    k: int


def query_answers(dataset: Dataset, k: int, query: str, metric: str, runs: tuple[str, ...]) -> Loaded | None:
    """Each graded run's answer to ``query`` among ``runs`` (None: no grades loaded)."""
    loaded = study(dataset, k)
    if loaded is None or not loaded.ok:
        return loaded
    found = loaded.value
    evaluation = loading.evaluation(dataset).value
    shown = tuple(r for r in runs if r in found.joined.runs)
    recall = recall_at(found, evaluation)
    row = list(found.joined.queries).index(query) if query in set(found.joined.queries) else -1
    texts = evaluation.labels.query_info
    text = texts.at[query, "query_text"] if "query_text" in texts.columns and query in texts.index else None
    return Loaded(QueryAnswers(
        query, None if text is None or pd.isna(text) else str(text), tuple(answers_to(found, query, metric, shown)),
        {r: (None if row < 0 or pd.isna(recall[r][row]) else float(recall[r][row])) for r in shown}, k))


def walk(dataset: Dataset, k: int, runs: tuple[str, ...], metric: str | None,
         pair: str | None) -> tuple[Lead | None, list[str]]:
    """The pair the page shows with these selections and its queries in the page's order (what Present walks)."""
    loaded = caching.kept(page, entries=32)(dataset, k, runs, metric, pair)
    if loaded is None or not loaded.ok:
        return None, []
    shown = loaded.value
    return shown.choice.lead, shown.listed["query"].astype(str).tolist() if shown.choice.lead else []
