"""Whether a person can be reached now: quiet hours (in their zone, possibly spanning midnight), pause or
vacation mode (/pause, /resume), and whether they are mid-conversation (last message a few minutes ago)."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from datetime import UTC, date, datetime, time, timedelta
from typing import TYPE_CHECKING

from sqlalchemy import CTE, DateTime, bindparam, false, select
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncSession

from brain.errors import DomainError
from brain.events.catalog import ActorT, PulsePaused, PulseResumed
from brain.i18n import tr
from brain.people.local_time import day_bounds, local_date
from brain.people.models import User
from brain.pulse.models import PulseState
from brain.pulse.vacation import keep_streaks, local_days, release_vacation_days
from brain.store.lean import Lean
from brain.store.unit_of_work import UnitOfWork

if TYPE_CHECKING:
    from brain.kernel import Kernel

MAX_PAUSE_DAYS = 365


# ---- quiet hours (pure) --------------------------------------------------------------------------------
def in_quiet_hours(at: time, start: time, end: time) -> bool:
    """Quiet from `start` (inclusive) to `end` (exclusive); 22:00-07:00 spans midnight; equal means none."""
    at = at.replace(second=0, microsecond=0, tzinfo=None)
    if start == end:
        return False
    if start < end:
        return start <= at < end
    return at >= start or at < end


def quiet_hours_end(local: datetime, start: time, end: time) -> datetime:
    """The first minute after the quiet hours that `local` (an aware local time inside them) falls in."""
    candidate = local.replace(hour=end.hour, minute=end.minute, second=0, microsecond=0)
    if candidate <= local:
        candidate = _next_day(local, end)
    return candidate


def _next_day(local: datetime, at: time) -> datetime:
    day = (local + timedelta(days=1)).date()
    return datetime.combine(day, at, tzinfo=local.tzinfo)


# ---- pause and last message ----------------------------------------------------------------------------
def is_paused(state: PulseState | None, now: datetime) -> bool:
    if state is None or not state.paused:
        return False
    if state.paused_from is not None and now < state.paused_from:
        return False  # a vacation still ahead
    return state.paused_until is None or now < state.paused_until


def vacation_of(state: PulseState | None, now: datetime) -> tuple[datetime, datetime] | None:
    """The pause with an end (a vacation) that is running or still ahead at `now`: its start and end."""
    if state is None or not state.paused or state.paused_until is None or now >= state.paused_until:
        return None
    return state.paused_from or state.updated_at, state.paused_until


def is_mid_conversation(state: PulseState | None, now: datetime, idle_hold: timedelta) -> bool:
    return state is not None and state.last_inbound_at is not None and now - state.last_inbound_at < idle_hold


async def pulse_states(session: AsyncSession, user_ids: Sequence[uuid.UUID]) -> dict[uuid.UUID, PulseState]:
    if not user_ids:
        return {}
    rows = (await session.scalars(select(PulseState).where(PulseState.user_id.in_(user_ids)))).all()
    return {row.user_id: row for row in rows}


async def note_inbound(brain: Kernel, user_id: uuid.UUID) -> None:
    """Remember when the person last wrote, so no nudge interrupts a live conversation."""
    async with brain.transactions.begin() as uow:
        await note_inbound_in(uow.session, user_id, uow.now)


# Built once and run lean (`Lean`: it runs for every message); the values are bound parameters.
_NOTE_INBOUND = Lean(
    insert(PulseState)
    .values(user_id=bindparam("person"), paused=False, last_inbound_at=bindparam("now"), updated_at=bindparam("now"))
    .on_conflict_do_update(index_elements=["user_id"],
                           set_={"last_inbound_at": bindparam("now"), "updated_at": bindparam("now")})
)


def note_inbound_of(people: CTE) -> CTE:
    """`note_inbound_in` as a CTE of another statement, for the people in the `user_id` column of `people` (a CTE
    of that statement: an adapter notes the message in the statement that records it, and only if it recorded
    it). The time is the bound parameter `now`."""
    now = bindparam("now", type_=DateTime(timezone=True))
    return (
        insert(PulseState)
        .from_select(["user_id", "paused", "last_inbound_at", "updated_at"],
                     select(people.c.user_id, false(), now, now))
        .on_conflict_do_update(index_elements=["user_id"], set_={"last_inbound_at": now, "updated_at": now})
        .cte("noted")
    )


async def note_inbound_in(target: AsyncSession | AsyncConnection, user_id: uuid.UUID, now: datetime) -> None:
    """`note_inbound` in the caller's transaction (the dialog's, which has just found the person). Core on the
    session's connection: nothing of the ORM is needed for it."""
    connection = await target.connection() if isinstance(target, AsyncSession) else target
    await _NOTE_INBOUND.run(connection, {"person": user_id, "now": now})


async def _locked_state(uow: UnitOfWork, user: User) -> PulseState:
    await uow.session.execute(
        insert(PulseState).values(user_id=user.id, paused=False, updated_at=uow.now)
        .on_conflict_do_nothing(index_elements=["user_id"])
    )
    state = await uow.session.scalar(
        select(PulseState).where(PulseState.user_id == user.id).with_for_update().execution_options(
            populate_existing=True)
    )
    assert state is not None
    return state


def vacation_first_day(user: User, now: datetime, first_day: date | None) -> date:
    """The first day of a vacation: the one given, or today (a vacation given only its end, "/vacation bis
    Sonntag"); never a day gone."""
    today = local_date(user, now)
    return max(first_day or today, today)


async def pause_pulse(uow: UnitOfWork, user: User, actor: ActorT, days: int | None = None, *,
                      first_day: date | None = None, last_day: date | None = None) -> datetime | None:
    """No nudges until /resume, for `days` days from now, or a vacation from `first_day` to `last_day` (whole local
    days, later or from today); returns when the pause ends (None: until resumed). The days of a pause with an end
    bridge the person's streaks (an open one's are added day by day, `keep_streaks_in_pauses`)."""
    if days is not None and not 1 <= days <= MAX_PAUSE_DAYS:
        raise DomainError(tr("A pause lasts between 1 and {max} days.", max=MAX_PAUSE_DAYS), code="out_of_range")
    since: datetime | None = None
    until = uow.now + timedelta(days=days) if days is not None else None
    if last_day is not None:
        today = local_date(user, uow.now)
        first = vacation_first_day(user, uow.now, first_day)
        if last_day < first or (last_day - first).days + 1 > MAX_PAUSE_DAYS:
            raise DomainError(tr("A vacation runs from a day to a later one, today or ahead, at most {max} days.",
                                 max=MAX_PAUSE_DAYS), code="out_of_range")
        start, _ = day_bounds(user, first)
        since = start.astimezone(UTC) if first > today else None
        until = day_bounds(user, last_day)[1].astimezone(UTC)
    state = await _locked_state(uow, user)
    await release_vacation_days(uow, user.id, local_date(user, uow.now))  # a vacation set before gives way
    state.paused, state.paused_from, state.paused_until, state.updated_at = True, since, until, uow.now
    if until is not None:
        await keep_streaks(uow, user.id, local_days(user, since or uow.now, until))
    uow.emit(PulsePaused(until=until, since=since), user_id=user.id, record_id=user.id, actor=actor)
    return until


async def resume_pulse(uow: UnitOfWork, user: User, actor: ActorT) -> bool:
    """Nudges again, and a vacation still ahead is called off; False when there was no pause to end."""
    state = await _locked_state(uow, user)
    ahead = vacation_of(state, uow.now) is not None and not is_paused(state, uow.now)
    if not is_paused(state, uow.now) and not ahead:
        state.paused, state.paused_until, state.paused_from = False, None, None
        return False
    open_ended = state.paused_until is None
    today = local_date(user, uow.now)
    if open_ended:
        await keep_streaks(uow, user.id, local_days(user, state.paused_from or state.updated_at, uow.now))
    await release_vacation_days(uow, user.id, today)  # the days it would still have covered
    state.paused, state.paused_from, state.paused_until, state.updated_at = False, None, None, uow.now
    uow.emit(PulseResumed(open_ended=open_ended), user_id=user.id, record_id=user.id, actor=actor)
    return True
