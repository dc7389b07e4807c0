"""The typed event catalogue: every payload belongs to a known module, the seed's event list is
covered, `DomainEvent.of` fills the meta, and events round-trip through the store record."""

from __future__ import annotations

import uuid
from datetime import UTC, date, datetime

import pytest
from pydantic import ValidationError

from brain.events.actor import USER, ai, system
from brain.events.catalog import (
    EVENT_TYPES,
    ActorT,
    DomainEvent,
    DrinkGoalSet,
    DrinkLogged,
    GoalReached,
    decode_payload,
)
from brain.events.store import EventRecord

MODULES = {"todo", "calendar", "drink", "food", "places", "goals", "streaks", "pulse", "memory", "reminders"}

SEED_EVENT_TYPES = (
    "TaskCreated TaskCompleted TaskUncompleted TaskUpdated TaskDeleted TaskRescheduled SubtasksUpdated ReminderSet "
    "CalendarEventCreated CalendarEventUpdated CalendarEventDeleted CalendarEventMoved "
    "DrinkLogged DrinkEntryDeleted DrinkEntryUndone DrinkGoalReached "
    "MealLogged MealFromPhotoLogged MealDeleted NutritionGoalSet DailyCalorieGoalReached "
    "PlaceCreated PlaceVisited LocationLogged TrackingStarted TrackingStopped GoalReached"
).split()

AT = datetime(2026, 11, 30, 7, 30, tzinfo=UTC)


def _drink_logged(**overrides: object) -> DrinkLogged:
    fields: dict[str, object] = {
        "entry_id": uuid.uuid4(), "drink_type": "water", "quantity_ml": 250, "name": "water",
        "date": date(2026, 11, 30), "time": "08:30", "from_preset": False,
    }
    fields.update(overrides)
    return DrinkLogged(**fields)  # type: ignore[arg-type]


@pytest.mark.parametrize("name", sorted(EVENT_TYPES))
def test_every_payload_belongs_to_a_known_module(name: str) -> None:
    cls = EVENT_TYPES[name]
    assert cls.module in MODULES
    assert cls.collection
    assert cls.event_type() == name


@pytest.mark.parametrize("name", SEED_EVENT_TYPES)
def test_seed_event_type_is_in_the_catalogue(name: str) -> None:
    assert name in EVENT_TYPES


def test_domain_event_of_takes_module_and_collection_from_the_payload_class() -> None:
    user_id, entry_id, cause = uuid.uuid4(), uuid.uuid4(), uuid.uuid4()
    event = DomainEvent.of(_drink_logged(entry_id=entry_id), user_id=user_id, record_id=entry_id, actor=USER,
                           at=AT, caused_by=cause)
    assert event.type == "DrinkLogged"
    assert event.meta.module == "drink" and event.meta.collection == "drink_entries"
    assert event.meta.record_id == str(entry_id)
    assert event.meta.user_id == user_id
    assert event.meta.timestamp == AT
    assert event.meta.caused_by == cause
    assert isinstance(event.meta.id, uuid.UUID)


def test_payload_subclass_can_override_the_collection() -> None:
    event = DomainEvent.of(DrinkGoalSet(drink_type="water", daily_ml=2500), user_id=uuid.uuid4(),
                           record_id="u:water", actor=system("bootstrap"), at=AT)
    assert event.meta.module == "drink" and event.meta.collection == "drink_goals"


def test_each_event_gets_its_own_id() -> None:
    payload = _drink_logged()
    a = DomainEvent.of(payload, user_id=uuid.uuid4(), record_id=1, actor=USER, at=AT)
    b = DomainEvent.of(payload, user_id=uuid.uuid4(), record_id=1, actor=USER, at=AT)
    assert a.meta.id != b.meta.id


@pytest.mark.parametrize(
    "actor",
    [USER, ai("the person said they drank water", mission_id="m-1", iteration_id="i-7"), ai(),
     system("retention")],
    ids=["user", "ai", "ai-bare", "system"],
)
def test_actor_round_trips_through_the_event_record(actor: ActorT) -> None:
    event = DomainEvent.of(_drink_logged(), user_id=uuid.uuid4(), record_id="r", actor=actor, at=AT)
    restored = EventRecord.from_event(event).to_event()
    assert restored.meta.actor == actor
    assert type(restored.meta.actor) is type(actor)
    assert restored.meta.actor.kind == actor.kind
    assert restored == event


def test_goal_reached_round_trips_with_its_own_module() -> None:
    payload = GoalReached(goal_id=uuid.uuid4(), title="Drink 2 l", value=2.0, target=2.0, period="day")
    event = DomainEvent.of(payload, user_id=uuid.uuid4(), record_id=payload.goal_id, actor=system("goal-tracker"),
                           at=AT)
    record = EventRecord.from_event(event)
    assert record.module == "goals" and record.type == "GoalReached"
    assert record.to_event() == event


def test_extra_payload_fields_are_refused() -> None:
    with pytest.raises(ValidationError) as excinfo:
        _drink_logged(mood="happy")
    assert excinfo.value.errors()[0]["type"] == "extra_forbidden"


def test_decoding_refuses_extra_fields_and_unknown_types() -> None:
    data = _drink_logged().model_dump(mode="json")
    assert decode_payload("DrinkLogged", data) == DrinkLogged.model_validate(data)
    with pytest.raises(ValidationError):
        decode_payload("DrinkLogged", {**data, "unexpected": 1})
    with pytest.raises(ValueError, match="unknown event type"):
        decode_payload("NoSuchEvent", data)


def test_payloads_are_frozen() -> None:
    payload = _drink_logged()
    with pytest.raises(ValidationError):
        payload.quantity_ml = 500  # type: ignore[misc]
