"""Approximate indexes through faiss: searched widely enough they equal exact search (the same runs); built on one
thread they are the same every time; a sweep of ef or nprobe builds once; an index that returns fewer docs than the
depth gives a shorter ranking, never a made-up doc; without faiss the message says how to install it."""

from __future__ import annotations

import sys

import numpy as np
import pytest

from evalcore.errors import UsageError
from evalcore.vectors import ann_faiss
from evalcore.vectors.ann_runs import engine
from evalcore.vectors.index_spec import parse_index_specs
from evalcore.vectors.runs import search_runs
from evalcore.vectors.variants import id_bytes, plan_variants
from tests.vectors.planted import planted

DEPTH = 30


def _search(specs: list[str], similarity: str = "cosine", **options):
    queries, docs, labels = planted()
    variants = plan_variants(docs.dims, "full", "float32", depth=DEPTH, indexes=parse_index_specs(specs))
    found = search_runs(queries, docs, variants, similarity=similarity, depth=DEPTH, build_threads=1, **options)
    return {item.name: item for item in found}, docs


def _pairs(run) -> list[tuple[str, str]]:
    frame = run.to_frame()
    return list(zip(frame["query"], frame["doc_id"]))


@pytest.mark.parametrize("similarity", ["cosine", "dot"])
def test_searched_widely_enough_an_index_gives_the_exact_run(similarity: str) -> None:
    """IVF probing every list is exact for both similarities; HNSW with ef at least the docs is exact for cosine.
    (With dot on vectors of different lengths, the inner product is no distance: a doc can be unreachable in the
    graph at any ef, which is what a team shipping HNSW with dot gets.)"""
    hnsw = ["hnsw:m=8:ef=1500:efc=200", "hnsw:m=8:ef=1500:efc=200:dims=24"] if similarity == "cosine" else []
    found, _ = _search(["ivf:nlist=16:nprobe=16", "ivf:nlist=16:nprobe=16:dims=24", *hnsw], similarity)
    pairs = [("ivf-nlist16-nprobe16", "float32-full"), ("ivf-nlist16-nprobe16-dims24", "float32-24")]
    if hnsw:
        pairs += [("hnsw-m8-ef1500-efc200", "float32-full"), ("hnsw-m8-ef1500-efc200-dims24", "float32-24")]
    for name, exact in pairs:
        assert _pairs(found[name].run) == _pairs(found[exact].run), name  # same docs, same order, every query
        ours, theirs = found[name].run.to_frame()["score"], found[exact].run.to_frame()["score"]
        assert np.allclose(ours, theirs, rtol=1e-5, atol=1e-6)  # float32 sums in another order


def test_built_on_one_thread_every_kind_is_the_same_index_every_time() -> None:
    specs = ["hnsw:m=8:ef=16", "hnsw-sq8:m=8:ef=16", "ivf:nlist=16:nprobe=2", "ivfpq:nlist=16:nprobe=4:m=8"]
    first, _ = _search(specs)
    again, _ = _search(specs)
    for name in ("hnsw-m8-ef16", "hnsw-sq8-m8-ef16", "ivf-nlist16-nprobe2", "ivfpq-nlist16-nprobe4-m8"):
        a, b = first[name].run.to_frame(), again[name].run.to_frame()
        assert a.equals(b), name
        assert first[name].speed.serialized_bytes == again[name].speed.serialized_bytes
    assert _pairs(first["ivfpq-nlist16-nprobe4-m8"].run) != _pairs(first["float32-full"].run)  # PQ is approximate


@pytest.fixture
def built(monkeypatch) -> list[str]:
    """The name of every index faiss builds while the test runs, in order."""
    names: list[str] = []
    original = ann_faiss.FaissEngine.build

    def counting(self, spec, docs, similarity, *, seed):
        names.append(spec.name)
        return original(self, spec, docs, similarity, seed=seed)
    monkeypatch.setattr(ann_faiss.FaissEngine, "build", counting)
    return names


def test_a_sweep_of_ef_builds_once_and_a_new_m_builds_again(built) -> None:
    found, _ = _search(["hnsw:m=8:ef=4", "hnsw:m=8:ef=16", "hnsw:m=8:ef=64", "hnsw:m=12:ef=16"])
    assert built == ["hnsw-m8-ef4", "hnsw-m12-ef16"]
    assert found["hnsw-m8-ef4"].speed.build_seconds == found["hnsw-m8-ef64"].speed.build_seconds
    recall = {n: found[n].run for n in ("hnsw-m8-ef4", "hnsw-m8-ef64")}
    exact = set(_pairs(found["float32-full"].run))
    kept = {n: len(set(_pairs(r)) & exact) for n, r in recall.items()}
    assert kept["hnsw-m8-ef4"] < kept["hnsw-m8-ef64"]  # a wider search keeps more of the exact neighbours


def test_an_index_that_returns_fewer_docs_gives_a_shorter_ranking_and_its_speed_and_size() -> None:
    found, docs = _search(["ivf:nlist=128:nprobe=1"])
    item = found["ivf-nlist128-nprobe1"]
    assert item.run.lengths.min() < DEPTH and item.run.lengths.max() <= DEPTH
    assert set(item.run.to_frame()["doc_id"]) <= set(docs.ids)  # no row -1 turned into a doc
    speed = item.speed
    assert speed.queries_per_second > 0 and 0 < speed.latency_p50_ms <= speed.latency_p99_ms
    assert speed.search_threads == 1 and speed.build_threads == 1 and speed.engine.startswith("faiss ")
    assert item.index_bytes == speed.serialized_bytes + id_bytes(docs.ids)
    assert found["float32-full"].speed is not None  # exact search, timed in the engine to compare with


def test_without_faiss_the_message_says_how_to_install_it(monkeypatch) -> None:
    monkeypatch.setitem(sys.modules, "faiss", None)  # import faiss now fails as if it were not installed
    with pytest.raises(UsageError, match=r'^Approximate indexes need faiss-cpu, which is not installed: '
                                         r'pip install -e "\.\[ann\]"\.$'):
        engine("faiss")
    found, _ = _search([])  # exact search alone never needs it
    assert list(found) == ["float32-full"]


def test_a_build_store_keeps_an_index_for_the_next_sweep_of_the_same_docs(built) -> None:
    store: dict = {}
    first, _ = _search(["ivf:nlist=16:nprobe=1", "ivf:nlist=16:nprobe=2"], builds=store)
    again, _ = _search(["ivf:nlist=16:nprobe=2", "ivf:nlist=16:nprobe=4"], builds=store)  # a value added
    assert built == ["ivf-nlist16-nprobe1"] and len(store) == 1
    assert again["ivf-nlist16-nprobe2"].run.to_frame().equals(first["ivf-nlist16-nprobe2"].run.to_frame())
    _search(["ivf:nlist=16:nprobe=2"], similarity="dot", builds=store)  # another similarity: another index
    assert len(built) == 2 and len(store) == 2
