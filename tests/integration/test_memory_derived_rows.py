"""Edges, theme and entity rows are derived from their nodes and have no foreign keys: forgetting one memory or
everything removes them in the same transaction, promotion writes a node's theme and entity rows with it, and the
theme and entity candidates of a new memory are exactly the newest active nodes sharing one of its themes or
entities."""

from __future__ import annotations

import asyncio
import uuid
from dataclasses import replace
from datetime import UTC, datetime, timedelta

from sqlalchemy import select, text, update

from brain.core import Brain
from brain.memory.api import Memory
from brain.memory.candidates import ENTITY, THEME, Probe, gather_candidates
from brain.memory.embedder import WordLlamaEmbedder
from brain.memory.models import MemoryEdge, MemoryNode, MemoryNodeEntity, MemoryNodeTheme
from brain.memory.promotion import hold_promotion, index_only_plans, recompute_edges, vector_index_settings
from brain.memory.settings import MemorySettings
from brain.memory.space import WORDLLAMA_256
from brain.memory.weights import MagnetFields
from tests.integration.conftest import new_user

MONDAY = datetime(2026, 11, 30, 7, 30, tzinfo=UTC)
SETTINGS = MemorySettings(space=WORDLLAMA_256)  # the tests embed with WordLlama


async def remember_all(memory: Memory, user_id: uuid.UUID, lines: list[str]) -> list[int]:
    """Remembers the lines an hour apart, promotes them and returns their node ids in the lines' order."""
    for i, line in enumerate(lines):
        await memory.remember(user_id, line, MONDAY - timedelta(hours=len(lines) - i))
    await memory.ingest_until_promoted(user_id)
    async with memory.brain.transactions.read() as session:
        by_text = {row.text: row.id for row in await session.execute(
            select(MemoryNode.text, MemoryNode.id).where(MemoryNode.user_id == user_id))}
    return [by_text[line] for line in lines]


async def edges(brain: Brain, user_id: uuid.UUID) -> set[tuple[int, int]]:
    async with brain.transactions.read() as session:
        return {(row.a_id, row.b_id) for row in await session.execute(
            select(MemoryEdge.a_id, MemoryEdge.b_id).where(MemoryEdge.user_id == user_id))}


async def theme_rows(brain: Brain, user_id: uuid.UUID) -> set[tuple[str, int]]:
    async with brain.transactions.read() as session:
        return {(row.theme, row.node_id) for row in await session.execute(
            select(MemoryNodeTheme.theme, MemoryNodeTheme.node_id).where(MemoryNodeTheme.user_id == user_id))}


async def node_themes(brain: Brain, user_id: uuid.UUID) -> set[tuple[str, int]]:
    async with brain.transactions.read() as session:
        return {(theme, row.id) for row in await session.execute(
            select(MemoryNode.id, MemoryNode.themes).where(MemoryNode.user_id == user_id)) for theme in row.themes}


async def entity_rows(brain: Brain, user_id: uuid.UUID) -> set[tuple[uuid.UUID, int]]:
    async with brain.transactions.read() as session:
        return {(row.entity_id, row.node_id) for row in await session.execute(
            select(MemoryNodeEntity.entity_id, MemoryNodeEntity.node_id).where(MemoryNodeEntity.user_id == user_id))}


async def node_entities(brain: Brain, user_id: uuid.UUID) -> set[tuple[uuid.UUID, int]]:
    async with brain.transactions.read() as session:
        return {(entity, row.id) for row in await session.execute(
            select(MemoryNode.id, MemoryNode.entity_ids).where(MemoryNode.user_id == user_id))
            for entity in row.entity_ids}


LINES = [
    "My friend Clara recommended the novel Piranesi at the harbour cafe.",
    "Clara and I walked along the harbour after the novel club.",
    "Clara finished reading the novel on the train home.",
]


async def test_promotion_writes_each_nodes_themes_as_rows(brain: Brain, memory: Memory) -> None:
    person = await new_user(brain)
    await remember_all(memory, person, LINES)
    written = await theme_rows(brain, person)
    assert written and written == await node_themes(brain, person)
    named = await entity_rows(brain, person)
    assert len({node for _, node in named}) == 3  # Clara, in each line
    assert named == await node_entities(brain, person)


async def test_forgetting_one_memory_leaves_no_edge_and_no_theme_row_of_it(brain: Brain, memory: Memory) -> None:
    person = await new_user(brain)
    first, second, third = await remember_all(memory, person, LINES)
    before = await edges(brain, person)
    assert {(first, second), (second, first), (first, third), (third, first)} <= before
    assert any(node == second for _, node in await theme_rows(brain, person))

    assert await memory.forget(person, second)
    after = await edges(brain, person)
    assert after == {(a, b) for a, b in before if second not in (a, b)}
    assert after and all((b, a) in after for a, b in after)  # the other pairs keep both rows
    assert await theme_rows(brain, person) == await node_themes(brain, person)
    assert all(node != second for _, node in await theme_rows(brain, person))
    assert await entity_rows(brain, person) == await node_entities(brain, person)
    assert any(node == first for _, node in await entity_rows(brain, person))
    assert all(node != second for _, node in await entity_rows(brain, person))


async def test_forgetting_everything_leaves_no_edge_and_no_theme_row(brain: Brain, memory: Memory) -> None:
    person, other = await new_user(brain), await new_user(brain)
    for who in (person, other):
        await remember_all(memory, who, LINES)
    others_edges, others_themes = await edges(brain, other), await theme_rows(brain, other)
    others_entities = await entity_rows(brain, other)
    assert await edges(brain, person) and await theme_rows(brain, person) and await entity_rows(brain, person)

    await memory.forget_everything(person)
    assert await edges(brain, person) == set() and await theme_rows(brain, person) == set()
    assert await entity_rows(brain, person) == set()
    assert await edges(brain, other) == others_edges and await theme_rows(brain, other) == others_themes
    assert others_entities and await entity_rows(brain, other) == others_entities


async def test_recomputing_edges_reaches_the_rows_into_a_node_too(brain: Brain, memory: Memory) -> None:
    person = await new_user(brain)
    first, second, _third = await remember_all(memory, person, LINES)
    touching = {(a, b) for a, b in await edges(brain, person) if second in (a, b)}
    async with brain.transactions.begin() as uow:
        # Every row touching the node, both directions, and nothing else.
        await uow.session.execute(update(MemoryEdge).where(MemoryEdge.user_id == person).values(w_abs=-1.0))
        count = await recompute_edges(uow.session, person, [second], SETTINGS)
        recomputed = {(row.a_id, row.b_id) for row in await uow.session.execute(
            select(MemoryEdge.a_id, MemoryEdge.b_id).where(MemoryEdge.user_id == person, MemoryEdge.w_abs >= 0))}
    assert (first, second) in touching and (second, first) in touching
    assert count == len(touching) and recomputed == touching
    async with brain.transactions.begin() as uow:
        # Two of the nodes at once: their shared pair is counted once per direction.
        assert await recompute_edges(uow.session, person, [first, second], SETTINGS) == len(
            {(a, b) for a, b in await edges(brain, person) if {a, b} & {first, second}})


async def deactivate(brain: Brain, person: uuid.UUID, node_id: int) -> None:
    async with brain.transactions.begin() as uow:
        await uow.session.execute(update(MemoryNode).where(MemoryNode.user_id == person, MemoryNode.id == node_id)
                                  .values(active=False))


async def candidates_of_kind(brain: Brain, embedder: WordLlamaEmbedder, person: uuid.UUID, kind: int,
                             settings: MemorySettings, magnets: MagnetFields) -> list[int]:
    """The ids of a probe's candidates that came through `kind` (ENTITY, THEME), newest first; the probe's text
    shares nothing with the lines, so no other part brings them."""
    [vector] = embedder.embed(["something else entirely: a recipe for lentil soup"])
    async with brain.transactions.read() as session:
        await session.execute(select(*index_only_plans(), *vector_index_settings(48)))
        [found] = await gather_candidates(session, settings, person, [Probe(vector, magnets)])
    return sorted((c.id for c in found if c.kinds & kind), reverse=True)


async def test_theme_candidates_are_the_newest_active_nodes_sharing_a_theme(brain: Brain, memory: Memory,
                                                                           embedder: WordLlamaEmbedder) -> None:
    person = await new_user(brain)
    # Oldest first. Themes come from the words: "zeppelin" and "lighthouse" are the ones the probe asks for.
    lines = [
        "The zeppelin museum in Friedrichshafen was crowded on Sunday.",  # zeppelin
        "We painted the old lighthouse white and blue last summer.",  # lighthouse
        "Grandpa told stories about a zeppelin flight over the lake.",  # zeppelin
        "Watched a documentary about tax law and pension reforms.",  # neither
        "A zeppelin postcard hangs next to the lighthouse photo.",  # both
        "My nephew built a zeppelin model out of cardboard boxes.",  # zeppelin, made inactive below
    ]
    ids = await remember_all(memory, person, lines)
    async with brain.transactions.read() as session:
        themes = {node_id: node_themes for node_id, node_themes in await session.execute(
            select(MemoryNode.id, MemoryNode.themes).where(MemoryNode.user_id == person))}
    assert [("zeppelin" in themes[i], "lighthouse" in themes[i]) for i in ids] == [
        (True, False), (False, True), (True, False), (False, False), (True, True), (True, False)]
    await deactivate(brain, person, ids[5])

    async def theme_candidates(limit: int, wanted: list[str]) -> list[int]:
        return await candidates_of_kind(brain, embedder, person, THEME, replace(SETTINGS, theme_candidates=limit),
                                        MagnetFields([], wanted, None, None))

    # The newest active ones first; the newer but inactive node is skipped, not counted against the limit.
    assert await theme_candidates(2, ["zeppelin"]) == [ids[4], ids[2]]
    assert await theme_candidates(10, ["zeppelin"]) == [ids[4], ids[2], ids[0]]
    # Several themes: merged, each node once, cut to the newest.
    assert await theme_candidates(3, ["zeppelin", "lighthouse"]) == [ids[4], ids[2], ids[1]]
    assert await theme_candidates(10, ["lighthouse", "nothing-shares-this"]) == [ids[4], ids[1]]


async def test_entity_candidates_are_the_newest_active_nodes_naming_an_entity(brain: Brain, memory: Memory,
                                                                             embedder: WordLlamaEmbedder) -> None:
    person = await new_user(brain)
    # Oldest first: the people are named after a cue ("with", "my sister"), so capture reads them as names.
    lines = [
        "Went climbing with Jonas at the quarry.",  # Jonas
        "My sister Mirela called about the wedding.",  # Mirela
        "Had lunch with Jonas near the station.",  # Jonas
        "Read a long article about tax law and pension reforms.",  # neither
        "Jonas and my sister Mirela met at the station.",  # both
        "Helped Jonas move his piano on Saturday.",  # Jonas, made inactive below
    ]
    ids = await remember_all(memory, person, lines)
    async with brain.transactions.read() as session:
        named = {node_id: set(entities) for node_id, entities in await session.execute(
            select(MemoryNode.id, MemoryNode.entity_ids).where(MemoryNode.user_id == person))}
    jonas = next(iter(named[ids[0]]))
    mirela = next(iter(named[ids[1]]))
    assert [(jonas in named[i], mirela in named[i]) for i in ids] == [
        (True, False), (False, True), (True, False), (False, False), (True, True), (True, False)]
    await deactivate(brain, person, ids[5])

    async def entity_candidates(limit: int, wanted: list[uuid.UUID]) -> list[int]:
        return await candidates_of_kind(brain, embedder, person, ENTITY, replace(SETTINGS, entity_candidates=limit),
                                        MagnetFields([str(e) for e in wanted], [], None, None))

    # The newest active ones first; the newer but inactive node is skipped, not counted against the limit.
    assert await entity_candidates(2, [jonas]) == [ids[4], ids[2]]
    assert await entity_candidates(10, [jonas]) == [ids[4], ids[2], ids[0]]
    # Several entities: merged, each node once, cut to the newest.
    assert await entity_candidates(3, [jonas, mirela]) == [ids[4], ids[2], ids[1]]
    assert await entity_candidates(10, [mirela, uuid.uuid4()]) == [ids[4], ids[1]]


async def test_the_theme_branch_reads_the_side_table_backwards(brain: Brain, memory: Memory) -> None:
    # The plan reads each theme's newest rows off the primary key instead of every match of a common theme.
    person = await new_user(brain)
    await remember_all(memory, person, LINES)
    async with brain.transactions.read() as session:
        await session.execute(select(*index_only_plans()))
        plan = "\n".join(await session.scalars(text(
            "EXPLAIN SELECT t.node_id FROM memory_node_themes t JOIN memory_nodes n ON n.id = t.node_id "
            "WHERE t.user_id = :user_id AND t.theme = 'novel' AND n.user_id = :user_id AND n.active "
            "ORDER BY t.node_id DESC LIMIT 24"), {"user_id": person}))
    assert "Index Scan Backward using pk_memory_node_themes" in plan or \
        "Index Only Scan Backward using pk_memory_node_themes" in plan, plan


async def test_forgetting_waits_for_a_running_promotion_of_the_person(brain: Brain, memory: Memory) -> None:
    # Without foreign keys a promotion that read a node as a candidate could still write edges to it after it
    # was forgotten; forgetting therefore takes the person's promotion lock first.
    person = await new_user(brain)
    first, second, _third = await remember_all(memory, person, LINES)
    async with brain.transactions.begin() as promoting:
        await hold_promotion(promoting.session, person)
        forgetting = asyncio.create_task(memory.forget(person, second))
        async with brain.transactions.read() as session:
            for _ in range(500):  # until the forgetting transaction waits for the lock
                waiting = await session.scalar(text(
                    "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted"))
                if waiting or forgetting.done():
                    break
                await asyncio.sleep(0.01)
        assert waiting == 1 and not forgetting.done()
        assert (first, second) in await edges(brain, person)
    assert await forgetting
    assert all(second not in pair for pair in await edges(brain, person))
