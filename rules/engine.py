"""The rule engine: turns projections into nudges. `tick(now)` finds, for every person, the time-triggered
slots (local times of their zone) that came due since the last tick, decides them over one batch of day
snapshots and streaks (a constant number of queries for any number of people), stores the nudges
(unique per person, rule and slot) and sends those that may go out now; `on_event` does the same for
event rules. Nudges leave only through the outbox.

Applied to every rule: quiet hours (dropped; the morning summary waits for their end, up to 2 h), pause,
"only if not done yet" (decided again right before sending, else auto-resolved), the idle hold (no nudge
while the person is mid-conversation), the slot key, missed slots (late within a grace window, otherwise
dropped: never a backlog), expiry, and what the feedback loop learned (later times, back-off)."""

from __future__ import annotations

import logging
import uuid
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from brain.core import Brain
from brain.events.actor import system
from brain.events.catalog import DomainEvent, decode_payload
from brain.feedback.learning import (
    AdaptationDecision,
    RuleSchedule,
    Tuning,
    adaptation_states,
    apply_adaptation,
    decide_adaptations,
    shifted,
)
from brain.feedback.models import BACKED_OFF
from brain.feedback.outcomes import outcome_stats
from brain.goals.service import GoalProgress, goals_progress
from brain.i18n import tr
from brain.people.local_time import local_date, local_now
from brain.people.models import User
from brain.projections.correlations import Correlation, correlations
from brain.projections.day_snapshot import DaySnapshot, day_snapshots
from brain.projections.streaks import StreakView, streaks_for_users
from brain.pulse.activity import in_quiet_hours, is_mid_conversation, is_paused, pulse_states, quiet_hours_end
from brain.pulse.delivery import send_notice, send_nudge
from brain.pulse.models import AUTO_RESOLVED, EXPIRED, OPEN_STATES, PENDING, Nudge, PulseState
from brain.pulse.nudges import NewNudge, NudgeDraft, content_to_json, decide_nudge, insert_nudges
from rules import DailyAt, EventTrigger, Every, Rule, RuleContext, Trigger, Weekly
from rules.evening_reflection import EVENING_REFLECTION
from rules.goal_progress import GOAL_PROGRESS
from rules.goal_reached import GOAL_REACHED
from rules.meals import MEALS
from rules.morning_summary import MORNING_SUMMARY
from rules.overdue_tasks import OVERDUE_TASKS
from rules.streak_at_risk import STREAK_AT_RISK
from rules.water import WATER
from rules.weekly_insight import WEEKLY_INSIGHT

log = logging.getLogger(__name__)

ALL_RULES: tuple[Rule, ...] = (
    WATER, STREAK_AT_RISK, MORNING_SUMMARY, EVENING_REFLECTION, OVERDUE_TASKS, MEALS, GOAL_REACHED, WEEKLY_INSIGHT,
    GOAL_PROGRESS,
)
DEFAULT_IDLE_HOLD = timedelta(minutes=5)
# However long the engine was away, slots further back than this are not even enumerated.
MAX_CATCH_UP = timedelta(days=2)
# A slot from before the person first wrote is not theirs (someone who starts at 19:45 is not asked at once whether
# they logged dinner, for the 19:00 reminder); this much earlier still counts, for a database clock a little apart
# from the scheduler's.
JOINED_TOLERANCE = timedelta(minutes=10)


# ---- slots (pure) ---------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Slot:
    """One occurrence of a rule's time trigger for one person."""

    trigger_index: int
    trigger: DailyAt | Every | Weekly
    key: str
    local: datetime  # aware, in the person's zone, after any learned offset
    index: int  # consecutive slot number, for back-off (send only every n-th)

    @property
    def at(self) -> datetime:
        return self.local.astimezone(UTC)


def _grid(every: Every) -> list[time]:
    times, minutes = [], every.start_hour * 60
    while minutes <= every.end_hour * 60:
        times.append(time(minutes // 60, minutes % 60))
        minutes += every.minutes
    return times


def slots_on(rule: Rule, day: date, zone: ZoneInfo, offset_minutes: int = 0) -> Iterator[Slot]:
    """The rule's time-triggered slots on one local day. Keys: the date for a once-a-day rule, date and
    hour for a rule with several daily times, date and grid time for an interval rule, the ISO week for a
    weekly one. Keys use the rule's own times, so a learned offset never produces a second slot."""
    daily = [t for t in rule.time_triggers if isinstance(t, DailyAt)]
    for i, trigger in enumerate(rule.triggers):
        if isinstance(trigger, DailyAt):
            n = daily.index(trigger)
            key = day.isoformat() if len(daily) == 1 else f"{day.isoformat()}T{trigger.hour:02d}"
            yield from _slot(i, trigger, key, day, trigger.at, zone, offset_minutes, day.toordinal() * len(daily) + n)
        elif isinstance(trigger, Every):
            grid = _grid(trigger)
            for k, at in enumerate(grid):
                key = f"{day.isoformat()}T{at.hour:02d}:{at.minute:02d}"
                yield from _slot(i, trigger, key, day, at, zone, offset_minutes, day.toordinal() * len(grid) + k)
        elif isinstance(trigger, Weekly) and day.weekday() == trigger.weekday:
            year, week, _ = day.isocalendar()
            yield from _slot(i, trigger, f"{year}-W{week:02d}", day, trigger.at, zone, offset_minutes,
                             day.toordinal() // 7)


def _slot(i: int, trigger: DailyAt | Every | Weekly, key: str, day: date, at: time, zone: ZoneInfo,
          offset_minutes: int, index: int) -> Iterator[Slot]:
    moved = shifted(at, offset_minutes)
    if moved is not None:
        yield Slot(i, trigger, key, datetime.combine(day, moved, tzinfo=zone), index)


def slots_between(rule: Rule, zone: ZoneInfo, since: datetime, until: datetime,
                  offset_minutes: int = 0) -> list[Slot]:
    """Slots with since < instant <= until, oldest first (DST-safe: each is a local wall time)."""
    first, last = since.astimezone(zone).date(), until.astimezone(zone).date()
    found: list[Slot] = []
    day = first
    while day <= last:
        found.extend(s for s in slots_on(rule, day, zone, offset_minutes) if since < s.at <= until)
        day += timedelta(days=1)
    return sorted(found, key=lambda s: s.at)


def schedule_of(rule: Rule) -> RuleSchedule:
    times: list[time] = []
    window_end: time | None = None
    for trigger in rule.time_triggers:
        if isinstance(trigger, Every):
            times.append(trigger.start)
            window_end = trigger.end
        else:
            times.append(trigger.at)
    return RuleSchedule(times=tuple(times), window_end=window_end)


# ---- the engine ----------------------------------------------------------------------------------------
@dataclass
class TickReport:
    at: datetime
    users: int = 0
    slots: int = 0  # time slots that came due and were decided
    created: int = 0  # nudges stored (a slot already stored before is not counted)
    sent: int = 0
    held: int = 0  # waiting until the person has been idle for a while
    dropped_quiet: int = 0
    dropped_missed: int = 0  # beyond the grace window after downtime
    before_joined: int = 0  # the slot came before the person first wrote
    skipped_paused: int = 0
    skipped_backoff: int = 0
    auto_resolved: int = 0
    expired: int = 0
    adaptations: list[AdaptationDecision] = field(default_factory=list)
    sent_to: set[uuid.UUID] = field(default_factory=set)
    notified: set[uuid.UUID] = field(default_factory=set)  # got a pulse notice (e.g. "I'll remind you less")


@dataclass(frozen=True)
class _Due:
    user: User
    rule: Rule
    slot: Slot
    due_at: datetime


@dataclass
class _Data:
    """What decisions read, loaded once per tick for everyone who needs it."""

    snapshots: dict[uuid.UUID, DaySnapshot] = field(default_factory=dict)
    streaks: dict[uuid.UUID, list[StreakView]] = field(default_factory=dict)
    correlations: dict[uuid.UUID, list[Correlation]] = field(default_factory=dict)
    told: dict[uuid.UUID, set[str]] = field(default_factory=dict)
    goals: dict[uuid.UUID, list[GoalProgress]] = field(default_factory=dict)


class RuleEngine:
    def __init__(self, brain: Brain, rules: Sequence[Rule] = ALL_RULES,
                 idle_hold: timedelta = DEFAULT_IDLE_HOLD) -> None:
        self.brain = brain
        self.rules = tuple(rules)
        self.by_name = {r.name: r for r in self.rules}
        self.idle_hold = idle_hold
        self.time_rules = tuple(r for r in self.rules if r.time_triggers)
        self.schedules = {r.name: schedule_of(r) for r in self.time_rules}
        self._last_tick: datetime | None = None
        # The last slot decided per (person, rule): ticks may come at any interval, never twice for a slot.
        self._last_slot: dict[tuple[uuid.UUID, str], datetime] = {}
        self._learned_on: dict[uuid.UUID, date] = {}

    # ---- time-triggered ------------------------------------------------------------------------------
    async def tick(self, now: datetime) -> TickReport:
        """Expire old nudges, learn (once a local day per person), decide the slots that came due since the
        last tick, store the nudges and send what may go out now."""
        report = TickReport(at=now)
        async with self.brain.transactions.read() as session:
            users = list((await session.scalars(select(User))).all())
            states = await pulse_states(session, [u.id for u in users])
        report.users = len(users)
        ids = [u.id for u in users]
        await self._expire(ids, now, report)
        tunings = await self._learn(users, states, now, report)
        due = self._due_slots(users, states, tunings, now, report)
        self._last_tick = now
        async with self.brain.transactions.read() as session:
            pending = (await session.execute(
                select(Nudge.user_id, Nudge.rule).where(Nudge.user_id.in_(ids), Nudge.status == PENDING,
                                                        Nudge.due_at <= now)
                .distinct()
            )).all() if ids else []
            pending_users = {user_id for user_id, _ in pending}
            need = {d.user.id for d in due} | pending_users
            # Goals for the rules that read them, and for their pending nudges' re-check before sending.
            want_goals = {d.user.id for d in due if d.rule.needs_goals} | {
                user_id for user_id, rule in pending if rule in self.by_name and self.by_name[rule].needs_goals}
            data = await self._load(session, [u for u in users if u.id in need], now,
                                    {d.user.id for d in due if d.rule.needs_correlations}, want_goals)
        new = [n for d in due for n in self._decide_slot(d, data, now, report)]
        if new:
            async with self.brain.transactions.begin() as uow:
                report.created += len(await insert_nudges(uow.session, new, now))
        # Everyone with a new nudge is in `need` already (their slot was due).
        await self._deliver([u for u in users if u.id in need], states, data, now, report)
        return report

    def _due_slots(self, users: Sequence[User], states: Mapping[uuid.UUID, PulseState],
                   tunings: Mapping[uuid.UUID, Mapping[str, Tuning]], now: datetime, report: TickReport) -> list[_Due]:
        due: list[_Due] = []
        for user in users:
            zone = ZoneInfo(user.timezone)
            paused = is_paused(states.get(user.id), now)
            # Only where the engine's clock agrees the person exists (a clock set back, as in a replay, ignores it).
            joined = user.created_at - JOINED_TOLERANCE if user.created_at and user.created_at <= now else None
            for rule in self.time_rules:
                tuning = tunings.get(user.id, {}).get(rule.name, Tuning())
                since = now - rule.grace
                if self._last_tick is not None and self._last_tick < since:
                    since = max(self._last_tick, now - MAX_CATCH_UP)  # to count what was missed
                last = self._last_slot.get((user.id, rule.name))
                slots = [s for s in slots_between(rule, zone, since, now, tuning.offset_minutes)
                         if last is None or s.at > last]
                if not slots:
                    continue
                self._last_slot[(user.id, rule.name)] = slots[-1].at
                in_grace = [s for s in slots if now - s.at <= rule.grace]
                # An interval rule coalesces: only its latest slot counts, never a burst of old ones.
                if any(isinstance(s.trigger, Every) for s in in_grace):
                    in_grace = in_grace[-1:]
                report.dropped_missed += len(slots) - len(in_grace)
                for slot in in_grace:
                    if joined is not None and slot.at < joined:
                        report.before_joined += 1
                    elif paused:
                        report.skipped_paused += 1
                    elif slot.index % tuning.backoff_factor:
                        report.skipped_backoff += 1
                    elif in_quiet_hours(slot.local.time(), user.quiet_start, user.quiet_end):
                        deferred = quiet_hours_end(slot.local, user.quiet_start, user.quiet_end)
                        if rule.quiet_defer is not None and deferred - slot.local <= rule.quiet_defer:
                            due.append(_Due(user, rule, slot, deferred.astimezone(UTC)))
                        else:
                            report.dropped_quiet += 1
                    else:
                        due.append(_Due(user, rule, slot, slot.at))
        return due

    def _decide_slot(self, due: _Due, data: _Data, now: datetime, report: TickReport) -> list[NewNudge]:
        report.slots += 1
        ctx = self._context(due.user, data, now, due.slot.key, due.slot.trigger)
        draft = self._run(due.rule, ctx)
        if draft is None:
            return []
        return [NewNudge(user_id=due.user.id, rule=due.rule.name, draft=draft, due_at=due.due_at,
                         local_hour=due.slot.local.hour, data={"trigger": due.slot.trigger_index})]

    async def evaluate(self, users: Sequence[User], now: datetime) -> dict[uuid.UUID, list[tuple[str, NudgeDraft]]]:
        """A dry run of a tick's decisions: every time trigger of every rule decided for each person at `now`
        as if all their slots were due, over one batch of snapshots and streaks. Nothing is stored or sent
        (for previews and the benchmark)."""
        async with self.brain.transactions.read() as session:
            data = await self._load(session, users, now, set(),
                                    {u.id for u in users} if any(r.needs_goals for r in self.time_rules) else set())
        decided: dict[uuid.UUID, list[tuple[str, NudgeDraft]]] = {}
        for user in users:
            drafts = decided.setdefault(user.id, [])
            for rule in self.time_rules:
                for trigger in rule.time_triggers:
                    draft = self._run(rule, self._context(user, data, now, "dry-run", trigger))
                    if draft is not None:
                        drafts.append((rule.name, draft))
        return decided

    # ---- event-triggered -----------------------------------------------------------------------------
    def listen(self) -> None:
        """Runs the event rules (e.g. goal reached) on each committed event of their types on the brain's bus."""
        for event_type in sorted({e for rule in self.rules for e in rule.event_types}):
            self.brain.bus.subscribe(event_type, self.on_event)

    async def on_event(self, event: DomainEvent) -> None:
        rules = [r for r in self.rules if event.type in r.event_types]
        if not rules:
            return
        now = self.brain.clock.now()
        report = TickReport(at=now)
        async with self.brain.transactions.read() as session:
            user = await session.get(User, event.meta.user_id)
            if user is None:
                return
            states = await pulse_states(session, [user.id])
            if is_paused(states.get(user.id), now):
                return
            local = local_now(user, now)
            if in_quiet_hours(local.time(), user.quiet_start, user.quiet_end):
                return  # a nudge due inside quiet hours is dropped
            data = await self._load(session, [user], now, set())
        new = []
        for rule in rules:
            trigger = next(t for t in rule.triggers if isinstance(t, EventTrigger) and event.type in t.event_types)
            ctx = self._context(user, data, now, str(event.meta.id), trigger, event.payload, event.meta.id)
            draft = self._run(rule, ctx)
            if draft is not None:
                new.append(NewNudge(
                    user_id=user.id, rule=rule.name, draft=draft, due_at=now, local_hour=local.hour,
                    data={"event": {"id": str(event.meta.id), "type": event.type,
                                    "payload": event.payload.model_dump(mode="json")}},
                ))
        if not new:
            return
        async with self.brain.transactions.begin() as uow:
            await insert_nudges(uow.session, new, now)
        await self._deliver([user], states, data, now, report)

    # ---- deciding ------------------------------------------------------------------------------------
    def _context(self, user: User, data: _Data, now: datetime, slot: str, trigger: Trigger | None,
                 event: Any = None, event_id: uuid.UUID | None = None) -> RuleContext:
        return RuleContext(
            local_now=local_now(user, now), snapshot=data.snapshots[user.id], slot=slot, trigger=trigger,
            streaks=tuple(data.streaks.get(user.id, ())), correlations=tuple(data.correlations.get(user.id, ())),
            told_insights=frozenset(data.told.get(user.id, ())), event=event, event_id=event_id,
            goals=tuple(data.goals.get(user.id, ())),
            arrived=local_now(user, user.created_at) if user.created_at is not None else None,
        )

    @staticmethod
    def _run(rule: Rule, ctx: RuleContext) -> NudgeDraft | None:
        try:
            return rule.decide(ctx)
        except Exception:
            # One broken rule must not silence the others.
            log.exception("rule %s failed on slot %s", rule.name, ctx.slot)
            return None

    async def _load(self, session: AsyncSession, users: Sequence[User], now: datetime,
                    want_correlations: set[uuid.UUID], want_goals: set[uuid.UUID] | frozenset[uuid.UUID] = frozenset(),
                    ) -> _Data:
        data = _Data()
        if not users:
            return data
        data.snapshots = await day_snapshots(session, users, now)
        data.streaks = await streaks_for_users(session, users, {u.id: local_date(u, now) for u in users})
        if want_correlations:
            told_rows = (await session.execute(
                select(Nudge.user_id, Nudge.data["insight"].astext).where(
                    Nudge.user_id.in_(want_correlations), Nudge.rule == WEEKLY_INSIGHT.name)
            )).all()
            for user_id, key in told_rows:
                if key:
                    data.told.setdefault(user_id, set()).add(key)
            for user in users:
                if user.id in want_correlations:
                    try:
                        data.correlations[user.id] = await correlations(session, user, local_date(user, now))
                    except Exception:
                        log.exception("correlations failed for %s", user.id)
        for user in users:
            if user.id in want_goals:
                data.goals[user.id] = await goals_progress(session, user, now)
        return data

    # ---- sending -------------------------------------------------------------------------------------
    async def _deliver(self, users: Sequence[User], states: Mapping[uuid.UUID, PulseState], data: _Data,
                       now: datetime, report: TickReport) -> None:
        """Send every pending nudge that is due, to people who can be reached now, highest priority first."""
        by_id = {u.id: u for u in users}
        if not by_id:
            return
        async with self.brain.transactions.read() as session:
            pending = list((await session.scalars(
                select(Nudge).where(Nudge.user_id.in_(list(by_id)), Nudge.status == PENDING, Nudge.due_at <= now,
                                    Nudge.expires_at > now)
                .order_by(Nudge.user_id, Nudge.priority.desc(), Nudge.due_at)
            )).all())
        for nudge in pending:
            user = by_id[nudge.user_id]
            state = states.get(user.id)
            if is_paused(state, now) or in_quiet_hours(local_now(user, now).time(), user.quiet_start,
                                                       user.quiet_end):
                continue  # stays pending; it expires if the pause or the night outlasts it
            if is_mid_conversation(state, now, self.idle_hold):
                report.held += 1
                continue
            rule = self.by_name.get(nudge.rule)
            content = nudge.content
            if rule is not None and rule.recheck and nudge.user_id in data.snapshots:
                trigger_index = int(nudge.data.get("trigger", 0))
                trigger = rule.triggers[trigger_index] if trigger_index < len(rule.triggers) else None
                draft = self._run(rule, self._context(user, data, now, nudge.slot, trigger, *self._event_of(nudge)))
                content = content_to_json(draft) if draft is not None else {}
            await self._send_or_resolve(nudge.id, user, content, now, report)

    @staticmethod
    def _event_of(nudge: Nudge) -> tuple[Any, uuid.UUID | None]:
        stored = nudge.data.get("event")
        if not stored:
            return None, None
        return decode_payload(stored["type"], stored["payload"]), uuid.UUID(stored["id"])

    async def _send_or_resolve(self, nudge_id: uuid.UUID, user: User, content: dict[str, Any], now: datetime,
                               report: TickReport) -> None:
        async with self.brain.transactions.begin() as uow:
            nudge = await uow.session.scalar(
                select(Nudge).where(Nudge.user_id == user.id, Nudge.id == nudge_id)
                .with_for_update(skip_locked=True)
            )
            if nudge is None or nudge.status != PENDING:
                return  # another process got there first
            if not content:
                # Done already (the goal reached, the meal logged): nothing to remind of.
                await decide_nudge(uow, nudge, AUTO_RESOLVED, system("rule"))
                report.auto_resolved += 1
                return
            await send_nudge(uow, nudge, user, content)
        report.sent += 1
        report.sent_to.add(user.id)

    async def _expire(self, user_ids: Sequence[uuid.UUID], now: datetime, report: TickReport) -> None:
        if not user_ids:
            return
        async with self.brain.transactions.begin() as uow:
            stale = (await uow.session.scalars(
                select(Nudge).where(Nudge.user_id.in_(user_ids), Nudge.status.in_(OPEN_STATES),
                                    Nudge.expires_at <= now)
                .with_for_update(skip_locked=True)
            )).all()
            for nudge in stale:
                await decide_nudge(uow, nudge, EXPIRED, system("rule"))
        report.expired += len(stale)

    # ---- learning ------------------------------------------------------------------------------------
    async def _learn(self, users: Sequence[User], states: Mapping[uuid.UUID, PulseState], now: datetime,
                     report: TickReport) -> dict[uuid.UUID, dict[str, Tuning]]:
        """Once per person and local day: apply what the outcomes teach; returns everyone's tunings."""
        ids = [u.id for u in users]
        async with self.brain.transactions.read() as session:
            adapted = await adaptation_states(session, ids, now)
            learners = [u for u in users if self._learned_on.get(u.id) != local_date(u, now)]
            stats = await outcome_stats(session, [u.id for u in learners], now)
        tunings = {uid: dict(state.tunings) for uid, state in adapted.items()}
        for user in learners:
            self._learned_on[user.id] = local_date(user, now)
            if user.id not in stats:
                continue
            state = adapted.get(user.id)
            decisions = decide_adaptations(
                stats[user.id], self.schedules, state.tunings if state else {}, state.last_change if state else {},
                (user.quiet_start, user.quiet_end), now,
            )
            if not decisions:
                continue
            async with self.brain.transactions.begin() as uow:
                for decision in decisions:
                    row = await apply_adaptation(uow, user.id, decision)
                    if decision.change == BACKED_OFF:
                        await send_notice(uow, user, tr("I'll remind you less about {rule}. Say /pulse to get it back.",
                                                        rule=tr(self.by_name[decision.rule].label)),
                                          slot=f"backoff:{row.id}")
                        report.notified.add(user.id)
            for decision in decisions:
                tunings.setdefault(user.id, {})[decision.rule] = decision.after
            report.adaptations.extend(decisions)
        return tunings
