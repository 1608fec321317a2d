"""Fixtures of the page-model tests: the page models are called as plain functions (no AppTest, no browser), each test
on a workspace of its own, on the sample data or on small data sets made for the edge cases (`small_data`)."""

from __future__ import annotations

from typing import Callable

import pytest

from evalcore.metrics.dataset import Dataset
from evalcore.store.workspace import ENV_VAR

from dashboard import loading
from tests.page_models.small_data import small_dataset


@pytest.fixture(autouse=True)
def own_workspace(tmp_path_factory, monkeypatch) -> None:
    """Each test reads and keeps its files in a workspace of its own (the dashboard finds it through
    EVALCORE_WORKSPACE), so no test sees what another uploaded."""
    monkeypatch.setenv(ENV_VAR, str(tmp_path_factory.mktemp("workspace")))


@pytest.fixture
def sample() -> Dataset:
    """The sample data set the dashboard opens on: 320 labeled queries (224 scored, the tune split), three runs."""
    return loading.sample_dataset()


@pytest.fixture
def make_dataset() -> Callable[..., Dataset]:
    """`small_data.small_dataset`: labels and runs given as Python dicts, held like uploads in this test's
    workspace."""
    return small_dataset
