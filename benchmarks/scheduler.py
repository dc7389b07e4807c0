"""What the scheduler costs to enqueue an hour of morning summaries: N people in many time zones (whole, half and
three-quarter hour offsets) with morning summaries at their own local times, one UTC hour of the `pushes` job
run minute by minute against the same outbox rows inserted directly, on an embedded PostgreSQL of its own.

    python -m benchmarks.scheduler [--users 10000] [--rounds 3] [--with-tasks 0.3] [--quick] [--database-url URL]

Setup (not timed): N people (English and German, 24 zones), a morning summary each at 07:00-09:00 local (most at
08:00), evening reflections off; a share of them with a task due today; then one run of the job just before the
hour, so every schedule is planned. The UTC hour with the most morning slots is measured.
  scheduler  `ScheduledJobs.pushes()` at second 0 of each of the hour's 60 minutes with an injected clock, as the
             scheduler runs it: lock the due schedule rows, plan each, read snapshots, streaks, goals and
             correlations for the batch, render in the person's language, insert the outbox rows and button
             tokens, store the bookkeeping; the upkeep (new people, changed zones) every 10 minutes.
  enqueue    baseline: the same outbox rows (the texts the scheduler rendered), inserted with the outbox's own
             `enqueue` (one statement per message), one transaction per minute that has any.
  bulk       for reference: the same rows as one multi-row INSERT per such minute (the floor of writing them).
Rounds are interleaved; the database is reset to the state before the hour between runs.

Last line: `RESULT enqueue_s=<scheduler, best round> baseline=<enqueue, best round> ratio=<scheduler / enqueue>`.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import sys
import time as clock
import uuid
from collections import Counter
from datetime import UTC, datetime, time, timedelta
from zoneinfo import ZoneInfo

from sqlalchemy import insert, select, text

from benchmarks._options import add_common_options, parse_sizes
from benchmarks._pg import bench_database
from bot.scheduler.jobs import ScheduledJobs
from bot.settings import Settings
from brain.clock import FixedClock
from brain.core import Brain
from brain.modules.todo.models import Task
from brain.outbox.models import PENDING, Outbound, OutboxMessage
from brain.outbox.service import enqueue
from brain.people.models import User
from brain.schedules.models import EVENING_REFLECTION, MORNING_SUMMARY, PushSchedule
from brain.schedules.slots import LocalSchedule, occurrences
from brain.store.database import Database
from rules.wiring import build_brain

DATABASE = "scheduler_bench"
ZONES = (
    "Europe/Berlin", "Europe/London", "Europe/Helsinki", "Europe/Moscow", "America/New_York", "America/Chicago",
    "America/Denver", "America/Los_Angeles", "America/Sao_Paulo", "America/St_Johns", "Asia/Kolkata",
    "Asia/Kathmandu", "Asia/Tokyo", "Asia/Shanghai", "Asia/Dubai", "Asia/Tehran", "Australia/Sydney",
    "Australia/Adelaide", "Australia/Eucla", "Pacific/Auckland", "Pacific/Chatham", "Africa/Lagos",
    "Africa/Nairobi", "UTC",
)
MORNINGS = (time(7), time(7, 15), time(7, 30), time(7, 45), time(8), time(8), time(8), time(8), time(8, 30), time(9))
DAY = datetime(2026, 11, 30, tzinfo=UTC)  # a Monday
QUICK = {"users": 240, "rounds": 1}


def assign(users: int, with_tasks: float, seed: int) -> list[tuple[str, time, bool]]:
    """(zone, morning time, has a task due) per person."""
    rng = random.Random(seed)
    return [(ZONES[i % len(ZONES)], rng.choice(MORNINGS), rng.random() < with_tasks) for i in range(users)]


async def setup(db: Database, people: list[tuple[str, time, bool]], planned_until: datetime) -> None:
    users: list[dict[str, object]] = []
    schedules: list[dict[str, object]] = []
    tasks: list[dict[str, object]] = []
    for i, (zone, morning, has_task) in enumerate(people):
        uid = uuid.uuid4()
        users.append({"id": uid, "locale": "de" if i % 3 == 0 else "en", "timezone": zone,
                      "display_name": f"person {i}"})
        for kind, at, enabled in ((MORNING_SUMMARY, morning, True), (EVENING_REFLECTION, time(21), False)):
            schedules.append({"user_id": uid, "kind": kind, "ref": "", "at": at, "weekdays": 0b1111111,
                              "enabled": enabled, "timezone": zone, "last_slot_at": planned_until,
                              "next_due_at": None, "updated_at": planned_until})
        if has_task:
            local_day = (DAY + timedelta(hours=12)).astimezone(ZoneInfo(zone)).date()
            tasks.append({"id": uuid.uuid4(), "user_id": uid, "title": f"Errand {i}", "due_date": local_day,
                          "priority": 0, "created_at": planned_until, "updated_at": planned_until})
    async with db.sessions() as session, session.begin():
        for chunk in range(0, len(users), 2000):
            await session.execute(insert(User), users[chunk:chunk + 2000])
        for chunk in range(0, len(schedules), 4000):
            await session.execute(insert(PushSchedule), schedules[chunk:chunk + 4000])
        if tasks:
            await session.execute(insert(Task), tasks)
    async with db.engine.connect() as conn:
        await conn.execute(text("ANALYZE"))


def busiest_hour(people: list[tuple[str, time, bool]]) -> datetime:
    """The UTC hour around DAY with the most morning slots."""
    counts: Counter[datetime] = Counter()
    for zone, at, _ in people:
        around = (DAY - timedelta(hours=14), DAY + timedelta(hours=36))
        for slot in occurrences(LocalSchedule(at), ZoneInfo(zone), *around):
            counts[slot.at.replace(minute=0)] += 1
    return max(counts, key=lambda hour: (counts[hour], -hour.timestamp()))


async def snapshot_state(db: Database) -> None:
    async with db.engine.begin() as conn:
        await conn.execute(text("DROP TABLE IF EXISTS bench_schedules"))
        await conn.execute(text("CREATE TABLE bench_schedules AS SELECT * FROM push_schedules"))


async def reset_state(db: Database) -> None:
    async with db.engine.begin() as conn:
        await conn.execute(text("TRUNCATE outbox, action_tokens CASCADE"))
        await conn.execute(text("DELETE FROM push_schedules"))
        await conn.execute(text("INSERT INTO push_schedules SELECT * FROM bench_schedules"))
    async with db.engine.connect() as conn:
        await conn.execute(text("ANALYZE push_schedules"))


async def run_scheduler(brain: Brain, jobs: ScheduledJobs, start: datetime) -> tuple[float, list[list[dict]]]:
    """The hour minute by minute; returns the seconds and, per minute that sent any, the outbox rows it wrote."""
    assert isinstance(brain.clock, FixedClock)
    elapsed = 0.0
    batches: list[list[dict]] = []
    last_id = 0
    for minute in range(60):
        brain.clock.set(start + timedelta(minutes=minute))
        began = clock.perf_counter()
        await jobs.pushes()
        elapsed += clock.perf_counter() - began
        async with brain.db.sessions() as session:  # not timed: which rows this minute wrote
            rows = (await session.scalars(select(OutboxMessage).where(OutboxMessage.id > last_id)
                                          .order_by(OutboxMessage.id))).all()
        if rows:
            last_id = rows[-1].id
            batches.append([{"user_id": r.user_id, "kind": r.kind, "slot": r.slot, "platform": None, "chat_id": None,
                             "text": r.text, "buttons": r.buttons, "image_png": None, "status": PENDING,
                             "attempts": 0} for r in rows])
    return elapsed, batches


async def run_enqueue(db: Database, batches: list[list[dict]]) -> float:
    async with db.engine.begin() as conn:
        await conn.execute(text("TRUNCATE outbox, action_tokens CASCADE"))
    began = clock.perf_counter()
    for batch in batches:
        async with db.sessions() as session, session.begin():
            for row in batch:
                await enqueue(session, row["user_id"], Outbound(text=row["text"]), kind=row["kind"], slot=row["slot"])
    return clock.perf_counter() - began


async def run_bulk(db: Database, batches: list[list[dict]]) -> float:
    async with db.engine.begin() as conn:
        await conn.execute(text("TRUNCATE outbox, action_tokens CASCADE"))
    began = clock.perf_counter()
    for batch in batches:
        async with db.sessions() as session, session.begin():
            await session.execute(insert(OutboxMessage).values(batch))
    return clock.perf_counter() - began


async def run(url: str, users: int, rounds: int, with_tasks: float, seed: int) -> str:
    db = Database(url, pool_size=4)
    fixed = FixedClock(DAY)
    brain = build_brain(db, clock=fixed)
    people = assign(users, with_tasks, seed)
    hour = busiest_hour(people)
    try:
        await setup(db, people, hour - timedelta(minutes=2))
        jobs = ScheduledJobs(brain, Settings(database_url=url))
        fixed.set(hour - timedelta(minutes=1))
        await jobs.pushes()  # plans everyone (not timed)
        await snapshot_state(db)
        times: dict[str, list[float]] = {"scheduler": [], "enqueue": [], "bulk": []}
        batches: list[list[dict]] = []
        for _ in range(rounds):
            await reset_state(db)
            round_jobs = ScheduledJobs(brain, Settings(database_url=url))
            round_jobs._upkeep_at = hour - timedelta(minutes=1)  # as in the running scheduler: upkeep every 10 min
            seconds, batches = await run_scheduler(brain, round_jobs, hour)
            times["scheduler"].append(seconds)
            times["enqueue"].append(await run_enqueue(db, batches))
            times["bulk"].append(await run_bulk(db, batches))
    finally:
        await brain.close()
    return report(users, hour, sum(len(b) for b in batches), len(batches), times)


def report(people: int, hour: datetime, sent: int, minutes: int, times: dict[str, list[float]]) -> str:
    best = {name: min(values) for name, values in times.items()}
    lines = [f"{people} people in {len(ZONES)} zones; the hour {hour:%Y-%m-%d %H:%M} UTC has {sent} morning "
             f"summaries in {minutes} minute(s)",
             f"{'variant':<10} {'best of ' + str(len(times['scheduler'])) + ' (s)':>16} {'per push':>10} "
             f"{'vs enqueue':>11} {'vs bulk':>8}   all rounds (s)"]
    for name in ("scheduler", "enqueue", "bulk"):
        per = best[name] / sent * 1000 if sent else 0.0
        lines.append(f"{name:<10} {best[name]:>16.3f} {per:>8.2f}ms {best[name] / best['enqueue']:>10.2f}x "
                     f"{best[name] / best['bulk']:>7.2f}x   {', '.join(f'{v:.3f}' for v in times[name])}")
    lines.append(f"RESULT enqueue_s={best['scheduler']:.3f} baseline={best['enqueue']:.3f} "
                 f"ratio={best['scheduler'] / best['enqueue']:.2f}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.scheduler", description=__doc__.splitlines()[0])
    parser.add_argument("--users", type=int, default=10_000, help="people (default 10000)")
    parser.add_argument("--rounds", type=int, default=3, help="rounds per variant (default 3)")
    parser.add_argument("--with-tasks", type=float, default=0.3, help="share of people with a task due (default 0.3)")
    parser.add_argument("--seed", type=int, default=7)
    add_common_options(parser)
    args = parse_sizes(parser, argv, QUICK)
    if args.users < 1 or args.rounds < 1 or not 0 <= args.with_tasks <= 1:
        parser.error("--users and --rounds must be at least 1, --with-tasks between 0 and 1")
    with bench_database(DATABASE, prefix="cbs", url=args.database_url) as database:
        print(asyncio.run(run(database.url, args.users, args.rounds, args.with_tasks, args.seed)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
