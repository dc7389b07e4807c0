"""Scale-out: two real `companion run` processes on one database serve one Telegram webhook URL. A small
round-robin proxy in the test is that URL (it posts each update to one process, alternating, and some to both,
as a load balancer and Telegram's retries would); each process talks to the fake Bot API through a tap of its
own, so the test knows which process sent what. Shown: every update is handled once, each person's messages are
handled and answered in their order although consecutive ones land in different processes, both processes
drain the outbox without sending a row twice, and exactly one scheduler leads, the other taking over within
the lock's poll interval when the leader is killed."""

from __future__ import annotations

import asyncio
import itertools
import os
import re
import shutil
import signal
import socket
import sys
import tempfile
import time
import uuid
from collections import Counter, defaultdict
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from aiohttp import web
from sqlalchemy import func, select, text

from adapters.telegram.webhook import SECRET_HEADER
from bot.models import InboxUpdate as TelegramInboxUpdate
from bot.scheduler.leader import LOCK_KEY
from brain.core import Brain
from brain.modules.todo.models import Task
from brain.outbox.models import TURN_KINDS, Outbound, OutboxMessage
from brain.outbox.service import enqueue
from brain.people.models import Identity
from tests.telegram.fake_bot_api import TOKEN, FakeBotAPI, Person

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
HOOK_URL = "https://companion.example.test/telegram/hook"
SECRET = "scale-out-shared-secret"
LOCK_POLL_S = 1.0
PEOPLE = 8
MESSAGES = 20
PUSHES = 5  # per person
LEADS = "scheduler: this process leads now"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


async def serve(app: web.Application) -> tuple[web.AppRunner, int]:
    runner = web.AppRunner(app, access_log=None, shutdown_timeout=1.0)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    server = site._server
    assert server is not None
    return runner, int(server.sockets[0].getsockname()[1])  # type: ignore[attr-defined]


@dataclass
class BotApiTap:
    """One process's way to the fake Bot API: forwards every call and notes the messages it sent."""

    label: str
    target: str
    sent: list[tuple[str, str]] = field(default_factory=list)  # (chat id, text) of sendMessage
    port: int = 0

    async def start(self, http: aiohttp.ClientSession) -> web.AppRunner:
        async def forward(request: web.Request) -> web.Response:
            body = await request.read()
            headers = {"Content-Type": request.headers.get("Content-Type", "application/octet-stream")}
            async with http.request(request.method, f"{self.target}{request.path_qs}", data=body,
                                    headers=headers) as answer:
                payload = await answer.read()
                if request.path.endswith("/sendMessage") and answer.status == 200:
                    form = await request.post()
                    self.sent.append((str(form.get("chat_id")), str(form.get("text"))))
                return web.Response(body=payload, status=answer.status, content_type=answer.content_type)

        app = web.Application(client_max_size=20 * 1024 * 1024)
        app.router.add_route("*", "/{tail:.*}", forward)
        runner, self.port = await serve(app)
        return runner

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"


@dataclass
class Balancer:
    """The webhook URL: posts update n to backend n % 2 (round robin), and every fifth to both at once."""

    backends: list[str]
    routed: dict[int, set[int]] = field(default_factory=lambda: defaultdict(set))  # update id -> backends
    turn: itertools.count[int] = field(default_factory=itertools.count)
    port: int = 0

    async def start(self, http: aiohttp.ClientSession) -> web.AppRunner:
        async def one(index: int, body: bytes, secret: str) -> int:
            async with http.post(self.backends[index], data=body,
                                 headers={SECRET_HEADER: secret, "Content-Type": "application/json"}) as answer:
                return answer.status

        async def hook(request: web.Request) -> web.Response:
            body = await request.read()
            update_id = int((await request.json())["update_id"])
            first = next(self.turn) % 2
            targets = [0, 1] if update_id % 5 == 0 else [first]
            self.routed[update_id].update(targets)
            statuses = await asyncio.gather(*(one(i, body, request.headers.get(SECRET_HEADER, ""))
                                              for i in targets))
            return web.Response(status=max(statuses))

        app = web.Application()
        app.router.add_post("/telegram/hook", hook)
        runner, self.port = await serve(app)
        return runner

    async def post(self, http: aiohttp.ClientSession, update: dict[str, Any]) -> None:
        """Posts as Telegram does (with the secret that setWebhook registered)."""
        async with http.post(f"http://127.0.0.1:{self.port}/telegram/hook", json=update,
                             headers={SECRET_HEADER: SECRET}) as answer:
            assert answer.status == 200


@dataclass
class BotProcess:
    label: str
    process: asyncio.subprocess.Process
    log: Path

    def leads(self) -> bool:
        return LEADS in self.log.read_text(errors="replace")


@pytest.fixture
async def http() -> AsyncIterator[aiohttp.ClientSession]:
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=200)) as session:
        yield session


async def start_bot(label: str, database_url: str, bot_api: str, port: int, workdir: Path) -> BotProcess:
    data_dir = workdir / label
    data_dir.mkdir()
    log = workdir / f"{label}.log"
    env = {**os.environ, "TELEGRAM_TOKEN": TOKEN, "TELEGRAM_BASE_URL": bot_api, "DATABASE_URL": database_url,
           "COMPANION_DATA_DIR": str(data_dir), "LOG_LEVEL": "INFO", "PULSE_TICK_SECONDS": "3600",
           "COMPANION_LLM": "false", "TELEGRAM_WEBHOOK_URL": HOOK_URL,
           "TELEGRAM_WEBHOOK_LISTEN": f"127.0.0.1:{port}", "TELEGRAM_WEBHOOK_SECRET": SECRET,
           "SCHEDULER_LOCK_POLL_SECONDS": str(LOCK_POLL_S), "TELEGRAM_MAX_MESSAGES_PER_SECOND": "0"}
    with log.open("wb") as sink:
        process = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "app.cli", "run", cwd=ROOT, env=env, stdin=asyncio.subprocess.DEVNULL,
            stdout=sink, stderr=sink)
    return BotProcess(label, process, log)


async def until(check: Any, within: float, what: str) -> float:
    """Polls `check()` (sync or async) every 50 ms; returns the seconds it took."""
    start = time.monotonic()
    while True:
        result = check()
        if asyncio.iscoroutine(result):
            result = await result
        if result:
            return time.monotonic() - start
        if time.monotonic() - start > within:
            raise AssertionError(f"timed out after {within} s waiting for {what}")
        await asyncio.sleep(0.05)


async def scheduler_lock_holders(brain: Brain) -> list[int]:
    """Backend pids holding the scheduler's advisory lock in this database."""
    async with brain.db.engine.connect() as connection:
        rows = await connection.execute(text(
            "SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND granted AND objsubid = 1"
            " AND classid::bigint = :high AND objid::bigint = :low"
            " AND database = (SELECT oid FROM pg_database WHERE datname = current_database())"),
            {"high": LOCK_KEY >> 32, "low": LOCK_KEY & 0xFFFFFFFF})
        return [int(pid) for (pid,) in rows]


def task_update(update_id: int, who: Person, number: int) -> dict[str, Any]:
    return {"update_id": update_id,
            "message": {"message_id": update_id, "date": int(time.time()), "chat": who.chat, "from": who.user,
                        "text": f"/task t-{number}",
                        "entities": [{"type": "bot_command", "offset": 0, "length": 5}]}}


def numbers_in(texts: list[str]) -> list[int]:
    return [int(m.group(1)) for t in texts for m in [re.search(r"\bt-(\d+)\b", t)] if m]


async def test_two_processes_share_one_webhook(api: FakeBotAPI, brain: Brain, database_url: str,
                                               http: aiohttp.ClientSession) -> None:
    workdir = Path(tempfile.mkdtemp(prefix="scale", dir="/tmp"))
    taps = [BotApiTap("a", api.base_url), BotApiTap("b", api.base_url)]
    ports = [free_port(), free_port()]
    balancer = Balancer([f"http://127.0.0.1:{port}/telegram/hook" for port in ports])
    servers = [await tap.start(http) for tap in taps] + [await balancer.start(http)]
    bots = [await start_bot(tap.label, database_url, tap.url, port, workdir) for tap, port in zip(taps, ports,
                                                                                                    strict=True)]
    try:
        await api.wait_for("setWebhook", count=2, within=240)  # two processes start: slow on a loaded machine
        assert {call.params["url"] for call in api.calls_of("setWebhook")} == {HOOK_URL}

        # (d) one scheduler leads: one holder of the lock, one process saying so.
        await until(lambda: any(bot.leads() for bot in bots), 15, "a scheduler to lead")
        assert len(await scheduler_lock_holders(brain)) == 1
        assert sum(bot.leads() for bot in bots) == 1

        # (a, b) eight people each send /task t-1 .. t-20 in quick succession (each waits only for the webhook's
        # 200); consecutive messages of one person go to different processes, every fifth update to both.
        people = [Person(9100 + n, f"P{n}") for n in range(PEOPLE)]
        ids = itertools.count(1)
        sent_ids: dict[int, list[int]] = defaultdict(list)

        async def write(who: Person) -> None:
            for number in range(1, MESSAGES + 1):
                update_id = next(ids)
                sent_ids[who.id].append(update_id)
                await balancer.post(http, task_update(update_id, who, number))

        await asyncio.gather(*(write(who) for who in people))
        for who in people:
            await api.wait_for("sendMessage", chat_id=who.id, count=MESSAGES, within=60)
            assert {b for u in sent_ids[who.id] for b in balancer.routed[u]} == {0, 1}  # both got its messages
        # Telegram retries a few handled updates later: no second effect.
        for who in people[:3]:
            await balancer.post(http, task_update(sent_ids[who.id][0], who, 1))
        assert sum(len(routed) == 2 for routed in balancer.routed.values()) >= 30

        async def inbox_empty() -> bool:
            async with brain.transactions.read() as session:
                return await session.scalar(select(func.count()).select_from(TelegramInboxUpdate)) == 0

        await until(inbox_empty, 10, "the inbox to be empty")
        await asyncio.sleep(0.5)  # a reply to a retry would be on its way now

        for who in people:
            replies = [call.text for call in api.calls_of("sendMessage", who.id)]
            # (a) one reply per update, (b) in the order the person wrote.
            assert numbers_in(replies) == list(range(1, MESSAGES + 1)), replies
        async with brain.transactions.read() as session:
            for who in people:
                titles = (await session.scalars(
                    select(Task.title).join(Identity, Identity.user_id == Task.user_id)
                    .where(Identity.platform == "telegram", Identity.platform_id == str(who.id))
                    .order_by(Task.created_at))).all()
                assert list(titles) == [f"t-{n}" for n in range(1, MESSAGES + 1)]  # once each, in order

        # (c) pushes for everybody, in waves half a second apart: both processes' background senders (every 2 s)
        # race for them; each row goes out once.
        async with brain.transactions.read() as session:
            users = (await session.scalars(select(Identity.user_id).where(Identity.platform == "telegram"))).all()
        pushes = [f"push {n} for {user}" for n in range(PUSHES) for user in users]
        for wave in range(PUSHES):
            async with brain.transactions.begin() as uow:
                for body in pushes[wave * len(users):(wave + 1) * len(users)]:
                    user = uuid.UUID(body.rsplit(" ", 1)[1])
                    await enqueue(uow.session, user, Outbound(text=body), kind="test_push", slot=body)
            await asyncio.sleep(0.5)
        await until(lambda: sum(1 for call in api.calls_of("sendMessage") if call.text.startswith("push ")) >=
                    len(pushes), 30, "the pushes")
        await asyncio.sleep(1.0)  # a double send would come now
        sent = Counter((call.chat_id, call.text) for call in api.calls_of("sendMessage"))
        assert all(count == 1 for count in sent.values()), [t for t, c in sent.items() if c > 1]
        # The test's own rows: the replies and the pushes (the scheduler may add a push of its own, e.g. a morning
        # summary due at this time of day, which is not what this counts).
        async with brain.transactions.read() as session:
            statuses = Counter((await session.scalars(select(OutboxMessage.status).where(
                OutboxMessage.kind.in_([*TURN_KINDS, "test_push"])))).all())
        assert statuses == {"sent": PEOPLE * MESSAGES + len(pushes)}
        assert sum(1 for call in api.calls_of("sendMessage") if call.text.startswith("push ")) == len(pushes)
        by_process = {tap.label: len(tap.sent) for tap in taps}
        assert all(count > 0 for count in by_process.values()), by_process
        print(f"messages sent by process: {by_process}; pushes: "
              f"{ {tap.label: sum(t.startswith('push ') for _, t in tap.sent) for tap in taps} }")

        # (d) the leader dies without a word: the other takes the lock within its poll interval.
        (leader,) = [bot for bot in bots if bot.leads()]
        (other,) = [bot for bot in bots if bot is not leader]
        before = await scheduler_lock_holders(brain)
        leader.process.send_signal(signal.SIGKILL)
        await leader.process.wait()
        took = await until(other.leads, 10, "the other scheduler to lead")
        after = await scheduler_lock_holders(brain)
        assert len(after) == 1 and after != before
        print(f"scheduler take-over after SIGKILL of the leader: {took:.2f} s (poll interval {LOCK_POLL_S} s)")
        assert took <= LOCK_POLL_S + 1.0
    finally:
        for bot in bots:
            if bot.process.returncode is None:
                bot.process.send_signal(signal.SIGTERM)
        for bot in bots:
            try:
                await asyncio.wait_for(bot.process.wait(), timeout=20)
            except TimeoutError:
                bot.process.kill()
                await bot.process.wait()
        for server in servers:
            await server.cleanup()
        logs = {bot.label: bot.log.read_text(errors="replace") for bot in bots}
        shutil.rmtree(workdir, ignore_errors=True)
    for label, content in logs.items():
        assert " ERROR " not in content and "Traceback" not in content, f"process {label}:\n{content[-3000:]}"
