"""Every page model tested here, its value dumped as JSON (`tests.page_models.dump`): the dump is valid JSON and holds
the number the page shows, where a person diffing two dumps would look for it."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from evalcore.analyses.k_settings import BudgetSettings

from dashboard.page_models import choose_k, data, failures, history, overview, present, sources
from tests.page_models.dump import to_json
from tests.page_models.small_data import saved_line

RUNS = ("base", "tuned", "tuned-256d")


def _cell(table: dict, row: int, column: str):
    return table["rows"][row][table["columns"].index(column)]


def _overview(sample):
    dumped = json.loads(to_json(overview.overview(sample, 10, RUNS, False, False)))
    assert dumped["k"] == 10 and _cell(dumped["table"], 1, "run") == "tuned"
    return _cell(dumped["table"], 1, "recall@10 95% CI"), "0.827 – 0.908"


def _headline(sample):
    dumped = json.loads(to_json(overview.headline(sample, RUNS)))
    return dumped["best"], "Best run: tuned (acme-embed-large-v2-kestrel-ft)."


def _comparison(sample):
    dumped = json.loads(to_json(overview.comparison(sample, 10, "base", RUNS)))
    return _cell(dumped["counts"], 0, "n"), 224


def _choose_k(sample):
    return json.loads(to_json(choose_k.headline(sample, BudgetSettings(), RUNS)))["k"], 9


def _at_k(sample):
    dumped = json.loads(to_json(choose_k.at_k(sample, BudgetSettings(), RUNS, 10, False, 224, "ref", "tokens")))
    return round(dumped["lines"][0]["recall"], 4), 0.8735


def _failures(sample):
    dumped = json.loads(to_json(failures.missed_at_k(sample, 10, "none", RUNS, (), "", "worst")))
    return len(dumped["table"]["rows"]), 69


def _sources(sample):
    dumped = json.loads(to_json(sources.by_source(sample, 10, "recall@k", 20, RUNS)))
    return _cell(dumped["table"], 0, "n"), 42


def _history(sample):
    dumped = json.loads(to_json(history.line_history(saved_line(sample), "acme", ["recall@10"])))
    return _cell(dumped["table"], 0, "n"), 224


def _data(sample):
    dumped = json.loads(to_json(data.files(sample, 10)))
    return _cell(dumped["checklist"], 1, "docs"), 32_000


def _present(sample):
    dumped = json.loads(to_json(present.story(sample, "q045", 10, RUNS, "none")))
    return dumped["k"], 10


@pytest.mark.parametrize("model", [_overview, _headline, _comparison, _choose_k, _at_k, _failures, _sources, _history,
                                   _data, _present], ids=lambda f: f.__name__.strip("_"))
def test_each_model_dumps_to_json_with_the_number_the_page_shows(sample, model):
    found, expected = model(sample)
    assert found == expected


def test_the_dump_writes_missing_numbers_as_null_and_keeps_frames_readable():
    frame = pd.DataFrame({"run": ["a"], "mean": [np.float64(0.5)], "n": [np.int64(3)], "low": [np.nan]})
    dumped = json.loads(to_json({"frame": frame, "nan": float("nan"), "series": pd.Series([1, 2])}))
    assert dumped == {"frame": {"columns": ["run", "mean", "n", "low"], "rows": [["a", 0.5, 3, None]]},
                      "nan": None, "series": [1, 2]}
