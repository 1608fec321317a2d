"""Index SPECs as a person writes them: read with their defaults, named for runs and sentences, and every mistake one
sentence naming the SPEC, the parameter, what was found and what was expected."""

from __future__ import annotations

import pytest

from evalcore.errors import UsageError
from evalcore.vectors.index_spec import KINDS, parse_index_spec, parse_index_specs


def test_a_spec_reads_with_its_defaults_and_names_its_run_from_what_was_written() -> None:
    spec = parse_index_spec("hnsw:m=16:ef=32")
    assert spec.as_dict() == {"m": 16, "ef": 32, "efc": 40}
    assert spec.canonical == "hnsw:m=16:ef=32:efc=40"
    assert spec.name == "hnsw-m16-ef32" and spec.words == "HNSW m = 16, ef = 32"
    pq = parse_index_spec(" IVFPQ:nprobe=8:nlist=64:m=32:dims=128 ")  # any order, any case
    assert pq.canonical == "ivfpq:nlist=64:nprobe=8:m=32:nbits=8:dims=128"
    assert pq.name == "ivfpq-nlist64-nprobe8-m32-dims128"
    assert pq.words == "IVF-PQ nlist = 64, nprobe = 8, m = 32 at 128 dims"
    assert parse_index_spec("hnsw-sq8").name == "hnsw-sq8" and parse_index_spec("ivf:nprobe=2").value("nlist") == 64


def test_a_sweep_of_ef_shares_one_build_and_nprobe_is_only_a_search_setting() -> None:
    sweep = parse_index_specs([f"hnsw:m=16:ef={ef}" for ef in (16, 32, 64, 128)])
    assert len({s.build_key for s in sweep}) == 1 and len({s.name for s in sweep}) == 4
    assert parse_index_spec("ivf:nlist=64:nprobe=1").build_key == parse_index_spec("ivf:nprobe=9").build_key
    assert parse_index_spec("hnsw:m=16").build_key != parse_index_spec("hnsw:m=32").build_key


@pytest.mark.parametrize("text, said", [
    ("annoy:trees=10", "The index 'annoy:trees=10' names an unknown index type 'annoy': expected one of hnsw, "
                       "hnsw-sq8, ivf, ivfpq (for example hnsw:m=16:ef=32)."),
    ("hnsw:m=16:nprobe=4", "The index 'hnsw:m=16:nprobe=4' has an unknown parameter 'nprobe' for hnsw: expected m, "
                           "ef, efc or dims."),
    ("ivf:nlist=x", "The index 'ivf:nlist=x' needs a whole number of at least 1 for 'nlist', got 'x'."),
    ("hnsw:m=1", "The index 'hnsw:m=1' needs a whole number of at least 2 for 'm', got '1'."),
    ("ivf:nprobe=-3", "The index 'ivf:nprobe=-3' needs a whole number of at least 1 for 'nprobe', got '-3'."),
    ("hnsw:ef=8:ef=16", "The index 'hnsw:ef=8:ef=16' gives 'ef' twice: give it once."),
    ("hnsw:m16", "The index 'hnsw:m16' has 'm16' where a parameter name=value belongs (for example hnsw:m=16:ef=32)."),
    ("ivfpq:nbits=12", "The index 'ivfpq:nbits=12' needs nbits of at most 8 (one byte per code), got 12."),
    # hostile input, round three, item 5: faiss's OverflowError, or gigabytes before anything was said
    ("hnsw:ef=99999999999999999999999", "The index 'hnsw:ef=99999999999999999999999' needs ef of at most 4,096 "
                                        "(candidates per search; more is exact search done slowly), got a number of "
                                        "23 digits."),
    ("hnsw:ef=2000000000", "The index 'hnsw:ef=2000000000' needs ef of at most 4,096 (candidates per search; more "
                           "is exact search done slowly), got 2,000,000,000."),
    ("hnsw:m=400000", "The index 'hnsw:m=400000' needs m of at most 256 (links per doc; each takes 8 bytes of every "
                      "doc's memory), got 400,000."),
    ("hnsw-sq8:efc=5000", "The index 'hnsw-sq8:efc=5000' needs efc of at most 4,096 (candidates per search; more "
                          "is exact search done slowly), got 5,000."),
    ("ivf:nlist=70000", "The index 'ivf:nlist=70000' needs nlist of at most 65,536 (lists; each needs docs to fill "
                        "it), got 70,000."),
    ("ivf:nprobe=" + "9" * 5000, "needs nprobe of at most 65,536 (lists searched, of the nlist there are), got a "
                                 "number of 5,000 digits."),
    ("hnsw:dims=" + "9" * 30, "needs dims of at most the vectors' dimensions (the first D numbers of each vector), "
                              "got a number of 30 digits."),
    ("hnsw:ef=\u00b2", "The index 'hnsw:ef=\u00b2' needs a whole number of at least 1 for 'ef', got '\u00b2'."),
    ("hnsw:m=0000000000000000000001", "needs a whole number of at least 2 for 'm', got '0000000000000000000001'."),
])
def test_a_bad_spec_is_one_sentence(text: str, said: str) -> None:
    with pytest.raises(UsageError) as caught:
        parse_index_spec(text)
    assert str(caught.value).endswith(said) and len(str(caught.value)) < 400 and "\n" not in str(caught.value)


def test_each_parameters_range_is_declared_once_with_its_kind() -> None:
    ranges = {kind: {name: info.bound(name).words for name in info.names} for kind, info in KINDS.items()}
    assert ranges["hnsw"] == ranges["hnsw-sq8"] == {
        "m": "from 2 to 256", "ef": "from 1 to 4,096", "efc": "from 1 to 4,096",
        "dims": "from 1 to the vectors' dimensions"}
    assert ranges["ivfpq"] == {"nlist": "from 1 to 65,536 (and at most the number of docs)",
                               "nprobe": "from 1 to 65,536 (and at most nlist)", "m": "from 1 to the dimensions",
                               "nbits": "from 1 to 8", "dims": "from 1 to the vectors' dimensions"}
    top = parse_index_spec("hnsw:m=256:ef=4096:efc=4096")  # the ceilings themselves are taken
    assert top.as_dict() == {"m": 256, "ef": 4096, "efc": 4096}


def test_the_same_index_twice_in_other_words_is_refused() -> None:
    with pytest.raises(UsageError, match=r"The index 'hnsw:m=16:ef=32' is the same index as 'hnsw:ef=32' "
                                         r"\(hnsw:m=16:ef=32:efc=40\): give each index once\."):
        parse_index_specs(["hnsw:ef=32", "hnsw:m=16:ef=32"])


@pytest.mark.parametrize("text, docs, dims, said", [
    ("ivfpq:m=30", 503, 256, "The index 'ivfpq:m=30' splits each vector into m = 30 parts, which must divide its 256 "
                             "dimensions (for example 8, 16, 32, 64)."),
    ("ivfpq:m=7:dims=64", 503, 256, "must divide its 64 dimensions"),
    ("ivf:nlist=1024", 503, 256, "The index 'ivf:nlist=1024' has nlist = 1,024 lists, more than the 503 docs: use at "
                                 "most 503 (about 22, the square root of the docs, is usual)."),
    ("ivf:nlist=8:nprobe=9", 503, 256, "searches nprobe = 9 lists of its nlist = 8: use at most 8."),
    ("hnsw:dims=300", 503, 256, "keeps dims = 300 dimensions, more than the vectors' 256"),
    ("ivfpq:nlist=4:nprobe=2:m=8", 200, 64, "trains 256 codes per part (nbits = 8) from 200 docs: it needs at least "
                                            "256 docs (use a smaller nbits)"),
])
def test_what_needs_the_vectors_is_checked_against_them(text: str, docs: int, dims: int, said: str) -> None:
    spec = parse_index_spec(text)
    with pytest.raises(UsageError) as caught:
        spec.check(docs, dims)
    assert said in str(caught.value) and "\n" not in str(caught.value)
    parse_index_spec("ivfpq:nlist=4:nprobe=2:m=8:nbits=4").check(200, 64)  # 16 codes: enough docs
