"""The scheduled morning summary and evening reflection: what they say (pure functions over the day snapshot,
goals, streaks at risk and the strongest correlation) and reading that data for many people at once, as the
scheduler sends them in batches. Snapshots and streaks take a fixed number of statements for any number of
people; goals and correlations are read only for those who have any (correlations need 14 days of history)."""

from __future__ import annotations

import logging
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta, tzinfo
from typing import TYPE_CHECKING, Any
from zoneinfo import ZoneInfo

from sqlalchemy import exists, func, literal, select
from sqlalchemy.dialects.postgresql import ARRAY, UUID
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.sql import column

from brain.context import GOAL_PERIODS
from brain.events.store import EventRecord
from brain.goals.models import Goal
from brain.goals.service import GoalProgress, goals_progress
from brain.i18n import Renderer, Text, moment, ntr, tr
from brain.people.local_time import local_date
from brain.people.models import User
from brain.projections.day_snapshot import DaySnapshot, day_snapshots
from brain.projections.streaks import StreakView, streak_label, streaks_for_users
from brain.schedules.message import PushButton, PushMessage

if TYPE_CHECKING:
    from brain.projections.correlations import Correlation

log = logging.getLogger(__name__)

SHOW_TODAY = PushButton(tr("Show today"), "command", {"text": "/today"})
# Starts (or continues) the person's evening routine; handled by the ritual commands.
EVENING_ROUTINE = PushButton(tr("Evening routine"), "ritual", {"op": "template", "template": "evening"})
MAX_GOALS_SHOWN = 5
MAX_FACTS_SHOWN = 2
VACATION_AHEAD = timedelta(days=7)
CORRELATION_MIN_DAYS = 14


@dataclass(frozen=True)
class MorningData:
    snapshot: DaySnapshot
    goals: Sequence[GoalProgress] = ()
    streaks: Sequence[StreakView] = ()
    correlation: Correlation | None = None
    facts: Sequence[Text | str] = ()  # what the brain learned that matters today ("On Mondays you usually ...")
    # A vacation running or ahead (within VACATION_AHEAD): its first and last local day.
    vacation: tuple[date, date] | None = None


# ---- what they say (pure) -------------------------------------------------------------------------------
def day_lines(s: DaySnapshot, tz: tzinfo | None) -> list[Text]:
    """The day at a glance: tasks due and overdue, appointments, the next one (its time in `tz`), the water
    goal. Said by the scheduled morning summary and by the pulse's morning nudge alike."""
    lines: list[Text] = []
    if s.tasks_due_today:
        lines.append(tr("Due today: {titles}", titles=", ".join(t.title for t in s.tasks_due_today)))
    if s.tasks_overdue:
        lines.append(ntr("{count} overdue task", "{count} overdue tasks", s.tasks_overdue))
    if s.tasks_open:  # as /today counts them: open tasks with a date or without one
        lines.append(ntr("{count} open task in all", "{count} open tasks in all", s.tasks_open))
    if s.events_today:
        lines.append(ntr("{count} appointment today", "{count} appointments today", s.events_today))
    if s.next_event is not None:
        zone = tz or UTC
        first_day = s.next_event.start.astimezone(zone).date()
        if s.next_event.is_all_day:
            lines.append(tr("Next: {title} (all day)", title=s.next_event.title) if first_day <= s.day
                         else tr("Next: {title}, {date} (all day)", title=s.next_event.title, date=first_day))
        elif first_day == s.day:
            lines.append(tr("Next: {title} at {time}", title=s.next_event.title,
                            time=s.next_event.start.astimezone(zone).time()))
        else:  # not today: its day too ("Next: Dentist, tomorrow at 10:00 AM")
            lines.append(tr("Next: {title}, {when}", title=s.next_event.title,
                            when=moment(s.next_event.start, s.day, zone)))
    lines.append(tr("Water goal: {goal} ml", goal=s.water_goal_ml))
    return lines


def day_opening(s: DaySnapshot) -> Text:
    if s.tasks_due_today or s.tasks_overdue or s.events_today:
        return tr("Here is your day.")
    if s.tasks_open:  # nothing due, but open tasks without a date (or later): not "no tasks"
        return tr("Nothing due and no appointments today.")
    return tr("No tasks or appointments today: a free day.")


def morning_summary(data: MorningData, render: Renderer) -> PushMessage:
    s = data.snapshot
    if data.vacation is not None and data.vacation[0] <= s.day:
        # On vacation: only that, and when it ends.
        return PushMessage(lines=[tr("Good morning!"), tr("You're on vacation until {date}: no reminders, and your "
                                                          "streaks and goals are kept. /resume ends it early.",
                                                          date=data.vacation[1])],
                           buttons=[[SHOW_TODAY]])
    lines: list[Text] = [tr("Good morning!"), day_opening(s), *day_lines(s, render.tz)]
    if data.vacation is not None:
        lines.append(tr("Your vacation: {first} to {last}. No reminders then, and your streaks and goals are kept.",
                        first=data.vacation[0], last=data.vacation[1]))
    text = [render(line) for line in lines]
    goals = [g for g in data.goals if g.status == "active"][:MAX_GOALS_SHOWN]
    if goals:
        text.append(render(tr("Your goals:")))
        text.extend(f"• {render(goal_line(g))}" for g in goals)
    at_risk = [v for v in data.streaks if v.status == "at_risk" and not v.skipped_today and v.current > 0]
    if at_risk:
        streaks = " · ".join(render(ntr("{name} {count} day", "{name} {count} days", v.current,
                                        name=streak_label(v.streak))) for v in at_risk)
        text.append(render(tr("Keep your streaks today: {streaks}", streaks=streaks)))
    if data.correlation is not None:
        text.append(render(tr("What I noticed: {sentence}", sentence=data.correlation.sentence)))
    text.extend(render(fact) for fact in data.facts)
    return PushMessage(lines=text, buttons=[[SHOW_TODAY]])


def goal_line(g: GoalProgress) -> Text:
    period = tr(GOAL_PERIODS.get(g.period, g.period))
    if g.comparison == "<=":
        text = tr("{title}: {value}, at most {target} {period}", title=g.title, value=g.value, target=g.target,
                  period=period)
    else:
        text = tr("{title}: {value} of {target} {period}", title=g.title, value=g.value, target=g.target,
                  period=period)
    return text


def evening_reflection(snapshot: DaySnapshot) -> PushMessage:
    lines: list[Text | str] = [tr("How was your day?"), tr("What went well today?")]
    if snapshot.tasks_done_today:
        lines.append(ntr("{count} task done", "{count} tasks done", snapshot.tasks_done_today))
    lines.append(tr("Water: {ml} of {goal} ml", ml=snapshot.water_ml, goal=snapshot.water_goal_ml))
    if snapshot.meals:
        lines.append(ntr("{count} meal logged", "{count} meals logged", snapshot.meals))
    return PushMessage(lines=lines, buttons=[[EVENING_ROUTINE, SHOW_TODAY]])


# ---- reading the data for many people -------------------------------------------------------------------
async def morning_data(session: AsyncSession, users: Sequence[User], now: datetime) -> dict[uuid.UUID, MorningData]:
    if not users:
        return {}
    snapshots = await day_snapshots(session, users, now)
    today = {u.id: local_date(u, now) for u in users}
    streaks = await streaks_for_users(session, users, today)
    goals = await _goals(session, users, now)
    found = await _top_correlations(session, users, now)
    facts = await _facts_for_today(session, users, today)
    vacations = await _vacations(session, users, now)
    return {
        u.id: MorningData(snapshot=snapshots[u.id], goals=goals.get(u.id, ()), streaks=streaks.get(u.id, ()),
                          correlation=found.get(u.id), facts=facts.get(u.id, ()), vacation=vacations.get(u.id))
        for u in users
    }


async def _vacations(session: AsyncSession, users: Sequence[User], now: datetime) -> dict[uuid.UUID, tuple[date, date]]:
    """Each person's vacation that runs or starts within a week: its first and last local day."""
    from brain.pulse.activity import pulse_states, vacation_of

    states = await pulse_states(session, [u.id for u in users])
    found: dict[uuid.UUID, tuple[date, date]] = {}
    for user in users:
        span = vacation_of(states.get(user.id), now)
        if span is not None and span[0] - now <= VACATION_AHEAD:
            zone = ZoneInfo(user.timezone)
            found[user.id] = (span[0].astimezone(zone).date(),
                              (span[1] - timedelta(microseconds=1)).astimezone(zone).date())
    return found


async def _facts_for_today(session: AsyncSession, users: Sequence[User],
                           today: dict[uuid.UUID, date]) -> dict[uuid.UUID, list[Text | str]]:
    """Each person's confident facts that matter today (a habit of this weekday, how they answer nudges), most
    confident first, in one query for the batch."""
    from brain.learning.wording import fact_text, relevant_today
    from brain.memory.models import MemoryFact
    from brain.memory.settings import MemorySettings

    rows = (await session.execute(
        select(MemoryFact.user_id, MemoryFact.key, MemoryFact.statement, MemoryFact.said)
        .where(MemoryFact.user_id.in_([u.id for u in users]),
               MemoryFact.confidence >= MemorySettings().fact_context_min - 1e-9)
        .order_by(MemoryFact.user_id, MemoryFact.confidence.desc(), MemoryFact.key))).all()
    found: dict[uuid.UUID, list[Text | str]] = {}
    for user_id, key, statement, said in rows:
        mine = found.setdefault(user_id, [])
        if len(mine) < MAX_FACTS_SHOWN and relevant_today(key, today[user_id]):
            mine.append(fact_text(key, statement, said))
    return found


async def evening_data(session: AsyncSession, users: Sequence[User], now: datetime) -> dict[uuid.UUID, DaySnapshot]:
    return await day_snapshots(session, users, now) if users else {}


async def _goals(session: AsyncSession, users: Sequence[User], now: datetime) -> dict[uuid.UUID, list[GoalProgress]]:
    with_goals = set((await session.scalars(
        select(Goal.user_id).where(Goal.user_id.in_([u.id for u in users]), Goal.status == "active").distinct()
    )).all())
    result: dict[uuid.UUID, list[GoalProgress]] = {}
    for user in users:
        if user.id in with_goals:
            result[user.id] = await goals_progress(session, user, now)
    return result


async def _top_correlations(session: AsyncSession, users: Sequence[User], now: datetime) -> dict[uuid.UUID, Any]:
    """The strongest correlation of each person who has logged for at least two weeks."""
    from brain.projections.correlations import correlations

    ids = func.unnest(literal([u.id for u in users], ARRAY(UUID(as_uuid=True)))).table_valued(
        column("user_id", UUID(as_uuid=True))).render_derived(name="person")
    cutoff = now - timedelta(days=CORRELATION_MIN_DAYS)
    # One index probe per person: an event older than the cutoff means enough history to look.
    seasoned = set((await session.scalars(
        select(ids.c.user_id).where(exists().where(EventRecord.user_id == ids.c.user_id,
                                                   EventRecord.occurred_at < cutoff))
    )).all())
    result: dict[uuid.UUID, Any] = {}
    for user in users:
        if user.id not in seasoned:
            continue
        try:
            found = await correlations(session, user, local_date(user, now))
        except Exception:
            log.exception("correlations failed for %s", user.id)
            continue
        if found:
            result[user.id] = found[0]
    return result
