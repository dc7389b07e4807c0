"""The memory's write path on the embedded PostgreSQL: capture, promotion into nodes and directed edges,
duplicates, rejected timestamps, concurrent promoters, decay with half reactivation, isolation between
people, the pipeline log's flush and queries, and the semantic facts job."""

from __future__ import annotations

import asyncio
import contextlib
import time
import uuid
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import any_, func, select, update

from brain.clock import FixedClock
from brain.core import Brain
from brain.events.actor import USER
from brain.events.catalog import DrinkLogged
from brain.memory.capture import Captured, capture
from brain.memory.decay import run_decay
from brain.memory.embedder import WordLlamaEmbedder
from brain.memory.facts import evidence_confidence, extract_facts, facts_for_context
from brain.memory.models import MemoryEdge, MemoryEntity, MemoryFact, MemoryNode, PipelineLogEntry, ShortTermEntry
from brain.memory.promotion import (
    PromotionReport,
    edge_candidates,
    pending_entries,
    promote_pending,
    recompute_edges,
)
from brain.memory.settings import MemorySettings
from brain.memory.space import WORDLLAMA_256
from brain.memory.weights import MagnetFields, damp, half_reactivated
from brain.people.models import User
from brain.pipeline_log import PipelineLog, query_span, query_turn, write_log_now

EMBEDDER = WordLlamaEmbedder()
SETTINGS = MemorySettings(space=WORDLLAMA_256)  # the tests embed with WordLlama


async def remember(brain: Brain, user: User, text: str, at: Any, *, speaker: str = "user",
                   source_key: str | None = None, log: PipelineLog | None = None) -> Captured:
    async with brain.transactions.begin() as uow:
        return await capture(uow.session, EMBEDDER, user.id, text, at, speaker=speaker, source_key=source_key,
                             now=uow.now, log=log)


async def promote_all(brain: Brain, settings: MemorySettings = SETTINGS, user: User | None = None) -> None:
    while (await promote_pending(brain.transactions, settings, user_id=user.id if user else None)).claimed:
        pass


async def nodes_of(brain: Brain, user: User) -> list[MemoryNode]:
    async with brain.transactions.read() as session:
        return list((await session.scalars(
            select(MemoryNode).where(MemoryNode.user_id == user.id).order_by(MemoryNode.id))).all())


async def edges_of(brain: Brain, user: User) -> list[MemoryEdge]:
    async with brain.transactions.read() as session:
        return list((await session.scalars(select(MemoryEdge).where(MemoryEdge.user_id == user.id))).all())


async def entry(brain: Brain, entry_id: uuid.UUID) -> ShortTermEntry:
    async with brain.transactions.read() as session:
        found = await session.get(ShortTermEntry, entry_id)
        assert found is not None
        return found


@pytest.fixture
async def other_user(brain: Brain) -> User:
    from brain.people.service import resolve_identity

    async with brain.transactions.begin() as uow:
        return await resolve_identity(uow.session, "test", f"u-{uuid.uuid4()}", default_locale="de",
                                      default_timezone="Europe/Berlin")


async def test_capture_stores_a_pending_entry_with_its_magnets(brain: Brain, user: User, clock: FixedClock) -> None:
    captured = await remember(brain, user, "Gestern war ich mit meiner Schwester Anna im Kino, es war toll!",
                              clock.now())
    stored = await entry(brain, captured.id)
    assert stored.status == "pending"
    assert stored.at == clock.now()
    assert stored.embedding is not None and len(stored.embedding) == 256
    assert stored.timeline_precision == "day"
    assert stored.timeline_start == datetime(2026, 11, 28, 23, 0, tzinfo=UTC)  # Sunday 00:00 in Berlin
    assert (stored.emotion, stored.sector) == ("happy", "joy")
    assert len(stored.entity_ids) == 1
    async with brain.transactions.read() as session:
        anna = await session.get(MemoryEntity, stored.entity_ids[0])
    assert anna is not None and (anna.name, anna.kind) == ("Anna", "person")


async def test_a_message_and_its_answer_are_captured_together_as_each_alone(brain: Brain, user: User,
                                                                            clock: FixedClock) -> None:
    """The dialog captures a person's message and the answer at once: one transaction with one INSERT, no read of the
    time zone it passes, and entries exactly as two separate captures make them."""
    from sqlalchemy import event

    from brain.memory.api import Memory
    from brain.memory.capture import Message

    said = "Gestern war ich mit meiner Schwester Anna im Kino, es war toll!"
    answer = "Das klingt schön! Was habt ihr gesehen?"
    alone = [await remember(brain, user, said, clock.now(), source_key="k1"),
             await remember(brain, user, answer, clock.now(), speaker="assistant", source_key="k1:answer")]
    statements: list[str] = []

    def statement(conn: object, cursor: object, text: str, *rest: object) -> None:
        statements.append(" ".join(text.split()))

    engine = brain.db.engine.sync_engine
    event.listen(engine, "before_cursor_execute", statement)
    try:
        ids = await Memory(brain, EMBEDDER).remember_many(
            user.id, [Message(said, "user", "k2"), Message(answer, "assistant", "k2:answer")], clock.now(),
            zone=user.timezone)
    finally:
        event.remove(engine, "before_cursor_execute", statement)
    inserts = [s for s in statements if s.startswith("INSERT INTO memory_short_term")]
    assert len(inserts) == 1 and not any("users.timezone" in s for s in statements), statements
    assert len(statements) == 3  # the known entities of each (both name someone or something), the insert
    for before, now_id in zip(alone, ids, strict=True):
        old, new = await entry(brain, before.id), await entry(brain, now_id)
        assert (new.speaker, new.source_key.replace("k2", "k1"), new.at, new.themes, new.entity_ids,
                new.timeline_start, new.timeline_precision, new.emotion, new.sector, new.salience, new.status) == \
               (old.speaker, old.source_key, old.at, old.themes, old.entity_ids, old.timeline_start,
                old.timeline_precision, old.emotion, old.sector, old.salience, "pending")
        assert list(new.embedding) == list(old.embedding)


async def test_a_known_entity_is_found_again_by_name_or_alias(brain: Brain, user: User, clock: FixedClock) -> None:
    first = await remember(brain, user, "I went climbing with Sarah", clock.now())
    async with brain.transactions.begin() as uow:
        await uow.session.execute(update(MemoryEntity).where(MemoryEntity.id == first.entity_ids[0])
                                  .values(aliases=["sari"]))
    again = await remember(brain, user, "sarah called, and later sari texted", clock.now())
    assert again.entity_ids == first.entity_ids


async def test_a_name_written_without_umlauts_finds_the_same_person_or_place(
    brain: Brain, user: User, other_user: User, clock: FixedClock
) -> None:
    """"Jürgen", "Juergen" and "Jurgen" are one person, whichever spelling came first; a place of the places module
    is linked by its name written without its accents or umlauts."""
    from brain.modules.places.service import create_place

    async def names(person: User) -> list[str]:
        async with brain.transactions.read() as session:
            return list((await session.scalars(select(MemoryEntity.name).where(MemoryEntity.user_id == person.id)
                                               .order_by(MemoryEntity.name))).all())

    first = await remember(brain, user, "I had lunch with my brother Jürgen", clock.now())
    for text in ("Jurgen called me tonight", "Juergen called me tonight", "I went hiking with Jurgen"):
        assert (await remember(brain, user, text, clock.now())).entity_ids == first.entity_ids, text
    assert await names(user) == ["Jürgen"]

    first = await remember(brain, other_user, "Mein Bruder Juergen hat angerufen", clock.now())
    for text in ("Jürgen hat angerufen", "jurgen hat angerufen", "Ich war mit Jürgen wandern"):
        assert (await remember(brain, other_user, text, clock.now())).entity_ids == first.entity_ids, text
    assert await names(other_user) == ["Juergen"]

    async with brain.transactions.begin() as uow:
        cafe = await create_place(uow, user, USER, "Café Müller")
    linked = await remember(brain, user, "We met at cafe mueller again", clock.now())
    async with brain.transactions.read() as session:
        places = (await session.scalars(select(MemoryEntity.place_id).where(
            MemoryEntity.id == any_(linked.entity_ids)))).all()
    assert places == [cafe.id]


async def test_the_entity_lookup_reads_the_matches_not_every_entity(brain: Brain, user: User, other_user: User,
                                                                    clock: FixedClock) -> None:
    """Capture looks up the names a message holds for every message: by name and by alias through indexes (0023),
    never a scan of the person's entities, which grow with their memories (by the name key since 0027). And it still
    finds both kinds."""
    from sqlalchemy import insert

    from brain.memory.capture import _KNOWN_ENTITIES

    async with brain.db.engine.begin() as connection:
        await connection.execute(insert(MemoryEntity), [
            {"id": uuid.uuid4(), "user_id": owner.id, "kind": ("person", "thing", "place")[n % 3],
             "name": f"Name{n}", "aliases": [f"alias{n}"] if n % 50 == 0 else []}
            for owner in (user, other_user) for n in range(3000)])
        await connection.exec_driver_sql("ANALYZE memory_entities")
    lookup = _KNOWN_ENTITIES.compile(dialect=brain.db.engine.dialect)
    keys = ["name7", "name8", "alias100", "berlin"]
    params = {**lookup.params, "user_id": user.id, "keys": keys, "name_keys": ["name8"], "all_keys": keys,
              "alias_keys": keys}
    async with brain.db.engine.connect() as connection:
        plan = "\n".join(row[0] for row in await connection.exec_driver_sql("EXPLAIN " + str(lookup), params))
        found = {row.name for row in await connection.exec_driver_sql(str(lookup), params)}
    assert "Seq Scan on memory_entities" not in plan, plan
    assert "ix_memory_entities_user_name_key" in plan and "ix_memory_entities_aliases" in plan, plan
    # Name7 is a thing (7 % 3 == 1), found only where written as a name (a name key), which it is not here; Name8 (a
    # place) by its name; Name100 (a person) by its alias; nothing of the other person's.
    assert found == {"Name8", "Name100"}


async def test_a_known_thing_is_linked_only_where_it_is_written_as_a_name(
    brain: Brain, user: User, clock: FixedClock
) -> None:
    async def entities(text: str, speaker: str = "user") -> set[str]:
        captured = await remember(brain, user, text, clock.now(), speaker=speaker)
        async with brain.transactions.read() as session:
            return set((await session.scalars(select(MemoryEntity.name).where(
                MemoryEntity.id == any_(captured.entity_ids)))).all())

    assert await entities("I volunteered at the Center with my sister Anna, then flew to Berlin") == {
        "Center", "Anna", "Berlin"}
    assert await entities("We binged Game of Thrones all weekend") == {"Game of Thrones"}
    # A generic word in lower case or in emphasis names no known thing (at a sentence start, that it is known
    # as a name decides); people and places are still found in lower case, and a multi-word name is specific
    # enough in any case.
    assert await entities("the community center near berlin has a pool, anna says") == {"Anna", "Berlin"}
    assert await entities("**Center** hours: 9 to 5, and the community center is open", speaker="assistant") == set()
    assert await entities("Center staff were kind to us", speaker="assistant") == {"Center"}  # a known name
    assert await entities("honestly game of thrones was better than anything else") == {"Game of Thrones"}
    assert await entities("Anna and I are going back to the Center on Friday") == {"Anna", "Center"}


async def test_two_related_memories_get_edges_both_ways_with_asymmetric_weights(
    brain: Brain, user: User, clock: FixedClock
) -> None:
    await remember(brain, user, "My sister Anna turns thirty next week, I'm so excited for her birthday party!",
                   clock.now())
    clock.advance(timedelta(minutes=5))
    await remember(brain, user, "Anna prefers chocolate cake", clock.now())
    await promote_all(brain)
    first, second = await nodes_of(brain, user)
    assert first.w_abs == pytest.approx(damp(first.w_raw)) and first.w_decay == first.w_abs
    assert first.w_abs != second.w_abs
    edges = await edges_of(brain, user)
    assert {(e.a_id, e.b_id) for e in edges} == {(first.id, second.id), (second.id, first.id)}
    forward = next(e for e in edges if e.a_id == second.id)
    backward = next(e for e in edges if e.a_id == first.id)
    assert "entity" in forward.reasons
    assert forward.shared_entity_ids == backward.shared_entity_ids and len(forward.shared_entity_ids) == 1
    assert forward.w_raw != backward.w_raw
    # The weaker node's edge toward the stronger one is the smaller value.
    weak = second if second.w_abs < first.w_abs else first
    assert next(e for e in edges if e.a_id == weak.id).w_raw < next(e for e in edges if e.a_id != weak.id).w_raw


# Related notes of one person: shared people, themes and days, a near-duplicate, a repeated source key and a
# repeat of a memory that has gone inactive (the notes after it must see it active again).
BATCH_NOTES = [
    ("k1", "My sister Anna started a pottery class on Monday"),
    ("k2", "Anna showed me her first pottery bowl, a bit lopsided"),
    ("k3", "Went running along the river with Tom this morning"),
    ("k4", "Tom and Anna both want to join the pottery studio"),
    ("k5", "My sister Anna started a pottery class on Monday!"),
    ("k6", "The river path was flooded, so the running group met at the park"),
    ("k3", "Went running along the river with Tom this morning"),
    ("k7", "Our old dog Bruno loved swimming in the river"),
    ("k8", "Bruno once stole a sandwich from Tom at the park"),
    ("k9", "Yesterday the pottery studio fired our bowls in the kiln"),
    ("k10", "Anna wants to glaze the bowl blue like the river"),
]


async def _promoted_graph(brain: Brain, person: User, clock: FixedClock, settings: MemorySettings
                          ) -> tuple[dict[str, float], dict[tuple[str, str], tuple[Any, ...]], list[str]]:
    """Promotes BATCH_NOTES for one person (after a memory of Bruno that has gone inactive) and returns the
    graph by source key: node weights, edges with their frozen layer values, and where each entry went."""
    start = clock.now()
    await remember(brain, person, "Our old dog Bruno loved swimming in the river", start, source_key="k0")
    await promote_all(brain, settings, person)
    async with brain.transactions.begin() as uow:
        await uow.session.execute(update(MemoryNode).where(MemoryNode.user_id == person.id).values(active=False))
    for i, (key, text) in enumerate(BATCH_NOTES):
        await remember(brain, person, text, start + timedelta(hours=i + 1), source_key=key)
    clock.set(start + timedelta(hours=len(BATCH_NOTES) + 1))
    await promote_all(brain, settings, person)
    clock.set(start)
    nodes = {n.id: n for n in await nodes_of(brain, person)}
    key_of = {node_id: node.source_key for node_id, node in nodes.items()}
    weights = {node.source_key: node.w_decay for node in nodes.values()}
    edges = {(key_of[e.a_id], key_of[e.b_id]): (round(e.w_raw, 9), round(e.w_abs, 9), tuple(e.reasons),
                                                len(e.shared_entity_ids), tuple(e.shared_themes), e.timeline_days,
                                                round(e.cosine_initial or 0.0, 5), e.layers)
             for e in await edges_of(brain, person)}
    async with brain.transactions.read() as session:
        settled = [key_of.get(node_id, "-") for node_id in (await session.scalars(
            select(ShortTermEntry.node_id).where(ShortTermEntry.user_id == person.id)
            .order_by(ShortTermEntry.at, ShortTermEntry.created_at))).all()]
    return weights, edges, settled


async def test_a_batch_decides_exactly_as_promoting_its_entries_one_by_one(
    brain: Brain, user: User, other_user: User, clock: FixedClock
) -> None:
    # Small candidate limits, so that the batch's own nodes compete with the indexed ones for every limit.
    tight = replace(SETTINGS, ann_candidates=3, entity_candidates=2, theme_candidates=2, timeline_candidates=1)
    one_by_one = await _promoted_graph(brain, user, clock, replace(tight, promotion_batch=1))
    batched = await _promoted_graph(brain, other_user, clock, replace(tight, promotion_batch=64))
    weights, edges, settled = batched
    assert weights["k0"] > SETTINGS.min_weight  # the repeat of k7 half-reactivated the inactive memory
    assert "k5" not in weights and "k7" not in weights  # a near-duplicate and the repeat made no node
    assert settled.count("k3") == 2  # the repeated source key went to the first one's node
    assert any("k0" in pair and "entity" in edge[2] for pair, edge in edges.items())  # k8 -> Bruno, active again
    assert batched == one_by_one


async def test_chunked_candidate_search_decides_exactly_as_promoting_one_by_one(
    brain: Brain, user: User, other_user: User, clock: FixedClock, monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture
) -> None:
    # Chunks of two (the first of one): the chunks' candidates are searched on a second connection while the
    # chunks before are decided and written; the reactivation of the inactive memory in the middle forces the
    # chunks searched ahead to be searched again, in the promotion's own transaction, where the nodes written so
    # far are visible.
    import brain.memory.promotion as promotion

    searched_on: list[Any] = []
    opened: list[Any] = []
    search, searcher = promotion._candidates_of, promotion._searcher

    async def recorded(session: Any, *args: Any) -> Any:
        searched_on.append(session)
        return await search(session, *args)

    @contextlib.asynccontextmanager
    async def recorded_searcher(*args: Any) -> Any:
        async with searcher(*args) as session:
            opened.append(session)
            yield session

    # At each decision, how many chunks the second connection had begun to search.
    searched_before_decision: list[int] = []
    decide = promotion._Walk.decide_in_order

    def recorded_decisions(walk: Any, *args: Any) -> Any:
        searched_before_decision.append(sum(1 for session in searched_on if session in opened))
        time.sleep(0.05)  # slow decisions (a worker thread): a searcher that is not held back would run far ahead
        return decide(walk, *args)

    tight = replace(SETTINGS, ann_candidates=3, entity_candidates=2, theme_candidates=2, timeline_candidates=1)
    one_by_one = await _promoted_graph(brain, user, clock, replace(tight, promotion_batch=1))
    monkeypatch.setattr(promotion, "_candidates_of", recorded)
    monkeypatch.setattr(promotion, "_searcher", recorded_searcher)
    monkeypatch.setattr(promotion._Walk, "decide_in_order", recorded_decisions)
    with caplog.at_level("WARNING", logger="brain.memory.promotion"):
        chunked = await _promoted_graph(brain, other_user, clock,
                                        replace(tight, promotion_batch=64, promotion_chunk=2))
    # Decided as a batch: not failed and redone entry by entry, which would hide a wrong batch by doing it right.
    assert not [r for r in caplog.records if "batch failed" in r.getMessage()]
    assert chunked[0]["k0"] > SETTINGS.min_weight  # the reactivation happened inside the batch
    assert chunked == one_by_one
    second = next(session for session in opened if session is not None)  # the batch had a second connection
    # It searched ahead: the chunks before the reactivation (at the ninth memory) had to be searched before they
    # were decided, all but the first on the second connection.
    assert searched_on.count(second) >= 4
    # But never more than promotion._AHEAD chunks ahead of the decisions (the first chunk is searched by the
    # promotion's own connection, so when chunk j is decided the searcher may have begun chunks 1 .. j + 1 + _AHEAD).
    assert all(searched <= j + 1 + promotion._AHEAD for j, searched in enumerate(searched_before_decision))
    assert searched_on[-1] is not second  # after the reactivation: the promotion's own transaction


async def test_the_last_entry_of_a_batch_searched_ahead_still_reactivates_its_inactive_twin(
    brain: Brain, user: User, clock: FixedClock, caplog: pytest.LogCaptureFixture
) -> None:
    # The decisions stop at a reactivation so the entries after it are searched again; when nothing comes after it,
    # the reactivation must still be written.
    settings = replace(SETTINGS, promotion_batch=64, promotion_chunk=2)
    start = clock.now()
    await remember(brain, user, "Our old dog Bruno loved swimming in the river", start, source_key="k0")
    await promote_all(brain, settings, user)
    async with brain.transactions.begin() as uow:
        await uow.session.execute(update(MemoryNode).where(MemoryNode.user_id == user.id).values(active=False))
    notes = [note for note in BATCH_NOTES if note[0] != "k7"]
    notes.append(("k7", "Our old dog Bruno loved swimming in the river"))
    for i, (key, text) in enumerate(notes):
        await remember(brain, user, text, start + timedelta(hours=i + 1), source_key=key)
    clock.set(start + timedelta(hours=len(notes) + 1))
    with caplog.at_level("WARNING", logger="brain.memory.promotion"):
        await promote_all(brain, settings, user)
    assert not [r for r in caplog.records if "batch failed" in r.getMessage()]
    [bruno] = [node for node in await nodes_of(brain, user) if node.source_key == "k0"]
    assert bruno.active
    assert bruno.w_decay == pytest.approx(half_reactivated(bruno.w_abs, SETTINGS.min_weight))
    assert "k7" not in {node.source_key for node in await nodes_of(brain, user)}  # no node of its own


async def test_an_entry_leaves_the_queue_only_in_the_transaction_that_writes_its_node(
    brain: Brain, user: User, clock: FixedClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Promotion commits without waiting for the disk: that is safe only because a lost commit takes the nodes
    # and the entries' departure from the queue with it. Here the transaction fails after nodes and edges were
    # written: nothing of it stays, the entries are pending again, and the next run promotes them.
    import brain.memory.promotion as promotion

    await remember(brain, user, "Anna prefers chocolate cake", clock.now())
    await remember(brain, user, "Anna bakes a chocolate cake for her birthday", clock.now())

    async def fail_at_the_end(*args: Any, **kwargs: Any) -> None:
        raise RuntimeError("lost before the commit")

    with monkeypatch.context() as patch:
        patch.setattr(promotion, "_log", fail_at_the_end)
        with pytest.raises(RuntimeError):
            await promote_pending(brain.transactions, SETTINGS, user_id=user.id)
    assert await nodes_of(brain, user) == [] and await edges_of(brain, user) == []
    async with brain.transactions.read() as session:
        assert await pending_entries(session, user.id) == 2
    await promote_all(brain, SETTINGS, user)
    assert len(await nodes_of(brain, user)) == 2 and len(await edges_of(brain, user)) == 2
    async with brain.transactions.read() as session:
        assert await pending_entries(session, user.id) == 0


@pytest.mark.parametrize("values", [[], ["entity", "themes"], [str(uuid.UUID(int=7))], ["it's", "birthday-cake"],
                                    ["a,b"], ["", "x"], ["x", ""], [""], ["null"], ["NULL", "x"], ["tab\there"],
                                    ['say "hi"'], ["{brace}"], ["back\\slash"], [uuid.UUID(int=9), "x"]])
def test_edge_rows_go_to_copy_exactly_as_the_general_formatting_writes_them(values: list[Any]) -> None:
    # Edge rows are formatted for COPY with shortcuts for the common values; any value needing quotes or
    # escapes must come out as the general column formatting writes it.
    from brain.memory.promotion import EdgeRow, _copy_line, copy_text

    at = datetime(2024, 5, 1, 12, 30, tzinfo=UTC)
    for days in (None, 4):
        row = EdgeRow(uuid.UUID(int=1), 10, 11, 0.1 + 0.2, 1e-20, values, values, values, days, -0.25, 3, at)
        assert _copy_line(row) == "\t".join(copy_text(value) for value in row) + "\n"


def test_both_directions_of_a_pair_share_their_formatted_reasons_and_nothing_else() -> None:
    # The two rows of a pair carry the same lists, so their common columns are formatted once; rows that share
    # the lists but differ in another common column, or that carry equal but separate lists, come out in full.
    from brain.memory.promotion import EdgeRow, _copy_line, copy_lines

    at = datetime(2024, 5, 1, 12, 30, tzinfo=UTC)
    reasons, entities, themes = ["entity", "themes"], [str(uuid.UUID(int=7))], ["cake", "it's"]
    person = uuid.UUID(int=1)
    rows = [EdgeRow(person, 10, 11, 0.3, 0.5, reasons, entities, themes, 4, 0.25, 2, at),
            EdgeRow(person, 11, 10, 0.7, 0.9, reasons, entities, themes, 4, 0.25, 2, at),
            EdgeRow(person, 12, 10, 0.7, 0.9, reasons, entities, themes, None, 0.25, 2, at),
            EdgeRow(person, 12, 13, 0.1, 0.2, reasons, entities, themes, None, 0.5, 2, at),
            EdgeRow(person, 13, 12, 0.1, 0.2, ["embedding"], [], [], None, 0.5, 1, at),
            EdgeRow(person, 14, 12, 0.1, 0.2, ["embedding"], [], [], None, 0.5, 1, at)]
    assert copy_lines(rows) == "".join(_copy_line(row) for row in rows)
    assert copy_lines(rows).count("\t4\t") == 2 and copy_lines(rows).count("{embedding}") == 2
    assert copy_lines([]) == ""


async def test_unrelated_memories_get_no_edge(brain: Brain, user: User, clock: FixedClock) -> None:
    await remember(brain, user, "The tax office sent a letter about the property assessment", clock.now())
    await remember(brain, user, "Wir haben im Garten Tomaten gepflanzt", clock.now())
    await promote_all(brain)
    assert len(await nodes_of(brain, user)) == 2
    assert await edges_of(brain, user) == []


async def test_a_duplicate_makes_no_node_and_reinforces_nothing(brain: Brain, user: User, clock: FixedClock) -> None:
    text = "I started learning the piano with a teacher every Thursday"
    first = await remember(brain, user, text, clock.now())
    await promote_all(brain)
    [node] = await nodes_of(brain, user)
    clock.advance(timedelta(days=3))
    second = await remember(brain, user, text, clock.now())
    report = await promote_pending(brain.transactions, SETTINGS, user_id=user.id)
    assert report.duplicates == 1 and report.promoted == 0
    [same] = await nodes_of(brain, user)
    assert (same.id, same.w_raw, same.w_abs, same.frequency) == (node.id, node.w_raw, node.w_abs, 1)
    assert (await entry(brain, second.id)).node_id == node.id
    assert (await entry(brain, first.id)).node_id == node.id


async def test_what_a_person_says_differently_is_no_duplicate_while_a_reworded_reply_is(brain: Brain, user: User,
                                                                                       clock: FixedClock) -> None:
    said = ["My gym locker code is 4711", "My gym locker code is 4712",  # a correction: another number
            "Tom is allergic to peanuts", "Tom is not allergic to peanuts",  # a contradiction
            "Is Tom allergic to peanuts?"]  # a question tells nothing
    for text in said:
        await remember(brain, user, text, clock.now())
        clock.advance(timedelta(minutes=1))
    for text in ("Here are 3 ideas for the party: 1. a quiz 2. karaoke 3. a picnic",
                 "Here are 3 ideas for the party: 1. a picnic 2. karaoke 3. a quiz 4. bowling"):
        await remember(brain, user, text, clock.now(), speaker="assistant")
        clock.advance(timedelta(minutes=1))
    await promote_all(brain)
    texts = sorted(node.text for node in await nodes_of(brain, user))
    assert texts == sorted([*said, "Here are 3 ideas for the party: 1. a quiz 2. karaoke 3. a picnic"])


async def test_the_same_source_key_is_promoted_once(brain: Brain, user: User, clock: FixedClock) -> None:
    await remember(brain, user, "We adopted a cat called Miso", clock.now(), source_key="bench:1")
    await remember(brain, user, "We adopted a cat called Miso", clock.now(), source_key="bench:1")
    await promote_all(brain)
    nodes = await nodes_of(brain, user)
    assert [n.source_key for n in nodes] == ["bench:1"]


@pytest.mark.parametrize("at", [None, "last tuesday", "2023-05-20T00:59:00", datetime(2023, 5, 20),
                                datetime(1969, 1, 1, tzinfo=UTC)])
async def test_a_missing_or_unreadable_timestamp_is_rejected_and_logged(
    brain: Brain, user: User, clock: FixedClock, at: Any
) -> None:
    captured = await remember(brain, user, "Something worth keeping", at)
    assert captured.status == "rejected"
    stored = await entry(brain, captured.id)
    assert (stored.status, stored.at) == ("rejected", None)
    await promote_all(brain)
    assert await nodes_of(brain, user) == []
    async with brain.transactions.read() as session:
        errors = (await session.scalars(select(PipelineLogEntry).where(
            PipelineLogEntry.user_id == user.id, PipelineLogEntry.kind == "error"))).all()
    assert len(errors) == 1
    assert errors[0].content is not None and errors[0].content["entry_id"] == str(captured.id)
    assert errors[0].at == clock.now()


async def test_promotion_rejects_a_queued_entry_without_a_time_instead_of_using_now(
    brain: Brain, user: User, clock: FixedClock
) -> None:
    # An entry that reached the queue some other way, without its message time.
    async with brain.transactions.begin() as uow:
        uow.session.add(ShortTermEntry(id=uuid.uuid4(), user_id=user.id, speaker="user", text="no time", at=None,
                                       embedding=EMBEDDER.embed(["no time"])[0], embedder=WORDLLAMA_256.key,
                                       status="pending"))
    report = await promote_pending(brain.transactions, SETTINGS, user_id=user.id)
    assert (report.rejected, report.promoted) == (1, 0)
    assert await nodes_of(brain, user) == []
    async with brain.transactions.read() as session:
        assert await pending_entries(session, user.id) == 0
        logged = await session.scalar(select(func.count()).select_from(PipelineLogEntry).where(
            PipelineLogEntry.user_id == user.id, PipelineLogEntry.kind == "error"))
    assert logged == 1


async def test_an_entry_without_an_embedding_is_rejected_and_the_rest_of_its_batch_promoted(
    brain: Brain, user: User, other_user: User, clock: FixedClock
) -> None:
    # The batch reads its entries' vectors apart from the entries and settles every entry in one statement: the
    # entry without a vector is rejected with its reason, each other one points to its node, and another person's
    # queue is not touched.
    kept = [await remember(brain, user, text, clock.now() - timedelta(minutes=5 - i))
            for i, text in enumerate(["Lena plays the cello on Sundays", "The bakery on Kastanienallee opens at 7"])]
    theirs = await remember(brain, other_user, "Tom runs every morning", clock.now() - timedelta(minutes=5))
    no_vector = uuid.uuid4()
    async with brain.transactions.begin() as uow:
        uow.session.add(ShortTermEntry(id=no_vector, user_id=user.id, speaker="user", text="no vector",
                                       at=clock.now() - timedelta(minutes=4), embedding=None, status="pending"))
    report = await promote_pending(brain.transactions, SETTINGS, user_id=user.id)
    assert (report.claimed, report.promoted, report.rejected) == (3, 2, 1)
    rejected = await entry(brain, no_vector)
    assert (rejected.status, rejected.node_id, rejected.last_error) == ("rejected", None, "no embedding")
    nodes = {node.id: node for node in await nodes_of(brain, user)}
    for captured in kept:
        settled = await entry(brain, captured.id)
        assert settled.status == "promoted" and settled.last_error is None
        assert settled.node_id in nodes and nodes[settled.node_id].text == settled.text
    assert (await entry(brain, theirs.id)).status == "pending"


async def test_entries_wait_until_they_are_mature(brain: Brain, user: User, clock: FixedClock) -> None:
    slow = replace(SETTINGS, promotion_maturity_s=30)
    await remember(brain, user, "Just said this", clock.now())
    assert (await promote_pending(brain.transactions, slow, user_id=user.id)).claimed == 0
    clock.advance(timedelta(seconds=31))
    assert (await promote_pending(brain.transactions, slow, user_id=user.id)).promoted == 1


TOPICS = ["sailing on the lake", "a broken bicycle chain", "my grandmother's apple pie recipe", "quarterly tax forms",
          "a jazz concert downtown", "repainting the kitchen walls", "learning Japanese verbs", "a chess tournament",
          "planting tulip bulbs", "the dentist appointment", "a marathon training plan", "fixing the leaking roof"]


async def test_two_concurrent_promoters_promote_every_entry_exactly_once(
    brain: Brain, user: User, other_user: User, clock: FixedClock
) -> None:
    for person in (user, other_user):
        for i, topic in enumerate(TOPICS):
            await remember(brain, person, f"Note {i}: today was about {topic}", clock.now() + timedelta(seconds=i))
    clock.advance(timedelta(minutes=1))
    small = replace(SETTINGS, promotion_batch=5)
    reports: list[PromotionReport] = []
    while True:
        batch = await asyncio.gather(promote_pending(brain.transactions, small),
                                     promote_pending(brain.transactions, small))
        reports.extend(batch)
        if not any(r.claimed for r in batch):
            break
    claimed = sum(r.claimed for r in reports)
    settled = sum(r.promoted + r.duplicates + r.reactivated + r.rejected for r in reports)
    assert claimed == settled == 2 * len(TOPICS)
    node_ids = [i for r in reports for i in r.node_ids]
    assert len(node_ids) == len(set(node_ids))
    async with brain.transactions.read() as session:
        assert await pending_entries(session) == 0
        nodes = await session.scalar(select(func.count()).select_from(MemoryNode))
        with_node = await session.scalar(select(func.count()).select_from(ShortTermEntry)
                                         .where(ShortTermEntry.node_id.is_not(None)))
    assert nodes == len(node_ids)
    assert with_node == 2 * len(TOPICS)


async def test_decay_deactivates_and_a_later_duplicate_half_reactivates(
    brain: Brain, user: User, clock: FixedClock
) -> None:
    text = "Our old dog Bruno loved swimming in the river"
    await remember(brain, user, text, clock.now())
    await promote_all(brain)
    [node] = await nodes_of(brain, user)
    clock.advance(timedelta(days=30))
    report = await run_decay(brain.transactions, SETTINGS)
    [aged] = await nodes_of(brain, user)
    assert report.processed == 1 and aged.active
    assert aged.w_decay == pytest.approx(node.w_abs * 2.718281828 ** (-0.0015 * 30), rel=1e-6)
    assert aged.decayed_at == clock.now()

    # A day later its presence moved by 0.15 %: the row is not rewritten (a new row version indexes its vector
    # again), though the node's stored weight is within the tolerance of its presence.
    clock.advance(timedelta(days=1))
    report = await run_decay(brain.transactions, SETTINGS)
    [same] = await nodes_of(brain, user)
    assert report.processed == 0 and same.active and same.decayed_at == aged.decayed_at
    assert same.w_decay == pytest.approx(node.w_abs * 2.718281828 ** (-0.0015 * 31), rel=SETTINGS.decay_write_tolerance)

    clock.advance(timedelta(days=365 * 7))
    report = await run_decay(brain.transactions, SETTINGS)
    [faded] = await nodes_of(brain, user)
    assert report.deactivated_ids == [node.id]
    assert not faded.active and faded.w_decay < SETTINGS.min_weight
    assert faded.w_abs == node.w_abs  # decay never touches the anchor strength

    await remember(brain, user, text, clock.now())
    result = await promote_pending(brain.transactions, SETTINGS, user_id=user.id)
    assert (result.reactivated, result.promoted) == (1, 0)
    [back] = await nodes_of(brain, user)
    assert back.active
    assert back.w_decay == pytest.approx(half_reactivated(node.w_abs, SETTINGS.min_weight))
    assert (back.w_raw, back.w_abs, back.frequency) == (node.w_raw, node.w_abs, 1)
    assert back.reinforced_at == clock.now()


async def test_inactive_nodes_get_no_new_edges(brain: Brain, user: User, clock: FixedClock) -> None:
    await remember(brain, user, "Lunch with my colleague Tom at the ramen bar", clock.now())
    await promote_all(brain)
    async with brain.transactions.begin() as uow:
        await uow.session.execute(update(MemoryNode).where(MemoryNode.user_id == user.id).values(active=False))
    await remember(brain, user, "Tom recommended a new book about habits", clock.now())
    await promote_all(brain)
    assert len(await nodes_of(brain, user)) == 2
    assert await edges_of(brain, user) == []


async def test_candidates_and_duplicates_never_cross_people(
    brain: Brain, user: User, other_user: User, clock: FixedClock
) -> None:
    text = "My friend Lena and I went to the lake for a picnic yesterday"
    await remember(brain, user, text, clock.now())
    await remember(brain, user, "Lena wants to go to the lake again", clock.now())
    await promote_all(brain)
    await remember(brain, other_user, text, clock.now())
    await promote_all(brain)
    mine, theirs = await nodes_of(brain, user), await nodes_of(brain, other_user)
    assert len(mine) == 2 and len(theirs) == 1  # the identical text is no duplicate across people
    their_edges = await edges_of(brain, other_user)
    assert their_edges == []
    async with brain.transactions.read() as session:
        all_edges = (await session.scalars(select(MemoryEdge))).all()
        entity_users = set((await session.scalars(select(MemoryEntity.user_id).where(
            MemoryEntity.name == "Lena"))).all())
        candidates = await edge_candidates(session, SETTINGS, other_user.id, list(theirs[0].embedding),
                                           MagnetFields(list(mine[0].entity_ids), list(mine[0].themes),
                                                        mine[0].timeline_start, mine[0].timeline_precision))
    mine_ids = {n.id for n in mine}
    assert all((e.a_id in mine_ids) == (e.b_id in mine_ids) for e in all_edges)
    assert entity_users == {user.id, other_user.id}  # each person has their own Lena
    assert [c.id for c in candidates] == [theirs[0].id]


async def test_recomputing_edges_follows_a_changed_node_strength(brain: Brain, user: User, clock: FixedClock) -> None:
    await remember(brain, user, "My brother Max moved to Lisbon", clock.now())
    await remember(brain, user, "Max sent photos of the ocean", clock.now())
    await promote_all(brain)
    first, _ = await nodes_of(brain, user)
    before = {(e.a_id, e.b_id): e.w_abs for e in await edges_of(brain, user)}
    async with brain.transactions.begin() as uow:
        await uow.session.execute(update(MemoryNode).where(MemoryNode.id == first.id)
                                  .values(w_raw=5.0, w_abs=damp(5.0)))
        assert await recompute_edges(uow.session, user.id, [first.id], SETTINGS) == 2
    after = {(e.a_id, e.b_id): e.w_abs for e in await edges_of(brain, user)}
    assert set(after) == set(before)
    assert all(after[pair] > before[pair] for pair in before)


async def test_promotion_is_logged_as_a_span(brain: Brain, user: User, clock: FixedClock) -> None:
    log = PipelineLog(brain.db.sessions, clock)
    await remember(brain, user, "We booked the flights to Oslo", clock.now(), log=log)
    await promote_pending(brain.transactions, SETTINGS, user_id=user.id, log=log)
    await log.close()
    async with brain.transactions.read() as session:
        rows = (await session.scalars(select(PipelineLogEntry).where(PipelineLogEntry.user_id == user.id)
                                      .order_by(PipelineLogEntry.id))).all()
        span_id = rows[-1].span_id
        assert span_id is not None
        span_rows = await query_span(session, span_id)
    assert [r.kind for r in rows] == ["db_write", "span_start", "db_write", "span_end"]
    assert rows[2].content is not None and rows[2].content["table"] == "memory_nodes"
    assert [r.kind for r in span_rows] == ["span_start", "db_write", "span_end"]


async def test_pipeline_log_flushes_on_close_and_answers_turn_and_span_queries(
    brain: Brain, user: User, clock: FixedClock
) -> None:
    log = PipelineLog(brain.db.sessions, clock, flush_interval_s=3600)
    turn, other_turn = uuid.uuid4(), uuid.uuid4()
    async with log.span("turn", user_id=user.id, turn_id=turn) as outer:
        outer.log("input", "dialog", {"text": "hello"})
        async with log.span("recall", user_id=user.id, turn_id=turn, parent=outer) as inner:
            inner.log("calculation", "anchors", {"count": 3})
            async with log.span("rank", user_id=user.id, turn_id=turn, parent=inner) as deepest:
                deepest.log("switch", "depth", {"decision": 1})
        outer.log("output", "dialog", {"text": "hi"})
    log.log("input", "dialog", {"text": "other"}, user_id=user.id, turn_id=other_turn)
    async with brain.transactions.read() as session:
        assert await query_turn(session, turn) == []  # still buffered
    await log.close()
    async with brain.transactions.read() as session:
        whole_turn = await query_turn(session, turn)
        recall_span = await query_span(session, inner.span_id)
        mine = await query_turn(session, turn, user_id=user.id)
        nobody = await query_turn(session, turn, user_id=uuid.uuid4())
    assert [r.kind for r in whole_turn] == ["span_start", "input", "span_start", "calculation", "span_start", "switch",
                                            "span_end", "span_end", "output", "span_end"]
    assert {r.span_id for r in recall_span} == {inner.span_id, deepest.span_id}
    assert len(recall_span) == 6
    assert len(mine) == len(whole_turn) and nobody == []


async def test_decay_job_prunes_pipeline_rows_older_than_a_year(brain: Brain, user: User, clock: FixedClock) -> None:
    async with brain.transactions.begin() as uow:
        await write_log_now(uow.session, "remark", "old", "x", at=clock.now() - timedelta(days=366), user_id=user.id)
        await write_log_now(uow.session, "remark", "new", "y", at=clock.now() - timedelta(days=364), user_id=user.id)
    report = await run_decay(brain.transactions, SETTINGS)
    assert report.log_rows_deleted == 1
    async with brain.transactions.read() as session:
        names = (await session.scalars(select(PipelineLogEntry.name))).all()
    assert names == ["new"]


async def _log_coffee(brain: Brain, user: User, clock: FixedClock, at: datetime) -> None:
    """Logs a coffee at `at` (events carry the clock's time) and puts the clock back."""
    back = clock.now()
    clock.set(at)
    async with brain.transactions.begin() as uow:
        uow.emit(DrinkLogged(entry_id=uuid.uuid4(), drink_type="coffee", quantity_ml=200, name="Coffee",
                             date=at.date(), time=at.strftime("%H:%M"), from_preset=True),
                 user_id=user.id, record_id=uuid.uuid4(), actor=USER)
    clock.set(back)


async def test_fact_extractors_find_a_weekday_pattern_and_confirm_it_weekly(
    brain: Brain, user: User, clock: FixedClock
) -> None:
    monday = clock.now()  # Monday 08:30 in Berlin
    for weeks_back in (3, 2, 1):
        # Coffee on the last three Mondays at 08:00 Berlin, and on one Thursday.
        await _log_coffee(brain, user, clock, monday - timedelta(weeks=weeks_back, minutes=30))
    await _log_coffee(brain, user, clock, monday - timedelta(days=4))
    report = await extract_facts(brain.transactions, user.id, SETTINGS)
    assert report.created == ["weekday:drink:coffee:0"]
    again = await extract_facts(brain.transactions, user.id, SETTINGS)
    assert again.confirmed == [] and again.created == []  # at most one confirmation per week

    await _log_coffee(brain, user, clock, monday + timedelta(weeks=1, minutes=-30))
    clock.set(monday + timedelta(weeks=1))
    later = await extract_facts(brain.transactions, user.id, SETTINGS)
    assert later.confirmed == ["weekday:drink:coffee:0"]
    async with brain.transactions.read() as session:
        fact = await session.scalar(select(MemoryFact).where(MemoryFact.key == "weekday:drink:coffee:0"))
        context = await facts_for_context(session, user.id)
    assert fact is not None
    # Three of the four Mondays in the window: the evidence of four weeks, not enough to say "more often than not".
    assert fact.confidence == pytest.approx(evidence_confidence(3, 4)) and fact.confirmations == 1
    assert 0.3 < fact.confidence < 0.4
    assert fact.statement == "Usually drinks coffee on Mondays"
    assert context == []  # below 0.5 nothing reaches the context document
    async with brain.transactions.begin() as uow:
        await uow.session.execute(update(MemoryFact).where(MemoryFact.id == fact.id).values(confidence=0.6))
    async with brain.transactions.read() as session:
        assert await facts_for_context(session, user.id) == ["Usually drinks coffee on Mondays"]


async def test_a_habit_that_moves_to_another_day_contradicts_the_old_fact(
    brain: Brain, user: User, clock: FixedClock
) -> None:
    monday = clock.now()
    for weeks_back in (3, 2, 1):
        await _log_coffee(brain, user, clock, monday - timedelta(weeks=weeks_back, minutes=30))
    await extract_facts(brain.transactions, user.id, SETTINGS)
    # Four weeks later the coffee happens on Wednesdays only.
    later = monday + timedelta(weeks=4)
    for weeks_back in (3, 2, 1):
        await _log_coffee(brain, user, clock, later - timedelta(weeks=weeks_back) + timedelta(days=2))
    clock.set(later)
    report = await extract_facts(brain.transactions, user.id, SETTINGS)
    assert "weekday:drink:coffee:0" in report.contradicted
    assert "weekday:drink:coffee:2" in report.created
    # No Monday in the window's four weeks: the evidence leaves nothing of the old fact.
    assert "weekday:drink:coffee:0" in report.deleted
    async with brain.transactions.read() as session:
        old = await session.scalar(select(MemoryFact).where(MemoryFact.key == "weekday:drink:coffee:0"))
    assert old is None


async def test_an_unconfirmed_fact_fades_and_is_deleted(brain: Brain, user: User, clock: FixedClock) -> None:
    async with brain.transactions.begin() as uow:
        uow.session.add(MemoryFact(user_id=user.id, kind="preference", key="window:task:morning",
                                   statement="Mostly completes tasks in the morning", confidence=0.3,
                                   last_confirmed=clock.now(), source="rules", checked_at=clock.now()))
    clock.advance(timedelta(days=30 + 7 * 4))
    report = await extract_facts(brain.transactions, user.id, SETTINGS)
    async with brain.transactions.read() as session:
        fact = await session.scalar(select(MemoryFact).where(MemoryFact.user_id == user.id))
    assert fact is not None and fact.confidence == pytest.approx(0.1) and report.deleted == []
    clock.advance(timedelta(days=7))
    report = await extract_facts(brain.transactions, user.id, SETTINGS)
    assert report.deleted == ["window:task:morning"]


@pytest.mark.parametrize("stage", ["search", "write"])
async def test_a_stage_failing_mid_batch_lets_the_others_finish_and_the_batch_is_redone_one_by_one(
    brain: Brain, user: User, other_user: User, clock: FixedClock, monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture, stage: str
) -> None:
    # Searching, deciding and writing overlap: when one fails in the middle, the others must finish before the
    # batch's savepoint is rolled back and its entries are promoted one by one, with the same outcome.
    import brain.memory.promotion as promotion

    calls = {"search": 0, "write": 0}
    search, write = promotion._candidates_of, promotion._Walk.write
    in_batch = {"on": False}

    async def failing_search(session: Any, *args: Any) -> Any:
        if in_batch["on"]:
            calls["search"] += 1
            if stage == "search" and calls["search"] == 3:
                raise RuntimeError("search broke")
        return await search(session, *args)

    async def failing_write(self: Any, *args: Any) -> Any:
        if in_batch["on"]:
            calls["write"] += 1
            if stage == "write" and calls["write"] == 2:
                raise RuntimeError("write broke")
        return await write(self, *args)

    real_run = promotion._run_batch

    async def run_batch(session: Any, settings: Any, entries: Any, now: Any, searcher: Any = None) -> Any:
        in_batch["on"] = searcher is not None  # only the batch with a searcher fails, not its redo one by one
        try:
            return await real_run(session, settings, entries, now, searcher)
        finally:
            in_batch["on"] = False

    tight = replace(SETTINGS, ann_candidates=3, entity_candidates=2, theme_candidates=2, timeline_candidates=1)
    one_by_one = await _promoted_graph(brain, user, clock, replace(tight, promotion_batch=1))
    monkeypatch.setattr(promotion, "_candidates_of", failing_search)
    monkeypatch.setattr(promotion._Walk, "write", failing_write)
    monkeypatch.setattr(promotion, "_run_batch", run_batch)
    with caplog.at_level("WARNING", logger="brain.memory.promotion"):
        redone = await _promoted_graph(brain, other_user, clock,
                                       replace(tight, promotion_batch=64, promotion_chunk=2))
    assert calls[stage] >= (3 if stage == "search" else 2)  # the failure happened inside the batch
    assert [r for r in caplog.records if "batch failed" in r.getMessage()]
    assert redone == one_by_one
