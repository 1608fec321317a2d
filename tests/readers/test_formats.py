"""The format table: the readers, the command line's help and docs/formats.md all say what it says."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import pytest

import evalcore
from evalcore.cli.main import build_parser
from evalcore.errors import InputError, UsageError
from evalcore.readers.formats import FORMATS, KINDS, REGISTRY, detect_format, file_stem, formats_for
from evalcore.readers.sources import Source

ROOT = Path(__file__).resolve().parents[2]
DOC_COLUMNS = {"labels": "labels", "run": "runs", "documents": "documents"}


def _docs_table() -> dict[str, list[str]]:
    """docs/formats.md's table under "## Formats": format name -> its cells."""
    text = (ROOT / "docs" / "formats.md").read_text(encoding="utf-8")
    section = text.split("\n## Formats\n", 1)[1].split("\n## ", 1)[0]
    rows = [line.strip().strip("|").split("|") for line in section.splitlines() if line.startswith("| `")]
    return {re.fullmatch(r"\s*`(\w+)`\s*", cells[0]).group(1): [c.strip() for c in cells] for cells in rows}


def test_the_docs_table_lists_exactly_the_formats_and_what_each_holds() -> None:
    table = _docs_table()
    assert list(table) == list(FORMATS), "docs/formats.md's format table must list the formats of the registry"
    header = ["format", "also called", "endings", "labels", "runs", "documents"]
    for name, cells in table.items():
        found = REGISTRY[name]
        assert re.findall(r"`(\w+)`", cells[1]) == list(found.aliases), f"aliases of {name}"
        assert re.findall(r"(?<!\*)`(\.\w+)`(?!\*)", cells[2]) == list(found.endings), f"endings of {name}"
        assert re.findall(r"\*`(\.\w+)`\*", cells[2]) == list(found.likely_endings), f"likely endings of {name}"
        for kind in KINDS:
            cell = cells[header.index(DOC_COLUMNS[kind])]
            takes = found.parser(kind) is not None
            assert (cell != "no") == takes, f"docs/formats.md says {name} {'cannot' if takes else 'can'} hold {kind}"


def test_every_format_option_of_the_command_line_names_the_formats_of_its_kind() -> None:
    kinds = {"--labels-format": "labels", "--cases-format": "labels", "--run-format": "run",
             "--docs-format": "documents"}
    seen = set()
    stack = [build_parser()]
    while stack:
        parser = stack.pop()
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                stack.extend(action.choices.values())
            for option in action.option_strings:
                if option in kinds:
                    names = formats_for(kinds[option])
                    assert action.help.endswith(f"{', '.join(names[:-1])} or {names[-1]}"), (option, action.help)
                    seen.add(option)
    assert seen == set(kinds)
    assert formats_for("documents") == ("csv", "tsv", "parquet", "jsonl")
    assert formats_for("labels") == formats_for("run") == FORMATS


@pytest.mark.parametrize("name, content, expected", [
    ("scores.json", b"PAR1 not really", "parquet"),  # first bytes beat the ending
    ("run.trec", b"query\tdoc_id\tscore\n", "trec"),  # a deciding ending beats the content
    ("qrels.tsv", b"1\t0\t31715818\t1\n", "trec"),  # a TREC line beats a likely ending
    ("labels.txt", b"query,doc_id\nq1,d1\n", "csv"),  # a header beats a likely ending
    ("labels", b'{"query": "q1", "relevant": ["d1"]}\n', "jsonl"),
    ("labels", b'{"q1": ["d1"]}', "json"),
    ("labels.csv", b"a;b\nq1;d1\n", "csv"),  # the content says nothing: the likely ending
    ("labels.dat", b"a;b\n", "trec"),  # nothing says anything: the default
])
def test_detection_tries_first_bytes_then_endings_then_content(name, content, expected) -> None:
    assert detect_format(Source(name, content)) == expected


def test_names_and_aliases_in_any_case_and_stems_without_any_ending() -> None:
    assert detect_format(Source("x.csv", b""), " BEIR ") == "tsv"
    assert detect_format(Source("x.csv", b""), ".NDJSON") == "jsonl"
    with pytest.raises(UsageError, match="must be one of trec, csv, tsv, parquet, json, jsonl, qrels"):
        detect_format(Source("x.csv", b""), "xml")
    assert [file_stem(n) for n in ("runs/base.trec.gz", "base.meta.json", "qrels.txt", "v1.2.run")] == \
        ["base", "base.meta", "qrels", "v1.2"]


def test_a_kind_a_format_cannot_hold_is_refused_naming_the_format(tmp_path) -> None:
    path = tmp_path / "docs.json"
    path.write_text('{"d1": "text"}')
    with pytest.raises(InputError, match="expected a documents file in CSV, TSV, JSONL or Parquet .*got 'json format'"):
        evalcore.read_documents(path)
