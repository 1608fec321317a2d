#!/usr/bin/env python3
"""Generate the committed sample dataset in ``sample_data/``.

The data describes "Kestrel", a fictional team-chat SaaS product:

* ``docs.jsonl``      -- ~500 documentation chunks (doc_id, title, text);
* ``labels.tsv``      -- 320 labeled queries with graded judgments and per-query
                         fields (query_text, source, blind, split);
* ``base.trec``, ``tuned.trec``, ``tuned-256d.trec`` -- three ranked runs (top 100
                         per query) plus ``*.meta.json`` sidecars;
* ``seed_example/``   -- the seed example from the docs (the README's Python example)
                         as JSON files;
* ``vectors/``        -- the three models' dense vectors (see make_vectors);
* ``chunking/``       -- the same docs chunked three ways, a run per chunking and the
                         labels with evidence spans (written by sample_chunking.py beside
                         this script, which describes them);
* ``answers/``        -- an LLM judge's grades of the answers written from the base and
                         tuned runs' top 5 chunks, as DeepEval saves them (written by
                         sample_answers.py beside this script, which describes them);
* ``logs/``           -- a month of the help centre's searches and clicks as OpenSearch UBI
                         writes them (written by sample_log.py beside this script).

The runs come from a real (if tiny) retrieval mechanism, not from random numbers.
Every text becomes a hashed, IDF-weighted bag of features (stemmed words, word
bigrams, character 3/4-grams, the chunk title counted extra) and docs are ranked by
cosine similarity to the query:

* ``base``: a general-purpose model.  Mostly words; knows everyday English synonyms
  (max -> maximum, broken -> not working) but not the product's customer jargon,
  abbreviations or misspellings; weighs headings little; each similarity carries a
  9 % seeded relative error (a less precise model).
* ``tuned``: the same plus what tuning on customer queries taught it: a synonym table
  for the product's jargon (covering 60 % of it), a speller that maps unknown words
  to the closest doc word by character trigrams, and more weight on headings.
* ``tuned-256d``: ``tuned`` squeezed into 256 dimensions by a seeded Gaussian random
  projection (of the tuned vectors written in the basis of the doc span), plus a 7 %
  relative error: close calls between similar chunks start to flip.

The topic data -- the product's docs facts, sentence and query templates, customer
vocabulary, abbreviations and typos -- is in ``sample_topics.json`` beside this script
(its fields are described in the comments below).  The constants in this script (PARAMS
and the query-mix shares) were tuned by hand so that the printed summary tells the
intended story.

Deterministic: fixed seeds, no network, stdlib + numpy + pandas; similarities are plain
elementwise sums rather than BLAS matrix products.  Running it twice gives
byte-identical files (another platform or numpy build could still change a last digit,
e.g. through the one LAPACK eigen-decomposition behind tuned-256d);
tests/test_sample_data.py checks that it reproduces sample_data/.  Usage::

    python scripts/make_sample_data.py            # writes sample_data/
    python scripts/make_sample_data.py --out DIR  # writes somewhere else
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import re
from pathlib import Path

import numpy as np
import pandas as pd

from sample_answers import summarize_answers, write_answers
from sample_log import summarize_log, write_log
from sample_chunking import TunedModel, summarize_chunking, write_chunking

SEED = 20240611
N_QUERIES = 320
TOP_K = 100

# --------------------------------------------------------------------------------------
# Corpus content: the topic data, read from sample_topics.json beside this script
# --------------------------------------------------------------------------------------
# Each topic becomes one chunk per generic "aspect" (overview, set up, permissions, ...)
# plus one chunk per hand-written "facet".
#
# Topic fields ("topics" in the data file):
#   area, slug   -> doc ids "{area}-{slug}-NN"
#   title        -> article title
#   feat / Feat  -> how the docs name the feature (lower / sentence case); plural: verb agreement
#   tq           -> the phrase the docs team uses for it in queries
#   obj          -> the thing counted in limits
#   purpose      -> what the feature lets you do (infinitive clause)
#   path, button -> where it is configured in the UI
#   role, plan, endpoint, scope, event
#   limit, error, mobile, notify_when, notify_who, off_effect -> topic-specific sentences
#   cust         -> customer words for the topic -> the doc words they mean
#   general      -> sentences that may appear in any chunk of the topic
#   facets       -> {key, paragraphs (the chunk text is the first), team_queries,
#                   customer_queries, also (["area-slug", facet or aspect key] of other
#                   chunks that answer them too)}; loaded as (key, paragraphs, team
#                   queries, customer queries, [(area-slug, key), ...])
#   skip         -> generic aspects that do not make sense for this topic
# Fields a topic leaves out get the defaults in _topic below.
#
# The rest of the data file:
#   toggles         -> topics an admin switches on and off (the others are processes or
#                      objects, whose "set up" and "turn off" articles read as "getting
#                      started" and "cancelling and undoing")
#   short           -> short names customers use for each topic that are also the docs' words
#   cust_nouns      -> how customers name each topic in their own words (used by templated
#                      customer queries; the tuned model's synonym table maps them back to
#                      the short names)
#   facet_synonyms  -> customer phrasings in the hand-written facet queries -> the docs' words
#   aspects         -> the generic aspects (doc side): title, lead and detail sentence
#                      templates, and an "alt" version for topics that are not toggles;
#                      {slots} are filled from the topic; their order is the article order
#   generic_filler  -> sentences that can appear in any chunk (product-wide boilerplate)
#   team_q          -> query templates per aspect in the docs team's words
#   cust_q, ticket_q -> customer phrasings per aspect (search box, support ticket): using
#                      the docs' words ("docs_words") or customers' own words ("own_words")
#   aspect_synonyms -> customer words for aspects -> the doc words they mean (the tuned
#                      model's synonym table is built from these plus the topics' `cust`
#                      tables and abbrev)
#   abbrev          -> word -> search-box abbreviation
#   stopwords       -> filler words dropped from search-box queries
#   known_typos     -> realistic misspellings seen in search logs; other words get a random edit
#
# Order matters: topics, list items and object keys feed seeded draws and ordered merges,
# so reordering the data file changes sample_data/.
DATA_FILE = Path(__file__).resolve().parent / "sample_topics.json"


def _topic(kw, toggles):
    """A topic as read from the data file, with its defaults filled in and facets as tuples."""
    kw = dict(kw)
    kw["facets"] = [(f["key"], f["paragraphs"], f["team_queries"], f["customer_queries"],
                     [tuple(a) for a in f["also"]]) for f in kw["facets"]]
    kw.setdefault("plural", False)
    kw.setdefault("skip", [])
    kw.setdefault("toggle", f"{kw['area']}-{kw['slug']}" in toggles)
    kw.setdefault("role", "Workspace Admin")
    kw.setdefault("plan", "all plans, including Free")
    kw.setdefault("scope", f"{kw['area']}:{kw['slug'].split('-')[0]}:write")
    kw.setdefault("event", f"{kw['slug'].replace('-', '_')}.updated")
    kw.setdefault("notify_who", "the Workspace Owner and all Workspace Admins")
    kw.setdefault("off_effect", "Turning it off does not delete existing data; it only stops new activity.")
    return kw


def load_topic_data(path=DATA_FILE):
    """Read the data file; its lists become the sets and tuples the code below uses."""
    with open(path, encoding="utf-8") as fh:
        data = json.load(fh)
    data["toggles"] = set(data["toggles"])
    data["topics"] = [_topic(t, data["toggles"]) for t in data["topics"]]
    for name in ("cust_q", "ticket_q"):
        data[name] = {a: (v["docs_words"], v["own_words"]) for a, v in data[name].items()}
    data["stopwords"] = set(data["stopwords"])
    return data


_DATA = load_topic_data()
T = _DATA["topics"]
TOGGLES = _DATA["toggles"]
SHORT = _DATA["short"]
CUST_NOUNS = _DATA["cust_nouns"]
FACET_SYNONYMS = _DATA["facet_synonyms"]
ASPECTS = _DATA["aspects"]
ASPECT_ORDER = list(ASPECTS)
GENERIC_FILLER = _DATA["generic_filler"]
TEAM_Q = _DATA["team_q"]
CUST_Q = _DATA["cust_q"]
TICKET_Q = _DATA["ticket_q"]
ASPECT_SYNONYMS = _DATA["aspect_synonyms"]
ABBREV = _DATA["abbrev"]
STOPWORDS = _DATA["stopwords"]
KNOWN_TYPOS = _DATA["known_typos"]

# ----------------------------------------------------------------------------------------
# Retrieval model parameters (tuned by hand; see the printed summary)
# ----------------------------------------------------------------------------------------
# Corpus shape: generic-aspect detail sentences, topic-wide sentences and product-wide
# filler per chunk (shared sentences make sibling chunks harder to tell apart).
DETAIL_RANGE = (1, 3)
GENERAL_RANGE = (1, 3)
P_FILLER = 0.35

# Retrieval models.  word / bigram / char: feature weights; title: extra weight of the
# chunk title; synonyms: which table ("general" English or the "domain" jargon too);
# spell: trigram similarity needed to correct an unknown query word (None: no speller);
# noise: sd of the seeded relative error on each similarity.  The sidecar "dims"
# (768 / 1536 / 256) are the simulated models' nominal sizes; features are hashed into
# one sparse HASH_DIMS space and only tuned-256d is really reduced, to dims=256.
HASH_DIMS = 1 << 15
PARAMS = dict(
    base=dict(word=1.0, bigram=0.3, char=0.25, title=1.5, stem=True, synonyms="general", syn_weight=1.0,
              spell=None, noise=0.09),
    tuned=dict(word=1.0, bigram=0.4, char=0.2, title=3.0, stem=True, synonyms="domain", syn_weight=1.0,
               spell=0.3, noise=0.0),
    tuned_256=dict(dims=256, noise=0.07),
)
SYNONYM_COVERAGE = 0.6  # share of the product-jargon entries the tuned model "learned"
SYN_MAX_DF = 8         # synonym tables only cover words found in fewer chunks than this

# The topic's own facts: a lead or detail sentence containing one of them is evidence for the chunking sample
# (sample_chunking.py); the sentences around them are context.
FACT_SLOTS = ("purpose", "path", "button", "role", "plan", "endpoint", "scope", "event", "limit", "error", "mobile",
              "notify_when", "notify_who", "off_effect")

# Query mix.
N_FACET_TEAM = 36      # team-written queries taken from the hand-written facet lists
N_FACET_CUST = 40      # customer queries taken from the hand-written facet lists
P_ASPECT_DOC_WORDS = 0.8  # templated customer queries: share phrasing the aspect in the docs' words
P_CUSTOMER_WORD = 0.05  # templated customer queries: share naming the topic in their own words
P_TYPO_LONGEST = 0.35  # failed searches: share misspelling the longest word
P_OVERVIEW_RELEVANT = 0.4  # queries with a linked article: share where the topic overview also answers
P_THIRD_RELEVANT = 0.5   # of those set-up queries: share where the plan-availability article answers too
P_SIBLING_RELEVANT = 0.5  # set-up / turn-off / limits queries: share where a sibling article also answers


# ----------------------------------------------------------------------------------------
# Corpus
# ----------------------------------------------------------------------------------------
def _slots(t):
    plural = t["plural"]
    return dict(
        feat=t["feat"], Feat=t["Feat"], tq=t["tq"], purpose=t["purpose"], path=t["path"],
        button=t["button"], role=t["role"], plan=t["plan"], endpoint=t["endpoint"],
        scope=t["scope"], event=t["event"], limit=t["limit"], error=t["error"],
        mobile=t["mobile"], notify_when=t["notify_when"], notify_who=t["notify_who"],
        off_effect=t["off_effect"], obj=t["obj"],
        **{"is": "are" if plural else "is", "works": "work" if plural else "works",
           "it": "they" if plural else "it"},
    )


def _cap(s):
    return s[0].upper() + s[1:] if s else s


def _words(s):
    return len(s.split())


def build_corpus(rng):
    """Return a list of chunk dicts: doc_id, title, text, topic index, kind, key, and parts: the text's pieces in
    order as (role, text), role "lead" / "detail" (of a generic aspect), "facet" (a hand-written paragraph) or
    "context" (topic-wide and product-wide sentences); the text is the pieces joined by single spaces."""
    chunks = []
    for ti, t in enumerate(T):
        slots = _slots(t)
        prefix = f"{t['area']}-{t['slug']}"
        aspects = [a for a in ASPECT_ORDER if a not in t["skip"]]
        # logical article order: overview and set up first, then facets, then the rest
        plan = [("aspect", a) for a in aspects[:2]]
        plan += [("facet", f[0]) for f in t["facets"]]
        plan += [("aspect", a) for a in aspects[2:]]
        facets = {f[0]: f for f in t["facets"]}
        for n, (kind, key) in enumerate(plan, start=1):
            general = list(t["general"])
            rng.shuffle(general)
            if kind == "aspect":
                spec = ASPECTS[key]
                if not t["toggle"] and "alt" in spec:
                    spec = spec["alt"]
                lead = spec["lead"][rng.integers(len(spec["lead"]))].format(**slots)
                n_det = int(rng.integers(DETAIL_RANGE[0], DETAIL_RANGE[1] + 1))
                det_idx = sorted(rng.choice(len(spec["detail"]), size=min(n_det, len(spec["detail"])), replace=False))
                body = [lead] + [spec["detail"][i].format(**slots) for i in det_idx]
                roles = ["lead"] + ["detail"] * len(det_idx)
                title = f"{t['title']}: {spec['title'].lower()}"
            else:
                f = facets[key]
                body = [f[1][0]]
                roles = ["facet"]
                title = f"{t['title']}: {f[2][0]}"
            n_gen = int(rng.integers(GENERAL_RANGE[0], GENERAL_RANGE[1] + 1))
            body += general[:n_gen]
            if rng.random() < P_FILLER:
                body.append(GENERIC_FILLER[rng.integers(len(GENERIC_FILLER))])
            # keep paragraphs in the 40..200 word range
            extra = general[n_gen:] + GENERIC_FILLER
            k = 0
            while _words(" ".join(body)) < 40 and k < len(extra):
                if extra[k] not in body:
                    body.append(extra[k])
                k += 1
            while _words(" ".join(body)) > 200 and len(body) > 2:
                body.pop()
            parts = [_cap(s) for s in body]
            roles = (roles + ["context"] * len(body))[:len(body)]
            chunks.append(dict(doc_id=f"{prefix}-{n:02d}", title=_cap(title), text=" ".join(parts),
                               topic=ti, kind=kind, key=key, parts=list(zip(roles, parts))))
    return chunks


# ----------------------------------------------------------------------------------------
# Queries
# ----------------------------------------------------------------------------------------
def _typo(word, rng):
    if word in KNOWN_TYPOS and rng.random() < 0.7:
        return KNOWN_TYPOS[word]
    if len(word) < 4 or not word.isalpha():
        return word
    i = int(rng.integers(1, len(word) - 1))
    op = rng.choice(4, p=[0.4, 0.3, 0.1, 0.2])
    if op == 0:  # drop a letter
        return word[:i] + word[i + 1:]
    if op == 1:  # swap two letters
        return word[:i] + word[i + 1] + word[i] + word[i + 2:]
    if op == 2:  # double a letter
        return word[:i] + word[i] + word[i:]
    vowels = "aeiou"  # wrong vowel
    pos = [j for j in range(1, len(word)) if word[j] in vowels]
    if not pos:
        return word[:i] + word[i + 1:]
    j = pos[int(rng.integers(len(pos)))]
    return word[:j] + vowels[(vowels.index(word[j]) + 1 + int(rng.integers(4))) % 5] + word[j + 1:]


def _compress(text, rng, p_abbrev=0.75):
    """Search-box style: drop filler words, abbreviate."""
    toks = text.lower().replace("?", "").split()
    keep = [w for w in toks if w not in STOPWORDS] or toks
    out = []
    for w in keep:
        if w in ABBREV and rng.random() < p_abbrev:
            w = ABBREV[w]
        out.append(w)
    return " ".join(out)


def _misspell(text, rng):
    toks = text.split()
    cand = [i for i, w in enumerate(toks) if len(w) >= 5 and w.isalpha()]
    if not cand:
        cand = [i for i, w in enumerate(toks) if len(w) >= 4 and w.isalpha()]
    if not cand:
        return text
    # the longest word half of the time, otherwise any word
    cand.sort(key=lambda i: -len(toks[i]))
    i = cand[0] if rng.random() < P_TYPO_LONGEST else cand[int(rng.integers(len(cand)))]
    toks[i] = _typo(toks[i], rng)
    return " ".join(toks)


def _topic_word(t, rng):
    """How a customer names the topic: the docs' short name, or their own word for it."""
    own = CUST_NOUNS[f"{t['area']}-{t['slug']}"]
    if rng.random() < P_CUSTOMER_WORD:
        return own[int(rng.integers(len(own)))]
    short = SHORT[f"{t['area']}-{t['slug']}"]
    return short[int(rng.integers(len(short)))]


def build_queries(chunks, rng):
    """Return a list of query dicts (without ids): text, source, target chunk, relevant."""
    by_key = {(c["topic"], c["kind"], c["key"]): c for c in chunks}
    topic_idx = {f"{t['area']}-{t['slug']}": i for i, t in enumerate(T)}
    cands_team, cands_cust = [], []
    # 1. hand-written facet queries
    for ti, t in enumerate(T):
        for f in t["facets"]:
            target = by_key[(ti, "facet", f[0])]
            for q in f[2]:
                cands_team.append(dict(text=q, target=target, also=f[4], style="facet"))
            for q in f[3]:
                cands_cust.append(dict(text=q, target=target, also=f[4], style="facet"))
    rng.shuffle(cands_team)
    rng.shuffle(cands_cust)
    n_team, n_support, n_search, n_failed = 60, 100, 95, 65
    n_cust = n_support + n_search + n_failed
    team = cands_team[:N_FACET_TEAM]
    cust = cands_cust[:N_FACET_CUST]
    # 2. templated queries about generic aspect chunks, to fill up
    aspect_chunks = [c for c in chunks if c["kind"] == "aspect"]
    order = rng.permutation(len(aspect_chunks))
    pos = 0
    seen = {q["text"] for q in team + cust}

    def next_aspect():
        nonlocal pos
        c = aspect_chunks[order[pos % len(order)]]
        pos += 1
        return c

    while len(team) < n_team:
        c = next_aspect()
        t = T[c["topic"]]
        tmpl = TEAM_Q[c["key"]]
        text = tmpl[int(rng.integers(len(tmpl)))].format(tq=t["tq"])
        if text not in seen:
            seen.add(text)
            team.append(dict(text=text, target=c, also=[], style="aspect"))
    while len(cust) < n_cust:
        c = next_aspect()
        t = T[c["topic"]]
        cw = _topic_word(t, rng) if c["key"] != "limits" else t["obj"].lower()
        own = int(rng.random() >= P_ASPECT_DOC_WORDS)  # 0: docs' words, 1: customers' own
        tmpl = CUST_Q[c["key"]][own]
        text = tmpl[int(rng.integers(len(tmpl)))].format(c=cw)
        tmpl = TICKET_Q[c["key"]][own]
        ticket = tmpl[int(rng.integers(len(tmpl)))].format(c=cw)
        if text not in seen and ticket not in seen:
            seen.update((text, ticket))
            style = ("aspect-own" if own else "aspect-doc") + ("+cw" if cw in CUST_NOUNS[f"{t['area']}-{t['slug']}"] else "")
            cust.append(dict(text=text, ticket=ticket, target=c, also=[], style=style))
    # 3. assign customer sources and turn texts into their source's style
    rng.shuffle(cust)
    queries = []
    for q in team:
        queries.append(dict(q, source="team_written"))
    for i, q in enumerate(cust):
        if i < n_support:
            src, text = "support_ticket", q.get("ticket", q["text"])
        elif i < n_support + n_search:
            src, text = "search_log", _compress(q["text"], rng)
        else:
            src = "failed_search"
            text = _misspell(_compress(q["text"], rng, p_abbrev=0.5), rng)
        k = 0
        while text in {x["text"] for x in queries} and k < 5:
            text = _misspell(q["text"], rng)
            k += 1
        queries.append(dict(q, text=text, source=src))
    # 4. relevance: target (grade 1, sometimes 2) + linked chunks
    for q in queries:
        c = q["target"]
        rel = {c["doc_id"]: 1}
        for prefix, key in q["also"]:
            ti = topic_idx[prefix]
            other = by_key.get((ti, "facet", key)) or by_key.get((ti, "aspect", key))
            rel.setdefault(other["doc_id"], 1)
        if q["also"] and rng.random() < P_OVERVIEW_RELEVANT:
            rel.setdefault(by_key[(c["topic"], "aspect", "overview")]["doc_id"], 1)
        if c["kind"] == "aspect" and c["key"] in ("setup", "disable", "limits") and rng.random() < P_SIBLING_RELEVANT:
            sib_key = {"setup": "permissions", "disable": "setup", "limits": "plans"}[c["key"]]
            sib = by_key.get((c["topic"], "aspect", sib_key))
            if sib is not None:
                rel.setdefault(sib["doc_id"], 1)
            plans = by_key.get((c["topic"], "aspect", "plans"))
            if c["key"] == "setup" and plans is not None and rng.random() < P_THIRD_RELEVANT:
                rel.setdefault(plans["doc_id"], 1)  # "can we turn it on at all?" is also answered there
        if len(rel) > 1 and rng.random() < 0.5:
            rel[c["doc_id"]] = 2  # the best answer
        q["relevant"] = rel
    return queries


# ----------------------------------------------------------------------------------------
# Retrieval models: hashed bags of features, cosine similarity
# ----------------------------------------------------------------------------------------
_TOKEN = re.compile(r"[a-z0-9]+")
_HASH_CACHE: dict = {}


def _tokens(text):
    return _TOKEN.findall(text.lower())


def _stem(w):
    """A tiny suffix stripper: charge / charges / charged / charging -> charg."""
    for suf in ("ing", "ed", "es", "s"):
        if len(w) > len(suf) + 3 and w.endswith(suf):
            w = w[: -len(suf)]
            break
    if len(w) > 4 and w.endswith("e"):
        w = w[:-1]
    return w


def _trigrams(w):
    s = "#" + w + "#"
    return {s[i:i + 3] for i in range(len(s) - 2)}


class Speller:
    """Maps a word the docs never use to the closest doc word by character trigrams."""

    def __init__(self, doc_texts, min_sim):
        vocab = sorted({w for t in doc_texts for w in _tokens(t) if w not in STOPWORDS and w.isalpha()})
        self.vocab = set(vocab)
        self.grams = [(w, _trigrams(w)) for w in vocab if len(w) >= 3]
        self.min_sim = min_sim

    def correct(self, w):
        if w in self.vocab or w in STOPWORDS or len(w) < 3 or not w.isalpha():
            return None
        g = _trigrams(w)
        best, best_sim = None, self.min_sim
        for v, gv in self.grams:
            sim = len(g & gv) / len(g | gv)
            if sim > best_sim:
                best, best_sim = v, sim
        return best


def _features(text, cfg, synonyms=None, speller=None):
    """Return {feature: raw weight} for one text under a model config."""
    toks = _tokens(text)
    extra = []
    known = set()
    if synonyms:
        low = " " + " ".join(toks) + " "
        for key, val in synonyms.items():
            if " " + key + " " in low:
                extra += [w for w in _tokens(val) if w not in STOPWORDS]
                known.update(key.split())
    if speller is not None:
        toks = [w if w in known else (speller.correct(w) or w) for w in toks]
    content = [w for w in toks if w not in STOPWORDS]
    feats: dict = {}

    def add(f, w):
        feats[f] = feats.get(f, 0.0) + w

    stem = cfg.get("stem", False)
    for w in content:
        add("w:" + (_stem(w) if stem else w), cfg["word"])
    for w in extra:
        add("w:" + (_stem(w) if stem else w), cfg["word"] * cfg.get("syn_weight", 1.0))
    for a, b in zip(content, content[1:]):
        add("b:" + a + "_" + b, cfg["bigram"])
    if cfg["char"] > 0:
        for w in content:
            s = "#" + w + "#"
            for n in (3, 4):
                for i in range(len(s) - n + 1):
                    add("c:" + s[i:i + n], cfg["char"])
    return feats


def _bucket(feature, dims):
    key = (feature, dims)
    hit = _HASH_CACHE.get(key)
    if hit is None:
        h = int.from_bytes(hashlib.md5(feature.encode("utf-8")).digest()[:8], "little")
        hit = (h % dims, 1.0 if (h >> 40) & 1 else -1.0)
        _HASH_CACHE[key] = hit
    return hit


def _vectorize(feat_list, idf, default_idf, dims, sublinear):
    out = np.zeros((len(feat_list), dims))
    for r, feats in enumerate(feat_list):
        for f in sorted(feats):
            w = feats[f]
            if sublinear:
                w = 1.0 + np.log(w) if w >= 1 else w
            b, sign = _bucket(f, dims)
            out[r, b] += sign * w * idf.get(f, default_idf)
        norm = np.sqrt((out[r] * out[r]).sum())
        if norm > 0:
            out[r] /= norm
    return out


def embed(doc_titles, doc_texts, query_texts, cfg, synonyms=None):
    speller = Speller(doc_titles + doc_texts, cfg["spell"]) if cfg.get("spell") else None
    doc_feats = []
    for title, text in zip(doc_titles, doc_texts):
        feats = _features(text, cfg)
        for f, w in _features(title, cfg).items():  # headings count extra
            feats[f] = feats.get(f, 0.0) + cfg.get("title", 1.0) * w
        doc_feats.append(feats)
    q_feats = [_features(t, cfg, synonyms, speller) for t in query_texts]
    n = len(doc_texts)
    df: dict = {}
    for feats in doc_feats:
        for f in feats:
            df[f] = df.get(f, 0) + 1
    idf = {f: float(np.log((n + 1) / (d + 1)) + 1.0) for f, d in df.items()}
    default_idf = float(np.log(n + 1) + 1.0)
    D = _vectorize(doc_feats, idf, default_idf, HASH_DIMS, sublinear=True)
    Q = _vectorize(q_feats, idf, default_idf, HASH_DIMS, sublinear=False)
    return D, Q, q_feats


def truncated_scores(G, S, dims, rng):
    """Scores of the tuned embeddings squeezed into `dims` dimensions.

    The tuned vectors are first written in an orthonormal basis of the span of the doc
    vectors (from G = D D^T = U diag(lam) U^T: doc j -> sqrt(lam) * U[j], query q ->
    U^T S[q] / sqrt(lam); this changes no ranking), then randomly projected to `dims`
    dimensions with a seeded Gaussian matrix, and compared by cosine.  Distances are
    kept roughly but not exactly, so close calls between similar chunks start to flip.
    """
    lam, U = np.linalg.eigh(G)
    keep = lam > lam.max() * 1e-9
    lam, U = lam[keep], U[:, keep]
    docs = U * np.sqrt(lam)
    queries = np.zeros((S.shape[0], lam.size))
    for i in range(S.shape[0]):
        queries[i] = (U * S[i][:, None]).sum(axis=0) / np.sqrt(lam)
    R = rng.standard_normal((lam.size, dims))
    return cosine_scores(_project(docs, R), _project(queries, R))


def _project(X, R):
    """Row-normalised X @ R, without BLAS (plain sums give the same bits everywhere)."""
    out = np.zeros((X.shape[0], R.shape[1]))
    for i in range(X.shape[0]):
        out[i] = (X[i][:, None] * R).sum(axis=0)
        norm = np.sqrt((out[i] * out[i]).sum())
        if norm > 0:
            out[i] /= norm
    return out


def cosine_scores(D, Q):
    """Q @ D.T over the query's non-zero columns, without BLAS."""
    S = np.zeros((Q.shape[0], D.shape[0]))
    for i in range(Q.shape[0]):
        nz = np.flatnonzero(Q[i])
        S[i] = (D[:, nz] * Q[i, nz]).sum(axis=1)
    return S


def rank_top(S, noise, rng, k=TOP_K):
    """Perturb each similarity by a seeded relative error (sd `noise`), then return per
    query the top k as (doc indices, 6-decimal distinct scores)."""
    S = S * (1.0 + noise * rng.standard_normal(S.shape))
    S = S / max(1.0, float(S.max()))  # keep cosine-like scores within [-1, 1]; no ranking changes
    out = []
    for i in range(S.shape[0]):
        idx = np.lexsort((np.arange(S.shape[1]), -S[i]))[:k]
        scores = [round(float(S[i, j]), 6) for j in idx]
        for r in range(1, len(scores)):  # distinct at 6 decimals, strictly descending
            if scores[r] >= scores[r - 1]:
                scores[r] = round(scores[r - 1] - 1e-6, 6)
        out.append((idx, scores))
    return out


def synonym_table(kind, doc_texts, rng):
    """Customer wording -> doc words, as a model would have learned it.

    kind="general": everyday English a general-purpose model knows (max -> maximum,
    broken -> not working, charged twice -> duplicate charge); kind="domain":
    additionally the product's own customer jargon (okta login -> sso, rooms ->
    channels, pw -> password), which the tuned model learned, only partially
    (SYNONYM_COVERAGE).  Words the docs
    themselves use a lot (in SYN_MAX_DF chunks or more) get no entry.
    """
    df: dict = {}
    for text in doc_texts:
        for w in set(_tokens(text)):
            df[w] = df.get(w, 0) + 1
    table: dict = {}

    def put(k, v):
        k = " ".join(_tokens(k))
        if not k:
            return
        table[k] = (table[k] + " " + v) if k in table and v not in table[k] else v

    for k, v in ASPECT_SYNONYMS.items():
        put(k, v)
    for k, v in FACET_SYNONYMS.items():
        put(k, v)
    if kind == "domain":
        for t in T:
            name = f"{t['area']}-{t['slug']}"
            for k, v in t["cust"].items():
                put(k, v)
            for k in CUST_NOUNS[name]:
                put(k, SHORT[name][0])
        for full, short in ABBREV.items():
            put(short, full)
    keys = [k for k in sorted(table) if min(df.get(w, 0) for w in k.split()) < SYN_MAX_DF]
    keep = rng.random(len(keys)) < (SYNONYM_COVERAGE if kind == "domain" else 1.0)
    return {k: table[k] for k, ok in zip(keys, keep) if ok}


RUNS = [
    # name, model string, price per million tokens, dims
    ("base", "acme-embed-base-v2", 0.02, 768),
    ("tuned", "acme-embed-large-v2-kestrel-ft", 0.04, 1536),
    ("tuned-256d", "acme-embed-large-v2-kestrel-ft-256d", 0.04, 256),
]


def make_runs(chunks, queries):
    """The three runs, the synonym tables' sizes, the dense vectors, and the tuned model's query x doc
    similarities and query features (which the chunked runs reuse)."""
    doc_titles = [c["title"] for c in chunks]
    doc_texts = [c["text"] for c in chunks]
    q_texts = [q["text"] for q in queries]
    pb, pt, pp = PARAMS["base"], PARAMS["tuned"], PARAMS["tuned_256"]
    syn_b = synonym_table(pb["synonyms"], doc_texts, np.random.default_rng([SEED, 3]))
    syn_t = synonym_table(pt["synonyms"], doc_texts, np.random.default_rng([SEED, 3]))
    D_b, Q_b, _ = embed(doc_titles, doc_texts, q_texts, pb, synonyms=syn_b)
    D_t, Q_t, q_feats_t = embed(doc_titles, doc_texts, q_texts, pt, synonyms=syn_t)
    S_t = cosine_scores(D_t, Q_t)
    S_p = truncated_scores(cosine_scores(D_t, D_t), S_t, pp["dims"], np.random.default_rng([SEED, 4]))
    S_b = cosine_scores(D_b, Q_b)
    runs = {
        "base": rank_top(S_b, pb["noise"], np.random.default_rng([SEED, 5])),
        "tuned": rank_top(S_t, pt["noise"], np.random.default_rng([SEED, 6])),
        "tuned-256d": rank_top(S_p, pp["noise"], np.random.default_rng([SEED, 7])),
    }
    vectors = make_vectors(cosine_scores(D_b, D_b), S_b, cosine_scores(D_t, D_t), S_t)
    return runs, (len(syn_b), len(syn_t)), vectors, (S_t, q_feats_t)


# ----------------------------------------------------------------------------------------
# Dense vectors (sample_data/vectors/): what the three models would export, for `evalcore vectors`
# ----------------------------------------------------------------------------------------
VECTOR_DIMS = {"base": 128, "tuned": 256, "tuned-256d": 64}
"""Dimensions shipped per model: small enough to commit (about 1.5 MB in all)."""
BASE_QUERY_NOISE = 1.2
"""base's query vectors carry seeded Gaussian noise of this size relative to their length (a less precise model,
as its run's 9 % error on every similarity)."""


def doc_basis(G, S):
    """Docs and queries in an orthonormal basis of the doc span, strongest direction first.

    From G = D D^T = U diag(lam) U^T: doc j -> sqrt(lam) * U[j], query q -> U^T S[q] / sqrt(lam) (S[q] = D q):
    every query-doc inner product is kept, so exact search on these vectors ranks as the hashed vectors do. The
    directions are ordered by lam, largest first, so the first d numbers keep the most of the docs' spread (as a
    Matryoshka-trained model's first dimensions do) and truncating them costs recall gradually.
    """
    lam, U = np.linalg.eigh(G)
    order = np.argsort(-lam, kind="stable")
    lam, U = lam[order], U[:, order]
    keep = lam > lam.max() * 1e-9
    lam, U = lam[keep], U[:, keep]
    U = U * np.where(U[np.argmax(np.abs(U), axis=0), np.arange(U.shape[1])] < 0, -1.0, 1.0)  # one sign per column
    docs = U * np.sqrt(lam)
    queries = np.zeros((S.shape[0], lam.size))
    for i in range(S.shape[0]):
        queries[i] = (U * S[i][:, None]).sum(axis=0) / np.sqrt(lam)
    return docs, queries


def make_vectors(G_b, S_b, G_t, S_t):
    """name -> (doc vectors, query vectors) as float32, each model's doc basis cut to VECTOR_DIMS numbers: base
    with noisy queries (BASE_QUERY_NOISE), tuned at 256, tuned-256d the same tuned basis cut to 64 (the reduced
    model). Exact search on them orders the models as their sample runs: tuned, then tuned-256d, then base."""
    out = {}
    tuned_docs, tuned_queries = doc_basis(G_t, S_t)
    for name in ("tuned", "tuned-256d"):
        dims = VECTOR_DIMS[name]
        out[name] = (_on_grid(tuned_docs[:, :dims]), _on_grid(tuned_queries[:, :dims]))
    docs, queries = doc_basis(G_b, S_b)
    dims = VECTOR_DIMS["base"]
    docs, queries = docs[:, :dims], queries[:, :dims]
    noise = np.random.default_rng([SEED, 10]).standard_normal(queries.shape)
    lengths = np.sqrt((queries * queries).sum(axis=1))[:, None]
    queries = queries + BASE_QUERY_NOISE * lengths / np.sqrt(dims) * noise
    out["base"] = (_on_grid(docs), _on_grid(queries))
    return out


VECTOR_GRID = 2.0**15
"""Vector entries are multiples of 1 / 2**15 (about 3e-5; entries are about 0.02): LAPACK's eigenvectors differ in
their last bits between builds of numpy, and rounding to a grid this coarse keeps the committed files byte for byte
whichever numpy writes them (a plain float32 cast once flipped one bit of one entry)."""


def _on_grid(matrix):
    return (np.round(matrix * VECTOR_GRID) / VECTOR_GRID).astype(np.float32)


def _npy_bytes(matrix):
    """A float32 matrix as .npy bytes (version 1.0 header; the same bytes on every numpy that writes them)."""
    sink = io.BytesIO()
    np.save(sink, np.ascontiguousarray(matrix, dtype="<f4"), allow_pickle=False)
    return sink.getvalue()


def write_vectors(out, chunks, queries, vectors):
    """sample_data/vectors/NAME.docs.npy and NAME.queries.npy, each with its NAME....ids.txt beside it."""
    folder = out / "vectors"
    folder.mkdir(parents=True, exist_ok=True)
    order = sorted(range(len(queries)), key=lambda i: queries[i]["qid"])
    doc_ids = "".join(c["doc_id"] + "\n" for c in chunks)
    query_ids = "".join(queries[i]["qid"] + "\n" for i in order)
    for name, _, _, _ in RUNS:
        docs, qs = vectors[name]
        (folder / f"{name}.docs.npy").write_bytes(_npy_bytes(docs))
        (folder / f"{name}.queries.npy").write_bytes(_npy_bytes(qs[order]))
        _write(folder / f"{name}.docs.ids.txt", doc_ids)
        _write(folder / f"{name}.queries.ids.txt", query_ids)


def assign_query_fields(queries, base_run, chunks, rng):
    """Ids, blind, split and the judged non-relevant (grade 0) docs."""
    n = len(queries)
    order = rng.permutation(n)
    queries[:] = [queries[i] for i in order]
    base_run[:] = [base_run[i] for i in order]
    for i, q in enumerate(queries):
        q["qid"] = f"q{i + 1:03d}"
    blind = rng.random(n) >= 0.15
    holdout = np.zeros(n, dtype=bool)  # 30% held out for the report, 70% to tune on
    holdout[rng.choice(n, size=round(0.3 * n), replace=False)] = True
    by_topic: dict = {}
    for c in chunks:
        by_topic.setdefault(c["topic"], []).append(c["doc_id"])
    for i, q in enumerate(queries):
        q["blind"] = bool(blind[i])
        q["split"] = "holdout" if holdout[i] else "tune"
        n_neg = int(rng.integers(1, 4))
        if not q["blind"]:
            # judged after looking at a ranking: the top non-relevant results of the base run
            idx, _ = base_run[i]
            cand = [chunks[j]["doc_id"] for j in idx[:10] if chunks[j]["doc_id"] not in q["relevant"]]
            negs = cand[:n_neg]
        elif rng.random() < 0.22:
            # judged blind: a few sibling articles the judge also read
            sib = [d for d in by_topic[q["target"]["topic"]] if d not in q["relevant"]]
            negs = [sib[j] for j in sorted(rng.choice(len(sib), size=min(n_neg, len(sib)), replace=False))]
        else:
            negs = []
        q["nonrelevant"] = negs


# ----------------------------------------------------------------------------------------
# Writers
# ----------------------------------------------------------------------------------------
def _write(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8", newline="\n") as fh:
        fh.write(text)


def write_all(out, chunks, queries, runs):
    _write(out / "docs.jsonl", "".join(
        json.dumps({"doc_id": c["doc_id"], "title": c["title"], "text": c["text"]}, ensure_ascii=False) + "\n"
        for c in chunks))
    lines = ["query\tdoc_id\tgrade\tquery_text\tsource\tblind\tsplit\n"]
    for q in sorted(queries, key=lambda q: q["qid"]):
        rows = sorted(q["relevant"].items(), key=lambda kv: (-kv[1], kv[0]))
        rows += [(d, 0) for d in sorted(q["nonrelevant"])]
        for doc_id, grade in rows:
            lines.append("\t".join([q["qid"], doc_id, str(grade), q["text"], q["source"],
                                    "true" if q["blind"] else "false", q["split"]]) + "\n")
    _write(out / "labels.tsv", "".join(lines))
    n_docs = len(chunks)
    for name, model, price, dims in RUNS:
        lines = []
        for q, (idx, scores) in zip(queries, runs[name]):
            for r, (j, s) in enumerate(zip(idx, scores), start=1):
                lines.append(f"{q['qid']} Q0 {chunks[j]['doc_id']} {r} {s:.6f} {name}\n")
        order = sorted(range(len(queries)), key=lambda i: queries[i]["qid"])
        per_q = len(lines) // len(queries)
        lines = [line for i in order for line in lines[i * per_q:(i + 1) * per_q]]
        _write(out / f"{name}.trec", "".join(lines))
        meta = {"model": model, "price_per_mtok": price, "dims": dims, "index_bytes": n_docs * dims * 4}
        _write(out / f"{name}.meta.json", json.dumps(meta, indent=2) + "\n")
    # the seed example from the docs (the README's Python example)
    seed_labels = {"refund timing": ["policy-refunds", "faq-returns"],
                   "reset my password": ["acct-recovery"],
                   "enterprise sso": ["pricing-enterprise"]}
    seed_run = {"refund timing": ["policy-refunds", "faq-shipping", "faq-returns"],
                "reset my password": ["faq-login", "acct-recovery", "policy-privacy"],
                "enterprise sso": ["faq-login", "policy-refunds", "pricing-enterprise"]}
    _write(out / "seed_example" / "labels.json", json.dumps(seed_labels, indent=2) + "\n")
    _write(out / "seed_example" / "run.json", json.dumps(seed_run, indent=2) + "\n")


# ----------------------------------------------------------------------------------------
# Independent check: recall@k computed from the written files with pandas/numpy
# ----------------------------------------------------------------------------------------
def summarize(out):
    labels = pd.read_csv(out / "labels.tsv", sep="\t", dtype=str, keep_default_na=False)
    labels["grade"] = labels["grade"].astype(int)
    rel = labels[labels["grade"] >= 1].groupby("query")["doc_id"].apply(set).to_dict()
    source = labels.groupby("query")["source"].first()
    report = {}
    lines = []
    ks = (1, 5, 10, 20, 100)
    for name, *_ in RUNS:
        run = pd.read_csv(out / f"{name}.trec", sep=" ", header=None, dtype=str,
                          names=["query", "q0", "doc_id", "rank", "score", "tag"])
        run["score"] = run["score"].astype(float)
        # evalcore's TREC run order: score descending, ties by doc id descending
        run = run.sort_values(["query", "score", "doc_id"], ascending=[True, False, False])
        ranked = run.groupby("query")["doc_id"].apply(list).to_dict()
        per_q = pd.DataFrame(
            {f"r@{k}": [len(set(ranked.get(q, [])[:k]) & rel[q]) / len(rel[q]) for q in sorted(rel)] for k in ks},
            index=sorted(rel))
        per_q["source"] = source.loc[per_q.index]
        report[name] = per_q
    lines.append(f"{'run':<11} {'n':>4} {'r@1':>7} {'r@5':>7} {'r@10':>7} {'r@20':>7}  missed@100")
    for name, per_q in report.items():
        m = per_q[[f"r@{k}" for k in ks]].mean()
        missed = int((per_q["r@100"] == 0).sum())
        lines.append(f"{name:<11} {len(per_q):>4} {m['r@1']:>7.4f} {m['r@5']:>7.4f} {m['r@10']:>7.4f} {m['r@20']:>7.4f}  {missed}")
    lines.append("")
    lines.append(f"{'run':<11} {'source':<15} {'n':>4} {'r@1':>7} {'r@5':>7} {'r@10':>7}")
    for name, per_q in report.items():
        groups = [(src, g) for src, g in per_q.groupby("source", sort=True)]
        groups.append(("(customer, all)", per_q[per_q["source"] != "team_written"]))
        for src, g in groups:
            lines.append(f"{name:<11} {src:<15} {len(g):>4} {g['r@1'].mean():>7.4f} {g['r@5'].mean():>7.4f} {g['r@10'].mean():>7.4f}")
    means = {name: per_q[["r@1", "r@5"]].mean() for name, per_q in report.items()}
    r5 = [m["r@5"] for m in means.values()]
    lines.append("")
    lines.append(f"tuned - base r@1: {means['tuned']['r@1'] - means['base']['r@1']:+.4f}   "
                 f"tuned-256d - base r@1: {means['tuned-256d']['r@1'] - means['base']['r@1']:+.4f}   "
                 f"r@5 spread (max - min): {max(r5) - min(r5):.4f}")
    return "\n".join(lines), report


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=str(Path(__file__).resolve().parent.parent / "sample_data"))
    args = ap.parse_args(argv)
    out = Path(args.out)
    chunks = build_corpus(np.random.default_rng([SEED, 1]))
    queries = build_queries(chunks, np.random.default_rng([SEED, 2]))
    assert len(queries) == N_QUERIES, len(queries)
    runs, n_syn, vectors, (tuned_scores, tuned_query_features) = make_runs(chunks, queries)
    base = list(runs["base"])
    # reorder queries (and every run) by the same permutation
    perm_rng = np.random.default_rng([SEED, 8])
    order_before = list(range(len(queries)))
    tagged = [dict(q, _i=i) for i, q in zip(order_before, queries)]
    assign_query_fields(tagged, base, chunks, perm_rng)
    new_order = [q["_i"] for q in tagged]
    runs = {k: [v[i] for i in new_order] for k, v in runs.items()}
    vectors = {k: (docs, qs[new_order]) for k, (docs, qs) in vectors.items()}
    write_all(out, chunks, tagged, runs)
    write_vectors(out, chunks, tagged, vectors)
    doc_facts = {c["doc_id"]: [T[c["topic"]][slot] for slot in FACT_SLOTS] for c in chunks}
    tuned = TunedModel(tuned_scores[new_order], [tuned_query_features[i] for i in new_order],
                       lambda text: _features(text, PARAMS["tuned"]))
    write_chunking(out, chunks, tagged, doc_facts, tuned, rank_top, SEED)
    answer_scores = write_answers(out, SEED)
    log_counts = write_log(out, SEED)
    text, _ = summarize(out)
    n_multi = sum(len(q["relevant"]) > 1 for q in tagged)
    n_g2 = sum(2 in q["relevant"].values() for q in tagged)
    n_neg = sum(bool(q["nonrelevant"]) for q in tagged)
    words = [len(c["text"].split()) for c in chunks]
    print(f"docs: {len(chunks)} chunks in {len(T)} topics, {min(words)}-{max(words)} words (mean {np.mean(words):.0f})")
    print(f"queries: {len(tagged)}; multi-relevant {n_multi}, with grade 2 {n_g2}, with judged non-relevant {n_neg}, "
          f"blind {sum(q['blind'] for q in tagged)}, tune {sum(q['split'] == 'tune' for q in tagged)}; "
          f"synonym tables: base {n_syn[0]}, tuned {n_syn[1]} entries")
    print()
    print(text)
    print()
    print(summarize_chunking(out))
    print()
    print(summarize_answers(answer_scores))
    print(summarize_log(log_counts))


if __name__ == "__main__":
    main()
