"""Answer grades: one file per run, one row per graded answer, each grade a number in [0, 1] or missing.

`read_grades` reads any file `evalcore.readers.grade_parsers` knows (ragas, DeepEval, RAGChecker, promptfoo, a plain
table) into a `GradeSet` and checks every value, column by column: a number in [0, 1], ``pass``/``fail`` or
``true``/``false`` (1 and 0) is a grade; NaN, null and an empty cell are missing (left out of that grade's n and
counted in a warning); anything else is an InputError naming the file, the row and the value. Every row names its
query by id or by text; a query named twice in one file is an error naming both rows.

`query_keys` is the one way a query's text is compared (NFKC, case-folded, white space collapsed): grade rows are
joined to labeled queries by it (`evalcore.analyses.answer_join`).
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from ..errors import InputError
from ..warning_log import EvalWarning, plural
from .formats import file_stem
from .grade_parsers import ParsedGrades, detect_grades_format, parse_grades
from .sources import SourceLike, open_source, repair_warnings

WORDS = {"pass": 1.0, "true": 1.0, "fail": 0.0, "false": 0.0}
"""Grades given as words: pass and true are 1, fail and false are 0 (any case, spaces around ignored)."""
MISSING = ("", "nan")
"""Cells (stripped, lower case) that hold no grade."""
EXPECTED = "a grade between 0 and 1 (a number, pass/fail or true/false; NaN or empty for none)"
_ASCII_SPACE = r"[\t\n\x0b\x0c\r\x1c-\x1f ]+"  # what Python's str.split() splits ASCII text on


@dataclass(eq=False)
class GradeSet:
    """The grades of one run's answers from one file.

    ``run`` is the run the file belongs to; ``label`` names the file (its stem) when a run has several (two judges
    of the same answers). ``grades`` holds one float64 column per grade, NaN where missing, in the file's order of
    rows and columns. ``ids`` and ``texts`` are each row's query id and text (None when the file has none, or the
    row none). ``place(i)`` gives the number and text of row ``i`` as the file has it, for messages. ``notes``: each
    row's answer and the judge's reasons as text, when they were asked for (`evalcore.readers.grade_parsers`).
    """

    run: str
    label: str
    format: str
    source: str
    grades: pd.DataFrame
    ids: np.ndarray | None
    texts: np.ndarray | None
    where: str
    place: Callable[[int], tuple[int, str]] = field(repr=False)
    missing: dict[str, int] = field(default_factory=dict)
    metadata: dict = field(default_factory=dict)
    warnings: tuple[EvalWarning, ...] = ()
    notes: pd.DataFrame | None = None

    @property
    def metrics(self) -> list[str]:
        """The grade names, as the file names them."""
        return [str(c) for c in self.grades.columns]

    @property
    def n_rows(self) -> int:
        return len(self.grades)

    @cached_property
    def keys(self) -> np.ndarray | None:
        """Each row's text as `query_keys` compares it (None where a row has no text)."""
        return None if self.texts is None else query_keys(self.texts)

    @cached_property
    def names(self) -> np.ndarray:
        """How each row is named in a list of rows: its query id, else its text."""
        if self.ids is None:
            return np.asarray(self.texts, dtype=object)
        if self.texts is None:
            return np.asarray(self.ids, dtype=object)
        return np.where(pd.isna(self.ids), self.texts, self.ids).astype(object)

    def only(self, metrics: list[str]) -> GradeSet:
        """This file with only the grades named in ``metrics`` (its warnings about missing grades narrowed with it)."""
        kept = [m for m in self.metrics if m in metrics]
        warnings = tuple(w for w in self.warnings if w.code != "grade_missing" or
                         any(w.message.endswith(_missing_tail(m)) for m in kept))
        return GradeSet(self.run, self.label, self.format, self.source, self.grades[kept], self.ids, self.texts,
                        self.where, self.place, {m: self.missing.get(m, 0) for m in kept}, self.metadata, warnings,
                        self.notes)

    def error(self, row: int, expected: str, text: str | None = None) -> InputError:
        """The message for row ``row`` (0-based): the file, its line (or row, test case, result), ``text`` (else the
        row as written)."""
        number, raw = self.place(row)
        return InputError(expected, source=self.source, line=number, text=raw if text is None else text,
                          where=self.where)

    def __repr__(self) -> str:
        return (f"GradeSet(run={self.run!r}, label={self.label!r}, format={self.format!r}, rows={self.n_rows}, "
                f"metrics={self.metrics})")


def read_grades(source: SourceLike, *, run: str | None = None, format: str | None = None,
                query_var: str | None = None, label: str | None = None, notes: bool = False) -> GradeSet:
    """Read one grade file (a path, bytes or an upload) for run ``run`` (default: the file's stem).

    ``format`` names the tool (ragas, deepeval, ragchecker, promptfoo, table) instead of detecting it; ``query_var``
    is the promptfoo var holding the query; ``notes``: keep each row's answer and the judge's reasons too (the
    dashboard shows them beside a query's grade). Every grade is checked here (module docs)."""
    src = open_source(source)
    fmt = detect_grades_format(src, format)
    parsed = parse_grades(src, fmt, run=run, query_var=query_var, named=format is not None, notes=notes)
    stem = label or file_stem(src.name)
    name = run or stem
    if not len(parsed.grades):
        raise InputError(f"at least one graded answer ({parsed.format} format)", source=src.name)
    if not parsed.grades.shape[1]:
        raise InputError(f"at least one grade column ({parsed.format} format)", source=src.name)
    ids, texts = _query_columns(parsed, src.name)
    grades, missing = {}, {}
    for column in parsed.grades.columns:
        grades[str(column)], missing[str(column)] = grade_values(parsed, column, src.name)
    warnings = list(repair_warnings(src))
    errored = parsed.errored if parsed.errored is not None else np.zeros(len(parsed.grades), dtype=bool)
    for metric, count in missing.items():
        count = int((np.isnan(grades[metric]) & ~errored).sum())
        if count:
            warnings.append(EvalWarning("grade_missing", f"{src.name}: {plural(count, 'row')}{_missing_tail(metric)}",
                                        count, name))
    if errored.any():
        count = int(errored.sum())
        warnings.append(EvalWarning("grade_errored", f"{src.name}: {plural(count, 'result')} the tool marks as an "
                                    "error (no answer to grade), left out of every grade's n", count, name))
    found = GradeSet(name, stem, parsed.format, src.name, pd.DataFrame(grades), ids, texts, parsed.where,
                     parsed.place, missing, dict(parsed.metadata), tuple(warnings), parsed.notes)
    _check_once(found)
    return found


def _missing_tail(metric: str) -> str:
    return f" with no {metric} grade (NaN or empty), left out of its n"


def grade_values(parsed: ParsedGrades, column: object, source: str) -> tuple[np.ndarray, int]:
    """One grade column as float64 (NaN where missing) and the number of missing cells; the first value that is not a
    grade is an InputError naming its row and the value."""
    values = parsed.grades[column].reset_index(drop=True)
    if pd.api.types.is_bool_dtype(values.dtype):
        return values.to_numpy(dtype=np.float64), 0
    if pd.api.types.is_numeric_dtype(values.dtype):
        numbers = values.to_numpy(dtype=np.float64, na_value=np.nan)
        missing = np.isnan(numbers)
        bad = ~missing & ~((numbers >= 0) & (numbers <= 1))
        shown = None
    else:
        gap = values.isna().to_numpy()
        text = values.astype(object).where(~gap, "").astype(str).str.strip().str.lower()
        missing = gap | text.isin(MISSING).to_numpy()
        word = np.full(len(text), np.nan)
        is_word = text.isin(WORDS).to_numpy()
        if is_word.any():  # mapped only where there are words: a map over every cell costs more than the parse
            word[is_word] = text[is_word].map(WORDS).to_numpy(dtype=np.float64)
        numbers = np.where(np.isnan(word), pd.to_numeric(text.where(~missing & np.isnan(word)), errors="coerce")
                           .to_numpy(dtype=np.float64, na_value=np.nan), word)
        bad = ~missing & ~((numbers >= 0) & (numbers <= 1))
        shown = values
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        value = repr(float(numbers[row])) if shown is None else str(shown.iloc[row])
        number, _ = parsed.place(row)
        raise InputError(f"{EXPECTED} in column {str(column)!r}", source=source, line=number, text=value,
                         where=parsed.where)
    numbers = numbers.astype(np.float64, copy=True)
    numbers[missing] = np.nan
    return numbers, int(missing.sum())


def _query_columns(parsed: ParsedGrades, source: str) -> tuple[np.ndarray | None, np.ndarray | None]:
    """Each row's query id and text (blank ones as None); a row with neither is an InputError naming it."""
    out = []
    for values in (parsed.ids, parsed.texts):
        if values is None:
            out.append(None)
            continue
        array = values.astype(object).where(values.notna(), None).to_numpy(dtype=object, copy=True)
        text = pd.Series(array, dtype=object).where(pd.notna(array), "").astype(str).str.strip()
        array[(text == "").to_numpy()] = None
        out.append(array)
    ids, texts = out
    present = np.zeros(len(parsed.grades), dtype=bool)
    for array in (ids, texts):
        if array is not None:
            present |= pd.notna(array)
    if not present.all():
        row = int(np.flatnonzero(~present)[0])
        number, raw = parsed.place(row)
        raise InputError("a query id or a query text on every graded row", source=source, line=number, text=raw,
                         where=parsed.where)
    return ids, texts


def _check_once(found: GradeSet) -> None:
    """Each query at most once per file: by id where rows have one, else by text (`query_keys`)."""
    keys = np.full(found.n_rows, None, dtype=object)
    for values, tag in ((found.keys, "text\0"), (found.ids, "id\0")):
        if values is not None:
            given = pd.notna(values)
            keys[given] = tag + values[given]
    series = pd.Series(keys, dtype=object)
    again = series.notna() & series.duplicated(keep="first")
    if again.any():
        second = int(np.flatnonzero(again.to_numpy())[0])
        first = int(np.flatnonzero((series == series.iloc[second]).to_numpy())[0])
        raise found.error(second, f"each query once in a grade file (it is also on {found.where} "
                                  f"{found.place(first)[0]})")


def query_keys(texts: object) -> np.ndarray:
    """Texts as they are compared: NFKC, case-folded, runs of white space made one space, trimmed; None stays None.

    The reference is ``" ".join(unicodedata.normalize("NFKC", t).casefold().split())``; ASCII texts (the usual case)
    take Arrow's vectorised path, which gives the same, and only texts with other characters go through Python."""
    array = pa.array(np.asarray(texts, dtype=object), pa.string(), from_pandas=True)
    ascii_ = pc.fill_null(pc.string_is_ascii(array), False).to_numpy(zero_copy_only=False)
    fast = pc.utf8_trim_whitespace(pc.replace_substring_regex(pc.ascii_lower(array), _ASCII_SPACE, " "))
    out = fast.to_numpy(zero_copy_only=False).astype(object)
    other = np.flatnonzero(~ascii_ & ~pd.isna(out))
    if len(other):  # texts with characters beyond ASCII: the reference definition, text by text
        given = array.to_numpy(zero_copy_only=False)
        out[other] = [text_key(given[i]) for i in other]
    return out


def text_key(text: str) -> str:
    """One text as `query_keys` compares it (the reference definition)."""
    return " ".join(unicodedata.normalize("NFKC", text).casefold().split())
