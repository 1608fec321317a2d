"""The sampled queries as a queries file: what ``judge`` commands, the Data page and ``--queries`` read
(`evalcore.readers.queries`), each query with its source and stratum for a later label-set version to carry.

Columns: ``query_id`` (``log-`` and 12 hex digits of the text's SHA-256: the same text keeps its id), ``query_text``
(normalised, personal data masked), ``source`` (``customer log``), ``stratum``, ``count`` (how often the query,
with its near-duplicates, was logged), ``logged_doc_ids`` and ``clicked_doc_ids`` (the docs the log says it returned
and the docs clicked, `evalcore.logs.logged_docs`, separated by ``;``; empty when the log says none), which a judging
pool adds to the runs' docs. The format follows the file's ending: ``.csv`` (cells starting with ``=``,
``+``, ``-`` or ``@`` get a leading ``'``, as in every CSV evalcore writes), ``.tsv``, ``.parquet``; anything else
is JSON lines (exact, and what BEIR's ``queries.jsonl`` is).
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from ..errors import InputError
from ..safe_text import to_csv

COLUMNS = ("query_id", "query_text", "source", "stratum", "count", "logged_doc_ids", "clicked_doc_ids")
ID_SEPARATOR = ";"
"""Between the doc ids of one cell (an id holding it is never logged: `evalcore.logs.logged_docs.kept_ids`)."""


def queries_frame(sample: list[dict]) -> pd.DataFrame:
    """One row per sampled query, `COLUMNS`."""
    def joined(key: str) -> list[str]:
        return [ID_SEPARATOR.join(r.get(key) or ()) for r in sample]

    return pd.DataFrame({"query_id": [r["query_id"] for r in sample], "query_text": [r["query"] for r in sample],
                         "source": [r["source"] for r in sample], "stratum": [r["stratum"] for r in sample],
                         "count": pd.array([r["count"] for r in sample], dtype="int64"),
                         "logged_doc_ids": joined("logged_doc_ids"), "clicked_doc_ids": joined("clicked_doc_ids")},
                        columns=list(COLUMNS))


def write_queries(sample: list[dict], path: str) -> str:
    """Write the queries file at ``path`` (format from its ending); the format written."""
    frame = queries_frame(sample)
    ending = Path(path).suffix.lower()
    try:
        if ending == ".csv":
            Path(path).write_text(to_csv(frame), encoding="utf-8", newline="")
            return "CSV"
        if ending == ".tsv":
            frame.to_csv(path, sep="\t", index=False, lineterminator="\n")
            return "TSV"
        if ending in (".parquet", ".pq"):
            frame.to_parquet(path, index=False)
            return "Parquet"
        with open(path, "w", encoding="utf-8", newline="") as handle:
            for row in frame.to_dict(orient="records"):
                handle.write(json.dumps({**row, "count": int(row["count"])}, ensure_ascii=False) + "\n")
        return "JSON lines"
    except OSError as exc:
        raise InputError(f"a file that can be written ({exc.strerror})", source=path) from None
