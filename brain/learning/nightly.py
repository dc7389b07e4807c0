"""The nightly fact run (the scheduler calls it every quarter of an hour, the terminal chat's ticker every tick): for
each person in the small hours of their own night, once a local day, the rule extractors over their events and their
answers to nudges (`brain.memory.facts.extract_facts` with `outcomes.answer_findings`). A person's first run comes as
soon as they have a week of data, whatever the hour. One call stops after its time budget; the rest waits for the
next call, which is still in the night."""

from __future__ import annotations

import logging
import time as monotonic_clock
import uuid
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field
from datetime import datetime, time, timedelta
from typing import TYPE_CHECKING
from zoneinfo import ZoneInfo

from sqlalchemy import and_, exists, select
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.ext.asyncio import AsyncSession

from brain.events.store import EventRecord
from brain.learning.models import NIGHTLY, ForgottenFact, LearningRun
from brain.learning.outcomes import answer_findings, answers_of
from brain.memory.facts import FactReport, extract_facts
from brain.people.models import User

if TYPE_CHECKING:
    from brain.core import Brain

log = logging.getLogger(__name__)

NIGHT_FROM, NIGHT_UNTIL = time(3, 0), time(5, 0)
FIRST_WEEK = timedelta(days=7)
DEFAULT_BUDGET = timedelta(seconds=30)


@dataclass
class LearningReport:
    facts: dict[uuid.UUID, FactReport] = field(default_factory=dict)
    left: int = 0  # due, but the budget was spent: the next call takes them


@dataclass(frozen=True)
class _Person:
    id: uuid.UUID
    zone: str
    last_run: datetime | None


def due(person: _Person, now: datetime) -> bool:
    """Never run (and a week of data, which the query checked): now. Else in their night, once a local day."""
    if person.last_run is None:
        return True
    zone = ZoneInfo(person.zone)
    local = now.astimezone(zone)
    return NIGHT_FROM <= local.time() < NIGHT_UNTIL and person.last_run.astimezone(zone).date() < local.date()


async def learn_nightly(brain: Brain, now: datetime, *, labels: Mapping[str, str],
                        budget: timedelta = DEFAULT_BUDGET,
                        monotonic: Callable[[], float] = monotonic_clock.monotonic) -> LearningReport:
    """Runs the extractors for everyone due at `now`. `labels`: the nudge rules' names for people."""
    report = LearningReport()
    async with brain.transactions.read() as session:
        people = [p for p in await _seasoned(session, now) if due(p, now)]
    started = monotonic()
    for n, person in enumerate(people):
        if monotonic() - started > budget.total_seconds():
            report.left = len(people) - n
            log.info("nightly facts: budget spent, %d people left for the next run", report.left)
            break
        async with brain.transactions.read() as session:
            answers = await answers_of(session, person.id, person.zone, now)
            forgotten = await forgotten_keys(session, person.id, now)
        report.facts[person.id] = await extract_facts(brain.transactions, person.id,
                                                      extra=answer_findings(answers, labels), forgotten=forgotten)
        async with brain.transactions.begin() as uow:
            await mark_run(uow.session, person.id, NIGHTLY, now)
    return report


async def _seasoned(session: AsyncSession, now: datetime) -> list[_Person]:
    """Everyone with a week of data (an event older than a week), with their last nightly run."""
    run = select(LearningRun.last_run_at).where(LearningRun.user_id == User.id, LearningRun.kind == NIGHTLY) \
        .scalar_subquery()
    week_old = exists().where(and_(EventRecord.user_id == User.id, EventRecord.occurred_at < now - FIRST_WEEK))
    rows = (await session.execute(select(User.id, User.timezone, run).where(week_old))).all()
    return [_Person(user_id, zone, last) for user_id, zone, last in rows]


async def forgotten_keys(session: AsyncSession, user_id: uuid.UUID, now: datetime) -> Collection[str]:
    return set((await session.scalars(select(ForgottenFact.key).where(
        ForgottenFact.user_id == user_id, ForgottenFact.until > now))).all())


async def mark_run(session: AsyncSession, user_id: uuid.UUID, kind: str, now: datetime) -> None:
    await session.execute(insert(LearningRun).values(user_id=user_id, kind=kind, last_run_at=now)
                          .on_conflict_do_update(index_elements=["user_id", "kind"], set_={"last_run_at": now}))
