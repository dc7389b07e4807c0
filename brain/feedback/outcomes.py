"""Recording what happened to each nudge, and the action rate per rule and per (rule, local hour) that
the learning step reads: one grouped query over the last 14 days for any number of people."""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from sqlalchemy import and_, func, select
from sqlalchemy.ext.asyncio import AsyncSession

from brain.events.catalog import ActorT, NudgeOutcomeRecorded
from brain.feedback.models import NudgeOutcome
from brain.store.unit_of_work import UnitOfWork

if TYPE_CHECKING:
    from brain.pulse.models import Nudge

STATS_WINDOW = timedelta(days=14)


async def record_outcome(uow: UnitOfWork, nudge: Nudge, outcome: str, actor: ActorT, *,
                         latency_s: int | None) -> NudgeOutcome:
    row = NudgeOutcome(user_id=nudge.user_id, nudge_id=nudge.id, rule=nudge.rule, outcome=outcome,
                       latency_s=latency_s, local_hour=nudge.local_hour, recorded_at=uow.now)
    uow.session.add(row)
    uow.emit(
        NudgeOutcomeRecorded(nudge_id=nudge.id, rule=nudge.rule, outcome=outcome, latency_s=latency_s or 0,
                             local_hour=nudge.local_hour),
        user_id=nudge.user_id, record_id=nudge.id, actor=actor,
    )
    return row


@dataclass(frozen=True)
class HourStats:
    nudges: int = 0  # nudges the person saw (sent), counted once each
    acted: int = 0
    dismissed: int = 0

    @property
    def dismissal_share(self) -> float:
        return self.dismissed / self.nudges if self.nudges else 0.0


@dataclass(frozen=True)
class RuleStats:
    rule: str
    nudges: int = 0
    acted: int = 0
    dismissed: int = 0
    by_hour: Mapping[int, HourStats] = field(default_factory=dict)

    @property
    def action_rate(self) -> float | None:
        return self.acted / self.nudges if self.nudges else None


async def outcome_stats(session: AsyncSession, user_ids: Sequence[uuid.UUID], now: datetime,
                        window: timedelta = STATS_WINDOW) -> dict[uuid.UUID, dict[str, RuleStats]]:
    """Per person and rule over `window`. A nudge counts once however many outcomes it had (a snooze and
    then an act); one it never reached the person with (resolved or expired while waiting) is left out."""
    if not user_ids:
        return {}
    seen = and_(NudgeOutcome.latency_s.is_not(None), NudgeOutcome.outcome != "auto_resolved")
    rows = (await session.execute(
        select(
            NudgeOutcome.user_id, NudgeOutcome.rule, NudgeOutcome.local_hour,
            func.count(NudgeOutcome.nudge_id.distinct()).filter(seen),
            func.count(NudgeOutcome.nudge_id.distinct()).filter(NudgeOutcome.outcome == "acted"),
            func.count(NudgeOutcome.nudge_id.distinct()).filter(NudgeOutcome.outcome == "dismissed"),
        )
        .where(NudgeOutcome.user_id.in_(user_ids), NudgeOutcome.recorded_at >= now - window)
        .group_by(NudgeOutcome.user_id, NudgeOutcome.rule, NudgeOutcome.local_hour)
    )).all()
    hours: dict[tuple[uuid.UUID, str], dict[int, HourStats]] = {}
    for user_id, rule, hour, nudges, acted, dismissed in rows:
        hours.setdefault((user_id, rule), {})[int(hour)] = HourStats(int(nudges), int(acted), int(dismissed))
    stats: dict[uuid.UUID, dict[str, RuleStats]] = {}
    for (user_id, rule), by_hour in hours.items():
        stats.setdefault(user_id, {})[rule] = RuleStats(
            rule=rule, nudges=sum(h.nudges for h in by_hour.values()), acted=sum(h.acted for h in by_hour.values()),
            dismissed=sum(h.dismissed for h in by_hour.values()), by_hour=by_hour,
        )
    return stats
