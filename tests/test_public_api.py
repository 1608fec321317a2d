"""The Python API the README shows keeps working: its example runs as written and prints the numbers it promises,
and every name it uses is importable from the package root."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import evalcore

ROOT = Path(__file__).resolve().parents[1]


def _readme_python() -> str:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    return re.search(r"\n## Python\n+```python\n(.*?)```", readme, re.S).group(1)


def test_the_readme_python_example_runs_and_gives_its_numbers(monkeypatch):
    monkeypatch.chdir(ROOT)
    scope: dict = {}
    exec(compile(_readme_python(), "README.md (Python)", "exec"), scope)  # noqa: S102 - the README's own code
    r = scope["r"]
    assert (round(r["recall@1"], 4), round(r["recall@5"], 4), round(r["mrr"], 4)) == (0.1667, 1.0, 0.6111)
    assert list(scope["ev"].summary.columns[:4]) == ["run", "model", "metric", "k"]
    assert scope["tune"].n_queries == 224 and scope["tune"].split == "tune"


def test_every_root_name_the_readme_uses_exists():
    used = set(re.findall(r"\bevalcore\.([A-Za-z_]+)\b", _readme_python()))
    assert used, "the README's Python example uses no evalcore name"
    missing = sorted(name for name in used if not hasattr(evalcore, name))
    assert not missing, f"names the README uses but the package root lacks: {missing}"
    assert set(evalcore.__all__) >= used


@pytest.mark.parametrize("name", evalcore.__all__)
def test_every_public_name_resolves(name):
    assert getattr(evalcore, name) is not None
