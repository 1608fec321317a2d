"""Add cases: new or corrected labeled queries, kept as a new version of a label set (earlier versions unchanged).

`add_cases` takes a labels file (``evalcore workspace add-cases``); `add_production_miss` takes one query a person
saw fail in production (its text and the docs that should have come back), writes it as a small labels file and
adds it through `add_cases`, so the dashboard's form and the command line leave the same record.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from typing import Collection, Sequence

from ..access import Actor
from ..errors import UsageError
from ..readers.labels import LabelSet, read_labels
from ..store.workspace import LabelVersion, StoredFile, Workspace
from .acting import action


@dataclass(frozen=True)
class AddedCases:
    """The version the cases made (``created`` False when the set already had every case) and the stored file."""

    version: LabelVersion
    file: StoredFile


@action("manage_label_versions")
def add_cases(workspace: Workspace, label_set: str, source: str | os.PathLike | bytes, *, actor: Actor,
              format: str | None = None, note: str | None = None, name: str | None = None) -> AddedCases:
    """Store the cases file as given, read it as labels, and add its cases to ``label_set`` (an owner's action: a
    new label-set version; logged under ``actor.who`` when a version is made)."""
    stored = workspace._put_file(source, name=name)
    cases = read_labels(source, format=format)
    version = workspace._add_cases(label_set, cases, note=note, file=stored)
    if version.created:
        workspace._record_event(actor.who, "label-set version", version.ref, f"{version.change} (from {stored.name})")
    return AddedCases(version, stored)


PRODUCTION_SOURCE = "production"
"""The ``source`` a production miss is labeled with unless the person names another."""


def production_miss_file(query: str, query_text: str, doc_ids: Sequence[str], source: str = PRODUCTION_SOURCE,
                         split: str | None = None) -> bytes:
    """One production miss as a labels file (JSON Lines: a row per relevant doc, grade 1), after checking each part:
    a query id, the text the customer typed, at least one relevant doc id; ``split`` (``tune``) when the label set
    carries a tune/holdout split, so the case is scored with the side the pages score."""
    query, query_text, source = str(query).strip(), " ".join(str(query_text).split()), str(source).strip()
    docs = list(dict.fromkeys(d.strip() for d in doc_ids if d and d.strip()))
    if not query:
        raise UsageError("A production miss needs a query id (for example prod-001).")
    if not query_text:
        raise UsageError(f"Query {query}: say what the customer typed (the query text).")
    if not docs:
        raise UsageError(f"Query {query}: name at least one relevant doc id (the docs that should have come back).")
    rows = [{"query": query, "doc_id": doc, "grade": 1, "query_text": query_text, "source": source or PRODUCTION_SOURCE,
             **({"split": split} if split else {})} for doc in docs]
    return ("\n".join(json.dumps(row, ensure_ascii=False) for row in rows) + "\n").encode("utf-8")


def split_doc_ids(text: str) -> list[str]:
    """Doc ids as a person types them: separated by commas, semicolons or new lines (spaces around them ignored)."""
    return [part.strip() for part in re.split(r"[,;\n]", str(text)) if part.strip()]


@action("manage_label_versions")
def add_production_miss(workspace: Workspace, label_set: str, query: str, query_text: str, doc_ids: Sequence[str], *,
                        actor: Actor, source: str = PRODUCTION_SOURCE, labels: LabelSet | None = None,
                        labels_file: StoredFile | None = None, known_docs: Collection[str] | None = None,
                        not_in_corpus_yet: bool = False, split: str | None = None) -> AddedCases:
    """Add one query that failed in production, with its relevant docs, to ``label_set`` as a new version (through
    `add_cases`: the case is stored as a file and logged under ``actor.who``; an owner's action).

    Nothing is overwritten silently or guessed: a query id the label set already holds is refused (a correction is
    `add_cases`' job); a doc id outside ``known_docs`` (the documents loaded) is refused unless the person says it is
    ``not_in_corpus_yet``. When the workspace has no ``label_set`` yet, ``labels`` (read from ``labels_file``) are
    saved as its first version first, in the person's name. ``split``: as `production_miss_file`."""
    data = production_miss_file(query, query_text, doc_ids, source, split)
    query = str(query).strip()
    docs = list(dict.fromkeys(d.strip() for d in doc_ids if d and d.strip()))
    if known_docs is not None and not not_in_corpus_yet:
        missing = [d for d in docs if d not in known_docs]
        if missing:
            listed = ", ".join(missing[:5]) + (f" and {len(missing) - 5} more" if len(missing) > 5 else "")
            raise UsageError(f"Query {query}: {listed} {'is' if len(missing) == 1 else 'are'} not among the "
                             f"{len(known_docs):,} documents loaded. Check the id, or mark the docs as not in the "
                             "corpus yet to add the case anyway.")
    if label_set not in set(workspace.label_sets()["name"]):
        if labels is None:
            raise UsageError(f"The label set {label_set} is not in the workspace yet, and no labels were given to "
                             "save as its first version.")
        saved = workspace._save_labels(labels, name=label_set, file=labels_file)
        workspace._record_event(actor.who, "label-set version", saved.ref, "first version (saved to add a production "
                                                                          "miss)")
    latest = workspace.load_labels(label_set)
    held = latest.judgments[latest.judgments["query"].astype(str) == query]
    if len(held) and set(held["doc_id"].astype(str)) != set(docs):  # the same case again adds nothing new
        raise UsageError(f"Query {query} is already in {workspace.label_version(label_set).ref}: give the production "
                         "miss an id of its own (for example prod-002); to correct that query's labels, add cases "
                         "from a file (evalcore workspace add-cases).")
    safe_name = re.sub(r"[^A-Za-z0-9_.-]+", "-", query)[:60] or "case"
    return add_cases(workspace, label_set, data, actor=actor, format="jsonl",
                     note=f"production miss {query}", name=f"production-miss-{safe_name}.jsonl")
