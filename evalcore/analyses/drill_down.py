"""One query up close (`drill_down`), and the queries two runs disagree on (`disagreements`).

* `drill_down` - one query: what the customer typed, each relevant doc with its title and text,
  and each run's ranked list with every doc marked relevant / judged non-relevant / unjudged,
  and where each relevant doc landed ("rank 14", "not in its top 100": `landed_text`).
* `disagreements` - queries one run gets at k and another misses, biggest gap first; "gets"
  and "misses" follow `evalcore.metrics.failure`, the one definition of failed at k.

Both read where relevant docs landed from `evalcore.analyses.landed` (pass ``where=`` to reuse it),
and every table carries its context (docs/metrics.md): ``k``, the runs' models, ``n``, and the label
set's name and fingerprint.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable

import numpy as np
import pandas as pd

from ..errors import UsageError, invalid_parameter
from ..metrics.evaluation import Evaluation
from ..metrics.failure import FAILURE_MODE, check_mode, failed_at_k
from ..metrics.evidence import merged_spans
from ..readers.chunks import ChunkMap, chunk_texts
from ..readers.documents import Documents
from .landed import Landed, chosen_results, fields_at, landed, landed_text, query_fields

MARK_RELEVANT = "relevant"
MARK_NON_RELEVANT = "judged non-relevant"
MARK_UNJUDGED = "unjudged"

DISAGREEMENT_COLUMNS = [
    "query", "query_text", "source", "gets", "misses", "recall_gets", "recall_misses", "gap",
    "first_rank_gets", "first_rank_misses", "ranks_gets", "ranks_misses", "model_gets", "model_misses",
    "k", "n", "labels", "fingerprint",
]


@dataclass(frozen=True)
class DrillDown:
    """One evaluated query: what was asked, what is relevant, and what every run returned.

    ``relevant``: one row per relevant doc (``doc_id``, ``grade``, ``title``, ``text``) with one column
    per run saying where it landed ("rank 14", "not in its top 100", "query not in run").
    ``landed``: the same as a long table (``run``, ``doc_id``, ``rank``, ``landed``, ``in_top_k``).
    ``rankings``: one row per run and rank down to ``depth``: ``doc_id``, ``grade``, ``mark``
    (relevant / judged non-relevant / unjudged), ``in_top_k``, ``title``, ``text``; for a run of chunks also
    ``chunk_id`` (``doc_id`` is then the chunk's document and ``text`` the chunk's own text). ``evidence``: where
    the text holds evidence, as (start, end) character ranges of ``text`` (empty without evidence spans).
    ``scores``: per run ``recall@k``, ``hit@k`` and ``rr`` for this query (and evidence recall at k with spans).
    """

    query: str
    query_text: str | None
    source: str | None
    split: str | None
    blind: bool | None
    k: int
    depth: int
    runs: tuple[str, ...]
    models: dict[str, str]
    relevant: pd.DataFrame
    landed: pd.DataFrame
    rankings: pd.DataFrame
    scores: pd.DataFrame
    labels: str
    fingerprint: str
    judged_non_relevant: int = 0
    notes: tuple[str, ...] = field(default=())

    @property
    def has_text(self) -> bool:
        """Whether any doc here carries text (a documents file was given and knows them)."""
        return bool(self.relevant["text"].notna().any() or self.rankings["text"].notna().any())

    def ranking(self, run: str) -> pd.DataFrame:
        """The ranked list of one run (rank, doc_id, grade, mark, in_top_k, title, text)."""
        if run not in self.runs:
            raise UsageError(f"No run named {run!r} in this drill-down; runs are: {', '.join(self.runs)}.")
        return self.rankings[self.rankings["run"] == run].drop(columns="run").reset_index(drop=True)

    def to_dict(self) -> dict:
        """Plain types for JSON: the query, its relevant docs with where they landed, each ranking."""
        def records(frame: pd.DataFrame) -> list[dict]:
            plain = frame.astype(object).where(frame.notna(), None)
            return plain.to_dict(orient="records")
        return {
            "query": self.query, "query_text": self.query_text, "source": self.source, "split": self.split,
            "blind": self.blind, "k": self.k, "depth": self.depth, "models": dict(self.models),
            "labels": {"name": self.labels, "fingerprint": self.fingerprint},
            "relevant": records(self.relevant), "landed": records(self.landed),
            "rankings": {run: records(self.ranking(run)) for run in self.runs},
            "scores": records(self.scores), "notes": list(self.notes),
        }


def _chunk_texts(frame: pd.DataFrame, chunks: ChunkMap, rows: np.ndarray, documents: Documents | None) -> pd.DataFrame:
    """A chunk run's rows with each chunk's own text, and its window (start, end) in its document when known."""
    texts = chunk_texts(chunks, frame["chunk_id"].to_numpy(dtype=object), documents).frame["text"]
    frame["text"] = texts.reindex(pd.Index(frame["chunk_id"], dtype=object)).to_numpy(dtype=object)
    if chunks.start is None:
        frame["window"] = [None] * len(frame)
    else:
        frame["window"] = [(int(a), int(b)) if a >= 0 else None for a, b in zip(chunks.start[rows], chunks.end[rows])]
    return frame


def _query_spans(evaluation: Evaluation, query: str) -> dict[str, list[tuple[int, int]]]:
    """The query's evidence spans by document (overlapping spans merged), from the labels."""
    spans = evaluation.labels.spans
    if spans is None:
        return {}
    mine = merged_spans(spans[spans["query"] == query])
    out: dict[str, list[tuple[int, int]]] = {}
    for doc, start, end in zip(mine["doc_id"], mine["start"], mine["end"]):
        out.setdefault(str(doc), []).append((int(start), int(end)))
    return out


def _marks(doc_ids: pd.Series, windows: pd.Series, texts: pd.Series, spans: dict,
           is_chunk: pd.Series) -> list[list[tuple[int, int]]]:
    """For each row, the evidence inside its text as (start, end) ranges of that text: a chunk's window in its
    document clips and shifts the document's spans; a whole document's text takes them as they are; a chunk with
    no known place marks nothing."""
    out = []
    for doc, window, text, chunk in zip(doc_ids, windows, texts, is_chunk):
        found = spans.get(str(doc), [])
        if not found or not isinstance(text, str) or (chunk and window is None):
            out.append([])
            continue
        lo, hi = window if window is not None else (0, len(text))
        out.append([(max(s, lo) - lo, min(e, hi) - lo) for s, e in found if min(e, hi) > max(s, lo)])
    return out


def _doc_column(documents: Documents | None, column: str, doc_ids: np.ndarray) -> np.ndarray:
    """The documents file's ``column`` (text or title) for ``doc_ids``: None where the file has no such column or
    doc, or the value is empty."""
    if documents is None or column not in documents.frame.columns:
        return np.full(len(doc_ids), None, dtype=object)
    values = documents.frame[column].reindex(pd.Index(doc_ids, dtype=object)).to_numpy(dtype=object)
    values[pd.isna(values) | (values == "")] = None
    return values


def drill_down(
    evaluation: Evaluation,
    query: str,
    k: int,
    *,
    documents: Documents | None = None,
    runs: Iterable[str] | None = None,
    depth: int | None = None,
    where: Landed | None = None,
) -> DrillDown:
    """Everything about one evaluated query at cutoff k, for every run (or ``runs``).

    ``depth`` limits the ranked lists (default: the evaluation's depth). With ``documents``
    each doc carries its text and title (when the file has titles); without, both are None. Raises a usage error for a query
    that is not evaluated (not labeled, or with no relevant doc).
    """
    k = evaluation.check_k(k)
    chosen = chosen_results(evaluation, runs)
    if not chosen:
        raise UsageError("A drill-down needs at least one run.")
    queries = chosen[0].queries
    hits = np.flatnonzero(queries == query)
    if not len(hits):
        raise UsageError(f"Query {query!r} is not evaluated: it is not in the labels or has no relevant doc.")
    qi = int(hits[0])
    limit = min(r.depth for r in chosen) if depth is None else int(depth)
    if limit < 1:
        raise invalid_parameter("depth", "an integer >= 1", depth)
    limit = min(limit, min(r.depth for r in chosen))

    ranks = (where or landed(evaluation, [r.name for r in chosen])).frame
    mine = ranks[(ranks["query_index"] == qi).to_numpy() & ranks["run"].isin([r.name for r in chosen]).to_numpy()]
    mine = mine.reset_index(drop=True)
    spots = mine[["run", "doc_id", "rank"]].copy()
    spots["landed"] = [landed_text(r, n, i) for r, n, i in
                        zip(mine["rank"], mine["n_returned"], mine["in_run"])]
    spots["in_top_k"] = (mine["rank"].to_numpy(dtype=np.float64, na_value=np.inf) <= k)

    first = mine[mine["run"] == chosen[0].name]
    docs = first["doc_id"].to_numpy(dtype=object)
    relevant = pd.DataFrame({"doc_id": docs, "grade": first["grade"].to_numpy()})
    for result in chosen:
        spot = spots[spots["run"] == result.name].set_index("doc_id")["landed"]
        relevant[result.name] = spot.reindex(docs).to_numpy(dtype=object)
    relevant["title"] = _doc_column(documents, "title", docs)
    relevant["text"] = _doc_column(documents, "text", docs)

    frames, scores, notes = [], [], []
    min_grade = chosen[0].ranked.index.min_grade
    for result in chosen:
        ranked = result.ranked
        shown = ranked.returned[qi, :limit]
        n_shown = int(shown.sum())
        codes = ranked.doc_codes[qi, :n_shown]
        grades = ranked.grades[qi, :n_shown]
        marks = np.where(np.isnan(grades), MARK_UNJUDGED,
                         np.where(grades >= min_grade, MARK_RELEVANT, MARK_NON_RELEVANT)).astype(object)
        stored = np.asarray(result.run.doc_ids[codes] if n_shown else np.array([], dtype=object), dtype=object)
        doc_ids = ranked.doc_ids_of(codes) if n_shown else stored
        frame = pd.DataFrame({
            "run": result.name,
            "rank": np.arange(1, n_shown + 1),
            "doc_id": doc_ids,
            "chunk_id": stored if result.chunks is not None else np.full(n_shown, None, dtype=object),
            "grade": grades,
            "mark": marks,
            "in_top_k": np.arange(1, n_shown + 1) <= k,
            "title": _doc_column(documents, "title", doc_ids),
            "text": _doc_column(documents, "text", doc_ids),
        })
        if result.chunks is not None and n_shown:
            frame = _chunk_texts(frame, result.chunks, ranked.chunk_rows(codes), documents)
        else:
            frame["window"] = [None] * n_shown
        frames.append(frame)
        if not ranked.in_run[qi]:
            notes.append(f"run {result.name} has no ranking for this query; it scores 0 on every metric")
        scored = {"run": result.name, "model": result.model, f"recall@{k}": float(result.score(f"recall@{k}")[qi]),
                  f"hit@{k}": float(result.score(f"hit@{k}")[qi]), "rr": float(result.score("mrr")[qi]),
                  "first_rank": int(ranked.first_relevant[qi]) or None, "n_returned": int(ranked.n_returned[qi])}
        if result.scores.has_evidence:
            scored[f"evidence_recall@{k}"] = float(result.score(f"evidence_recall@{k}")[qi])
        scores.append(scored)

    spans = _query_spans(evaluation, query)
    rankings = pd.concat(frames, ignore_index=True)
    rankings["evidence"] = _marks(rankings["doc_id"], rankings["window"], rankings["text"], spans,
                                  rankings["chunk_id"].notna())
    rankings = rankings.drop(columns="window")
    relevant["evidence"] = _marks(relevant["doc_id"], pd.Series([None] * len(relevant)), relevant["text"], spans,
                                  pd.Series([False] * len(relevant)))
    judgments = evaluation.labels.judgments
    mine_j = judgments[judgments["query"] == query]
    non_relevant = int((mine_j["grade"] < min_grade).sum())
    info = {name: values[0] for name, values in query_fields(evaluation, np.array([query], dtype=object)).items()}
    blind = info["blind"]
    return DrillDown(
        query=str(query), query_text=info["query_text"], source=info["source"], split=info["split"],
        blind=None if blind is None else bool(blind), k=k, depth=limit, runs=tuple(r.name for r in chosen),
        models={r.name: r.model for r in chosen}, relevant=relevant, landed=spots.reset_index(drop=True),
        rankings=rankings, scores=pd.DataFrame(scores),
        labels=evaluation.labels.name, fingerprint=evaluation.labels.fingerprint,
        judged_non_relevant=non_relevant, notes=tuple(notes),
    )


def disagreements(
    evaluation: Evaluation,
    k: int,
    a: str,
    b: str,
    *,
    mode: str = FAILURE_MODE,
    where: Landed | None = None,
) -> pd.DataFrame:
    """Queries one of two runs gets at k and the other misses, biggest disagreement first.

    "Gets" follows ``mode``: with ``"any"`` a run gets a query when every relevant doc is in
    its top k, with ``"none"`` when at least one is. One row per query where exactly one run
    gets it: ``gets`` / ``misses`` name the runs, ``recall_*`` their recall@k, ``gap`` the
    difference (``recall_gets - recall_misses``), ``first_rank_*`` and ``ranks_*`` where
    their relevant docs landed. Ordered by ``gap``, then by how much deeper the missing run
    put its first relevant doc (none returned counts as deepest).
    """
    k = evaluation.check_k(k)
    mode = check_mode(mode)
    if a == b:
        raise UsageError(f"Pick two different runs to compare; got {a!r} twice.")
    ra, rb = evaluation[a], evaluation[b]
    if where is None:
        where = landed(evaluation, [a, b])
    pa, pb = where.run(a), where.run(b)
    found_a, found_b = pa.found_at(k), pb.found_at(k)
    gets_a, gets_b = ~failed_at_k(found_a, pa.n_relevant, mode), ~failed_at_k(found_b, pb.n_relevant, mode)
    rec_a, rec_b = ra.score(f"recall@{k}"), rb.score(f"recall@{k}")
    keep = np.flatnonzero(gets_a != gets_b)
    a_wins = gets_a[keep]
    queries = ra.queries[keep]
    fields = fields_at(evaluation, where, queries, keep)

    def pick(when_a: np.ndarray, when_b: np.ndarray) -> np.ndarray:
        return np.where(a_wins, when_a[keep], when_b[keep])

    first_a = pa.first_rank.to_numpy(dtype=np.float64, na_value=np.nan)
    first_b = pb.first_rank.to_numpy(dtype=np.float64, na_value=np.nan)
    table = pd.DataFrame({
        "query": queries,
        "query_text": fields["query_text"],
        "source": fields["source"],
        "gets": np.where(a_wins, a, b).astype(object),
        "misses": np.where(a_wins, b, a).astype(object),
        "recall_gets": pick(rec_a, rec_b),
        "recall_misses": pick(rec_b, rec_a),
        "first_rank_gets": pd.array(pick(first_a, first_b), dtype="Float64").astype("Int64"),
        "first_rank_misses": pd.array(pick(first_b, first_a), dtype="Float64").astype("Int64"),
        "ranks_gets": pick(pa.words, pb.words),
        "ranks_misses": pick(pb.words, pa.words),
        "model_gets": np.where(a_wins, ra.model, rb.model).astype(object),
        "model_misses": np.where(a_wins, rb.model, ra.model).astype(object),
    })
    table["gap"] = table["recall_gets"] - table["recall_misses"]
    table["k"] = k
    table["n"] = ra.n_queries
    table["labels"] = evaluation.labels.name
    table["fingerprint"] = evaluation.labels.fingerprint
    if table.empty:
        return table[DISAGREEMENT_COLUMNS]
    deep = (table["first_rank_misses"].astype("Float64").fillna(np.inf)
            - table["first_rank_gets"].astype("Float64").fillna(np.inf)).astype(np.float64)
    deep = np.nan_to_num(deep.to_numpy(), nan=0.0, posinf=1e9)
    sorter = pd.DataFrame({"gap": -table["gap"].to_numpy(), "deep": -deep, "query": table["query"].astype(str)})
    order = sorter.sort_values(["gap", "deep", "query"], kind="stable").index.to_numpy()
    return table.iloc[order][DISAGREEMENT_COLUMNS].reset_index(drop=True)
