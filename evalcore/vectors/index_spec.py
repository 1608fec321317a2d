"""An approximate index as a person writes it: ``hnsw:m=16:ef=32``, ``hnsw-sq8:m=16:ef=64``,
``ivf:nlist=64:nprobe=4``, ``ivfpq:nlist=64:nprobe=8:m=32``, optionally on the first d dimensions (``:dims=256``).

A SPEC is the index type, then ``name=value`` parameters separated by colons; a parameter left out takes its
default (`KINDS`). Each parameter's range is declared once, in its kind's `Bound`s: what can be checked from the text
alone (a whole number within a fixed ceiling) by `parse_index_spec`; what needs the vectors (m dividing the
dimensions, nlist within the docs, nprobe within nlist, and the memory the index will take, `estimate_index_memory`,
within its budget, `EVALCORE_INDEX_MEMORY_MB`) by `IndexSpec.check`, before anything is built. Each mistake is one
sentence naming the SPEC, the parameter, what was found and what was expected (`UsageError`, exit 2).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from ..errors import UsageError
from .on_disk import megabytes_setting


@dataclass(frozen=True)
class Bound:
    """The values one parameter may take: a whole number from ``least`` to ``most`` (a fixed ceiling; None: only
    ``within``), and no more than what ``within`` names, checked once the vectors are read (the docs, nlist, the
    dimensions); ``why`` says in a few words what the ceiling protects."""

    least: int
    most: int | None
    within: str | None = None
    why: str = ""

    @property
    def words(self) -> str:
        """``from 2 to 256``, ``from 1 to 65,536 (and at most the number of docs)``: the range in words."""
        if self.most is None:
            return f"from {self.least:,} to {self.within}"
        return f"from {self.least:,} to {self.most:,}" + (f" (and at most {self.within})" if self.within else "")


MOST_LINKS = 256
MOST_CANDIDATES = 4096
MOST_LISTS = 65_536
MOST_NBITS = 8
_LINKS = Bound(2, MOST_LINKS, why="links per doc; each takes 8 bytes of every doc's memory")
_CANDIDATES = Bound(1, MOST_CANDIDATES, why="candidates per search; more is exact search done slowly")
_LISTS = Bound(1, MOST_LISTS, "the number of docs", "lists; each needs docs to fill it")
_PROBES = Bound(1, MOST_LISTS, "nlist", "lists searched, of the nlist there are")
_HNSW = {"m": _LINKS, "ef": _CANDIDATES, "efc": _CANDIDATES}
_IVF = {"nlist": _LISTS, "nprobe": _PROBES}
DIMS = Bound(1, None, "the vectors' dimensions", "the first D numbers of each vector")


@dataclass(frozen=True)
class IndexKind:
    """One index type: its parameters in order with their defaults, which of them is only a search setting (ef,
    nprobe: the same build serves every value), how each doc vector is stored, and each parameter's range."""

    name: str
    title: str
    params: tuple[tuple[str, int], ...]
    search_param: str
    storage: str
    bounds: dict[str, Bound]

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(name for name, _ in self.params) + ("dims",)

    def bound(self, name: str) -> Bound:
        """The range of parameter ``name`` (``dims`` included)."""
        return DIMS if name == "dims" else self.bounds[name]


KINDS: dict[str, IndexKind] = {kind.name: kind for kind in (
    IndexKind("hnsw", "HNSW", (("m", 16), ("ef", 32), ("efc", 40)), "ef", "float32", _HNSW),
    IndexKind("hnsw-sq8", "HNSW-SQ8", (("m", 16), ("ef", 32), ("efc", 40)), "ef", "int8", _HNSW),
    IndexKind("ivf", "IVF", (("nlist", 64), ("nprobe", 4)), "nprobe", "float32", _IVF),
    IndexKind("ivfpq", "IVF-PQ", (("nlist", 64), ("nprobe", 8), ("m", 16), ("nbits", 8)), "nprobe", "pq",
              {**_IVF, "m": Bound(1, None, "the dimensions", "parts per vector, which must divide its dimensions"),
               "nbits": Bound(1, MOST_NBITS, why="one byte per code")}),
)}
"""Every index type a SPEC may name, with its parameters' defaults and ranges (HNSW: m links per node, 2 to 256; ef
candidates searched and efc candidates while building, up to 4,096 each; IVF: nlist lists, up to 65,536 and the
docs; nprobe lists searched, up to nlist; PQ: m parts per vector, dividing the dimensions; nbits per code, up to
8). Every kind's dims: up to the vectors' own."""
EXAMPLE = "hnsw:m=16:ef=32"
MOST_DIGITS = 12
"""A value longer than this is read as too large without being turned into a number."""


@dataclass(frozen=True)
class IndexSpec:
    """A parsed SPEC: the index type, every parameter's value (defaults filled in), the parameters the person wrote
    (they name the run), and the dimensions kept (None: all of them)."""

    kind: str
    params: tuple[tuple[str, int], ...]
    given: tuple[str, ...]
    dims: int | None = None
    text: str = ""

    @property
    def info(self) -> IndexKind:
        return KINDS[self.kind]

    def value(self, name: str) -> int:
        return dict(self.params)[name]

    @property
    def title(self) -> str:
        """The index type's name: ``HNSW``, ``IVF-PQ``."""
        return self.info.title

    @property
    def quoted(self) -> str:
        """The SPEC as written, quoted for a sentence (cut when very long)."""
        return _shown(self.text or self.canonical)

    @property
    def canonical(self) -> str:
        """Every parameter written out, in order: ``hnsw:m=16:ef=32:efc=40`` (``:dims=256`` when truncated)."""
        parts = [self.kind] + [f"{name}={value}" for name, value in self.params]
        return ":".join(parts + ([f"dims={self.dims}"] if self.dims is not None else []))

    @property
    def name(self) -> str:
        """The run's name, from the parameters written (safe in files and URLs): ``hnsw-m16-ef32``,
        ``ivfpq-nlist64-nprobe8-m32``, ``hnsw-ef64-dims256``."""
        parts = [self.kind] + [f"{name}{value}" for name, value in self.params if name in self.given]
        return "-".join(parts + ([f"dims{self.dims}"] if self.dims is not None else []))

    @property
    def words(self) -> str:
        """The name for a sentence: ``HNSW m = 16, ef = 32``, ``IVF nprobe = 4 at 64 dims``."""
        shown = [f"{name} = {value}" for name, value in self.params if name in self.given]
        text = self.info.title + (" " + ", ".join(shown) if shown else "")
        return text + (f" at {self.dims} dims" if self.dims is not None else "")

    @property
    def build_key(self) -> tuple:
        """What the build depends on: every parameter but the search setting (ef, nprobe), and the dims."""
        search = self.info.search_param
        return (self.kind, tuple(p for p in self.params if p[0] != search), self.dims)

    def as_dict(self) -> dict[str, int]:
        """Every parameter with its value (``dims`` only when the vectors are truncated)."""
        return dict(self.params) | ({"dims": self.dims} if self.dims is not None else {})

    def memory_bytes(self, n_docs: int, dims: int) -> int:
        """About the memory the index takes while it is built (`estimate_index_memory`)."""
        return estimate_index_memory(self, n_docs, dims).bytes

    def check(self, n_docs: int, full_dims: int) -> None:
        """What needs the vectors: the dims within theirs, PQ's m dividing them and enough docs to train its codes,
        nlist within the docs and nprobe within nlist, then the memory the index will take within its budget
        (`check_index_memory`)."""
        dims = self.dims or full_dims
        if self.dims is not None and self.dims > full_dims:
            raise self._error(f"keeps dims = {self.dims:,} dimensions, more than the vectors' {full_dims:,}: use "
                              f"at most {full_dims:,} (or leave dims out for all of them)")
        if self.kind == "ivfpq":
            m = self.value("m")
            if dims % m:
                divisors = [d for d in range(2, min(dims, 64) + 1) if dims % d == 0][-4:]
                raise self._error(f"splits each vector into m = {m} parts, which must divide its {dims:,} "
                                  f"dimensions (for example {', '.join(map(str, divisors)) or dims})")
            codes = 2 ** self.value("nbits")
            if n_docs < codes:
                raise self._error(f"trains {codes} codes per part (nbits = {self.value('nbits')}) from "
                                  f"{n_docs:,} docs: it needs at least {codes} docs (use a smaller nbits)")
        if "nlist" in dict(self.params):
            nlist = self.value("nlist")
            if nlist > n_docs:
                raise self._error(f"has nlist = {nlist:,} lists, more than the {n_docs:,} docs: use at most "
                                  f"{n_docs:,} (about {max(1, round(math.sqrt(n_docs))):,}, the square root of the "
                                  "docs, is usual)")
            if self.value("nprobe") > nlist:
                raise self._error(f"searches nprobe = {self.value('nprobe'):,} lists of its nlist = {nlist:,}: "
                                  f"use at most {nlist:,}")
        check_index_memory(self, n_docs, dims)

    def _error(self, what: str) -> UsageError:
        return UsageError(f"The index {self.quoted} {what}.")


def parse_index_spec(text: str) -> IndexSpec:
    """``hnsw:m=16:ef=32`` as an `IndexSpec`; one `UsageError` sentence for an unknown type or parameter, a value
    that is not a whole number within its fixed range (`Bound`), or a parameter written twice."""
    raw = str(text).strip()
    head, *rest = raw.split(":")
    kind = head.strip().lower()
    if kind not in KINDS:
        raise UsageError(f"The index {_shown(raw)} names an unknown index type {_shown(head.strip())}: expected one of "
                         f"{', '.join(KINDS)} (for example {EXAMPLE}).")
    info = KINDS[kind]
    values: dict[str, int] = {}
    for part in rest:
        name, sep, value = (piece.strip() for piece in part.partition("="))
        name = name.lower()
        if not sep or not name:
            raise UsageError(f"The index {_shown(raw)} has {_shown(part)} where a parameter name=value belongs "
                             f"(for example {EXAMPLE}).")
        if name not in info.names:
            raise UsageError(f"The index {_shown(raw)} has an unknown parameter {_shown(name)} for {kind}: expected "
                             f"{_either(info.names)}.")
        if name in values:
            raise UsageError(f"The index {_shown(raw)} gives {name!r} twice: give it once.")
        values[name] = _whole(raw, name, value, info.bound(name))
    params = tuple((name, values.get(name, default)) for name, default in info.params)
    given = tuple(name for name, _ in info.params if name in values)
    return IndexSpec(kind, params, given, values.get("dims"), raw)


def parse_index_specs(texts: Sequence[str]) -> list[IndexSpec]:
    """Every SPEC of a sweep, in order; the same index written twice (even in other words) is refused."""
    out: list[IndexSpec] = []
    for text in texts:
        spec = parse_index_spec(text)
        same = next((s for s in out if s.canonical == spec.canonical), None)
        if same is not None:
            raise UsageError(f"The index {spec.quoted} is the same index as {same.quoted} ({spec.canonical}): "
                             "give each index once.")
        out.append(spec)
    return out


def _whole(raw: str, name: str, value: str, bound: Bound) -> int:
    """``value`` as a whole number within ``bound``'s fixed range; one sentence when it is not."""
    digits = value.lstrip("0") or "0"
    if not (value.isascii() and value.isdigit()) or (len(digits) <= MOST_DIGITS and int(digits) < bound.least):
        raise UsageError(f"The index {_shown(raw)} needs a whole number of at least {bound.least} for {name!r}, got "
                         f"{_shown(value)}.")
    number = int(digits) if len(digits) <= MOST_DIGITS else None
    got = f"{number:,}" if number is not None else f"a number of {len(digits):,} digits"
    if bound.most is not None and (number is None or number > bound.most):
        raise UsageError(f"The index {_shown(raw)} needs {name} of at most {bound.most:,} ({bound.why}), got {got}.")
    if number is None:
        raise UsageError(f"The index {_shown(raw)} needs {name} of at most {bound.within} ({bound.why}), got "
                         f"{got}.")
    return number


def _shown(text: str, most: int = 80) -> str:
    """``text`` quoted for a sentence, cut at ``most`` characters (a SPEC is one argument: it can be any length)."""
    return repr(text) if len(text) <= most else repr(text[:most]) + f"... ({len(text):,} characters)"


def _either(names: Sequence[str]) -> str:
    return ", ".join(names[:-1]) + " or " + names[-1] if len(names) > 1 else names[0]


# ----------------------------------------------------------------------------- the memory an index will take
# An index that would not fit its budget is refused in one sentence naming the estimate and the budget: a build that
# grows past the machine's memory says nothing until the operating system stops it, and on a shared server it takes
# everyone's memory with it. The estimate, by kind (n docs of d dims, `vector` bytes each as stored; in words in
# `FORMULAS` and docs/index-size.md), is of resident memory at the build's peak, on the safe side:
#
# - HNSW: n x (2 x (vector + 8 m) + 24): per doc its vector and its links (2 m neighbours of 4 bytes at the lowest
#   level and about m more above), counted twice because faiss copies both arrays as they grow while docs are added
#   (a build's resident peak was measured at 1.3 to 1.7 times what the index keeps), then its level, offset and a
#   byte of the visited table; plus 16 x max(ef, efc) for a search's candidate heaps.
# - IVF-Flat and IVF-PQ: n x (vector + 8) (each doc's code and its 8-byte id in a list; the lists grow one at a time,
#   so their peak stays near what they keep), the centroids twice over (8 x nlist x d: the quantizer and k-means'
#   copy) and, for PQ, its codebook (4 x 2^nbits x d).
# - Every kind that trains (HNSW-SQ8, IVF, IVF-PQ) also holds its training sample, T x (4 d + 12) (T: `train_rows`);
#   IVF-PQ its residuals too, T x 4 d.
#
# The budget is meant to stop the absurd (a graph of 400,000 links per doc) before it starts, not to count every byte.

MEMORY_ENV = "EVALCORE_INDEX_MEMORY_MB"
DEFAULT_INDEX_MEMORY_MB = 2048
"""An approximate index may take up to 2 GiB unless ``EVALCORE_INDEX_MEMORY_MB`` says otherwise."""
TRAIN_ROWS = 262_144
TRAIN_BYTES = 128 << 20
"""Most docs an index trains on (IVF's lists, PQ's and SQ8's codes), and at most `TRAIN_BYTES` of them: a seeded
sample when there are more."""
FORMULAS = {
    "hnsw": "docs x (2 x (4 x dims + 8 x m) + 24) bytes",
    "hnsw-sq8": "docs x (2 x (dims + 8 x m) + 24) bytes + its training sample",
    "ivf": "docs x (4 x dims + 8) bytes + 8 x nlist x dims + its training sample",
    "ivfpq": "docs x (m x nbits / 8 + 8) bytes + 8 x nlist x dims + 4 x 2^nbits x dims + its training sample",
}
"""Each kind's estimate in words, for the sentence that refuses it."""
_MB = 1 << 20


@dataclass(frozen=True)
class MemoryEstimate:
    """About how many bytes an index takes, and the formula it came from (`FORMULAS`)."""

    bytes: int
    formula: str


def train_rows(n_docs: int, dims: int) -> int:
    """How many docs an index trains on: all of them, or `TRAIN_ROWS` within `TRAIN_BYTES` when there are more."""
    return min(n_docs, TRAIN_ROWS, max(1, TRAIN_BYTES // (4 * max(1, dims))))


def estimate_index_memory(spec: IndexSpec, n_docs: int, dims: int) -> MemoryEstimate:
    """The memory ``spec`` takes built over ``n_docs`` docs of ``dims`` dimensions (the dims it keeps)."""
    n, d, kind = int(n_docs), int(dims), spec.kind
    sample = train_rows(n, d) * (4 * d + 12)
    if kind.startswith("hnsw"):
        vector = 4 * d if kind == "hnsw" else d
        heaps = 16 * max(spec.value("ef"), spec.value("efc"))
        total = n * (2 * (vector + 8 * spec.value("m")) + 24) + heaps + (sample if kind == "hnsw-sq8" else 0)
        return MemoryEstimate(total, FORMULAS[kind])
    lists = 8 * spec.value("nlist") * d
    if kind == "ivf":
        return MemoryEstimate(n * (4 * d + 8) + lists + sample, FORMULAS[kind])
    code = math.ceil(spec.value("m") * spec.value("nbits") / 8)
    codebook = 4 * (2 ** spec.value("nbits")) * d
    residuals = train_rows(n, d) * 4 * d
    return MemoryEstimate(n * (code + 8) + lists + codebook + sample + residuals, FORMULAS[kind])


def index_memory_budget() -> int:
    """The most an approximate index may take, in bytes: ``EVALCORE_INDEX_MEMORY_MB`` or the default (one sentence
    for a value that is not a positive number)."""
    return megabytes_setting(MEMORY_ENV, DEFAULT_INDEX_MEMORY_MB)


def check_index_memory(spec: IndexSpec, n_docs: int, dims: int) -> MemoryEstimate:
    """The estimate, or one `UsageError` sentence saying it and the budget when it is over."""
    found, budget = estimate_index_memory(spec, n_docs, dims), index_memory_budget()
    if found.bytes > budget:
        raise UsageError(f"The index {spec.quoted} on {n_docs:,} docs x {dims:,} dims would need "
                         f"about {amount(found.bytes)} of memory ({spec.title}: {found.formula}), over the "
                         f"budget of {amount(budget)} ({MEMORY_ENV}): use {_smaller(spec)}, or raise the budget.")
    return found


def amount(size: int) -> str:
    """``2,048 MB``, ``1.6 GB``, ``0.59 MB``: binary megabytes as the budget is set, gigabytes past 10 GB."""
    value = size / _MB
    if value >= 10_240:
        return f"{value / 1024:,.0f} GB"
    return f"{value:,.0f} MB" if value >= 10 else f"{value:.2g} MB"


def _smaller(spec: IndexSpec) -> str:
    """What makes this kind of index smaller, for the refusal."""
    if spec.kind.startswith("hnsw"):
        return "a smaller m or fewer dims (:dims=D)"
    if spec.kind == "ivf":
        return "fewer dims (:dims=D) or IVF-PQ, which stores codes"
    return "fewer lists (nlist) or fewer dims (:dims=D)"
