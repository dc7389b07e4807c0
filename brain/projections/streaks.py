"""Streaks (water, tasks, meals) with habit strength and skip days. The state is kept per person and
streak and advanced incrementally by the bus subscriber, one qualifying event at a time, on the person's
local dates; reads derive the status (active / at risk / broken) and the decayed strength for today."""

from __future__ import annotations

import uuid
from collections.abc import Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import Any, Literal
from zoneinfo import ZoneInfo

from sqlalchemy import Date, DateTime, String, and_, bindparam, delete, exists, func, literal, select, update
from sqlalchemy.dialects.postgresql import ARRAY, UUID, insert
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncSession
from sqlalchemy.sql import column

from brain.errors import DomainError
from brain.events.catalog import (
    ActorT,
    DomainEvent,
    DrinkEntryDeleted,
    DrinkEntryUndone,
    DrinkLogged,
    EventPayload,
    MealDeleted,
    MealFromPhotoLogged,
    MealLogged,
    StreakDaySkipped,
    TaskCompleted,
    TaskUncompleted,
)
from brain.events.store import EventRecord
from brain.i18n import N_, Text, tr
from brain.people.local_time import local_date
from brain.people.models import User
from brain.projections.habit_strength import decayed, next_score
from brain.projections.models import StreakSkip, StreakState
from brain.store.lean import Lean, session_connection
from brain.store.unit_of_work import UnitOfWork

StreakStatus = Literal["active", "at_risk", "broken"]

STREAKS: tuple[str, ...] = ("water", "tasks", "meals")
STREAK_LABELS: dict[str, str] = {"water": N_("water"), "tasks": N_("tasks"), "meals": N_("meals")}
# The events that count as a day's activity for each streak (payload filters in `streak_of`).
QUALIFYING_EVENTS: tuple[type[EventPayload], ...] = (DrinkLogged, TaskCompleted, MealLogged, MealFromPhotoLogged)
# The event types that count for each streak (water only with drink_type water).
COUNTED_BY: dict[str, tuple[str, ...]] = {
    "water": ("DrinkLogged",), "tasks": ("TaskCompleted",), "meals": ("MealLogged", "MealFromPhotoLogged"),
}
# The events that take a qualifying one back (the same record), with the types that original may have. Deleting a
# completed task does not: the task was done.
TAKE_BACKS: dict[type[EventPayload], tuple[str, ...]] = {
    DrinkEntryUndone: ("DrinkLogged",), DrinkEntryDeleted: ("DrinkLogged",), TaskUncompleted: ("TaskCompleted",),
    MealDeleted: ("MealLogged", "MealFromPhotoLogged"),
}

MAX_SKIPS_PER_WINDOW = 2
SKIP_WINDOW_DAYS = 7
# A skip can rescue the last few days or be planned for the days ahead, not rewrite history.
MAX_SKIP_DAYS_BACK = 6
MAX_SKIP_DAYS_AHEAD = 6


def streak_label(streak: str) -> Text:
    return tr(STREAK_LABELS.get(streak, streak))


def streak_of(event: DomainEvent) -> str | None:
    """The streak an event counts for, if any (only water counts for the water streak)."""
    payload = event.payload
    if isinstance(payload, DrinkLogged):
        return "water" if payload.drink_type == "water" else None
    if isinstance(payload, TaskCompleted):
        return "tasks"
    if isinstance(payload, MealLogged | MealFromPhotoLogged):
        return "meals"
    return None


def streak_taken_back(event: DomainEvent) -> str | None:
    """The streak whose activity an event takes back, if any (`TAKE_BACKS`; only water for the water streak)."""
    payload = event.payload
    if isinstance(payload, DrinkEntryUndone | DrinkEntryDeleted):
        return "water" if payload.drink_type == "water" else None
    if isinstance(payload, TaskUncompleted):
        return "tasks"
    if isinstance(payload, MealDeleted):
        return "meals"
    return None


# ---- pure rules ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class StreakProgress:
    current: int
    longest: int
    last_active: date | None
    strength: float
    strength_date: date | None


NO_PROGRESS = StreakProgress(current=0, longest=0, last_active=None, strength=0.0, strength_date=None)


def days_between(after: date, before: date) -> Iterator[date]:
    """The days strictly between two dates."""
    day = after + timedelta(days=1)
    while day < before:
        yield day
        day += timedelta(days=1)


def bridged(last_active: date, day: date, skipped: Collection[date]) -> bool:
    """True when every day between the last active day and `day` was skipped (or there is none)."""
    return all(gap in skipped for gap in days_between(last_active, day))


def _missed_days(since: date, until: date, skipped: Collection[date]) -> int:
    """Days strictly between `since` and `until` that were neither active nor skipped."""
    total = max((until - since).days - 1, 0)
    return total - sum(1 for d in skipped if since < d < until)


def advance(progress: StreakProgress, day: date, skipped: Collection[date]) -> StreakProgress:
    """The state after a qualifying event on local `day`. `skipped` holds the skip days after the last
    active day. The same day again (or an earlier one arriving late) changes nothing."""
    last = progress.last_active
    if last is not None and day <= last:
        return progress
    current = progress.current + 1 if last is not None and bridged(last, day, skipped) else 1
    since = progress.strength_date
    base = progress.strength if since is None else decayed(progress.strength, _missed_days(since, day, skipped))
    return StreakProgress(current=current, longest=max(progress.longest, current), last_active=day,
                          strength=next_score(base, True), strength_date=day)


def status_on(last_active: date | None, today: date, skipped: Collection[date]) -> StreakStatus:
    """Active when done today; at risk when nothing but skip days lie between the last active day and
    today (so doing it today continues the streak); broken otherwise."""
    if last_active is None or last_active > today:
        return "broken" if last_active is None else "active"
    if last_active == today:
        return "active"
    return "at_risk" if bridged(last_active, today, skipped) else "broken"


def strength_on(strength: float, strength_date: date | None, today: date, skipped: Collection[date]) -> float:
    """The stored strength decayed through yesterday: days without a check-in lower it, skip days do
    not, and today only counts once it is done (it is not over yet)."""
    if strength_date is None or strength_date >= today:
        return strength
    return decayed(strength, _missed_days(strength_date, today, skipped))


def skip_allowed(existing: Collection[date], day: date) -> bool:
    """At most MAX_SKIPS_PER_WINDOW skip days in any SKIP_WINDOW_DAYS consecutive days, `day` included."""
    for offset in range(SKIP_WINDOW_DAYS):
        start = day - timedelta(days=offset)
        end = start + timedelta(days=SKIP_WINDOW_DAYS)
        if sum(1 for d in existing if start <= d < end and d != day) + 1 > MAX_SKIPS_PER_WINDOW:
            return False
    return True


# ---- read model -------------------------------------------------------------------------------


@dataclass(frozen=True)
class StreakView:
    streak: str
    current: int  # 0 when broken
    longest: int
    last_active: date | None
    status: StreakStatus
    strength: float  # habit strength 0..1, decayed up to today
    skipped_today: bool


def view_of(streak: str, progress: StreakProgress, today: date, skipped: Collection[date]) -> StreakView:
    status = status_on(progress.last_active, today, skipped)
    return StreakView(
        streak=streak, current=progress.current if status != "broken" else 0, longest=progress.longest,
        last_active=progress.last_active, status=status,
        strength=strength_on(progress.strength, progress.strength_date, today, skipped),
        skipped_today=today in skipped,
    )


def _progress(state: StreakState) -> StreakProgress:
    return StreakProgress(current=state.current, longest=state.longest, last_active=state.last_active,
                          strength=state.strength, strength_date=state.strength_date)


async def streaks_for(session: AsyncSession, user: User, today: date) -> list[StreakView]:
    """Every known streak of one person (zeros for those never started), in one lean query (/today asks it for
    every message); pending ORM changes of the session are flushed first, as its own query would."""
    rows = await _STREAKS_OF_ONE_LEAN.rows(await session_connection(session), {"user_id": user.id, "today": today})
    return _views([user.id], {user.id: today}, [(row, row.today, row.days, row.skipped_today) for row in rows])[user.id]


def _streaks_statement(one: bool = False, *, columns: bool = False) -> Any:
    """The state rows joined to (user_id, today) pairs, bound as two arrays, with the skip days each row still
    needs gathered into an array. `one`: for one person, the pair as two scalar parameters (a prepared statement
    over bound arrays is planned anew on every run, see `brain.store.base.constant`). `columns`: the state's
    columns instead of the mapped row (for a lean statement), with the skips as `days` and `skipped_today`."""
    pairs: Any
    if one:
        pairs = select(bindparam("user_id", type_=UUID(as_uuid=True)).label("user_id"),
                       bindparam("today", type_=Date()).label("today")).subquery("today_of")
    else:
        pairs = func.unnest(
            bindparam("ids", type_=ARRAY(UUID(as_uuid=True))), bindparam("todays", type_=ARRAY(Date())),
        ).table_valued(column("user_id", UUID(as_uuid=True)), column("today", Date())).render_derived(
            name="today_of")
    # Skips matter from the earlier of the last active day and the strength date up to today.
    since = func.coalesce(func.least(StreakState.last_active, StreakState.strength_date), pairs.c.today)
    skips = (
        select(func.array_agg(StreakSkip.day))
        .where(StreakSkip.user_id == StreakState.user_id, StreakSkip.streak == StreakState.streak,
               StreakSkip.day > since, StreakSkip.day <= pairs.c.today)
        .scalar_subquery()
    )
    today_skipped = (
        select(func.count())
        .where(StreakSkip.user_id == StreakState.user_id, StreakSkip.streak == StreakState.streak,
               StreakSkip.day == pairs.c.today)
        .scalar_subquery()
    )
    state: Any = (*StreakState.__table__.columns,) if columns else (StreakState,)
    return (
        select(*state, pairs.c.today, skips.label("days"), today_skipped.label("skipped_today"))
        .join(pairs, and_(StreakState.user_id == pairs.c.user_id, StreakState.streak.in_(STREAKS)))
    )


# Built once (/today, summaries and streak goals read it); the people and their days are bound.
_STREAKS_OF = _streaks_statement()
_STREAKS_OF_ONE = _streaks_statement(one=True, columns=True)
_STREAKS_OF_ONE_LEAN = Lean(_STREAKS_OF_ONE)


async def streaks_for_users(
    session: AsyncSession, users: Sequence[User], today_by_user: Mapping[uuid.UUID, date]
) -> dict[uuid.UUID, list[StreakView]]:
    """Streaks of many people, each against their own local today, in one query: the state rows joined
    to (user_id, today) pairs, with the skip days each row still needs gathered into an array."""
    if not users:
        return {}
    ids = [u.id for u in users]
    rows = (await session.execute(_STREAKS_OF, {"ids": ids, "todays": [today_by_user[i] for i in ids]})).all()
    return _views(ids, today_by_user, rows)


def _views(ids: Sequence[uuid.UUID], today_by_user: Mapping[uuid.UUID, date], rows: Sequence[Any]
           ) -> dict[uuid.UUID, list[StreakView]]:
    found: dict[tuple[uuid.UUID, str], tuple[StreakProgress, set[date]]] = {}
    for state, today, days, skipped_today in rows:
        skipped = set(days or ())
        if skipped_today:
            skipped.add(today)
        found[(state.user_id, state.streak)] = (_progress(state), skipped)
    result: dict[uuid.UUID, list[StreakView]] = {}
    for user_id in ids:
        today = today_by_user[user_id]
        views = []
        for streak in STREAKS:
            progress, skipped = found.get((user_id, streak), (NO_PROGRESS, set()))
            views.append(view_of(streak, progress, today, skipped))
        result[user_id] = views
    return result


# ---- writes -----------------------------------------------------------------------------------


async def _skips(uow: UnitOfWork, user_id: uuid.UUID, streak: str, after: date, until: date, *,
                 chosen_only: bool = False) -> set[date]:
    """Skip days in (after, until]; `chosen_only`: without the days of a vacation."""
    stmt = select(StreakSkip.day).where(StreakSkip.user_id == user_id, StreakSkip.streak == streak,
                                        StreakSkip.day > after, StreakSkip.day <= until)
    if chosen_only:
        stmt = stmt.where(StreakSkip.vacation.is_(False))
    return set((await uow.session.scalars(stmt)).all())


# Built once (it runs for every qualifying event): the person's zone and the streak's last counted day.
_COUNTED_UP_TO = Lean(  # run lean (`Lean`): every event that feeds a streak asks it
    select(User.timezone, StreakState.last_active)
    .select_from(User)
    .outerjoin(StreakState, and_(StreakState.user_id == User.id,
                                 StreakState.streak == bindparam("streak", type_=String())))
    .where(User.id == bindparam("person", type_=UUID(as_uuid=True)))
)


def _lock_state_statement() -> Any:
    """The state row under a row lock, created with zeros if missing (while the person exists), in one
    statement; its values come back. So concurrent events and skips of one streak apply one after the other."""
    person = bindparam("person", type_=UUID(as_uuid=True))
    fresh = select(person, bindparam("p_streak", type_=String()), literal(0), literal(0), literal(0.0),
                   bindparam("now", type_=DateTime(timezone=True))).where(exists().where(User.id == person))
    add = insert(StreakState).from_select(
        ["user_id", "streak", "current", "longest", "strength", "updated_at"], fresh)
    # The no-op update locks an existing row as FOR UPDATE would, and makes RETURNING report it.
    return (add.on_conflict_do_update(index_elements=["user_id", "streak"], set_={"streak": add.excluded.streak})
            .returning(StreakState.current, StreakState.longest, StreakState.last_active, StreakState.strength,
                       StreakState.strength_date))


_LOCK_STATE = _lock_state_statement()
# A skip day that gets done after all is given back (it no longer counts toward the limit), in the same statement.
_GIVE_BACK_SKIP = (
    delete(StreakSkip)
    .where(StreakSkip.user_id == bindparam("person", type_=UUID(as_uuid=True)),
           StreakSkip.streak == bindparam("p_streak", type_=String()),
           StreakSkip.day == bindparam("p_last_active", type_=Date()))
    .cte("given_back")
)
# The state before the advance goes into the prev_ columns (the right-hand sides read the row as it was), so that
# taking back the new day's only activity can restore it (`take_back_activity`).
_SAVE_STATE = (
    update(StreakState)
    .add_cte(_GIVE_BACK_SKIP)
    .where(StreakState.user_id == bindparam("person", type_=UUID(as_uuid=True)),
           StreakState.streak == bindparam("p_streak", type_=String()))
    .values(current=bindparam("p_current"), longest=bindparam("p_longest"),
            last_active=bindparam("p_last_active", type_=Date()),
            last_active_zone=bindparam("p_zone", type_=String()), strength=bindparam("p_strength"),
            strength_date=bindparam("p_strength_date", type_=Date()),
            prev_current=StreakState.current, prev_longest=StreakState.longest,
            prev_last_active=StreakState.last_active, prev_strength=StreakState.strength,
            prev_strength_date=StreakState.strength_date,
            updated_at=bindparam("now", type_=DateTime(timezone=True)))
)


async def _locked_progress(uow: UnitOfWork, user_id: uuid.UUID, streak: str) -> StreakProgress | None:
    """The streak's state under a row lock (`_LOCK_STATE`), created with zeros if missing; None when there is no
    such person."""
    row = (await (await uow.session.connection()).execute(
        _LOCK_STATE, {"person": user_id, "p_streak": streak, "now": uow.now})).first()
    if row is None:
        return None
    return StreakProgress(current=row.current, longest=row.longest, last_active=row.last_active,
                          strength=row.strength, strength_date=row.strength_date)


async def zone_to_count(connection: AsyncConnection, user_id: uuid.UUID, streak: str, at: datetime) -> str | None:
    """The person's time zone when `record_activity` for instant `at` would advance the streak; None when it
    already counts that local day (or the person is gone). A read without a lock, which is enough: a streak's last
    counted day only moves forward, so once it has reached `at`'s day it stays there. Spares the locked
    transaction for all but the first qualifying event of a day."""
    row = await _COUNTED_UP_TO.first(connection, {"person": user_id, "streak": streak})
    if row is None:
        return None
    zone, last_active = row
    if last_active is not None and at.astimezone(ZoneInfo(zone)).date() <= last_active:
        return None
    return str(zone)


async def record_activity(uow: UnitOfWork, user: User, streak: str, at: datetime) -> StreakProgress:
    """Counts a qualifying event at instant `at` for the person's local day of that instant."""
    progress = await record_activity_in(uow, user.id, user.timezone, streak, at)
    return progress if progress is not None else NO_PROGRESS


async def record_activity_in(uow: UnitOfWork, user_id: uuid.UUID, timezone: str, streak: str,
                             at: datetime) -> StreakProgress | None:
    """`record_activity` for a person known by id and time zone; None when there is no such person. Core on the
    session's connection: two statements (three after a gap with skip days), none of the ORM's bookkeeping."""
    day = at.astimezone(ZoneInfo(timezone)).date()
    progress = await _locked_progress(uow, user_id, streak)
    if progress is None:
        return None
    if progress.last_active is not None and day <= progress.last_active:
        return progress
    since = min(d for d in (progress.last_active, progress.strength_date, day) if d is not None)
    skipped = await _skips(uow, user_id, streak, since, day) if since < day - timedelta(days=1) else set()
    after = advance(progress, day, skipped)
    await (await uow.session.connection()).execute(_SAVE_STATE, {
        "person": user_id, "p_streak": streak, "p_current": after.current, "p_longest": after.longest,
        "p_last_active": after.last_active, "p_zone": timezone, "p_strength": after.strength,
        "p_strength_date": after.strength_date, "now": uow.now,
    })
    return after


async def take_back_activity(uow: UnitOfWork, event: DomainEvent) -> bool:
    """Applies an event that takes a qualifying one back (`TAKE_BACKS`): when the original counted the streak's
    last active day and nothing else still counts that day, the streak returns to its state before that day. An
    earlier day stays as it was lived (as with skip days, history is not rewritten), and so does a day whose earlier
    state is not known. True when the state changed."""
    streak = streak_taken_back(event)
    originals = TAKE_BACKS.get(type(event.payload), ())
    if streak is None or not originals:
        return False
    user_id = event.meta.user_id
    row = (await uow.session.execute(
        select(StreakState, User.timezone).join(User, User.id == StreakState.user_id)
        .where(StreakState.user_id == user_id, StreakState.streak == streak).with_for_update(of=StreakState)
    )).first()
    if row is None:
        return False
    state, zone = row
    if state.last_active is None or state.prev_current is None:
        return False
    original_at = await uow.session.scalar(
        select(EventRecord.occurred_at)
        .where(EventRecord.user_id == user_id, EventRecord.type.in_(originals),
               EventRecord.record_id == event.meta.record_id, EventRecord.occurred_at <= event.meta.timestamp)
        .order_by(EventRecord.occurred_at.desc(), EventRecord.seq.desc()).limit(1))
    if original_at is None:
        return False  # older than the event store keeps
    # The day in the zone it was counted in: after a /tz change the same instant may fall on another day.
    tz = ZoneInfo(state.last_active_zone or zone)
    day = original_at.astimezone(tz).date()
    if day != state.last_active:
        return False
    if await uow.session.scalar(_still_counts(streak, user_id, day, tz)):
        return False
    state.current, state.longest = state.prev_current, state.prev_longest or 0
    state.last_active, state.strength = state.prev_last_active, state.prev_strength or 0.0
    # The zone of the day restored is not kept; only the next advance, which sets it, makes a take-back possible.
    state.strength_date, state.last_active_zone = state.prev_strength_date, None
    state.prev_current = state.prev_longest = state.prev_strength = None
    state.prev_last_active = state.prev_strength_date = None
    state.updated_at = uow.now
    return True


def _still_counts(streak: str, user_id: uuid.UUID, day: date, tz: ZoneInfo) -> Any:
    """Whether a qualifying event of the streak on the local `day` has not been taken back (a take-back after it,
    of the same record)."""
    start = datetime(day.year, day.month, day.day, tzinfo=tz)
    end = datetime.combine(day + timedelta(days=1), datetime.min.time(), tzinfo=tz)
    kinds = COUNTED_BY[streak]
    takers = [payload.event_type() for payload, of in TAKE_BACKS.items() if set(of) & set(kinds)]
    original, taker = EventRecord.__table__.alias("original"), EventRecord.__table__.alias("taker")
    taken = exists().where(taker.c.user_id == original.c.user_id, taker.c.type.in_(takers),
                           taker.c.record_id == original.c.record_id, taker.c.seq > original.c.seq)
    counts = (select(original.c.seq)
              .where(original.c.user_id == user_id, original.c.type.in_(kinds),
                     original.c.occurred_at >= start, original.c.occurred_at < end, ~taken))
    if streak == "water":
        counts = counts.where(original.c.payload["drink_type"].astext == "water")
    return select(exists(counts))


async def skip_day(uow: UnitOfWork, user: User, actor: ActorT, streak: str, day: date) -> None:
    """Marks `day` as a skip (freeze) day of one streak: it neither grows nor breaks the streak and
    leaves habit strength where it is. Emits StreakDaySkipped."""
    if streak not in STREAKS:
        raise DomainError(tr("Unknown streak: {name}. Known: {choices}.", name=streak[:32],
                             choices=", ".join(STREAKS)), code="bad_enum")
    today = local_date(user, uow.now)
    if not today - timedelta(days=MAX_SKIP_DAYS_BACK) <= day <= today + timedelta(days=MAX_SKIP_DAYS_AHEAD):
        raise DomainError(tr("A skip day must be within {days} days of today.", days=MAX_SKIP_DAYS_BACK),
                          code="out_of_range")
    state = await _locked_progress(uow, user.id, streak)
    assert state is not None  # the person is here
    label = streak_label(streak)
    if state.last_active is not None and day == state.last_active:
        raise DomainError(tr("Your {streak} streak already counts {date}; there is nothing to skip.",
                             streak=label, date=day), code="already_active")
    if state.last_active is not None and day < state.last_active:
        raise DomainError(tr("Your {streak} streak has moved on since {date}; skipping it now would change "
                             "nothing.", streak=label, date=day), code="too_late")
    window = timedelta(days=SKIP_WINDOW_DAYS - 1)
    existing = await _skips(uow, user.id, streak, day - window - timedelta(days=1), day + window)
    if day in existing:
        raise DomainError(tr("{date} is already a skip day for your {streak} streak.", date=day, streak=label),
                          code="already_skipped")
    # Vacation days are not chosen one by one: they do not use up the skip days.
    chosen = await _skips(uow, user.id, streak, day - window - timedelta(days=1), day + window, chosen_only=True)
    if not skip_allowed(chosen, day):
        raise DomainError(tr("At most {max} skip days per streak in any {days} days, so {date} cannot be "
                             "skipped.", max=MAX_SKIPS_PER_WINDOW, days=SKIP_WINDOW_DAYS, date=day),
                          code="skip_limit")
    uow.session.add(StreakSkip(user_id=user.id, streak=streak, day=day))
    uow.emit(StreakDaySkipped(streak=streak, date=day), user_id=user.id, record_id=f"{streak}:{day.isoformat()}",
             actor=actor)
