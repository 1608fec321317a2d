"""The Overview's first visit shows one k before the all-k curves are ready: the same numbers."""

import pandas as pd
import pytest

from dashboard import curves_data, data


@pytest.fixture(scope="module")
def sample():
    dataset = data.sample_dataset()
    deep = data.evaluation(dataset)
    assert deep.ok
    return dataset, deep.value


@pytest.mark.parametrize("more", [False, True])
def test_one_k_summary_equals_the_curves(sample, more):
    dataset, deep = sample
    ready = curves_data.curves(dataset, more, wait=True)
    assert ready.ok
    for k in (1, 3, 10, 57):
        direct = curves_data.summary_at(deep, k, more)
        looked_up = ready.value.summary((1, k))
        pd.testing.assert_frame_equal(direct, looked_up)
