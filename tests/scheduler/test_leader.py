"""The scheduler's machinery in one process: the advisory lock has one holder and passes on when it is freed,
job definitions are written once (a restart keeps a stored run time, a changed definition replaces it), and of
two schedulers on one database only the lock holder runs; the other takes over when it stops. A stopping scheduler
lets a running job end (within its wait), and one cut short is noted without an error."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from datetime import UTC, datetime

import pytest
from apscheduler.jobstores.sqlalchemy import SQLAlchemyJobStore
from apscheduler.schedulers.asyncio import AsyncIOScheduler
from apscheduler.triggers.interval import IntervalTrigger
from sqlalchemy import create_engine

from bot.scheduler import JOB_TABLE, CompanionScheduler, ensure_jobs
from bot.scheduler.jobs import ScheduledJobs, job_definitions
from bot.scheduler.leader import Leadership
from bot.settings import Settings
from brain.core import Brain

POLL = 0.05


async def until(condition: Callable[[], bool], seconds: float = 10.0) -> None:
    """Polls a ready check (the scheduler's own loop runs on real time here)."""
    for _ in range(int(seconds / POLL)):
        if condition():
            return
        await asyncio.sleep(POLL)
    raise AssertionError("still not ready")


async def test_the_lock_has_one_holder_and_passes_on_when_freed(database_url: str) -> None:
    a, b = Leadership(database_url), Leadership(database_url)
    try:
        assert await a.poll() is True
        assert await b.poll() is False
        assert await a.poll() is True  # still held, still alive
        await a.release()
        # The server frees the lock when the holder's backend has ended, a moment after the connection closed.
        for _ in range(200):
            if await b.poll():
                break
            await asyncio.sleep(POLL)
        assert b.held and await a.poll() is False
    finally:
        await a.release()
        await b.release()


async def test_jobs_are_written_once_and_replaced_only_when_changed(brain: Brain, database_url: str) -> None:
    engine = create_engine(database_url)
    aps = AsyncIOScheduler(jobstores={"default": SQLAlchemyJobStore(engine=engine, tablename=JOB_TABLE)},
                           timezone="UTC")
    try:
        aps.start(paused=True)
        definitions = job_definitions(ScheduledJobs(brain, Settings()))
        ensure_jobs(aps, definitions)
        ids = {job.id for job in aps.get_jobs()}
        assert {"pushes", "reminders", "pulse_tick", "goal_periods", "memory_promotion", "memory_decay",
                "event_retention", "ritual_timeouts"} <= ids
        tick = aps.get_job("pulse_tick")
        assert tick is not None
        first_run = tick.next_run_time
        ensure_jobs(aps, job_definitions(ScheduledJobs(brain, Settings())))  # a restart: nothing moves
        again = aps.get_job("pulse_tick")
        assert again is not None and again.next_run_time == first_run
        changed = [d for d in definitions if d.id != "pulse_tick"]
        changed.append(type(definitions[0])("pulse_tick", "bot.scheduler.jobs:pulse_tick",
                                            IntervalTrigger(seconds=300, timezone="UTC")))
        ensure_jobs(aps, changed)
        replaced = aps.get_job("pulse_tick")
        assert replaced is not None and str(replaced.trigger) == "interval[0:05:00]"
    finally:
        aps.shutdown(wait=False)
        await asyncio.sleep(0)
        engine.dispose()


async def test_of_two_schedulers_only_the_lock_holder_leads_until_it_stops(brain: Brain, database_url: str) -> None:
    settings = Settings()
    first = CompanionScheduler(ScheduledJobs(brain, settings), database_url, poll_seconds=0.1)
    second = CompanionScheduler(ScheduledJobs(brain, settings), database_url, poll_seconds=0.1)
    stop_first, stop_second = asyncio.Event(), asyncio.Event()
    running_first = asyncio.create_task(first.run(stop_first))
    await until(lambda: first.leading)
    running_second = asyncio.create_task(second.run(stop_second))
    await until(lambda: second.aps is not None and second.aps.running)
    await asyncio.sleep(0.3)  # a few of its polls
    assert first.leading and not second.leading
    assert first.aps is not None and first.aps.state == 1  # running
    assert second.aps is not None and second.aps.state == 2  # paused
    stop_first.set()
    await running_first
    await until(lambda: second.leading)
    stop_second.set()
    await running_second


class SlowTick(ScheduledJobs):
    """A pulse tick that takes `seconds` and notes when it started and whether it ended."""

    def __init__(self, brain: Brain, seconds: float) -> None:
        super().__init__(brain, Settings())
        self.seconds = seconds
        self.started = asyncio.Event()
        self.ended = False

    async def pulse_tick(self) -> None:
        self.started.set()
        await asyncio.sleep(self.seconds)
        self.ended = True


async def stop_during_a_tick(brain: Brain, database_url: str, tick: SlowTick, drain_seconds: float) -> None:
    scheduler = CompanionScheduler(tick, database_url, poll_seconds=0.1, drain_seconds=drain_seconds)
    stop = asyncio.Event()
    running = asyncio.create_task(scheduler.run(stop))
    await until(lambda: scheduler.leading)
    assert scheduler.aps is not None
    scheduler.aps.modify_job("pulse_tick", next_run_time=datetime.now(UTC))
    scheduler.aps.wakeup()
    await asyncio.wait_for(tick.started.wait(), timeout=10)
    stop.set()  # SIGTERM while the job runs
    await asyncio.wait_for(running, timeout=30)


async def test_a_stopping_scheduler_lets_a_running_job_end(brain: Brain, database_url: str,
                                                          caplog: pytest.LogCaptureFixture) -> None:
    tick = SlowTick(brain, 0.5)
    with caplog.at_level(logging.INFO):
        await stop_during_a_tick(brain, database_url, tick, drain_seconds=10)
    assert tick.ended
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR], caplog.text


async def test_a_job_that_outlasts_the_wait_is_cut_short_without_an_error(brain: Brain, database_url: str,
                                                                          caplog: pytest.LogCaptureFixture) -> None:
    tick = SlowTick(brain, 60)
    with caplog.at_level(logging.INFO):
        await stop_during_a_tick(brain, database_url, tick, drain_seconds=0.2)
        await until(lambda: "job pulse_tick cut short by the shutdown" in caplog.text)  # its task ends on the loop
    assert not tick.ended
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR], caplog.text
