"""The sample's chunking (sample_data/chunking/) as Python objects: three chunk maps, their runs, and the labels with
evidence spans, made without the chunk and span readers (built elsewhere), for the pages that show chunks."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pandas as pd

import evalcore
from evalcore.readers.chunks import chunk_map

CHUNKING = Path(__file__).resolve().parents[1] / "sample_data" / "chunking"
CHUNKINGS = ("sent1", "sent3", "char400")


def chunks(name: str):
    frame = pd.read_csv(CHUNKING / f"{name}.chunks.csv", dtype={"chunk_id": str, "doc_id": str})
    return chunk_map(frame["chunk_id"].tolist(), frame["doc_id"].tolist(), start=frame["start"].to_numpy(),
                     end=frame["end"].to_numpy(), text=frame["text"].tolist(), name=name)


def labels():
    """The chunking labels with their evidence spans (several rows per judged pair: one judgment, several spans)."""
    frame = pd.read_csv(CHUNKING / "labels.tsv", sep="\t", dtype=str)
    plain = frame.drop(columns=["start", "end"]).drop_duplicates(["query", "doc_id"])
    read = evalcore.read_labels(plain, name="chunking")
    spans = frame.dropna(subset=["start"])[["query", "doc_id", "start", "end"]].astype(
        {"start": "int64", "end": "int64"}).reset_index(drop=True)
    return dataclasses.replace(read, spans=spans)


def evaluation(names=CHUNKINGS, ks=(1, 5, 10)):
    runs = [evalcore.read_run(CHUNKING / f"{n}.trec", name=n) for n in names]
    return evalcore.evaluate_runs(runs, labels(), ks, chunks={n: chunks(n) for n in names})
