"""Decoding the candidate statement's two JSON documents (brain.memory.candidates.decoded), which promotion does in
the thread that decides: every probe gets its own list, in probe order, and a node's fields are shared by the pairs
that name it."""

from __future__ import annotations

import json
from datetime import UTC, datetime

from brain.memory.candidates import ENTITY, NEAREST, Found, decoded


def test_a_chunk_without_candidates_still_has_one_list_per_probe() -> None:
    # The decisions zip entries with their lists strictly: three probes must give three lists.
    assert decoded(Found(3, None, None)) == [[], [], []]
    assert decoded(Found(0, None, None)) == []


def test_pairs_land_on_their_probes_with_the_fields_of_their_node() -> None:
    nodes = [[7, "user", True, 2.5, ["e1"], ["cake"], "2026-05-01T10:00:00+00:00", "day", ["num:3"]],
             [9, "assistant", False, 1.0, [], [], None, None, None]]
    pairs = [[1, 7, NEAREST | ENTITY, 0.91], [0, 9, NEAREST, 0.4], [1, 9, NEAREST, 0.3]]
    first, second = decoded(Found(2, json.dumps(pairs), json.dumps(nodes)))
    assert [c.id for c in first] == [9] and [c.id for c in second] == [7, 9]
    seven = second[0]
    assert (seven.speaker, seven.active, seven.w_abs, seven.cosine, seven.kinds) == ("user", True, 2.5, 0.91, 3)
    assert seven.magnets.entity_ids == ["e1"] and seven.magnets.themes == ["cake"]
    assert seven.magnets.timeline_start == datetime(2026, 5, 1, 10, tzinfo=UTC)
    assert seven.magnets.timeline_precision == "day" and seven.marks == ("num:3",)
    assert first[0].marks is None and first[0].magnets.timeline_start is None and not first[0].active
    # One node, one set of fields: both of node 9's pairs carry the same magnets.
    assert first[0].magnets is second[1].magnets
