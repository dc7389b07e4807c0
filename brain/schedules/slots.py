"""When a scheduled push is due, as pure functions of (schedule, zone, last decided slot, now): no database and
no clock, so DST weeks, downtime and quiet hours are tested by passing instants.

A slot is one occurrence of a local time of day in the person's zone. Its key is the local date and the
configured time ("2026-11-30T08:00"): the outbox's (person, kind, slot) key, so a slot goes out at most once
however often it is planned. A local time that does not exist that day (the spring-forward gap) happens at
the instant after the gap; one that exists twice (fall back) happens at its first instant only.

`plan` decides one run: of the slots since the last decided one, the latest that is due and inside the grace
window is sent (late if the scheduler was down); older ones are dropped, never sent as a burst. A slot inside
quiet hours waits for their end if that is within the grace window, otherwise it is dropped; while the
person has paused, a due slot is dropped."""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import UTC, date, datetime, time, timedelta
from typing import Literal
from zoneinfo import ZoneInfo

from brain.pulse.activity import in_quiet_hours, quiet_hours_end
from brain.schedules.weekdays import EVERY_DAY, runs_on

# However long the scheduler was away, slots further back than this are not looked at one by one.
MAX_CATCH_UP = timedelta(days=8)
MissReason = Literal["late", "coalesced", "quiet", "paused"]


@dataclass(frozen=True)
class LocalSchedule:
    at: time
    weekdays: int = EVERY_DAY  # bit 0 Monday .. bit 6 Sunday


@dataclass(frozen=True)
class Slot:
    key: str  # local date and configured time, e.g. "2026-11-30T08:00"
    local: datetime  # the instant in the person's zone
    at: datetime  # the same instant in UTC
    due: datetime  # UTC; `at`, or the end of quiet hours when the slot falls inside them


@dataclass(frozen=True)
class Missed:
    slot: Slot
    reason: MissReason


@dataclass(frozen=True)
class SlotPlan:
    send: Slot | None
    missed: tuple[Missed, ...]
    decided_until: datetime  # every slot at or before this instant is sent or dropped
    next_due: datetime  # when to plan this schedule again


def slot_key(day: date, at: time) -> str:
    return f"{day.isoformat()}T{at.hour:02d}:{at.minute:02d}"


def slot_on(schedule: LocalSchedule, day: date, zone: ZoneInfo) -> Slot:
    # fold=0: an ambiguous wall time is its first instant; a missing one is read with the offset before the gap,
    # which lands after the gap (02:30 on a spring-forward night in Berlin is 03:30 CEST).
    at = datetime.combine(day, schedule.at, tzinfo=zone).astimezone(UTC)
    return Slot(key=slot_key(day, schedule.at), local=at.astimezone(zone), at=at, due=at)


def occurrences(schedule: LocalSchedule, zone: ZoneInfo, after: datetime, until: datetime) -> list[Slot]:
    """Slots with after < at <= until, oldest first."""
    if not schedule.weekdays & EVERY_DAY or until <= after:
        return []
    found: list[Slot] = []
    # A day's slot can lie outside its own local date's bounds only by the DST shift, so a day of margin suffices.
    day = after.astimezone(zone).date() - timedelta(days=1)
    last = until.astimezone(zone).date() + timedelta(days=1)
    while day <= last:
        if runs_on(schedule.weekdays, day.weekday()):
            slot = slot_on(schedule, day, zone)
            if after < slot.at <= until:
                found.append(slot)
        day += timedelta(days=1)
    return found


def next_occurrence(schedule: LocalSchedule, zone: ZoneInfo, after: datetime) -> Slot | None:
    """The first slot strictly after `after`; None for a schedule without days."""
    if not schedule.weekdays & EVERY_DAY:
        return None
    day = after.astimezone(zone).date() - timedelta(days=1)
    for _ in range(10):
        if runs_on(schedule.weekdays, day.weekday()):
            slot = slot_on(schedule, day, zone)
            if slot.at > after:
                return slot
        day += timedelta(days=1)
    return None


def with_quiet_hours(slot: Slot, quiet: tuple[time, time] | None, grace: timedelta) -> Slot | None:
    """The slot with its due instant moved to the end of quiet hours, or None when that is beyond the grace."""
    if quiet is None or not in_quiet_hours(slot.local.time(), *quiet):
        return slot
    end = quiet_hours_end(slot.local, *quiet).astimezone(UTC)
    if end - slot.at > grace:
        return None
    return replace(slot, due=end)


def wait_for_quiet(decided: SlotPlan, slot: Slot, quiet_at: datetime, wait: timedelta) -> SlotPlan:
    """The plan with `slot` not sent yet: everything before it stays decided, and the schedule is looked at again
    when the person will have been quiet long enough (`quiet_at`), or `wait` after the slot was due, whichever
    comes first (then it goes, conversation or not)."""
    return replace(decided, send=None, decided_until=slot.at - timedelta(microseconds=1),
                   next_due=min(quiet_at, slot.due + wait))


def plan(
    schedule: LocalSchedule,
    zone: ZoneInfo,
    *,
    since: datetime,
    now: datetime,
    grace: timedelta,
    quiet: tuple[time, time] | None = None,
    paused: bool = False,
) -> SlotPlan:
    """One run of the scheduler for one schedule: `since` is the last decided instant (nothing at or before it
    is looked at again). See the module docstring for the decisions."""
    decided = since
    missed: list[Missed] = []
    sendable: list[Slot] = []
    waiting: Slot | None = None
    for raw in occurrences(schedule, zone, max(since, now - MAX_CATCH_UP), now):
        slot = with_quiet_hours(raw, quiet, grace)
        if slot is None:
            missed.append(Missed(raw, "quiet"))
        elif slot.due > now:
            waiting = slot  # inside quiet hours, due at their end; later slots wait behind it
            break
        elif now - slot.due > grace:
            missed.append(Missed(slot, "late"))
        else:
            sendable.append(slot)
        decided = raw.at
    send: Slot | None = None
    if sendable:
        *older, latest = sendable
        missed.extend(Missed(s, "coalesced") for s in older)
        if paused:
            missed.append(Missed(latest, "paused"))
        else:
            send = latest
    if waiting is not None:
        next_due = waiting.due
    else:
        following = next_occurrence(schedule, zone, max(now, decided))
        next_due = following.at if following is not None else now + MAX_CATCH_UP
    return SlotPlan(send=send, missed=tuple(missed), decided_until=decided, next_due=next_due)
