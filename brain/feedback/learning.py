"""What the outcomes teach, applied by the rule engine per person and rule: mostly dismissed at an hour
-> move the rule 60 minutes later (at most +180, never into quiet hours); a very low action rate over two
weeks -> back off to every 2nd (then 4th) slot. Decisions are pure; each applied one is a RuleAdapted
event and a `rule_adaptations` row that can be undone (RuleAdaptationUndone)."""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, time, timedelta

from sqlalchemy import or_, select
from sqlalchemy.ext.asyncio import AsyncSession

from brain.errors import DomainError
from brain.events.actor import system
from brain.events.catalog import ActorT, RuleAdaptationUndone, RuleAdapted
from brain.feedback.models import BACKED_OFF, MOVED_LATER, RuleAdaptation
from brain.feedback.outcomes import RuleStats
from brain.i18n import tr
from brain.pulse.activity import in_quiet_hours
from brain.store.unit_of_work import UnitOfWork

MIN_DISMISSALS = 3
DISMISSAL_SHARE = 0.6
MOVE_STEP_MINUTES = 60
MAX_OFFSET_MINUTES = 180
MIN_NUDGES_FOR_BACKOFF = 6
LOW_ACTION_RATE = 0.15
BACKOFF_STEP = 2
MAX_BACKOFF = 4
# A changed (or undone) rule is judged again only on outcomes of its new behaviour, so no second change
# follows from the same two weeks of data, and an undo is not immediately overridden.
COOLDOWN = timedelta(days=14)


@dataclass(frozen=True)
class Tuning:
    """How a rule runs for one person: its times shifted by `offset_minutes`, and only every
    `backoff_factor`-th slot sent."""

    offset_minutes: int = 0
    backoff_factor: int = 1

    def as_dict(self) -> dict[str, float | int | str | None]:
        return {"offset_minutes": self.offset_minutes, "backoff_factor": self.backoff_factor}


@dataclass(frozen=True)
class RuleSchedule:
    """The local times a time-triggered rule fires at. For an interval rule, `times` holds the window
    start and `window_end` its end: a later start shifts the grid, the end stays."""

    times: tuple[time, ...]
    window_end: time | None = None


@dataclass(frozen=True)
class AdaptationDecision:
    rule: str
    change: str
    before: Tuning
    after: Tuning
    local_hour: int | None = None

    @property
    def row_values(self) -> Tuning:
        """What the adaptation row stores: its own step (offsets add up, factors multiply)."""
        if self.change == MOVED_LATER:
            return Tuning(offset_minutes=self.after.offset_minutes - self.before.offset_minutes)
        return Tuning(backoff_factor=self.after.backoff_factor // max(1, self.before.backoff_factor))


def shifted(at: time, minutes: int) -> time | None:
    """`at` plus `minutes` on the same day, or None when that passes midnight."""
    total = at.hour * 60 + at.minute + minutes
    return time(total // 60, total % 60) if 0 <= total < 24 * 60 else None


def send_hours(schedule: RuleSchedule, tuning: Tuning) -> frozenset[int]:
    """The local hours in which the rule currently sends."""
    starts = [s for s in (shifted(t, tuning.offset_minutes) for t in schedule.times) if s is not None]
    if schedule.window_end is None:
        return frozenset(s.hour for s in starts)
    return frozenset(h for s in starts for h in range(s.hour, schedule.window_end.hour + 1))


def fits(schedule: RuleSchedule, offset_minutes: int, quiet: tuple[time, time]) -> bool:
    """Every shifted time stays on its day, out of quiet hours, and (interval rules) inside the window."""
    for base in schedule.times:
        moved = shifted(base, offset_minutes)
        if moved is None or in_quiet_hours(moved, *quiet):
            return False
        if schedule.window_end is not None and moved > schedule.window_end:
            return False
    return True


def decide_adaptations(
    stats: Mapping[str, RuleStats],
    schedules: Mapping[str, RuleSchedule],
    tunings: Mapping[str, Tuning],
    last_change: Mapping[str, datetime],
    quiet: tuple[time, time],
    now: datetime,
) -> list[AdaptationDecision]:
    """At most one new adaptation per rule; moving later (gentler) is preferred to backing off."""
    decisions: list[AdaptationDecision] = []
    for rule, schedule in schedules.items():
        rule_stats = stats.get(rule)
        changed = last_change.get(rule)
        if rule_stats is None or (changed is not None and now - changed < COOLDOWN):
            continue
        current = tunings.get(rule, Tuning())
        hours = send_hours(schedule, current)
        disliked = sorted(
            h for h, s in rule_stats.by_hour.items()
            if h in hours and s.dismissed >= MIN_DISMISSALS and s.dismissal_share >= DISMISSAL_SHARE
        )
        offset = min(MAX_OFFSET_MINUTES, current.offset_minutes + MOVE_STEP_MINUTES)
        if disliked and offset > current.offset_minutes and fits(schedule, offset, quiet):
            decisions.append(AdaptationDecision(rule, MOVED_LATER, current,
                                                Tuning(offset, current.backoff_factor), disliked[0]))
            continue
        rate = rule_stats.action_rate
        if (rule_stats.nudges >= MIN_NUDGES_FOR_BACKOFF and rate is not None and rate < LOW_ACTION_RATE
                and current.backoff_factor < MAX_BACKOFF):
            factor = min(MAX_BACKOFF, current.backoff_factor * BACKOFF_STEP)
            decisions.append(AdaptationDecision(rule, BACKED_OFF, current,
                                                Tuning(current.offset_minutes, factor)))
    return decisions


def combine(rows: Sequence[RuleAdaptation]) -> Tuning:
    """The effect of a rule's active adaptations together."""
    offset, factor = 0, 1
    for row in rows:
        if row.active:
            offset += row.offset_minutes
            factor *= max(1, row.backoff_factor)
    return Tuning(min(MAX_OFFSET_MINUTES, offset), min(MAX_BACKOFF, factor))


# ---- persistence --------------------------------------------------------------------------------------
@dataclass(frozen=True)
class AdaptationState:
    """One person's adaptations as the engine needs them."""

    tunings: Mapping[str, Tuning]
    last_change: Mapping[str, datetime]


async def adaptation_states(session: AsyncSession, user_ids: Sequence[uuid.UUID],
                            now: datetime) -> dict[uuid.UUID, AdaptationState]:
    """Active adaptations and recent changes (for the cooldown) of many people in one query."""
    if not user_ids:
        return {}
    since = now - COOLDOWN
    rows = (await session.scalars(
        select(RuleAdaptation).where(
            RuleAdaptation.user_id.in_(user_ids),
            or_(RuleAdaptation.active.is_(True), RuleAdaptation.created_at >= since,
                RuleAdaptation.undone_at >= since),
        )
    )).all()
    by_user: dict[uuid.UUID, dict[str, list[RuleAdaptation]]] = {}
    for row in rows:
        by_user.setdefault(row.user_id, {}).setdefault(row.rule, []).append(row)
    states: dict[uuid.UUID, AdaptationState] = {}
    for user_id, by_rule in by_user.items():
        states[user_id] = AdaptationState(
            tunings={rule: combine(rule_rows) for rule, rule_rows in by_rule.items()},
            last_change={rule: max(max(r.created_at, r.undone_at or r.created_at) for r in rule_rows)
                         for rule, rule_rows in by_rule.items()},
        )
    return states


async def apply_adaptation(uow: UnitOfWork, user_id: uuid.UUID, decision: AdaptationDecision) -> RuleAdaptation:
    step = decision.row_values
    row = RuleAdaptation(
        id=uuid.uuid4(), user_id=user_id, rule=decision.rule, change=decision.change,
        offset_minutes=step.offset_minutes, backoff_factor=step.backoff_factor, local_hour=decision.local_hour,
        active=True, created_at=uow.now, undone_at=None,
    )
    uow.session.add(row)
    uow.emit(
        RuleAdapted(adaptation_id=row.id, rule=decision.rule, change=decision.change,
                    before=decision.before.as_dict(), after=decision.after.as_dict()),
        user_id=user_id, record_id=row.id, actor=system("rule"),
    )
    return row


async def active_adaptations(session: AsyncSession, user_id: uuid.UUID) -> list[RuleAdaptation]:
    return list((await session.scalars(
        select(RuleAdaptation).where(RuleAdaptation.user_id == user_id, RuleAdaptation.active.is_(True))
        .order_by(RuleAdaptation.created_at)
    )).all())


async def undo_adaptation(uow: UnitOfWork, user_id: uuid.UUID, adaptation_id: uuid.UUID,
                          actor: ActorT) -> RuleAdaptation:
    """Restore the behaviour before this adaptation (the others stay)."""
    row = await uow.session.scalar(
        select(RuleAdaptation).where(RuleAdaptation.user_id == user_id, RuleAdaptation.id == adaptation_id)
        .with_for_update()
    )
    if row is None:
        raise DomainError(tr("There is no such change to undo."), code="not_found")
    if not row.active:
        raise DomainError(tr("That change was already undone."), code="already_undone")
    row.active = False
    row.undone_at = uow.now
    uow.emit(RuleAdaptationUndone(adaptation_id=row.id, rule=row.rule), user_id=user_id, record_id=row.id,
             actor=actor)
    return row
