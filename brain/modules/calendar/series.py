"""Repeating appointments: a series (RRULE, first start, length, zone) whose occurrences are made as appointments a
year ahead, so the agenda, /today and the day snapshot read them like any other; `extend_series` (a daily job) keeps
them a year ahead. One occurrence can be moved or deleted on its own; deleting the series removes the occurrences
still to come and keeps the past ones."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from sqlalchemy import delete, select
from sqlalchemy.dialects.postgresql import insert

from brain.errors import DomainError
from brain.events.catalog import ActorT, CalendarSeriesCreated, CalendarSeriesDeleted
from brain.i18n import tr
from brain.modules.calendar.models import CalendarEvent, CalendarSeries
from brain.modules.calendar.service import _calendar_id, _description, _location, _span, _title
from brain.people.models import User
from brain.recurrence import RuleError, normalize, occurrences
from brain.store.unit_of_work import UnitOfWork

HORIZON = timedelta(days=366)
# The daily job extends a series once fewer than this many days of it are made.
EXTEND_WITHIN = timedelta(days=2)
EXTEND_BATCH = 200


def checked_rule(rule: str) -> str:
    try:
        return normalize(rule)
    except RuleError as bad:
        raise DomainError(bad.text, code="bad_rule") from None


async def create_series(
    uow: UnitOfWork, user: User, actor: ActorT, title: str, start_time: datetime, end_time: datetime | None,
    rule: str, *, is_all_day: bool = False, location: str | None = None, description: str | None = None,
    calendar_id: str = "default",
) -> tuple[CalendarSeries, list[CalendarEvent]]:
    """A series from its first start (and end) and its rule; its occurrences from now on, a year ahead."""
    start, end = _span(user, start_time, end_time, is_all_day)
    zone = ZoneInfo(user.timezone)
    length = (end.astimezone(zone).date() - start.astimezone(zone).date()).days * 24 * 60 if is_all_day \
        else int((end - start).total_seconds() // 60)
    series = CalendarSeries(
        id=uuid.uuid4(), user_id=user.id, calendar_id=_calendar_id(calendar_id), title=_title(title),
        description=_description(description), location=_location(location), rrule=checked_rule(rule),
        timezone=user.timezone, starts_at=start, length_minutes=length, is_all_day=is_all_day,
        made_until=start, created_at=uow.now, updated_at=uow.now,
    )
    uow.session.add(series)
    await uow.session.flush()
    made = await _make(uow, series, after=min(start, uow.now) - timedelta(seconds=1), until=uow.now + HORIZON,
                       not_before=uow.now)
    if not made:
        raise DomainError(tr("That repetition has no dates from now on. Check its days or its end."),
                          code="no_occurrences")
    uow.emit(CalendarSeriesCreated(series_id=series.id, title=series.title, rrule=series.rrule,
                                   first_event_id=made[0].id, first_start=made[0].start_time, is_all_day=is_all_day),
             user_id=user.id, record_id=series.id, actor=actor)
    return series, made


async def _make(uow: UnitOfWork, series: CalendarSeries, *, after: datetime, until: datetime,
                not_before: datetime | None = None) -> list[CalendarEvent]:
    """The occurrences in (after, until] as rows (one that exists is kept as it is); those ending before
    `not_before` are not made."""
    zone = ZoneInfo(series.timezone)
    wall = series.starts_at.astimezone(zone).replace(tzinfo=None)
    rows: list[dict[str, Any]] = []
    for instant in occurrences(series.rrule, wall, zone, after, until):
        local = instant.astimezone(zone)
        if series.is_all_day:
            first = day_bounds_in(local.date(), zone)
            start, end = first, day_bounds_in(local.date() + timedelta(days=series.length_minutes // (24 * 60)), zone)
        else:
            start, end = instant, instant + timedelta(minutes=series.length_minutes)
        if not_before is not None and end <= not_before:
            continue
        rows.append({"id": uuid.uuid4(), "user_id": series.user_id, "calendar_id": series.calendar_id,
                     "title": series.title, "description": series.description, "location": series.location,
                     "start_time": start, "end_time": end, "is_all_day": series.is_all_day, "is_recurring": True,
                     "series_id": series.id, "occurrence_key": f"{local:%Y-%m-%dT%H:%M}", "updated_at": uow.now})
    series.made_until = max(series.made_until, until)
    series.updated_at = uow.now
    if not rows:
        return []
    made = (await uow.session.scalars(
        insert(CalendarEvent).values(rows).on_conflict_do_nothing(index_elements=["series_id", "occurrence_key"])
        .returning(CalendarEvent), execution_options={"populate_existing": True})).all()
    return sorted(made, key=lambda e: e.start_time)


def day_bounds_in(day: Any, zone: ZoneInfo) -> datetime:
    return datetime.combine(day, datetime.min.time(), tzinfo=zone).astimezone(UTC)


async def extend_series(uow: UnitOfWork, now: datetime, *, batch: int = EXTEND_BATCH) -> int:
    """Makes the occurrences of every series that are less than a year ahead (the scheduler's daily job); returns
    how many series it extended."""
    due = (await uow.session.scalars(
        select(CalendarSeries).where(CalendarSeries.made_until < now + HORIZON - EXTEND_WITHIN)
        .order_by(CalendarSeries.made_until).limit(batch).with_for_update(skip_locked=True))).all()
    for series in due:
        await _make(uow, series, after=series.made_until, until=now + HORIZON)
    return len(due)


async def delete_series(uow: UnitOfWork, user: User, actor: ActorT, series_id: uuid.UUID) -> CalendarSeries:
    """The series and its occurrences still to come; the past ones stay as they were (without a series)."""
    series = await uow.session.scalar(select(CalendarSeries).where(
        CalendarSeries.user_id == user.id, CalendarSeries.id == series_id).with_for_update())
    if series is None:
        raise DomainError(tr("That series was already deleted."), code="not_found")
    gone = await uow.session.execute(
        delete(CalendarEvent).where(CalendarEvent.user_id == user.id, CalendarEvent.series_id == series.id,
                                    CalendarEvent.end_time > uow.now),
        execution_options={"synchronize_session": "fetch"})
    await uow.session.delete(series)
    uow.emit(CalendarSeriesDeleted(series_id=series.id, title=series.title,
                                   occurrences_deleted=int(getattr(gone, "rowcount", 0) or 0)),
             user_id=user.id, record_id=series.id, actor=actor)
    return series


async def series_of(uow: UnitOfWork, user: User, series_id: uuid.UUID) -> CalendarSeries | None:
    return await uow.session.scalar(select(CalendarSeries).where(CalendarSeries.user_id == user.id,
                                                                 CalendarSeries.id == series_id))
