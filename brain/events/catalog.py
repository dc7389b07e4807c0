"""The typed event catalogue: one pydantic payload per domain event of the five life modules
(seed §3.4, with the shipped additions from mana-brain-facts §3), goals, streaks and the pulse
(nudges, their outcomes, and rule adaptations).

Each payload class names its event type, module and collection; `DomainEvent` wraps one with meta.
"""

from __future__ import annotations

import uuid
from datetime import date, datetime
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field

from brain.events.actor import AiActor, SystemActor, UserActor

ActorT = UserActor | AiActor | SystemActor


class EventPayload(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")
    module: ClassVar[str]
    collection: ClassVar[str]

    @classmethod
    def event_type(cls) -> str:
        return cls.__name__


# ---- todo -------------------------------------------------------------------------------------
class _Todo(EventPayload):
    module: ClassVar[str] = "todo"
    collection: ClassVar[str] = "tasks"


class TaskCreated(_Todo):
    task_id: uuid.UUID
    title: str
    due_date: date | None = None
    priority: int | None = None
    project_id: str | None = None
    label_ids: list[str] = Field(default_factory=list)
    parent_id: uuid.UUID | None = None
    recurrence: str | None = None  # an RRULE: the task repeats, one occurrence after the other


class TaskCompleted(_Todo):
    task_id: uuid.UUID
    title: str
    project_id: str | None = None
    was_overdue: bool


class TaskUncompleted(_Todo):
    task_id: uuid.UUID
    title: str


class TaskUpdated(_Todo):
    task_id: uuid.UUID
    fields: list[str]
    # The changed fields' previous values (title, description, priority), so the change can be undone;
    # events stored before this field existed have none.
    before: dict[str, Any] = Field(default_factory=dict)


class TaskDeleted(_Todo):
    task_id: uuid.UUID
    title: str


class TaskRescheduled(_Todo):
    task_id: uuid.UUID
    title: str
    old_date: date | None = None
    new_date: date | None


class SubtasksUpdated(_Todo):
    task_id: uuid.UUID
    total: int
    completed: int


class ReminderSet(_Todo):
    task_id: uuid.UUID
    reminder_id: uuid.UUID
    minutes_before: int
    type: str | None = None


class ReminderDeleted(_Todo):
    task_id: uuid.UUID
    reminder_id: uuid.UUID


# ---- reminders the person asked for ----------------------------------------------------------
class _Reminders(EventPayload):
    module: ClassVar[str] = "reminders"
    collection: ClassVar[str] = "reminders"


class ReminderCreated(_Reminders):
    reminder_id: uuid.UUID
    text: str
    at: datetime
    task_id: uuid.UUID | None = None
    rrule: str | None = None


class ReminderMoved(_Reminders):
    """A reminder set to another time: a one-off's time, or a repeating one's from then on (`at`, its next time)."""
    reminder_id: uuid.UUID
    text: str
    at: datetime
    old_at: datetime


class ReminderCancelled(_Reminders):
    reminder_id: uuid.UUID
    text: str


class ReminderDone(_Reminders):
    reminder_id: uuid.UUID
    text: str


class ReminderSnoozed(_Reminders):
    reminder_id: uuid.UUID
    until: datetime


# ---- calendar ---------------------------------------------------------------------------------
class _Calendar(EventPayload):
    module: ClassVar[str] = "calendar"
    collection: ClassVar[str] = "calendar_events"


class CalendarEventCreated(_Calendar):
    event_id: uuid.UUID
    title: str
    start_time: datetime
    end_time: datetime
    is_all_day: bool
    is_recurring: bool
    calendar_id: str
    location: str | None = None


class CalendarEventUpdated(_Calendar):
    event_id: uuid.UUID
    fields: list[str]
    # Previous values of the changed text fields (title, location, description), so they can be restored.
    before: dict[str, Any] = Field(default_factory=dict)


class CalendarEventDeleted(_Calendar):
    event_id: uuid.UUID
    title: str
    was_recurring: bool


class CalendarSeriesCreated(_Calendar):
    collection: ClassVar[str] = "calendar_series"
    series_id: uuid.UUID
    title: str
    rrule: str
    first_event_id: uuid.UUID
    first_start: datetime
    is_all_day: bool


class CalendarSeriesDeleted(_Calendar):
    collection: ClassVar[str] = "calendar_series"
    series_id: uuid.UUID
    title: str
    occurrences_deleted: int


class CalendarEventMoved(_Calendar):
    event_id: uuid.UUID
    title: str
    old_start: datetime
    new_start: datetime


# ---- drink ------------------------------------------------------------------------------------
class _Drink(EventPayload):
    module: ClassVar[str] = "drink"
    collection: ClassVar[str] = "drink_entries"


class DrinkLogged(_Drink):
    entry_id: uuid.UUID
    drink_type: str
    quantity_ml: int
    name: str
    date: date
    time: str
    from_preset: bool
    # The entries of the one log this drink is part of ("/coffee 3"), itself among them, so that an undo takes the
    # log back whole; empty for a drink logged on its own (and events from before).
    log_entry_ids: list[uuid.UUID] = Field(default_factory=list)


class DrinkEntryDeleted(_Drink):
    entry_id: uuid.UUID
    drink_type: str
    quantity_ml: int


class DrinkEntryUndone(_Drink):
    entry_id: uuid.UUID
    drink_type: str
    quantity_ml: int


class DrinkGoalSet(_Drink):
    collection: ClassVar[str] = "drink_goals"
    drink_type: str
    daily_ml: int
    previous_ml: int | None = None  # the goal it replaced; None: there was none (or an event from before)


class DrinkGoalReached(_Drink):
    date: date
    goal_ml: int
    actual_ml: int
    drink_type: str = "water"


# ---- food -------------------------------------------------------------------------------------
class _Food(EventPayload):
    module: ClassVar[str] = "food"
    collection: ClassVar[str] = "meals"


class MealLogged(_Food):
    meal_id: uuid.UUID
    meal_type: str
    input_type: str
    description: str
    calories: int | None = None
    protein: int | None = None
    carbs: int | None = None
    fat: int | None = None
    date: date


class MealFromPhotoLogged(_Food):
    meal_id: uuid.UUID
    meal_type: str
    photo_media_id: str
    confidence: float
    calories: int | None = None
    foods: list[str] = Field(default_factory=list)


class MealDeleted(_Food):
    meal_id: uuid.UUID
    meal_type: str


class NutritionGoalSet(_Food):
    collection: ClassVar[str] = "nutrition_goals"
    goal_id: uuid.UUID
    daily_calories: int
    daily_protein: int | None = None
    daily_carbs: int | None = None
    daily_fat: int | None = None
    # The goal it replaced (daily_calories, daily_protein, daily_carbs, daily_fat); None: there was none.
    previous: dict[str, int | None] | None = None


class DailyCalorieGoalReached(_Food):
    date: date
    goal: int
    actual: int


# ---- places -----------------------------------------------------------------------------------
class _Places(EventPayload):
    module: ClassVar[str] = "places"
    collection: ClassVar[str] = "places"


class PlaceCreated(_Places):
    place_id: uuid.UUID
    name: str
    category: str | None = None
    lat: float | None = None
    lng: float | None = None


class PlaceDeleted(_Places):
    place_id: uuid.UUID
    name: str


class PlaceVisited(_Places):
    collection: ClassVar[str] = "place_visits"
    visit_id: uuid.UUID
    place_id: uuid.UUID
    name: str
    visit_count: int


class PlaceVisitDeleted(_Places):
    collection: ClassVar[str] = "place_visits"
    visit_id: uuid.UUID
    place_id: uuid.UUID
    name: str
    visit_count: int


class LocationLogged(_Places):
    collection: ClassVar[str] = "location_logs"
    log_id: uuid.UUID
    lat: float
    lng: float
    place_id: uuid.UUID | None = None
    accuracy: float | None = None


class TrackingStarted(_Places):
    collection: ClassVar[str] = "tracking_sessions"
    session_id: uuid.UUID
    timestamp: datetime


class TrackingStopped(_Places):
    collection: ClassVar[str] = "tracking_sessions"
    session_id: uuid.UUID
    duration_ms: int
    log_count: int


# ---- goals ------------------------------------------------------------------------------------
class _Goals(EventPayload):
    module: ClassVar[str] = "goals"
    collection: ClassVar[str] = "goals"


class GoalCreated(_Goals):
    goal_id: uuid.UUID
    title: str
    metric: str
    target: float
    comparison: str
    period: str
    template: str | None = None


class GoalReached(_Goals):
    goal_id: uuid.UUID
    title: str
    value: float
    target: float
    period: str
    period_start: date | None = None


class GoalPaused(_Goals):
    goal_id: uuid.UUID


class GoalResumed(_Goals):
    goal_id: uuid.UUID


class GoalAbandoned(_Goals):
    goal_id: uuid.UUID


# ---- streaks ----------------------------------------------------------------------------------
class StreakDaySkipped(EventPayload):
    """A skip/freeze day: the streak neither grows nor breaks, and habit strength stays where it is."""

    module: ClassVar[str] = "streaks"
    collection: ClassVar[str] = "streak_skips"
    streak: str
    date: date


# ---- memory ------------------------------------------------------------------------------------
class MemoryForgotten(EventPayload):
    """The person had the long-term memory forget something: one memory (/forget 12) or everything. It carries
    nothing of what was forgotten, which is gone: only that a forgetting happened, so that /undo stops at it
    instead of reaching past it to an older entry."""

    module: ClassVar[str] = "memory"
    collection: ClassVar[str] = "memory_nodes"
    everything: bool = False


class FactForgotten(EventPayload):
    """The person deleted a fact the brain had learned (/facts); it is not learned again for a while."""

    module: ClassVar[str] = "memory"
    collection: ClassVar[str] = "memory_facts"
    fact_id: uuid.UUID
    key: str


# ---- pulse: nudges, their outcomes, and what the rule engine learned ---------------------------
class _Pulse(EventPayload):
    module: ClassVar[str] = "pulse"
    collection: ClassVar[str] = "nudges"


class NudgeSent(_Pulse):
    nudge_id: uuid.UUID
    rule: str
    slot: str
    priority: int


class NudgeOutcomeRecorded(_Pulse):
    collection: ClassVar[str] = "nudge_outcomes"
    nudge_id: uuid.UUID
    rule: str
    outcome: str  # acted | dismissed | snoozed | expired | auto_resolved
    latency_s: int
    local_hour: int


class RuleAdapted(_Pulse):
    collection: ClassVar[str] = "rule_adaptations"
    adaptation_id: uuid.UUID
    rule: str
    change: str  # moved_later | backed_off
    before: dict[str, float | int | str | None]
    after: dict[str, float | int | str | None]


class RuleAdaptationUndone(_Pulse):
    collection: ClassVar[str] = "rule_adaptations"
    adaptation_id: uuid.UUID
    rule: str


class PulsePaused(_Pulse):
    collection: ClassVar[str] = "pulse_settings"
    until: datetime | None = None
    since: datetime | None = None  # a vacation that starts later


class PulseResumed(_Pulse):
    collection: ClassVar[str] = "pulse_settings"
    open_ended: bool = False  # the pause it ended had no end (so an undo can pause again exactly like that)


EVENT_TYPES: dict[str, type[EventPayload]] = {
    cls.event_type(): cls
    for cls in (
        TaskCreated, TaskCompleted, TaskUncompleted, TaskUpdated, TaskDeleted, TaskRescheduled,
        SubtasksUpdated, ReminderSet, ReminderDeleted,
        ReminderCreated, ReminderMoved, ReminderCancelled, ReminderDone, ReminderSnoozed,
        CalendarEventCreated, CalendarEventUpdated, CalendarEventDeleted, CalendarEventMoved,
        CalendarSeriesCreated, CalendarSeriesDeleted,
        DrinkLogged, DrinkEntryDeleted, DrinkEntryUndone, DrinkGoalSet, DrinkGoalReached,
        MealLogged, MealFromPhotoLogged, MealDeleted, NutritionGoalSet, DailyCalorieGoalReached,
        PlaceCreated, PlaceDeleted, PlaceVisited, PlaceVisitDeleted, LocationLogged, TrackingStarted, TrackingStopped,
        GoalCreated, GoalReached, GoalPaused, GoalResumed, GoalAbandoned, StreakDaySkipped, MemoryForgotten,
        FactForgotten,
        NudgeSent, NudgeOutcomeRecorded, RuleAdapted, RuleAdaptationUndone, PulsePaused, PulseResumed,
    )
}


class EventMeta(BaseModel):
    model_config = ConfigDict(frozen=True)
    id: uuid.UUID = Field(default_factory=uuid.uuid4)
    timestamp: datetime
    module: str
    collection: str
    record_id: str
    user_id: uuid.UUID
    actor: UserActor | AiActor | SystemActor = Field(discriminator="kind")
    caused_by: uuid.UUID | None = None


class DomainEvent(BaseModel):
    model_config = ConfigDict(frozen=True)
    type: str
    payload: EventPayload
    meta: EventMeta

    @classmethod
    def of(
        cls,
        payload: EventPayload,
        *,
        user_id: uuid.UUID,
        record_id: object,
        actor: ActorT,
        at: datetime,
        caused_by: uuid.UUID | None = None,
    ) -> DomainEvent:
        return cls(
            type=payload.event_type(),
            payload=payload,
            meta=EventMeta(
                timestamp=at, module=payload.module, collection=payload.collection, record_id=str(record_id),
                user_id=user_id, actor=actor, caused_by=caused_by,
            ),
        )


def decode_payload(event_type: str, data: dict[str, Any]) -> EventPayload:
    try:
        cls = EVENT_TYPES[event_type]
    except KeyError:
        raise ValueError(f"unknown event type {event_type!r}") from None
    return cls.model_validate(data)
