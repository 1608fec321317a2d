"""The README cannot drift from the code: every metric, CLI option and command it promises exists, and
the CLI example it shows is what the CLI prints today."""

from __future__ import annotations

import argparse
import re
import shlex
import subprocess
import sys
from pathlib import Path

from evalcore.cli.main import build_parser
from evalcore.metrics.measures import DESCRIPTIONS

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")


def subcommands() -> dict[str, argparse.ArgumentParser]:
    parser = build_parser()
    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(action.choices)


def test_every_metric_is_documented() -> None:
    for name in DESCRIPTIONS:
        shown = "mrr" if name == "mrr" else f"{name}@k"
        assert shown in README, f"README does not document {shown}"


def test_every_cli_option_is_documented() -> None:
    for name, sub in subcommands().items():
        assert f"evalcore {name}" in README, f"README does not show `evalcore {name}`"
        for action in sub._actions:
            for option in action.option_strings:
                if option.startswith("--") and option != "--help":
                    assert option in README, f"README does not document {name} {option}"


def test_the_two_commands_exist_and_ci_runs_the_test_command() -> None:
    assert "bash scripts/start.sh" in README and "bash scripts/test.sh" in README
    assert (ROOT / "scripts" / "start.sh").is_file() and (ROOT / "scripts" / "test.sh").is_file()
    assert "bash scripts/test.sh" in (ROOT / ".ci" / "run").read_text()


def test_readme_cli_example_output_is_current() -> None:
    """The first ```console block after the marker is a command and its exact output."""
    block = re.search(r"<!-- cli-example -->\s*```console\n\$ (.+?)\n(.*?)```", README, re.S)
    assert block, "README lacks the marked CLI example"
    command, shown = block.group(1), block.group(2)
    args = shlex.split(command.replace("\\\n", " "))
    assert args[0] == "evalcore"
    out = subprocess.run([sys.executable, "-m", "evalcore.cli", *args[1:]], capture_output=True, text=True,
                         cwd=ROOT, timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == shown.strip()


def test_the_readme_glossary_says_what_the_dashboard_says():
    """Every term the dashboard explains is in the README's glossary with the same sentence (one meaning each)."""
    from evalcore.glossary import GLOSSARY, as_markdown

    section = README.split("## Glossary", 1)[1].split("\n## ", 1)[0]
    assert as_markdown() in section, "README's glossary is out of date: paste evalcore.glossary.as_markdown()"
    for term in ("Holm correction", "BCa bootstrap", "Wilson interval", "Kneedle elbow", "sign-flip test", "mid-p",
                 "fingerprint", "model line", "judged@k"):
        assert term in GLOSSARY


def test_every_term_a_page_explains_is_in_the_glossary():
    """`layout.words(...)` and `layout.explain(...)` on the pages name only terms the glossary has (a typo would
    crash the page for everyone)."""
    import re

    from evalcore.glossary import GLOSSARY

    named = set()
    for page in (ROOT / "dashboard" / "views").glob("*.py"):
        text = page.read_text(encoding="utf-8")
        for call in re.findall(r"layout\.words\(([^)]*)\)", text):
            named |= set(re.findall(r'"([^"]+)"', call))
        named |= set(re.findall(r'layout\.explain\("([^"]+)"\)', text))
    assert named and named <= set(GLOSSARY), sorted(named - set(GLOSSARY))
