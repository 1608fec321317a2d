"""From vectors to runs: search every variant for every query and hand back `Run` objects shaped exactly like an
uploaded run's (read through `read_run`), so evaluation, intervals, comparisons, k budget and failures take them
as they are; and the TREC text of such a run (``--save-runs``)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..errors import VectorFileError, invalid_parameter
from ..readers.runs import Run, read_run
from ..readers.vectors import Vectors, check_dimensions
from ..warning_log import EvalWarning, plural
from .ann_runs import DEFAULT_ENGINE, BuildStore, Speed, exact_speeds, search_indexes
from .on_disk import check_budget, on_disk
from .search import Hits, ScoreOverflow, check_similarity, normalise_rows, row_norms, tie_ranks, unit_rows
from .variants import Variant, id_bytes, search_variant

DEFAULT_DEPTH = 100
UNIT_TOLERANCE = 1e-6
"""Rows within this of unit length are used as they are under cosine (vectors exported normalised, as most are)."""

Step = Callable[[float, str], None]
"""Progress of a whole search: (share done, what is being searched)."""


@dataclass(frozen=True)
class VariantRun:
    """One variant's index over the docs searched and the run its search gave; ``warnings``: what the search left
    out (all-zero doc vectors under cosine), the same for every variant of one search."""

    variant: Variant
    run: Run
    index_bytes: int
    n_docs: int
    warnings: tuple[EvalWarning, ...] = ()
    speed: Speed | None = None
    """Build and search times: approximate indexes, and the exact float32 search they are compared with."""

    @property
    def name(self) -> str:
        return self.run.name


def search_runs(queries: Vectors, docs: Vectors, variants: Sequence[Variant], *, similarity: str = "cosine",
                depth: int = DEFAULT_DEPTH, model: str | None = None, prefix: str = "",
                progress: Step | None = None, build_threads: int | None = None, seed: int = 0,
                engine: str = DEFAULT_ENGINE, builds: BuildStore | None = None) -> list[VariantRun]:
    """Search ``queries`` against ``docs`` in every variant: one `VariantRun` each, in the order given.

    Run names are ``prefix + variant.name``; the model string ``MODEL-VARIANT`` (``MODEL`` defaults to the doc
    file's stem). For cosine, vectors not already of unit length are normalised once (a copy shared by every
    variant; the files' own matrices are never changed). A query vector of all zeros is refused, naming its file and
    row: every doc would score 0 against it. Under cosine, doc vectors of all zeros (no direction) are left out of
    the search, said in each `VariantRun`'s warnings; under dot they score 0, as they should. Doc vectors on disk
    (`evalcore.vectors.on_disk`) are read a block at a time and scaled as they are read. Approximate indexes
    (`Variant.index`) are built by ``engine`` on ``build_threads`` threads (None: all), trained from ``seed``, and
    timed on one thread (`evalcore.vectors.ann_runs`); ``builds`` keeps them for the next search of the same docs.
    """
    check_similarity(similarity)
    check_dimensions(queries, docs)
    if isinstance(depth, bool) or not isinstance(depth, (int, np.integer)) or depth < 1:
        raise invalid_parameter("depth", "a whole number of docs per query, at least 1", depth)
    _refuse_zero_queries(queries)
    q_matrix, d_matrix, warnings, docs_unit = queries.matrix, docs.matrix, (), True
    if similarity == "cosine":  # unit-length vectors are used as they are; others are normalised once, shared
        q_matrix = unit_rows(q_matrix)
        norms = row_norms(d_matrix)
        zero = norms == 0
        if zero.any():  # the kept rows copied once and normalised in place: still the one copy cosine may need
            if on_disk(d_matrix):
                raise _zero_docs_on_disk(docs, zero)
            warnings = (_zero_docs_warning(docs, zero),)
            docs = docs.subset(~zero)
            d_matrix = normalise_rows(docs.matrix, out=docs.matrix)
        elif on_disk(d_matrix):  # searched a block at a time, scaled as it is read: never copied whole
            docs_unit = bool(np.abs(norms - 1).max(initial=0) <= UNIT_TOLERANCE)
        else:
            d_matrix = unit_rows(d_matrix, UNIT_TOLERANCE)
    if on_disk(d_matrix):
        check_budget({v.name: v.held_bytes(docs.n) for v in variants}, docs.n)
    ranks = tie_ranks(docs.ids)
    ids_size = id_bytes(docs.ids)
    base_model = model or _stem(docs.name)

    def step(number: int, share: float) -> None:
        if progress is not None:
            progress((number + share) / len(variants), variants[number].name)

    found: dict[Variant, Hits] = {}
    for number, variant in enumerate(variants):
        if not variant.is_exact:
            continue
        step(number, 0.0)
        try:
            found[variant] = search_variant(variant, q_matrix, d_matrix, similarity, depth, ranks,
                                            progress=lambda share, number=number: step(number, share),
                                            docs_unit=docs_unit)
        except ScoreOverflow:  # dot products past float32's range: no order to trust
            raise VectorFileError(f"vectors whose {similarity} scores stay within float32's range (about 3.4e38); "
                                  f"the {variant.name} search overflowed: scale the vectors down or use cosine",
                                  source=f"{queries.name} and {docs.name}") from None
    approximate = search_indexes(variants, q_matrix, d_matrix, similarity, depth, docs_unit=docs_unit,
                                 build_threads=build_threads, seed=seed, engine_name=engine, progress=step,
                                 builds=builds)
    speeds = exact_speeds(variants, q_matrix, d_matrix, similarity, depth, docs_unit=docs_unit, engine_name=engine)
    out = []
    for variant in variants:
        speed = approximate[variant].speed if variant in approximate else speeds.get(variant)
        hits = approximate[variant].hits if variant in approximate else found[variant]
        size = speed.serialized_bytes + ids_size if variant in approximate else variant.index_bytes(docs.n, ids_size)
        run = hits_run(hits, queries.ids, docs.ids, name=prefix + variant.name, model=f"{base_model}-{variant.name}",
                       dims=variant.dims, index_bytes=size)
        out.append(VariantRun(variant, run, size, docs.n, warnings=warnings, speed=speed))
    if progress is not None:
        progress(1.0, "done")
    return out


def _refuse_zero_queries(queries: Vectors) -> None:
    zero = np.flatnonzero(row_norms(queries.matrix) == 0)
    if len(zero):
        row = int(zero[0])
        raise VectorFileError("a query vector with a number other than 0 (all zeros have no direction: every doc "
                              "would score 0 and the ranking would be the tie rule alone)", source=queries.name,
                              line=queries.place(row), where=queries.where,
                              text=f"{queries.ids[row]}: {plural(queries.dims, 'zero')}")


def _zero_docs_on_disk(docs: Vectors, zero: np.ndarray) -> VectorFileError:
    """Leaving rows out of a matrix searched from disk would copy it whole: the rows must go from the file."""
    row = int(np.flatnonzero(zero)[0])
    return VectorFileError(f"doc vectors with a number other than 0 in every row, to search them from disk (cosine "
                           f"leaves the {int(zero.sum()):,} all-zero rows out, which would copy the whole matrix): "
                           f"remove them from the file, or raise EVALCORE_MAX_VECTOR_MB to hold the vectors",
                           source=docs.name, line=docs.place(row), where=docs.where, text=str(docs.ids[row]))


def _zero_docs_warning(docs: Vectors, zero: np.ndarray) -> EvalWarning:
    rows = np.flatnonzero(zero)
    shown = ", ".join(str(docs.place(int(r))) for r in rows[:5]) + (", ..." if len(rows) > 5 else "")
    return EvalWarning("zero_doc_vectors", f"{docs.name}: {plural(len(rows), 'doc vector')} of all zeros left out of "
                       f"the cosine search ({docs.where}{'s' if len(rows) > 1 else ''} {shown}; first id "
                       f"{docs.ids[rows[0]]!r}): they have no direction, so every query would score them 0", len(rows))


def hits_run(hits: Hits, query_ids: np.ndarray, doc_ids: np.ndarray, *, name: str, model: str, dims: int | None = None,
             index_bytes: int | None = None) -> Run:
    """The hits as a run, read through `read_run` like an uploaded table (query, doc_id, score); a doc row of -1
    (an approximate index that returned fewer docs than asked) is no row of the run."""
    depth = hits.docs.shape[1]
    rows = hits.docs.ravel()
    kept = rows >= 0
    frame = pd.DataFrame({
        "query": np.repeat(np.asarray(query_ids, dtype=object), depth)[kept],
        "doc_id": np.asarray(doc_ids, dtype=object)[rows[kept]],
        "score": hits.scores.ravel()[kept].astype(np.float64),
    })
    return read_run(frame, name=name, model=model, dims=dims, index_bytes=index_bytes)


def trec_text(run: Run) -> str:
    """The run as TREC lines ``query Q0 doc rank score tag``; scores with 9 significant digits (every float32 score
    exact enough to keep its order and ties when read back)."""
    frame = run.to_frame()
    for column in ("query", "doc_id"):
        spaced = frame[column].astype(str).str.contains(r"\s", regex=True)
        if spaced.any():  # a TREC line splits on whitespace: such an id would shift every column after it
            raise VectorFileError(f"{'query' if column == 'query' else 'doc'} ids without spaces or tabs to write a "
                                  f"TREC run (a TREC line splits on whitespace)",
                                  source=run.name, text=str(frame[column][spaced].iloc[0]))
    tag = run.name.replace(" ", "_")
    scores = [f"{s:.9g}" for s in frame["score"].to_numpy()]
    lines = [f"{q} Q0 {d} {r} {s} {tag}" for q, d, r, s in zip(frame["query"], frame["doc_id"], frame["rank"], scores)]
    return "\n".join(lines) + "\n"


def _stem(name: str) -> str:
    base = str(name).replace("\\", "/").rsplit("/", 1)[-1]
    for suffix in (".gz", ".parquet", ".pq", ".jsonl", ".ndjson", ".npy"):
        base = base.removesuffix(suffix)
    return base or "vectors"
