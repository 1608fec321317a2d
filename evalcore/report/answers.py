"""`evalcore answers` in words and numbers: the sentences first, then the tables; its JSON and CSV.

`evalcore.analyses.answers` computes every number; this module only says them. The paired comparisons are worded by
`evalcore.report.compare.comparison_verdict`, the sentence every comparison in evalcore reads with.
"""

from __future__ import annotations

import math

import pandas as pd

from ..analyses.answer_join import FileMatch
from ..analyses.answers import Agreement, AnswerStudy, Correlation, Diverging, GradeMean, Joint
from ..safe_text import md_table, md_text, to_csv
from ..warning_log import plural
from .amounts import format_interval, format_p
from .compare import comparison_verdict
from .render import titled_table

SHOWN_QUERIES = 10
"""Queries named in a sentence before "and N more" (the JSON lists all of them)."""


# ----------------------------------------------------------------------------- JSON


def answers_dict(study: AnswerStudy) -> dict:
    """``evalcore answers --format json`` (docs/answers.md): runs, pairs, joint, diverging, correlation, and
    agreement (when two files grade one run's answers) and unmatched (with labels)."""
    out: dict = {
        "runs": [{"name": run, "n": study.run_n(run),
                  "metrics": {m.metric: _mean_record(m) for m in study.means if m.run == run}}
                 for run in study.joined.runs],
        "pairs": [{"a": c.baseline, "b": c.run, "metric": c.metric, "n": c.n, "mean_diff": _num(c.diff),
                   "ci_low": _num(c.ci_low), "ci_high": _num(c.ci_high), "p": _num(c.p_value),
                   "p_holm": _num(c.p_adjusted), "wins": c.wins, "ties": c.ties, "losses": c.losses}
                  for c in study.pairs],
        "joint": [{"run": j.run, "k": j.k, "metric": j.metric, "hit_good": j.hit_good, "hit_bad": j.hit_bad,
                   "miss_good": j.miss_good, "miss_bad": j.miss_bad} for j in study.joint],
        "diverging": [{"a": d.a, "b": d.b, "k": d.k, "metric": d.metric,
                       "retrieval_better_answer_worse": _listed(d.retrieval_better_answer_worse),
                       "retrieval_worse_answer_better": _listed(d.retrieval_worse_answer_better),
                       "n": d.n, "b_finds_more": d.b_finds_more, "a_finds_more": d.a_finds_more}
                      for d in study.diverging],
        "correlation": [{"run": c.run, "k": c.k, "metric": c.metric, "n": c.value.n, "spearman": _num(c.value.rho),
                         "ci_low": _num(c.value.low), "ci_high": _num(c.value.high)} for c in study.correlation],
    }
    if study.agreement:
        out["agreement"] = [{"run": a.run, "metric": a.metric, "a": a.a, "b": a.b, "n": a.kappa.n,
                             "kappa": _num(a.kappa.kappa), "ci_low": _num(a.kappa.low), "ci_high": _num(a.kappa.high),
                             "weights": a.kappa.weights, "good_bad_at": a.split_at,
                             "disagree": _listed(a.disagree)} for a in study.agreement]
    if study.joined.labeled:
        out["unmatched"] = [{"run": m.run, "file": m.source, "rows": m.n_rows, "matched": m.n_matched,
                             "rows_without_query": {"count": len(m.rows_unmatched), "names": list(m.rows_unmatched)},
                             "queries_without_grade": {"count": len(m.queries_ungraded),
                                                       "queries": list(m.queries_ungraded)},
                             "sealed_holdout_rows": m.sealed} for m in study.joined.matches]
    return out


def _mean_record(m: GradeMean) -> dict:
    i = m.interval
    return {"mean": _num(i.point) if i else None, "ci_low": _num(i.low) if i else None,
            "ci_high": _num(i.high) if i else None, "n": m.n}


def _listed(queries: tuple[str, ...]) -> dict:
    return {"count": len(queries), "queries": list(queries)}


def _num(value: float | None) -> float | None:
    return None if value is None or not math.isfinite(value) else float(value)


# ----------------------------------------------------------------------------- CSV


def answers_csv(study: AnswerStudy) -> str:
    """One row per run and grade: its mean with interval and n, and with runs and labels the four counts at k and the
    rank correlation (formula-safe cells)."""
    joint = {(j.run, j.metric): j for j in study.joint}
    correlation = {(c.run, c.metric): c.value for c in study.correlation}
    rows = []
    for m in study.means:
        row = {"run": m.run, "metric": m.metric, **_mean_record(m)}
        if study.k is not None:
            j, c = joint.get((m.run, m.metric)), correlation.get((m.run, m.metric))
            row.update({"k": study.k, "good_at": study.good,
                        **{key: getattr(j, key) if j else None
                           for key in ("hit_good", "hit_bad", "miss_good", "miss_bad")},
                        "spearman": _num(c.rho) if c else None, "spearman_ci_low": _num(c.low) if c else None,
                        "spearman_ci_high": _num(c.high) if c else None})
        rows.append(row)
    return to_csv(pd.DataFrame(rows))


# ----------------------------------------------------------------------------- words


def answers_text(study: AnswerStudy, markdown: bool = False) -> str:
    """The answer first, in sentences (best run per grade, retrieval against the answer, where they diverge, how they
    move together, whether judges agree, what matched nothing), then the tables of numbers."""
    said = [*best_sentences(study), *(comparison_verdict(c) for c in study.pairs),
            *(joint_sentence(j, study.good) for j in study.joint),
            *(s for d in study.diverging for s in diverging_sentences(d)),
            *(correlation_sentence(c) for c in study.correlation),
            *(agreement_sentence(a) for a in study.agreement),
            *(s for m in study.joined.matches if (s := unmatched_sentence(m)))]
    words = "\n".join(md_text(s) if markdown else s for s in said)
    tables = [_table(title, header, body, markdown) for title, header, body in _tables(study) if body]
    return words + "\n\n" + "\n\n".join(tables) + "\n"


def best_sentences(study: AnswerStudy) -> list[str]:
    """Per grade, the run with the highest mean, then the others: "faithfulness: tuned has the highest mean, 0.820
    (95% CI 0.780 to 0.860; n = 224); base 0.760 (...)" (whether the gap is real is the paired comparison's to say)."""
    out = []
    level = f"{study.level * 100:g}% CI"
    for metric in dict.fromkeys(m.metric for m in study.means):
        rated = sorted((m for m in study.means if m.metric == metric and m.interval is not None),
                       key=lambda m: -m.interval.point)
        if not rated:
            continue

        def said(m: GradeMean) -> str:
            return (f"{m.interval.point:.3f} ({level} {format_interval(m.interval.low, m.interval.high, join=' to ')}; "
                    f"n = {m.n})")

        if len(rated) == 1:
            out.append(f"{metric}: {rated[0].run} averages {said(rated[0])}.")
        else:
            rest = "; ".join(f"{m.run} {said(m)}" for m in rated[1:])
            out.append(f"{metric}: {rated[0].run} has the highest mean, {said(rated[0])}; {rest}.")
    return out


def joint_sentence(j: Joint, good: float) -> str:
    """"bm25, faithfulness: retrieval found a relevant doc in the top 10 for 160 of 224 graded queries, and 130 of
    those were answered well (faithfulness >= 0.5); of the 64 where it found none, 20 were answered well anyway."""
    hits, misses = j.hit_good + j.hit_bad, j.miss_good + j.miss_bad
    if not hits + misses:
        return f"{j.run}, {j.metric}: no query is both graded and scored against the labels."
    return (f"{j.run}, {j.metric}: retrieval found a relevant doc in the top {j.k} for {hits:,} of {hits + misses:,} "
            f"graded queries, and {j.hit_good:,} of those {'was' if j.hit_good == 1 else 'were'} answered well "
            f"({j.metric} >= {good:g}); of the "
            f"{misses:,} where it found none, {j.miss_good:,} {'was' if j.miss_good == 1 else 'were'} answered well "
            "anyway.")


def diverging_sentences(d: Diverging) -> list[str]:
    """Both ways: "bm25 finds more than tfidf for 31 queries (recall@10 strictly higher), yet answers 9 of them worse
    (faithfulness strictly lower): q1, q7, ..."."""
    return [diverging_sentence(d, d.b), diverging_sentence(d, d.a)]


def diverging_sentence(d: Diverging, better: str, names: bool = True) -> str:
    """One way of `diverging_sentences`, ``better`` the run said to find more; ``names``: name the queries."""
    worse, more, listed = (d.a, d.b_finds_more, d.retrieval_better_answer_worse) if better == d.b else \
        (d.b, d.a_finds_more, d.retrieval_worse_answer_better)
    sentence = (f"{better} finds more than {worse} for {plural(more, 'query', 'queries')} (recall@{d.k} strictly "
                f"higher), " + (f"yet answers {len(listed):,} of them worse ({d.metric} strictly lower)" if listed
                                else f"and answers none of them worse ({d.metric})"))
    return sentence + (f": {named(listed)}." if listed and names else ".")


def correlation_sentence(c: Correlation) -> str:
    """"bm25: recall@10 and faithfulness move together weakly (Spearman 0.21, 95% CI 0.08 to 0.33; n = 224)."""
    v = c.value
    if not math.isfinite(v.rho):
        return f"{c.run}: recall@{c.k} and {c.metric} have no rank correlation to report ({v.note}; n = {v.n})."
    size = abs(v.rho)
    if size < 0.1:
        how = "barely move together"
    else:
        strength = "weakly" if size < 0.3 else "moderately" if size < 0.5 else "strongly"
        how = f"move {'together' if v.rho > 0 else 'against each other'} {strength}"
    ci = (f", {v.level * 100:g}% CI {format_interval(v.low, v.high, digits=2, join=' to ')}"
          if math.isfinite(v.low) else f", no interval: {v.note}")
    return f"{c.run}: recall@{c.k} and {c.metric} {how} (Spearman {v.rho:.2f}{ci}; n = {v.n})."


def agreement_sentence(a: Agreement) -> str:
    """"base, correctness: person and llm agree with kappa 0.61 (95% CI 0.45 to 0.75; n = 100; linear weights); they
    disagree on 14 queries: q3, q9, ..."."""
    k = a.kappa
    how = "unweighted" if k.weights == "none" else f"{k.weights} weights"
    if a.split_at is not None:
        how += f", compared as good/bad at {a.split_at:g}"
    if not math.isfinite(k.kappa):
        value = f"kappa undefined ({k.note}; n = {k.n})"
    elif math.isfinite(k.low):
        value = (f"kappa {k.kappa:.2f} ({k.level * 100:g}% CI {format_interval(k.low, k.high, digits=2, join=' to ')};"
                 f" n = {k.n}; {how})")
    else:
        value = f"kappa {k.kappa:.2f} ({k.note}; n = {k.n}; {how})"
    tail = f"they disagree on {plural(len(a.disagree), 'query', 'queries')}" + (
        f": {named(a.disagree)}." if a.disagree else ".")
    return f"{a.run}, {a.metric}: {a.a} and {a.b} agree with {value}; {tail}"


def unmatched_sentence(m: FileMatch) -> str | None:
    """What of one file met no labeled query, and which labeled queries it has no grade for (None when all met)."""
    parts = []
    if m.rows_unmatched:
        parts.append(f"{plural(len(m.rows_unmatched), 'graded row')} {'matches' if len(m.rows_unmatched) == 1 else 'match'}"
                     f" no labeled query: {named(m.rows_unmatched)}")
    if m.queries_ungraded:
        parts.append(f"{plural(len(m.queries_ungraded), 'labeled query', 'labeled queries')} "
                     f"{'has' if len(m.queries_ungraded) == 1 else 'have'} no grade: {named(m.queries_ungraded)}")
    if m.sealed:
        parts.append(f"{plural(m.sealed, 'row')} {'is a' if m.sealed == 1 else 'are'} sealed holdout "
                     f"quer{'y' if m.sealed == 1 else 'ies'}, left out")
    if not parts:
        return None
    return f"{m.source} ({m.run}): {m.n_matched:,} of {m.n_rows:,} rows joined; " + "; ".join(parts) + "."


def named(queries: tuple[str, ...]) -> str:
    """The first `SHOWN_QUERIES` names, then how many more."""
    shown = ", ".join(queries[:SHOWN_QUERIES])
    more = len(queries) - SHOWN_QUERIES
    return shown + (f" and {more:,} more" if more > 0 else "")


# ----------------------------------------------------------------------------- tables


def _tables(study: AnswerStudy) -> list[tuple[str, list[str], list[list[str]]]]:
    level = f"{study.level * 100:g}% CI"

    def ci(low: float | None, high: float | None, digits: int = 3) -> str:
        return format_interval(low, high, digits=digits, join=" to ", missing="-")

    means = [[m.run, m.metric, f"{m.interval.point:.3f}" if m.interval else "-",
              ci(m.interval.low, m.interval.high) if m.interval else "-", str(m.n)] for m in study.means]
    pairs = [[c.baseline, c.run, c.metric, f"{c.diff:+.3f}", ci(c.ci_low, c.ci_high), format_p(c.p_value)[4:],
              format_p(c.p_adjusted)[4:], f"{c.wins}/{c.ties}/{c.losses}", str(c.n)] for c in study.pairs]
    joint = [[j.run, j.metric, str(j.hit_good), str(j.hit_bad), str(j.miss_good), str(j.miss_bad)]
             for j in study.joint]
    diverging = [[d.a, d.b, d.metric, str(d.b_finds_more), str(len(d.retrieval_better_answer_worse)),
                  str(d.a_finds_more), str(len(d.retrieval_worse_answer_better)), str(d.n)] for d in study.diverging]
    correlation = [[c.run, c.metric, "-" if not math.isfinite(c.value.rho) else f"{c.value.rho:.2f}",
                    ci(c.value.low, c.value.high, 2), str(c.value.n)] for c in study.correlation]
    agreement = [[a.run, a.metric, a.a, a.b, "-" if not math.isfinite(a.kappa.kappa) else f"{a.kappa.kappa:.2f}",
                  ci(a.kappa.low, a.kappa.high, 2), a.kappa.weights, str(len(a.disagree)), str(a.kappa.n)]
                 for a in study.agreement]
    k = study.k
    good = f"grade >= {study.good:g}"
    return [
        ("each run's mean grade", ["run", "grade", "mean", level, "n"], means),
        ("paired: b minus a, over the queries both graded (p after Holm across the table)",
         ["a", "b", "grade", "b - a", level, "p", "p (Holm)", "wins/ties/losses", "n"], pairs),
        (f"retrieval (recall@{k} > 0) against the answer ({good})",
         ["run", "grade", "hit, good", "hit, bad", "miss, good", "miss, bad"], joint),
        (f"where retrieval and the answer diverge (recall@{k} strictly higher, grade strictly lower)",
         ["a", "b", "grade", "b finds more", "of them b worse", "a finds more", "of them a worse", "n"], diverging),
        (f"rank correlation of recall@{k} and the grade (Spearman)", ["run", "grade", "rho", level, "n"],
         correlation),
        ("judges' agreement (Cohen's kappa)", ["run", "grade", "a", "b", "kappa", level, "weights", "disagree", "n"],
         agreement),
    ]


def _table(title: str, header: list[str], body: list[list[str]], markdown: bool) -> str:
    return md_table(title, header, body) if markdown else titled_table(title, header, body)
