"""No bare numbers (docs/metrics.md, issue 7 item 5): every metric value any CLI command prints or any report exports
travels with its metric and k, its n, the run's model and the label set's fingerprint.

The checker reads what a user reads: text and Markdown tables (by column), prose lines, JSON (by the keys around
a value), CSV (by the row's columns) and the HTML report's tables. It is itself tested on bare numbers first, so a
lax checker cannot pass everything.
"""

from __future__ import annotations

import csv
import io
import json
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest
from cli_runner import run_cli
from context_patterns import DECIMAL, FINGERPRINT, METRIC, METRIC_KEY, N_TEXT
from context_patterns import has_model as _has_model
from context_patterns import table_problems as _table_problems
from context_patterns import without_descriptions as _without_descriptions

ROOT = Path(__file__).resolve().parents[2]
S = ROOT / "sample_data"
LABELS = ["--labels", str(S / "labels.tsv")]
RUNS = ["--run", str(S / "base.trec"), "--run", str(S / "tuned.trec")]


# ----------------------------------------------------------------------------- text and Markdown


def _tables(lines: list[str]):
    """(title, header cells, rows of cells, row line numbers) for every text or Markdown table."""
    i = 0
    while i < len(lines):
        line = lines[i]
        if re.fullmatch(r"[-\s]*-[-\s]*", line) and i > 0 and lines[i - 1].strip():  # a text table's dash line
            spans = [m.span() for m in re.finditer(r"-+", line)]
            starts = [s for s, _ in spans] + [10 ** 6]

            def cells(text: str) -> list[str]:
                return [text[starts[j]:starts[j + 1]].strip() for j in range(len(spans))]

            header = cells(lines[i - 1])
            above = i - 2  # the lines right above the header (no blank line between) are the table's caption
            while above >= 0 and lines[above].strip():
                above -= 1
            title = "\n".join(lines[above + 1:i - 1])
            rows, numbers = [], []
            j = i + 1
            while j < len(lines) and lines[j].strip():
                rows.append(cells(lines[j]))
                numbers.append(j)
                j += 1
            yield title, header, rows, numbers
            i = j
            continue
        if re.fullmatch(r"\|(?:\s*:?-+:?\s*\|)+", line.strip()) and i > 0:  # a Markdown table's rule
            split = lambda text: [c.strip() for c in re.split(r"(?<!\\)\|", text.strip())[1:-1]]  # noqa: E731
            header = split(lines[i - 1])
            title = next((lines[t] for t in range(i - 2, -1, -1) if lines[t].startswith("#")), "")
            rows, numbers = [], []
            j = i + 1
            while j < len(lines) and lines[j].strip().startswith("|"):
                rows.append(split(lines[j]))
                numbers.append(j)
                j += 1
            yield title, header, rows, numbers
            i = j
            continue
        i += 1


def text_problems(text: str, where: str) -> list[str]:
    """Bare metric numbers in a text or Markdown document."""
    text = _without_descriptions(text)
    lines = text.splitlines()
    problems: list[str] = []
    in_table: set[int] = set()
    for title, header, rows, numbers in _tables(lines):
        problems += _table_problems(title, header, rows, text, where)
        in_table.update(numbers)
    paragraphs, current = [], []
    for number, line in enumerate(lines):
        if line.strip():
            current.append(number)
        else:
            paragraphs.append(current)
            current = []
    paragraphs.append(current)
    for paragraph in paragraphs:
        block = "\n".join(lines[n] for n in paragraph)
        for n in paragraph:
            line = lines[n]
            if n in in_table or not DECIMAL.search(line) or not re.search(METRIC, line):
                continue  # prose without a metric name quotes no metric value
            place = f"{where}: line {line.strip()[:100]!r}"
            if not N_TEXT.search(block):
                problems.append(f"{place}: no n")
            if not (_has_model(block) or _has_model(text)):
                problems.append(f"{place}: no model")
            if not FINGERPRINT.search(text):
                problems.append(f"{place}: no label-set fingerprint")
    return problems


# ----------------------------------------------------------------------------- JSON and CSV

def json_problems(data: object, where: str) -> list[str]:
    problems: list[str] = []

    def context(ancestors: list[dict]) -> set[str]:
        keys: set[str] = set()
        for node in ancestors:
            keys |= set(node)
            for value in node.values():
                if isinstance(value, dict) and "fingerprint" in value:
                    keys.add("fingerprint")
        return keys

    def walk(node: object, ancestors: list[dict], path: list[str]) -> None:
        if isinstance(node, dict):
            for key, value in node.items():
                if key in ("settings", "warnings"):
                    continue
                walk(value, ancestors + [node], path + [str(key)])
        elif isinstance(node, list):
            for i, value in enumerate(node):
                walk(value, ancestors, path + [str(i)])
        elif isinstance(node, float) and path and METRIC_KEY.match(path[-1]):
            keys = context(ancestors)
            named = [p for p in path if re.fullmatch(METRIC, p)] + \
                [str(a.get("metric")) for a in ancestors if "metric" in a]
            has_k = any(re.fullmatch(METRIC, m) for m in named) or "k" in keys or "blind" in path[-1]
            missing = [what for what, ok in (("k", has_k), ("n", bool({"n", "n_queries"} & keys)),
                                             ("model", bool({"model", "models"} & keys)),
                                             ("fingerprint", "fingerprint" in keys)) if not ok]
            if missing:
                problems.append(f"{where}: {'/'.join(path)} = {node} lacks {', '.join(missing)}")

    walk(data, [], [])
    return problems


def csv_problems(text: str, where: str) -> list[str]:
    rows = list(csv.DictReader(io.StringIO(text)))
    problems = []
    for row in rows:
        for key, value in row.items():
            if not METRIC_KEY.match(key or "") or not DECIMAL.fullmatch((value or "").strip()):
                continue
            has_k = bool(re.fullmatch(METRIC, key)) or (row.get("k") or "").strip().isdigit() or \
                bool(re.fullmatch(METRIC, row.get("metric") or ""))
            missing = [what for what, ok in (("k", has_k), ("n", bool(row.get("n") or row.get("n_queries"))),
                                             ("model", bool(row.get("model"))),
                                             ("fingerprint", bool(row.get("fingerprint")))) if not ok]
            if missing:
                problems.append(f"{where}: {key} = {value} in row {dict(list(row.items())[:3])} lacks "
                                f"{', '.join(missing)}")
                break
    return problems


# ----------------------------------------------------------------------------- HTML


class _HtmlTables(HTMLParser):
    """Tables of an HTML page as (title, header, rows), and all of its text."""

    def __init__(self) -> None:
        super().__init__()
        self.tables, self.text, self.heading = [], [], ""
        self._cell = None
        self._row = None
        self._in_heading = False

    def handle_starttag(self, tag, attrs):
        if tag in ("h1", "h2", "h3"):
            self._in_heading, self.heading = True, ""
        elif tag == "table":
            self.tables.append((self.heading, [], []))
        elif tag == "tr":
            self._row = []
        elif tag in ("td", "th"):
            self._cell = []

    def handle_endtag(self, tag):
        if tag in ("h1", "h2", "h3"):
            self._in_heading = False
        elif tag in ("td", "th") and self._cell is not None and self._row is not None:
            self._row.append((tag, "".join(self._cell).strip()))
            self._cell = None
        elif tag == "tr" and self._row is not None and self.tables:
            _, header, rows = self.tables[-1]
            if all(kind == "th" for kind, _ in self._row) and not header:
                header.extend(text for _, text in self._row)
            else:
                rows.append([text for _, text in self._row])
            self._row = None

    def handle_data(self, data):
        self.text.append(data)
        if self._in_heading:
            self.heading += data
        if self._cell is not None:
            self._cell.append(data)


def html_problems(html: str, where: str) -> list[str]:
    parser = _HtmlTables()
    parser.feed(html)
    doc = " ".join(parser.text)
    problems = []
    for title, header, rows in parser.tables:
        problems += _table_problems(title, header, rows, doc, where)
    return problems + text_problems("\n".join(" ".join(t.split()) for t in parser.text), where + " (prose)")


# ----------------------------------------------------------------------------- the checker catches bare numbers


@pytest.mark.parametrize("bad", [
    "metric  mean\n------  ------\nrecall@5  0.7333\n",  # no n, model, fingerprint
    "run   metric    mean    n  model\n----  --------  ------  ---  ------------------\nbase  recall@5  0.7333  320  "
    "acme-embed-base-v2\n",  # no fingerprint anywhere
    "labels#109ae50aeaba\nrun   mean    n  model\n----  ------  ---  ------------------\nbase  0.7333  320  "
    "acme-embed-base-v2\n",  # which metric, which k?
    "labels#109ae50aeaba n = 320\nbase reaches recall@5 of 0.7333\n",  # prose without a model
    "| run | recall@5 | model |\n|---|---|---|\n| base | 0.7333 | acme\\-embed\\-base\\-v2 |\n",  # Markdown, no n/labels
])
def test_the_checker_fails_on_bare_numbers_in_text(bad: str) -> None:
    assert text_problems(bad, "bad")


def test_the_checker_fails_on_bare_numbers_in_json_csv_and_html() -> None:
    assert json_problems({"runs": [{"name": "base", "metrics": {"recall@5": {"mean": 0.73}}}]}, "bad")
    assert json_problems({"labels": {"fingerprint": "109ae50aeaba"}, "rows": [{"model": "m", "n": 3, "mean": 0.5}]},
                         "bad")  # no k
    assert csv_problems("run,metric,mean,n\nbase,recall@5,0.73,320\n", "bad")
    assert html_problems("<h2>Leaderboard</h2><table><tr><th>run</th><th>recall@5</th></tr>"
                         "<tr><td>base</td><td>0.7333</td></tr></table>", "bad")
    good = {"labels": {"fingerprint": "109ae50aeaba"}, "runs": [{"model": "m", "n_queries": 3,
                                                                 "metrics": {"recall@5": {"mean": 0.5}}}]}
    assert json_problems(good, "good") == []


# ----------------------------------------------------------------------------- every output


def run(args: list[str]) -> str:
    out = run_cli(*args)
    assert out.returncode == 0, out.stderr
    return out.stdout


def _outputs(tmp_path: Path):
    ev = ["evaluate", *LABELS, *RUNS, "--k", "1,5"]
    yield "evaluate table", ev, "text"
    yield "evaluate markdown", ev + ["--format", "markdown", "--per-query"], "text"
    yield "evaluate per-query table", ev + ["--per-query"], "text"
    yield "evaluate json", ev + ["--format", "json", "--per-query", "--slice-by", "source"], "json"
    yield "evaluate csv", ev + ["--format", "csv"], "csv"
    yield "evaluate csv per query", ev + ["--format", "csv", "--per-query"], "csv"
    yield "evaluate csv slices", ev + ["--format", "csv", "--slice-by", "source", "--slice-by", "blind"], "csv"
    yield "evaluate slices table", ev + ["--slice-by", "source"], "text"
    for fmt, kind in (("table", "text"), ("markdown", "text"), ("json", "json"), ("csv", "csv")):
        yield f"evaluate tune split {fmt}", ev + ["--split", "tune", "--format", fmt], kind
    ws = ["--workspace", str(tmp_path / "ws")]
    yield "evaluate holdout revealed", ev + ["--split", "holdout", "--reveal", *ws, "--format", "json"], "json"
    yield "evaluate holdout revealed table", ev + ["--split", "holdout", "--reveal", *ws], "text"
    yield "evaluate all revealed table", ev + ["--split", "all", "--reveal", *ws], "text"
    yield "evaluate all revealed csv", ev + ["--split", "all", "--reveal", *ws, "--format", "csv"], "csv"
    yield "compare holdout revealed json", ["compare", *LABELS, *RUNS, "--split", "holdout", "--reveal", *ws,
                                            "--format", "json"], "json"
    cmp_ = ["compare", *LABELS, *RUNS, "--run", str(S / "tuned-256d.trec"), "--baseline", "base", "--target-diff", "0.03"]
    yield "compare table", cmp_, "text"
    yield "compare markdown", cmp_ + ["--format", "markdown"], "text"
    yield "compare json", cmp_ + ["--format", "json"], "json"
    bud = ["budget", *LABELS, "--run", str(S / "tuned.trec"), "--docs", str(S / "docs.jsonl"), "--max-k", "6"]
    yield "budget table", bud, "text"
    yield "budget json", bud + ["--format", "json"], "json"
    yield "budget csv", bud + ["--format", "csv"], "csv"
    aud = ["audit", *LABELS, *RUNS, "--k", "1,5"]
    yield "audit table", aud, "text"
    yield "audit markdown", aud + ["--format", "markdown"], "text"
    yield "audit json", aud + ["--format", "json"], "json"
    rep = ["report", *LABELS, *RUNS, "--k", "5", "--no-charts", "--docs", str(S / "docs.jsonl")]
    yield "report markdown", rep, "text"
    yield "report html", rep + ["--format", "html"], "html"


def test_every_cli_output_and_export_carries_k_n_model_and_labels(tmp_path) -> None:
    problems: list[str] = []
    checked = 0
    for name, args, kind in _outputs(tmp_path):
        out = run(args)
        assert out.strip(), name
        if kind == "json":
            found = json_problems(json.loads(out), name)
        elif kind == "csv":
            found = csv_problems(out, name)
        elif kind == "html":
            found = html_problems(out, name)
        else:
            found = text_problems(out, name)
        problems += found
        checked += len(DECIMAL.findall(out))
    assert checked > 1000  # the outputs really were full of numbers
    assert not problems, "\n".join(dict.fromkeys(p.split(" row ")[0] for p in problems))


def test_saved_evaluations_and_their_exports_carry_context(tmp_path) -> None:
    ws = ["--workspace", str(tmp_path / "ws")]
    run(["evaluate", *LABELS, *RUNS, "--k", "1,5", "--save", *ws])
    problems = []
    for args, kind in ((["workspace", "show", "evaluation", "latest", *ws], "text"),
                       (["workspace", "show", "evaluation", "latest", *ws, "--format", "json"], "json"),
                       (["report", *ws, "--no-charts"], "text"),
                       (["report", *ws, "--no-charts", "--format", "html"], "html")):
        out = run(args)
        name = " ".join(args[:3])
        problems += (json_problems(json.loads(out), name) if kind == "json" else
                     html_problems(out, name) if kind == "html" else text_problems(out, name))
    failures_csv = tmp_path / "failures.csv"
    run(["report", *ws, "--no-charts", "--output", str(tmp_path / "r.md"), "--failures-csv", str(failures_csv)])
    problems += csv_problems(failures_csv.read_text(encoding="utf-8"), "failures csv")
    assert not problems, "\n".join(dict.fromkeys(p.split(" row ")[0] for p in problems))


def test_every_output_on_split_labels_names_the_split_of_its_numbers(tmp_path) -> None:
    """The sample labels carry a tune/holdout split: every output names the split it is on (issue 7 item 3), and
    none shows numbers on all 320 queries unless a reveal asked for them."""
    for name, args, kind in _outputs(tmp_path):
        out = run(args).replace("\\", "")
        if " all revealed" in name:
            assert "labels#109ae50aeaba" in out or "labels,109ae50aeaba" in out, name  # the whole set, named
            assert ("on all queries" in out or ",all\n" in out), name
        else:
            side = "holdout" if "holdout" in name else "tune"
            assert f"labels:{side}" in out, name  # in the label set every number carries
            assert "labels#109ae50aeaba" not in out and "labels,109ae50aeaba" not in out, name
            if kind == "json":
                data = json.loads(out)
                assert data["split"]["split"] == side, name
            if kind == "csv" and "split" in next(csv.reader(io.StringIO(out))):
                assert {r["split"] for r in csv.DictReader(io.StringIO(out))} == {side}, name
