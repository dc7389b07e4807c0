"""The hottest statements are planned once per connection, not on every run.

psycopg prepares a statement after its fifth run on a connection; PostgreSQL then plans it once (a generic plan)
only where that plan is about as cheap as one made for the values at hand. Two things make it plan anew on every
run: bound arrays standing for one person (the planner cannot know there is one) and a bound status compared where
a partial index expects a literal (`WHERE status = 'pending'`). Both cost 0.3-3 ms of server CPU per message in
`benchmarks/telegram_load.py`. A database with some people's data in it, analysed, makes the difference visible:
on empty tables every plan is cheap and any variant would pass."""

from __future__ import annotations

import uuid
from datetime import UTC, date, datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import insert, text

from adapters.telegram.outbound import telegram_sender
from brain.core import Brain
from brain.modules.drink.models import DrinkEntry
from brain.outbox.models import OutboxMessage
from brain.people.local_time import day_bounds, local_date
from brain.people.models import User
from brain.people.service import resolve_identity
from brain.projections import day_snapshot, streaks
from brain.projections.models import StreakState

# psycopg prepares a statement on its 6th run; PostgreSQL plans the prepared statement for the values at hand 5 times,
# then keeps one generic plan if that is about as cheap: from the 11th run on.
RUNS = 13


async def _people(brain: Brain, count: int) -> list[User]:
    people = []
    async with brain.transactions.begin() as uow:
        for n in range(count):
            people.append(await resolve_identity(uow.session, "telegram", str(7000 + n), default_locale="en",
                                                 default_timezone="Europe/Berlin"))
    return people


async def _fill(brain: Brain, people: list[User], *, analyze: bool = True) -> None:
    """A few weeks of drinks, a streak and sent replies for everyone; then ANALYZE, or not (as before autovacuum
    came by)."""
    now = brain.clock.now()
    async with brain.db.engine.begin() as connection:
        await connection.execute(insert(DrinkEntry), [
            {"id": uuid.uuid4(), "user_id": p.id, "drink_type": "water", "name": "Water", "quantity_ml": 250,
             "logged_at": now - timedelta(days=d), "local_date": (now - timedelta(days=d)).date()}
            for p in people for d in range(20)])
        await connection.execute(insert(StreakState), [
            {"user_id": p.id, "streak": "water", "current": 3, "longest": 5, "last_active": now.date(),
             "strength": 0.4, "updated_at": now} for p in people[::2]])
        await connection.execute(insert(OutboxMessage), [
            {"user_id": p.id, "kind": "reply", "slot": f"r-{p.id}-{k}", "platform": "telegram",
             "chat_id": str(7000 + n), "text": "an answer", "buttons": [], "status": "sent"}
            for n, p in enumerate(people) for k in range(4)])
        for _ in range(3):  # as days go by: every state row written again (dead rows until vacuum)
            await connection.execute(text("UPDATE streak_states SET current = current + 1"))
        if analyze:
            await connection.execute(text("ANALYZE"))


async def _plans(brain: Brain, statement: Any, params: dict[str, Any]) -> tuple[int, int]:
    """(generic plans, custom plans) of `statement` after RUNS runs on one connection, as the app runs it."""
    prepared = text("SELECT name, generic_plans, custom_plans FROM pg_prepared_statements")
    async with brain.db.engine.connect() as connection:
        before = {row.name for row in await connection.execute(prepared)}
        for _ in range(RUNS):
            await connection.execute(statement, params)
        # Read before the transaction ends: psycopg forgets its prepared statements on a rollback.
        rows = [row for row in await connection.execute(prepared) if row.name not in before]
        await connection.rollback()
    assert len(rows) == 1, "psycopg did not prepare the statement"
    return int(rows[0].generic_plans), int(rows[0].custom_plans)


@pytest.mark.parametrize("analyzed", [False, True], ids=["fresh", "analyzed"])
async def test_the_hot_statements_get_a_generic_plan(brain: Brain, analyzed: bool) -> None:
    """With these 1,000 people, each of the three as it was before (bound arrays, a bound status) is planned on
    every run, in the fresh state at least; the claim in both."""
    people = await _people(brain, 1000)
    await _fill(brain, people, analyze=analyzed)
    someone = people[7]
    now = brain.clock.now()
    today: date = local_date(someone, now)
    start, end = day_bounds(someone, today)

    snapshot = await _plans(brain, day_snapshot._IN_ONE, {
        "user_id": someone.id, "day": today, "day_start": start, "day_end": end, "now": now})
    streak_rows = await _plans(brain, streaks._STREAKS_OF_ONE, {"user_id": someone.id, "today": today})
    claim = await _plans(brain, telegram_sender(brain, bot=None, max_rate=0)._claim,  # type: ignore[arg-type]
                         {"chat": "7007"})

    for name, (generic, custom) in {"/today's snapshot": snapshot, "streaks": streak_rows,
                                    "the Telegram claim": claim}.items():
        assert generic == RUNS - 10, f"{name} is planned on every run: {generic} generic, {custom} custom"


async def test_the_snapshot_of_one_person_is_the_same_through_either_statement(brain: Brain) -> None:
    """The one-person statement (scalar parameters) and the many-people one (arrays) give the same snapshot."""
    people = await _people(brain, 3)
    await _fill(brain, people)
    now = datetime(2026, 11, 30, 7, 30, tzinfo=UTC)
    async with brain.transactions.read() as session:
        for person in people:
            one = await day_snapshot.day_snapshot(session, person, now)
            many = (await day_snapshot.day_snapshots(session, [person], now))[person.id]
            assert one == many and one.water_ml == 250
            assert await streaks.streaks_for(session, person, one.day) == \
                (await streaks.streaks_for_users(session, [person], {person.id: one.day}))[person.id]
