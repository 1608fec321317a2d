"""The presenter view's model called directly: one failure told in plain words for a shared screen, the type size a
query gets, and the list it walks (the Failures page's, in its order)."""

from __future__ import annotations

from evalcore.analyses.failure_story import failure_story

from dashboard import loading
from dashboard.page_models import failures, present

RUNS = ("base", "tuned", "tuned-256d")


def test_the_first_failure_is_told_as_the_core_tells_its_drill_down(sample):
    sequence = present.sequence(sample, 10, "none", RUNS, (), "", "worst")
    assert sequence[0] == "q045"
    told = present.story(sample, sequence[0], 10, RUNS, "none")
    drill = failures.drill_down(sample, sequence[0], 10, RUNS)
    assert told.ok and drill.ok
    core = failure_story(drill.value, mode="none", instead=present.INSTEAD, chars=present.RELEVANT_CHARS,
                         instead_chars=present.INSTEAD_CHARS, name_chars=present.NAME_CHARS)
    assert told.value == core
    assert told.value.headline == "base, tuned and tuned-256d found nothing relevant at k = 10."
    assert [run.failed for run in told.value.runs] == [True, True, True]


def test_a_source_the_labels_do_not_hold_filters_nothing(sample):
    everything = present.sequence(sample, 10, "none", RUNS, (), "", "worst")
    assert present.sequence(sample, 10, "none", RUNS, ("no such source",), "", "worst") == everything
    assert present.is_evaluated(sample, everything[0]) and not present.is_evaluated(sample, "q999")


def test_a_query_gets_smaller_type_as_it_grows_and_is_cut_past_three_lines():
    assert present.shown_query("reset my password") == ("reset my password", "large", False)
    assert present.shown_query("word " * 20).size == "medium"
    assert present.shown_query("word " * 35).size == "small"
    long = present.shown_query("word " * 200)
    assert long.cut and long.size == "smaller" and len(long.text) <= present.QUERY_CHARS + 1


def test_one_query_that_every_run_gets_leaves_nothing_to_present(make_dataset):
    dataset = make_dataset({"q1": ["d1"]}, {"one": {"q1": ["d1"]}, "other": {"q1": ["x", "d1"]}})
    assert present.sequence(dataset, 2, "none", ("one", "other"), (), "", "worst") == []
    assert present.sequence(dataset, 1, "none", ("one", "other"), (), "", "worst") == ["q1"]
    assert loading.evaluation(dataset).ok
