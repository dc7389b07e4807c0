"""The scheduler: APScheduler 3 (AsyncIOScheduler) with its job store in PostgreSQL, run by every process but
resumed only in the one that holds the advisory lock (`leader`), so a job never fires in two processes and
another takes over within seconds when the holder dies. Jobs have fixed ids and are (re)written only when their
definition changed, so a starting process never moves a stored run time.

The jobs (`jobs`) are global: the pushes of every person (morning summary, evening reflection, rituals, each at
the person's local time, planned per person in `brain.schedules`), the pulse tick, goal periods, memory
promotion and decay, event retention, ritual timeouts, missions and outbox delivery. The APScheduler table
(`apscheduler_jobs`) is created by APScheduler itself, outside the Alembic migrations.

`run_scheduler(app, settings, stop)` runs it until `stop` is set; `python -m app.scheduler` runs a process that
does nothing else."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from datetime import UTC, datetime
from typing import Any

from apscheduler.events import EVENT_JOB_SUBMITTED, JobSubmissionEvent
from apscheduler.jobstores.sqlalchemy import SQLAlchemyJobStore
from apscheduler.schedulers.asyncio import AsyncIOScheduler
from sqlalchemy import Engine, create_engine, text

from bot.metrics import job_started
from bot.scheduler.jobs import Deliver, JobDefinition, ScheduledJobs, drain, install, job_definitions
from bot.scheduler.leader import LOCK_KEY, Leadership
from bot.settings import Settings
from brain.core import Brain

__all__ = ["CompanionScheduler", "ScheduledJobs", "run_scheduler"]

log = logging.getLogger(__name__)

JOB_TABLE = "apscheduler_jobs"
# Serialises the creation of the job table when several processes start at once on an empty database.
_TABLE_LOCK_KEY = LOCK_KEY + 1
# How long a stopping process waits for its running jobs (within the 10 s a container gets between TERM and KILL).
DRAIN_SECONDS = 6.0


class CompanionScheduler:
    def __init__(self, jobs: ScheduledJobs, database_url: str, *, poll_seconds: float = 2.0,
                 lock_key: int = LOCK_KEY, drain_seconds: float = DRAIN_SECONDS) -> None:
        self.jobs = jobs
        self.drain_seconds = drain_seconds
        self.database_url = database_url
        self.poll_seconds = poll_seconds
        self.leadership = Leadership(database_url, lock_key)
        self.leading = False
        self.engine: Engine | None = None
        self.aps: AsyncIOScheduler | None = None

    async def run(self, stop: asyncio.Event) -> None:
        """Starts paused, then polls the lock until `stop`: resumes while leading, pauses when the lock is lost."""
        self.engine = create_engine(self.database_url, pool_size=2, max_overflow=2, pool_pre_ping=True)
        store = SQLAlchemyJobStore(engine=self.engine, tablename=JOB_TABLE)
        await asyncio.to_thread(_create_job_table, self.engine, store)
        self.aps = AsyncIOScheduler(
            jobstores={"default": store}, timezone="UTC",
            # Late runs are fine (each job works out what is due itself); never two at once, never a backlog.
            job_defaults={"coalesce": True, "max_instances": 1, "misfire_grace_time": None},
        )
        self.aps.add_listener(note_lag, EVENT_JOB_SUBMITTED)
        install(self.jobs)
        try:
            self.aps.start(paused=True)
            ensure_jobs(self.aps, job_definitions(self.jobs))
            while not stop.is_set():
                await self._poll()
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(stop.wait(), timeout=self.poll_seconds)
        finally:
            if self.aps.running:
                # Nothing new starts; a running job (a push being sent at second 0) may end before the brain closes.
                self.aps.pause()
                await drain(self.drain_seconds)
                self.aps.shutdown(wait=False)  # scheduled on the loop: let it run before the engine goes
                await asyncio.sleep(0)
            await self.leadership.release()
            self.leading = False
            install(None)
            self.engine.dispose()

    async def _poll(self) -> None:
        assert self.aps is not None
        held = await self.leadership.poll()
        if held and not self.leading:
            log.info("scheduler: this process leads now")
            self.leading = True
            self.aps.resume()
        elif not held and self.leading:
            log.warning("scheduler: leadership lost; pausing")
            self.leading = False
            self.aps.pause()
        elif held:
            # APScheduler 3 sleeps until the next run time it knows; wake it for jobs other processes wrote.
            self.aps.wakeup()


def note_lag(event: JobSubmissionEvent) -> None:
    """How late a job started against its latest due time (a late run is coalesced into one)."""
    if event.scheduled_run_times:
        due = max(event.scheduled_run_times)
        job_started(event.job_id, (datetime.now(UTC) - due).total_seconds())


def _create_job_table(engine: Engine, store: SQLAlchemyJobStore) -> None:
    with engine.begin() as conn:
        conn.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": _TABLE_LOCK_KEY})
        store.jobs_t.create(conn, checkfirst=True)


def ensure_jobs(aps: AsyncIOScheduler, definitions: list[JobDefinition]) -> None:
    """Adds each job, or replaces it when its function or trigger changed; an unchanged stored job keeps its next
    run time (replacing it would move a daily job's run past a restart)."""
    for definition in definitions:
        existing = aps.get_job(definition.id)
        if existing is not None and existing.func_ref == definition.func \
                and str(existing.trigger) == str(definition.trigger) \
                and getattr(existing.trigger, "timezone", None) == getattr(definition.trigger, "timezone", None):
            continue
        aps.add_job(definition.func, definition.trigger, id=definition.id, name=definition.id, replace_existing=True)
        log.info("scheduler: job %s set to %s", definition.id, definition.trigger)


async def run_scheduler(app: Any, settings: Settings, stop: asyncio.Event, *, llm: Any = None,
                        deliver: Deliver | None = None) -> None:
    """Runs the scheduler for `app` (a `app.wiring.App`, or a `Brain`) until `stop` is set. `llm` (else `app.llm`, else
    the companion's) lets the mission job run; `deliver` (an async callable) is called by the outbox job to hand
    pending rows to the adapters."""
    brain: Brain = app if isinstance(app, Brain) else app.brain
    jobs = ScheduledJobs(brain, settings, llm=llm if llm is not None else getattr(app, "llm", None), deliver=deliver)
    scheduler = CompanionScheduler(jobs, brain.db.url, poll_seconds=settings.scheduler_lock_poll_seconds)
    await scheduler.run(stop)
