"""The set of id hashes a chunk map is filtered through and a run's chunks are found in: every hash in the set is
found at its place, none outside it is, whatever the set's size or how its hashes crowd (a wrong answer here is a
chunk lost from a run, or a chunk scored as another's)."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from evalcore.readers import hash_sets
from evalcore.readers.hash_sets import HashSet
from evalcore.readers.ids import hash_strings, to_arrow_strings

HASHES = st.lists(st.integers(0, 2**64 - 1), max_size=300)


def _reference(members: list[int], asked: list[int]) -> list[int]:
    place = {value: i for i, value in enumerate(sorted(set(members)))}
    return [place.get(value, -1) for value in asked]


@settings(max_examples=200, deadline=None)
@given(members=HASHES, others=HASHES, crowd=st.integers(0, 64))
def test_every_member_is_found_at_its_place_and_nothing_else_is(members, others, crowd) -> None:
    members = members + [7 + i for i in range(crowd)]  # hashes sharing their top bits: one crowded bucket
    asked = np.array(members + others + members[:5], dtype=np.uint64)
    found = HashSet(np.array(members, dtype=np.uint64))
    expected = _reference(members, asked.tolist())
    assert found.positions(asked).tolist() == expected
    rows, at = found.rows_in(asked)
    assert rows.tolist() == [i for i, e in enumerate(expected) if e >= 0]
    assert at.tolist() == [e for e in expected if e >= 0]
    assert found.values.tolist() == sorted(set(members)) and len(found) == len(set(members))


def test_a_million_run_ids_are_found_among_themselves_and_the_map_rows_they_do_not_name_are_not() -> None:
    run = hash_strings(to_arrow_strings([f"d{i}#{i % 7}" for i in range(0, 2_000_000, 2)]))
    elsewhere = hash_strings(to_arrow_strings([f"d{i}#{i % 7}" for i in range(1, 400_000, 2)]))
    found = HashSet(np.concatenate([run, run[:1000]]))  # an id ranked for several queries is one member
    assert len(found) == len(run)
    places = found.positions(run)
    assert (places >= 0).all() and (found.values[places] == run).all()
    assert (found.positions(elsewhere) == -1).all()
    rows, at = found.rows_in(np.concatenate([elsewhere, run[:10]]))
    assert rows.tolist() == list(range(len(elsewhere), len(elsewhere) + 10))
    assert (found.values[at] == run[:10]).all()


def test_an_empty_set_finds_nothing() -> None:
    found = HashSet(np.zeros(0, dtype=np.uint64))
    assert found.positions(np.array([0, 5], dtype=np.uint64)).tolist() == [-1, -1]
    assert [part.tolist() for part in found.rows_in(np.array([3], dtype=np.uint64))] == [[], []]


def test_hashes_looked_up_a_slice_at_a_time_give_the_same_answers(monkeypatch) -> None:
    members = hash_strings(to_arrow_strings([f"c{i}" for i in range(50_000)]))
    asked = np.concatenate([hash_strings(to_arrow_strings([f"x{i}" for i in range(30_000)])), members[::3]])
    found = HashSet(members)
    whole_positions, (whole_rows, whole_at) = found.positions(asked), found.rows_in(asked)
    monkeypatch.setattr(hash_sets, "_SLICE", 4096)
    assert (found.positions(asked) == whole_positions).all()
    rows, at = found.rows_in(asked)
    assert (rows == whole_rows).all() and (at == whole_at).all() and len(rows) == len(members[::3])
