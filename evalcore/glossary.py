"""Every evaluation and statistics word evalcore shows, each with one plain sentence a manager can read aloud.

One list for every front end: the dashboard's help texts and its "Words on this page" panels, and the README's
glossary (a test checks that the README says the same sentences), so a word never means two things.
"""

from __future__ import annotations

GLOSSARY: dict[str, str] = {
    # what is measured
    "k": "How many retrieved chunks you look at (or put into the prompt): the top k of each ranked list.",
    "recall@k": "Of the docs a person marked relevant for a query, the share found in the top k; averaged over "
                "queries.",
    "hit@k": "The share of queries with at least one relevant doc in the top k.",
    "precision@k": "Of the top k docs, the share that are relevant.",
    "nDCG@k": "Like recall@k, but a relevant doc counts more the higher it is ranked and the higher its grade.",
    "MRR": "Mean reciprocal rank: 1 when the first relevant doc is ranked first, 1/2 when second, 1/3 when third, "
           "0 when none is returned; averaged over queries.",
    "chunk map": "A file saying which document each retrieved chunk comes from (and where in its text): with it, a "
                 "run of chunks is scored against labels that name documents, and k counts chunks.",
    "evidence span": "The part of a relevant document a person marked as the answer (its start and end in the text).",
    "evidence recall@k": "Of the evidence a person marked for a query, the share of its characters inside the top k "
                         "chunks; a relevant chunk can still hold little of the answer.",
    "evidence precision@k": "Of the top k chunks' characters, the share that is evidence: what the prompt spends on "
                            "the answer.",
    "prompt-token budget": "The mean number of prompt tokens per request you can afford for retrieved chunks: "
                           "chunkings are compared at the same budget, each at the largest k that fits.",
    "judged@k": "The share of the top k docs that a person has judged at all (relevant or not); low values mean the "
                "numbers rest on guesses about unjudged docs.",
    "n": "How many labeled queries a number is computed on; the more, the narrower its interval.",
    "missed a relevant doc": "A query with some relevant doc outside the top k (recall@k below 1).",
    "found nothing relevant": "A failure: a query with no relevant doc at all in the top k (hit@k = 0). Every count "
                              "of failures (the Failures page, the ledger, History, the report, the command line) "
                              "counts these.",
    "got only a fragment": "A query whose relevant document is in the top k, but whose chunks there hold under half "
                           "of the evidence: the chunk was relevant and too small to answer.",
    "unjudged": "A doc nobody has labeled for this query, relevant or not: it counts as not relevant.",
    "came instead": "Docs in a run's top k that are not labeled relevant: what the customer got instead.",
    "first relevant rank": "Where the highest-ranked relevant doc landed in a run's list (1 = first); empty when the "
                           "run did not return any.",
    # the answers
    "answer grade": "How good a tool (ragas, DeepEval, RAGChecker, promptfoo) or a person judged the answer written "
                    "from a run's retrieved chunks, from 0 (wrong) to 1 (right); pass and fail count as 1 and 0.",
    "answered well": "An answer whose grade is at least 0.5 (the command line's --good sets another threshold).",
    "retrieval better, answer worse": "A query where one run has more of the relevant docs in its top k than another "
                                      "(a higher recall@k) and yet its answer was graded lower: better retrieval did "
                                      "not give a better answer, worth reading.",
    "rank correlation": "How closely two numbers rise and fall together across queries (Spearman): 1 always "
                        "together, 0 unrelated, -1 always opposite.",
    # uncertainty
    "95% interval": "The range the true value lies in, given these queries, 19 times out of 20; wide when there "
                    "are few queries.",
    "Wilson interval": "The interval used for numbers that are 0 or 1 per query (hit@k, recall@k with one relevant "
                       "doc): accurate even near 0 and 1.",
    "BCa bootstrap": "The interval used for other numbers: the queries are resampled 10,000 times and the spread of "
                     "the results, corrected for skew, gives the interval.",
    "paired comparison": "Two runs compared on the same queries, query by query, so the difference is not drowned "
                         "by how hard the queries are.",
    "sign-flip test": "Asks how often a difference this large would appear if the two runs were equally good: "
                      "each query's difference is flipped at random many times (monte carlo) or in every way "
                      "(exact).",
    "mid-p": "A p-value that counts ties with the observed result as half: less conservative than the plain exact "
             "test, still honest.",
    "McNemar test": "The sign-flip test when each query is simply won or lost (0/1 scores): counts the queries one "
                    "run gets and the other misses.",
    "p-value": "How likely a difference at least this large would be by luck alone if the runs were equally good; "
               "below 0.05 is called a real difference.",
    "Holm correction": "Comparing many pairs raises the chance of a lucky \"difference\"; Holm raises each p-value "
                       "to keep that chance at 5% over all comparisons together.",
    "wins / ties / losses": "Per query: the run scored higher than the baseline (win), the same (tie) or lower "
                            "(loss).",
    "planner": "How many labeled queries it takes to see a difference of a given size, or to halve an interval.",
    # choosing k
    "prompt tokens": "What the first k chunks add to every LLM request, counted with a tokenizer; the cost of k.",
    "λ (lambda)": "How many points of recall one thousand extra prompt tokens must buy to be worth it; the "
                  "trade-off's k maximises recall minus λ times the tokens.",
    "k to take": "The k each run should use, by one rule: the elbow until you say what a recall point is worth, then "
                 "the k that best trades recall against prompt tokens (the trade-off).",
    "a recall point's worth": "What one more point of recall (1% more of the relevant documents found) is worth to "
                              "you a month; with your price and requests a month it turns the k to take from the elbow into the trade-off.",
    "Kneedle elbow": "The k where the recall curve bends most, ignoring cost: the k to take until you say what a "
                     "recall point is worth.",
    "stop at k": "What stopping at k loses against the reference cutoff (k = 50): the recall left on the table and "
                 "the tokens saved.",
    # index size
    "dimensions kept": "The first d numbers of every vector (Matryoshka-style truncation; renormalised for cosine); "
                       "full keeps them all.",
    "precision (storage)": "How each number is stored: float32 (4 bytes), int8 (1 byte, each dimension's range "
                           "split into 255 steps) or binary (1 bit: the sign; compared by Hamming distance).",
    "rescoring": "A binary index finds candidates fast; rescoring re-ranks its top candidates with the full float "
                 "vectors (kept outside the index), recovering much of the recall binary loses.",
    "similarity": "cosine compares directions (vectors scaled to length 1); dot uses the raw inner product.",
    "frontier": "The variants no smaller index beats: anything off the line is bigger and no better.",
    "index to take": "Among the full vectors and every index not significantly worse than them on the metric "
                     "(paired per query, Holm-corrected), the smallest; for approximate indexes, the fastest. Not "
                     "significantly worse means the queries could not tell them apart: the interval shows how much "
                     "could still be lost.",
    "index size": "Docs x bytes per vector, plus the doc ids (their UTF-8 bytes + 8 per doc); int8 adds 8 bytes per "
                  "dimension for its ranges.",
    "approximate index": "An index that answers faster by looking at only part of the docs (HNSW walks a graph of "
                         "neighbours, IVF searches the nearest few lists): it may miss docs exact search finds.",
    "ef": "How many candidates an HNSW search keeps while it walks the graph: larger finds more of the true "
          "neighbours and takes longer.",
    "nprobe": "How many of an IVF index's lists a search looks in: larger finds more of the true neighbours and "
              "takes longer.",
    "neighbour recall": "Of the top k docs exact search returns, the share an index returns too (1 when it misses "
                        "none); the 5th percentile is what the worst 5% of queries keep.",
    "lost queries": "Queries where a doc a person marked relevant was in exact search's top k and is missing from "
                    "the index's top k: the answer a customer had and no longer gets.",
    "latency": "How long one query waits for its answer, searched alone on one thread; p50 is the typical query, "
               "p99 the slowest 1 in 100.",
    # trust in the labels
    "label set": "The queries and the doc ids people marked relevant (with grades), as one versioned file.",
    "fingerprint": "A short code computed from the labels' content: two numbers with the same fingerprint were "
                   "scored on exactly the same labels.",
    "blind labels": "Labels marked without seeing any system's ranking; labels marked after seeing rankings favour "
                    "the system that was shown.",
    "judged depth": "How deep in each run's list people judged docs; a number quoted deeper than that is partly "
                    "guessed.",
    "tune / holdout split": "Queries for choosing (tune) kept apart from queries for reporting (holdout), so the "
                            "reported number was not tuned on; looking at the holdout is recorded.",
    "pooled judging": "Blind judging of one query: every run's top docs mixed and shuffled, with ranks, scores and "
                      "runs hidden.",
    "check the label": "Queries every run misses while the runs agree on another doc: often a missing label rather "
                       "than a bad model.",
    "several judges": "Each pool judged by two or more people who never see each other's marks; their agreement "
                      "says how far one person's labels can be trusted, and their disagreements are settled before "
                      "the labels are frozen as a new version.",
    "adjudicate": "Decide a pair (query, doc) the judges disagree on; the adjudicator's mark replaces the majority "
                  "when the judges' marks are frozen into a label-set version.",
    "percent agreement": "The share of pairs on which every judge who marked it gave the same mark; high by chance "
                         "alone when most docs are not relevant.",
    "Cohen's kappa": "How far two judges agree beyond what chance would give: 1 is full agreement, 0 is chance; "
                     "0.61 to 0.80 is called substantial.",
    "Fleiss' kappa": "Cohen's kappa for any number of judges: agreement beyond chance on the pairs every judge "
                     "marked.",
    "Krippendorff's alpha": "Agreement beyond chance that allows marks to be missing (not every judge marked every "
                            "pair); read like kappa.",
    "source": "Where a query came from (support ticket, search log, written by the team): team-written queries "
              "tend to use the docs' own words and score higher.",
    # the workspace
    "model line": "The runs of one model over time (v1, v2, ...), so each new run is compared with the last one.",
    "failure ledger": "The record of every query a model line has failed: since when, fixed or regressed, with "
                      "status, tags and notes.",
    "regression": "A query the previous run of the line answered and the new run found nothing relevant for.",
    "role": "What a signed-in person may do on a team server: a viewer reads and downloads; an editor also uploads, "
            "saves evaluations, edits the ledger, judges and builds approximate indexes; an owner also reveals the holdout, deletes and manages "
            "label-set versions.",
    "who did what": "The workspace's log of every change with the person who made it, from their sign-in (or the "
                    "command line's login name), never typed.",
    "run": "One model's ranked results for the labeled queries (a TREC run file or similar).",
}
"""Term -> one plain sentence. The dashboard shows them where the term appears; the README lists them all."""


def explain(term: str) -> str:
    """The plain sentence for ``term`` (KeyError for a term the glossary lacks: add it here first)."""
    return GLOSSARY[term]


def as_markdown(terms: list[str] | tuple[str, ...] | None = None) -> str:
    """``terms`` (default: all) as a Markdown list, ``- **term**: sentence`` per line (the README's form)."""
    return "\n".join(f"- **{term}**: {GLOSSARY[term]}" for term in (terms or list(GLOSSARY)))
