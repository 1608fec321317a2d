"""The Overview's first visit shows one k before the all-k curves are ready: the same numbers."""

import pandas as pd
import pytest

from dashboard import computed, loading


@pytest.fixture(scope="module")
def sample():
    dataset = loading.sample_dataset()
    deep = loading.evaluation(dataset)
    assert deep.ok
    return dataset, deep.value


@pytest.mark.parametrize("more", [False, True])
def test_one_k_summary_equals_the_curves(sample, more):
    dataset, deep = sample
    ready = computed.curves(dataset, more, wait=True)
    assert ready.ok
    for k in (1, 3, 10, 57):
        direct = computed.summary_at(deep, k, more)
        looked_up = ready.value.summary((1, k))
        pd.testing.assert_frame_equal(direct, looked_up)
