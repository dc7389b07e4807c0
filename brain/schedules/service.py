"""Reading and changing a person's push schedules. A change takes effect from the next occurrence after
now: slots before the change are never sent because of it. Every person has a morning summary (08:00) and an
evening reflection (21:00) until they change or turn them off; the rows are created on first use."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime, time, timedelta

from sqlalchemy import String, Time, column, delete, exists, literal, select, true, update, values
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.ext.asyncio import AsyncSession

from brain.people.models import User
from brain.schedules.models import EVENING_REFLECTION, MORNING_SUMMARY, PushSchedule
from brain.schedules.weekdays import EVERY_DAY

DAILY_PUSHES: dict[str, time] = {MORNING_SUMMARY: time(8, 0), EVENING_REFLECTION: time(21, 0)}
# New default rows look back one scheduler period, so a person who arrives at 07:59:30 still gets 08:00.
DEFAULT_LOOKBACK = timedelta(minutes=1)


@dataclass(frozen=True)
class PushSetting:
    kind: str
    at: time
    weekdays: int
    enabled: bool


async def push_setting(session: AsyncSession, user_id: uuid.UUID, kind: str, ref: str = "") -> PushSetting | None:
    row = await session.get(PushSchedule, (user_id, kind, ref))
    if row is None:
        if kind in DAILY_PUSHES and not ref:
            return PushSetting(kind, DAILY_PUSHES[kind], EVERY_DAY, True)
        return None
    return PushSetting(kind, row.at, row.weekdays, row.enabled)


async def set_push(
    session: AsyncSession, user: User, kind: str, now: datetime, *, at: time | None = None,
    weekdays: int | None = None, enabled: bool = True, ref: str = "",
) -> PushSetting:
    """Creates or changes one schedule; `at`/`weekdays` left out keep their current (or default) values."""
    current = await push_setting(session, user.id, kind, ref)
    new_at = at if at is not None else (current.at if current is not None else DAILY_PUSHES.get(kind, time(8)))
    new_days = weekdays if weekdays is not None else (current.weekdays if current is not None else EVERY_DAY)
    values = {"at": new_at.replace(second=0, microsecond=0), "weekdays": new_days, "enabled": enabled,
              "timezone": user.timezone, "last_slot_at": now, "next_due_at": None, "updated_at": now}
    await session.execute(
        insert(PushSchedule).values(user_id=user.id, kind=kind, ref=ref, **values)
        .on_conflict_do_update(index_elements=["user_id", "kind", "ref"], set_=values)
    )
    return PushSetting(kind, new_at, new_days, enabled)


async def remove_push(session: AsyncSession, user_id: uuid.UUID, kind: str, ref: str = "") -> None:
    await session.execute(delete(PushSchedule).where(PushSchedule.user_id == user_id, PushSchedule.kind == kind,
                                                     PushSchedule.ref == ref))


async def ensure_daily_pushes(session: AsyncSession, now: datetime, lookback: timedelta = DEFAULT_LOOKBACK) -> None:
    """Adds the default morning summary and evening reflection for everyone who has no row for them yet, in one
    statement; their first slot may lie up to `lookback` back (the time since this last ran), so nobody who
    arrived meanwhile misses one."""
    defaults = values(column("kind", String), column("at", Time), name="daily").data(list(DAILY_PUSHES.items()))
    missing = ~exists().where(PushSchedule.user_id == User.id, PushSchedule.kind == defaults.c.kind,
                              PushSchedule.ref == "")
    rows = select(User.id, defaults.c.kind, literal(""), defaults.c.at, literal(EVERY_DAY), literal(True),
                  User.timezone, literal(now - lookback), literal(now)).select_from(User).join(defaults, true()) \
        .where(missing)
    await session.execute(
        insert(PushSchedule).from_select(
            ["user_id", "kind", "ref", "at", "weekdays", "enabled", "timezone", "last_slot_at", "updated_at"], rows,
        ).on_conflict_do_nothing(index_elements=["user_id", "kind", "ref"])
    )


async def replan_moved_people(session: AsyncSession) -> int:
    """Schedules planned in a zone the person has since left are planned again at the next run."""
    result = await session.execute(
        update(PushSchedule).where(PushSchedule.user_id == User.id, PushSchedule.timezone != User.timezone)
        .values(next_due_at=None)
    )
    return int(getattr(result, "rowcount", 0) or 0)
