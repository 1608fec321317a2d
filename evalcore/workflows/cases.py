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
from typing import Sequence

from ..access import Actor, require
from ..errors import UsageError
from ..readers.labels import read_labels
from ..store.workspace import LabelVersion, StoredFile, Workspace


@dataclass(frozen=True)
class AddedCases:
    """The version the cases made (``created`` False when the set already had every case) and the stored file."""

    version: LabelVersion
    file: StoredFile


def add_cases(workspace: Workspace, label_set: str, source: str | os.PathLike | bytes, *, actor: Actor,
              format: str | None = None, note: str | None = None, name: str | None = None) -> AddedCases:
    """Store the cases file as given, read it as labels, and add its cases to ``label_set`` (an owner's action: a
    new label-set version; logged under ``actor.who`` when a version is made)."""
    require(actor, "manage_label_versions")
    stored = workspace.put_file(source, name=name)
    cases = read_labels(source, format=format)
    version = workspace.add_cases(label_set, cases, note=note, file=stored)
    if version.created:
        workspace.record_event(actor.who, "label-set version", version.ref, f"{version.change} (from {stored.name})")
    return AddedCases(version, stored)


PRODUCTION_SOURCE = "production"
"""The ``source`` a production miss is labeled with unless the person names another."""


def production_miss_file(query: str, query_text: str, doc_ids: Sequence[str], source: str = PRODUCTION_SOURCE) -> bytes:
    """One production miss as a labels file (JSON Lines: a row per relevant doc, grade 1), after checking each part:
    a query id, the text the customer typed, at least one relevant doc id."""
    query, query_text, source = str(query).strip(), " ".join(str(query_text).split()), str(source).strip()
    docs = list(dict.fromkeys(d.strip() for d in doc_ids if d and d.strip()))
    if not query:
        raise UsageError("A production miss needs a query id (for example prod-001).")
    if not query_text:
        raise UsageError(f"Query {query}: say what the customer typed (the query text).")
    if not docs:
        raise UsageError(f"Query {query}: name at least one relevant doc id (the docs that should have come back).")
    rows = [{"query": query, "doc_id": doc, "grade": 1, "query_text": query_text, "source": source or PRODUCTION_SOURCE}
            for doc in docs]
    return ("\n".join(json.dumps(row, ensure_ascii=False) for row in rows) + "\n").encode("utf-8")


def split_doc_ids(text: str) -> list[str]:
    """Doc ids as a person types them: separated by commas, semicolons or new lines (spaces around them ignored)."""
    return [part.strip() for part in re.split(r"[,;\n]", str(text)) if part.strip()]


def add_production_miss(workspace: Workspace, label_set: str, query: str, query_text: str, doc_ids: Sequence[str], *,
                        actor: Actor, source: str = PRODUCTION_SOURCE) -> AddedCases:
    """Add one query that failed in production, with its relevant docs, to ``label_set`` as a new version (through
    `add_cases`: the case is stored as a file and logged under ``actor.who``; an owner's action)."""
    require(actor, "manage_label_versions")
    data = production_miss_file(query, query_text, doc_ids, source)
    safe_name = re.sub(r"[^A-Za-z0-9_.-]+", "-", str(query).strip())[:60] or "case"
    return add_cases(workspace, label_set, data, actor=actor, format="jsonl",
                     note=f"production miss {str(query).strip()}", name=f"production-miss-{safe_name}.jsonl")
