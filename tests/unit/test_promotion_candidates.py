"""Merging a batch's own new nodes into the candidates the indexes returned: each part keeps its limit, as
if those nodes had already been in the table."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from brain.memory.candidates import (
    ENTITY,
    NEAREST,
    THEME,
    TIME,
    BatchKeys,
    BatchNode,
    Candidate,
    unit_vector,
    with_batch_nodes,
)
from brain.memory.promotion import _chunk_bounds
from brain.memory.settings import MemorySettings
from brain.memory.weights import MagnetFields

DAY = datetime(2024, 5, 1, tzinfo=UTC)
TIGHT = replace(MemorySettings(), ann_candidates=2, entity_candidates=1, theme_candidates=1, timeline_candidates=1)
NEW = MagnetFields(["anna"], ["pottery"], DAY, "day")
UNIT = unit_vector([1.0, 0.0])


def indexed(node_id: int, kinds: int, cosine: float = 0.1, magnets: MagnetFields = MagnetFields([], [], None, None)
            ) -> Candidate:
    return Candidate(node_id, "user", True, 2.0, cosine, magnets, kinds)


def made(node_id: int, cosine: float, magnets: MagnetFields = MagnetFields([], [], None, None)) -> BatchNode:
    return BatchNode(node_id, "user", 2.0, magnets, unit_vector([cosine, float(np.sqrt(1.0 - cosine ** 2))]))


def ids(candidates: list[Candidate]) -> set[int]:
    return {c.id for c in candidates}


def test_without_nodes_of_the_batch_the_indexed_candidates_pass_unchanged() -> None:
    found = [indexed(1, NEAREST), indexed(2, ENTITY), indexed(3, THEME)]
    assert with_batch_nodes(TIGHT, NEW, UNIT, found, []) == found


def test_a_node_of_the_batch_competes_for_the_nearest_places_by_cosine() -> None:
    found = [indexed(10, NEAREST, 0.9), indexed(11, NEAREST, 0.5)]
    merged = with_batch_nodes(TIGHT, NEW, UNIT, found, [made(-1, 0.7)])
    assert ids(merged) == {10, -1}
    assert next(c for c in merged if c.id == -1).cosine == pytest.approx(0.7)


def test_nodes_of_the_batch_are_the_most_recent_sharers_of_an_entity_or_theme() -> None:
    found = [indexed(10, ENTITY, magnets=MagnetFields(["anna"], [], None, None)),
             indexed(11, THEME, magnets=MagnetFields([], ["pottery"], None, None))]
    sharing = made(-1, 0.0, MagnetFields(["anna"], ["pottery"], None, None))
    assert ids(with_batch_nodes(replace(TIGHT, ann_candidates=0), NEW, UNIT, found, [sharing])) == {-1}


KEYS = st.lists(st.sampled_from(["anna", "tom", "bruno", "lea"]), max_size=3)
THEMES = st.lists(st.sampled_from(["pottery", "river", "kiln", "park", "piano"]), max_size=4)


@settings(max_examples=200, deadline=None)
@given(batch=st.lists(st.tuples(KEYS, THEMES), max_size=40), wanted=st.tuples(KEYS, THEMES),
       limits=st.tuples(st.integers(0, 5), st.integers(0, 5)))
def test_the_batch_key_index_finds_the_same_newest_sharers_as_testing_every_node(
        batch: list[tuple[list[str], list[str]]], wanted: tuple[list[str], list[str]], limits: tuple[int, int]
) -> None:
    settings_ = replace(TIGHT, ann_candidates=0, entity_candidates=limits[0], theme_candidates=limits[1])
    nodes, keys = [], BatchKeys()
    for position, (entities, themes) in enumerate(batch):
        magnets = MagnetFields(entities, themes, None, None)
        keys.add(position, magnets)
        nodes.append(made(-1 - position, 0.0, magnets))
    entry = MagnetFields(wanted[0], wanted[1], None, None)
    scanned = with_batch_nodes(settings_, entry, UNIT, [], nodes)
    indexed_ = with_batch_nodes(settings_, entry, UNIT, [], nodes, made_keys=keys)
    assert [c.id for c in indexed_] == [c.id for c in scanned]


def test_the_nearest_anchor_in_time_on_each_side_is_kept() -> None:
    def at(days: int) -> MagnetFields:
        return MagnetFields([], [], DAY + timedelta(days=days), "day")

    found = [indexed(10, TIME, magnets=at(-5)), indexed(11, TIME, magnets=at(3))]
    batch = [made(-1, 0.0, at(-2)), made(-2, 0.0, at(30)), made(-3, 0.0, MagnetFields([], [], DAY, "week"))]
    assert ids(with_batch_nodes(replace(TIGHT, ann_candidates=0), NEW, UNIT, found, batch)) == {-1, 11}


def test_edge_values_are_written_in_copy_text_format() -> None:
    from brain.memory.promotion import copy_text

    assert copy_text(None) == "\\N"
    assert copy_text(["entity", "themes"]) == "{entity,themes}"
    assert copy_text([]) == "{}"
    assert copy_text(['say "hi"', "a,b", "", "null", "back\\slash"]) == (
        '{"say \\\\"hi\\\\"","a,b","","null","back\\\\\\\\slash"}')
    assert copy_text("tab\there") == "tab\\there"
    assert copy_text(DAY) == "2024-05-01T00:00:00+00:00"
    assert copy_text(0.25) == "0.25"


@given(st.integers(min_value=1, max_value=600), st.integers(min_value=1, max_value=64))
def test_a_batch_is_searched_in_order_in_chunks_that_start_and_end_small(total: int, chunk: int) -> None:
    bounds = _chunk_bounds(total, chunk)
    assert [i for start, end in bounds for i in range(start, end)] == list(range(total))  # each entry once, in order
    small = max(chunk // 4, 1)
    assert all(end - start <= chunk for start, end in bounds)
    assert bounds[0][1] - bounds[0][0] <= small  # deciding starts after a small search
    if len(bounds) > 1:
        assert bounds[-1][1] - bounds[-1][0] <= small  # little is left to write after the last decision


COSINES = st.sampled_from([0.2, 0.5, 0.5, 0.7, 0.9])  # few values: ties between the index and the batch are common


@given(found=st.lists(COSINES, max_size=6), batch=st.lists(COSINES, min_size=1, max_size=12),
       limit=st.integers(1, 4))
def test_the_nearest_places_go_to_the_nearest_of_index_and_batch_the_index_first_at_a_tie(
        found: list[float], batch: list[float], limit: int) -> None:
    settings = replace(TIGHT, ann_candidates=limit)
    indexed_ones = [indexed(10 + i, NEAREST, cosine) for i, cosine in enumerate(found[:limit])]  # as the index gives
    batch_nodes = [made(-1 - j, cosine) for j, cosine in enumerate(batch)]
    merged = with_batch_nodes(settings, MagnetFields([], [], None, None), UNIT, indexed_ones, batch_nodes)
    # As if the batch's nodes had been in the table: every one ranked with the found, in a stable order.
    everyone = [(c.cosine, c.id) for c in indexed_ones] + [(float(node.unit @ UNIT), node.id) for node in batch_nodes]
    expected = [node_id for _, node_id in sorted(everyone, key=lambda pair: -pair[0])[:limit]]
    assert [c.id for c in merged] == expected
