"""The chunking part of the sample data: ``sample_data/chunking/``, written by make_sample_data.py.

A RAG pipeline retrieves chunks, not documents, and the meeting's question is which chunking and how many chunks
for how many prompt tokens. This module cuts the 503 sample documents three ways and retrieves from each:

* ``sent1.chunks.csv``: one sentence per chunk (ids ``billing-invoices-01#s3``);
* ``sent3.chunks.csv``: three consecutive sentences, not overlapping (``...#s4-6``; a document's last chunk may
  hold fewer);
* ``char400.chunks.csv``: 400-character windows stepping 300, so neighbours share 100 characters and words are
  cut where the window falls (``...#w2``); a document's last window ends at its end. The documents have 256 to
  749 characters (mean 460): most get two windows, those of up to 400 characters one, so these chunks are about
  1.4 times the size of sent3's and the same k costs more prompt.

Each map has the header ``chunk_id,doc_id,start,end,text`` with ``text == doc_text[start:end]`` (0-based, end
exclusive). Sentences end at ``.``, ``!`` or ``?`` followed by white space and a capital letter or digit (the
sample's button "Forgot password?" is followed by a lower-case word and stays inside its sentence).

``labels.tsv`` is ``sample_data/labels.tsv`` with ``start`` and ``end`` added: the evidence, which the generator
knows from how it wrote each document. A facet article's evidence is its hand-written paragraph; a generic
article's is the sentences of its lead and detail sentences that carry the topic's own facts (its path, button,
role, plan, limit, error message, endpoint, ...), so "Setting up invoices takes a few minutes." is not evidence
and the next sentence "Go to Admin Console > Billing > Invoices and select Download PDF to get started." is.
Adjacent evidence sentences form one span; a fact sentence after a generic one starts a second span.

The runs (``NAME.trec``, 100 chunks per query, tag = chunking name) come from one deterministic retriever: the
tuned model's features (same words, synonyms and speller as the tuned document run) embedded per chunk, with the
document title as a light heading, scored by cosine against the query, mixed with a share of the tuned model's
similarity to the whole document that grows with the chunk's share of its document (a short chunk carries little
of its document's context), plus a seeded relative error that is larger for shorter chunks (a short text's
embedding is less reliable). One-sentence chunks match the query's words precisely but lose the sentences around
them: at the same prompt budget they reach more documents and less of the evidence. Large chunks carry the
evidence and cost tokens.
"""

from __future__ import annotations

import csv
import io
import re
from pathlib import Path
from typing import Callable, NamedTuple

import numpy as np
import pandas as pd

WINDOW_SIZE = 400
WINDOW_STEP = 300
CHUNKINGS = ("sent1", "sent3", f"char{WINDOW_SIZE}")
"""The chunkings, in the order they are written and summarised."""

RETRIEVER = dict(title=0.5, doc_weight=0.6, noise=0.1, noise_len=200)
"""title: weight of the document title in each chunk's features (a heading the pipeline prepends; the tuned
document model counts titles 3.0); doc_weight: the tuned document similarity's share in a chunk's score when the
chunk is the whole document (scaled by the chunk's share of its document's characters); noise: sd of the seeded
relative error on the score of a noise_len-character chunk, times sqrt(noise_len / chunk characters) for others.
Tuned by hand so that the independent check below tells the intended story."""

CHECK_KS = (1, 3, 5, 10)
MAX_K = 30
BUDGETS = (300, 600)
"""Token budgets of the check's last lines: each chunking at its largest k whose mean prompt stays within."""
FRAGMENT_K = 5
FRAGMENT_SHARE = 0.5
"""A query is a fragment at k when a relevant document is found in its top k chunks but under half of its
evidence characters are inside them."""


class TunedModel(NamedTuple):
    """What the chunked runs borrow from the tuned document model: its query x document similarities and query
    features (queries in one order), and its features of a text (doc side: no synonyms, no speller)."""
    doc_scores: np.ndarray
    query_features: list[dict]
    featurize: Callable[[str], dict]


_SENTENCE_BREAK = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9])")


# --------------------------------------------------------------------------------------------------------------
# Chunk maps
# --------------------------------------------------------------------------------------------------------------
def sentence_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) of each sentence of text, without the white space between sentences."""
    spans, start = [], 0
    for m in _SENTENCE_BREAK.finditer(text):
        spans.append((start, m.start()))
        start = m.end()
    spans.append((start, len(text)))
    return spans


def sentence_chunks(doc_id: str, text: str, per_chunk: int) -> list[tuple[str, int, int]]:
    """(chunk_id, start, end) of consecutive groups of per_chunk sentences: ids #s3 (one sentence) or #s4-6."""
    spans = sentence_spans(text)
    out = []
    for i in range(0, len(spans), per_chunk):
        group = spans[i:i + per_chunk]
        first, last = i + 1, i + len(group)
        suffix = f"s{first}" if first == last else f"s{first}-{last}"
        out.append((f"{doc_id}#{suffix}", group[0][0], group[-1][1]))
    return out


def window_chunks(doc_id: str, text: str, size: int, step: int) -> list[tuple[str, int, int]]:
    """(chunk_id, start, end) of size-character windows every step characters, the last one ending at the end."""
    n = 1 + max(0, -(-(len(text) - size) // step))
    return [(f"{doc_id}#w{i + 1}", i * step, min(i * step + size, len(text))) for i in range(n)]


def chunk_maps(docs: list[dict]) -> dict[str, pd.DataFrame]:
    """name -> chunk map (chunk_id, doc_id, start, end, text), documents in corpus order."""
    cutters: dict[str, Callable[[str, str], list]] = {
        "sent1": lambda d, t: sentence_chunks(d, t, 1),
        "sent3": lambda d, t: sentence_chunks(d, t, 3),
        CHUNKINGS[2]: lambda d, t: window_chunks(d, t, WINDOW_SIZE, WINDOW_STEP),
    }
    maps = {}
    for name in CHUNKINGS:
        rows = [(cid, doc["doc_id"], s, e, doc["text"][s:e])
                for doc in docs for cid, s, e in cutters[name](doc["doc_id"], doc["text"])]
        maps[name] = pd.DataFrame(rows, columns=["chunk_id", "doc_id", "start", "end", "text"])
    return maps


# --------------------------------------------------------------------------------------------------------------
# Evidence spans
# --------------------------------------------------------------------------------------------------------------
def evidence_spans(parts: list[tuple[str, str]], facts: list[str]) -> list[tuple[int, int]]:
    """(start, end) of the evidence in the text " ".join(pieces of parts): the whole of a "facet" piece, and the
    sentences of "lead" and "detail" pieces that contain one of the topic's facts (a fact of several sentences
    counts sentence by sentence); adjacent evidence sentences merged into one span."""
    fact_sentences = [f[s:e].casefold() for f in facts for s, e in sentence_spans(f) if e > s]
    spans: list[tuple[int, int]] = []
    offset = 0
    for role, piece in parts:
        for s, e in sentence_spans(piece):
            sentence = piece[s:e].casefold()
            if role == "facet" or (role in ("lead", "detail") and any(f in sentence for f in fact_sentences)):
                start, end = offset + s, offset + e
                if spans and start - spans[-1][1] <= 1:
                    spans[-1] = (spans[-1][0], end)
                else:
                    spans.append((start, end))
        offset += len(piece) + 1
    return spans


# --------------------------------------------------------------------------------------------------------------
# Retrieval
# --------------------------------------------------------------------------------------------------------------
def _idf(feature_dicts: list[dict]) -> tuple[dict, float]:
    n = len(feature_dicts)
    df: dict = {}
    for feats in feature_dicts:
        for f in feats:
            df[f] = df.get(f, 0) + 1
    return {f: float(np.log((n + 1) / (d + 1)) + 1.0) for f, d in df.items()}, float(np.log(n + 1) + 1.0)


def cosine_to_chunks(chunk_features: list[dict], query_features: list[dict]) -> np.ndarray:
    """queries x chunks cosine of IDF-weighted features (sublinear term counts on the chunk side, as the document
    model), with exact features kept in posting lists instead of hashed into a dense matrix."""
    idf, default_idf = _idf(chunk_features)
    column: dict = {}
    rows, cols, vals = [], [], []
    for r, feats in enumerate(chunk_features):
        keys = sorted(feats)
        w = np.array([feats[f] for f in keys])
        w = np.where(w >= 1, 1.0 + np.log(np.maximum(w, 1.0)), w) * np.array([idf[f] for f in keys])
        w = w / np.sqrt((w * w).sum())
        rows += [r] * len(keys)
        cols += [column.setdefault(f, len(column)) for f in keys]
        vals += list(w)
    rows_a, cols_a, vals_a = np.array(rows), np.array(cols), np.array(vals)
    order = np.argsort(cols_a, kind="stable")
    rows_a, vals_a = rows_a[order], vals_a[order]
    starts = np.searchsorted(cols_a[order], np.arange(len(column) + 1))
    out = np.zeros((len(query_features), len(chunk_features)))
    for q, feats in enumerate(query_features):
        keys = sorted(feats)
        w = np.array([feats[f] * idf.get(f, default_idf) for f in keys])
        norm = np.sqrt((w * w).sum())
        if norm == 0:
            continue
        for f, wf in zip(keys, w / norm):
            j = column.get(f)
            if j is not None:
                out[q, rows_a[starts[j]:starts[j + 1]]] += wf * vals_a[starts[j]:starts[j + 1]]
    return out


def chunk_run_scores(chunk_map: pd.DataFrame, docs: list[dict], model: TunedModel) -> np.ndarray:
    """queries x chunks scores before noise: the chunk's own cosine mixed with the tuned document similarity of
    its document, the document's share growing with the chunk's share of the document's characters."""
    doc_row = {d["doc_id"]: i for i, d in enumerate(docs)}
    titles = {d["doc_id"]: model.featurize(d["title"]) for d in docs}
    feats = []
    for doc_id, text in zip(chunk_map["doc_id"], chunk_map["text"]):
        f = dict(model.featurize(text))
        for k, w in titles[doc_id].items():
            f[k] = f.get(k, 0.0) + RETRIEVER["title"] * w
        feats.append(f)
    own = cosine_to_chunks(feats, model.query_features)
    idx = chunk_map["doc_id"].map(doc_row).to_numpy()
    doc_len = np.array([len(docs[i]["text"]) for i in idx])
    share = RETRIEVER["doc_weight"] * (chunk_map["end"] - chunk_map["start"]).to_numpy() / doc_len
    return (1.0 - share) * own + share * model.doc_scores[:, idx]


# --------------------------------------------------------------------------------------------------------------
# Writers
# --------------------------------------------------------------------------------------------------------------
def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8", newline="\n") as fh:
        fh.write(text)


def _csv_text(frame: pd.DataFrame) -> str:
    sink = io.StringIO()
    writer = csv.writer(sink, lineterminator="\n")
    writer.writerow(frame.columns)
    writer.writerows(frame.itertuples(index=False))
    return sink.getvalue()


def labels_with_spans(labels_text: str, spans: dict[str, list[tuple[int, int]]]) -> str:
    """labels.tsv text with start and end columns: a relevant row once per evidence span of its document, a
    grade-0 row once with both empty."""
    lines = labels_text.splitlines()
    header = lines[0].split("\t")
    doc_col, grade_col = header.index("doc_id"), header.index("grade")
    out = [lines[0] + "\tstart\tend\n"]
    for line in lines[1:]:
        fields = line.split("\t")
        if int(fields[grade_col]) >= 1:
            if not spans[fields[doc_col]]:
                raise ValueError(f"relevant document {fields[doc_col]} has no evidence sentence")
            out += [f"{line}\t{s}\t{e}\n" for s, e in spans[fields[doc_col]]]
        else:
            out.append(f"{line}\t\t\n")
    return "".join(out)


def write_chunking(out: Path, docs: list[dict], queries: list[dict], doc_facts: dict[str, list[str]],
                   model: TunedModel, rank_top: Callable, seed: int) -> None:
    """Write out/chunking/ beside out/labels.tsv: the chunk maps, one run per chunking, and labels.tsv with
    evidence spans.

    docs carry their parts (see evidence_spans), doc_facts their topic's facts; queries are in the order of the
    model's rows; rank_top(scores, noise, rng) returns per query the top 100 as (chunk indices, distinct
    descending scores)."""
    folder = out / "chunking"
    maps = chunk_maps(docs)
    order = sorted(range(len(queries)), key=lambda i: queries[i]["qid"])
    for n, name in enumerate(CHUNKINGS):
        chunk_map = maps[name]
        _write(folder / f"{name}.chunks.csv", _csv_text(chunk_map))
        scores = chunk_run_scores(chunk_map, docs, model)
        rng = np.random.default_rng([seed, 20 + n])
        length = (chunk_map["end"] - chunk_map["start"]).to_numpy()
        sd = RETRIEVER["noise"] * np.sqrt(RETRIEVER["noise_len"] / length)
        scores = scores * (1.0 + sd * rng.standard_normal(scores.shape))
        ranked = rank_top(scores, 0.0, rng)
        ids = chunk_map["chunk_id"].to_numpy()
        _write(folder / f"{name}.trec", "".join(
            f"{queries[i]['qid']} Q0 {ids[j]} {r} {s:.6f} {name}\n"
            for i in order for r, (j, s) in enumerate(zip(*ranked[i]), start=1)))
    spans = {d["doc_id"]: evidence_spans(d["parts"], doc_facts[d["doc_id"]]) for d in docs}
    labels_text = (out / "labels.tsv").read_text(encoding="utf-8")
    _write(folder / "labels.tsv", labels_with_spans(labels_text, spans))


# --------------------------------------------------------------------------------------------------------------
# Independent check: plain pandas and Python sets over the written files
# --------------------------------------------------------------------------------------------------------------
def _read_labels(folder: Path) -> tuple[dict, dict]:
    """query -> its relevant doc ids, and query -> its evidence as a set of (doc_id, character position)."""
    labels = pd.read_csv(folder / "labels.tsv", sep="\t", dtype=str, keep_default_na=False)
    relevant = labels[labels["grade"].astype(int) >= 1]
    rel_docs = relevant.groupby("query")["doc_id"].apply(set).to_dict()
    evidence: dict = {}
    for q, d, s, e in zip(relevant["query"], relevant["doc_id"], relevant["start"], relevant["end"]):
        evidence.setdefault(q, set()).update((d, i) for i in range(int(s), int(e)))
    return rel_docs, evidence


def _per_query_curves(folder: Path, name: str, rel_docs: dict, evidence: dict) -> tuple[pd.Series, np.ndarray]:
    """The chunk lengths, and per query (rows, sorted by id) and k = 1..MAX_K (columns): document recall, prompt
    characters and evidence recall of the top k chunks, as an array of shape (3, queries, MAX_K)."""
    chunks = pd.read_csv(folder / f"{name}.chunks.csv", dtype={"text": str}, keep_default_na=False)
    where = {c: (d, int(s), int(e)) for c, d, s, e in zip(chunks["chunk_id"], chunks["doc_id"], chunks["start"],
                                                          chunks["end"])}
    run = pd.read_csv(folder / f"{name}.trec", sep=" ", header=None, dtype=str,
                      names=["query", "q0", "chunk_id", "rank", "score", "tag"])
    run["score"] = run["score"].astype(float)
    run = run.sort_values(["query", "score", "chunk_id"], ascending=[True, False, False])  # evalcore's order
    ranked = run.groupby("query")["chunk_id"].apply(list).to_dict()
    curves = np.zeros((3, len(rel_docs), MAX_K))
    for row, q in enumerate(sorted(rel_docs)):
        found: set = set()
        covered: set = set()
        chars = 0
        for k, chunk_id in enumerate(ranked.get(q, [])[:MAX_K]):
            doc_id, start, end = where[chunk_id]
            found |= {doc_id} & rel_docs[q]
            covered |= {(doc_id, i) for i in range(start, end)}
            chars += end - start
            curves[:, row, k] = (len(found) / len(rel_docs[q]), chars, len(evidence[q] & covered) / len(evidence[q]))
    return chunks["text"].str.len(), curves


def summarize_chunking(out: Path) -> str:
    """Per chunking: chunk length; at k = 1, 3, 5, 10 chunks, recall@k of documents (a document counts once),
    the mean prompt characters of the top k and evidence recall@k (share of the query's evidence characters
    inside the union of the top k chunks); the queries that are fragments at k = 5; and each chunking at its
    largest k whose mean prompt stays within a token budget (tokens: characters / 4)."""
    folder = out / "chunking"
    rel_docs, evidence = _read_labels(folder)
    sizes = [f"{'chunking':<9} {'chunks':>6} {'chars/chunk':>11} {'~tokens':>7}"]
    table = [f"{'chunking':<9} {'k':>3} {'doc r@k':>8} {'prompt chars':>12} {'~tokens':>7} {'evidence r@k':>12}"]
    fragments, budgets = [], {b: [] for b in BUDGETS}
    for name in CHUNKINGS:
        length, curves = _per_query_curves(folder, name, rel_docs, evidence)
        sizes.append(f"{name:<9} {len(length):>6} {length.mean():>11.1f} {length.mean() / 4:>7.1f}")
        recall, chars, ev = curves.mean(axis=1)
        for k in CHECK_KS:
            table.append(f"{name:<9} {k:>3} {recall[k - 1]:>8.4f} {chars[k - 1]:>12.0f} {chars[k - 1] / 4:>7.0f} "
                         f"{ev[k - 1]:>12.4f}")
        found, ev_share = curves[0, :, FRAGMENT_K - 1], curves[2, :, FRAGMENT_K - 1]
        fragments.append(f"{name} {int(((found > 0) & (ev_share < FRAGMENT_SHARE)).sum())}")
        for budget in BUDGETS:
            k = int((chars / 4 <= budget).sum())
            budgets[budget].append(f"{name} k = {k} ({chars[k - 1] / 4:.0f}): {recall[k - 1]:.4f} / {ev[k - 1]:.4f}"
                                   if k else f"{name} none")
    lines = sizes + [""] + table + ["", f"fragments@{FRAGMENT_K} (of {len(rel_docs)} queries): " + ", ".join(fragments)]
    lines += [f"within {b} tokens, doc r / evidence r: " + "; ".join(budgets[b]) for b in BUDGETS]
    return "\n".join(lines)
