"""The sample's query log (``sample_data/logs/help-centre.ubi.jsonl``): a month of the help centre's searches as
OpenSearch User Behavior Insights writes them, so the Real queries page and ``evalcore sample`` have a log to show
on a first visit.

Called by ``make_sample_data.py`` once the labels and runs are written, from those files alone. What customers
typed is the labeled queries' own text (the team-written ones are not searched by customers), typed as often as a
heavy-tailed (Zipf) draw says: a few head queries every day, most once or twice. Some searches are typed
differently (a letter dropped, the words in lower case with a trailing question), some carry an email address or a
phone number (the page masks them before showing anything), some find nothing (the zero-result stratum) and some are
tried again within seconds in the same session (the reformulated stratum). Each search returns the base run's top
`RESULTS` documents (the production index is the base model), and a share of them is followed by a click on one of
those results, a relevant one more often than not. Each line is one UBI document: a ``ubi_queries`` search or a
``ubi_events`` click, in time order.

Deterministic: one seeded generator, stdlib + numpy only.
"""

from __future__ import annotations

import csv
import json
from datetime import datetime, timedelta, timezone
from pathlib import Path

import numpy as np

SEARCHES = 2_400
"""Searches in the month."""
RESULTS = 10
"""Results each search returns: the base run's top 10."""
ZIPF = 1.25
"""How heavy the head is: query i of the ranking is typed in proportion to 1 / i ** ZIPF."""
P_TYPO, P_ZERO, P_RETRY, P_CLICK, P_PERSONAL = 0.08, 0.07, 0.06, 0.45, 0.01
"""Shares of searches typed with a letter dropped, finding nothing, tried again at once, clicked, carrying an email
address or a phone number."""
START = datetime(2026, 11, 1, tzinfo=timezone.utc)
LOG = Path("logs") / "help-centre.ubi.jsonl"


def _read(out: Path) -> tuple[list[tuple[str, str]], dict[str, list[str]], dict[str, set[str]]]:
    """The customers' labeled queries (id, text) in file order, the base run's ranked docs per query, and each
    query's relevant docs."""
    texts, relevant = {}, {}
    with open(out / "labels.tsv", newline="", encoding="utf-8") as f:
        for row in csv.DictReader(f, delimiter="\t"):
            if row["source"] != "team_written":
                texts.setdefault(row["query"], row["query_text"])
            if int(row["grade"]) > 0:
                relevant.setdefault(row["query"], set()).add(row["doc_id"])
    ranked: dict[str, list[str]] = {}
    with open(out / "base.trec", encoding="utf-8") as f:
        for line in f:
            query, _, doc, *_ = line.split()
            ranked.setdefault(query, []).append(doc)
    return list(texts.items()), ranked, relevant


def _typed(text: str, rng: np.random.Generator) -> str:
    """The same search typed another way: a letter dropped, or lower case with a question mark."""
    if len(text) > 6 and rng.random() < 0.6:
        at = int(rng.integers(1, len(text) - 1))
        return text[:at] + text[at + 1:]
    return text.lower().rstrip("?") + "?"


def write_log(out: Path, seed: int) -> dict:
    """Write the log under ``out`` (``logs/help-centre.ubi.jsonl``); what it holds, for the script's summary."""
    rng = np.random.default_rng([seed, 40])
    queries, ranked, relevant = _read(out)
    order = rng.permutation(len(queries))
    weights = 1.0 / np.arange(1, len(queries) + 1) ** ZIPF
    picks = order[rng.choice(len(queries), size=SEARCHES, p=weights / weights.sum())]
    seconds = np.sort(rng.integers(0, 30 * 24 * 3600, size=SEARCHES))
    lines, counts = [], {"searches": 0, "clicks": 0, "zero": 0, "retries": 0, "personal": 0}
    for i, (pick, at) in enumerate(zip(picks, seconds)):
        query_id, text = queries[int(pick)]
        client = f"client-{int(rng.integers(0, 600)):04d}"
        when = START + timedelta(seconds=int(at))
        attempts = [text]
        if rng.random() < P_TYPO:
            attempts = [_typed(text, rng)]
        if rng.random() < P_PERSONAL:
            attempts = [attempts[0] + (" for jane.doe@example.com" if rng.random() < 0.5 else " call 555-0142 8899")]
            counts["personal"] += 1
        if rng.random() < P_RETRY:  # a first try that found nothing, then the words the docs use
            attempts = [_typed(text, rng), *attempts]
            counts["retries"] += 1
        for n, typed in enumerate(attempts):
            found = [] if (n < len(attempts) - 1 or rng.random() < P_ZERO) else ranked.get(query_id, [])[:RESULTS]
            counts["zero"] += not found
            search = f"s{i:05d}-{n}"
            stamp = when + timedelta(seconds=8 * n)
            lines.append({"application": "help-centre", "query_id": search, "client_id": client,
                          "user_query": typed, "query_response_object_ids": found,
                          "timestamp": stamp.isoformat().replace("+00:00", "Z")})
            counts["searches"] += 1
            if found and rng.random() < P_CLICK:
                good = [d for d in found if d in relevant.get(query_id, ())]
                clicked = good[0] if good and rng.random() < 0.7 else found[int(rng.integers(0, len(found)))]
                lines.append({"application": "help-centre", "action_name": "click", "query_id": search,
                              "client_id": client, "timestamp": (stamp + timedelta(seconds=5)).isoformat()
                              .replace("+00:00", "Z"),
                              "event_attributes": {"object": {"object_id": clicked, "object_id_field": "doc_id"},
                                                   "position": {"ordinal": found.index(clicked) + 1}}})
                counts["clicks"] += 1
    path = out / LOG
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        for line in lines:
            f.write(json.dumps(line, ensure_ascii=False, sort_keys=False) + "\n")
    return counts


def summarize_log(counts: dict) -> str:
    return (f"query log ({LOG.as_posix()}): {counts['searches']:,} searches, {counts['clicks']:,} clicks, "
            f"{counts['zero']:,} found nothing, {counts['retries']:,} tried again, {counts['personal']:,} with personal "
            "data")
