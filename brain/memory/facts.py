"""Semantic facts ("usually drinks coffee on Mondays"): three rule-based extractors over the event stream
(weekday pattern, time-of-day window, frequency) count the observations that support a pattern and those that bear
on it. A fact's confidence is the lower bound of the supporting share (Wilson score, one-sided 95 %), so a week of
daily evidence is enough while a pattern seen half the time never is. A verdict without counts (another rate found)
moves it a step (-0.15); -0.05 per week after 30 days unconfirmed; deleted below 0.1. Facts at 0.5 or more go into
the context document. The nightly job (brain.learning.nightly) runs `extract_facts`.
"""

from __future__ import annotations

import math
import uuid
from collections import Counter, defaultdict
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from brain.events.catalog import (
    DomainEvent,
    DrinkEntryDeleted,
    DrinkEntryUndone,
    DrinkLogged,
    MealDeleted,
    MealFromPhotoLogged,
    MealLogged,
    PlaceVisitDeleted,
    PlaceVisited,
    TaskCompleted,
    TaskUncompleted,
)
from brain.events.store import QUERY_MAX, query_events
from brain.memory.models import MemoryFact
from brain.memory.settings import MemorySettings
from brain.people.models import User
from brain.store.unit_of_work import Transactions

WINDOW_DAYS = 28
WEEKDAY_NAMES = ("Mondays", "Tuesdays", "Wednesdays", "Thursdays", "Fridays", "Saturdays", "Sundays")
# Local hours [start, end) of the parts of a day; night wraps around midnight.
DAY_PARTS = (("morning", 5, 12), ("afternoon", 12, 17), ("evening", 17, 22), ("night", 22, 5))
# What the person did, and what takes one of those back (deleted, undone, reopened): a drink logged by mistake
# and deleted is no habit.
REVERSALS = (DrinkEntryDeleted, DrinkEntryUndone, MealDeleted, TaskUncompleted, PlaceVisitDeleted)
ACTIVITIES = (DrinkLogged, MealLogged, MealFromPhotoLogged, TaskCompleted, PlaceVisited)
EVENT_TYPES = [cls.event_type() for cls in (*ACTIVITIES, *REVERSALS)]
MAX_PAGES = 10


# Fewer observations than the days of a week say little about a habit, however they fall.
MIN_OBSERVATIONS = 7


# --- confidence lifecycle (pure) ---------------------------------------------------------------------------------

def evidence_confidence(support: int, trials: int, settings: MemorySettings = MemorySettings()) -> float:
    """The Wilson score lower bound of the share `support / trials`: how often the pattern holds at least, with the
    certainty `settings.fact_evidence_z` stands for. Few observations give a low bound whatever their share."""
    if trials <= 0:
        return 0.0
    z = settings.fact_evidence_z
    share = support / trials
    spread = z * math.sqrt(share * (1 - share) / trials + z * z / (4 * trials * trials))
    return max((share + z * z / (2 * trials) - spread) / (1 + z * z / trials), 0.0)


def fade_total(last_confirmed: datetime, at: datetime, settings: MemorySettings = MemorySettings()) -> float:
    """Fade accumulated by `at`: 0.05 for every full week beyond the 30 days of grace after the last confirmation."""
    overdue = at - last_confirmed - timedelta(days=settings.fact_grace_days)
    if overdue <= timedelta(0):
        return 0.0
    return settings.fact_weekly_fade * (overdue // timedelta(days=7))


def faded(confidence: float, last_confirmed: datetime, checked_at: datetime | None, now: datetime,
          settings: MemorySettings = MemorySettings()) -> float:
    """Confidence after the fade between the last check and now (exact however often the job runs)."""
    already = fade_total(last_confirmed, checked_at, settings) if checked_at is not None else 0.0
    return confidence - (fade_total(last_confirmed, now, settings) - already)


def confirmed(confidence: float, settings: MemorySettings = MemorySettings()) -> float:
    return min(confidence + settings.fact_confirm_step, 1.0)


def contradicted(confidence: float, settings: MemorySettings = MemorySettings()) -> float:
    return confidence - settings.fact_contradict_step


def is_forgotten(confidence: float, settings: MemorySettings = MemorySettings()) -> bool:
    return confidence < settings.fact_delete_below - 1e-9


# --- extractors (pure) -------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Activity:
    """One thing the person did, at local time: `key` groups the same activity, `label` says it in English."""

    key: str
    label: str
    at: datetime


@dataclass(frozen=True)
class Finding:
    """`holds` True: evidence for the fact `key`; False: evidence against it (`group`: the facts of which a person
    has one, like the rates of one activity).
    `said`: the fact as the person reads it (a Text as JSON), when the extractor has one. `support` of `trials`:
    the observations (days, weeks, occurrences, answers) that bear on the fact `key` and those that agree with it;
    no trials is a bare verdict."""

    key: str
    group: str
    kind: str
    statement: str
    holds: bool
    source: str = "rules"
    said: dict[str, Any] | None = None
    support: int = 0
    trials: int = 0


def activity_of(event: DomainEvent, zone: ZoneInfo) -> Activity | None:
    p = event.payload
    at = event.meta.timestamp.astimezone(zone)
    if isinstance(p, DrinkLogged):
        return Activity(f"drink:{p.drink_type}", f"drinks {p.drink_type}", at)
    if isinstance(p, MealLogged | MealFromPhotoLogged):
        return Activity(f"meal:{p.meal_type}", f"eats {p.meal_type}", at)
    if isinstance(p, TaskCompleted):
        return Activity("task", "completes tasks", at)
    if isinstance(p, PlaceVisited):
        return Activity(f"place:{p.place_id}", f"visits {p.name}", at)
    return None


# Which record an event is about, as (kind, the payload's id field): what the person did, and what takes it back.
_RECORDS: dict[type, tuple[str, str]] = {
    DrinkLogged: ("drink", "entry_id"), MealLogged: ("meal", "meal_id"), MealFromPhotoLogged: ("meal", "meal_id"),
    TaskCompleted: ("task", "task_id"), PlaceVisited: ("visit", "visit_id"),
}
_TAKEN_BACK: dict[type, tuple[str, str]] = {
    DrinkEntryDeleted: ("drink", "entry_id"), DrinkEntryUndone: ("drink", "entry_id"), MealDeleted: ("meal", "meal_id"),
    TaskUncompleted: ("task", "task_id"), PlaceVisitDeleted: ("visit", "visit_id"),
}


def _record_of(event: DomainEvent, table: dict[type, tuple[str, str]]) -> tuple[str, uuid.UUID] | None:
    spec = table.get(type(event.payload))
    return None if spec is None else (spec[0], getattr(event.payload, spec[1]))


def standing_activities(events: Iterable[DomainEvent], zone: ZoneInfo) -> list[Activity]:
    """The activities of these events that still stand: a deleted or undone drink, meal or visit counts for
    nothing, and a task reopened takes back its latest completion before the reopening (a task completed again
    later counts again)."""
    given = list(events)
    standing: dict[tuple[str, uuid.UUID], list[int]] = defaultdict(list)
    kept: set[int] = set()
    for index in sorted(range(len(given)), key=lambda i: given[i].meta.timestamp):
        event = given[index]
        taken_back = _record_of(event, _TAKEN_BACK)
        if taken_back is not None:
            done = standing.get(taken_back)
            if done:
                kept.discard(done.pop())
            continue
        kept.add(index)
        record = _record_of(event, _RECORDS)
        if record is not None:
            standing[record].append(index)
    # In the order given (the store's: newest first), so a label comes from the newest occurrence.
    return [a for a in (activity_of(given[i], zone) for i in sorted(kept)) if a is not None]


def weekday_findings(activities: Sequence[Activity], weeks: int = WINDOW_DAYS // 7) -> list[Finding]:
    """"Usually <does> on Mondays": the weekday had the activity in at least 3 of the last 4 weeks (each week one
    observation). A near-daily habit is no weekday pattern (the frequency fact covers it). Once the activity is seen
    on a weekday in at most one week while it still happens, an earlier weekday fact is contradicted."""
    findings: list[Finding] = []
    for key, acts in _by_key(activities).items():
        weeks_on: dict[int, set[tuple[int, int]]] = defaultdict(set)
        for a in acts:
            weeks_on[a.at.weekday()].add(a.at.isocalendar()[:2])
        strong = [d for d in range(7) if len(weeks_on[d]) >= math.ceil(weeks * 0.75)]
        group = f"weekday:{key}"
        if len(strong) >= 5:
            continue
        label = acts[0].label
        for day in range(7):
            fact_key = f"{group}:{day}"
            statement = f"Usually {label} on {WEEKDAY_NAMES[day]}"
            seen = min(len(weeks_on[day]), weeks)
            if day in strong:
                findings.append(Finding(fact_key, group, "pattern", statement, True, support=seen, trials=weeks))
            elif len(weeks_on[day]) <= 1 and len({a.at.date() for a in acts}) >= 3:
                findings.append(Finding(fact_key, group, "pattern", statement, False, support=seen, trials=weeks))
    return findings


def _day_part(hour: int) -> str:
    for name, start, end in DAY_PARTS:
        if (start <= hour < end) if start < end else (hour >= start or hour < end):
            return name
    return "night"


def window_findings(activities: Sequence[Activity], minimum: int = MIN_OBSERVATIONS) -> list[Finding]:
    """"Mostly <does> in the morning": at least 70 % of at least 7 occurrences (each one observation) fall in one
    part of the day; a part holding less is evidence against an earlier fact about it."""
    findings: list[Finding] = []
    for key, acts in _by_key(activities).items():
        if len(acts) < minimum:
            continue
        parts = Counter(_day_part(a.at.hour) for a in acts)
        group = f"window:{key}"
        for name, _, _ in DAY_PARTS:
            share = parts[name] / len(acts)
            statement = f"Mostly {acts[0].label} in the {name}"
            findings.append(Finding(f"{group}:{name}", group, "preference", statement, share >= 0.7,
                                    support=parts[name], trials=len(acts)))
    return findings


def frequency_findings(activities: Sequence[Activity], today: date, days: int = WINDOW_DAYS,
                       min_days: int = MIN_OBSERVATIONS) -> list[Finding]:
    """"<Does> about 3 times a day" (or a week) once the activity was seen on at least 7 days before today (today is
    not over). The rate is counted from the first day it was seen in the window; each day (for a weekly rate each
    week) since then is one observation, which supports the rate if it had that many. A different rate later
    contradicts the old one (each rate is its own fact in the same group)."""
    findings: list[Finding] = []
    for key, acts in _by_key(activities).items():
        counts = Counter(a.at.date() for a in acts if a.at.date() < today)
        if len(counts) < min_days:
            continue
        span = min((today - min(counts)).days, days)
        total = sum(n for day, n in counts.items() if (today - day).days <= span)
        per_day = total / span
        if per_day >= 1:
            rate, unit = round(per_day), "day"
            support = sum(1 for back in range(1, span + 1) if counts[today - timedelta(days=back)] == rate)
            trials = span
        else:
            rate, unit = max(round(per_day * 7), 1), "week"
            trials = span // 7
            weekly = Counter(((today - day).days - 1) // 7 for day in counts.elements()
                             if (today - day).days <= trials * 7)
            support = sum(1 for week in range(trials) if weekly[week] == rate)
        group = f"frequency:{key}"
        label = acts[0].label
        often = {1: "once", 2: "twice"}.get(rate, f"{rate} times")
        statement = f"{label[0].upper()}{label[1:]} about {often} a {unit}"
        findings.append(Finding(f"{group}:{rate}/{unit}", group, "pattern", statement, True, support=support,
                                trials=trials))
    return findings


def _by_key(activities: Iterable[Activity]) -> dict[str, list[Activity]]:
    grouped: dict[str, list[Activity]] = defaultdict(list)
    for a in activities:
        grouped[a.key].append(a)
    return grouped


def findings_of(activities: Sequence[Activity], today: date) -> list[Finding]:
    return [*weekday_findings(activities), *window_findings(activities), *frequency_findings(activities, today)]


# --- the job ------------------------------------------------------------------------------------------------------

@dataclass
class FactReport:
    created: list[str] = field(default_factory=list)
    confirmed: list[str] = field(default_factory=list)
    contradicted: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)


def _week_start(now: datetime) -> datetime:
    day = now - timedelta(days=now.weekday())
    return day.replace(hour=0, minute=0, second=0, microsecond=0)


async def _recent_events(session: AsyncSession, user_id: uuid.UUID, since: datetime,
                         until: datetime) -> list[DomainEvent]:
    events: list[DomainEvent] = []
    for _ in range(MAX_PAGES):
        page = await query_events(session, user_id, types=EVENT_TYPES, since=since, until=until, limit=QUERY_MAX)
        events.extend(page)
        if len(page) < QUERY_MAX:
            break
        until = page[-1].meta.timestamp  # newest first: continue below the oldest seen
    return events


async def extract_facts(transactions: Transactions, user_id: uuid.UUID,
                        settings: MemorySettings = MemorySettings(), *, extra: Sequence[Finding] = (),
                        forgotten: Collection[str] = ()) -> FactReport:
    """Runs the three extractors over the last 28 days and applies the lifecycle to this person's facts.
    A finding with counts sets its fact's confidence to what the evidence shows (a fact too weak to keep is not
    created); a bare verdict moves it a step. Confirmations and contradictions count at most once per calendar
    week, fading is exact at any cadence. `extra`: findings of other extractors (how the person answers nudges),
    judged alike; `forgotten`: keys the person deleted, which are not learned again."""
    report = FactReport()
    async with transactions.begin() as uow:
        session, now = uow.session, uow.now
        user = await session.get(User, user_id)
        if user is None:
            return report
        zone = ZoneInfo(user.timezone)
        events = await _recent_events(session, user_id, now - timedelta(days=WINDOW_DAYS), now)
        activities = standing_activities(events, zone)
        findings = [f for f in (*findings_of(activities, now.astimezone(zone).date()), *extra)
                    if f.key not in forgotten]
        facts = {f.key: f for f in (await session.scalars(
            select(MemoryFact).where(MemoryFact.user_id == user_id).with_for_update())).all()}
        new_week = _week_start(now)
        holding = {f.key for f in findings if f.holds}
        against = {f.key: f for f in findings if not f.holds}
        # A person has one rate per activity: a new rate holding disproves the old one.
        rates_holding = {f.group: f.key for f in findings if f.holds and f.group.startswith("frequency:")}

        for known in facts.values():
            known.confidence = faded(known.confidence, known.last_confirmed, known.checked_at, now, settings)
        for finding in findings:
            if not finding.holds:
                continue
            shown = evidence_confidence(finding.support, finding.trials, settings) if finding.trials else None
            existing = facts.get(finding.key)
            if existing is None:
                if shown is not None and is_forgotten(shown, settings):
                    continue  # too little evidence for a fact yet
                fact = MemoryFact(id=uuid.uuid4(), user_id=user_id, kind=finding.kind, key=finding.key,
                                  statement=finding.statement,
                                  confidence=settings.fact_initial if shown is None else shown, confirmations=0,
                                  contradictions=0, last_confirmed=now, created_at=now, source=finding.source,
                                  checked_at=now, said=finding.said)
                session.add(fact)
                facts[finding.key] = fact
                report.created.append(finding.key)
                continue
            first_this_week = existing.checked_at is None or existing.checked_at < new_week
            if shown is not None:
                existing.confidence = shown
                existing.last_confirmed = now
            if first_this_week:
                if shown is None:
                    existing.confidence = confirmed(existing.confidence, settings)
                existing.confirmations += 1
                existing.last_confirmed = now
                report.confirmed.append(existing.key)
            existing.statement = finding.statement
            existing.said = finding.said if finding.said is not None else existing.said
        for fact in list(facts.values()):
            if fact.key in holding or fact.key in report.created:
                continue
            # Evidence against it: a counter-finding, or another rate of the same activity.
            group = fact.key.rsplit(":", 1)[0]
            counter = against.get(fact.key)
            disproved = counter is not None or rates_holding.get(group, fact.key) != fact.key
            if disproved and (fact.checked_at is None or fact.checked_at < new_week):
                fact.confidence = contradicted(fact.confidence, settings)
                fact.contradictions += 1
                report.contradicted.append(fact.key)
            if counter is not None and counter.trials:
                # Counts against it lower it as far as they show, at once.
                fact.confidence = min(fact.confidence,
                                      evidence_confidence(counter.support, counter.trials, settings))
        for fact in facts.values():
            fact.checked_at = now
            if is_forgotten(fact.confidence, settings):
                report.deleted.append(fact.key)
                await session.delete(fact)
    return report


async def extract_facts_for_everyone(transactions: Transactions,
                                     settings: MemorySettings = MemorySettings()) -> dict[uuid.UUID, FactReport]:
    async with transactions.read() as session:
        users = list((await session.scalars(select(User.id))).all())
    return {user_id: await extract_facts(transactions, user_id, settings) for user_id in users}


async def facts_for_context(session: AsyncSession, user_id: uuid.UUID,
                            settings: MemorySettings = MemorySettings()) -> list[str]:
    """Statements confident enough (>= 0.5) for the context document, most confident first."""
    rows = await session.scalars(
        select(MemoryFact.statement)
        .where(MemoryFact.user_id == user_id, MemoryFact.confidence >= settings.fact_context_min - 1e-9)
        .order_by(MemoryFact.confidence.desc(), MemoryFact.key))
    return list(rows.all())
