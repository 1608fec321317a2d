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
from typing import Mapping, Union

import numpy as np
import pandas as pd
import pyarrow.compute as pc

from ..errors import InputError, invalid_parameter
from ..warning_log import EvalWarning, agree, plural
from .formats import file_stem, parse_file
from .ids import IdArray, first_long_id, long_id_error, repeated_rows
from .run_parsers import from_mapping, from_table
from .sources import Source, SourceLike, open_source, repair_warnings
from .tables import Table

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
        parts = from_mapping(source, "<dict>")
        return _assemble(parts, name or "run", {}, explicit, None, ())
    if isinstance(source, pd.DataFrame):
        table = Table(source.reset_index(drop=True), Source(name or "<DataFrame>", b""), 0, False, "row")
        return _assemble(from_table(table), name or "run", {}, explicit, None, ())

    src, parts = parse_file(source, "run", format, "a run file")
    if not len(parts["docs"]):
        raise InputError("a run with at least one ranked doc", source=src.name)
    stem = file_stem(src.name)
    tag, last_tag = parts.pop("tag", None), parts.pop("last_tag", None)
    found = {"model": tag or stem}
    if sidecar and isinstance(source, (str, os.PathLike)):
        found.update(_sidecar_beside(Path(source)))
    repairs = repair_warnings(src) + _tag_warning(name or stem, src.name, tag, last_tag, "model" in explicit
                                                  or found["model"] != (tag or stem))
    display = src.name
    del src  # the file's bytes are not needed past parsing
    return _assemble(parts, name or stem, found, explicit, display, repairs)


def _tag_warning(name: str, file: str, first: str | None, last: str | None, named: bool) -> tuple[EvalWarning, ...]:
    """A ``run_tag_varies`` warning when a TREC run's first and last lines carry different run tags (the 6th field
    names the run, one name per file) and nothing else names the model: the model is then the first line's tag, which
    may be a number or a doc id rather than a model's name."""
    if named or first is None or last is None or first == last:
        return ()
    return (EvalWarning("run_tag_varies", f"run {name}: the run tag (6th field) is {first!r} on the first line of "
                        f"{file} but {last!r} on the last, so it does not name the run's model; the model shown is "
                        f"{first!r}: name it in a .meta.json sidecar beside the run file or where the run is uploaded",
                        1),)


def sidecar_path(run_path: Path) -> Path:
    """``base.trec`` (or ``base.trec.gz``) -> ``base.meta.json`` in the same folder."""
    return run_path.with_name(f"{file_stem(str(run_path))}.meta.json")


def read_sidecar(source: SourceLike, *, name: str | None = None) -> dict:
    """A run's metadata from its sidecar JSON (``base.meta.json`` beside ``base.trec``): a path, bytes or an upload.

    Returns the `META_FIELDS` the file sets, each checked (``model`` as text, the others non-negative numbers,
    ``dims`` and ``index_bytes`` whole numbers below 2**53; null or "" as None); other keys are ignored. Read as
    every file is (`evalcore.readers.sources`: gzip, a byte-order mark, the size limit). Bad JSON, anything but an
    object, or a field of the wrong type is an InputError naming the file (``name``, else the path).
    """
    src = open_source(source, name)
    try:
        value = json.loads(src.data.decode("utf-8"))
    except ValueError as exc:  # a UnicodeDecodeError too
        raise InputError(f"valid JSON run metadata ({exc})", source=src.name) from None
    except RecursionError:
        raise InputError("valid JSON run metadata (nested too deeply)", source=src.name) from None
    if not isinstance(value, Mapping):
        raise InputError('a JSON object like {"model": ..., "price_per_mtok": ...}', source=src.name)
    return _check_metadata({k: value[k] for k in META_FIELDS if k in value}, src.name)


def _sidecar_beside(run_path: Path) -> dict:
    """The metadata of the sidecar beside a run file, {} when there is none."""
    path = sidecar_path(run_path)
    return read_sidecar(path) if path.is_file() else {}


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
