"""The Real queries page's model: an uploaded query log's counts, strata and seeded sample, and its handing over to
Blind judging.

From `evalcore.analyses.uploaded_log.sample_log_bytes` (``evalcore sample`` on the uploaded bytes: personal data is
masked by the core before anything here sees a query) and the sentences ``evalcore sample`` prints
(`evalcore.report.log_sample`). The log itself is never stored: it holds what customers typed, personal data
included, so it is held in this server's memory only (a link to it works while the server runs). The sampled
queries file, masked, is stored through the person's session (`dashboard.uploads.Uploads.add_file`: role checked,
recorded under their name) when it is handed over: a data set whose queries file is the sample, which the Blind
judging page offers (`dashboard.page_models.judge`), each query's pool holding the docs its log gave (its latest
results and the docs clicked). When the log lists results, they go along as a run named ``production``
(`evalcore.logs.production_run`), stored the same way, scored once the judged sample is frozen into labels.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from evalcore.analyses.uploaded_log import sample_log_bytes
from evalcore.logs.production_run import PRODUCTION, production_text
from evalcore.logs.queries_out import queries_frame
from evalcore.logs.strata import ALLOCATIONS, STRATA
from evalcore.metrics.dataset import Dataset, FileRef, RunSpec
from evalcore.readers.formats import file_stem
from evalcore.report.log_sample import logged_sentence, pii_sentence, plan_sentence, read_sentence
from evalcore.safe_text import to_csv

from dashboard import loading
from dashboard.loading import Loaded

__all__ = ["ALLOCATIONS", "DEFAULT_N", "LOG_FORMATS", "MAX_N", "RealQueries", "draw", "hold", "log_key",
           "send_to_judging"]

LOG_FORMATS = ("detect", "ubi", "openinference", "table")
"""The kind of log beside the upload: told from its content (detect), or named as ``--log-format`` names it."""
DEFAULT_N = 50
"""Queries drawn unless the link or the person asks for another number."""
MAX_N = 5_000
ZERO = STRATA[3]


@dataclass(frozen=True)
class RealQueries:
    """What the page shows of one log and one draw."""

    file: str
    counts: dict  # queries, distinct, clusters (and what was read) as `LogSample.to_dict` gives them
    sentences: tuple[str, ...]  # read, personal data, the draw: `evalcore sample`'s own sentences
    strata: pd.DataFrame  # stratum, queries, share (of logged queries), distinct, clusters, labeled, sampled
    zero_result_share: float | None  # logged queries that found nothing; None when the log says no results
    sample: pd.DataFrame  # query, count, stratum, query_id, variants, logged, clicked: the queries drawn, masked
    queries_file: bytes  # the sample as a queries file (CSV: query_id, query_text, source, stratum, count, and
    queries_name: str  # logged_doc_ids and clicked_doc_ids: the docs the log gave each query)
    warnings: tuple[str, ...]
    production_file: bytes = b""  # the logged results as a TREC run named production; empty: the log lists none
    production_name: str = ""


def log_key(ref: FileRef) -> str:
    """The stored log's key in a link: the first 12 hex digits of its sha256 (the workspace finds it by them)."""
    return ref.sha256[:12]


def hold(name: str, data: bytes) -> FileRef:
    """An uploaded log, held in this server's memory only: never written to the workspace, where the personal data
    the sample masks would stay."""
    return loading.uploads().add_file(name, data)


SAMPLE_LOG = "logs/help-centre.ubi.jsonl"
"""The sample's query log (`scripts/sample_log.py`): a month of the help centre's searches and clicks, as UBI."""


def sample_log() -> FileRef:
    """The sample's query log, held like an upload (in this server's memory only), for a first visit to try."""
    return hold(Path(SAMPLE_LOG).name, (loading.SAMPLE_DIR / SAMPLE_LOG).read_bytes())


def _store_sample(name: str, data: bytes) -> Loaded:
    """A file of the sample (its queries file, masked, or its production run: doc ids only) stored in the workspace
    through this person's session (recorded as theirs); the `FileRef`, or why it could not be kept."""
    return loading.attempt(loading.uploads().add_file, name, data, session=loading.session())


def draw(dataset: Dataset, log: FileRef, log_format: str | None, n: int, seed: int, allocation: str) -> Loaded:
    """``evalcore sample`` on ``log`` (``--n n --seed seed --allocate allocation``), leaving out the queries the data
    set's labels hold already: the `RealQueries`, or the core's one line naming the file and what was expected."""
    data = loading.file_bytes(log)
    if data is None:
        return Loaded(error=f"{log.name}: a file this server no longer holds (upload it again).")
    labels = loading.labels(dataset.labels)
    found = loading.attempt(sample_log_bytes, data, log.name, log_format=None if log_format == "detect" else log_format,
                            labels=labels.value if labels.ok else None, n=int(n), seed=int(seed),
                            allocation=allocation)
    if not found.ok:
        return found
    sample = found.value
    result = sample.to_dict()
    if not result["queries"]:
        return Loaded(error=f"{log.name}: expected a query log with at least one query, got none "
                            f"({read_sentence(result)})")
    strata = pd.DataFrame(result["strata"], columns=["name", "queries", "distinct", "clusters", "labeled", "sampled"])
    strata = strata.rename(columns={"name": "stratum"})
    strata.insert(2, "share", strata["queries"] / max(result["queries"], 1))
    zero = strata.loc[strata["stratum"] == ZERO, "share"]
    rows = result["sample"]
    table = pd.DataFrame({"query": [r["query"] for r in rows], "count": [r["count"] for r in rows],
                          "stratum": [r["stratum"] for r in rows], "query_id": [r["query_id"] for r in rows],
                          "variants": [" | ".join(r["variants"]) for r in rows],
                          "logged": [r["logged"] for r in rows], "clicked": [r["clicked"] for r in rows]},
                         columns=["query", "count", "stratum", "query_id", "variants", "logged", "clicked"])
    counts = {key: result[key] for key in ("read", "queries", "distinct", "clusters", "strata", "logged_docs")}
    stem = f"{file_stem(log.name)}.sample-n{int(n)}-seed{int(seed)}-{allocation}"
    sentences = (read_sentence(result), pii_sentence(result), plan_sentence(sample), logged_sentence(result))
    return Loaded(RealQueries(log.name, counts, sentences,
                              strata, float(zero.iloc[0]) if result["read"]["results"] and len(zero) else None,
                              table, to_csv(queries_frame(rows)).encode("utf-8"), f"{stem}.csv",
                              tuple(w["message"] for w in result["warnings"]),
                              production_text(rows).encode("utf-8"), f"{stem}.{PRODUCTION}.trec"))


def send_to_judging(dataset: Dataset, found: RealQueries) -> Loaded:
    """Store the sampled queries file (through this person's session) and keep the data set with it as its queries
    file: the key of that data set, which the Blind judging page opens on, offering the sampled queries with their
    source and stratum, each pool with the docs the log gave the query. The data set's own queries file, if it had
    one, is replaced by the sample (the page says so). When the log lists results they are stored too, as the run
    ``production`` of the data set (in place of an earlier one); without them no run is added."""
    stored = _store_sample(found.queries_name, found.queries_file)
    if not stored.ok:
        return stored
    judged = dataset.with_queries(stored.value)
    if found.production_file:
        run = _store_sample(found.production_name, found.production_file)
        if not run.ok:
            return run
        others = tuple(spec for spec in judged.runs if spec.name != PRODUCTION)
        judged = judged.with_runs(others + (RunSpec(file=run.value, name=PRODUCTION, model=PRODUCTION),))
    return loading.attempt(loading.register, judged)

