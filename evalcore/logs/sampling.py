"""From a query log to the queries to label: read, count, normalise, mask, merge near-duplicates, stratify and draw.

`sample_log` is the one entry point (the ``evalcore sample`` command's); its `LogSample` says what was read, how many
queries (logged rows with a text) and distinct normalised queries there were, the groups they merged into, the
personal data masked, every stratum with its counts, and the sample, each query with the docs its log gave
(`evalcore.logs.logged_docs`: its latest results, the docs clicked). `LogSample.to_dict` is the command's JSON.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..readers.labels import LabelSet, read_labels
from ..warning_log import EvalWarning
from .detect import detect, log_file
from .logged_docs import LoggedDocs, logged_docs, may_list, none_logged
from .near_duplicates import THRESHOLD, Merged, merge_near_duplicates
from .normalise import normalise_texts
from .personal_data import mask_texts, stronger_recogniser
from .scan import QueryCounts, count_queries, relation_of
from .strata import STRATA, Plan, allocate, assign_strata, draw, listed_strata, planned_size

SOURCE = "customer log"
"""The ``source`` of every sampled query: the Sources page sets customers' queries (any source but team-written)
against the team's own."""
MAX_VARIANTS = 10
"""Near-duplicates listed with a sampled query."""
LARGEST_GROUPS = 20
"""Groups of near-duplicates listed in the output."""


@dataclass
class LogSample:
    """What `sample_log` found and drew (see the module docs)."""

    counts: QueryCounts
    merged: Merged
    threshold: float
    clusters: int
    strata: list[dict]
    sample: list[dict]
    groups: list[dict]
    plan: Plan
    allocation: str
    seed: int
    recogniser: str
    shown_masked: int = 0
    warnings: list[EvalWarning] = field(default_factory=list)
    logged: LoggedDocs | None = None

    def to_dict(self) -> dict:
        counts = self.counts
        read = {"file": counts.shape.log.name, "format": counts.shape.kind, "layout": counts.shape.layout,
                "records": counts.rows.get("records", 0), "events": counts.rows.get("event", 0),
                "bulk_actions": counts.rows.get("action", 0), "other_spans": counts.rows.get("span", 0),
                "without_text": counts.rows.get("blank", 0), "too_long": counts.rows.get("too_long", 0),
                "results": counts.results, "sessions": counts.sessions}
        return {"read": read, "queries": counts.queries, "distinct": counts.table.num_rows,
                "clusters": self.clusters,
                "near_duplicates": {"threshold": self.threshold, "looked_at": self.merged.looked_at,
                                    "groups": self.merged.groups, "merged": self.merged.merged,
                                    "largest": self.groups},
                "pii": {"queries": counts.masked_queries, "distinct": counts.masked_distinct,
                        "kinds": counts.masked_kinds, "shown_masked": self.shown_masked, "action": "masked",
                        "recogniser": self.recogniser},
                "strata": self.strata, "sample": self.sample,
                "logged_docs": {"with_results": self.logged.with_results if self.logged else 0,
                                "with_clicks": self.logged.with_clicks if self.logged else 0,
                                "left_out": self.logged.left_out if self.logged else 0},
                "plan": self.plan.to_dict(),
                "settings": {"seed": self.seed, "allocate": self.allocation, "source": SOURCE},
                "warnings": [w.to_dict() for w in self.warnings]}


def query_id(text: str) -> str:
    """A sampled query's id: the same text has the same id in every sample (the first 12 hex digits of SHA-256)."""
    return "log-" + hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]


def sample_log(path: str, *, log_format: str | None = None, labels: LabelSet | str | None = None,
               labels_format: str | None = None, n: int | None = None, seed: int = 0,
               allocation: str = "proportional", target_diff: float | None = None,
               threshold: float = THRESHOLD) -> LogSample:
    """Read the query log at ``path`` and draw the queries to label (module docs of this package's modules say
    each step). ``labels``: queries already labeled, left out and counted against the planned size."""
    allocate({}, {}, 0, allocation)  # the options are checked before the log is read
    planned_size(n, 0, target_diff)
    counts = count_queries(detect(log_file(path), log_format))
    table = counts.table
    texts = table["query"].to_pylist()
    count = table["count"].to_numpy()
    merged = merge_near_duplicates(texts, count, threshold)
    leader = merged.leader
    leaders = np.flatnonzero(leader == np.arange(len(leader)))
    position = np.full(len(leader), -1)
    position[leaders] = np.arange(len(leaders))
    group = position[leader]  # each query's group, groups in the order of their leader's text

    def summed(column: str) -> np.ndarray:
        return np.bincount(group, weights=table[column].to_numpy(), minlength=len(leaders)).astype(np.int64)

    group_count, members = summed("count"), np.bincount(group, minlength=len(leaders))
    stratum = assign_strata(group_count, summed("known"), summed("empty"), summed("timed"), summed("reformulated"),
                            results=counts.results, sessions=counts.sessions)
    labeled_set, labeled_n = _labeled(labels, labels_format)
    labeled = np.zeros(len(leaders), dtype=bool)
    if labeled_set:
        hit = pc.is_in(table["query"], value_set=pa.array(sorted(labeled_set), pa.large_string())).to_numpy(
            zero_copy_only=False)
        if any(value.startswith("log-") for value in labeled_set):  # ids of an earlier sample
            hit |= np.array([query_id(texts[i]) in labeled_set for i in leaders])[group]
        np.logical_or.at(labeled, group, hit)
    plan = planned_size(n, labeled_n, target_diff)
    names = listed_strata(results=counts.results, sessions=counts.sessions)
    eligible = ~labeled
    available = {s: int(((stratum == STRATA.index(s)) & eligible).sum()) for s in names}
    volume = {s: int(group_count[stratum == STRATA.index(s)].sum()) for s in names}
    quota = allocate(available, volume, plan.n, allocation)
    chosen = draw(stratum, eligible, group_count, quota, seed)
    events = counts.rows.get("event", 0)
    logged = (logged_docs(counts.shape, relation_of(counts.shape), _picked(counts, group, chosen), len(chosen),
                          events=events > 0)
              if may_list(counts.shape, counts.results, events) else none_logged(len(chosen)))
    shown = _Shown()
    followers = _followers(leader, count)
    sample = [_row(texts, leaders, followers, i, int(group_count[i]), STRATA[stratum[i]], shown) for i in chosen]
    for row, results, clicks in zip(sample, logged.results, logged.clicks):
        row.update({"logged": len(results or ()), "clicked": len(clicks), "logged_doc_ids": list(results or ()),
                    "clicked_doc_ids": list(clicks)})
    strata = [{"name": s, "queries": volume[s], "distinct": int(members[stratum == STRATA.index(s)].sum()),
               "clusters": int((stratum == STRATA.index(s)).sum()),
               "labeled": int(((stratum == STRATA.index(s)) & labeled).sum()), "sampled": quota[s]}
              for s in names]
    groups = _largest(texts, leaders, followers, group_count, members, shown)
    warnings = list(counts.warnings) + _short_warnings(plan, quota, counts) + _left_out_warnings(logged, counts)
    return LogSample(counts, merged, threshold, len(leaders), strata, sample, groups, plan, allocation, seed,
                     shown.name, shown.masked, warnings, logged)


def _picked(counts: QueryCounts, group: np.ndarray, chosen: np.ndarray) -> pa.Table:
    """Every logged text of a sampled query by its hash (``h``), with that query's place in the sample (``pos``):
    its own spelling, its repeats and the near-duplicates merged into it."""
    place = np.full(int(group.max()) + 1 if len(group) else 0, -1, dtype=np.int32)
    place[chosen] = np.arange(len(chosen), dtype=np.int32)
    pos = place[group[counts.texts["row"].to_numpy()]]
    kept = pos >= 0
    return pa.table({"h": counts.texts["h"].filter(pa.array(kept)), "pos": pa.array(pos[kept], pa.int32())})


class _Shown:
    """Presidio (when installed) over every text shown, counting what it masks; the patterns alone otherwise."""

    def __init__(self) -> None:
        self.recogniser = stronger_recogniser()
        self.name = "patterns + presidio" if self.recogniser else "patterns"
        self.masked = 0

    def __call__(self, text: str) -> str:
        if self.recogniser is None:
            return text
        masked, kinds = self.recogniser(text)
        self.masked += bool(kinds)
        return masked


def _followers(leader: np.ndarray, count: np.ndarray) -> dict[int, list[int]]:
    """Each leader's merged queries (indices), most frequent first: only the merged ones are looked at."""
    merged = np.flatnonzero(leader != np.arange(len(leader)))
    merged = merged[np.lexsort((merged, -count[merged]))]
    out: dict[int, list[int]] = {}
    for i in merged.tolist():
        out.setdefault(int(leader[i]), []).append(i)
    return out


def _row(texts: list[str], leaders: np.ndarray, followers: dict[int, list[int]], index: int, total: int,
         stratum: str, shown: _Shown) -> dict:
    text = shown(texts[leaders[index]])
    variants = followers.get(int(leaders[index]), [])
    return {"query": text, "count": total, "stratum": stratum, "query_id": query_id(text), "source": SOURCE,
            "variants": [shown(texts[v]) for v in variants[:MAX_VARIANTS]], "variants_total": len(variants)}


def _largest(texts: list[str], leaders: np.ndarray, followers: dict[int, list[int]], group_count: np.ndarray,
             members: np.ndarray, shown: _Shown) -> list[dict]:
    """The `LARGEST_GROUPS` groups of near-duplicates with the most members, with their members."""
    many = np.flatnonzero(members > 1)
    top = many[np.lexsort((many, -group_count[many], -members[many]))][:LARGEST_GROUPS]
    return [{"query": shown(texts[leaders[i]]), "count": int(group_count[i]),
             "members": [shown(texts[v]) for v in followers.get(int(leaders[i]), [])[:MAX_VARIANTS]],
             "members_total": int(members[i]) - 1} for i in top]


def _labeled(labels: LabelSet | str | None, labels_format: str | None) -> tuple[set[str], int]:
    """The labels' queries, normalised and masked as log queries are (texts and ids both: labels whose query column
    holds the text, and ids of an earlier sample, are found too), and how many labeled queries there are."""
    if labels is None:
        return set(), 0
    found = labels if isinstance(labels, LabelSet) else read_labels(labels, format=labels_format)
    values = [str(q) for q in found.queries]
    info = found.query_info
    if "query_text" in info.columns:
        values += [str(t) for t in info["query_text"].dropna()]
    normal = normalise_texts(pa.array(values, pa.large_string()))
    masked = mask_texts(normal)[0]
    return set(pc.drop_null(masked).to_pylist()) | set(values), len(found.queries)


def _left_out_warnings(logged: LoggedDocs, counts: QueryCounts) -> list[EvalWarning]:
    if not logged.left_out:
        return []
    return [EvalWarning("doc_ids_left_out", f"{counts.shape.log.name}: {logged.left_out:,} logged doc ids left out "
                                            "(white space or ';', too long, or personal data: not an id to carry)",
                        logged.left_out)]


def _short_warnings(plan: Plan, quota: dict[str, int], counts: QueryCounts) -> list[EvalWarning]:
    drawn = sum(quota.values())
    if drawn >= plan.n:
        return []
    return [EvalWarning("sample_short", f"{counts.shape.log.name}: {drawn:,} queries sampled of the {plan.n:,} "
                                        "asked for: the log holds no more that the labels lack", plan.n - drawn)]
