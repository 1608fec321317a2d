"""An approximate index as a person writes it: ``hnsw:m=16:ef=32``, ``hnsw-sq8:m=16:ef=64``,
``ivf:nlist=64:nprobe=4``, ``ivfpq:nlist=64:nprobe=8:m=32``, optionally on the first d dimensions (``:dims=256``).

A SPEC is the index type, then ``name=value`` parameters separated by colons; a parameter left out takes its
default (`KINDS`). Everything that can be checked from the text alone is checked by `parse_index_spec`; what
needs the vectors (m dividing the dimensions, nlist within the docs) by `IndexSpec.check`. Each mistake is one
sentence naming the SPEC, the parameter, what was found and what was expected (`UsageError`, exit 2).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from ..errors import UsageError


@dataclass(frozen=True)
class IndexKind:
    """One index type: its parameters in order with their defaults, which of them is only a search setting (ef,
    nprobe: the same build serves every value), and how each doc vector is stored."""

    name: str
    title: str
    params: tuple[tuple[str, int], ...]
    search_param: str
    storage: str
    least: dict[str, int]

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(name for name, _ in self.params) + ("dims",)


KINDS: dict[str, IndexKind] = {kind.name: kind for kind in (
    IndexKind("hnsw", "HNSW", (("m", 16), ("ef", 32), ("efc", 40)), "ef", "float32", {"m": 2}),
    IndexKind("hnsw-sq8", "HNSW-SQ8", (("m", 16), ("ef", 32), ("efc", 40)), "ef", "int8", {"m": 2}),
    IndexKind("ivf", "IVF", (("nlist", 64), ("nprobe", 4)), "nprobe", "float32", {}),
    IndexKind("ivfpq", "IVF-PQ", (("nlist", 64), ("nprobe", 8), ("m", 16), ("nbits", 8)), "nprobe", "pq", {}),
)}
"""Every index type a SPEC may name, with its parameters' defaults (HNSW: m links per node, ef candidates searched,
efc candidates while building; IVF: nlist lists, nprobe lists searched; PQ: m parts per vector, nbits per code)."""
MOST_NBITS = 8
EXAMPLE = "hnsw:m=16:ef=32"


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
        """About what the built index holds: each vector as stored (float32, int8 or PQ codes) and its links (HNSW:
        2 m neighbours of 4 bytes at the lowest level, a little more above) or its list entries (an 8-byte id)."""
        if self.kind.startswith("hnsw"):
            vector = 4 * dims if self.kind == "hnsw" else dims
            return n_docs * (vector + 8 * self.value("m") + 16)
        vector = 4 * dims if self.kind == "ivf" else math.ceil(self.value("m") * self.value("nbits") / 8)
        return n_docs * (vector + 8)

    def check(self, n_docs: int, full_dims: int) -> None:
        """What needs the vectors: the dims within theirs, PQ's m dividing them and enough docs to train its codes,
        nlist within the docs and nprobe within nlist."""
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

    def _error(self, what: str) -> UsageError:
        return UsageError(f"The index {self.text or self.canonical!r} {what}.")


def parse_index_spec(text: str) -> IndexSpec:
    """``hnsw:m=16:ef=32`` as an `IndexSpec`; one `UsageError` sentence for an unknown type or parameter, a value
    that is not a whole number in range, or a parameter written twice."""
    raw = str(text).strip()
    head, *rest = raw.split(":")
    kind = head.strip().lower()
    if kind not in KINDS:
        raise UsageError(f"The index {raw!r} names an unknown index type {head.strip()!r}: expected one of "
                         f"{', '.join(KINDS)} (for example {EXAMPLE}).")
    info = KINDS[kind]
    values: dict[str, int] = {}
    for part in rest:
        name, sep, value = (piece.strip() for piece in part.partition("="))
        name = name.lower()
        if not sep or not name:
            raise UsageError(f"The index {raw!r} has {part!r} where a parameter name=value belongs (for example "
                             f"{EXAMPLE}).")
        if name not in info.names:
            raise UsageError(f"The index {raw!r} has an unknown parameter {name!r} for {kind}: expected "
                             f"{_either(info.names)}.")
        if name in values:
            raise UsageError(f"The index {raw!r} gives {name!r} twice: give it once.")
        least = info.least.get(name, 1)
        if not value.isdigit() or int(value) < least:
            raise UsageError(f"The index {raw!r} needs a whole number of at least {least} for {name!r}, got "
                             f"{value!r}.")
        values[name] = int(value)
    if values.get("nbits", 1) > MOST_NBITS:
        raise UsageError(f"The index {raw!r} needs nbits of at most {MOST_NBITS} (one byte per code), got "
                         f"{values['nbits']}.")
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
            raise UsageError(f"The index {spec.text!r} is the same index as {same.text!r} ({spec.canonical}): give "
                             "each index once.")
        out.append(spec)
    return out


def _either(names: Sequence[str]) -> str:
    return ", ".join(names[:-1]) + " or " + names[-1] if len(names) > 1 else names[0]
