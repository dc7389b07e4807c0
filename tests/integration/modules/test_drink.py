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


async def test_several_alike_are_one_call_each_with_its_event_and_undone_together(brain: Brain, user) -> None:
    logged = await brain.tools.execute(user.id, "log_drink", {"drink_type": "coffee", "count": 3}, USER)
    assert logged.ok and logged.data["count"] == 3 and len(logged.data["entry_ids"]) == 3
    assert logged.data["coffee_count"] == 3
    async with brain.transactions.read() as s:
        assert [e.type for e in await query_events(s, user.id, module="drink")] == ["DrinkLogged"] * 3
    other = await brain.tools.execute(user.id, "log_drink", {"drink_type": "water"}, USER)
    undone = await brain.tools.execute(user.id, "undo_last_drink",
                                       {"entry_ids": ", ".join(logged.data["entry_ids"])}, USER)
    assert undone.ok and undone.data["coffee_count"] == 0 and undone.data["water_ml"] == 250
    async with brain.transactions.read() as s:
        left = (await s.scalars(select(DrinkEntry.id))).all()
        events = await query_events(s, user.id, module="drink")
    assert [str(i) for i in left] == [other.data["entry_id"]]
    assert [e.type for e in events].count("DrinkEntryUndone") == 3


@pytest.mark.parametrize("entry_ids", ["1,2", "", "x" * 37, "{known}, 00000000-0000-0000-0000-000000000000"])
async def test_undo_of_drinks_not_there_changes_nothing(brain: Brain, user, entry_ids: str) -> None:
    logged = await brain.tools.execute(user.id, "log_drink", {"drink_type": "tea"}, USER)
    before = (await _count(brain, DrinkEntry), await _count(brain, EventRecord))
    result = await brain.tools.execute(user.id, "undo_last_drink",
                                       {"entry_ids": entry_ids.format(known=logged.data["entry_id"])}, USER)
    if entry_ids:
        assert not result.ok and result.error_code == "not_found"
        assert (await _count(brain, DrinkEntry), await _count(brain, EventRecord)) == before
    else:  # no ids: the latest drink, as before
        assert result.ok and await _count(brain, DrinkEntry) == 0


async def test_nobody_undoes_another_persons_drink(brain: Brain, user) -> None:
    from brain.people.service import resolve_identity

    async with brain.transactions.begin() as uow:
        mallory = await resolve_identity(uow.session, "test", "mallory", default_locale="en",
                                         default_timezone="Europe/Berlin")
    logged = await brain.tools.execute(user.id, "log_drink", {"drink_type": "water"}, USER)
    refused = await brain.tools.execute(mallory.id, "undo_last_drink", {"entry_ids": logged.data["entry_id"]}, USER)
    assert not refused.ok and refused.error_code == "not_found"
    assert await _count(brain, DrinkEntry) == 1


async def test_the_latest_drink_is_corrected_in_one_transaction_and_nothing_else_changes(brain: Brain, user) -> None:
    await brain.tools.execute(user.id, "log_drink", {"drink_type": "coffee"}, USER)
    await brain.tools.execute(user.id, "log_drink", {"drink_type": "water", "quantity_ml": 500}, USER)
    amount = await brain.tools.execute(user.id, "correct_last_drink", {"quantity_ml": 250}, USER)
    assert amount.ok and amount.data["water_ml"] == 250 and amount.data["coffee_count"] == 1
    kind = await brain.tools.execute(user.id, "correct_last_drink", {"drink_type": "tea"}, USER)
    assert kind.ok and kind.data["water_ml"] == 0 and kind.data["coffee_count"] == 1
    # An amount that was said stays with a new kind; a usual portion becomes the new kind's usual portion.
    await brain.tools.execute(user.id, "log_drink", {"drink_type": "juice", "quantity_ml": 400}, USER)
    assert (await brain.tools.execute(user.id, "correct_last_drink", {"drink_type": "smoothie"}, USER)).ok
    await brain.tools.execute(user.id, "log_drink", {"drink_type": "coffee"}, USER)
    assert (await brain.tools.execute(user.id, "correct_last_drink", {"drink_type": "alcohol", "name": "Bier"},
                                      USER)).ok
    async with brain.transactions.read() as s:
        left = sorted((e.drink_type, e.name, e.quantity_ml) for e in (await s.scalars(select(DrinkEntry))).all())
        types = [e.type for e in await query_events(s, user.id, module="drink")]
    assert left == [("alcohol", "Bier", 330), ("coffee", "coffee", 150), ("smoothie", "smoothie", 400),
                    ("tea", "tea", 250)]
    assert types.count("DrinkEntryUndone") == 4 and types.count("DrinkLogged") == 8
    before = (await _count(brain, DrinkEntry), await _count(brain, EventRecord))
    refused = await brain.tools.execute(user.id, "correct_last_drink", {}, USER)
    assert not refused.ok and refused.error_code == "missing_change"
    assert (await _count(brain, DrinkEntry), await _count(brain, EventRecord)) == before


async def test_a_correction_with_no_drink_today_says_so_and_changes_nothing(brain: Brain, user) -> None:
    before = (await _count(brain, DrinkEntry), await _count(brain, EventRecord))
    refused = await brain.tools.execute(user.id, "correct_last_drink", {"quantity_ml": 250}, USER)
    assert not refused.ok and refused.error_code == "nothing_to_correct"
    assert (await _count(brain, DrinkEntry), await _count(brain, EventRecord)) == before
