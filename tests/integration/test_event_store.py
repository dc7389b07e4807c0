"""The event store over PostgreSQL: queries (module, type, time range, order, limit, per person),
counts by type, retention, and publication on the bus only after commit."""

from __future__ import annotations

import uuid
from datetime import date, datetime, timedelta

import pytest
from sqlalchemy import func, select

from brain.clock import FixedClock
from brain.core import Brain
from brain.events import store as event_store
from brain.events.actor import USER, ai
from brain.events.catalog import DomainEvent, DrinkLogged, EventPayload, MealDeleted, PlaceCreated, TaskCreated
from brain.events.store import (
    EventRecord,
    count_events_by_type,
    prune_events,
    query_events,
)


def drink(ml: int = 250) -> DrinkLogged:
    return DrinkLogged(entry_id=uuid.uuid4(), drink_type="water", quantity_ml=ml, name="water",
                       date=date(2026, 11, 30), time="08:30", from_preset=False)


def task(title: str = "Buy milk") -> TaskCreated:
    return TaskCreated(task_id=uuid.uuid4(), title=title)


def meal_deleted() -> MealDeleted:
    return MealDeleted(meal_id=uuid.uuid4(), meal_type="lunch")


def place() -> PlaceCreated:
    return PlaceCreated(place_id=uuid.uuid4(), name="Park")


def event(payload: EventPayload, user_id: uuid.UUID, at: datetime) -> DomainEvent:
    return DomainEvent.of(payload, user_id=user_id, record_id=uuid.uuid4(), actor=USER, at=at)


async def store(brain: Brain, events: list[DomainEvent]) -> None:
    """Writes event rows directly (no bus), so a test can place them at any instant."""
    async with brain.transactions.begin() as uow:
        uow.session.add_all([EventRecord.from_event(e) for e in events])


async def count_rows(brain: Brain, model: type) -> int:
    async with brain.transactions.read() as s:
        return int(await s.scalar(select(func.count()).select_from(model)) or 0)


@pytest.fixture
def now(clock: FixedClock) -> datetime:
    return clock.now()


@pytest.fixture
def user_id() -> uuid.UUID:
    return uuid.uuid4()


# ---- queries -----------------------------------------------------------------------------------
async def test_query_by_module_returns_only_that_module(brain: Brain, user_id: uuid.UUID, now: datetime) -> None:
    await store(brain, [event(drink(), user_id, now), event(task(), user_id, now), event(drink(500), user_id, now)])
    async with brain.transactions.read() as s:
        drinks = await query_events(s, user_id, module="drink")
        todos = await query_events(s, user_id, module="todo")
        nothing = await query_events(s, user_id, module="calendar")
    assert [e.type for e in drinks] == ["DrinkLogged", "DrinkLogged"]
    assert [e.type for e in todos] == ["TaskCreated"]
    assert nothing == []


async def test_query_by_single_type_and_by_type_list(brain: Brain, user_id: uuid.UUID, now: datetime) -> None:
    await store(brain, [event(drink(), user_id, now), event(task(), user_id, now),
                        event(meal_deleted(), user_id, now), event(place(), user_id, now)])
    async with brain.transactions.read() as s:
        single = await query_events(s, user_id, types="MealDeleted")
        several = await query_events(s, user_id, types=["TaskCreated", "PlaceCreated"])
        unknown = await query_events(s, user_id, types=["NoSuchType"])
    assert [e.type for e in single] == ["MealDeleted"]
    assert sorted(e.type for e in several) == ["PlaceCreated", "TaskCreated"]
    assert unknown == []


async def test_query_by_time_range_includes_since_and_excludes_until(
    brain: Brain, user_id: uuid.UUID, now: datetime
) -> None:
    times = [now - timedelta(hours=h) for h in (5, 4, 3, 2, 1)]
    await store(brain, [event(drink(ml), user_id, at) for ml, at in zip((1, 2, 3, 4, 5), times, strict=True)])
    async with brain.transactions.read() as s:
        window = await query_events(s, user_id, since=times[1], until=times[3])
        since_only = await query_events(s, user_id, since=times[3])
        until_only = await query_events(s, user_id, until=times[1])
    assert [e.payload.quantity_ml for e in window] == [3, 2]  # type: ignore[attr-defined]
    assert [e.payload.quantity_ml for e in since_only] == [5, 4]  # type: ignore[attr-defined]
    assert [e.payload.quantity_ml for e in until_only] == [1]  # type: ignore[attr-defined]


async def test_query_returns_newest_first_and_insertion_order_breaks_ties(
    brain: Brain, user_id: uuid.UUID, now: datetime
) -> None:
    await store(brain, [event(drink(2), user_id, now - timedelta(minutes=1)),
                        event(drink(3), user_id, now),
                        event(drink(1), user_id, now - timedelta(minutes=2))])
    await store(brain, [event(drink(4), user_id, now)])  # same instant as 3, stored later
    async with brain.transactions.read() as s:
        events = await query_events(s, user_id)
    assert [e.payload.quantity_ml for e in events] == [4, 3, 2, 1]  # type: ignore[attr-defined]


async def test_query_limit_is_honoured_and_capped_at_1000(brain: Brain, user_id: uuid.UUID, now: datetime) -> None:
    assert event_store.QUERY_MAX == 1000
    await store(brain, [event(drink(), user_id, now - timedelta(seconds=i)) for i in range(1005)])
    async with brain.transactions.read() as s:
        three = await query_events(s, user_id, limit=3)
        default = await query_events(s, user_id)
        capped = await query_events(s, user_id, limit=5000)
        at_least_one = await query_events(s, user_id, limit=0)
    assert len(three) == 3
    assert len(default) == 100
    assert len(capped) == 1000
    assert len(at_least_one) == 1
    assert capped[0].meta.timestamp == now


async def test_query_never_returns_another_persons_events(brain: Brain, now: datetime) -> None:
    alice, bob = uuid.uuid4(), uuid.uuid4()
    await store(brain, [event(drink(), alice, now), event(task(), bob, now), event(drink(), bob, now)])
    async with brain.transactions.read() as s:
        for_alice = await query_events(s, alice, limit=1000)
        alice_drinks = await query_events(s, alice, module="drink", types=["DrinkLogged", "TaskCreated"])
        for_bob = await query_events(s, bob, limit=1000)
        for_nobody = await query_events(s, uuid.uuid4())
    assert len(for_alice) == 1 and all(e.meta.user_id == alice for e in for_alice)
    assert len(alice_drinks) == 1 and alice_drinks[0].meta.user_id == alice
    assert len(for_bob) == 2 and all(e.meta.user_id == bob for e in for_bob)
    assert for_nobody == []


async def test_queried_events_keep_payload_and_actor(brain: Brain, user_id: uuid.UUID, now: datetime) -> None:
    original = DomainEvent.of(drink(330), user_id=user_id, record_id="r-1",
                              actor=ai("said so", mission_id="m", iteration_id="i"), at=now)
    await store(brain, [original])
    async with brain.transactions.read() as s:
        (loaded,) = await query_events(s, user_id)
    assert loaded == original


async def test_count_events_by_type_counts_one_persons_window(
    brain: Brain, user_id: uuid.UUID, now: datetime
) -> None:
    other = uuid.uuid4()
    await store(brain, [
        event(drink(), user_id, now - timedelta(hours=1)),
        event(drink(), user_id, now - timedelta(hours=2)),
        event(task(), user_id, now - timedelta(hours=1)),
        event(drink(), user_id, now - timedelta(days=2)),  # before the window
        event(drink(), user_id, now),  # at `until`: excluded
        event(drink(), other, now - timedelta(hours=1)),  # someone else
    ])
    async with brain.transactions.read() as s:
        counts = await count_events_by_type(s, user_id, now - timedelta(days=1), now)
        empty = await count_events_by_type(s, uuid.uuid4(), now - timedelta(days=1), now)
    assert counts == {"DrinkLogged": 2, "TaskCreated": 1}
    assert empty == {}


# ---- retention ---------------------------------------------------------------------------------
def test_retention_defaults_are_90_days_and_50000_per_person() -> None:
    assert event_store.RETENTION_DAYS == 90
    assert event_store.RETENTION_MAX_PER_USER == 50_000


async def test_prune_with_defaults_drops_events_older_than_90_days(
    brain: Brain, user_id: uuid.UUID, now: datetime
) -> None:
    await store(brain, [
        event(drink(1), user_id, now - timedelta(days=120)),
        event(drink(2), user_id, now - timedelta(days=90, seconds=1)),
        event(drink(3), user_id, now - timedelta(days=89, hours=23)),
        event(drink(4), user_id, now - timedelta(days=1)),
        event(drink(5), user_id, now),
    ])
    async with brain.transactions.begin() as uow:
        result = await prune_events(uow.session, now)
    assert (result.by_age, result.by_count) == (2, 0)
    async with brain.transactions.read() as s:
        kept = await query_events(s, user_id)
    assert [e.payload.quantity_ml for e in kept] == [5, 4, 3]  # type: ignore[attr-defined]


async def test_prune_keeps_each_persons_newest_events(brain: Brain, now: datetime) -> None:
    busy, quiet = uuid.uuid4(), uuid.uuid4()
    await store(brain, [event(drink(i), busy, now - timedelta(minutes=i)) for i in range(8)])
    await store(brain, [event(drink(i), quiet, now - timedelta(minutes=i)) for i in range(3)])
    async with brain.transactions.begin() as uow:
        result = await prune_events(uow.session, now, max_per_user=5)
    assert (result.by_age, result.by_count) == (0, 3)
    async with brain.transactions.read() as s:
        busy_left = await query_events(s, busy)
        quiet_left = await query_events(s, quiet)
    assert [e.payload.quantity_ml for e in busy_left] == [0, 1, 2, 3, 4]  # type: ignore[attr-defined]
    assert len(quiet_left) == 3


async def test_prune_applies_age_before_count(brain: Brain, user_id: uuid.UUID, now: datetime) -> None:
    await store(brain, [event(drink(i), user_id, now - timedelta(days=i * 30)) for i in range(6)])
    async with brain.transactions.begin() as uow:
        result = await prune_events(uow.session, now, max_per_user=2)
    # days 0, 30, 60, 90 survive the age cut (90 is not older than 90 days); then the newest 2 stay.
    assert (result.by_age, result.by_count) == (2, 2)
    async with brain.transactions.read() as s:
        kept = await query_events(s, user_id)
    assert [e.payload.quantity_ml for e in kept] == [0, 1]  # type: ignore[attr-defined]


async def test_prune_of_a_rolled_back_transaction_keeps_everything(
    brain: Brain, user_id: uuid.UUID, now: datetime
) -> None:
    await store(brain, [event(drink(), user_id, now - timedelta(days=200))])
    with pytest.raises(RuntimeError):
        async with brain.transactions.begin() as uow:
            await prune_events(uow.session, now)
            raise RuntimeError("abort")
    assert await count_rows(brain, EventRecord) == 1


# ---- publication after commit ------------------------------------------------------------------
async def test_subscriber_runs_only_after_commit(brain: Brain, user_id: uuid.UUID) -> None:
    seen: list[DomainEvent] = []
    caught_all: list[DomainEvent] = []
    brain.bus.subscribe(DrinkLogged, seen.append)
    brain.bus.subscribe_all(caught_all.append)
    async with brain.transactions.begin() as uow:
        emitted = uow.emit(drink(), user_id=user_id, record_id="r", actor=USER)
        await uow.session.flush()
        assert seen == [] and caught_all == []
    assert seen == [emitted] and caught_all == [emitted]
    async with brain.transactions.read() as s:
        (stored,) = await query_events(s, user_id)
    assert stored == emitted


async def test_events_of_one_unit_share_its_instant_and_are_published_in_order(
    brain: Brain, user_id: uuid.UUID, clock: FixedClock
) -> None:
    seen: list[str] = []
    brain.bus.subscribe_all(lambda e: seen.append(e.type))
    async with brain.transactions.begin() as uow:
        first = uow.emit(drink(), user_id=user_id, record_id="a", actor=USER)
        second = uow.emit(task(), user_id=user_id, record_id="b", actor=USER)
    assert seen == ["DrinkLogged", "TaskCreated"]
    assert first.meta.timestamp == second.meta.timestamp == clock.now()


async def test_caused_by_of_the_unit_is_recorded_on_its_events(brain: Brain, user_id: uuid.UUID) -> None:
    cause = uuid.uuid4()
    async with brain.transactions.begin(caused_by=cause) as uow:
        emitted = uow.emit(drink(), user_id=user_id, record_id="r", actor=USER)
    assert emitted.meta.caused_by == cause
    async with brain.transactions.read() as s:
        (stored,) = await query_events(s, user_id)
    assert stored.meta.caused_by == cause


async def test_rolled_back_transaction_publishes_and_stores_nothing(brain: Brain, user_id: uuid.UUID) -> None:
    seen: list[DomainEvent] = []
    brain.bus.subscribe_all(seen.append)
    with pytest.raises(RuntimeError):
        async with brain.transactions.begin() as uow:
            uow.emit(drink(), user_id=user_id, record_id="r", actor=USER)
            await uow.session.flush()
            raise RuntimeError("abort after the write")
    assert seen == []
    assert await count_rows(brain, EventRecord) == 0


async def test_a_unit_reads_its_own_events_before_it_commits_and_stores_each_once(
        brain: Brain, user_id: uuid.UUID) -> None:
    """Events are written at commit, or before a statement of the unit's session that could read them."""
    async with brain.transactions.begin() as uow:
        first = uow.emit(drink(), user_id=user_id, record_id="a", actor=USER)
        assert await query_events(uow.session, user_id) == [first]
        second = uow.emit(task(), user_id=user_id, record_id="b", actor=USER)
    async with brain.transactions.read() as s:
        stored = await query_events(s, user_id)
    assert stored == [second, first]


async def test_events_of_a_rolled_back_savepoint_are_gone_and_the_others_kept(
        brain: Brain, user_id: uuid.UUID) -> None:
    seen: list[DomainEvent] = []
    brain.bus.subscribe_all(seen.append)
    async with brain.transactions.begin() as uow:
        kept = uow.emit(drink(), user_id=user_id, record_id="a", actor=USER)
        savepoint, emitted = await uow.savepoint()  # `kept` written before it, so its rollback keeps it
        assert emitted == 1
        uow.emit(task(), user_id=user_id, record_id="b", actor=USER)
        assert len(await query_events(uow.session, user_id)) == 2  # written inside the savepoint
        await savepoint.rollback()
        uow.drop_events_since(emitted)
        committed = await uow.session.begin_nested()
        later = uow.emit(place(), user_id=user_id, record_id="c", actor=USER)
        await committed.commit()  # written as the savepoint commits
        assert await query_events(uow.session, user_id) == [later, kept]
    assert seen == [kept, later]
    async with brain.transactions.read() as s:
        assert await query_events(s, user_id) == [later, kept]
