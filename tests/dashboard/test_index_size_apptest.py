"""The Index size page in Streamlit's AppTest: on first start the sample's vectors are searched and every number it
shows carries its metric and k, n, model and label set; the dims, precisions and similarity live in the URL; the
sample's stand-in dimensions are explained; an approximate index's sweep says per setting what it loses, lists the
lost queries, and keeps its choices in the URL."""

from __future__ import annotations

from tests.dashboard.apptest_helpers import app, texts
from tests.dashboard.test_dashboard_number_context import page_problems


def test_first_start_searches_the_sample_vectors_and_every_number_has_its_context(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("EVALCORE_WORKSPACE", str(tmp_path / "ws"))
    at = app("views/index_size.py", dims="full,64", precision="float32,binary", k="5")
    assert at.title[0].value == "Index size"
    shown = texts(at)
    assert "base** (acme-embed-base-v2): full vectors 128 dims (the sample's stand-in for 768), recall@5" in shown
    assert "tuned** (acme-embed-large-v2-kestrel-ft): full vectors 256 dims" in shown
    assert "The sample's vectors are small stand-ins" in shown and "tuned-256d: 64 numbers here, 256 in the real model" \
        in shown
    assert "binary 64 loses " in shown and " points of recall@5 against full vectors (95% CI " in shown
    assert "the index is " in shown and "x smaller." in shown
    problems, checked = page_problems(at, "index size")
    assert checked >= 1 and not problems, problems
    assert at.query_params["dims"] in ("full,64", ["full,64"]) and at.query_params["precision"] in ("float32,binary", ["float32,binary"])
    picked = at.selectbox(key="index_size.pick")
    assert "tuned-binary-64" in picked.options and "base-float32-full" in picked.options


def test_rescoring_binary_adds_a_rescored_variant_that_recovers_recall(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("EVALCORE_WORKSPACE", str(tmp_path / "ws"))
    at = app("views/index_size.py", dims="full", precision="float32,binary", k="10", rescore="1")
    toggle = at.toggle(key=next(t.key for t in at.toggle if "rescore" in t.label))
    assert toggle.value is True  # the URL's choice
    shown = texts(at)
    assert "binary full rescored (top 400)" in shown, shown[:3000]
    picked = at.selectbox(key="index_size.pick")
    assert "tuned-binary-full-rescored-400" in picked.options
    frame = next(d.value for d in at.dataframe if "variant" in d.value.columns)
    tuned = frame[frame["model name"] == "tuned"].set_index("variant")["mean"]
    assert tuned["binary-full-rescored-400"] > tuned["binary-full"]  # rescoring gives back recall binary lost


def test_an_approximate_index_sweep_says_what_each_setting_loses_and_lists_the_lost_queries(tmp_path,
                                                                                         monkeypatch) -> None:
    monkeypatch.setenv("EVALCORE_WORKSPACE", str(tmp_path / "ws"))
    at = app("views/index_size.py", part="approximate", ann_model="tuned", ann_kind="ivf", ann_sweep="1,2,4", k="10")
    shown = texts(at)
    for nprobe in (1, 2, 4):
        assert f"IVF nlist = 32, nprobe = {nprobe} loses the answer for " in shown, shown[:3000]
    assert " of 224 queries (" in shown and "than exact search; it returns " in shown
    assert "evalcore vectors --index ivf:nlist=32:nprobe=1 --index ivf:nlist=32:nprobe=2 --index " \
           "ivf:nlist=32:nprobe=4 --build-threads 1" in [c.value for c in at.code]
    lost = next(d.value for d in at.dataframe if "query_text" in d.value.columns)
    assert set(lost["run"]) == {"tuned-ivf-nlist32-nprobe1", "tuned-ivf-nlist32-nprobe2", "tuned-ivf-nlist32-nprobe4"}
    assert lost["query_text"].str.len().gt(0).all()  # what the customer typed, for every lost query
    settings = next(d.value for d in at.dataframe if "lost queries" in d.value.columns).set_index("setting")
    assert settings.loc["exact search", "lost queries"] == 0
    assert list(settings["lost queries"])[1:] == sorted(settings["lost queries"][1:], reverse=True)  # more probes
    assert settings.loc["nprobe = 1", "lost queries"] == (lost["run"] == "tuned-ivf-nlist32-nprobe1").sum()
    problems, checked = page_problems(at, "index size, approximate")
    assert checked >= 1 and not problems, problems
    assert at.query_params["ann_kind"] in ("ivf", ["ivf"]) and at.query_params["part"] in ("approximate",
                                                                                         ["approximate"])
