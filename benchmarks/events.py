"""What the event machinery costs on a write: plain inserts of a drink row plus its event row
against the same rows written through a unit of work (ORM session, `uow.emit`, event record,
publication on the bus after commit), on an embedded PostgreSQL of its own.

    python -m benchmarks.events [--events N] [--batch B] [--rounds R] [--quick] [--database-url URL]

Variants, each on emptied tables, one transaction per B drinks (B=1: one per logged drink), run in R
interleaved rounds of N/R drinks so drift in machine load hits all variants alike:
  plain inserts  the drink_entries and events rows as Core INSERTs on the same async engine, no bus
  emit           DrinkEntry + uow.emit(DrinkLogged(...)) in `transactions.begin()`, bus subscriber counting
  log_drink      brain.modules.drink.service.log_drink (adds its day-progress query and goal check)
Last line: `RESULT events_per_s=<emit> baseline=<plain inserts> ratio=<emit time / plain time>`.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime
from zoneinfo import ZoneInfo

from sqlalchemy import func, insert, select, text

from benchmarks._options import add_common_options, parse_sizes
from benchmarks._pg import bench_database
from brain.clock import SystemClock
from brain.events.actor import USER
from brain.events.bus import EventBus
from brain.events.catalog import DomainEvent, DrinkLogged
from brain.events.store import EventRecord
from brain.modules.drink import service
from brain.modules.drink.models import DrinkEntry
from brain.people.models import User
from brain.people.service import resolve_identity
from brain.store.database import Database
from brain.store.unit_of_work import Transactions

DATABASE = "events_bench"
WARMUP = 200
DEFAULT_EVENTS = 4000
QUICK = {"events": 30, "rounds": 2}


@dataclass
class Measurement:
    variant: str
    events: int = 0
    seconds: float = 0.0
    cpu_seconds: float = 0.0  # this process only (Python side); the server's time is in `seconds`

    @property
    def per_second(self) -> float:
        return self.events / self.seconds if self.seconds else float("inf")

    @property
    def cpu_ms_per_event(self) -> float:
        return self.cpu_seconds * 1000 / self.events if self.events else 0.0


class Bench:
    def __init__(self, db: Database, user: User, batch: int) -> None:
        self.db = db
        self.user = user
        self.zone = ZoneInfo(user.timezone)
        self.batch = batch
        self.clock = SystemClock()
        self.bus = EventBus()
        self.published = 0
        self.bus.subscribe_all(self._count)
        self.transactions = Transactions(db, self.bus, self.clock)

    def _count(self, event: DomainEvent) -> None:
        self.published += 1

    # ---- one unit of B drinks per variant ---------------------------------------------------------
    async def plain_unit(self) -> None:
        """The rows `emit` writes, built by hand and inserted with Core on the same engine."""
        entries: list[dict[str, object]] = []
        events: list[dict[str, object]] = []
        for _ in range(self.batch):
            now = datetime.now(UTC)
            local = now.astimezone(self.zone)
            entry_id = uuid.uuid4()
            entries.append({
                "id": entry_id, "user_id": self.user.id, "drink_type": "water", "name": "water", "quantity_ml": 250,
                "preset_id": None, "logged_at": now, "local_date": local.date(),
            })
            events.append({
                "id": uuid.uuid4(), "user_id": self.user.id, "type": "DrinkLogged", "module": "drink",
                "collection": "drink_entries", "record_id": str(entry_id), "actor": {"kind": "user"},
                "caused_by": None, "occurred_at": now,
                "payload": {"entry_id": str(entry_id), "drink_type": "water", "quantity_ml": 250, "name": "water",
                            "date": local.date().isoformat(), "time": local.strftime("%H:%M"), "from_preset": False},
            })
        async with self.db.engine.begin() as conn:
            # One statement per table and unit (executemany when B > 1), as the ORM flush does.
            await conn.execute(insert(DrinkEntry), entries)
            await conn.execute(insert(EventRecord), events)

    async def emit_unit(self) -> None:
        """What log_drink writes, without its day-progress query: the fair comparison."""
        async with self.transactions.begin() as uow:
            for _ in range(self.batch):
                local = uow.now.astimezone(self.zone)
                entry = DrinkEntry(
                    id=uuid.uuid4(), user_id=self.user.id, drink_type="water", name="water", quantity_ml=250,
                    preset_id=None, logged_at=uow.now, local_date=local.date(),
                )
                uow.session.add(entry)
                uow.emit(
                    DrinkLogged(entry_id=entry.id, drink_type="water", quantity_ml=250, name="water",
                                date=local.date(), time=local.strftime("%H:%M"), from_preset=False),
                    user_id=self.user.id, record_id=entry.id, actor=USER,
                )

    async def log_drink_unit(self) -> None:
        async with self.transactions.begin() as uow:
            for _ in range(self.batch):
                await service.log_drink(uow, self.user, USER, "water", 250)

    # ---- running -----------------------------------------------------------------------------------
    async def reset(self) -> None:
        async with self.db.engine.begin() as conn:
            await conn.execute(text("TRUNCATE drink_entries, events"))
        self.published = 0

    async def event_rows(self) -> int:
        async with self.db.sessions() as session:
            return int(await session.scalar(select(func.count()).select_from(EventRecord)) or 0)

    async def run_variant(self, name: str, units: int, into: Measurement) -> None:
        """Runs `units` units of variant `name` on emptied tables and adds the figures to `into`."""
        unit, via_bus = {
            "plain inserts": (self.plain_unit, False), "emit": (self.emit_unit, True),
            "log_drink": (self.log_drink_unit, True),
        }[name]
        await self.reset()
        wall, cpu = time.perf_counter(), time.process_time()
        for _ in range(units):
            await unit()
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        committed = await self.event_rows()
        if via_bus:
            # Every committed event was dispatched (log_drink adds a DrinkGoalReached once a day).
            assert self.published == committed, (name, self.published, committed)
        expected = units * self.batch
        assert committed == expected or (name == "log_drink" and committed > expected), (name, committed, expected)
        into.events += committed
        into.seconds += wall
        into.cpu_seconds += cpu


VARIANTS = ("plain inserts", "emit", "log_drink")


async def run(url: str, events: int, batch: int, rounds: int) -> list[Measurement]:
    """Rounds interleave the variants (in rotating order) so drift in machine load hits all alike."""
    db = Database(url, pool_size=2)
    try:
        async with db.sessions() as session, session.begin():
            user = await resolve_identity(session, "bench", f"bench-{uuid.uuid4()}", default_locale="en",
                                          default_timezone="Europe/Berlin")
        bench = Bench(db, user, batch)
        warm_units = max(1, min(WARMUP, events) // batch)  # a quick run warms up on no more than it measures
        for name in VARIANTS:  # warm the pool, the statement caches and psycopg's prepared statements
            await bench.run_variant(name, warm_units, Measurement(name))
        results = {name: Measurement(name) for name in VARIANTS}
        units, extra = divmod(-(-events // batch), rounds)
        for r in range(rounds):
            for name in VARIANTS[r % 3:] + VARIANTS[: r % 3]:
                await bench.run_variant(name, units + (r < extra), results[name])
        return list(results.values())
    finally:
        await db.dispose()


def report(results: list[Measurement], batch: int) -> str:
    by_name = {m.variant: m for m in results}
    baseline, fair = by_name["plain inserts"], by_name["emit"]
    assert fair.events == baseline.events
    per_event = baseline.seconds / baseline.events
    lines = [f"batch {batch} drink(s) per transaction",
             f"{'variant':<14} {'events':>7} {'seconds':>8} {'events/s':>9} {'time/event':>11} {'client CPU':>11}"]
    for m in results:
        lines.append(f"{m.variant:<14} {m.events:>7} {m.seconds:>8.2f} {m.per_second:>9.1f} "
                     f"{m.seconds / m.events / per_event:>10.2f}x {m.cpu_ms_per_event:>8.3f} ms")
    ratio = fair.seconds / baseline.seconds
    lines.append(f"RESULT events_per_s={fair.per_second:.1f} baseline={baseline.per_second:.1f} ratio={ratio:.2f}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.events", description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=DEFAULT_EVENTS,
                        help=f"drinks logged per variant (default {DEFAULT_EVENTS})")
    parser.add_argument("--batch", type=int, default=1, help="drinks per transaction (default 1)")
    parser.add_argument("--rounds", type=int, default=5, help="interleaved rounds per variant (default 5)")
    add_common_options(parser)
    args = parse_sizes(parser, argv, QUICK)
    if min(args.events, args.batch, args.rounds) < 1:
        parser.error("--events, --batch and --rounds must be at least 1")
    with bench_database(DATABASE, prefix="cbe", url=args.database_url) as database:
        results = asyncio.run(run(database.url, args.events, args.batch, args.rounds))
    print(report(results, args.batch))
    return 0


if __name__ == "__main__":
    sys.exit(main())
