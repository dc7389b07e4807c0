"""Drink module: each mutation writes its record and exactly its event, with the actor; a failing
transaction leaves neither."""

from __future__ import annotations

import pytest
from sqlalchemy import func, select

from brain.core import Brain
from brain.events.actor import USER, ai, system
from brain.events.store import EventRecord, query_events
from brain.modules.drink import service
from brain.modules.drink.models import DrinkEntry


async def _count(brain: Brain, model: type) -> int:
    async with brain.transactions.read() as s:
        return int(await s.scalar(select(func.count()).select_from(model)) or 0)


async def test_log_drink_writes_entry_and_event_with_actor(brain: Brain, user) -> None:
    seen = []
    brain.bus.subscribe("DrinkLogged", seen.append)
    async with brain.transactions.begin() as uow:
        entry, progress = await service.log_drink(uow, user, USER, "water", 250)
    assert progress.water_ml == 250 and progress.water_goal_ml == 2000
    async with brain.transactions.read() as s:
        events = await query_events(s, user.id, module="drink")
    assert [e.type for e in events] == ["DrinkLogged"]
    assert events[0].meta.actor.kind == "user"
    assert events[0].meta.record_id == str(entry.id)
    assert events[0].payload.quantity_ml == 250  # type: ignore[attr-defined]
    assert len(seen) == 1 and seen[0].meta.id == events[0].meta.id


async def test_failed_transaction_leaves_neither_record_nor_event(brain: Brain, user) -> None:
    seen = []
    brain.bus.subscribe_all(seen.append)
    with pytest.raises(RuntimeError):
        async with brain.transactions.begin() as uow:
            await service.log_drink(uow, user, USER, "water", 250)
            raise RuntimeError("boom after the write")
    assert await _count(brain, DrinkEntry) == 0
    assert await _count(brain, EventRecord) == 0
    assert seen == []


async def test_undo_last_drink_emits_undone_with_ai_actor(brain: Brain, user) -> None:
    async with brain.transactions.begin() as uow:
        await service.log_drink(uow, user, USER, "water", 250)
        await service.log_drink(uow, user, USER, "coffee", 150)
    async with brain.transactions.begin() as uow:
        undone = await service.undo_last_drink(uow, user, ai(rationale="user said oops"))
    assert undone.drink_type == "coffee"
    async with brain.transactions.read() as s:
        latest = (await query_events(s, user.id, limit=1))[0]
    assert latest.type == "DrinkEntryUndone"
    assert latest.meta.actor.kind == "ai" and latest.meta.actor.rationale == "user said oops"  # type: ignore[union-attr]
    assert await _count(brain, DrinkEntry) == 1


async def test_crossing_the_water_goal_emits_goal_reached_once(brain: Brain, user) -> None:
    async with brain.transactions.begin() as uow:
        await service.set_goal(uow, user, system("bootstrap"), 500)
    for _ in range(3):
        async with brain.transactions.begin() as uow:
            await service.log_drink(uow, user, USER, "water", 250)
    async with brain.transactions.read() as s:
        reached = await query_events(s, user.id, types="DrinkGoalReached")
        goal_set = await query_events(s, user.id, types="DrinkGoalSet")
    assert len(reached) == 1 and reached[0].payload.actual_ml == 500  # type: ignore[attr-defined]
    assert goal_set[0].meta.actor.kind == "system"
