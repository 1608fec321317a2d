"""Answer-grade files as the evaluation tools write them, each turned into one table: a row per graded answer, the
query's id and text, and one raw column per grade (`evalcore.readers.grades` checks the values).

The tool is recognised by content (`detect_grades_format`), or named (``--grades-format``):

* ``ragas``: ``result.to_pandas()`` saved as CSV, TSV, JSON lines, Parquet or a JSON list of records (``NaN`` allowed,
  as Python's json writes it): ``user_input`` (or ``question``), the text columns ragas keeps, one column per metric;
* ``deepeval``: DeepEval's ``.deepeval/.latest_test_run.json``: ``testRunData.testCases[]``, each with ``name``,
  ``input`` and ``metricsData[]`` (``name``, ``score``); ``hyperparameters`` kept as metadata;
* ``ragchecker``: RAGChecker's output JSON: ``results[]`` with ``query_id``, ``query`` and ``metrics{...}``;
* ``promptfoo``: ``promptfoo eval -o results.json`` (``results.version`` 3): ``results.results[]`` with ``vars``,
  ``score``, ``success``, ``namedScores``, ``provider``;
* ``table``: CSV, TSV, JSON lines, Parquet or a JSON list of records with ``query_id`` or ``query_text`` and a column
  per grade.

Tables are read columnar (pyarrow, the house's `read_arrow_table`); the JSON tools' nested records are flattened with
pandas. Every row keeps a place (line, row, test case or result number) for the messages about it.

Asked for (``notes``: the dashboard shows them beside a query's grade, the command line never reads them), each row's
answer and the judge's reasons come along as text (`ParsedGrades.notes`): a table's `ANSWER_FIELDS` and
`REASON_FIELDS` columns, DeepEval's ``actualOutput`` and each metric's ``reason``, RAGChecker's ``response``,
promptfoo's ``response.output`` and ``gradingResult.reason`` (or the result's ``error``).
"""

from __future__ import annotations

import csv
import json
import re
import weakref
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.json as pa_json

from ..errors import InputError, invalid_parameter
from .arrow_tables import ArrowTable, read_arrow_table
from .formats import JSON_DOCUMENT, content_shape
from .json_files import content_lines
from .parquet_files import read_parquet_columns
from .sources import Source, first_content_line

GRADE_FORMATS = ("ragas", "deepeval", "ragchecker", "promptfoo", "table")
"""The tools whose grade files are read, as ``--grades-format`` names them."""
ID_COLUMNS = ("query_id", "qid", "query-id")
"""A grade table's query id column (first found wins)."""
TEXT_COLUMNS = ("query_text", "user_input", "question", "query", "input")
"""A grade table's query text column (first found wins): ``query`` is text here, as RAGChecker and promptfoo use it."""
TEXT_FIELDS = frozenset({
    "response", "answer", "reference", "ground_truth", "ground_truths", "retrieved_contexts", "contexts",
    "retrieved_context_ids", "reference_contexts", "reference_context_ids", "multi_responses", "rubrics",
    "reference_tool_calls", "actual_output", "expected_output", "context", "retrieval_context", "gt_answer",
    "retrieved_context", "reason", "comment", "notes",
})
"""Columns a grade table may carry that are not grades (the answer, the contexts, a judge's reason): not read."""
ANSWER_FIELDS = ("response", "answer", "actual_output")
"""A grade table's column holding the answer graded (first found wins), read only when notes are asked for."""
REASON_FIELDS = ("reason", "comment", "notes")
"""A grade table's column holding the judge's reason for the row's grades (first found wins), likewise."""
QUERY_VARS = ("query", "question", "input", "user_input", "prompt")
"""The promptfoo vars taken as the query's text when ``--query-var`` is not given (first found wins)."""
RAGAS_COLUMNS = frozenset({"user_input", "question", "retrieved_contexts", "contexts", "response", "answer"})
"""Columns that mark a table as ragas' ``result.to_pandas()``."""
_UNNAMED = re.compile(r"^(unnamed: \d+)?$")  # the index column pandas writes without a name


@dataclass(frozen=True)
class ParsedGrades:
    """What a grade file holds: ``grades`` (one raw column per grade, in the file's order), each row's query ``ids``
    and ``texts`` (None when the file has none), how its rows are named (``where``: line, row, test case, result),
    ``place(i)`` (the number and the text of row ``i`` as written, for messages), metadata and notes."""

    format: str
    grades: pd.DataFrame
    ids: pd.Series | None
    texts: pd.Series | None
    where: str
    place: Callable[[int], tuple[int, str]]
    metadata: dict = field(default_factory=dict)
    errored: np.ndarray | None = None  # rows the tool marks as failed to run (promptfoo errors): no grades
    notes: pd.DataFrame | None = None  # with ``notes``: each row's answer and the judge's reasons (`answer_notes`)


# ----------------------------------------------------------------------------- which tool wrote it


def detect_grades_format(src: Source, explicit: str | None = None) -> str:
    """The tool that wrote ``src`` (one of `GRADE_FORMATS`): the named one, else the JSON document's shape (DeepEval's
    ``testRunData``, promptfoo's ``results.results``, RAGChecker's ``results[]``), else a table (``ragas`` when its
    columns are ragas', else ``table``)."""
    if explicit is not None:
        key = explicit.strip().lower()
        if key not in GRADE_FORMATS:
            raise invalid_parameter("grades format", "one of " + ", ".join(GRADE_FORMATS), explicit)
        return key
    if container(src) == "json":
        value = read_json_nan(src)
        if isinstance(value, Mapping):
            return _json_tool(value, src)
    return "table"


def _json_tool(value: Mapping, src: Source) -> str:
    if "testRunData" in value or "testCases" in value:
        return "deepeval"
    results = value.get("results")
    if isinstance(results, Mapping) and isinstance(results.get("results"), list):
        return "promptfoo"
    if isinstance(results, list):
        return "ragchecker"
    if "testRunLink" in value:
        raise InputError("DeepEval test cases (testRunData): this .latest_test_run.json holds only a link to Confident "
                         "AI (testRunLink); run DeepEval without logging in to keep the test cases on disk",
                         source=src.name)
    raise InputError(_WHAT, source=src.name, text="a JSON object with keys " + ", ".join(map(str, list(value)[:8])))


_WHAT = ("a grade file: ragas records (a JSON list or a table), DeepEval's .latest_test_run.json (testRunData), "
         "RAGChecker output (results[]), promptfoo -o results.json (results.results[]), or a table with query_id or "
         "query_text and a column per grade")


def container(src: Source) -> str:
    """How the file is stored: ``parquet``, ``json`` (one document), ``jsonl``, ``tsv`` or ``csv``."""
    head = src.head()
    if head.startswith(b"PAR1"):
        return "parquet"
    if src.extension in (".parquet", ".pq"):
        return "parquet"
    start = head.lstrip()
    if start.startswith(b"["):
        return "json"
    if start.startswith(b"{"):
        return "json" if content_shape(head) == JSON_DOCUMENT else "jsonl"
    if src.extension in (".jsonl", ".ndjson"):
        return "jsonl"
    if src.extension in (".tsv", ".tab"):
        return "tsv"
    line = first_content_line(src) or ""
    return "tsv" if "\t" in line and "," not in line else "csv"


def parse_grades(src: Source, fmt: str, *, run: str | None = None, query_var: str | None = None,
                 named: bool = False, notes: bool = False) -> ParsedGrades:
    """``src`` read as the tool ``fmt`` wrote it (``run``: the run the file belongs to, which picks one provider's rows
    from a promptfoo file that holds several; ``query_var``: the promptfoo var holding the query; ``named``: the
    format was given, not detected, so a table is called what it was called; ``notes``: each row's answer and the
    judge's reasons too)."""
    if fmt in ("deepeval", "ragchecker", "promptfoo"):
        if container(src) != "json":
            raise InputError(f"{fmt}'s JSON output (a JSON document)", source=src.name,
                             text=f"a {container(src)} file")
        value = read_json_nan(src)
        if not isinstance(value, Mapping):
            raise InputError(f"{fmt}'s JSON output (a JSON object)", source=src.name, text=type(value).__name__)
        if fmt == "deepeval":
            return _deepeval(value, src, notes)
        if fmt == "ragchecker":
            return _ragchecker(value, src, notes)
        return _promptfoo(value, src, run, query_var, notes)
    parsed = _table(src, notes)
    columns = {str(c).strip().lower() for c in parsed.metadata["columns"]}
    name = fmt if named else "ragas" if columns & RAGAS_COLUMNS and parsed.ids is None else "table"
    return ParsedGrades(name, parsed.grades, parsed.ids, parsed.texts, parsed.where, parsed.place, notes=parsed.notes)


# ----------------------------------------------------------------------------- JSON with NaN


_DOCUMENTS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
"""Each source's JSON document, parsed once for detection and reading alike."""


def read_json_nan(src: Source) -> object:
    """A whole JSON document, with ``NaN`` (and ``Infinity``, refused later as out of range) read as numbers, as
    Python's json module writes them; a syntax error names its line and column. Parsed once per source."""
    if src in _DOCUMENTS:
        return _DOCUMENTS[src]
    try:
        value = _DOCUMENTS[src] = json.loads(src.text(), parse_constant=float)
        return value
    except RecursionError:
        raise InputError("valid JSON (nested too deeply)", source=src.name) from None
    except json.JSONDecodeError as exc:
        lines = src.lines()
        text = lines[exc.lineno - 1] if exc.lineno <= len(lines) else ""
        raise InputError(f"valid JSON ({exc.msg} at column {exc.colno})", source=src.name, line=exc.lineno,
                         text=text[:120]) from None


def _record_place(records: list) -> Callable[[int], tuple[int, str]]:
    def place(row: int) -> tuple[int, str]:
        return row + 1, json.dumps(records[row], ensure_ascii=False, default=str)[:120]
    return place


def _records(value: object, what: str, src: Source, where: str) -> list[dict]:
    """``value`` as a list of JSON objects; anything else names the first entry that is not one."""
    if not isinstance(value, list):
        raise InputError(f"{what} as a JSON list", source=src.name, text=type(value).__name__)
    bad = next((i for i, v in enumerate(value) if not isinstance(v, Mapping)), None)
    if bad is not None:
        raise InputError(f"{what}: each a JSON object", source=src.name, line=bad + 1, where=where,
                         text=json.dumps(value[bad], default=str)[:120])
    return value


# ----------------------------------------------------------------------------- tables (ragas, plain)


def _table(src: Source, notes: bool = False) -> ParsedGrades:
    kind = container(src)
    if kind == "json":
        records = _records(read_json_nan(src), "grade records", src, "row")
        frame = pd.DataFrame.from_records(records) if records else pd.DataFrame()
        return _split_columns(frame, src, "row", _record_place(records), notes=notes)
    if kind == "jsonl":
        frame, place = _jsonl(src, notes)
        return _split_columns(frame, src, "line", place, notes=notes)
    if kind == "parquet":
        table, names = read_parquet_columns(src, choose=lambda names: [n for n in names if _wanted(n, notes)])
        found = ArrowTable(table, src, where="row", header_lines=0, header=names)
    else:
        delimiter = "\t" if kind == "tsv" else ","
        names = _header(src, delimiter)
        found = read_arrow_table(src, kind, {n.strip().lower() for n in names if _wanted(n, notes)},
                                 "query_id or query_text and a column per grade")
    frame = found.table.to_pandas() if found.table.num_columns else pd.DataFrame()
    frame.columns = [str(c).strip() for c in frame.columns]
    return _split_columns(frame, src, found.where, lambda row: (found.line_of(row), found.raw_line(row)),
                          header=found.header, notes=notes)


def _wanted(name: str, notes: bool = False) -> bool:
    """A column worth reading: not a known text column (but the answer and the reason when ``notes`` are asked for),
    not pandas' unnamed index."""
    key = str(name).strip().lower()
    if notes and key in ANSWER_FIELDS + REASON_FIELDS:
        return True
    return key not in TEXT_FIELDS and not _UNNAMED.match(key)


def _header(src: Source, delimiter: str) -> list[str]:
    line = first_content_line(src)
    if line is None:
        raise InputError("a header row (query_id or query_text and a column per grade)", source=src.name)
    quoting = csv.QUOTE_MINIMAL if delimiter == "," else csv.QUOTE_NONE
    return next(csv.reader([line], delimiter=delimiter, quoting=quoting))


def _jsonl(src: Source, notes: bool = False) -> tuple[pd.DataFrame, Callable[[int], tuple[int, str]]]:
    """JSON lines: Arrow's reader (typed columns); a file it refuses (NaN, a bad line) one object per line, which
    names the bad line."""
    numbers = content_lines(src.data)  # the line of each row, found without a loop per line

    def place(row: int) -> tuple[int, str]:
        return int(numbers[row]), src.lines()[int(numbers[row]) - 1][:120]

    try:
        table = pa_json.read_json(pa.BufferReader(src.data))
        table = table.select([n for n in table.column_names if _wanted(n, notes)])  # contexts (lists) are not read
        if table.num_rows == len(numbers) and all(not pa.types.is_nested(t) for t in table.schema.types):
            return table.to_pandas(), place
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        pass
    lines, records = src.lines(), []
    for number in numbers.tolist():  # the slow path: Arrow refused the file
        try:
            value = json.loads(lines[number - 1], parse_constant=float)
        except ValueError as exc:
            raise InputError(f"one JSON object per line ({exc})", source=src.name, line=number,
                             text=lines[number - 1][:120]) from None
        if not isinstance(value, Mapping):
            raise InputError("one JSON object per line", source=src.name, line=number, text=lines[number - 1][:120])
        records.append(value)
    return pd.DataFrame.from_records(records), place


def _split_columns(frame: pd.DataFrame, src: Source, where: str, place: Callable[[int], tuple[int, str]],
                   header: tuple[str, ...] | None = None, notes: bool = False) -> ParsedGrades:
    """The query id and text columns found, the text columns dropped, every other column a grade (with ``notes``, the
    answer and reason columns kept as notes)."""
    lowered = {str(c).strip().lower(): c for c in frame.columns}
    id_col = next((lowered[a] for a in ID_COLUMNS if a in lowered), None)
    text_col = next((lowered[a] for a in TEXT_COLUMNS if a in lowered), None)
    if id_col is None and text_col is None:
        shown = ",".join(header) if header else ",".join(map(str, frame.columns))
        raise InputError(f"a query id column ({', '.join(ID_COLUMNS)}) or a query text column "
                         f"({', '.join(TEXT_COLUMNS)}) in a grade table", source=src.name, text=shown)
    grades = frame[[c for c in frame.columns if c not in (id_col, text_col) and _wanted(str(c))]]
    return ParsedGrades("table", grades.reset_index(drop=True),
                        None if id_col is None else _ids(frame[id_col]),
                        None if text_col is None else frame[text_col].reset_index(drop=True),
                        where, place, {"columns": tuple(header or frame.columns)},
                        notes=_table_notes(frame, lowered) if notes else None)


def _table_notes(frame: pd.DataFrame, lowered: dict) -> pd.DataFrame:
    answer = next((lowered[a] for a in ANSWER_FIELDS if a in lowered), None)
    reason = next((lowered[a] for a in REASON_FIELDS if a in lowered), None)
    return answer_notes(len(frame), None if answer is None else frame[answer].tolist(),
                        {} if reason is None else {"": frame[reason].tolist()})


def answer_notes(n: int, answers: list | None, reasons: Mapping[str, list]) -> pd.DataFrame:
    """``n`` rows of notes as text (None where there is none): ``answer``, then ``reason`` (the judge's reason for every
    grade of the row, from ``reasons[""]``) and ``reason: GRADE`` (for that grade alone)."""
    columns = {"answer": _texts(answers, n)}
    for metric, values in reasons.items():
        columns["reason" if not metric else f"reason: {metric}"] = _texts(values, n)
    return pd.DataFrame(columns, dtype=object)


def _texts(values: list | None, n: int) -> np.ndarray:
    out = np.full(n, None, dtype=object)
    for i, value in enumerate(values or ()):
        out[i] = _text(value)
    return out


def _text(value: object) -> str | None:
    """A cell as text: strings stripped (empty: None), missing values None, anything else as JSON."""
    if value is None or (isinstance(value, float) and np.isnan(value)) or value is pd.NA:
        return None
    if isinstance(value, str):
        return value.strip() or None
    return json.dumps(value, ensure_ascii=False, default=str)


def _ids(values: pd.Series) -> pd.Series:
    """Query ids as text: whole numbers as their digits (a JSON or Parquet number column), gaps kept as None."""
    values = values.reset_index(drop=True)
    given = values.notna()
    out = pd.Series(None, index=values.index, dtype=object)
    if pd.api.types.is_float_dtype(values.dtype):
        whole = given & (values % 1 == 0)
        out[given] = values[given].astype(str)
        out[whole] = values[whole].astype(np.int64).astype(str)
    else:
        out[given] = values[given].astype(str)
    return out


# ----------------------------------------------------------------------------- DeepEval


def _deepeval(value: Mapping, src: Source, notes: bool = False) -> ParsedGrades:
    run = value.get("testRunData", value)
    if not isinstance(run, Mapping):
        raise InputError("testRunData as a JSON object", source=src.name, text=type(run).__name__)
    cases = _records(run.get("testCases", []), "testRunData.testCases", src, "test case")
    frame = pd.DataFrame.from_records(cases) if cases else pd.DataFrame(columns=["name", "input"])
    metric_lists = frame["metricsData"] if "metricsData" in frame.columns else pd.Series([None] * len(frame))
    long = metric_lists.explode()
    entries = long[long.notna()]
    is_object = entries.map(lambda v: isinstance(v, Mapping)).to_numpy(dtype=bool)
    if not is_object.all():
        row = int(entries.index[~is_object][0])
        raise InputError("metricsData as a list of objects with name and score", source=src.name, line=row + 1,
                         where="test case", text=json.dumps(cases[row].get("metricsData"), default=str)[:120])
    scores = pd.DataFrame.from_records(entries.tolist(), index=entries.index) if len(entries) else \
        pd.DataFrame(columns=["name", "score"])
    if "name" not in scores.columns or scores["name"].isna().any():
        row = int(scores.index[scores["name"].isna()][0]) if "name" in scores.columns else int(scores.index[0])
        raise InputError("a name for every metric in metricsData", source=src.name, line=row + 1, where="test case",
                         text=json.dumps(cases[row].get("metricsData"), default=str)[:120])
    if "score" not in scores.columns:
        scores["score"] = None
    scores = scores.assign(case=scores.index, name=scores["name"].astype(str))
    twice = scores.duplicated(["case", "name"])
    if twice.any():
        row = int(scores["case"][twice].iloc[0])
        raise InputError("each metric once per test case", source=src.name, line=row + 1, where="test case",
                         text=str(scores["name"][twice].iloc[0]))
    order = list(dict.fromkeys(scores["name"]))
    wide = scores.pivot(index="case", columns="name", values="score").reindex(index=range(len(frame)), columns=order)
    wide.columns.name = None
    meta = {"hyperparameters": run.get("hyperparameters") or {}}
    if run.get("identifier"):
        meta["identifier"] = run["identifier"]
    found = None
    if notes:  # each metric's reason (else its error), and the test case's answer
        why = scores["reason"] if "reason" in scores.columns else pd.Series(None, index=scores.index, dtype=object)
        if "error" in scores.columns:
            why = why.where(why.notna(), scores["error"])
        wide_why = scores.assign(why=why.astype(object)).pivot(index="case", columns="name", values="why").reindex(
            index=range(len(frame)), columns=order)
        found = answer_notes(len(frame), [c.get("actualOutput", c.get("actual_output")) for c in cases],
                             {metric: wide_why[metric].tolist() for metric in order})
    return ParsedGrades("deepeval", wide.reset_index(drop=True).astype(object),
                        _ids(frame["name"]) if "name" in frame.columns else None,
                        frame["input"].reset_index(drop=True) if "input" in frame.columns else None,
                        "test case", _record_place(cases), meta, notes=found)


# ----------------------------------------------------------------------------- RAGChecker


def _ragchecker(value: Mapping, src: Source, notes: bool = False) -> ParsedGrades:
    results = _records(value.get("results"), "results", src, "result")
    frame = pd.DataFrame.from_records(results) if results else pd.DataFrame(columns=["query_id", "query", "metrics"])
    metrics = frame["metrics"] if "metrics" in frame.columns else pd.Series([None] * len(frame))
    bad = ~metrics.map(lambda v: v is None or isinstance(v, Mapping))
    if bad.any():
        row = int(np.flatnonzero(bad.to_numpy())[0])
        raise InputError("metrics as a JSON object of grades", source=src.name, line=row + 1, where="result",
                         text=json.dumps(results[row].get("metrics"), default=str)[:120])
    grades = pd.DataFrame.from_records([m or {} for m in metrics.tolist()]) if len(frame) else pd.DataFrame()
    return ParsedGrades("ragchecker", grades.reset_index(drop=True).astype(object),
                        _ids(frame["query_id"]) if "query_id" in frame.columns else None,
                        frame["query"].reset_index(drop=True) if "query" in frame.columns else None,
                        "result", _record_place(results),
                        notes=answer_notes(len(results), [r.get("response") for r in results], {}) if notes else None)


# ----------------------------------------------------------------------------- promptfoo


def _promptfoo(value: Mapping, src: Source, run: str | None, query_var: str | None,
               notes: bool = False) -> ParsedGrades:
    summary = value.get("results")
    if not isinstance(summary, Mapping) or not isinstance(summary.get("results"), list):
        raise InputError("promptfoo's results.results list (promptfoo eval -o results.json)", source=src.name)
    version = summary.get("version", value.get("version"))
    if version is not None and version != 3:
        raise InputError("promptfoo's output version 3 (results.version)", source=src.name, text=str(version))
    results = _records(summary["results"], "results.results", src, "result")
    frame = pd.json_normalize(results, max_level=1) if results else pd.DataFrame()
    keep, provider = _one_provider(frame, src, run)
    frame = frame[keep].reset_index(drop=True)
    kept = [results[i] for i in np.flatnonzero(keep)]
    vars_ = {c[5:]: c for c in frame.columns if c.startswith("vars.")}
    if query_var is not None and query_var not in vars_:
        raise InputError(f"a var named {query_var!r} (--query-var) in every result", source=src.name,
                         text="vars: " + ", ".join(vars_) if vars_ else "no vars")
    text_var = query_var or next((v for v in QUERY_VARS if v in vars_), None)
    id_var = next((v for v in ID_COLUMNS if v in vars_), None)
    if text_var is None and id_var is None:
        raise InputError("the var holding the query: name it with --query-var", source=src.name,
                         text="vars: " + ", ".join(vars_) if vars_ else "no vars")
    grades = pd.DataFrame(index=frame.index)
    if "score" in frame.columns:
        grades["score"] = frame["score"].astype(object)
    passed = frame["success"] if "success" in frame.columns else frame.get("gradingResult.pass")
    if passed is not None:
        grades["pass"] = passed.astype(object)
    for column in frame.columns:
        if column.startswith("namedScores."):
            grades[column[len("namedScores."):]] = frame[column].astype(object)
    errored = np.zeros(len(frame), dtype=bool)
    if "failureReason" in frame.columns:
        errored = (pd.to_numeric(frame["failureReason"], errors="coerce") == 2).to_numpy()
    if errored.any():
        grades.loc[errored, :] = None  # the provider failed to answer: nothing was graded
    meta = {"provider": provider} if provider else {}
    found = None
    if notes:  # the output answered, and the grader's reason (a result that errored: its error)
        output = [(r.get("response") or {}).get("output") if isinstance(r.get("response"), Mapping) else None
                  for r in kept]
        why = [(r.get("gradingResult") or {}).get("reason") if isinstance(r.get("gradingResult"), Mapping) else None
               for r in kept]
        found = answer_notes(len(kept), output, {"": [w if w else r.get("error") for w, r in zip(why, kept)]})
    return ParsedGrades("promptfoo", grades, _ids(frame[vars_[id_var]]) if id_var else None,
                        frame[vars_[text_var]].reset_index(drop=True) if text_var else None,
                        "result", _record_place(kept), meta, errored, found)


def _one_provider(frame: pd.DataFrame, src: Source, run: str | None) -> tuple[np.ndarray, str | None]:
    """The rows of one provider: all of them when there is one; else those whose provider label or id is ``run``."""
    if "provider.id" in frame.columns:
        ids = frame["provider.id"].astype(str)
        labels = frame["provider.label"].fillna(ids).astype(str) if "provider.label" in frame.columns else ids
    elif "provider" in frame.columns:
        ids = labels = frame["provider"].astype(str)
    else:
        return np.ones(len(frame), dtype=bool), None
    found = list(dict.fromkeys(labels))
    if len(found) <= 1:
        return np.ones(len(frame), dtype=bool), found[0] if found else None
    keep = ((labels == run) | (ids == run)).to_numpy()
    if not keep.any():
        raise InputError(f"results of one provider (a grade file grades one run): name the run after one of them, "
                         f"--grades PROVIDER={src.name}", source=src.name,
                         text=f"{len(found)} providers: " + ", ".join(found))
    return keep, str(run)
