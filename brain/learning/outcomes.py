"""What the person's answers to nudges say about them, as facts: "ignores the water reminder before 10:00" (most of
those sent earlier went unanswered or were dismissed), "acts on the evening reflection on weekdays" (most sent on
weekdays were acted on). Pure findings over the answers of the last four weeks, judged by the facts' lifecycle like
every other finding; `answers_of` reads them."""

from __future__ import annotations

import uuid
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, time, timedelta
from zoneinfo import ZoneInfo

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from brain.feedback.models import NudgeOutcome
from brain.i18n import tr
from brain.memory.facts import Finding

WINDOW = timedelta(days=28)
MIN_ANSWERS = 4
IGNORED_SHARE = 0.7
ACTED_SHARE = 0.6
# "Before 10:00" names a morning; a later cut-off would be most of the day.
LATEST_CUTOFF = 14


@dataclass(frozen=True)
class Answer:
    """How the person answered one nudge they saw: acted on it, or not (dismissed it or let it expire)."""

    rule: str
    acted: bool
    local_hour: int
    weekday: int  # Monday 0 .. Sunday 6, in the person's zone


def answer_findings(answers: Sequence[Answer], labels: Mapping[str, str]) -> list[Finding]:
    """Findings per rule: an hour before which its nudges are mostly left unanswered, and whether they are acted on
    on weekdays or at weekends. `labels`: each rule's name for people (an N_ msgid, English)."""
    by_rule: dict[str, list[Answer]] = defaultdict(list)
    for answer in answers:
        by_rule[answer.rule].append(answer)
    findings: list[Finding] = []
    for rule, mine in sorted(by_rule.items()):
        label = labels.get(rule, rule)
        findings.extend(_ignored_early(rule, label, mine))
        findings.extend(_acted_on_days(rule, label, mine))
    return findings


def _ignored_early(rule: str, label: str, answers: Sequence[Answer]) -> list[Finding]:
    """From its earliest hour on, the hours whose nudges were mostly not acted on: a cut-off before the first hour
    that was. Evidence against the other cut-offs whenever there are enough answers."""
    if len(answers) < MIN_ANSWERS:
        return []
    hours: dict[int, list[bool]] = defaultdict(list)
    for answer in answers:
        hours[answer.local_hour].append(answer.acted)
    cutoff: int | None = None
    for hour in sorted(hours):
        acted = hours[hour]
        if 1 - sum(acted) / len(acted) < IGNORED_SHARE:
            break
        cutoff = hour + 1
    group = f"nudge:{rule}:ignored-before"
    early = [a for a in answers if cutoff is not None and a.local_hour < cutoff]
    holds = cutoff is not None and cutoff <= LATEST_CUTOFF and len(early) >= MIN_ANSWERS \
        and any(a.local_hour >= cutoff for a in answers)
    findings = []
    for hour in range(1, LATEST_CUTOFF + 1):
        if not holds or hour != cutoff:
            support, trials = _ignored(answers, hour)
            findings.append(Finding(f"{group}:{hour}", group, "preference", "", False, support=support, trials=trials))
    if holds and cutoff is not None:
        at = time(cutoff)
        support, trials = _ignored(answers, cutoff)
        findings.append(Finding(
            f"{group}:{cutoff}", group, "preference", f"Mostly ignores the {label.lower()} before {at:%H:%M}", True,
            source="feedback", said=tr("{rule}: you usually leave it unanswered before {time}.", rule=tr(label),
                                       time=at).to_json(), support=support, trials=trials))
    return findings


def _ignored(answers: Sequence[Answer], cutoff: int) -> tuple[int, int]:
    """The evidence on "ignores it before `cutoff`" (a Finding's support and trials): each answer before then, and
    those not acted on."""
    early = [a for a in answers if a.local_hour < cutoff]
    return sum(not a.acted for a in early), len(early)


def _acted_on_days(rule: str, label: str, answers: Sequence[Answer]) -> list[Finding]:
    findings: list[Finding] = []
    for part, days, said in (("weekdays", range(5), tr("{rule}: you usually act on it on weekdays.", rule=tr(label))),
                             ("weekends", range(5, 7), tr("{rule}: you usually act on it at weekends.",
                                                          rule=tr(label)))):
        seen = [a for a in answers if a.weekday in days]
        if len(seen) < MIN_ANSWERS:
            continue
        acted = sum(a.acted for a in seen)
        share = acted / len(seen)
        key = f"nudge:{rule}:acts:{part}"
        if share >= ACTED_SHARE:
            findings.append(Finding(key, key, "preference", f"Acts on the {label.lower()} on {part}", True,
                                    source="feedback", said=said.to_json(), support=acted, trials=len(seen)))
        else:
            findings.append(Finding(key, key, "preference", "", False, support=acted, trials=len(seen)))
    return findings


async def answers_of(session: AsyncSession, user_id: uuid.UUID, zone: str, now: datetime) -> list[Answer]:
    """The person's answers to the nudges they saw in the last four weeks, one per nudge: acted if any of its outcomes
    was (a snooze then an act counts as acted), else not. Nudges they never saw (resolved or expired while waiting)
    say nothing about them."""
    rows = (await session.execute(
        select(NudgeOutcome.nudge_id, NudgeOutcome.rule, NudgeOutcome.outcome, NudgeOutcome.local_hour,
               NudgeOutcome.recorded_at)
        .where(NudgeOutcome.user_id == user_id, NudgeOutcome.recorded_at >= now - WINDOW,
               NudgeOutcome.latency_s.is_not(None), NudgeOutcome.outcome != "auto_resolved")
        .order_by(NudgeOutcome.recorded_at))).all()
    tz = ZoneInfo(zone)
    found: dict[uuid.UUID, Answer] = {}
    for nudge_id, rule, outcome, hour, at in rows:
        if outcome == "snoozed" and nudge_id not in found:
            continue  # the answer is what came after the snooze
        acted = outcome == "acted" or (nudge_id in found and found[nudge_id].acted)
        first = found.get(nudge_id)
        found[nudge_id] = Answer(rule, acted, first.local_hour if first else int(hour),
                                 (first.weekday if first else at.astimezone(tz).weekday()))
    return list(found.values())
