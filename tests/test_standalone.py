"""The repository stands alone: a clone with nothing beside it has every file its code, tests and docs use.

Nothing tracked may point outside the repository (a sibling folder of the developers' machines, or the team's
internal contract file): a user's clone has neither.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUTSIDE = ("SPEC" + ".md", ".." + "/shared")  # spelled in two parts so this file does not match itself


def test_no_tracked_file_points_outside_the_repository():
    tracked = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    found = []
    for name in filter(None, tracked.decode().split("\0")):
        path = ROOT / name
        if not path.is_file():
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        for number, line in enumerate(text.splitlines(), start=1):
            if any(word in line for word in OUTSIDE):
                found.append(f"{name}:{number}: {line.strip()[:100]}")
    assert not found, "these lines point outside the repository (use docs/formats.md, docs/metrics.md or tests/fixtures):\n" \
                      + "\n".join(found[:40]) + (f"\n... and {len(found) - 40} more" if len(found) > 40 else "")


def test_the_reference_docs_exist_and_are_linked_from_the_readme():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    for doc in ("docs/formats.md", "docs/metrics.md"):
        assert (ROOT / doc).is_file(), doc
        assert doc in readme, f"the README should link {doc}"


def test_trec_eval_fixtures_carry_their_licence_and_source():
    fixtures = ROOT / "tests" / "fixtures" / "trec_eval"
    assert (fixtures / "LICENSE.md").read_text(encoding="utf-8").startswith("The code for the original trec_eval")
    assert "usnistgov/trec_eval" in (fixtures / "README.md").read_text(encoding="utf-8")
