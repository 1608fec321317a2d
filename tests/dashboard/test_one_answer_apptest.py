"""Issue 30, item 8, in AppTest: each pooled doc of Blind judging named beside its id (title, else its first line,
escaped); the k control says what k counts (docs, or chunks when a run shown has a chunk map); counts say "1 run",
never "1 runs"; and a relevant doc a run did not return is said one way ("not in its top 100", from
`evalcore.analyses.landed`)."""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import evalcore
from evalcore.analyses.landed import landed_text, not_returned
from evalcore.safe_text import md_text

from tests.dashboard.apptest_helpers import LABELS_CSV, RUN_A, RUN_B, app, no_exceptions, plain, texts

ROOT = Path(__file__).resolve().parents[2]
S = ROOT / "sample_data"
HOSTILE_TITLE = "**Reset** <b>now</b> :material/home: [x](http://e.com) $a$"
DOCS = [{"doc_id": "d1", "title": HOSTILE_TITLE, "text": "How to reset."},
        {"doc_id": "d9", "text": "\n  First line of d9,   with spaces  \nSecond line."},
        *({"doc_id": d, "title": f"Title of {d}", "text": f"text of {d}"} for d in ("d2", "d3", "d4", "d5")),
        {"doc_id": "x1", "text": "word " * 40}]


def uploaded(at, documents: list[dict]) -> None:
    """Labels, two runs and ``documents`` uploaded on the Data page of ``at``."""
    at.file_uploader(key="data.labels.0").set_value(("labels.csv", LABELS_CSV.encode(), "text/csv")).run()
    at.file_uploader(key="data.runs.0").set_value([("a.trec", RUN_A.encode(), "text/plain"),
                                                   ("b.jsonl", RUN_B.encode(), "application/json")]).run()
    body = "\n".join(json.dumps(d) for d in documents).encode()
    at.file_uploader(key="data.documents.0").set_value(("docs.jsonl", body, "application/json")).run()
    no_exceptions(at)
    assert not at.error, [e.value for e in at.error]


def test_blind_judging_names_each_pooled_doc_beside_its_id_escaped(workspace) -> None:
    at = app("views/data.py")
    uploaded(at, DOCS)
    at.query_params.update({"query": "q1", "depth": "3"})
    at.switch_page("views/judge.py").run()
    no_exceptions(at)
    heads = [m.value for m in at.markdown if m.value.startswith("Doc ")]
    docs = [re.match(r"Doc \d+: (\S+)", plain(h)).group(1) for h in heads]
    assert sorted(docs) == ["d1", "d9", "x1"]  # q1's pool: a's top 3 (d9, d1, x1) and b's (d1)
    expected = {"d1": f" · **{md_text(HOSTILE_TITLE)}**",  # the title, its Markdown made inert
                "d9": " · **First line of d9, with spaces**",  # no title: the first line of its text
                "x1": " · **" + " ".join(["word"] * 18) + "…**"}  # cut after a word, 90 characters at most
    for number, (head, doc) in enumerate(zip(heads, docs), start=1):
        assert head == f"Doc {number}: {md_text(doc)}{expected[doc]}"


def test_the_k_control_counts_docs_or_chunks_as_the_runs_shown_rank_them() -> None:
    at = app("views/overview.py")
    assert [n.label for n in at.number_input if n.key == "overview.k"] == ["k (docs retrieved)"]
    chunked = app("views/data.py")
    next(b for b in chunked.button if "chunking sample" in (b.label or "")).click().run()
    chunked.switch_page("views/overview.py").run()
    no_exceptions(chunked)
    assert [n.label for n in chunked.number_input if n.key == "overview.k"] == ["k (chunks retrieved)"]


def test_one_run_with_a_chunk_map_is_one_run(workspace) -> None:
    at = app("views/data.py")
    labels = (S / "chunking" / "labels.tsv").read_bytes()
    at.file_uploader(key="data.labels.0").set_value(("labels.tsv", labels, "text/tab-separated-values")).run()
    run = (S / "chunking" / "sent3.trec").read_bytes()
    at.file_uploader(key="data.runs.0").set_value([("sent3.trec", run, "text/plain")]).run()
    chunks = (S / "chunking" / "sent3.chunks.csv").read_bytes()
    at.file_uploader(key="data.chunks.0.sent3").set_value(("sent3.chunks.csv", chunks, "text/csv")).run()
    no_exceptions(at)
    assert not at.error, [e.value for e in at.error]
    labels_shown = [e.label for e in at.expander if e.label.startswith("Chunk maps")]
    assert labels_shown == ["Chunk maps: 1 of 1 run ranks chunks"]
    assert "1 runs" not in texts(at) and "1 queries" not in texts(at)


def test_a_relevant_doc_a_run_did_not_return_is_said_one_way() -> None:
    assert not_returned(100) == "not in its top 100"
    assert landed_text(None, 100, True) == "not in its top 100" and landed_text(14, 100, True) == "rank 14"
    ev = evalcore.evaluate_runs([S / "base.trec"], S / "labels.tsv", k=10)
    words = evalcore.analyses.landed.landed(ev).run("base").words
    assert any("not in its top 100" in w for w in words) and not any("not in top" in w for w in words)


OTHER_WORDINGS = re.compile(r"none returned|not in top\b|none in its\b")
"""The wordings issue 30 item 8 found for "a relevant doc the run did not return", besides `not_returned`'s."""


def other_wordings(paths) -> list[str]:
    """Text in ``paths`` a person reads (string constants, f-strings' text; not docstrings) saying it another way."""
    found = []
    for path in paths:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                      if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
                      and node.body and isinstance(node.body[0], ast.Expr)}
        found += [f"{path.relative_to(ROOT)}:{node.lineno}: {node.value!r}" for node in ast.walk(tree)
                  if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings
                  and OTHER_WORDINGS.search(node.value)]
    return found


def test_nothing_says_it_another_way() -> None:
    sources = [*(ROOT / "evalcore").rglob("*.py"), *(ROOT / "dashboard").rglob("*.py")]
    assert other_wordings(sources) == []
