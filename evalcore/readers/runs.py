"""A run: one system's ranked results, integer-coded and put in evaluation order once.

Ordering follows docs/formats.md: TREC runs by score descending with ties broken by doc id
descending (trec_eval's rule; the rank column is ignored), tables by ``rank`` when present,
lists in their own order. A doc repeated in one ranking keeps its best-ranked place.
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping, Sequence, Union

import numpy as np
import pandas as pd
import pyarrow.compute as pc

from ..errors import InputError, invalid_parameter
from ..warning_log import EvalWarning, agree, plural
from .ids import IdArray, first_long_id, long_id_error, repeated_rows
from .sources import Source, SourceLike, detect_format, open_source, read_limited
from .tables import (
    DOC_ALIASES,
    QUERY_ALIASES,
    Table,
    find_column,
    first_empty,
    is_json_id,
    json_number,
    parse_numbers,
    read_delimited,
    read_json_value,
    read_jsonl_records,
    read_parquet,
    read_trec_run_arrow,
    read_whitespace,
    table_ids,
)

META_FIELDS = ("model", "price_per_mtok", "dims", "index_bytes")


@dataclass(eq=False)
class Run:
    """One system's rankings as parallel arrays, grouped by query and in rank order.

    Row ``i`` is doc ``doc_ids[doc_codes[i]]`` at 0-based ``positions[i]`` for query
    ``query_ids[query_codes[i]]``; the rows of query ``j`` are ``starts[j]:starts[j+1]``.
    ``doc_ids`` holds one id per row as read (an `IdArray`, indexed like a NumPy object
    array), so the same doc in two queries has two codes: compare doc ids, not codes.
    ``tie_keys`` holds the value the order came from (score or rank; NaN where the order is
    a list's own), so ties across a cutoff can be found.
    """

    name: str
    model: str
    query_ids: np.ndarray
    doc_ids: IdArray
    query_codes: np.ndarray
    doc_codes: np.ndarray
    positions: np.ndarray
    starts: np.ndarray
    scores: np.ndarray
    tie_keys: np.ndarray
    price_per_mtok: float | None = None
    dims: int | None = None
    index_bytes: int | None = None
    warnings: tuple[EvalWarning, ...] = ()
    source: str | None = None
    extra: dict = field(default_factory=dict)

    @property
    def n_queries(self) -> int:
        return len(self.query_ids)

    @property
    def n_rows(self) -> int:
        return len(self.doc_codes)

    @property
    def lengths(self) -> np.ndarray:
        """Number of docs returned per query (after duplicates were dropped)."""
        return np.diff(self.starts)

    def ranking(self, query: str) -> list[str]:
        """The ranked doc ids of one query (empty when the run has no such query)."""
        hits = np.flatnonzero(self.query_ids == query)
        if not len(hits):
            return []
        j = int(hits[0])
        return self.doc_ids[self.doc_codes[self.starts[j]:self.starts[j + 1]]].tolist()

    def to_frame(self) -> pd.DataFrame:
        """Rows as a DataFrame: query, doc_id, rank (1-based), score."""
        return pd.DataFrame({
            "query": self.query_ids[self.query_codes],
            "doc_id": self.doc_ids[self.doc_codes],
            "rank": self.positions + 1,
            "score": self.scores,
        })

    def metadata(self) -> dict:
        return {"name": self.name, "model": self.model, "price_per_mtok": self.price_per_mtok,
                "dims": self.dims, "index_bytes": self.index_bytes}

    def with_metadata(self, **values) -> "Run":
        """A copy with some of name, model, price_per_mtok, dims, index_bytes changed."""
        unknown = set(values) - set(META_FIELDS) - {"name"}
        if unknown:
            raise invalid_parameter("metadata", "among " + ", ".join(("name",) + META_FIELDS), sorted(unknown))
        checked = _check_metadata({k: v for k, v in values.items() if k != "name"}, "run metadata")
        fields = dict(self.__dict__)
        fields.update(checked)
        if "name" in values and values["name"]:
            fields["name"] = str(values["name"])
        return Run(**fields)

    def __repr__(self) -> str:
        return f"Run(name={self.name!r}, model={self.model!r}, queries={self.n_queries}, rows={self.n_rows})"


RunLike = Union[Run, SourceLike, Mapping, pd.DataFrame]


def read_run(
    source: RunLike,
    *,
    format: str | None = None,
    name: str | None = None,
    model: str | None = None,
    price_per_mtok: float | None = None,
    dims: int | None = None,
    index_bytes: int | None = None,
    sidecar: bool = True,
) -> Run:
    """Read a run from a file path, bytes, an upload, a dict or a DataFrame.

    Metadata comes, later winning: the TREC run tag or the file stem; a sidecar
    ``<stem>.meta.json`` beside a file path (unless ``sidecar=False``); the arguments.
    """
    explicit = {"model": model, "price_per_mtok": price_per_mtok, "dims": dims, "index_bytes": index_bytes}
    explicit = {k: v for k, v in explicit.items() if v is not None}
    if isinstance(source, Run):
        return source.with_metadata(**explicit, **({"name": name} if name else {}))
    if isinstance(source, Mapping):
        parts = _from_mapping(source, "<dict>")
        return _assemble(parts, name or "run", {}, explicit, None, ())
    if isinstance(source, pd.DataFrame):
        table = Table(source.reset_index(drop=True), Source(name or "<DataFrame>", b""), 0, False, "row")
        return _assemble(_from_table(table), name or "run", {}, explicit, None, ())

    src = open_source(source)
    fmt = detect_format(src, format)
    if fmt == "trec":
        parts = _from_trec(src)
    elif fmt in ("csv", "tsv"):
        parts = _from_table(read_delimited(src, "," if fmt == "csv" else "\t", "query, doc_id and rank or score",
                                                  columns=_TABLE_COLUMNS))
    elif fmt == "parquet":
        parts = _from_table(read_parquet(src, columns=_TABLE_COLUMNS))
    elif fmt == "json":
        value = read_json_value(src)
        if not isinstance(value, Mapping):
            raise InputError("a JSON object {query: [doc, ...]}", source=src.name, text=type(value).__name__)
        parts = _from_mapping(value, src.name)
    else:
        parts = _from_jsonl(src)
    if not len(parts["docs"]):
        raise InputError("a run with at least one ranked doc", source=src.name)
    found = {"model": parts.pop("tag", None) or src.stem}
    if sidecar and isinstance(source, (str, os.PathLike)):
        found.update(_read_sidecar(Path(source)))
    repairs = tuple(EvalWarning("file_repaired", f"{src.name}: {r}", 1) for r in src.repairs)
    display, stem = src.name, src.stem
    del src  # the file's bytes are not needed past parsing
    return _assemble(parts, name or stem, found, explicit, display, repairs)


def sidecar_path(run_path: Path) -> Path:
    """``base.trec`` (or ``base.trec.gz``) -> ``base.meta.json`` in the same folder."""
    stem = Source(str(run_path), b"").stem
    return run_path.with_name(f"{stem}.meta.json")


def _read_sidecar(run_path: Path) -> dict:
    path = sidecar_path(run_path)
    if not path.is_file():
        return {}
    try:
        value = json.loads(read_limited(path, str(path)).decode("utf-8-sig"))
    except (ValueError, UnicodeDecodeError) as exc:
        raise InputError(f"valid JSON run metadata ({exc})", source=str(path)) from None
    except RecursionError:
        raise InputError("valid JSON run metadata (nested too deeply)", source=str(path)) from None
    if not isinstance(value, Mapping):
        raise InputError('a JSON object like {"model": ..., "price_per_mtok": ...}', source=str(path))
    return _check_metadata({k: value[k] for k in META_FIELDS if k in value}, str(path))


def _check_metadata(values: Mapping, where: str) -> dict:
    checked = {}
    for key, value in values.items():
        if value is None or value == "":
            checked[key] = None
        elif key == "model":
            checked[key] = str(value)
        else:
            try:
                number = float(value)
            except (TypeError, ValueError):
                raise InputError(f"a number for {key!r}", source=where, text=repr(value)) from None
            if not math.isfinite(number) or number < 0:
                raise InputError(f"a non-negative number for {key!r}", source=where, text=repr(value))
            if key != "price_per_mtok" and number >= _LARGEST_COUNT:
                raise InputError(f"a whole number below 2**53 for {key!r}", source=where, text=repr(value))
            checked[key] = number if key == "price_per_mtok" else int(number)
    return checked


_LARGEST_COUNT = 2.0 ** 53
"""dims and index_bytes must stay below this: exact as floats, and storable as 64-bit integers."""


def _from_trec(src: Source) -> dict:
    fast = read_trec_run_arrow(src)
    if fast is not None:
        return fast
    table = read_whitespace(src, 6, "6 whitespace-separated fields: query Q0 doc_id rank score tag", (0, 2, 4, 5),
                            id_columns={0: "a query id", 2: "a doc id"})
    scores = parse_numbers(table, 4, "a number in the score column (5th field)")
    tags = table.frame[5]
    return {"queries": table.frame[0], "docs": table.frame[2], "scores": scores, "ranks": None,
            "tag": str(tags.iloc[0]) if len(tags) else None}


_RANK_ALIASES = ("rank", "position")
_SCORE_ALIASES = ("score", "similarity", "distance_score")
_TABLE_COLUMNS = QUERY_ALIASES + DOC_ALIASES + _RANK_ALIASES + _SCORE_ALIASES
"""Every column a run table may use: a CSV/TSV run reads only these."""


def _from_table(table: Table) -> dict:
    q_col = find_column(table, QUERY_ALIASES, "query")
    d_col = find_column(table, DOC_ALIASES, "doc id")
    r_col = find_column(table, _RANK_ALIASES, "rank", required=False)
    s_col = find_column(table, _SCORE_ALIASES, "score", required=False)
    if r_col is None and s_col is None:
        raise InputError("a rank or score column", source=table.source.name, line=1,
                         text=",".join(table.column_names), where="line")
    for column, role in ((q_col, "a query id"), (d_col, "a doc id")):
        row = first_empty(table, column)
        if row is not None:
            raise table.error(row, f"{role} in column {column!r}")
    ranks = parse_numbers(table, r_col, f"a number in the rank column {r_col!r}") if r_col else None
    if ranks is not None:
        # A rank counts from 1; a position may count from 0 (a list index): both are whole numbers.
        first = 0 if r_col.lower() == "position" else 1
        bad = (ranks < first) | (ranks != np.floor(ranks))
        if bad.any():
            row = int(np.flatnonzero(bad)[0])
            what = "a rank that is a positive whole number" if first else "a position that is a whole number >= 0"
            raise table.error(row, f"{what} in column {r_col!r}")
    scores = parse_numbers(table, s_col, f"a number in the score column {s_col!r}") if s_col else None
    return {"queries": table_ids(table, q_col, "a query id"), "docs": table_ids(table, d_col, "a doc id"),
            "scores": scores, "ranks": ranks}


def _from_mapping(value: Mapping, where: str) -> dict:
    """Runs from ``{q: [doc, ...]}``, ``{q: {doc: score}}`` or ``{q: [{"doc_id", "score"}]}``."""
    queries, docs, scores, list_pos = [], [], [], []
    scored = None
    for query, ranked in value.items():
        if isinstance(ranked, Mapping):
            items = [(doc, score) for doc, score in ranked.items()]
            kind = True
        elif isinstance(ranked, (list, tuple)):
            if ranked and all(isinstance(item, Mapping) for item in ranked):
                items = [(_field(item, DOC_ALIASES, where, query), _score(item, where, query)) for item in ranked]
                kind = True
            else:
                items = [(doc, None) for doc in ranked]
                kind = False
        else:
            raise InputError(f"a ranked list of doc ids for query {query!r}", source=where, text=repr(ranked)[:80])
        if not ranked:
            continue  # an empty ranking: the query is scored as missing from the run
        if scored is None:
            scored = kind
        elif scored != kind:
            raise InputError(f"the same shape for every query (query {query!r} differs)", source=where)
        for i, (doc, score) in enumerate(items):
            if not is_json_id(doc):
                raise InputError(f"doc ids as strings in query {query!r}", source=where, text=repr(doc)[:80])
            number = json_number(score) if kind else np.nan
            if number is None:
                raise InputError(f"a finite numeric score for doc {doc!r} of query {query!r}", source=where,
                                 text=repr(score)[:80])
            queries.append(str(query)); docs.append(str(doc)); list_pos.append(i)
            scores.append(number)
    return {"queries": pd.Series(queries, dtype=str), "docs": pd.Series(docs, dtype=str),
            "scores": np.asarray(scores, dtype=np.float64) if scored else None,
            "ranks": None if scored else np.asarray(list_pos, dtype=np.float64), "list_order": not scored}


def _field(item: Mapping, aliases: Sequence[str], where: str, query: object) -> str:
    for alias in aliases:
        if alias in item:
            return item[alias]
    raise InputError(f'a "doc_id" in each result of query {query!r}', source=where, text=repr(dict(item))[:80])


def _score(item: Mapping, where: str, query: object) -> float:
    if "score" not in item:
        raise InputError(f'a "score" in each result of query {query!r}', source=where, text=repr(dict(item))[:80])
    return item["score"]


def _from_jsonl(src: Source) -> dict:
    queries, docs, positions = [], [], []
    seen: dict[str, int] = {}
    for number, record in read_jsonl_records(src):
        query = record.get("query", record.get("query_id", record.get("qid")))
        ranked = record.get("ranked")
        if not is_json_id(query) or not isinstance(ranked, list):
            raise InputError('{"query": ..., "ranked": [doc, ...]} on each line', source=src.name, line=number,
                             text=src.lines()[number - 1])
        if str(query) in seen:
            raise InputError(f"each query on one line only (query {query!r} is also on line {seen[str(query)]})",
                             source=src.name, line=number, text=src.lines()[number - 1])
        seen[str(query)] = number
        for i, doc in enumerate(ranked):
            if not is_json_id(doc):
                raise InputError('"ranked" as a list of doc ids', source=src.name, line=number,
                                 text=src.lines()[number - 1])
            queries.append(str(query)); docs.append(str(doc)); positions.append(i)
    return {"queries": pd.Series(queries, dtype=str), "docs": pd.Series(docs, dtype=str), "scores": None,
            "ranks": np.asarray(positions, dtype=np.float64), "list_order": True}


def _assemble(parts: dict, name: str, found: dict, explicit: dict, source: str | None,
              repairs: tuple[EvalWarning, ...]) -> Run:
    """Integer-code query ids, put rows in evaluation order, drop repeated docs, attach metadata.

    Doc ids stay one Arrow string per parsed row (`IdArray`); ``doc_codes`` points each
    ordered row at its parsed row. No dictionary of distinct docs is built (see `evalcore.readers.ids`).
    """
    if "query_codes" in parts:
        query_codes, query_ids = parts["query_codes"], parts["query_ids"]
    else:
        query_codes, query_ids = pd.factorize(pd.Series(parts["queries"]), sort=False)
    scores, ranks, list_order = parts["scores"], parts["ranks"], bool(parts.get("list_order"))
    docs = parts["docs"]
    doc_ids = docs if isinstance(docs, IdArray) else IdArray(docs)
    del parts, docs
    query_ids = np.asarray(query_ids, dtype=object)
    for values, role in ((doc_ids.arrow, "a doc id"), (IdArray(query_ids).arrow, "a query id")):
        row = first_long_id(values)  # the readers of files name the line; this catches every other way in
        if row is not None:
            raise long_id_error(values[row].as_py(), role, source or name, None)
    query_codes = query_codes.astype(np.int32, copy=False)
    n = len(query_codes)
    index_type = np.int32 if n < 2**31 else np.int64
    if scores is None:
        scores = np.full(n, np.nan)
    # Sort keys (array, descending?), most significant first; doc id descending breaks what is still tied.
    if ranks is not None:
        keys = [(query_codes, False), (ranks, False)] + ([(scores, True)] if not np.isnan(scores).all() else [])
        tie_keys = np.full(n, np.nan) if list_order else ranks
    else:
        keys = [(query_codes, False), (scores, True)]
        tie_keys = scores
    order = _evaluation_order(keys, doc_ids)
    del keys
    doc_codes = None
    if order is not None:
        query_codes, scores, tie_keys = query_codes[order], scores[order], tie_keys[order]
        doc_codes = order.astype(index_type, copy=False)
        del order
    warnings = list(repairs)
    dup = repeated_rows(query_codes, doc_ids, doc_codes)
    if dup is not None:
        n_queries = len(np.unique(query_codes[dup]))
        warnings.append(EvalWarning(
            "duplicate_doc",
            f"run {name}: {plural(n_queries, 'query', 'queries')} {agree(n_queries, 'lists', 'list')} the same doc more than once "
            f"({plural(int(dup.sum()), 'repeat')}); each doc keeps its best-ranked place",
            n_queries,
        ))
        keep = ~dup
        if doc_codes is None:
            doc_codes = np.flatnonzero(keep).astype(index_type, copy=False)
        else:
            doc_codes = doc_codes[keep]
        query_codes, scores, tie_keys = query_codes[keep], scores[keep], tie_keys[keep]
    if doc_codes is None:
        doc_codes = np.arange(n, dtype=index_type)
    counts = np.bincount(query_codes, minlength=len(query_ids))
    starts = np.zeros(len(query_ids) + 1, dtype=np.int64)
    np.cumsum(counts, out=starts[1:])
    positions = np.arange(len(query_codes), dtype=np.int32)
    positions -= starts.astype(np.int32)[query_codes]
    meta = {"model": None, "price_per_mtok": None, "dims": None, "index_bytes": None}
    meta.update(found)
    meta.update(_check_metadata(explicit, "run metadata"))
    return Run(
        name=name, model=meta["model"] or name, query_ids=query_ids, doc_ids=doc_ids,
        query_codes=query_codes, doc_codes=doc_codes, positions=positions, starts=starts,
        scores=scores, tie_keys=np.asarray(tie_keys, dtype=np.float64),
        price_per_mtok=meta["price_per_mtok"], dims=meta["dims"], index_bytes=meta["index_bytes"],
        warnings=tuple(warnings), source=source,
    )


def _evaluation_order(keys: list[tuple[np.ndarray, bool]], doc_ids: IdArray) -> np.ndarray | None:
    """The permutation that sorts rows by ``keys`` then doc id descending; None if already sorted.

    ``keys`` are (values, descending) pairs, most significant first; row ``i`` holds
    ``doc_ids[i]``. Most files come sorted and without ties, so both checks are linear scans
    (no negated copy of the scores is made for them); only rows tied on every key get their
    doc ids ranked (as strings: Arrow's byte order of UTF-8 is Python's code-point order).
    """
    order = None
    if not _is_sorted(keys):
        order = np.lexsort([-values if desc else values for values, desc in keys[::-1]])
    current = keys if order is None else [(values[order], desc) for values, desc in keys]
    tied = _tied_rows([values for values, _ in current])
    if tied is None:
        return order
    rows = np.flatnonzero(tied)
    del tied
    strings = doc_ids.take_arrow(rows if order is None else order[rows])
    tie_break = np.zeros(len(keys[0][0]), dtype=np.int64)
    tie_break[rows] = _dense_ranks(strings)
    current = current + [(tie_break, True)]
    if _is_sorted(current):
        return order
    again = np.lexsort([-values if desc else values for values, desc in current[::-1]])
    return again if order is None else order[again]


def _tied_rows(keys: list[np.ndarray]) -> np.ndarray | None:
    """Mask of rows equal on every key to the row before or after; None when no row is."""
    if len(keys[0]) < 2:
        return None
    equal = np.ones(len(keys[0]) - 1, dtype=bool)
    for key in keys:
        equal &= key[:-1] == key[1:]
    if not equal.any():
        return None
    tied = np.zeros(len(keys[0]), dtype=bool)
    tied[:-1] |= equal
    tied[1:] |= equal
    return tied


def _dense_ranks(strings) -> np.ndarray:
    """Rank of each string in sorted order, equal strings sharing a rank."""

    if not len(strings):
        return np.zeros(0, dtype=np.int64)
    order = pc.sort_indices(strings).to_numpy()
    ordered = strings.take(order)
    same = pc.equal(ordered[1:], ordered[:-1]).to_numpy(zero_copy_only=False)
    sorted_ranks = np.concatenate([[0], np.cumsum(~same)])
    ranks = np.empty(len(order), dtype=np.int64)
    ranks[order] = sorted_ranks
    return ranks


def _is_sorted(keys: list[tuple[np.ndarray, bool]]) -> bool:
    """True when rows are already in lexicographic order of ``keys`` ((values, descending) pairs)."""
    if len(keys[0][0]) < 2:
        return True
    before = np.zeros(len(keys[0][0]) - 1, dtype=bool)
    equal = np.ones(len(keys[0][0]) - 1, dtype=bool)
    for values, desc in keys:
        a, b = values[:-1], values[1:]
        before |= equal & ((a > b) if desc else (a < b))
        equal &= a == b
    return bool((before | equal).all())
