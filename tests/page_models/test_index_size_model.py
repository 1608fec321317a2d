"""The Index size page's model called directly: a sample model's vectors searched in smaller variants, the table and
the reference line the page shows, the SPECs a sweep runs; the same study as the core's ``evalcore vectors``."""

from __future__ import annotations

import pytest

from evalcore.analyses.index_study import index_size_study
from evalcore.analyses.index_choice import index_choice
from evalcore.report.index_size import index_choice_line, index_size_points

from dashboard import caching, loading
from dashboard.page_models import index_size


def test_smaller_vectors_cost_recall_as_the_cores_study_says(sample):
    base = next(m for m in index_size.sample_models(sample) if m.name == "base")
    settings = index_size.settings_for(["full", "64"], ["float32"], "cosine", 10)
    found = index_size.study(sample, base, settings)
    assert found.ok
    report = found.value.report
    points = index_size.points({"base": report})
    assert points["variant"].tolist() == ["float32-full", "float32-64"]
    queries, docs = index_size.vectors(base.queries, base.query_ids), index_size.vectors(base.docs, base.doc_ids)
    core = index_size_study(loading.labels(sample.labels).value, loading.scope(sample).value, queries.value,
                            docs.value, settings, model=base.model, prefix="base-")
    expected = index_size_points(core.report)
    assert points["mean"].tolist() == pytest.approx(expected["mean"].tolist())
    assert points["n"].tolist() == [224, 224]
    assert points.iloc[1]["mean"] < points.iloc[0]["mean"]  # 64 dims find less than the full 128
    table = index_size.variants_table(points, "labels:tune#ref")
    assert table.columns.tolist()[:6] == ["model name", "variant", "dims", "precision", "index MB", "x smaller"]
    assert set(table["labels"]) == {"labels:tune#ref"}
    assert index_size.full_vectors(base, report, 10) == (
        f"full vectors 128 dims (the sample's stand-in for 768), recall@10 {points.iloc[0]['mean']:.3f}")
    assert index_size.owner_of(points, "base-float32-64") == "base"
    assert index_size.cached_study(sample, base, settings) is found  # kept: the page opens on it next time
    # the page opens on the index to take, the sentence `evalcore vectors` opens on
    assert index_size.take(report) == index_choice_line(index_choice(core.report))
    assert index_size.take(report).startswith(("Take ", "Keep the full vectors"))
    assert index_size.take_line({"base": report}) == index_size.take(report)
    both = index_size.take_line({"base": report, "again": report})
    assert both.startswith("Take the smallest index no worse than the full vectors on recall@10: base: ")


def test_a_sweep_is_one_spec_per_setting_with_the_builds_defaults_left_out():
    build = dict(index_size.build_params("ivf"))
    assert build == {"nlist": 32}
    assert index_size.sweep_specs("ivf", build, [4, 1, 4]) == ("ivf:nlist=32:nprobe=1", "ivf:nlist=32:nprobe=4")
    assert index_size.sweep_specs("hnsw", dict(index_size.build_params("hnsw")), [16], dims="64") == (
        "hnsw:ef=16:dims=64",)
    settings = index_size.sweep_settings(("hnsw:ef=16",), "dot", 1)
    assert settings.k == (1,) and settings.metric == "recall@1" and settings.build_threads == 1


def test_labels_that_are_not_the_samples_have_no_sample_vectors(make_dataset):
    dataset = make_dataset({"q1": ["d1"]}, {"one": {"q1": ["d1"]}})
    assert index_size.sample_models(dataset) == ()
    assert index_size.remembered_models("not-a-key") == () and index_size.remembered_models(None) == ()


def test_a_links_build_parameter_is_brought_into_the_range_the_cli_takes():
    assert index_size.bounds("hnsw", "m") == (2, 256) and index_size.bounds("ivf", "nlist") == (1, 65_536)
    assert index_size.from_link("hnsw", "m", "", 16) == (16, None)
    assert index_size.from_link("hnsw", "m", "32", 16) == (32, None)
    value, note = index_size.from_link("hnsw", "m", "400000", 16)
    assert value == 256 and note.startswith("The link's m = 400,000 is over the most this page builds, 256 (")
    value, note = index_size.from_link("hnsw", "efc", "9" * 40, 40)
    assert value == 4096 and "a number of 40 digits" in note
    assert index_size.from_link("hnsw", "m", "1", 16)[0] == 2 and index_size.from_link("ivf", "nlist", "x", 32)[0] == 32


def test_a_sweep_out_of_range_for_the_vectors_or_over_the_memory_budget_is_refused_before_it_is_built(sample,
                                                                                                 monkeypatch):
    base = next(m for m in index_size.sample_models(sample) if m.name == "base")
    assert index_size.check_sweep(base, ("hnsw:m=256:ef=8",)) is None
    assert "has nlist = 600 lists, more than the 503 docs" in index_size.check_sweep(base, ("ivf:nlist=600:nprobe=1",))
    monkeypatch.setenv("EVALCORE_INDEX_MEMORY_MB", "0.5")
    said = index_size.check_sweep(base, ("hnsw:m=256:ef=8",))
    assert said.startswith("The index 'hnsw:m=256:ef=8' on 503 docs x 128 dims would need about 2.5 MB of memory")
    assert "over the budget of 0.5 MB (EVALCORE_INDEX_MEMORY_MB)" in said and "\n" not in said


def test_a_person_who_may_not_build_gets_the_reason_and_no_index(sample):
    base = next(m for m in index_size.sample_models(sample) if m.name == "base")
    settings = index_size.sweep_settings(("hnsw:m=12:ef=8",), "cosine", 10)
    refused = index_size.study(sample, base, settings, refused="bo is a viewer here and may not build")
    assert refused.error == "bo is a viewer here and may not build"
    assert index_size.cached_study(sample, base, settings) is None  # nothing computed, nothing kept


def test_built_indexes_are_kept_within_a_count_and_the_memory_budget():
    store = caching.BuiltIndexes(entries=2, budget=1000)
    store[("a",)], store[("b",)] = ("index a", 0.1, 300), ("index b", 0.1, 300)
    assert store.get(("a",)) is not None  # a used last: b is the oldest now
    store[("c",)] = ("index c", 0.1, 300)
    assert len(store) == 2 and store.get(("b",)) is None and store.get(("a",)) is not None
    store[("d",)] = ("index d", 0.1, 900)  # over the budget with any other: kept alone
    assert len(store) == 1 and store.get(("d",)) is not None
    assert caching.INDEX_BUILDS <= 8 and caching.built_indexes().entries == caching.INDEX_BUILDS
