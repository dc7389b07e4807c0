"""What the scheduler's reminder job costs when N people's reminders fall due in the same minute, against the same
outbox rows inserted directly, on an embedded PostgreSQL of its own.

    python -m benchmarks.reminders [--users 10000] [--rounds 3] [--quick] [--database-url URL]

Setup (not timed): N people (English and German, in 24 zones), one reminder each, all due at the same instant.
  scheduler  `ScheduledJobs.reminders()` at that minute, as the scheduler runs it (a second run a minute later must
             send nothing): lock the due rows in batches, decide each (quiet hours, pauses), render it in the
             person's language, insert the outbox rows and their Done / Snooze button tokens, mark them sent.
  enqueue    baseline: the same outbox rows (the texts the job rendered), inserted with the outbox's own `enqueue`
             (one statement per message) in one transaction.
Each round checks that every person got exactly one message; rounds are interleaved and the state is reset between
them.

Last line: `RESULT send_s=<scheduler, best round> baseline=<enqueue, best round> ratio=<scheduler / enqueue>`.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time as clock
import uuid
from datetime import UTC, datetime, time, timedelta

from sqlalchemy import func, insert, select, text

from benchmarks._options import add_common_options, parse_sizes
from benchmarks._pg import bench_database
from bot.scheduler.jobs import ScheduledJobs
from bot.settings import Settings
from brain.clock import FixedClock
from brain.outbox.models import Outbound, OutboxMessage
from brain.outbox.service import enqueue
from brain.people.models import User
from brain.reminders.models import WAITING, Reminder
from brain.reminders.sending import REMINDER_KIND
from brain.store.database import Database
from rules.wiring import build_brain

DATABASE = "reminders_bench"
ZONES = (
    "Europe/Berlin", "Europe/London", "Europe/Helsinki", "Europe/Moscow", "America/New_York", "America/Chicago",
    "America/Denver", "America/Los_Angeles", "America/Sao_Paulo", "America/St_Johns", "Asia/Kolkata",
    "Asia/Kathmandu", "Asia/Tokyo", "Asia/Shanghai", "Asia/Dubai", "Asia/Tehran", "Australia/Sydney",
    "Australia/Adelaide", "Australia/Eucla", "Pacific/Auckland", "Pacific/Chatham", "Africa/Lagos",
    "Africa/Nairobi", "UTC",
)
# Everyone's quiet hours are 2-3 local, which 12:00 UTC is in no zone above: every reminder goes out at once.
DUE = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
QUICK = {"users": 200, "rounds": 1}
LIMIT_S = 60.0


async def setup(db: Database, users: int) -> None:
    people: list[dict[str, object]] = []
    reminders: list[dict[str, object]] = []
    created = DUE - timedelta(hours=3)
    for i in range(users):
        uid = uuid.uuid4()
        people.append({"id": uid, "locale": "de" if i % 3 == 0 else "en", "timezone": ZONES[i % len(ZONES)],
                       "display_name": f"person {i}", "quiet_start": time(2), "quiet_end": time(3)})
        reminders.append({"id": uuid.uuid4(), "user_id": uid, "text": f"Call person {i}",
                          "timezone": ZONES[i % len(ZONES)], "occurrence_at": DUE, "due_at": DUE, "status": WAITING,
                          "deliveries": 0, "created_at": created, "updated_at": created})
    async with db.sessions() as session, session.begin():
        for chunk in range(0, users, 2000):
            await session.execute(insert(User), people[chunk:chunk + 2000])
            await session.execute(insert(Reminder), reminders[chunk:chunk + 2000])
    async with db.engine.begin() as conn:
        await conn.execute(text("DROP TABLE IF EXISTS bench_reminders"))
        await conn.execute(text("CREATE TABLE bench_reminders AS SELECT * FROM reminders"))
        await conn.execute(text("ANALYZE"))


async def reset_state(db: Database) -> None:
    async with db.engine.begin() as conn:
        await conn.execute(text("TRUNCATE outbox, action_tokens CASCADE"))
        await conn.execute(text("DELETE FROM reminders"))
        await conn.execute(text("INSERT INTO reminders SELECT * FROM bench_reminders"))
    async with db.engine.connect() as conn:
        await conn.execute(text("ANALYZE reminders"))


async def run_scheduler(db: Database, jobs: ScheduledJobs, fixed: FixedClock, users: int) -> tuple[float, list[dict]]:
    """The job at the minute they are due; checks each person got one message and a minute later nothing more."""
    fixed.set(DUE)
    began = clock.perf_counter()
    report = await jobs.reminders()
    elapsed = clock.perf_counter() - began
    fixed.set(DUE + timedelta(minutes=1))
    again = await jobs.reminders()
    async with db.sessions() as session:
        rows = (await session.scalars(select(OutboxMessage).where(OutboxMessage.kind == REMINDER_KIND))).all()
        people = await session.scalar(select(func.count(func.distinct(OutboxMessage.user_id)))
                                      .where(OutboxMessage.kind == REMINDER_KIND))
    if report.sent != users or again.sent != 0 or len(rows) != users or people != users:
        raise SystemExit(f"expected one reminder for each of {users} people: sent {report.sent}, then {again.sent}; "
                         f"{len(rows)} rows for {people} people")
    return elapsed, [{"user_id": r.user_id, "text": r.text, "slot": r.slot} for r in rows]


async def run_enqueue(db: Database, rows: list[dict]) -> float:
    async with db.engine.begin() as conn:
        await conn.execute(text("TRUNCATE outbox, action_tokens CASCADE"))
    began = clock.perf_counter()
    async with db.sessions() as session, session.begin():
        for row in rows:
            await enqueue(session, row["user_id"], Outbound(text=row["text"]), kind=REMINDER_KIND, slot=row["slot"])
    return clock.perf_counter() - began


async def run(url: str, users: int, rounds: int) -> str:
    db = Database(url, pool_size=4)
    fixed = FixedClock(DUE - timedelta(minutes=5))
    brain = build_brain(db, clock=fixed)
    times: dict[str, list[float]] = {"scheduler": [], "enqueue": []}
    try:
        await setup(db, users)
        for _ in range(rounds):
            await reset_state(db)
            jobs = ScheduledJobs(brain, Settings(database_url=url))
            seconds, rows = await run_scheduler(db, jobs, fixed, users)
            times["scheduler"].append(seconds)
            times["enqueue"].append(await run_enqueue(db, rows))
    finally:
        await brain.close()
    return report(users, times)


def report(users: int, times: dict[str, list[float]]) -> str:
    best = {name: min(values) for name, values in times.items()}
    within = "within" if best["scheduler"] <= LIMIT_S else "NOT within"
    lines = [f"{users} people, one reminder each due at {DUE:%Y-%m-%d %H:%M} UTC; each sent once, "
             f"{within} {LIMIT_S:.0f} s",
             f"{'variant':<10} {'best of ' + str(len(times['scheduler'])) + ' (s)':>16} {'per reminder':>13} "
             f"{'vs enqueue':>11}   all rounds (s)"]
    for name in ("scheduler", "enqueue"):
        per = best[name] / users * 1000
        lines.append(f"{name:<10} {best[name]:>16.3f} {per:>11.3f}ms {best[name] / best['enqueue']:>10.2f}x   "
                     f"{', '.join(f'{v:.3f}' for v in times[name])}")
    lines.append(f"RESULT send_s={best['scheduler']:.3f} baseline={best['enqueue']:.3f} "
                 f"ratio={best['scheduler'] / best['enqueue']:.2f}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.reminders", description=__doc__.splitlines()[0])
    parser.add_argument("--users", type=int, default=10_000, help="people, one reminder each (default 10000)")
    parser.add_argument("--rounds", type=int, default=3, help="rounds per variant (default 3)")
    add_common_options(parser)
    args = parse_sizes(parser, argv, QUICK)
    if args.users < 1 or args.rounds < 1:
        parser.error("--users and --rounds must be at least 1")
    with bench_database(DATABASE, prefix="cbr", url=args.database_url) as database:
        print(asyncio.run(run(database.url, args.users, args.rounds)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
