"""The integrity audit of an evaluation: can these numbers be trusted, and what to fix first.

One call (`audit`) gathers what `blindness`, `coverage` and `suspects` find about one
`Evaluation`: the share of blind labels behind every run's numbers and the metrics on blind
labels only, pooling bias, judged coverage with bounds at each quoted k, and the "check the
label" candidates, with every warning. The result renders as text, Markdown or a dict; every
number in it carries its metric and k, n, model and label set (docs/metrics.md).
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..errors import invalid_parameter
from ..metrics.evaluation import Evaluation, evaluate_runs
from ..metrics.measures import parse_ks
from ..metrics.split import SplitView
from ..safe_text import md_table, md_text, text_table
from ..warning_log import EvalWarning
from .blindness import DEFAULT_POOL_DEPTH, blind_metrics, blind_share, blindness_warnings, pooling
from .coverage import DEFAULT_MIN_JUDGED, coverage_bounds, coverage_warnings
from .suspects import DEFAULT_AGREE_DEPTH, label_suspects


@dataclass(frozen=True)
class Audit:
    """Everything the audit found, as tables that each carry their context."""

    evaluation: Evaluation
    blind: pd.DataFrame
    blind_metrics: pd.DataFrame
    pooling: pd.DataFrame
    coverage: pd.DataFrame
    suspects: pd.DataFrame | None  # None with a single run (nothing to agree)
    suspect_k: int
    pool_depth: int
    agree_depth: int
    min_judged: float
    warnings: tuple[EvalWarning, ...]

    @property
    def label_ref(self) -> str:
        return f"{self.evaluation.labels.name}#{self.evaluation.labels.fingerprint}"

    @property
    def split(self):
        """The tune/holdout split the audited numbers are on (None when the labels have none)."""
        split = self.evaluation.split
        return split if split is not None and split.split is not None else None

    def headline(self) -> str:
        ev = self.evaluation
        runs = ", ".join(f"{r.name} ({r.model})" for r in ev.results)
        on = f" on {self.split.headline}" if self.split is not None else ""
        return (f"audit of labels {self.label_ref}{on} (n = {ev.results[0].n_queries} evaluated queries) against runs "
                f"{runs}; quoted k = {', '.join(map(str, ev.ks))}")

    def to_dict(self) -> dict:
        ev = self.evaluation

        def records(frame: pd.DataFrame | None) -> list | None:
            if frame is None:
                return None
            clean = frame.astype(object).where(pd.notna(frame), None)
            return [{k: _plain(v) for k, v in rec.items()} for rec in clean.to_dict(orient="records")]

        return {
            "labels": {"name": ev.labels.name, "fingerprint": ev.labels.fingerprint, "n_queries": ev.labels.n_queries},
            "runs": [{"name": r.name, "model": r.model, "n_queries": r.n_queries} for r in ev.results],
            "blind_share": records(self.blind),
            "blind_metrics": records(self.blind_metrics),
            "pooling": records(self.pooling),
            "coverage": records(self.coverage),
            "suspects": records(self.suspects),
            "warnings": [w.to_dict() for w in self.warnings],
            "settings": {**ev.settings(), "pool_depth": self.pool_depth, "min_judged": self.min_judged,
                         "suspect_k": self.suspect_k, "agree_depth": self.agree_depth},
            **({"split": self.split.to_dict()} if self.split is not None else {}),
        }

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), ensure_ascii=False, allow_nan=False)

    def to_text(self, *, markdown: bool = False) -> str:
        def table(title: str, header: list[str], body: list[list[str]], right: set[int] = frozenset()) -> str:
            if not body:
                return (f"### {md_text(title)}\n\n(none)" if markdown else f"{title}\n(none)")
            return md_table(title, header, body) if markdown else text_table(header, body, right=right, title=title)

        ref = self.label_ref
        out = [md_text(self.headline()) if markdown else self.headline()]
        out.append(table(
            "blind labels behind each run's numbers",
            ["run", "model", "n", "blind queries", "blind share", "blind judgments", "judgment share", "labels"],
            [[r.run, r.model, str(r.n), str(r.n_blind), f"{r.blind_share:.4f}",
              f"{r.blind_judgments} of {r.judgments}", f"{r.blind_judgment_share:.4f}", ref]
             for r in self.blind.itertuples()], right={2, 3, 4, 6}))
        if not self.blind_metrics.empty:
            out.append(table(
                "metrics on blind-judged queries only",
                ["run", "metric", "mean", "CI", "n", "model", "labels", "note"],
                [[r.run, r.metric, f"{r.mean:.4f}", f"{r.ci_low:.4f} to {r.ci_high:.4f}", str(r.n), r.model, ref,
                  "too few queries to rank" if r.small else ""] for r in self.blind_metrics.itertuples()],
                right={2, 3, 4}))
        out.append(table(
            f"pooling: judged docs in each run's top {self.pool_depth}",
            ["run", "model", "judged in top", "non-relevant in top", "only-this-run non-relevant", "share", "n",
             "labels"],
            [[r.run, r.model, f"{r.judged_in_top} of {r.judged}", f"{r.nonrelevant_in_top} of {r.nonrelevant}",
              str(r.exclusive_nonrelevant), f"{r.exclusive_nonrelevant_share:.4f}", str(r.n), ref]
             for r in self.pooling.itertuples()], right={4, 5, 6}))
        out.append(table(
            f"judged coverage and bounds (low: unjudged docs in the top k as non-relevant, as reported; high: as "
            f"relevant); covered depth = deepest k with judged@k >= {self.min_judged:g} on the queries whose judged "
            "depth is known (a doc judged non-relevant, or a recorded judged depth); labels listing only relevant "
            "docs leave it unknown",
            ["run", "metric", "mean", "low", "high", "judged@k", "judged@k, depth known", "covered k", "n", "model",
             "labels", "flag"],
            [[r.run, r.metric, f"{r.mean:.4f}", f"{r.low:.4f}", f"{r.high:.4f}", f"{r.judged:.4f}",
              f"{r.judged_known:.4f} (n = {r.n_known})" if r.n_known else "none known",
              str(r.covered_k) if pd.notna(r.covered_k) else "unknown", str(r.n), r.model, ref,
              "deeper than judged" if r.flagged else ("judged depth unknown" if r.n_known == 0 else "")]
             for r in self.coverage.itertuples()], right={2, 3, 4, 5, 6, 7, 8}))
        if self.suspects is None:
            out.append("check the label: needs at least two runs (a doc is suspicious when different systems agree)")
        else:
            out.append(table(
                f"check the label: every run misses at k = {self.suspect_k} and all put the same other doc in their "
                f"top {self.agree_depth} (flag one to queue it for blind re-judging: evalcore audit ... --flag QUERY)",
                ["query", "query_text", "source", "doc_id", "doc label", "ranks", "relevant", "k", "n", "labels"],
                [[r.query, _text(r.query_text), _text(r.source), r.doc_id, r.doc_label, r.ranks, _text(r.relevant),
                  str(r.k), str(r.n), ref] for r in self.suspects.itertuples()]))
        if self.warnings:
            if markdown:
                out.append("**Warnings**\n\n" + "\n".join(f"- `{w.code}` ({w.count}): {md_text(w.message)}"
                                                           for w in self.warnings))
            else:
                out.append("warnings:\n" + "\n".join(f"  [{w.code}] x{w.count}: {w.message}" for w in self.warnings))
        return "\n\n".join(out) + "\n"


def _text(value: object) -> str:
    return "" if value is None or (isinstance(value, float) and value != value) else str(value)


def _plain(value: object) -> object:
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, np.bool_):
        return bool(value)
    if isinstance(value, (float, np.floating)):
        value = float(value)
        return value if np.isfinite(value) else None
    return value


def audit_runs(runs, labels, k="1,5,10", *, min_grade: float = 1, zero_relevant: str = "exclude",
               level: float = 0.95, seed: int = 0, pool_depth: int = DEFAULT_POOL_DEPTH, chunks=None,
               **options) -> Audit:
    """Evaluate ``runs`` deep enough for the pooling check (the quoted ``k`` and ``pool_depth``), then `audit`.

    ``labels`` may be a `evalcore.metrics.split.SplitView` (what front ends score: the tune split by default), and the
    audit then covers those queries only and names the split. ``chunks``: the chunk maps of runs that rank chunks
    (as `evaluate_runs` takes them)."""
    quoted = parse_ks(k)
    if isinstance(pool_depth, bool) or not isinstance(pool_depth, (int, np.integer)) or pool_depth < 1:
        raise invalid_parameter("pool depth", "an integer >= 1", pool_depth)
    scoring = labels.evaluate if isinstance(labels, SplitView) else (lambda r, k, **o: evaluate_runs(r, labels, k, **o))
    deep = scoring(runs, sorted(set(quoted) | {int(pool_depth)}), min_grade=min_grade, zero_relevant=zero_relevant,
                   level=level, seed=seed, chunks=chunks)
    # Scored as deep as the pool, listed at the quoted cutoffs only.
    evaluation = dataclasses.replace(deep, ks=quoted,
                                     results=tuple(dataclasses.replace(r, ks=quoted) for r in deep.results))
    return audit(evaluation, pool_depth=pool_depth, **options)


def audit(evaluation: Evaluation, *, pool_depth: int = DEFAULT_POOL_DEPTH, min_judged: float = DEFAULT_MIN_JUDGED,
          suspect_k: int | None = None, agree_depth: int = DEFAULT_AGREE_DEPTH, min_n: int = 30) -> Audit:
    """Blind share, blind-only metrics, pooling, judged coverage with bounds, label suspects and warnings."""
    share = blind_share(evaluation)
    pools = pooling(evaluation, pool_depth)
    bounds = coverage_bounds(evaluation, min_judged=min_judged)
    k = max(evaluation.ks) if suspect_k is None else suspect_k
    suspects = None
    if len(evaluation.results) >= 2:
        suspects = label_suspects(evaluation, k, agree_depth=min(agree_depth, min(r.depth for r in evaluation.results)))
    warnings = blindness_warnings(evaluation, depth=pool_depth, share=share, pools=pools)
    warnings += coverage_warnings(bounds, min_judged)
    if suspects is not None and len(suspects):
        n_queries = suspects["query"].nunique()
        warnings.append(EvalWarning(
            "check_the_label",
            f"{n_queries} queries every run misses at k = {k} while all runs agree on another doc; check their "
            "labels (flag them for blind re-judging)", n_queries))
    return Audit(evaluation, share, blind_metrics(evaluation, min_n=min_n), pools, bounds, suspects, k,
                 int(pool_depth), int(agree_depth), float(min_judged), tuple(evaluation.all_warnings) + tuple(warnings))
