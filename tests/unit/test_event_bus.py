"""The in-process event bus: typed and catch-all delivery, unsubscribing, isolation of failing
handlers, ordering, and the guard against a handler looping on its own event type."""

from __future__ import annotations

import logging
import uuid
from datetime import UTC, date, datetime

import pytest

from brain.events.actor import USER
from brain.events.bus import EventBus
from brain.events.catalog import DomainEvent, DrinkGoalReached, DrinkLogged, EventPayload, TaskDeleted

AT = datetime(2026, 11, 30, 7, 30, tzinfo=UTC)
USER_ID = uuid.uuid4()


def _event(payload: EventPayload) -> DomainEvent:
    return DomainEvent.of(payload, user_id=USER_ID, record_id=uuid.uuid4(), actor=USER, at=AT)


def drink_logged() -> DomainEvent:
    entry_id = uuid.uuid4()
    return _event(DrinkLogged(entry_id=entry_id, drink_type="water", quantity_ml=250, name="water",
                              date=date(2026, 11, 30), time="08:30", from_preset=False))


def goal_reached() -> DomainEvent:
    return _event(DrinkGoalReached(date=date(2026, 11, 30), goal_ml=2000, actual_ml=2100))


def task_deleted() -> DomainEvent:
    return _event(TaskDeleted(task_id=uuid.uuid4(), title="Buy milk"))


async def test_typed_subscriber_receives_events_of_its_type() -> None:
    bus = EventBus()
    seen: list[DomainEvent] = []
    bus.subscribe("DrinkLogged", seen.append)
    event = drink_logged()
    await bus.publish([event])
    assert seen == [event]


async def test_subscribe_accepts_the_payload_class_as_type() -> None:
    bus = EventBus()
    seen: list[DomainEvent] = []
    bus.subscribe(DrinkLogged, seen.append)
    event = drink_logged()
    await bus.publish([event])
    assert seen == [event]


async def test_typed_subscriber_does_not_receive_other_types() -> None:
    bus = EventBus()
    seen: list[DomainEvent] = []
    bus.subscribe(DrinkLogged, seen.append)
    await bus.publish([goal_reached(), task_deleted()])
    assert seen == []


async def test_subscribe_all_receives_every_event_in_order() -> None:
    bus = EventBus()
    seen: list[DomainEvent] = []
    bus.subscribe_all(seen.append)
    events = [drink_logged(), goal_reached(), task_deleted()]
    await bus.publish(events)
    assert seen == events


async def test_returned_unsubscribe_stops_typed_delivery() -> None:
    bus = EventBus()
    seen: list[DomainEvent] = []
    unsubscribe = bus.subscribe(DrinkLogged, seen.append)
    unsubscribe()
    await bus.publish([drink_logged()])
    assert seen == []


async def test_returned_unsubscribe_stops_catch_all_delivery() -> None:
    bus = EventBus()
    seen: list[DomainEvent] = []
    unsubscribe = bus.subscribe_all(seen.append)
    unsubscribe()
    await bus.publish([drink_logged()])
    assert seen == []


async def test_unsubscribe_method_stops_delivery_to_that_handler_only() -> None:
    bus = EventBus()
    removed: list[DomainEvent] = []
    kept: list[DomainEvent] = []
    bus.subscribe("DrinkLogged", removed.append)
    bus.subscribe("DrinkLogged", kept.append)
    bus.unsubscribe(DrinkLogged, removed.append)
    event = drink_logged()
    await bus.publish([event])
    assert removed == [] and kept == [event]


def test_unsubscribing_an_unknown_handler_is_harmless() -> None:
    bus = EventBus()
    bus.unsubscribe("NeverSubscribed", print)
    unsubscribe = bus.subscribe_all(print)
    unsubscribe()
    unsubscribe()


async def test_failing_handler_is_logged_and_other_handlers_still_run(caplog: pytest.LogCaptureFixture) -> None:
    bus = EventBus()
    before: list[DomainEvent] = []
    after: list[DomainEvent] = []
    catch_all: list[DomainEvent] = []

    def broken(event: DomainEvent) -> None:
        raise RuntimeError("handler exploded")

    bus.subscribe(DrinkLogged, before.append)
    bus.subscribe(DrinkLogged, broken)
    bus.subscribe(DrinkLogged, after.append)
    bus.subscribe_all(catch_all.append)
    event = drink_logged()
    with caplog.at_level(logging.ERROR, logger="brain.events.bus"):
        await bus.publish([event])
    assert before == [event] and after == [event] and catch_all == [event]
    errors = [r for r in caplog.records if r.levelno == logging.ERROR and r.name == "brain.events.bus"]
    assert len(errors) == 1
    assert errors[0].exc_info is not None and isinstance(errors[0].exc_info[1], RuntimeError)
    assert "DrinkLogged" in errors[0].getMessage()


async def test_failing_async_handler_does_not_stop_later_events() -> None:
    bus = EventBus()
    seen: list[str] = []

    async def broken(event: DomainEvent) -> None:
        raise ValueError("async handler exploded")

    bus.subscribe(DrinkLogged, broken)
    bus.subscribe_all(lambda e: seen.append(e.type))
    await bus.publish([drink_logged(), goal_reached()])
    assert seen == ["DrinkLogged", "DrinkGoalReached"]


async def test_handlers_of_one_type_run_in_subscription_order_before_catch_all() -> None:
    bus = EventBus()
    order: list[str] = []
    bus.subscribe_all(lambda e: order.append("all"))
    bus.subscribe(DrinkLogged, lambda e: order.append("first"))
    bus.subscribe(DrinkLogged, lambda e: order.append("second"))
    bus.subscribe(DrinkLogged, lambda e: order.append("third"))
    await bus.publish([drink_logged()])
    assert order == ["first", "second", "third", "all"]


async def test_async_and_sync_handlers_are_both_called() -> None:
    bus = EventBus()
    order: list[str] = []

    async def async_handler(event: DomainEvent) -> None:
        order.append(f"async:{event.type}")

    def sync_handler(event: DomainEvent) -> None:
        order.append(f"sync:{event.type}")

    bus.subscribe(DrinkLogged, async_handler)
    bus.subscribe(DrinkLogged, sync_handler)
    await bus.publish([drink_logged()])
    assert order == ["async:DrinkLogged", "sync:DrinkLogged"]


async def test_handler_republishing_its_own_type_is_dropped_but_other_types_are_delivered(
    caplog: pytest.LogCaptureFixture,
) -> None:
    bus = EventBus()
    logged_calls: list[DomainEvent] = []
    goals: list[DomainEvent] = []
    inner_same = drink_logged()
    inner_other = goal_reached()

    async def republish(event: DomainEvent) -> None:
        logged_calls.append(event)
        await bus.publish([inner_same, inner_other])

    bus.subscribe(DrinkLogged, republish)
    bus.subscribe(DrinkGoalReached, goals.append)
    outer = drink_logged()
    with caplog.at_level(logging.WARNING, logger="brain.events.bus"):
        await bus.publish([outer])
    assert logged_calls == [outer]  # the inner DrinkLogged did not reach the handler again
    assert goals == [inner_other]
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING and r.name == "brain.events.bus"]
    assert len(warnings) == 1
    assert str(inner_same.meta.id) in warnings[0].getMessage()


async def test_same_type_is_delivered_again_once_the_outer_dispatch_finished() -> None:
    bus = EventBus()
    seen: list[DomainEvent] = []
    bus.subscribe(DrinkLogged, seen.append)
    first, second = drink_logged(), drink_logged()
    await bus.publish([first])
    await bus.publish([second])
    assert seen == [first, second]
