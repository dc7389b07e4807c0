"""What the companion loop costs around the model, and what parallel read rounds save, against the fake
Ollama server (tests/fakes/ollama_server.py, run in a process of its own like a real Ollama) on an embedded
PostgreSQL of its own.

    python -m benchmarks.companion [--turns N] [--model-ms M] [--tool-ms T] [--rounds R] [--think-ms K] [--quick]
        [--event-loop auto|uvloop|asyncio] [--database-url URL]

It runs on the event loop `companion run` takes (uvloop where installed); wake-ups are counted on asyncio's only.

1. Overhead: N chat turns through `Companion.respond` with the model client; the fake server answers
   every request after M ms. Each turn is one tool round and the answer: prompt assembly (settings,
   proposals, feedback, history, context document), two model calls, the policy gate, the tool call, the
   conversation stored in one transaction.
   overhead = turn wall time - the fake server's own time for its two answers, as the client sees it in each
   answer's `total_duration` (from the parsed request to the reply: the M ms and whatever the loaded machine
   adds to them). The model client, HTTP and the fake server's parsing count as overhead. The figure with
   the nominal 2 x M is shown too. The RESULT turns call a read tool that does no work of its own
   (`bench_lookup`), so they measure the loop, not a module; turns that call `log_drink` (its insert, event,
   day progress, goal check and the subscribers after commit, and a fresh context document in the next turn)
   are shown for reference, interleaved with them turn by turn so that load drift hits both alike. Turns
   rotate over N/5 people, so histories stay short of compaction as in daily use; every person has had one
   turn before the measured ones (a follow-up message; the first message of a person, which builds the
   context document, is shown as its own row).
2. Parallel reads: R turns whose round has three read tools of T ms each (registered for the benchmark),
   with parallel read rounds (at most 10 at once) and with one call after another, interleaved;
   `parallel_ms` and `sequential_ms` are the tool rounds' wall times (LoopResult.tool_ms), mean per turn.
3. Thinking: R turns with the primary model told `think: false` (the default) and let think
   (OLLAMA_PRIMARY_THINK), interleaved, against a fake that thinks K ms per answer unless told not to, as qwen3
   does (`--think-ms K`).
4. Streaming: S turns whose answer is a plain text of P pieces written E ms apart, through the dialog and the
   Telegram delivery (`Dialog.handle`, then `OutboxSender.deliver` with the Telegram transport against the fake Bot
   API in a process of its own), with the answer shown while it is written (`LiveAnswer`, first shown after and
   edited at most every `--stream-every-ms`, the real pacing scaled down to the fake model's speed) and without
   (one message once it is complete), interleaved turn by turn. The streamed turns pay for the model's streamed
   reply (one JSON line per piece), the drafts (a message and its edits, counted per turn) and the finished
   answer's edit instead of a message.

Part 4 also counts the event loop's wake-ups per turn (on asyncio's loop) and measures, on its own, the CPU of one
draft edit and of one wake-up of an idle loop: on a virtual machine these cost more than the work around them.

Each part prints the load average before and after it, and this process's CPU time per turn
(time.process_time: the Python side only, not PostgreSQL's or the fake's; it moves much less with the load of
the machine than the wall times do). SQL per turn: statements, connection checkouts (each with the pool's
pre-ping) and commits, counted with SQLAlchemy event listeners.

RESULT overhead_ms=<mean per turn> cpu_ms=<mean per turn> model_ms=<M> load=<1-minute load average at the end>
stream_cpu_ms=<CPU per streamed turn> plain_cpu_ms=<CPU per turn, not streamed> stream_cpu_pct=<the difference, %>
parallel_ms=<mean tool round> baseline=<the same, one call after another> ratio=<baseline / parallel>.
Targets: overhead_ms <= 25, ratio >= 2.5, stream_cpu_pct <= 10."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import statistics
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sqlalchemy import event
from telegram import Bot

from adapters.telegram.outbound import TelegramTransport, telegram_sender
from adapters.telegram.request import AiohttpRequest
from benchmarks._fake_model import ASK, SAY
from benchmarks._options import add_common_options, parse_sizes
from benchmarks._pg import bench_database
from bot import event_loop
from bot.access import AccessPolicy
from bot.delivery.sender import OutboxSender
from bot.delivery.stream import LiveAnswer, Pace
from bot.dialog import Dialog
from bot.inbound import Inbound
from brain.clock import SystemClock
from brain.companion.agent import Companion, CompanionConfig, TurnOutcome
from brain.companion.llm import LLM, TierConfig
from brain.core import Brain
from brain.people.models import User
from brain.people.service import resolve_identity
from brain.runtime import freeze_startup_heap
from brain.store.database import Database
from brain.tools.spec import ToolContext, ToolResult, ToolSpec
from rules.wiring import build_brain
from tests.telegram.fake_bot_api import TOKEN

DATABASE = "companion_bench"
WARMUP = 5
TURNS_PER_PERSON = 5
LOOKUP = "bench_lookup"
READ_TOOLS = ("bench_read_a", "bench_read_b", "bench_read_c")
ROOT = Path(__file__).resolve().parents[1]  # the fake server is imported from tests/
# 10 turns: two people, one first turn timed
QUICK = {"turns": 10, "model_ms": 5.0, "tool_ms": 10.0, "rounds": 2, "think_ms": 20.0,
         "stream_turns": 2, "pieces": 20, "piece_ms": 2.0, "stream_every_ms": 10.0}


class SqlCounter:
    """Statements, connection checkouts and commits on an engine, counted by event listeners."""

    def __init__(self, db: Database) -> None:
        self.statements = self.checkouts = self.commits = 0
        engine = db.engine.sync_engine
        event.listen(engine, "before_cursor_execute", self._statement)
        event.listen(engine, "commit", self._commit)
        event.listen(engine.pool, "checkout", self._checkout)

    def _statement(self, *_: Any) -> None:
        self.statements += 1

    def _commit(self, *_: Any) -> None:
        self.commits += 1

    def _checkout(self, *_: Any) -> None:
        self.checkouts += 1

    def snapshot(self) -> tuple[int, int, int]:
        return self.statements, self.checkouts, self.commits


@dataclass
class Turns:
    wall_ms: list[float] = field(default_factory=list)
    client_ms: list[float] = field(default_factory=list)  # the LLM client's own measure of its calls
    server_ms: list[float] = field(default_factory=list)  # the fake server's time, as its answers report it
    tool_ms: list[float] = field(default_factory=list)
    model_calls: list[int] = field(default_factory=list)
    cpu_ms: list[float] = field(default_factory=list)  # this process's CPU time (not PostgreSQL's, not the fake's)
    sql: list[tuple[int, int, int]] = field(default_factory=list)  # statements, checkouts, commits
    load: list[float] = field(default_factory=list)  # 1-minute load average before and after

    def add(self, wall_ms: float, cpu_ms: float, outcome: TurnOutcome, model_calls: int,
            sql: tuple[int, int, int]) -> None:
        self.wall_ms.append(wall_ms)
        self.cpu_ms.append(cpu_ms)
        self.client_ms.append(outcome.model_ms)
        self.server_ms.append(outcome.server_ms)
        self.tool_ms.append(outcome.tool_ms)
        self.model_calls.append(model_calls)
        self.sql.append(sql)


# ---- the fake model, in a process of its own ------------------------------------------------------------------
@contextlib.contextmanager
def fake_model(delay_s: float, think_s: float = 0.0) -> Iterator[str]:
    """The fake model server (benchmarks/_fake_model.py) in a process of its own; yields its URL."""
    server = subprocess.Popen([sys.executable, "-m", "benchmarks._fake_model", str(delay_s), str(think_s)], cwd=ROOT,
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert server.stdin is not None and server.stdout is not None
        url = server.stdout.readline().strip()
        if not url:
            raise RuntimeError(f"the fake model server did not start (exit code {server.poll()})")
        yield url
    finally:
        if server.stdin is not None:
            server.stdin.close()  # its signal to stop
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()


@contextlib.contextmanager
def fake_bot_api() -> Iterator[str]:
    """The fake Telegram Bot API (tests/telegram/fake_bot_api.py) in a process of its own; yields its base URL."""
    server = subprocess.Popen([sys.executable, "-m", "tests.telegram.fake_bot_api"], cwd=ROOT,
                              stdout=subprocess.PIPE, text=True)
    try:
        assert server.stdout is not None
        port = server.stdout.readline().strip()
        if not port:
            raise RuntimeError(f"the fake Bot API did not start (exit code {server.poll()})")
        yield f"http://127.0.0.1:{port}/bot"
    finally:
        server.terminate()
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()


# ---- the turns ----------------------------------------------------------------------------------------------
def read_tool(name: str, delay_s: float) -> ToolSpec:
    async def handler(ctx: ToolContext, args: dict[str, Any]) -> ToolResult:
        if delay_s:
            await asyncio.sleep(delay_s)
        return ToolResult(ok=True, data={"tool": name})

    return ToolSpec(name, "todo", f"Benchmark read tool {name}.", (), "read", handler)


async def new_people(brain: Brain, count: int) -> list[User]:
    people = []
    async with brain.transactions.begin() as uow:
        for _ in range(count):
            people.append(await resolve_identity(uow.session, "bench", f"p-{uuid.uuid4().hex[:8]}",
                                                 default_locale="en", default_timezone="Europe/Berlin"))
    return people


def load_average() -> float:
    return os.getloadavg()[0]


async def timed_turn(companion: Companion, user: User, tools: tuple[str, ...], sql: SqlCounter,
                     into: Turns | None) -> None:
    before = sql.snapshot()
    started, cpu = time.perf_counter(), time.process_time()
    outcome = await companion.respond(user, f"{ASK} {', '.join(tools)}")
    wall, cpu_ms = (time.perf_counter() - started) * 1000, (time.process_time() - cpu) * 1000
    after = sql.snapshot()
    assert outcome.text == "Done." and [c.name for c in outcome.calls] == list(tools), outcome
    assert all(c.ok for c in outcome.calls), outcome
    if into is not None:
        into.add(wall, cpu_ms, outcome, 2, (after[0] - before[0], after[1] - before[1], after[2] - before[2]))


@dataclass(frozen=True)
class Streaming:
    """The size of part 3: turns per variant, the answer's pieces, the model's time between them, the pacing."""

    turns: int
    pieces: int
    piece_ms: float
    every_ms: float


@dataclass
class StreamTurns:
    wall_ms: list[float] = field(default_factory=list)
    cpu_ms: list[float] = field(default_factory=list)
    requests: list[int] = field(default_factory=list)  # drafts shown and edited (the finished answer not counted)
    wakeups: list[int] = field(default_factory=list)  # times the event loop slept and was woken
    load: list[float] = field(default_factory=list)
    idle_wakeup_ms: float = 0.0  # this machine's CPU for one wake-up of an idle loop
    draft_ms: float = 0.0  # CPU for one draft edit sent to the fake Bot API on its own


class Wakeups:
    """Counts the times the event loop waits for something (a select with a timeout other than zero) and is woken:
    on a virtual machine each wake-up costs CPU of its own, so a streamed turn pays per wake-up, not only for its
    work. Wraps the selector of asyncio's selector event loop (the default on Linux)."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.count = 0
        selector = getattr(loop, "_selector", None)
        self.counting = selector is not None  # not on uvloop
        if selector is not None:
            select = selector.select

            def counting(timeout: float | None = None) -> Any:
                if timeout is None or timeout > 0:
                    self.count += 1
                return select(timeout)

            selector.select = counting


async def draft_cpu_ms(transport: TelegramTransport, chat: str, times: int = 20) -> float:
    """This process's CPU for one edit of a shown draft (the request to the fake Bot API and its answer), in ms."""
    message_id = await transport.show(chat, "draft")
    cpu = time.process_time()
    for index in range(times):
        await transport.revise(chat, message_id, f"draft {index}")
    return (time.process_time() - cpu) * 1000 / times


async def idle_wakeup_ms(times: int = 50, seconds: float = 0.005) -> float:
    """This process's CPU for one wake-up of an idle event loop (a sleep of 5 ms), in ms."""
    cpu = time.process_time()
    for _ in range(times):
        await asyncio.sleep(seconds)
    return (time.process_time() - cpu) * 1000 / times


async def streamed_turn(dialog: Dialog, sender: OutboxSender, transport: TelegramTransport, chat: str,
                        size: Streaming, into: StreamTurns | None, wakeups: Wakeups, *, streamed: bool) -> None:
    """One message answered through the dialog and delivered to the fake Bot API, shown while written or not."""
    inbound = Inbound(platform="telegram", platform_user_id=chat, chat_id=chat, message_id=uuid.uuid4().hex,
                      text=f"{SAY} {size.pieces} {size.piece_ms}")
    pace = Pace(first_after=size.every_ms / 1000, every=size.every_ms / 1000)
    live = LiveAnswer(transport, chat, pace=pace) if streamed else None
    woken, started, cpu = wakeups.count, time.perf_counter(), time.process_time()
    sent = await dialog.handle(inbound, live=live)
    await sender.deliver(chat)
    await dialog.settle()
    wall, cpu_ms = (time.perf_counter() - started) * 1000, (time.process_time() - cpu) * 1000
    assert len(sent) == 1 and sent[0].text.count("a few words") == size.pieces, sent
    if into is not None:
        into.wall_ms.append(wall)
        into.cpu_ms.append(cpu_ms)
        into.requests.append(live.requests if live is not None else 0)
        if wakeups.counting:
            into.wakeups.append(wakeups.count - woken)


async def measure_streaming(brain: Brain, companion: Companion, api_url: str,
                            size: Streaming) -> tuple[StreamTurns, StreamTurns]:
    """Part 3 (see the module docstring): streamed and plain turns, interleaved, after a warm-up of each."""
    brain.companion = companion
    dialog = Dialog(brain, default_locale="en", default_timezone="Europe/Berlin", access=AccessPolicy.open())
    bot = Bot(TOKEN, base_url=api_url, request=AiohttpRequest(connection_pool_size=8))
    await bot.initialize()
    sender = telegram_sender(brain, bot, max_rate=0)
    transport = sender.transport
    assert isinstance(transport, TelegramTransport)
    streamed, plain = StreamTurns(), StreamTurns()
    wakeups = Wakeups(asyncio.get_running_loop())
    chats = [str(8_000_000 + index) for index in range(max(1, size.turns // TURNS_PER_PERSON))]
    try:
        for index in range(len(chats) + min(WARMUP, size.turns)):  # each person's first message, then a warm-up
            chat = chats[index % len(chats)]
            await streamed_turn(dialog, sender, transport, chat, size, None, wakeups, streamed=True)
            await streamed_turn(dialog, sender, transport, chat, size, None, wakeups, streamed=False)
        streamed.load.append(load_average())
        for index in range(size.turns):
            chat = chats[index % len(chats)]
            await streamed_turn(dialog, sender, transport, chat, size, streamed, wakeups, streamed=True)
            await streamed_turn(dialog, sender, transport, chat, size, plain, wakeups, streamed=False)
        streamed.load.append(load_average())
        plain.load = streamed.load
        streamed.idle_wakeup_ms = await idle_wakeup_ms()
        streamed.draft_ms = await draft_cpu_ms(transport, chats[0])
    finally:
        await bot.shutdown()
        brain.companion = None
    return streamed, plain


Measured = tuple[Turns, Turns, Turns, Turns, Turns, Turns, Turns, StreamTurns, StreamTurns]


async def measure(url: str, fake_url: str, api_url: str, turns: int, tool_ms: float, rounds: int,
                  streaming: Streaming) -> Measured:
    db = Database(url)
    brain = build_brain(db, clock=SystemClock())
    sql = SqlCounter(db)
    brain.registry.register(read_tool(LOOKUP, 0))
    for name in READ_TOOLS:
        brain.registry.register(read_tool(name, tool_ms / 1000))
    llm = LLM(fake_url, {"primary": TierConfig("qwen3:4b"), "fast": TierConfig("qwen3:1.7b")}, timeout_s=10.0,
              keep_alive=True)  # as the app's client
    try:
        companion = Companion(brain, llm, CompanionConfig())
        freeze_startup_heap()  # as app.wiring.open_app does once the app is built
        count = max(1, turns // TURNS_PER_PERSON)
        readers, drinkers = await new_people(brain, count), await new_people(brain, count)
        lookup, drinks, first = Turns(), Turns(), Turns()
        first.load.append(load_average())
        for index, (reader, drinker) in enumerate(zip(readers, drinkers, strict=True)):
            # The first message of each person: the context document is built (shown as its own row).
            await timed_turn(companion, reader, (LOOKUP,), sql, first if index else None)
            await timed_turn(companion, drinker, ("log_drink",), sql, None)
        first.load.append(load_average())
        for index in range(WARMUP):
            await timed_turn(companion, readers[index % count], (LOOKUP,), sql, None)
            await timed_turn(companion, drinkers[index % count], ("log_drink",), sql, None)
        lookup.load.append(load_average())
        for index in range(turns):  # one of each, turn by turn
            await timed_turn(companion, readers[index % count], (LOOKUP,), sql, lookup)
            await timed_turn(companion, drinkers[index % count], ("log_drink",), sql, drinks)
        lookup.load.append(load_average())
        drinks.load = lookup.load
        # Three read tools in one round, in parallel and one after another, interleaved.
        parallel_companion = Companion(brain, llm, CompanionConfig())
        sequential_companion = Companion(brain, llm, CompanionConfig(max_parallel=1))
        [reader] = await new_people(brain, 1)
        parallel, sequential = Turns(), Turns()
        for index in range(rounds + 1):
            if index == 1:
                parallel.load.append(load_average())
            for target, which in ((parallel, parallel_companion), (sequential, sequential_companion)):
                await timed_turn(which, reader, READ_TOOLS, sql, target if index else None)  # first: warm-up
        parallel.load.append(load_average())
        sequential.load = parallel.load
        # The primary model told not to think (the default) and let think (OLLAMA_PRIMARY_THINK), interleaved.
        thinking_llm = LLM(fake_url, {"primary": TierConfig("qwen3:4b", think=True),
                                      "fast": TierConfig("qwen3:1.7b")}, timeout_s=10.0)
        thinking_companion = Companion(brain, thinking_llm, CompanionConfig())
        no_think, think = Turns(), Turns()
        for index in range(rounds + 1):
            for target, which in ((no_think, companion), (think, thinking_companion)):
                await timed_turn(which, reader, (LOOKUP,), sql, target if index else None)  # first: warm-up
        streamed, plain = await measure_streaming(brain, Companion(brain, llm, CompanionConfig()), api_url,
                                                  streaming)
    finally:
        await llm.aclose()
        await brain.close()
    return lookup, drinks, first, parallel, sequential, no_think, think, streamed, plain


# ---- the report ---------------------------------------------------------------------------------------------
def overhead(turns: Turns) -> list[float]:
    return [w - s for w, s in zip(turns.wall_ms, turns.server_ms, strict=True)]


def overhead_rows(turns: Turns, model_ms: float, tool_label: str) -> list[str]:
    nominal = [calls * model_ms for calls in turns.model_calls]
    client = [c - s for c, s in zip(turns.client_ms, turns.server_ms, strict=True)]
    rest = [w - c - t for w, c, t in zip(turns.wall_ms, turns.client_ms, turns.tool_ms, strict=True)]
    return [
        row("turn wall time", turns.wall_ms),
        row("fake server's own time (2 answers, reported)", turns.server_ms),
        row("overhead = wall - fake server's time", overhead(turns)),
        row("  model client, HTTP, fake server parsing", client),
        row(f"  tool call: gate + {tool_label}", turns.tool_ms),
        row("  prompt assembly, persistence, loop", rest),
        row(f"overhead against the nominal 2 x {model_ms:.0f} ms", [w - n for w, n in zip(turns.wall_ms, nominal,
                                                                                      strict=True)]),
        row("CPU time of the benchmark process", turns.cpu_ms),
        sql_row(turns),
    ]


def row(label: str, values: list[float]) -> str:
    return f"{label:<48}{statistics.mean(values):>9.1f}{statistics.median(values):>9.1f}{max(values):>9.1f}"


def sql_row(turns: Turns) -> str:
    statements, checkouts, commits = (statistics.mean(column) for column in zip(*turns.sql, strict=True))
    return f"  SQL per turn: {statements:.1f} statements, {checkouts:.1f} connection checkouts, {commits:.1f} commits"


def loads(turns: Turns | StreamTurns) -> str:
    return "load average " + " -> ".join(f"{value:.2f}" for value in turns.load)


def report(lookup: Turns, drinks: Turns, first: Turns, parallel: Turns, sequential: Turns, no_think: Turns,
           think: Turns, streamed: StreamTurns, plain: StreamTurns, model_ms: float, tool_ms: float, think_ms: float,
           streaming: Streaming) -> str:
    header = f"{'per turn, ms':<48}{'mean':>9}{'median':>9}{'max':>9}"
    par, seq = statistics.mean(parallel.tool_ms), statistics.mean(sequential.tool_ms)
    stream_cpu, plain_cpu = statistics.mean(streamed.cpu_ms), statistics.mean(plain.cpu_ms)
    stream_pct = (stream_cpu / plain_cpu - 1) * 100
    return "\n".join([
        f"fake model {model_ms:.0f} ms per call, {len(lookup.wall_ms)} turns per variant (tool round + answer), "
        f"{loads(lookup)}",
        header,
        f"a read tool without work of its own ({LOOKUP}):",
        *overhead_rows(lookup, model_ms, LOOKUP),
        "for reference, log_drink (insert, event, day progress, goal check, subscribers, context rebuilt):",
        *overhead_rows(drinks, model_ms, "log_drink"),
        f"for reference, the first message of a person ({LOOKUP}, context document built), {loads(first)}:",
        row("overhead = wall - fake server's time", overhead(first)),
        row("CPU time of the benchmark process", first.cpu_ms),
        "",
        f"{len(parallel.tool_ms)} turns per variant, three read tools of {tool_ms:.0f} ms in one round, "
        f"{loads(parallel)}",
        header,
        row("tool round, parallel (at most 10 at once)", parallel.tool_ms),
        row("tool round, one after another", sequential.tool_ms),
        row("turn wall time, parallel", parallel.wall_ms),
        row("turn wall time, one after another", sequential.wall_ms),
        row("CPU time per turn, parallel", parallel.cpu_ms),
        row("CPU time per turn, one after another", sequential.cpu_ms),
        "",
        f"{len(think.wall_ms)} turns per variant ({LOOKUP}), a thinking model that thinks {think_ms:.0f} ms per "
        "answer unless told not to",
        header,
        row("turn wall time, think: false (the default)", no_think.wall_ms),
        row("turn wall time, think: true (OLLAMA_PRIMARY_THINK)", think.wall_ms),
        row("CPU time per turn, think: false", no_think.cpu_ms),
        row("CPU time per turn, think: true", think.cpu_ms),
        f"think: false saves {statistics.mean(think.wall_ms) - statistics.mean(no_think.wall_ms):.1f} ms per turn",
        f"{len(streamed.cpu_ms)} turns per variant through the dialog and the Telegram delivery (fake Bot API), an "
        f"answer of {streaming.pieces} pieces {streaming.piece_ms:.0f} ms apart, shown after and edited at most "
        f"every {streaming.every_ms:.0f} ms; {loads(streamed)}",
        header,
        row("turn wall time, shown while written", streamed.wall_ms),
        row("turn wall time, sent when complete", plain.wall_ms),
        row("CPU time per turn, shown while written", streamed.cpu_ms),
        row("CPU time per turn, sent when complete", plain.cpu_ms),
        row("drafts per streamed turn (shown and edited)", [float(n) for n in streamed.requests]),
        *([row("event-loop wake-ups per turn, shown while written", [float(n) for n in streamed.wakeups]),
           row("event-loop wake-ups per turn, sent when complete", [float(n) for n in plain.wakeups])]
          if streamed.wakeups else ["event-loop wake-ups per turn: not counted (uvloop)"]),
        f"streaming costs {stream_pct:+.1f} % CPU per turn; on this machine one draft edit on its own costs "
        f"{streamed.draft_ms:.2f} ms CPU and one wake-up of an idle loop {streamed.idle_wakeup_ms:.2f} ms",
        f"RESULT overhead_ms={statistics.mean(overhead(lookup)):.1f} cpu_ms={statistics.mean(lookup.cpu_ms):.1f} "
        f"model_ms={model_ms:.0f} load={parallel.load[-1]:.2f} stream_cpu_ms={stream_cpu:.1f} "
        f"plain_cpu_ms={plain_cpu:.1f} stream_cpu_pct={stream_pct:.1f} "
        + (f"stream_wakeups={statistics.mean(streamed.wakeups):.1f} plain_wakeups={statistics.mean(plain.wakeups):.1f} "
           if streamed.wakeups else "") +
        f"parallel_ms={par:.1f} baseline={seq:.1f} ratio={seq / par:.2f}",
    ])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.companion", description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=50, help="measured chat turns per variant (default 50)")
    parser.add_argument("--model-ms", type=float, default=50.0, help="the fake model's latency per call")
    parser.add_argument("--tool-ms", type=float, default=100.0, help="each read tool's latency")
    parser.add_argument("--rounds", type=int, default=10, help="turns per variant of the parallel comparison")
    parser.add_argument("--think-ms", type=float, default=500.0,
                        help="how long the fake model thinks per answer when not told `think: false`")
    parser.add_argument("--stream-turns", type=int, default=30, help="turns per variant of the streaming comparison")
    parser.add_argument("--pieces", type=int, default=100, help="pieces of a streamed answer")
    parser.add_argument("--piece-ms", type=float, default=5.0, help="the fake model's time between two pieces")
    parser.add_argument("--stream-every-ms", type=float, default=100.0,
                        help="a streamed answer is first shown after this and edited at most this often")
    parser.add_argument("--event-loop", choices=("auto", "uvloop", "asyncio"), default="auto",
                        help="the event loop: auto (uvloop where installed, as `companion run` takes it), uvloop, "
                             "asyncio")
    add_common_options(parser)
    args = parse_sizes(parser, argv, QUICK)
    print(f"event loop: {'uvloop' if event_loop.uses_uvloop(args.event_loop) else 'asyncio'}")
    streaming = Streaming(args.stream_turns, args.pieces, args.piece_ms, args.stream_every_ms)
    with fake_model(args.model_ms / 1000, args.think_ms / 1000) as fake_url, fake_bot_api() as api_url, \
            bench_database(DATABASE, prefix="cbc", url=args.database_url) as database:
        results = event_loop.run(measure(database.url, fake_url, api_url, args.turns, args.tool_ms, args.rounds,
                                         streaming), args.event_loop)
    print(report(*results, args.model_ms, args.tool_ms, args.think_ms, streaming))
    return 0


if __name__ == "__main__":
    sys.exit(main())
