"""The days of a pause (vacation mode) bridge the person's streaks: each is a skip day of every streak, marked as a
vacation day (it does not count toward the limit of skip days chosen one by one). A pause with an end writes its days
when it is set; an open one gets each day as it comes (`keep_streaks_in_pauses`, the scheduler's minute) and the rest
when it ends. Goal periods read the same days when they close (brain.goals.rollover)."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from datetime import date, datetime, timedelta
from zoneinfo import ZoneInfo

from sqlalchemy import delete, select
from sqlalchemy.dialects.postgresql import insert

from brain.people.models import User
from brain.projections.models import StreakSkip
from brain.projections.streaks import STREAKS
from brain.pulse.models import PulseState
from brain.store.unit_of_work import UnitOfWork

MAX_DAYS = 366


def local_days(user: User, start: datetime, end: datetime) -> list[date]:
    """The person's local dates from the one of `start` to the one just before `end`."""
    zone = ZoneInfo(user.timezone)
    first = start.astimezone(zone).date()
    last = (end - timedelta(microseconds=1)).astimezone(zone).date()
    return [first + timedelta(days=n) for n in range(min((last - first).days + 1, MAX_DAYS))]


async def keep_streaks(uow: UnitOfWork, user_id: uuid.UUID, days: Sequence[date]) -> None:
    if not days:
        return
    await uow.session.execute(
        insert(StreakSkip).values([{"user_id": user_id, "streak": streak, "day": day, "vacation": True}
                                   for day in days for streak in STREAKS])
        .on_conflict_do_nothing(index_elements=["user_id", "streak", "day"]))


async def release_vacation_days(uow: UnitOfWork, user_id: uuid.UUID, after: date) -> None:
    """A vacation called off (or ended early, or replaced): its days after `after` no longer bridge anything."""
    await uow.session.execute(delete(StreakSkip).where(StreakSkip.user_id == user_id, StreakSkip.vacation.is_(True),
                                                       StreakSkip.day > after))


async def keep_streaks_in_pauses(uow: UnitOfWork, now: datetime) -> int:
    """Today's vacation day for everyone in a pause without an end (theirs, in their zone); how many people."""
    rows = (await uow.session.execute(
        select(User.id, User.timezone).join(PulseState, PulseState.user_id == User.id)
        .where(PulseState.paused.is_(True), PulseState.paused_until.is_(None)))).all()
    for user_id, zone in rows:
        await keep_streaks(uow, user_id, [now.astimezone(ZoneInfo(zone)).date()])
    return len(rows)


async def vacation_days_between(uow: UnitOfWork, user_id: uuid.UUID, first: date, end: date) -> int:
    """How many local days in [first, end) were vacation days."""
    days = (await uow.session.scalars(select(StreakSkip.day).distinct().where(
        StreakSkip.user_id == user_id, StreakSkip.vacation.is_(True), StreakSkip.day >= first,
        StreakSkip.day < end))).all()
    return len(days)
