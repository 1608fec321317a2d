"""The sample's answer grades (``sample_data/answers/``): what an LLM judge said about the answers a chat model wrote
from the base and tuned runs' top 5 chunks, as DeepEval's ``.deepeval/.latest_test_run.json`` holds them.

Called by ``make_sample_data.py`` once the labels, runs and documents are written, from those files alone (so the
grades follow the runs as the script made them). For every one of the 320 queries and both runs:

* the answerer reads the run's top `CONTEXT` chunks. When one of them is relevant it answers from it well most of the
  time (`P_GOOD_FOUND`; else it follows another chunk of the context); when none is, it now and then answers well from
  what it knows (`P_GOOD_MISSED`), else it declines or describes the first chunk it was given;
* the judge's ``Correctness`` score (0 to 1, in tenths) and one sentence of reason follow from that, with seeded
  spread within each band.

So retrieval and the answer move together, and not always: a run that retrieves better answers some of those queries
worse, which is what the dashboard's Answers page opens on. Deterministic: one seeded generator, the same draws per
query whatever happens. Stdlib + numpy only.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

GRADED_RUNS = {"base": "acme-embed-base-v2", "tuned": "acme-embed-large-v2-kestrel-ft"}
"""The runs whose answers were graded, with the embedding model each retrieved with."""
CONTEXT = 5
"""Chunks put into the prompt: each run's top 5."""
P_GOOD_FOUND = 0.86
"""A relevant chunk in the prompt: the share of answers graded good."""
P_GOOD_MISSED = 0.15
"""No relevant chunk in the prompt: the share answered well anyway (what the chat model knew)."""
P_DECLINE = 0.4
"""No relevant chunk, answered badly: the share that declines rather than describes the wrong article."""
ANSWER_MODEL = "acme-chat-small-v1"
JUDGE = "acme-judge-large"
BANDS = {"good": (0.8, 0.9, 1.0), "lucky": (0.6, 0.7, 0.8), "distracted": (0.2, 0.3, 0.4), "wrong": (0.0, 0.1, 0.2)}
"""The judge's scores for each kind of answer (one drawn per answer)."""


def _table(path: Path, columns: int) -> list[list[str]]:
    lines = path.read_text(encoding="utf-8").splitlines()
    return [line.split("\t" if columns == 7 else " ") for line in lines]


def _first_sentences(text: str, count: int) -> str:
    parts = [p.strip() for p in text.replace("\n", " ").split(". ") if p.strip()]
    said = ". ".join(parts[:count])
    return said if said.endswith(".") else said + "."


def read_inputs(out: Path) -> tuple[dict, dict, dict, dict]:
    """Query texts and relevant docs from the labels, each graded run's top `CONTEXT`, and each doc's title and
    text."""
    texts, relevant = {}, {}
    for row in _table(out / "labels.tsv", 7)[1:]:
        query, doc, grade, text = row[0], row[1], int(row[2]), row[3]
        texts[query] = text
        relevant.setdefault(query, set())
        if grade >= 1:
            relevant[query].add(doc)
    tops: dict = {}
    for run in GRADED_RUNS:
        ranked: dict = {}
        for qid, _, doc, rank, _, _ in _table(out / f"{run}.trec", 6):
            if int(rank) <= CONTEXT:
                ranked.setdefault(qid, []).append((int(rank), doc))
        tops[run] = {q: [d for _, d in sorted(docs)] for q, docs in ranked.items()}
    docs = {}
    for line in (out / "docs.jsonl").read_text(encoding="utf-8").splitlines():
        doc = json.loads(line)
        docs[doc["doc_id"]] = (doc["title"], doc["text"])
    return texts, relevant, tops, docs


def graded_answer(top: list[str], relevant: set[str], docs: dict, draws: np.ndarray) -> tuple[str, float, str]:
    """The answer written from the chunks ``top``, its score and the judge's reason; ``draws`` are this query's five
    uniform numbers (good or bad, which band value, which wording, decline or describe, which other chunk)."""
    found = [d for d in top if d in relevant]
    others = [d for d in top if d not in relevant] or top
    other = others[int(draws[4] * len(others))]
    wording = int(draws[2] * 2)
    if found:
        title, text = docs[found[0]]
        if draws[0] < P_GOOD_FOUND:
            kind, answer = "good", _first_sentences(text, 2)
            reason = (f'The answer says what the help article "{title}" says, and nothing it does not.',
                      f'Correct and complete: it follows "{title}", which was among the passages given.')[wording]
        else:
            kind, answer = "distracted", _first_sentences(docs[other][1], 1)
            reason = (f'The answer follows "{docs[other][0]}", although "{title}", also given, answers the question.',
                      f'Off target: it describes "{docs[other][0]}"; the passage that answers ("{title}") was ignored.'
                      )[wording]
    else:
        title, text = docs[sorted(relevant)[0]] if relevant else docs[top[0]]
        if draws[0] < P_GOOD_MISSED:
            kind, answer = "lucky", _first_sentences(text, 1)
            reason = ("Correct, though none of the passages given says so: the answer comes from what the model knew.",
                      f'Matches "{title}", which was not among the passages given.')[wording]
        elif draws[3] < P_DECLINE:
            kind, answer = "wrong", "I could not find this in the Kestrel help centre."
            reason = f'The answer declines; the help article "{title}" answers the question.'
        else:
            kind, answer = "wrong", _first_sentences(docs[top[0]][1], 1)
            reason = (f'The answer describes "{docs[top[0]][0]}", not what was asked.',
                      f'Wrong article: the question is answered by "{title}", the answer follows "{docs[top[0]][0]}".'
                      )[wording]
    band = BANDS[kind]
    return answer, band[int(draws[1] * len(band))], reason


def deepeval_run(run: str, queries: list[str], texts: dict, answers: dict) -> dict:
    """One run's answers as DeepEval's .latest_test_run.json holds them."""
    cases = []
    for order, qid in enumerate(queries):
        answer, score, reason = answers[qid]
        cases.append({"name": qid, "input": texts[qid], "actualOutput": answer, "success": score >= 0.5,
                      "metricsData": [{"name": "Correctness", "threshold": 0.5, "success": score >= 0.5,
                                       "score": score, "reason": reason, "strictMode": False,
                                       "evaluationModel": JUDGE}],
                      "order": order})
    return {"testRunData": {"testFile": "test_answers.py", "testCases": cases,
                            "hyperparameters": {"answer model": ANSWER_MODEL, "embedding model": GRADED_RUNS[run],
                                                "chunks in the prompt": CONTEXT}}}


def _json(value: dict) -> str:
    """One test case per line: small diffs, readable with less."""
    cases = value["testRunData"]["testCases"]
    head = json.dumps({**value["testRunData"], "testCases": []}, ensure_ascii=False)
    body = ",\n".join("  " + json.dumps(case, ensure_ascii=False) for case in cases)
    return '{"testRunData": ' + head.replace('"testCases": []', '"testCases": [\n' + body + "\n ]") + "}\n"


def write_answers(out: Path, seed: int) -> dict[str, list[float]]:
    """Write ``answers/NAME.deepeval.json`` for each graded run; return each run's scores in query order."""
    texts, relevant, tops, docs = read_inputs(out)
    queries = sorted(texts)
    rng = np.random.default_rng([seed, 11])
    scores = {}
    for run in GRADED_RUNS:
        draws = rng.random((len(queries), 5))
        answers = {q: graded_answer(tops[run][q], relevant[q], docs, d) for q, d in zip(queries, draws)}
        folder = out / "answers"
        folder.mkdir(parents=True, exist_ok=True)
        with open(folder / f"{run}.deepeval.json", "w", encoding="utf-8", newline="\n") as fh:
            fh.write(_json(deepeval_run(run, queries, texts, answers)))
        scores[run] = [answers[q][1] for q in queries]
    return scores


def summarize_answers(scores: dict[str, list[float]]) -> str:
    """Each graded run's mean Correctness and share answered well (>= 0.5), over all 320 queries."""
    return "\n".join(f"answers {run:<6} mean correctness {np.mean(s):.3f}, answered well "
                     f"{np.mean(np.array(s) >= 0.5):.1%}" for run, s in scores.items())
