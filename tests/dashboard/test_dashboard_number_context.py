"""No bare numbers in the dashboard (docs/metrics.md, issue 7 item 5): every page, opened on the sample data through
Streamlit's AppTest (at two k, with "every metric" on, with a saved evaluation and a judging round in the
workspace), shows each metric value with its k, n, model and label-set fingerprint, in the same element or in the
context of its section.

A *section* is what a reader takes in together: the elements of one container (a tab, an expander, the page)
from one subheader to the next; the page's own header line (labels, n, runs and models) belongs to the page's
first section. Each element that shows a metric value is read as a user reads it:

* tables (``st.dataframe``) by column, with the rules of `test_number_context` (a metric column needs k from its
  name, a ``k`` column or the section's text; n from an ``n`` column or the section; the model from the row or the
  section; the fingerprint from the row or the section);
* text (Markdown, captions, alerts, ``st.text``) by line: a line quoting a metric name and a decimal needs n,
  model and fingerprint in the element or its section;
* ``st.metric``: its label and value as one line;
* charts (``st.vega_lite_chart`` / ``st.altair_chart``): when their data hold a metric value, their titles,
  subtitles, axis and tooltip titles (or the section) must name k, n, model and fingerprint.

The checker is tested first on a tiny app with bare numbers, so a lax checker cannot pass everything.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest
from streamlit.testing.v1 import element_tree as et

from evalcore.cli import main

from context_patterns import DECIMAL, FINGERPRINT, K_TEXT, METRIC, METRIC_KEY, N_TEXT
from context_patterns import has_model as _has_model
from context_patterns import table_problems as _table_problems
from context_patterns import without_descriptions as _without_descriptions
from tests.dashboard.apptest_helpers import app, no_exceptions, plain

ROOT = Path(__file__).resolve().parents[2]
S = ROOT / "sample_data"

TEXT_TYPES = {"markdown", "caption", "text", "title", "header", "subheader", "info", "warning", "success", "error"}
HEADINGS = {"header", "subheader"}
TRANSPARENT = {"main", "flex_container", "column", "container", "vertical", "horizontal"}
"""Layout blocks that do not start a section of their own (columns, bordered boxes)."""


# ----------------------------------------------------------------------------- reading the element tree


def _element_text(node) -> str:
    value = getattr(node, "value", "")
    return plain(str(value)) if value is not None else ""


def sections(block: et.Block) -> list[list]:
    """The page's sections: lists of elements read together (see the module docstring)."""
    found: list[list] = []

    def walk(node, current: list) -> list:
        if isinstance(node, et.Block):
            if node.type in TRANSPARENT:
                for child in node.children.values():
                    current = walk(child, current)
                return current
            inner: list = []
            found.append(inner)
            for child in node.children.values():
                inner = walk(child, inner)
            return current
        if node.type in HEADINGS:
            current = []
            found.append(current)
        current.append(node)
        return current

    first: list = []
    found.append(first)
    walk(block, first)
    return [s for s in found if s]


def _section_text(section: list) -> str:
    return "\n".join(_element_text(e) for e in section if e.type in TEXT_TYPES)


def _cell(value: object) -> str:
    return str(value)


def _arrow_rows(data: bytes) -> list[dict]:
    """Rows of a chart's data as Streamlit sends them (Arrow IPC bytes)."""
    import pyarrow as pa

    if not data:
        return []
    return pa.ipc.open_stream(data).read_all().to_pylist()


def _chart_spec(node) -> dict | None:
    """The chart's Vega-Lite spec with the data Streamlit sent beside it put back under ``datasets``."""
    spec = getattr(node.proto, "spec", None)
    if not spec:
        return None
    try:
        spec = json.loads(spec)
    except ValueError:
        return None
    sent = {"(main)": _arrow_rows(node.proto.data.data)} if node.proto.HasField("data") else {}
    sent.update({d.name or f"({i})": _arrow_rows(d.data.data) for i, d in enumerate(node.proto.datasets)})
    if sent:
        spec = {**spec, "datasets": {**spec.get("datasets", {}), **sent}}
    return spec


def _chart_parts(spec: object) -> tuple[list[str], list[dict]]:
    """(every title, subtitle, axis and tooltip title in the spec; every data row in it)."""
    texts: list[str] = []
    rows: list[dict] = []

    def add_title(value: object) -> None:
        if isinstance(value, str):
            texts.append(value)
        elif isinstance(value, list):
            texts.extend(str(v) for v in value)
        elif isinstance(value, dict):
            for key in ("text", "subtitle"):
                if key in value:
                    add_title(value[key])

    def walk(node: object) -> None:
        if isinstance(node, dict):
            for key, value in node.items():
                if key in ("title", "subtitle"):
                    add_title(value)
                elif key == "values" and isinstance(value, list) and value and isinstance(value[0], dict):
                    rows.extend(value)
                elif key == "datasets" and isinstance(value, dict):
                    for data in value.values():
                        if isinstance(data, list):
                            rows.extend(r for r in data if isinstance(r, dict))
                else:
                    walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(spec)
    return texts, rows


# ----------------------------------------------------------------------------- the checks


def text_element_problems(text: str, context: str, where: str) -> list[str]:
    """Lines quoting a metric value without n, model or fingerprint in the element or its section."""
    text, context = _without_descriptions(text), _without_descriptions(context)
    problems = []
    for line in text.splitlines():
        if not DECIMAL.search(line) or not re.search(METRIC, line):
            continue
        place = f"{where}: {line.strip()[:100]!r}"
        both = text + "\n" + context
        if not N_TEXT.search(both):
            problems.append(f"{place}: no n")
        if not _has_model(both):
            problems.append(f"{place}: no model")
        if not FINGERPRINT.search(both):
            problems.append(f"{place}: no label-set fingerprint")
    return problems


def shown_table(element) -> tuple[list[str], list[list[str]]]:
    """The table as the reader sees it: the columns shown (``column_order``, hidden ones left out) under their
    labels (a relabelled column keeps its own name when only that names a metric), cells as text; a
    ``fingerprint`` column's cells read as ``#<fingerprint>``."""
    frame = element.value
    config = json.loads(element.proto.columns or "{}")
    order = list(element.proto.column_order) or [str(c) for c in frame.columns]
    names = [str(c) for c in frame.columns]
    shown = [c for c in order if c in names and not config.get(c, {}).get("hidden")]
    header = []
    for name in shown:
        label = str(config.get(name, {}).get("label") or name)
        header.append(name if re.match(METRIC, name) and not re.match(METRIC, label) else label)
    positions = [names.index(c) for c in shown]
    rows = []
    for row in frame.itertuples(index=False):
        cells = [_cell(row[i]) for i in positions]
        rows.append([f"#{cell}" if name == "fingerprint" else cell for name, cell in zip(shown, cells)])
    return header, rows


def table_problems(element, context: str, where: str) -> list[str]:
    header, rows = shown_table(element)
    quoted = re.search(r"\bk = (\d+)", context)
    if quoted and "k" not in header:  # the section's context line gives k for the whole table
        header, rows = header + ["k"], [row + [quoted.group(1)] for row in rows]
    return _table_problems(context, header, rows, context, where)


def chart_problems(spec: dict, context: str, where: str) -> list[str]:
    texts, rows = _chart_parts(spec)
    metric_rows = [r for r in rows if any(isinstance(v, float) and METRIC_KEY.match(str(k)) for k, v in r.items())]
    metric_rows += [r for r in rows if re.fullmatch(METRIC, str(r.get("metric", ""))) and
                    any(isinstance(v, float) for v in r.values())]
    if not metric_rows:
        return []
    words = plain("\n".join(texts))
    both = words + "\n" + context
    has_k = bool(K_TEXT.search(both)) or any("k" in r for r in metric_rows)
    missing = [what for what, ok in (("k", has_k), ("n", bool(N_TEXT.search(both))), ("model", _has_model(both)),
                                     ("label-set fingerprint", bool(FINGERPRINT.search(both)))) if not ok]
    return [f"{where}: chart {words[:80]!r} shows metric values without {', '.join(missing)}"] if missing else []


def page_problems(at: AppTest, where: str) -> tuple[list[str], int]:
    """Bare numbers on the page now shown by ``at``, and how many metric-bearing elements were checked."""
    problems: list[str] = []
    checked = 0
    for number, section in enumerate(sections(at.main)):
        context = _section_text(section)
        for element in section:
            place = f"{where} section {number}"
            if element.type == "dataframe":
                header, _ = shown_table(element)
                found = table_problems(element, context, f"{place} table {header[:6]}")
                checked += any(METRIC_KEY.match(c) or re.match(METRIC, c) for c in header)
            elif element.type == "metric":
                line = f"{plain(str(element.label))} {element.value}"
                found = text_element_problems(line, context, f"{place} metric")
                if DECIMAL.search(line) and not re.search(METRIC, line):
                    found.append(f"{place} metric {line!r}: no metric name with k")
                checked += 1
            elif element.type in TEXT_TYPES:
                text = _element_text(element)
                found = text_element_problems(text, context, f"{place} {element.type}")
                checked += bool(DECIMAL.search(text) and re.search(METRIC, text))
            elif element.type in ("vega_lite_chart", "arrow_vega_lite_chart"):
                spec = _chart_spec(element)
                found = chart_problems(spec, context, f"{place}") if spec else []
                checked += spec is not None
            else:
                continue
            problems += found
    return problems, checked


# ----------------------------------------------------------------------------- the checker catches bare numbers

BARE_PARTS = {
    "metric": 'st.metric("recall@5", 0.7333)',
    "table": 'st.dataframe(pd.DataFrame({"run": ["base"], "recall@5": [0.7333], "n": [320]}))',
    "table with its context hidden": 'st.dataframe(pd.DataFrame({"run": ["base"], "model": ["acme-embed-base-v2"], '
                                     '"recall@5": [0.7333], "n": [320], "labels": ["labels#109ae50aeaba"]}), '
                                     'column_order=["run", "recall@5"])',
    "caption": 'st.caption("base reaches recall@5 of 0.7333 on n = 320 queries")',
    "chart": 'st.vega_lite_chart(spec={"title": "recall@5", "data": {"values": [{"run": "base", "mean": 0.7333}]},'
             ' "mark": "bar", "encoding": {"x": {"field": "run"}, "y": {"field": "mean", "type": "quantitative"}}})',
}
CONTEXT_LINE = ('st.caption("k = 5 · n = 320 queries · models: base = acme-embed-base-v2 · '
                'labels labels#109ae50aeaba")')


@pytest.mark.parametrize("part", sorted(BARE_PARTS))
def test_the_checker_fails_on_a_bare_number(part: str) -> None:
    at = AppTest.from_string("import pandas as pd\nimport streamlit as st\n" + BARE_PARTS[part], default_timeout=60)
    at.run()
    no_exceptions(at)
    problems, checked = page_problems(at, "fixture")
    assert checked == 1 and problems, part
    # The same element under a subheader of its own does not borrow the context line of another section.
    apart = AppTest.from_string("import pandas as pd\nimport streamlit as st\n" + CONTEXT_LINE + "\n"
                                "st.subheader('Elsewhere')\n" + BARE_PARTS[part], default_timeout=60)
    apart.run()
    assert page_problems(apart, "fixture")[0], part
    # With the context line in its section it passes.
    good = AppTest.from_string("import pandas as pd\nimport streamlit as st\n" + CONTEXT_LINE + "\n" + BARE_PARTS[part],
                               default_timeout=60)
    good.run()
    no_exceptions(good)
    assert page_problems(good, "fixture") == ([], 1), part


# ----------------------------------------------------------------------------- every page


@pytest.fixture(scope="module")
def workspace(tmp_path_factory) -> Path:
    """A workspace with a saved evaluation (for History) and a blind judging round (for the judge page)."""
    folder = tmp_path_factory.mktemp("context-ws")
    assert main(["evaluate", "--labels", str(S / "labels.tsv"), "--run", str(S / "base.trec"), "--run",
                 str(S / "tuned.trec"), "--k", "1,5", "--save", "--workspace", str(folder)]) == 0
    return folder


VIEWS = [
    ("overview", "views/overview.py", {}),
    ("overview k=5 every metric", "views/overview.py", {"k": "5", "more": "1"}),
    ("overview k=3 baseline tuned", "views/overview.py", {"k": "3", "baseline": "tuned"}),
    ("choose k", "views/choose_k.py", {}),
    ("choose k k=5", "views/choose_k.py", {"k": "5"}),
    ("choose k against tokens", "views/choose_k.py", {"axis": "tokens"}),
    ("failures", "views/failures.py", {}),
    ("failures k=5 query", "views/failures.py", {"k": "5", "query": "q006"}),
    ("history", "views/history.py", {}),
    ("sources", "views/sources.py", {}),
    ("sources k=5", "views/sources.py", {"k": "5"}),
    ("integrity", "views/integrity.py", {}),
    ("integrity k=5", "views/integrity.py", {"k": "5"}),
    ("judge", "views/judge.py", {"query": "q006", "depth": "3"}),
    ("data", "views/data.py", {}),
]
TITLES = {"views/overview.py": "Overview", "views/choose_k.py": "Choose k", "views/failures.py": "Failures",
          "views/history.py": "History", "views/sources.py": "Sources", "views/integrity.py": "Integrity",
          "views/judge.py": "Blind judging", "views/data.py": "Data"}


@pytest.mark.parametrize("name,page,params", VIEWS, ids=[v[0] for v in VIEWS])
def test_every_page_shows_each_metric_with_k_n_model_and_labels(name, page, params, workspace, monkeypatch) -> None:
    monkeypatch.setenv("EVALCORE_WORKSPACE", str(workspace))
    at = app(page, **params)
    assert at.title[0].value == TITLES[page], name
    problems, checked = page_problems(at, name)
    if page not in ("views/data.py", "views/judge.py"):
        assert checked >= 1, f"{name}: no metric value found on the page (did it render?)"
    assert not problems, "\n".join(dict.fromkeys(re.sub(r" row '.*?':", ":", p) for p in problems))
