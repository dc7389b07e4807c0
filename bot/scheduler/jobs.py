"""What the scheduler runs. `ScheduledJobs` holds one method per job over the brain of this process; APScheduler
stores only a reference to a module-level function (`bot.scheduler.jobs:pushes`), which calls the method of the
instance installed by `install` (the job store is shared by processes and pickles jobs, so a job carries no
objects). Every job is safe to run twice or late: what it does is decided from the database and the clock."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import partial
from typing import Any

from apscheduler.triggers.base import BaseTrigger
from apscheduler.triggers.cron import CronTrigger
from apscheduler.triggers.interval import IntervalTrigger

from bot.commands.missions import deliver_run
from bot.commands.proposals import expire_with_keyboards
from bot.settings import Settings
from brain.companion.llm import LLM
from brain.companion.missions import run_due_missions
from brain.core import Brain
from brain.goals.rollover import close_periods
from brain.reminders.sending import ReminderReport, send_due_reminders
from brain.schedules.models import EVENING_REFLECTION, MORNING_SUMMARY
from brain.schedules.pushes import PushReport, send_due_pushes
from rules import Rule
from rules.engine import ALL_RULES, RuleEngine

log = logging.getLogger(__name__)

Deliver = Callable[[], Awaitable[Any]]
# The pulse rules whose pushes the scheduler sends itself (at the person's own time, through `pushes`); the
# rule engine's tick leaves them out so nobody gets them twice.
SENT_BY_SCHEDULER = frozenset({MORNING_SUMMARY, EVENING_REFLECTION})
# The rules the pulse's ticks run (and /pulse lists).
PULSE_RULES: tuple[Rule, ...] = tuple(rule for rule in ALL_RULES if rule.name not in SENT_BY_SCHEDULER)
UPKEEP_EVERY = timedelta(minutes=10)


class ScheduledJobs:
    def __init__(self, brain: Brain, settings: Settings, *, llm: LLM | None = None,
                 deliver: Deliver | None = None) -> None:
        self.brain = brain
        self.settings = settings
        # The mission runner needs a model client: the one given, else the companion's.
        self.llm = llm if llm is not None or brain.companion is None else brain.companion.llm
        self.deliver = deliver
        self.grace = timedelta(minutes=settings.scheduler_grace_minutes)
        self.rituals = brain.rituals
        self.rituals.timeout = timedelta(minutes=settings.ritual_timeout_minutes)
        self.engine = RuleEngine(brain, PULSE_RULES, idle_hold=timedelta(minutes=settings.idle_hold_minutes))
        self._upkeep_at: datetime | None = None

    @property
    def has_missions(self) -> bool:
        return self.llm is not None

    async def pushes(self) -> PushReport:
        now = self.brain.clock.now()
        # Giving new people their daily pushes and replanning moved ones scans everyone: every few minutes only.
        upkeep = self._upkeep_at is None or not timedelta(0) <= now - self._upkeep_at < UPKEEP_EVERY
        lookback = UPKEEP_EVERY + timedelta(minutes=1)
        report = await send_due_pushes(self.brain, now, grace=self.grace, upkeep=upkeep, lookback=lookback,
                                       idle_hold=timedelta(minutes=self.settings.idle_hold_minutes))
        if upkeep:
            self._upkeep_at = now
        if report.sent:
            log.info("scheduled pushes: %d sent, %d already sent, missed %s", report.sent, report.already_sent,
                     dict(report.missed))
            await self._deliver_now()
        return report

    async def reminders(self) -> ReminderReport:
        """The reminders people asked for that are due now."""
        report = await send_due_reminders(self.brain, self.brain.clock.now())
        if report.sent:
            log.info("reminders: %d sent, %d held %s", report.sent, sum(report.held.values()), dict(report.held))
            await self._deliver_now()
        return report

    async def calendar_series(self) -> None:
        """Keeps every repeating appointment's occurrences a year ahead."""
        from brain.modules.calendar.series import EXTEND_BATCH, extend_series

        while True:
            async with self.brain.transactions.begin() as uow:
                extended = await extend_series(uow, uow.now)
            if extended < EXTEND_BATCH:
                return

    async def learning(self) -> None:
        """The nightly facts of everyone in their night (and of whoever just completed a first week of data)."""
        from brain.learning.nightly import learn_nightly
        from rules.engine import ALL_RULES

        report = await learn_nightly(self.brain, self.brain.clock.now(), labels={r.name: r.label for r in ALL_RULES})
        if report.facts:
            log.info("nightly facts: %d people, %d left for the next run", len(report.facts), report.left)

    async def model_facts(self) -> None:
        """With a model server: the facts the fast model proposes from each person's week, once a week."""
        if self.llm is None:
            return
        from brain.learning.model_facts import propose_facts

        written = await propose_facts(self.brain, self.llm, self.brain.clock.now())
        if written:
            log.info("weekly model facts: %d people, %d facts", len(written), sum(written.values()))

    async def pulse_tick(self) -> None:
        report = await self.engine.tick(self.brain.clock.now())
        if report.sent_to or report.notified:
            await self._deliver_now()

    async def _deliver_now(self) -> None:
        """What a job just put in the outbox goes out now, not at the next delivery round."""
        try:
            await self.outbox_retry()
        except Exception:
            log.exception("delivering the outbox failed; the next round retries")

    async def goal_periods(self) -> None:
        # The days of open-ended pauses bridge streaks and pause goal periods: today's first.
        from brain.pulse.vacation import keep_streaks_in_pauses

        async with self.brain.transactions.begin() as uow:
            await keep_streaks_in_pauses(uow, uow.now)
        # A "<= 2000 kcal" day is only decided when it is over; idempotent.
        await close_periods(self.brain, self.brain.clock.now())

    async def memory_promotion(self) -> None:
        if self.brain.memory is not None:
            await self.brain.memory.ingest_until_promoted()

    async def memory_decay(self) -> None:
        """Node decay and the pipeline log's retention (365 days)."""
        memory = self.brain.memory
        if memory is None:
            return
        from brain.memory.decay import run_decay

        report = await run_decay(self.brain.transactions, memory.settings, log=memory.log)
        log.info("memory decay: %d nodes, %d deactivated, %d log rows deleted", report.processed,
                 report.deactivated, report.log_rows_deleted)

    async def event_retention(self) -> None:
        from brain.events.store import prune_events

        async with self.brain.transactions.begin() as uow:
            result = await prune_events(uow.session, uow.now)
        log.info("event retention: %d by age, %d beyond the per-person limit", result.by_age, result.by_count)

    async def ritual_timeouts(self) -> None:
        await self.rituals.abandon_stale(self.brain.clock.now())

    async def proposal_expiry(self) -> None:
        """Marks overdue proposals expired, so /activity and the prompt say so (deciding one checks its expiry
        itself; this keeps the table honest for everything that only reads it); their questions lose their buttons
        and say that they expired."""
        expired = await expire_with_keyboards(self.brain)
        if expired:
            log.info("proposal expiry: %d expired", expired)

    async def missions(self) -> None:
        if self.llm is not None:
            # A mission's result is a push too: it waits until the person is not in a conversation.
            await run_due_missions(self.brain, self.llm, self.brain.clock.now(),
                                   deliver=partial(deliver_run, self.brain),
                                   idle_hold=timedelta(minutes=self.settings.idle_hold_minutes), grace=self.grace)

    async def outbox_retry(self) -> None:
        """Hands pending outbox rows (scheduled pushes among them, and rows whose sending failed) to the adapters."""
        if self.deliver is not None:
            await self.deliver()


# ---- the jobs as APScheduler stores them --------------------------------------------------------------------
@dataclass(frozen=True)
class JobDefinition:
    id: str
    func: str  # "module:function", as the job store keeps it
    trigger: BaseTrigger


_installed: ScheduledJobs | None = None


def install(jobs: ScheduledJobs | None) -> None:
    global _installed
    _installed = jobs


def _jobs() -> ScheduledJobs:
    if _installed is None:
        raise RuntimeError("no ScheduledJobs installed in this process")
    return _installed


_running: set[asyncio.Task[Any]] = set()


async def _run(name: str) -> None:
    """Runs the installed instance's job `name`. A job cut short by the process stopping is not an error (each job
    is safe to run again, and runs again at its next time): it is noted as such instead of with a traceback."""
    task = asyncio.current_task()
    if task is not None:
        _running.add(task)
    try:
        await getattr(_jobs(), name)()
    except asyncio.CancelledError:
        log.warning("scheduler: job %s cut short by the shutdown; it runs again at its next time", name)
    finally:
        if task is not None:
            _running.discard(task)


async def drain(seconds: float) -> int:
    """Waits up to `seconds` for the jobs running in this process to end; returns how many still run."""
    running = {task for task in _running if not task.done()}
    if running:
        log.info("scheduler: waiting for %d running job(s) to end", len(running))
        _done, pending = await asyncio.wait(running, timeout=seconds)
        return len(pending)
    return 0


async def pushes() -> None:
    await _run("pushes")


async def pulse_tick() -> None:
    await _run("pulse_tick")


async def reminders() -> None:
    await _run("reminders")


async def calendar_series() -> None:
    await _run("calendar_series")


async def learning() -> None:
    await _run("learning")


async def model_facts() -> None:
    await _run("model_facts")


async def goal_periods() -> None:
    await _run("goal_periods")


async def memory_promotion() -> None:
    await _run("memory_promotion")


async def memory_decay() -> None:
    await _run("memory_decay")


async def event_retention() -> None:
    await _run("event_retention")


async def ritual_timeouts() -> None:
    await _run("ritual_timeouts")


async def missions() -> None:
    await _run("missions")


async def proposal_expiry() -> None:
    await _run("proposal_expiry")


async def outbox_retry() -> None:
    await _run("outbox_retry")


def job_definitions(jobs: ScheduledJobs) -> list[JobDefinition]:
    settings = jobs.settings
    utc = "UTC"
    found = [
        # At second 0 of every minute, so a push for 08:00 leaves at 08:00.
        JobDefinition("pushes", f"{__name__}:pushes", CronTrigger(second=0, timezone=utc)),
        JobDefinition("reminders", f"{__name__}:reminders", CronTrigger(second=0, timezone=utc)),
        JobDefinition("calendar_series", f"{__name__}:calendar_series", CronTrigger(hour=3, minute=30, timezone=utc)),
        JobDefinition("learning", f"{__name__}:learning", IntervalTrigger(minutes=15, timezone=utc)),
        JobDefinition("pulse_tick", f"{__name__}:pulse_tick",
                      IntervalTrigger(seconds=settings.pulse_tick_seconds, timezone=utc)),
        JobDefinition("goal_periods", f"{__name__}:goal_periods", CronTrigger(second=30, timezone=utc)),
        JobDefinition("memory_promotion", f"{__name__}:memory_promotion", IntervalTrigger(minutes=1, timezone=utc)),
        JobDefinition("memory_decay", f"{__name__}:memory_decay", CronTrigger(hour=3, minute=15, timezone=utc)),
        JobDefinition("event_retention", f"{__name__}:event_retention", CronTrigger(hour=3, minute=45, timezone=utc)),
        JobDefinition("ritual_timeouts", f"{__name__}:ritual_timeouts", IntervalTrigger(minutes=5, timezone=utc)),
        JobDefinition("proposal_expiry", f"{__name__}:proposal_expiry", IntervalTrigger(minutes=5, timezone=utc)),
    ]
    if jobs.has_missions:
        found.append(JobDefinition("missions", f"{__name__}:missions", IntervalTrigger(minutes=1, timezone=utc)))
    if jobs.llm is not None:
        found.append(JobDefinition("model_facts", f"{__name__}:model_facts", IntervalTrigger(hours=1, timezone=utc)))
    if jobs.deliver is not None:
        found.append(JobDefinition("outbox_retry", f"{__name__}:outbox_retry",
                                   IntervalTrigger(seconds=30, timezone=utc)))
    return found
