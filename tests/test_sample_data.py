"""The committed sample data is what the script makes: running scripts/make_sample_data.py writes every
file in sample_data/ byte for byte, and nothing else. sample_data/README.md is written by hand, not by
the script. The script takes several seconds (about 9 s of CPU). The chunking sample (sample_data/chunking/)
is consistent with the documents: chunk texts are slices of them, runs name mapped chunks, and every relevant
judgment carries an evidence span inside its document."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "make_sample_data.py"
SAMPLE = ROOT / "sample_data"
HAND_WRITTEN = {"README.md"}


def files_under(folder: Path) -> list[str]:
    return sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file())


def test_script_reproduces_sample_data(tmp_path) -> None:
    out = tmp_path / "sample_data"
    done = subprocess.run([sys.executable, str(SCRIPT), "--out", str(out)], cwd=tmp_path, check=False,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, f"make_sample_data.py failed:\n{done.stderr}"
    committed = [f for f in files_under(SAMPLE) if f not in HAND_WRITTEN]
    written = files_under(out)
    assert "seed_example/labels.json" in committed
    extra = [f for f in written if f not in committed]
    assert not extra, f"the script wrote files sample_data/ lacks: {extra}"
    missing = [f for f in committed if f not in written]
    assert not missing, f"the script did not write sample_data/{missing[0]} (and {len(missing) - 1} more)"
    differing = [f for f in committed if (out / f).read_bytes() != (SAMPLE / f).read_bytes()]
    assert not differing, (f"sample_data/{differing[0]} differs from what the script writes "
                           f"({len(differing)} file(s) differ: {differing}); rerun scripts/make_sample_data.py")


CHUNKING = SAMPLE / "chunking"
CHUNKINGS = ("sent1", "sent3", "char400")


def read_table(path: Path, sep: str = ",") -> pd.DataFrame:
    return pd.read_csv(path, sep=sep, dtype=str, keep_default_na=False)


def test_chunk_maps_and_chunk_runs_agree_with_the_documents() -> None:
    """Each chunk's text is its document's text between start and end, ids are distinct, the chunks together
    leave no word of a document out, and every chunk a run names is in its map (100 per query, tag = name)."""
    texts = {}
    for line in (SAMPLE / "docs.jsonl").read_text(encoding="utf-8").splitlines():
        doc = json.loads(line)
        texts[doc["doc_id"]] = doc["text"]
    queries = set(read_table(SAMPLE / "labels.tsv", sep="\t")["query"])
    for name in CHUNKINGS:
        chunks = read_table(CHUNKING / f"{name}.chunks.csv")
        assert list(chunks.columns) == ["chunk_id", "doc_id", "start", "end", "text"], name
        assert chunks["chunk_id"].is_unique, f"{name}: a chunk id is listed twice"
        covered = {doc_id: [False] * len(text) for doc_id, text in texts.items()}
        for chunk_id, doc_id, start, end, text in chunks.itertuples(index=False):
            s, e = int(start), int(end)
            assert 0 <= s < e <= len(texts[doc_id]), f"{name}: {chunk_id} has offsets {s}..{e} outside its document"
            assert text == texts[doc_id][s:e], f"{name}: {chunk_id}'s text is not its document's text[{s}:{e}]"
            covered[doc_id][s:e] = [True] * (e - s)
        for doc_id, flags in covered.items():
            left_out = [i for i, flag in enumerate(flags) if not flag and not texts[doc_id][i].isspace()]
            assert not left_out, f"{name}: {doc_id} character {left_out[0]} is in no chunk"
        run = pd.read_csv(CHUNKING / f"{name}.trec", sep=" ", header=None, dtype=str,
                          names=["query", "q0", "chunk_id", "rank", "score", "tag"])
        unknown = sorted(set(run["chunk_id"]) - set(chunks["chunk_id"]))
        assert not unknown, f"{name}.trec names {len(unknown)} chunks its map lacks, e.g. {unknown[0]}"
        assert set(run["tag"]) == {name}
        assert set(run["query"]) == queries and (run.groupby("query").size() == 100).all()


def test_evidence_spans_sit_inside_every_relevant_document() -> None:
    """chunking/labels.tsv holds sample_data/labels.tsv's judgments unchanged, every relevant judgment with at
    least one evidence span start < end within its document's text, and grade-0 rows without a span."""
    lengths = {}
    for line in (SAMPLE / "docs.jsonl").read_text(encoding="utf-8").splitlines():
        doc = json.loads(line)
        lengths[doc["doc_id"]] = len(doc["text"])
    labels = read_table(SAMPLE / "labels.tsv", sep="\t")
    spans = read_table(CHUNKING / "labels.tsv", sep="\t")
    assert list(spans.columns) == list(labels.columns) + ["start", "end"]
    judgments = spans[list(labels.columns)].drop_duplicates().reset_index(drop=True)
    pd.testing.assert_frame_equal(judgments, labels)
    relevant = spans[spans["grade"].astype(int) >= 1]
    for query, doc_id, start, end in zip(relevant["query"], relevant["doc_id"], relevant["start"], relevant["end"]):
        assert start.isdigit() and end.isdigit() and 0 <= int(start) < int(end) <= lengths[doc_id], (
            f"{query} {doc_id}: evidence span {start!r}..{end!r} is not inside the document's text")
    unjudged = spans[spans["grade"] == "0"]
    assert (unjudged["start"] == "").all() and (unjudged["end"] == "").all()
    grades = relevant.groupby(["query", "doc_id"])["grade"].nunique()
    assert (grades == 1).all(), "one (query, document) has spans with different grades"
