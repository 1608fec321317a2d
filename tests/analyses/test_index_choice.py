"""The index to take (`evalcore.analyses.index_choice`): the same variant a plain reading of the study's numbers
picks (smallest, then faster, then higher scoring, among the variants not significantly worse than the full
vectors), the same sentence in ``evalcore vectors``' table and JSON, and the full vectors kept when every smaller
index loses."""

from __future__ import annotations

import json
from pathlib import Path

from cli_runner import run_cli

from evalcore.analyses.decision import decide
from evalcore.analyses.index_choice import index_choice
from evalcore.analyses.index_study import IndexSizeSettings, index_size_study
from evalcore.metrics.split import scoring_labels
from evalcore.report.index_size import index_choice_line
from tests.vectors.planted import planted

ROOT = Path(__file__).resolve().parents[2]
S = ROOT / "sample_data"
V = S / "vectors"
TUNED = ["--labels", str(S / "labels.tsv"), "--query-vectors", str(V / "tuned.queries.npy"),
         "--doc-vectors", str(V / "tuned.docs.npy"), "--model", "acme-embed-large-v2-kestrel-ft"]


def plain_choice(data: dict) -> str:
    """The rule, read off ``evalcore vectors --format json`` with nothing but sorting."""
    kept = [v for v in data["variants"]
            if v["vs_full"] is None or not (v["vs_full"]["p_adjusted"] < 0.05 and v["vs_full"]["diff"] < 0)]
    metric = data["settings"]["compared_on"]
    kept.sort(key=lambda v: (v["index_bytes"], -(v["queries_per_second"] or 0), -v["metrics"][metric]["mean"]))
    return kept[0]["name"]


def study(noise: float, dims: tuple[str, ...]):
    queries, docs, labels = planted(n_docs=600, n_queries=80, dims=48, noise=noise)
    settings = IndexSizeSettings(dims=dims, precisions=("float32", "int8", "binary"), k="1,10")
    return index_size_study(labels, scoring_labels(labels), queries, docs, settings, model="planted").report


def test_the_cli_takes_the_index_a_plain_reading_of_its_numbers_takes() -> None:
    done = run_cli("vectors", *TUNED, "--dims", "full,128,64", "--precision", "float32,int8,binary", "--k", "1,10",
                   "--format", "json")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    take = data["take"]
    assert take["name"] == plain_choice(data)
    assert take["rule"] == "smallest no worse than full vectors"
    assert take["sentence"].startswith(("Take ", "Keep the full vectors"))
    table = run_cli("vectors", *TUNED, "--dims", "full,128,64", "--precision", "float32,int8,binary", "--k", "1,10")
    lines = table.stdout.splitlines()
    assert take["sentence"] in lines  # the same sentence, above the table
    assert lines.index(take["sentence"]) < next(i for i, line in enumerate(lines) if line.startswith("index size for"))


def test_a_smaller_index_that_scores_no_worse_is_taken_and_the_sentence_gives_its_interval() -> None:
    report = study(noise=0.3, dims=("full", "32"))  # easy queries: int8 keeps them, binary loses some
    choice = index_choice(report)
    assert not choice.is_reference
    kept = [v for v in report.variants if v.name not in choice.worse]
    assert choice.take.index_bytes == min(v.index_bytes for v in kept) < report.reference.index_bytes
    line = index_choice_line(choice)
    assert line.startswith(f"Take {choice.take.variant.words}: its index is ") and "x smaller, and it scores no worse" in line
    assert "95% CI" in line and f"n = {choice.comparison.n}" in line


def test_the_full_vectors_are_kept_when_every_smaller_index_loses() -> None:
    report = study(noise=1.6, dims=("full", "4"))  # hard queries, 4 dims and binary: real losses
    worse = {name for name, found in report.comparisons.items() if found.significant and found.diff < 0}
    choice = index_choice(report)
    assert set(choice.worse) == worse
    kept = [v for v in report.variants if v.name not in worse]
    assert choice.take.name == min(kept, key=lambda v: v.index_bytes).name
    if choice.is_reference:
        assert index_choice_line(choice).startswith("Keep the full vectors: every smaller index scores worse")


def test_the_decision_carries_the_same_index_choice() -> None:
    report = study(noise=0.3, dims=("full", "32"))
    decision = decide(report.evaluation, 10, index_studies=(report,))
    assert decision.index == (index_choice(report),)
    assert decision.to_dict()["index"] == [index_choice(report).to_dict()]
