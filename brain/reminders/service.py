"""Reminder mutations (each emits its event in the same unit of work), the person's list of waiting reminders, and
`find_reminder`, which resolves a short reference (list position, id or text fragment) to one reminder. A task's
reminder is kept here too: it goes out a set time before the task's due time and follows the task."""

from __future__ import annotations

import re
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from zoneinfo import ZoneInfo

from sqlalchemy import func, select, update

from brain.errors import DomainError
from brain.events.catalog import (
    ActorT,
    ReminderCancelled,
    ReminderCreated,
    ReminderDone,
    ReminderMoved,
    ReminderSnoozed,
)
from brain.i18n import Text, tr
from brain.people.models import User
from brain.recurrence import RuleError, count_left, next_after, normalize
from brain.reminders.models import CANCELLED, DONE, SENT, SNOOZED, WAITING, Reminder
from brain.store.unit_of_work import UnitOfWork
from brain.tools.coercion import LAST_YEAR

MAX_TEXT = 500
MAX_LIST = 50
_POSITION_RE = re.compile(r"#?\s*(\d{1,4})\.?")
_ORDER = (Reminder.due_at.asc(), Reminder.created_at.asc(), Reminder.id.asc())


@dataclass(frozen=True)
class ListedReminder:
    reminder: Reminder
    position: int


def occurrence_key(at: datetime, zone: str) -> str:
    """An occurrence as the wall time of its zone ("2026-11-30T15:00"): with the reminder's id, the outbox key that
    lets each occurrence go out once."""
    return f"{at.astimezone(ZoneInfo(zone)):%Y-%m-%dT%H:%M}"


def _text(text: str) -> str:
    clean = " ".join(text.split())
    if not clean:
        raise DomainError(tr("What should I remind you of? e.g. /remind 15:00 call mom"), code="empty")
    if len(clean) > MAX_TEXT:
        raise DomainError(tr("A reminder can be at most {max} characters.", max=MAX_TEXT), code="too_long")
    return clean


def _future(at: datetime, now: datetime) -> datetime:
    if at.tzinfo is None:
        raise ValueError("a reminder's time must be aware")
    if at <= now:
        raise DomainError(tr("{time} has already passed. Pick a time ahead, e.g. /remind 15:00 call mom.", time=at),
                          code="in_the_past")
    if at.year > LAST_YEAR:
        raise DomainError(tr("I can only keep dates up to {last}.", last=str(LAST_YEAR)), code="out_of_range")
    # On the minute: the scheduler sends at second 0, so "in 20 minutes" said at 8:30:40 goes out at 8:50.
    return at.astimezone(UTC).replace(second=0, microsecond=0)


async def create_reminder(uow: UnitOfWork, user: User, actor: ActorT, text: str, at: datetime, *,
                          rrule: str | None = None) -> Reminder:
    """A reminder of `text` at the instant `at` (aware), kept in the person's zone; with `rrule` it repeats from
    then on (its first time is the first occurrence at or after `at`)."""
    reminder = store_reminder(uow, user, text, at, rrule=rrule)
    uow.emit(ReminderCreated(reminder_id=reminder.id, text=reminder.text, at=reminder.occurrence_at,
                             rrule=reminder.rrule), user_id=user.id, record_id=reminder.id, actor=actor)
    return reminder


def store_reminder(uow: UnitOfWork, user: User, text: str, at: datetime, *, task_id: uuid.UUID | None = None,
                   minutes_before: int | None = None, rrule: str | None = None) -> Reminder:
    """The new row, checked; the caller emits the event that says what it is for (a task's is ReminderSet)."""
    clean = _text(text)
    when = _future(at, uow.now)
    rule, first = None, when
    if rrule:
        try:
            rule = normalize(rrule)
        except RuleError as bad:
            raise DomainError(bad.text, code="bad_rule") from None
        first = _first_occurrence(rule, when, user.timezone)
    reminder = Reminder(id=uuid.uuid4(), user_id=user.id, text=clean, timezone=user.timezone, occurrence_at=first,
                        due_at=first, held=None, deliveries=0, status=WAITING, task_id=task_id,
                        minutes_before=minutes_before, rrule=rule, starts_at=when if rule else None,
                        answered_key=None, sent_at=None, created_at=uow.now, updated_at=uow.now)
    uow.session.add(reminder)
    return reminder


def _first_occurrence(rule: str, starts: datetime, zone: str) -> datetime:
    """A repeating reminder's first time, at or after `starts`, with its rule expanded from the wall time of
    `starts` in `zone`."""
    tz = ZoneInfo(zone)
    found = next_after(rule, starts.astimezone(tz).replace(tzinfo=None), tz, starts - timedelta(seconds=1))
    if found is None:
        raise DomainError(tr("That repetition has no dates from now on. Check its days or its end."),
                          code="no_occurrences")
    return found


def following(reminder_rule: str, starts_at: datetime, zone: str, after: datetime) -> datetime | None:
    """The occurrence of a repeating reminder after the instant `after`."""
    tz = ZoneInfo(zone)
    return next_after(reminder_rule, starts_at.astimezone(tz).replace(tzinfo=None), tz, after)


async def _locked(uow: UnitOfWork, user_id: uuid.UUID, reminder_id: uuid.UUID) -> Reminder:
    reminder = await uow.session.scalar(
        select(Reminder).where(Reminder.user_id == user_id, Reminder.id == reminder_id).with_for_update()
        .execution_options(populate_existing=True))
    if reminder is None:
        raise DomainError(tr("No such reminder."), code="not_found")
    return reminder


async def move_reminder(uow: UnitOfWork, user: User, actor: ActorT, reminder_id: uuid.UUID, at: datetime) -> Reminder:
    """The reminder set to the instant `at` (aware), in the future: a one-off goes out then (again, if it went out
    and was not answered); a repeating one keeps its rule from `at` on, so its time of day becomes `at`'s. A task's
    reminder moves with its task (its time is the task's due time less its lead), so it is not moved here."""
    reminder = await _locked(uow, user.id, reminder_id)
    if reminder.status in (CANCELLED, DONE):
        raise DomainError(tr("That reminder is no longer waiting, so there is nothing to move. Set a new one, e.g. "
                             "/remind 20:00 {text}", text=reminder.text), code="not_waiting")
    if reminder.task_id is not None:
        raise DomainError(tr("That reminder belongs to a task and moves with it: change the task's time instead."),
                          code="task_reminder")
    when = _future(at, uow.now)
    old = reminder.due_at or reminder.occurrence_at
    first = when
    if reminder.rrule is not None:
        # "every day for 5 days", moved after two went out, goes on for the three it has left
        pending = reminder.occurrence_at or when
        if reminder.starts_at is not None:
            zone = ZoneInfo(reminder.timezone)
            reminder.rrule = count_left(reminder.rrule, reminder.starts_at.astimezone(zone), zone, pending)
        first, reminder.starts_at = _first_occurrence(reminder.rrule, when, reminder.timezone), when
    reminder.occurrence_at = reminder.due_at = first
    reminder.status, reminder.held, reminder.deliveries, reminder.updated_at = WAITING, None, 0, uow.now
    uow.emit(ReminderMoved(reminder_id=reminder.id, text=reminder.text, at=first, old_at=old), user_id=user.id,
             record_id=reminder.id, actor=actor)
    return reminder


async def cancel_reminder(uow: UnitOfWork, user: User, actor: ActorT, reminder_id: uuid.UUID) -> Reminder:
    reminder = await end_reminder(uow, user, reminder_id)
    uow.emit(ReminderCancelled(reminder_id=reminder.id, text=reminder.text), user_id=user.id, record_id=reminder.id,
             actor=actor)
    return reminder


async def end_reminder(uow: UnitOfWork, user: User, reminder_id: uuid.UUID) -> Reminder:
    """The reminder deleted (kept as cancelled: its sent messages' buttons then say so); the caller emits the
    event."""
    reminder = await _locked(uow, user.id, reminder_id)
    if reminder.status == CANCELLED:
        raise DomainError(tr("That reminder was already deleted."), code="already_deleted")
    reminder.status, reminder.due_at, reminder.updated_at = CANCELLED, None, uow.now
    return reminder


def answer_refused(reminder: Reminder | None, key: str, delivery: int) -> Text | None:
    """Why a pressed button of one delivery of a reminder no longer counts (None: it does): the reminder is gone,
    answered, or snoozed since that delivery. A repeating one takes one answer per occurrence."""
    if reminder is None or reminder.status == CANCELLED:
        return tr("That reminder was deleted.")
    if reminder.rrule is not None:
        return tr("This reminder was already answered.") if reminder.answered_key == key else None
    current = occurrence_key(reminder.occurrence_at, reminder.timezone)
    if reminder.status != SENT or current != key or reminder.deliveries != delivery + 1:
        return tr("This reminder was already answered.")
    return None


async def mark_done(uow: UnitOfWork, user: User, actor: ActorT, reminder: Reminder, key: str) -> None:
    """The occurrence `key` is done: a one-off reminder ends; a repeating one goes on with its next."""
    if reminder.rrule is not None:
        reminder.answered_key = key
    if reminder.rrule is None or reminder.status == SENT:  # the last one of a series that has ended
        reminder.status, reminder.due_at, reminder.held = DONE, None, None
    reminder.updated_at = uow.now
    uow.emit(ReminderDone(reminder_id=reminder.id, text=reminder.text), user_id=user.id, record_id=reminder.id,
             actor=actor)


async def snooze(uow: UnitOfWork, user: User, actor: ActorT, reminder: Reminder, key: str, until: datetime) -> None:
    """The sent occurrence comes again at `until` (a new delivery, with fresh buttons). Of a repeating reminder, the
    occurrence comes again as a one-off reminder of its own, and the series goes on as it was."""
    if reminder.rrule is not None:
        reminder.answered_key, reminder.updated_at = key, uow.now
        again = store_reminder(uow, user, reminder.text, until)
        again.held = SNOOZED
    else:
        reminder.status, reminder.due_at, reminder.held = WAITING, until.astimezone(UTC), SNOOZED
        reminder.updated_at = uow.now
    uow.emit(ReminderSnoozed(reminder_id=reminder.id, until=until), user_id=user.id, record_id=reminder.id,
             actor=actor)


def tomorrow_at(reminder: Reminder, key: str) -> datetime:
    """The wall time of the occurrence `key` ("2026-11-30T15:00"), a day later, in the reminder's zone."""
    local = datetime.fromisoformat(key)
    return wall_time(local.date() + timedelta(days=1), local.time(), ZoneInfo(reminder.timezone))


def wall_time(day: date, at: time, zone: ZoneInfo) -> datetime:
    """A wall time in `zone` as an instant: the first of two when the clocks go back, and one that the clocks skip
    read with the offset before the gap (02:30 on a spring-forward night in Berlin is 03:30)."""
    return datetime.combine(day, at, tzinfo=zone).astimezone(UTC)


# ---- reading ---------------------------------------------------------------------------------------------------
async def waiting_reminders(uow: UnitOfWork, user: User, *, limit: int = MAX_LIST) -> list[ListedReminder]:
    """The person's reminders still to come, soonest first, numbered as /remind shows them."""
    rows = (await uow.session.scalars(
        select(Reminder).where(Reminder.user_id == user.id, Reminder.status == WAITING).order_by(*_ORDER)
        .limit(max(1, min(limit, MAX_LIST))))).all()
    return [ListedReminder(r, i) for i, r in enumerate(rows, start=1)]


async def find_reminder(uow: UnitOfWork, user: User, reference: str) -> Reminder:
    """One of the person's waiting reminders by its number in the list, its id, or a fragment of its text."""
    text = reference.strip()
    if not text:
        raise DomainError(tr("Which reminder do you mean?"), code="missing_reference")
    if match := _POSITION_RE.fullmatch(text):
        number = int(match.group(1))
        listed = await waiting_reminders(uow, user)
        if not 1 <= number <= len(listed):
            raise DomainError(tr("There is no reminder number {number}.", number=number), code="not_found")
        return listed[number - 1].reminder
    try:
        reminder_id = uuid.UUID(text)
    except ValueError:
        reminder_id = None
    if reminder_id is not None:
        found = await uow.session.scalar(select(Reminder).where(Reminder.user_id == user.id,
                                                                Reminder.id == reminder_id))
        if found is None:
            raise DomainError(tr("No such reminder."), code="not_found")
        return found
    pattern = "%" + text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
    candidates = (await uow.session.scalars(
        select(Reminder).where(Reminder.user_id == user.id, Reminder.status == WAITING,
                               Reminder.text.ilike(pattern, escape="\\"))
        .order_by((func.lower(Reminder.text) == text.lower()).desc(), *_ORDER).limit(6))).all()
    return _one(text, candidates)


def _one(reference: str, candidates: Sequence[Reminder]) -> Reminder:
    if not candidates:
        raise DomainError(tr("I found no reminder matching {reference}.", reference=reference[:100]),
                          code="not_found")
    exact = [c for c in candidates if c.text.lower() == reference.lower()]
    if len(candidates) == 1 or len(exact) == 1:
        return candidates[0] if len(candidates) == 1 else exact[0]
    raise DomainError(tr("{reference} matches several reminders: {choices}. Which one do you mean?",
                         reference=reference[:100], choices=", ".join(c.text[:60] for c in candidates[:5])),
                      code="ambiguous")


# ---- a task's reminders ---------------------------------------------------------------------------------------
async def end_task_reminders(uow: UnitOfWork, task_id: uuid.UUID, user_id: uuid.UUID) -> None:
    """A done task needs no reminder any more: its waiting ones end (quietly; the task's event says why)."""
    await uow.session.execute(
        update(Reminder).where(Reminder.user_id == user_id, Reminder.task_id == task_id,
                               Reminder.status.in_((WAITING, SENT)))
        .values(status=DONE, due_at=None, updated_at=uow.now))
