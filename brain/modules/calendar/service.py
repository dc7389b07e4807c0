"""Calendar mutations (each emits its event(s) in the same unit of work), today's and upcoming
events, and `find_event`, which resolves a short reference (agenda position, id or title fragment)."""

from __future__ import annotations

import re
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from sqlalchemy import Select, func, select, text
from sqlalchemy.orm import aliased

from brain.errors import DomainError
from brain.events.catalog import (
    ActorT,
    CalendarEventCreated,
    CalendarEventDeleted,
    CalendarEventMoved,
    CalendarEventUpdated,
)
from brain.i18n import Text, tr
from brain.modules.calendar.models import CalendarEvent
from brain.people.local_time import day_bounds, local_date
from brain.people.models import User
from brain.store.unit_of_work import UnitOfWork

MAX_TITLE = 500
MAX_LOCATION = 500
MAX_DESCRIPTION = 5000
MAX_CALENDAR_ID = 64
DEFAULT_DURATION = timedelta(hours=1)
MAX_DURATION_DAYS = 14
MAX_DURATION = timedelta(days=MAX_DURATION_DAYS)
MAX_LIST = 50

_ORDER = (CalendarEvent.start_time.asc(), CalendarEvent.end_time.asc(), CalendarEvent.created_at.asc(),
          CalendarEvent.id.asc())
_POSITION_RE = re.compile(r"#?\s*(\d{1,6})\.?")
# Words of a reference that are not in an event's title ("the call with my bank").
_NOT_TITLE_WORDS = frozenset({"the", "my", "a", "an", "with", "at", "of", "der", "die", "das", "dem", "den", "mein",
                              "meine", "meinem", "meinen", "mit", "beim", "bei", "zum", "zur", "am", "im"})


@dataclass(frozen=True)
class ListedEvent:
    event: CalendarEvent
    position: int


def _text(value: str | None, limit: int, too_long: Text) -> str | None:
    text = (value or "").strip()
    if len(text) > limit:
        raise DomainError(too_long, code="too_long")
    return text or None


def _title(title: str) -> str:
    text = _text(title, MAX_TITLE, tr("An event title can be at most {max} characters.", max=MAX_TITLE))
    if text is None:
        raise DomainError(tr("An event needs a title."), code="empty")
    return text


def _location(location: str | None) -> str | None:
    return _text(location, MAX_LOCATION, tr("A location can be at most {max} characters.", max=MAX_LOCATION))


def _description(description: str | None) -> str | None:
    return _text(description, MAX_DESCRIPTION,
                 tr("An event description can be at most {max} characters.", max=MAX_DESCRIPTION))


def _calendar_id(calendar_id: str) -> str:
    return _text(calendar_id, MAX_CALENDAR_ID,
                 tr("A calendar name can be at most {max} characters.", max=MAX_CALENDAR_ID)) or "default"


def _aware(user: User, at: datetime) -> datetime:
    # A naive time from a caller means the person's wall clock, as the tool coercion treats it.
    return at if at.tzinfo is not None else at.replace(tzinfo=ZoneInfo(user.timezone))


def _span(user: User, start: datetime, end: datetime | None, is_all_day: bool) -> tuple[datetime, datetime]:
    """Checked [start, end). All-day events snap to whole local days; an end at local midnight is
    the exclusive end of the day before."""
    start = _aware(user, start)
    end = _aware(user, end) if end is not None else None
    if is_all_day:
        first = day_bounds(user, local_date(user, start))[0]
        if end is None:
            end = day_bounds(user, local_date(user, start))[1]
        else:
            end_start, end_end = day_bounds(user, local_date(user, end))
            end = end_start if end == end_start else end_end
        start = first
    elif end is None:
        end = start + DEFAULT_DURATION
    if end <= start:
        raise DomainError(tr("An event must end after it starts."), code="bad_range")
    if end - start > MAX_DURATION:
        raise DomainError(tr("An event can last at most {days} days.", days=MAX_DURATION_DAYS), code="out_of_range")
    return start, end


def _shifted_end(user: User, event: CalendarEvent, new_start: datetime) -> datetime:
    """The end that keeps the event's length when it starts at `new_start`: for all-day events the
    number of local days (a day across a DST change is not 24 hours), else the exact duration."""
    if event.is_all_day:
        days = (local_date(user, event.end_time) - local_date(user, event.start_time)).days
        return day_bounds(user, local_date(user, new_start) + timedelta(days=days))[0]
    return _aware(user, new_start) + (event.end_time - event.start_time)


# The person's all-day events, each moved to the same local dates in the new zone: an all-day event is stored from
# local midnight to local midnight, so a new zone would otherwise show it from 18:00 the day before (New York) or
# lose its first day.
_KEEP_ALL_DAY_DATES = text("""
    UPDATE calendar_events
       SET start_time = ((start_time AT TIME ZONE :old)::date)::timestamp AT TIME ZONE :new,
           end_time = ((end_time AT TIME ZONE :old)::date)::timestamp AT TIME ZONE :new,
           updated_at = :now
     WHERE user_id = :person AND is_all_day""")


async def keep_all_day_dates(uow: UnitOfWork, user_id: uuid.UUID, old_zone: str, new_zone: str) -> int:
    """Keeps the person's all-day events on their dates when their time zone changes (`set_timezone`); returns
    how many there were. Their times are a representation of the dates, so no event is emitted."""
    if old_zone == new_zone:
        return 0
    result = await uow.session.execute(_KEEP_ALL_DAY_DATES, {"person": user_id, "old": old_zone, "new": new_zone,
                                                             "now": uow.now})
    return int(getattr(result, "rowcount", 0) or 0)


async def _get(uow: UnitOfWork, user: User, event_id: uuid.UUID) -> CalendarEvent:
    # populate_existing: a lookup may have loaded the row before we held its lock.
    event = await uow.session.scalar(
        select(CalendarEvent).where(CalendarEvent.user_id == user.id, CalendarEvent.id == event_id)
        .with_for_update().execution_options(populate_existing=True)
    )
    if event is None:
        raise DomainError(tr("No such event."), code="not_found")
    return event


async def create_event(
    uow: UnitOfWork,
    user: User,
    actor: ActorT,
    title: str,
    start_time: datetime,
    end_time: datetime | None = None,
    *,
    is_all_day: bool = False,
    location: str | None = None,
    description: str | None = None,
    calendar_id: str = "default",
) -> CalendarEvent:
    """A new event; without an end it lasts an hour (an all-day event, the whole local day)."""
    start, end = _span(user, start_time, end_time, is_all_day)
    event = CalendarEvent(
        id=uuid.uuid4(), user_id=user.id, calendar_id=_calendar_id(calendar_id), title=_title(title),
        description=_description(description),
        location=_location(location), start_time=start, end_time=end,
        is_all_day=is_all_day, is_recurring=False, updated_at=uow.now,
    )
    uow.session.add(event)
    uow.emit(
        CalendarEventCreated(
            event_id=event.id, title=event.title, start_time=start, end_time=end, is_all_day=is_all_day,
            is_recurring=False, calendar_id=event.calendar_id, location=event.location,
        ),
        user_id=user.id, record_id=event.id, actor=actor,
    )
    return event


async def update_event(
    uow: UnitOfWork,
    user: User,
    actor: ActorT,
    event_id: uuid.UUID,
    *,
    title: str | None = None,
    start_time: datetime | None = None,
    end_time: datetime | None = None,
    is_all_day: bool | None = None,
    location: str | None = None,
    description: str | None = None,
    calendar_id: str | None = None,
) -> tuple[CalendarEvent, list[str]]:
    """Changes the given fields; an empty location or description removes it. A new start without
    a new end keeps the duration. A changed start emits CalendarEventMoved; every other change
    (including an end that does not simply follow the start) is named in one CalendarEventUpdated.
    Unchanged values emit nothing. Returns the event and the names of the changed fields."""
    if all(v is None for v in (title, start_time, end_time, is_all_day, location, description, calendar_id)):
        raise DomainError(tr("Tell me what to change about the event."), code="nothing_to_change")
    event = await _get(uow, user, event_id)
    old_start, old_end = event.start_time, event.end_time
    all_day = event.is_all_day if is_all_day is None else is_all_day
    if end_time is not None:
        end_in = end_time
    elif start_time is not None:
        end_in = _shifted_end(user, event, start_time)
    else:
        end_in = old_end
    start, end = _span(user, start_time if start_time is not None else old_start, end_in, all_day)

    values: dict[str, Any] = {
        "title": _title(title) if title is not None else event.title,
        "location": _location(location) if location is not None else event.location,
        "description": _description(description) if description is not None else event.description,
        "calendar_id": _calendar_id(calendar_id) if calendar_id is not None else event.calendar_id,
        "is_all_day": all_day,
    }
    changed = [name for name, value in values.items() if getattr(event, name) != value]
    # The old values of the changed text fields, carried by the event so an undo can restore them.
    before = {name: getattr(event, name) for name in changed if name in ("title", "location", "description")}
    moved = start != old_start
    # An end that shifts with the start is part of the move; only a new length is its own change.
    if end != _shifted_end(user, event, start):
        changed.append("end_time")
    for name, value in values.items():
        setattr(event, name, value)
    event.start_time, event.end_time = start, end
    if changed or moved:
        event.updated_at = uow.now
    if changed:
        uow.emit(CalendarEventUpdated(event_id=event.id, fields=changed, before=before), user_id=user.id,
                 record_id=event.id, actor=actor)
    if moved:
        uow.emit(CalendarEventMoved(event_id=event.id, title=event.title, old_start=old_start, new_start=start),
                 user_id=user.id, record_id=event.id, actor=actor)
    return event, [*changed, "start_time"] if moved else changed


async def move_event(
    uow: UnitOfWork, user: User, actor: ActorT, event_id: uuid.UUID, new_start: datetime
) -> CalendarEvent:
    """Moves the event to a new start, keeping its duration; the same start again emits nothing."""
    event = await _get(uow, user, event_id)
    old_start = event.start_time
    start, end = _span(user, new_start, _shifted_end(user, event, new_start), event.is_all_day)
    if start == old_start:
        return event
    event.start_time, event.end_time, event.updated_at = start, end, uow.now
    uow.emit(CalendarEventMoved(event_id=event.id, title=event.title, old_start=old_start, new_start=start),
             user_id=user.id, record_id=event.id, actor=actor)
    return event


async def delete_event(uow: UnitOfWork, user: User, actor: ActorT, event_id: uuid.UUID) -> CalendarEvent:
    event = await _get(uow, user, event_id)
    await uow.session.delete(event)
    uow.emit(CalendarEventDeleted(event_id=event.id, title=event.title, was_recurring=event.is_recurring),
             user_id=user.id, record_id=event.id, actor=actor)
    return event


# ---- reading ---------------------------------------------------------------------------------


def _agenda(uow: UnitOfWork, user: User) -> tuple[type[CalendarEvent], Any]:
    """The person's agenda (every event not yet over, running ones included), each with its 1-based
    position by start: the numbers /event shows, and so the ones a number names. Today's list is a
    slice of it too, where an event already over has no number (position 0): it is not listed as
    coming up, so no number the person saw could mean it."""
    ranked = (
        select(CalendarEvent, func.row_number().over(order_by=_ORDER).label("position"))
        .where(CalendarEvent.user_id == user.id, CalendarEvent.end_time > uow.now)
        .subquery()
    )
    return aliased(CalendarEvent, ranked), ranked.c.position


async def _rows(uow: UnitOfWork, stmt: Select[Any]) -> list[ListedEvent]:
    return [ListedEvent(event, int(position or 0)) for event, position in (await uow.session.execute(stmt))]


async def todays_events(uow: UnitOfWork, user: User) -> list[ListedEvent]:
    """Events overlapping the person's local today (already-ended ones included, without a number), by start."""
    day_start, day_end = day_bounds(user, local_date(user, uow.now))
    row, position = _agenda(uow, user)
    return await _rows(uow, select(CalendarEvent, position).outerjoin(row, row.id == CalendarEvent.id).where(
        CalendarEvent.user_id == user.id, CalendarEvent.end_time > day_start, CalendarEvent.start_time < day_end,
    ).order_by(*_ORDER).limit(MAX_LIST))


async def upcoming_events(uow: UnitOfWork, user: User, *, limit: int = 10) -> list[ListedEvent]:
    """Events not yet over (running ones included), by start."""
    row, position = _agenda(uow, user)
    limit = max(1, min(limit, MAX_LIST))
    return await _rows(uow, select(row, position).where(row.end_time > uow.now).order_by(position).limit(limit))


async def last_made_upcoming(uow: UnitOfWork, user: User) -> CalendarEvent | None:
    """The not yet started event the person made last ("remind me 10 minutes before", said after making it)."""
    return await uow.session.scalar(
        select(CalendarEvent).where(CalendarEvent.user_id == user.id, CalendarEvent.start_time > uow.now)
        .order_by(CalendarEvent.created_at.desc(), CalendarEvent.id).limit(1))


async def find_event(uow: UnitOfWork, user: User, reference: str) -> ListedEvent:
    """One of the person's events by a short reference: its number in today's/upcoming list
    ("2", "#2"), its id, or a case-insensitive title fragment. A fragment searches the agenda first
    and past events only if the agenda has none; several matches (none exact) are ambiguous.
    Past events come back with position 0."""
    text = reference.strip()
    if not text:
        raise DomainError(tr("Which event do you mean?"), code="missing_reference")
    row, position = _agenda(uow, user)
    if match := _POSITION_RE.fullmatch(text):
        number = int(match.group(1))
        found = await _rows(uow, select(row, position).where(position == number))
        if not found:
            raise DomainError(tr("There is no event number {number}.", number=number), code="not_found")
        return found[0]
    try:
        event_id = uuid.UUID(text)
    except ValueError:
        event_id = None
    if event_id is not None:
        found = await _rows(uow, select(row, position).where(row.id == event_id))
        if found:
            return found[0]
        past = await uow.session.scalar(
            select(CalendarEvent).where(CalendarEvent.user_id == user.id, CalendarEvent.id == event_id)
        )
        if past is None:
            raise DomainError(tr("No such event."), code="not_found")
        return ListedEvent(past, 0)
    pattern = "%" + text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
    # An exact title first, so "Dentist" still finds "Dentist" when "Dentist follow-up" exists too.
    candidates = await _rows(uow, select(row, position).where(row.title.ilike(pattern, escape="\\")).order_by(
        (func.lower(row.title) == text.lower()).desc(), position).limit(6))
    words = [w for w in re.findall(r"[^\W_]+", text.lower()) if w not in _NOT_TITLE_WORDS]
    if not candidates and len(words) >= 2:
        # The title's words in another order: "the bank call" is "Call with the bank"
        candidates = await _rows(uow, select(row, position).where(
            *(row.title.ilike(f"%{w}%") for w in words)).order_by(position).limit(6))
    if not candidates:
        past_events = (await uow.session.scalars(
            select(CalendarEvent).where(CalendarEvent.user_id == user.id,
                                        CalendarEvent.title.ilike(pattern, escape="\\"))
            .order_by((func.lower(CalendarEvent.title) == text.lower()).desc(), CalendarEvent.start_time.desc())
            .limit(6)
        )).all()
        candidates = [ListedEvent(e, 0) for e in past_events]
    return _one(user, text, candidates)


def _one(user: User, reference: str, candidates: Sequence[ListedEvent]) -> ListedEvent:
    if not candidates:
        raise DomainError(tr("I found no event matching {reference}.", reference=reference[:100]),
                          code="not_found")
    if len(candidates) == 1:
        return candidates[0]
    exact = [c for c in candidates if c.event.title.lower() == reference.lower()]
    if len(exact) == 1:
        return exact[0]
    if len({c.event.series_id for c in candidates}) == 1 and candidates[0].event.series_id is not None:
        return candidates[0]  # occurrences of one series: its next one (a delete then asks about the series)
    zone = ZoneInfo(user.timezone)
    choices = ", ".join(
        f"{c.position}. {c.event.title[:60]}" if c.position
        else f"{c.event.title[:60]} ({c.event.start_time.astimezone(zone):%Y-%m-%d %H:%M})"
        for c in candidates[:5]
    )
    raise DomainError(tr("{reference} matches several events: {choices}. Which one do you mean?",
                         reference=reference[:100], choices=choices), code="ambiguous")
