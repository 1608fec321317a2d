"""Hostile input, round three, on ``evalcore vectors``: absurd approximate-index parameters and an index over the
memory budget are one line and exit 2 before anything is built (item 5); degenerate vectors (one dimension, every
doc the same) warn about ties once, with a count, not once per variant and cutoff (item 12)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from cli_runner import run_cli

ROOT = Path(__file__).resolve().parents[2]
S = ROOT / "sample_data"
V = S / "vectors"
TUNED = ["--labels", str(S / "labels.tsv"), "--query-vectors", str(V / "tuned.queries.npy"),
         "--doc-vectors", str(V / "tuned.docs.npy")]


@pytest.mark.parametrize("spec, said", [
    ("hnsw:ef=99999999999999999999999", "The index 'hnsw:ef=99999999999999999999999' needs ef of at most 4,096 "
                                        "(candidates per search; more is exact search done slowly), got a number of "
                                        "23 digits."),
    ("hnsw:ef=2000000000", "The index 'hnsw:ef=2000000000' needs ef of at most 4,096 (candidates per search; more "
                           "is exact search done slowly), got 2,000,000,000."),
    ("hnsw:m=100000", "The index 'hnsw:m=100000' needs m of at most 256 (links per doc; each takes 8 bytes of every "
                      "doc's memory), got 100,000."),
    ("hnsw:m=400000", "The index 'hnsw:m=400000' needs m of at most 256 (links per doc; each takes 8 bytes of every "
                      "doc's memory), got 400,000."),
    ("ivf:nlist=32:nprobe=40", "The index 'ivf:nlist=32:nprobe=40' searches nprobe = 40 lists of its nlist = 32: use "
                               "at most 32."),
])
def test_absurd_index_parameters_are_one_line_and_exit_2_before_anything_is_built(spec: str, said: str) -> None:
    done = run_cli("vectors", *TUNED, "--index", spec)
    assert done.returncode == 2, done.stderr
    assert done.stderr == f"evalcore: error: {said}\n" and done.stdout == ""


def test_an_index_over_the_memory_budget_is_one_line_with_the_estimate_and_the_budget() -> None:
    done = run_cli("vectors", *TUNED, "--index", "hnsw:m=64", env={"EVALCORE_INDEX_MEMORY_MB": "0.5"})
    assert done.returncode == 2, done.stderr
    assert done.stderr == (
        "evalcore: error: The index 'hnsw:m=64' on 503 docs x 256 dims would need about 1.5 MB of memory (HNSW: docs "
        "x (2 x (4 x dims + 8 x m) + 24) bytes), over the budget of 0.5 MB (EVALCORE_INDEX_MEMORY_MB): use a smaller "
        "m or fewer dims (:dims=D), or raise the budget.\n")
    assert done.stdout == ""
    bad = run_cli("vectors", *TUNED, "--index", "hnsw:m=64", env={"EVALCORE_INDEX_MEMORY_MB": "plenty"})
    assert bad.returncode == 2 and bad.stderr == ("evalcore: error: EVALCORE_INDEX_MEMORY_MB must be a positive number "
                                                  "of megabytes. Got 'plenty'.\n")
    fits = run_cli("vectors", *TUNED, "--index", "hnsw:m=16:dims=16", "--build-threads", "1", "--format", "json",
                   env={"EVALCORE_INDEX_MEMORY_MB": "0.5"})  # m = 16 on 16 dims fits the same budget
    assert fits.returncode == 0, fits.stderr


def _degenerate(tmp_path: Path) -> list[str]:
    """Every query and every doc the same one-dimensional vector: every score ties."""
    for name in ("queries", "docs"):
        rows = len((V / f"tuned.{name}.ids.txt").read_text().split())
        np.save(tmp_path / f"{name}.npy", np.ones((rows, 1), dtype=np.float32))
        (tmp_path / f"{name}.ids.txt").write_text((V / f"tuned.{name}.ids.txt").read_text())
    return ["--labels", str(S / "labels.tsv"), "--query-vectors", str(tmp_path / "queries.npy"),
            "--doc-vectors", str(tmp_path / "docs.npy")]


def test_degenerate_vectors_warn_about_ties_once_with_a_count(tmp_path) -> None:
    args = _degenerate(tmp_path)
    done = run_cli("vectors", *args, "--k", "1,5,10")
    assert done.returncode == 0, done.stderr
    ties = [line for line in done.stderr.splitlines() if "tie_across_cutoff" in line]
    assert ties == ["evalcore: warning: [tie_across_cutoff] x224: 3 variants of 3 (float32-full, int8-full, "
                    "binary-full) have equal scores across a cutoff at ranks 1 and 2 (up to 224 queries), at ranks 5 "
                    "and 6 (up to 224 queries) and at ranks 10 and 11 (up to 224 queries); recall, hit, precision, "
                    "ndcg, judged at k = 1, 5 and 10 depend on the tie rule (equal scores ordered by doc id, "
                    "descending)"]
    data = json.loads(run_cli("vectors", *args, "--format", "json").stdout)
    codes = [w["code"] for w in data["warnings"]]
    assert len(codes) == len(set(codes)) and codes.count("tie_across_cutoff") == 1  # each kind once


def test_ties_in_some_variants_name_those_variants() -> None:
    done = run_cli("vectors", *TUNED, "--dims", "full,64", "--precision", "float32,binary")
    [ties] = [line for line in done.stderr.splitlines() if "tie_across_cutoff" in line]
    assert "2 variants of 4 (binary-full, binary-64) have equal scores across a cutoff at ranks 1 and 2" in ties
