"""The crash harness: the real bot process (`python -m app.cli run`, Telegram through the fake Bot API, the
scheduler and memory promotion inside) is killed with SIGKILL at random moments while several people write to
it, restarted, and finally stopped cleanly; then the database and the fake server's record of calls are checked.

Used by `tests/reliability/test_crash.py` (a few kills) and `benchmarks/crash.py` (30 and more). Traffic per
person, one message at a time: drink logs, tasks and meals with a unique amount or title (so each reply names
exactly one write), /remember notes, free text that makes the (fake) model propose a task whose Approve button is
then pressed twice, presses of the "log water" button under water nudges, and at the start /morning and /evening
set to minutes that come during the run (scheduled pushes with a slot key). Updates written while the bot is down
wait at the fake Bot API, as they wait at Telegram.

Invariants (`_check`): every acknowledged write is in its table with its event, and nothing is there twice; no
record without its creation event and no such event without its record; every outbox row is sent at most once
(each sendMessage maps to at most one row) and none is left pending; every push slot that came due is in the
outbox once and arrived once; no proposal ran twice and no button wrote twice; no short-term memory left pending.

Two outcomes are by design and counted apart, not as violations: a message taken by a process that is killed
before it answered gets no answer (updates are taken at most once, bot/updates.py), and a reply
whose send was in flight at the kill is not sent again after the restart but marked failed, its outcome
unknown (bot/delivery/sender.py; `unsent_after_kill`). Any send of one row twice is a violation.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import math
import os
import random
import shutil
import signal
import sys
import tempfile
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import psycopg

from adapters.telegram.render import render
from brain.events.catalog import DrinkLogged, MealLogged, TaskCreated
from brain.outbox.models import Button, Outbound
from brain.store.embedded import to_libpq_url
from tests.fakes.ollama_server import FakeOllama, Script, call
from tests.telegram.fake_bot_api import TOKEN, Call, FakeBotAPI, Person

ROOT = Path(__file__).resolve().parents[2]
# Zones tried for the people, first one whose local time is between 09:00 and 19:00 (no quiet hours, water
# nudges inside their 08:00-21:00 window).
ZONES = ("Europe/Berlin", "Asia/Tokyo", "America/New_York", "Asia/Kolkata", "America/Los_Angeles",
         "Pacific/Auckland", "Asia/Dubai", "America/Sao_Paulo", "Pacific/Honolulu", "UTC")
PROPOSE = "please add task "
REMEMBERED = "I'll remember that."
IN_FLIGHT_AT_STOP = "outcome unknown: the process stopped"  # bot/delivery/sender.py
KINDS = ("drink", "task", "meal", "remember", "proposal", "nudge")
WEIGHTS = dict(zip(KINDS, (5, 3, 3, 2, 2, 1), strict=True))
# What people do that the memory captures: with these, a run settles only after the bot's next promotion, which runs
# once a minute.
REMEMBERED_KINDS = ("remember", "proposal")
WORDS = ("harbour", "violin", "cedar", "lantern", "quartz", "meadow", "copper", "falcon", "orchid", "glacier",
         "saffron", "tundra", "walnut", "ember", "marble", "pepper", "canyon", "willow", "cobalt", "thistle")


@dataclass
class CrashConfig:
    database_url: str
    kills: int = 3
    seed: int = 1
    people: int = 4
    kill_after: tuple[float, float] = (0.5, 4.0)  # random delay (s) from "ready" to the kill
    down_for: tuple[float, float] = (0.0, 1.0)  # random pause before the restart
    # How long a person waits for a reply before writing the next message (a message taken by a process that is
    # killed before it answers gets none: updates are processed at most once, see bot/updates.py).
    reply_within: float = 12.0
    # Deadlines, not expectations (a run ends as soon as it settles): a loaded machine restarts and promotes slowly.
    settle_within: float = 300.0  # after the clean restart: outbox drained, slots sent, memory promoted
    slot_spacing_minutes: int = 1  # pushes at consecutive minutes from the first whole minute 15 s ahead
    # How many push minutes (morning and evening per person, spread over them); 0: no pushes, for a quick run that
    # cannot wait for the next minute to come.
    slots: int = 2
    kinds: tuple[str, ...] = KINDS  # what the people do (a quick run leaves out REMEMBERED_KINDS)
    log: Callable[[str], None] = lambda line: None


@dataclass
class Sent:
    person: int
    kind: str
    key: str  # the unique part (ml, title, note); the proposal's task title
    text: str
    at: float


@dataclass
class CrashReport:
    kills: int = 0
    seconds: float = 0.0
    restart_s: list[float] = field(default_factory=list)
    sent: Counter[str] = field(default_factory=Counter)
    acknowledged: Counter[str] = field(default_factory=Counter)
    unanswered: int = 0  # writes sent whose acknowledgement never came (lost with a kill, before any write)
    silent_writes: int = 0  # written, but the acknowledgement never came
    lost: list[str] = field(default_factory=list)  # acknowledged writes not (or not whole) in the database
    doubled: list[str] = field(default_factory=list)  # a write, a send, a slot or a proposal twice
    # A row whose send was in flight at a kill: failed after the restart, outcome unknown, not sent again
    # (bot/delivery/sender.py); counted apart.
    unsent_after_kill: list[str] = field(default_factory=list)
    unsent_arrived: int = 0  # of those, how many had reached Telegram before the kill (the rest: replies lost)
    kill_at: list[float] = field(default_factory=list)  # time.monotonic() of each SIGKILL
    orphans: list[str] = field(default_factory=list)  # a record without its event or an event without its record
    slots_due: int = 0
    slots_lost: list[str] = field(default_factory=list)
    memory_pending: int = 0
    memory_promoted: int = 0
    outbox_rows: int = 0
    outbox_pending: int = 0
    outbox_failed: list[str] = field(default_factory=list)
    sends: int = 0
    nudges: int = 0
    proposals_approved: int = 0
    errors_logged: int = 0
    error_lines: list[str] = field(default_factory=list)  # the first ERROR lines of the bot log, with tracebacks

    @property
    def violations(self) -> list[str]:
        return [*self.lost, *self.doubled, *self.orphans, *self.slots_lost,
                *([f"{self.memory_pending} short-term memories still pending"] if self.memory_pending else []),
                *([f"{self.outbox_pending} outbox rows still pending"] if self.outbox_pending else [])]

    def summary(self) -> str:
        return (f"kills={self.kills} acknowledged={sum(self.acknowledged.values())} lost={len(self.lost)} "
                f"doubled={len(self.doubled)} unsent_after_kill={len(self.unsent_after_kill)} "
                f"unsent_arrived={self.unsent_arrived} "
                f"orphans={len(self.orphans)} slots={self.slots_due} "
                f"slots_lost={len(self.slots_lost)} memory_pending={self.memory_pending} "
                f"unanswered={self.unanswered} seconds={self.seconds:.1f}")


# ---- the bot process ------------------------------------------------------------------------------------------
class BotProcess:
    """`python -m app.cli run` with the given environment; its output goes to a log file."""

    def __init__(self, env: dict[str, str], log_path: Path, api: FakeBotAPI) -> None:
        self.env = env
        self.log_path = log_path
        self.api = api
        self.process: asyncio.subprocess.Process | None = None
        self.starts = 0

    async def start(self, within: float = 240.0) -> float:
        """Starts the process and waits until it polls the fake Bot API; returns the seconds that took."""
        begin = time.monotonic()
        log = self.log_path.open("ab")
        try:
            self.process = await asyncio.create_subprocess_exec(
                sys.executable, "-m", "app.cli", "run", cwd=ROOT, env=self.env, stdin=asyncio.subprocess.DEVNULL,
                stdout=log, stderr=log, start_new_session=True)
        finally:
            log.close()
        self.starts += 1
        await self.api.wait_for("getUpdates", where=lambda c: c.at >= begin, within=within)
        return time.monotonic() - begin

    async def kill(self) -> None:
        assert self.process is not None
        with contextlib.suppress(ProcessLookupError):
            self.process.send_signal(signal.SIGKILL)
        await self.process.wait()

    async def stop(self, within: float = 30.0) -> int:
        """SIGTERM and wait: the clean stop."""
        assert self.process is not None
        if self.process.returncode is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                await asyncio.wait_for(self.process.wait(), timeout=within)
            except TimeoutError:
                await self.kill()
        return int(self.process.returncode or 0)

    async def ensure_dead(self) -> None:
        if self.process is not None and self.process.returncode is None:
            await self.kill()


def bot_environment(api: FakeBotAPI, database_url: str, data_dir: Path, model_url: str, zone: str,
                    ) -> dict[str, str]:
    return {**os.environ, "TELEGRAM_TOKEN": TOKEN, "TELEGRAM_BASE_URL": api.base_url, "DATABASE_URL": database_url,
            "COMPANION_DATA_DIR": str(data_dir), "LOG_LEVEL": "WARNING", "OLLAMA_HOST": model_url,
            "DEFAULT_TIMEZONE": zone, "DEFAULT_LOCALE": "en",
            # Nudges as often as the pulse allows, sent at once (nobody is "mid-conversation").
            "PULSE_TICK_SECONDS": "5", "IDLE_HOLD_MINUTES": "0", "SCHEDULER_LOCK_POLL_SECONDS": "0.5",
            "TELEGRAM_MAX_MESSAGES_PER_SECOND": "0"}


def daytime_zone(now: datetime) -> str:
    for name in ZONES:
        if 9 <= now.astimezone(ZoneInfo(name)).hour < 19:
            return name
    return "UTC"


def model_answer(body: dict[str, Any]) -> Script:
    """The fake model: "please add task X" -> a create_task call (the gate turns it into a proposal); after the
    tool result a short answer; anything else "OK."."""
    messages = [m for m in body.get("messages", []) if m.get("role") != "system"]
    last = messages[-1] if messages else {}
    if last.get("role") == "tool":
        return Script(content="I proposed it.")
    text = str(last.get("content") or "")
    if PROPOSE in text:
        return Script(tool_calls=[call("create_task", title=text.split(PROPOSE, 1)[1].strip())])
    return Script(content="OK.")


# ---- traffic --------------------------------------------------------------------------------------------------
class Traffic:
    """Several people, each writing one message at a time until `stop`."""

    def __init__(self, api: FakeBotAPI, people: list[Person], rng: random.Random, reply_within: float,
                 kinds: Sequence[str] = KINDS) -> None:
        self.api = api
        self.people = people
        self.rng = rng
        self.reply_within = reply_within
        self.kinds = list(kinds)
        self.weights = [WEIGHTS[kind] for kind in kinds]
        self.sent: list[Sent] = []
        self.pressed_nudges: set[str] = set()  # "chat:message id" of nudges whose water button was pressed
        self._counter: Counter[tuple[int, str]] = Counter()

    def _next(self, who: Person, kind: str) -> int:
        self._counter[(who.id, kind)] += 1
        return self._counter[(who.id, kind)]

    async def run(self, stop: asyncio.Event) -> None:
        await asyncio.gather(*(self._person(who, stop) for who in self.people))

    async def _person(self, who: Person, stop: asyncio.Event) -> None:
        while not stop.is_set():
            kind = self.rng.choices(self.kinds, self.weights)[0]
            await getattr(self, f"_{kind}")(who)
            await asyncio.sleep(self.rng.uniform(0.0, 0.2))

    async def _write(self, who: Person, kind: str, key: str, text: str, reply: str) -> None:
        self.sent.append(Sent(who.id, kind, key, text, time.monotonic()))
        before = len(self.api.calls_of("sendMessage", who.id))
        self.api.push(self.api.text(who, text))
        await self._wait(who, before, lambda c: reply in c.text)

    async def _wait(self, who: Person, before: int, matching: Callable[[Call], bool]) -> Call | None:
        deadline = time.monotonic() + self.reply_within
        while time.monotonic() < deadline:
            calls = self.api.calls_of("sendMessage", who.id)[before:]
            found = next((c for c in calls if matching(c)), None)
            if found is not None:
                return found
            with contextlib.suppress(TimeoutError):
                await self.api.wait_for("sendMessage", chat_id=who.id, count=len(calls) + before + 1,
                                        within=max(0.01, min(1.0, deadline - time.monotonic())))
        return None

    async def _drink(self, who: Person) -> None:
        ml = 100 + self._next(who, "drink")  # unique per person: the reply names it
        await self._write(who, "drink", str(ml), f"/drink tea {ml}", f"Logged {ml} ml tea.")

    async def _task(self, who: Person) -> None:
        title = f"crash-{who.id}-{self._next(who, 'task')}"
        await self._write(who, "task", title, f"/task {title}", f"Added the task {title}.")

    async def _meal(self, who: Person) -> None:
        name = f"Soup-{who.id}-{self._next(who, 'meal')}"
        await self._write(who, "meal", name, f"/meal lunch {name} 450 kcal", f"Logged lunch: {name}.")

    async def _remember(self, who: Person) -> None:
        n = self._next(who, "remember")
        words = " ".join(self.rng.sample(WORDS, 3))
        note = f"note {who.id}-{n}: the {words} of day {n}"
        await self._write(who, "remember", note, f"/remember {note}", REMEMBERED)

    async def _proposal(self, who: Person) -> None:
        title = f"prop-{who.id}-{self._next(who, 'proposal')}"
        self.sent.append(Sent(who.id, "proposal", title, PROPOSE + title, time.monotonic()))
        before = len(self.api.calls_of("sendMessage", who.id))
        self.api.push(self.api.text(who, PROPOSE + title))
        card = await self._wait(who, before, lambda c: f"title: {title})" in c.text and bool(c.buttons()))
        if card is None:
            return
        approve = card.buttons().get("Approve")
        if approve is None:
            return
        before = len(self.api.calls_of("sendMessage", who.id))
        # A double click: the second press must find the proposal decided.
        self.api.push(self.api.press(who, approve, card))
        self.api.push(self.api.press(who, approve, card))
        await self._wait(who, before, lambda c: f"Added the task {title}." in c.text)

    async def _nudge(self, who: Person) -> None:
        """Presses "Log 250 ml water" under the newest water nudge not pressed yet, twice."""
        for nudge in reversed(self.api.calls_of("sendMessage", who.id)):
            key = f"{who.id}:{nudge.params.get('_message_id')}"
            label = next((label for label in nudge.buttons() if label.startswith("Log ")), None)
            if label is None or key in self.pressed_nudges:
                continue
            self.pressed_nudges.add(key)
            before = len(self.api.calls_of("sendMessage", who.id))
            self.api.push(self.api.press(who, nudge.buttons()[label], nudge))
            self.api.push(self.api.press(who, nudge.buttons()[label], nudge))
            await self._wait(who, before, lambda c: c.text.startswith("Logged 250 ml water"))
            return


# ---- the run --------------------------------------------------------------------------------------------------
async def run_crashes(config: CrashConfig) -> CrashReport:
    """Starts the bot, drives traffic, kills and restarts it `config.kills` times, stops it cleanly, lets it
    settle and checks the invariants."""
    report = CrashReport()
    rng = random.Random(config.seed)
    began = time.monotonic()
    api = await FakeBotAPI().start()
    model = FakeOllama(default=model_answer)
    model_url = await model.start()
    data_dir = Path(tempfile.mkdtemp(prefix="crash", dir="/tmp"))
    zone = daytime_zone(datetime.now(UTC))
    bot = BotProcess(bot_environment(api, config.database_url, data_dir, model_url, zone), data_dir / "bot.log", api)
    people = [Person(880_000 + i * 7, f"P{i}", "en") for i in range(config.people)]
    traffic = Traffic(api, people, rng, config.reply_within, config.kinds)
    slots: list[tuple[Person, str, datetime]] = []
    try:
        report.restart_s.append(await bot.start())
        slots = await _set_pushes(api, people, zone, config)
        until = f" until {max(at for _, _, at in slots):%H:%M:%S} UTC" if slots else ""
        config.log(f"bot up in {report.restart_s[0]:.1f} s; zone {zone}; {len(slots)} push slots{until}")
        stop = asyncio.Event()
        driving = asyncio.create_task(traffic.run(stop))
        for n in range(config.kills):
            await asyncio.sleep(rng.uniform(*config.kill_after))
            report.kill_at.append(time.monotonic())
            await bot.kill()
            report.kills += 1
            await asyncio.sleep(rng.uniform(*config.down_for))
            report.restart_s.append(await bot.start())
            config.log(f"kill {n + 1}/{config.kills}: restarted in {report.restart_s[-1]:.1f} s, "
                       f"{len(traffic.sent)} messages so far")
        # A little traffic on the last process, then everyone stops writing and the bot settles.
        await asyncio.sleep(rng.uniform(*config.kill_after))
        stop.set()
        await driving
        config.log(f"traffic stopped after {len(traffic.sent)} messages; settling")
        await _settle(api, config, slots)
        config.log("settled; stopping the bot")
        code = await bot.stop()
        if code != 0:
            report.doubled.append(f"clean stop exited with {code}")  # not a double, but never silent
        report.seconds = time.monotonic() - began
        await _check(config, api, traffic, slots, report)
        errors = _errors_in(data_dir / "bot.log")
        report.errors_logged, report.error_lines = len(errors), errors[:3]
        return report
    finally:
        await bot.ensure_dead()
        await model.stop()
        await api.stop()
        if os.environ.get("CRASH_KEEP_LOG"):
            config.log(f"bot log kept in {data_dir}")
        else:
            shutil.rmtree(data_dir, ignore_errors=True)


async def _set_pushes(api: FakeBotAPI, people: list[Person], zone: str, config: CrashConfig,
                      ) -> list[tuple[Person, str, datetime]]:
    """Before any kill: each person's morning summary and evening reflection at minutes that come during the run
    (spread over `config.slots` minutes). Returns (person, kind, UTC time) of each."""
    now = datetime.now(UTC)
    first = (now + timedelta(seconds=15)).replace(second=0, microsecond=0) + timedelta(minutes=1)
    if not config.slots:
        return []
    minutes = [first + timedelta(minutes=i * config.slot_spacing_minutes) for i in range(config.slots)]
    found: list[tuple[Person, str, datetime]] = []
    for i, who in enumerate(people):
        for j, (command, kind) in enumerate((("morning", "morning_summary"), ("evening", "evening_reflection"))):
            at = minutes[(2 * i + j) % len(minutes)]
            # Setting the pushes takes a while on a loaded machine: a minute that is (nearly) over when its command
            # is sent would be read as tomorrow's, so such a push moves to the next minute still to come.
            soon = (datetime.now(UTC) + timedelta(seconds=30)).replace(second=0, microsecond=0) + timedelta(minutes=1)
            at = max(at, soon)
            local = at.astimezone(ZoneInfo(zone))
            before = len(api.calls_of("sendMessage", who.id))
            api.push(api.text(who, f"/{command} {local:%H:%M}"))
            await api.wait_for("sendMessage", chat_id=who.id, count=before + 1, within=30)
            # The time written is the time set, whatever the hour ("/evening 10:25" once became 22:25).
            said = api.calls_of("sendMessage", who.id)[before].text
            meant = f"{local:%-I:%M}\u202f{local:%p}"
            assert meant in said, f"/{command} {local:%H:%M} answered {said!r}"
            found.append((who, kind, at))
    return found


async def _settle(api: FakeBotAPI, config: CrashConfig, slots: list[tuple[Person, str, datetime]]) -> None:
    """Waits (with the bot running) until the last push minute passed and its run had time, nothing is pending in
    the outbox and no short-term memory waits for promotion — or `settle_within` passed."""
    last_slot = max((at for _, _, at in slots), default=None)
    deadline = time.monotonic() + config.settle_within
    uri = to_libpq_url(config.database_url)
    while time.monotonic() < deadline:
        if last_slot is None or datetime.now(UTC) > last_slot + timedelta(seconds=10):
            async with await psycopg.AsyncConnection.connect(uri, autocommit=True) as conn:
                pending = await _scalar(conn, "SELECT count(*) FROM outbox WHERE status = 'pending'")
                memory = await _scalar(conn, "SELECT count(*) FROM memory_short_term WHERE status = 'pending'")
                pushes = await _scalar(conn, "SELECT count(*) FROM outbox WHERE kind IN "
                                             "('morning_summary', 'evening_reflection')")
            if not pending and not memory and pushes >= len(slots):
                return
        await asyncio.sleep(1.0)


async def _scalar(conn: psycopg.AsyncConnection[Any], sql: str, params: tuple[Any, ...] = ()) -> int:
    row = await (await conn.execute(sql, params)).fetchone()
    return int(row[0]) if row and row[0] is not None else 0


def _errors_in(log_path: Path) -> list[str]:
    """The bot log's ERROR lines, each with the traceback lines after it (the log is gone after the run)."""
    with contextlib.suppress(OSError):
        lines = log_path.read_text(errors="replace").splitlines()
        found: list[str] = []
        for i, line in enumerate(lines):
            if " ERROR " in line:
                after = itertools.takewhile(lambda follow: not follow[:4].isdigit(), lines[i + 1:i + 40])
                found.append("\n".join([line, *after]))
        return found
    return []


# ---- the invariants -------------------------------------------------------------------------------------------
async def _check(config: CrashConfig, api: FakeBotAPI, traffic: Traffic,
                 slots: list[tuple[Person, str, datetime]], report: CrashReport) -> None:
    sends = [c for c in api.calls if c.method in ("sendMessage", "sendPhoto")]
    report.sends = len(sends)
    by_chat: dict[str, list[Call]] = defaultdict(list)
    for c in sends:
        by_chat[str(c.chat_id)].append(c)
    async with await psycopg.AsyncConnection.connect(to_libpq_url(config.database_url), autocommit=True) as conn:
        users = {platform_id: user_id for user_id, platform_id in await (await conn.execute(
            "SELECT user_id, platform_id FROM identities WHERE platform = 'telegram'")).fetchall()}
        await _check_writes(conn, traffic, by_chat, users, report)
        repeated: Counter[tuple[str, str]] = Counter()  # no send may repeat: none is excused
        await _check_outbox(conn, by_chat, repeated, report)
        await _check_slots(conn, slots, by_chat, users, repeated, report)
        await _check_buttons_and_memory(conn, traffic, users, repeated, report)


def _acked(chat: list[Call], reply: str) -> int:
    return sum(1 for c in chat if reply in c.text)


async def _check_writes(conn: psycopg.AsyncConnection[Any], traffic: Traffic, by_chat: dict[str, list[Call]],
                        users: dict[str, Any], report: CrashReport) -> None:
    tables = {  # kind -> (table, column with the unique key, creation event, reply)
        "drink": ("drink_entries", "quantity_ml::text", DrinkLogged.event_type(), "Logged {} ml tea."),
        "task": ("tasks", "title", TaskCreated.event_type(), "Added the task {}."),
        "meal": ("meals", "description", MealLogged.event_type(), "Logged lunch: {}."),
        "proposal": ("tasks", "title", TaskCreated.event_type(), "Approved. Added the task {}."),
    }
    for sent in traffic.sent:
        report.sent[sent.kind] += 1
        if sent.kind not in tables:
            continue
        table, column, event, reply = tables[sent.kind]
        chat = by_chat.get(str(sent.person), [])
        acks = _acked(chat, reply.format(sent.key))
        user_id = users.get(str(sent.person))
        extra = " AND drink_type = 'tea'" if sent.kind == "drink" else ""
        rows = [] if user_id is None else [r[0] for r in await (await conn.execute(
            f"SELECT id FROM {table} WHERE user_id = %s AND {column} = %s{extra}",
            (user_id, sent.key))).fetchall()]
        events = 0 if not rows else await _scalar(
            conn, "SELECT count(*) FROM events WHERE user_id = %s AND type = %s AND record_id = ANY(%s)",
            (user_id, event, [str(r) for r in rows]))
        label = f"{sent.kind} {sent.key!r} of {sent.person}"
        if acks:
            report.acknowledged[sent.kind] += 1
            if not rows:
                report.lost.append(f"{label}: acknowledged but not in {table}")
        elif rows:
            report.silent_writes += 1
        else:
            report.unanswered += 1
        if len(rows) > 1:
            report.doubled.append(f"{label}: {len(rows)} rows in {table}")
        if rows and events != len(rows):
            report.orphans.append(f"{label}: {len(rows)} rows in {table} but {events} {event} events")
    # The other direction, for everything these people logged: no creation event without its record.
    for table, _, event, _ in {(t, c, e, r) for t, c, e, r in tables.values()}:
        missing = await _scalar(conn, f"""
            SELECT count(*) FROM events e WHERE e.type = %s
            AND NOT EXISTS (SELECT 1 FROM {table} r WHERE r.id::text = e.record_id)""", (event,))
        if missing:
            report.orphans.append(f"{missing} {event} events without their row in {table}")
        without = await _scalar(conn, f"""
            SELECT count(*) FROM {table} r WHERE NOT EXISTS (
                SELECT 1 FROM events e WHERE e.type = %s AND e.record_id = r.id::text)""", (event,))
        if without:
            report.orphans.append(f"{without} rows in {table} without their {event} event")


async def _check_outbox(conn: psycopg.AsyncConnection[Any], by_chat: dict[str, list[Call]],
                        repeated: Counter[tuple[str, str]], report: CrashReport) -> None:
    """Each sendMessage belongs to at most one outbox row: per chat, the calls carrying a row's rendered text are
    at most the number of rows with that text. A row marked sent arrived."""
    rows = await (await conn.execute("""
        SELECT o.id, o.status, o.text, o.buttons, o.last_error, coalesce(o.chat_id, i.platform_id)
        FROM outbox o LEFT JOIN identities i ON i.user_id = o.user_id AND i.platform = 'telegram'
        WHERE o.image_png IS NULL AND o.document IS NULL""")).fetchall()
    report.outbox_rows = len(rows)
    texts: dict[tuple[str, str], list[tuple[int, str]]] = defaultdict(list)
    in_flight = {row_id for row_id, status, _t, _b, last_error, _c in rows
                 if status == "failed" and str(last_error).startswith(IN_FLIGHT_AT_STOP)}
    for row_id, status, text, buttons, last_error, chat in rows:
        if status == "pending":
            report.outbox_pending += 1
        elif status == "failed" and str(last_error).startswith(IN_FLIGHT_AT_STOP):
            report.unsent_after_kill.append(f"outbox row {row_id}: {last_error}")
        elif status == "failed":
            report.outbox_failed.append(f"outbox row {row_id}: {last_error}")
        message = Outbound(text=text, buttons=[[Button(**b) for b in r] for r in buttons or []])
        first = render(message)[0].html
        texts[(str(chat), first)].append((row_id, status))
    for (chat, first), group in texts.items():
        arrived = sum(1 for c in by_chat.get(chat, []) if c.text == first)
        if arrived > len(group):
            ids = [r for r, _ in group]
            what = f"chat {chat}: {arrived} sends of {first[:60]!r} for {len(group)} outbox row(s) {ids}"
            report.doubled.append(f"{what}; {_timeline(by_chat.get(chat, []), first, report.kill_at)}")
        sent = sum(1 for _, status in group if status == "sent")
        unknown = sum(1 for row_id, _ in group if row_id in in_flight)
        report.unsent_arrived += max(0, min(unknown, arrived - sent))  # in flight at a kill, yet it had arrived
        if arrived < sent:
            report.lost.append(f"chat {chat}: {sent} outbox row(s) marked sent but {arrived} arrived: {first[:60]!r}")


def _timeline(calls: list[Call], text: str, kills: list[float]) -> str:
    """When each send of `text` came, relative to the nearest kill (for a report)."""
    parts = []
    for c in calls:
        if c.text == text:
            nearest = min(kills, key=lambda k: abs(k - c.at), default=None)
            parts.append("sent, no kill" if nearest is None else f"sent {c.at - nearest:+.3f} s from a kill")
    return "; ".join(parts)


async def _check_slots(conn: psycopg.AsyncConnection[Any], slots: list[tuple[Person, str, datetime]],
                       by_chat: dict[str, list[Call]], users: dict[str, Any], repeated: Counter[tuple[str, str]],
                       report: CrashReport) -> None:
    """Every push slot that came due is in the outbox exactly once (the outbox key allows no second) and arrived
    exactly once."""
    now = datetime.now(UTC)
    for who, kind, at in slots:
        if at > now:
            continue
        report.slots_due += 1
        found = await (await conn.execute(
            "SELECT id, text, buttons FROM outbox WHERE user_id = %s AND kind = %s",
            (users.get(str(who.id)), kind))).fetchall()
        if len(found) != 1:
            report.slots_lost.append(f"{kind} of {who.id} at {at:%H:%M} UTC: {len(found)} outbox rows")
            continue
        _, text, buttons = found[0]
        first = render(Outbound(text=text, buttons=[[Button(**b) for b in r] for r in buttons or []]))[0].html
        chat = str(who.id)
        arrived = sum(1 for c in by_chat.get(chat, []) if c.text == first) - repeated[(chat, first)]
        if arrived != 1:
            (report.doubled if arrived > 1 else report.slots_lost).append(
                f"{kind} of {who.id} at {at:%H:%M} UTC arrived {arrived} times")
    report.nudges = await _scalar(conn, "SELECT count(*) FROM nudges")
    doubled = await _scalar(conn, """SELECT count(*) FROM (SELECT 1 FROM nudges GROUP BY user_id, rule, slot
                                     HAVING count(*) > 1) d""")
    if doubled:
        report.doubled.append(f"{doubled} nudge slots stored twice")


async def _check_buttons_and_memory(conn: psycopg.AsyncConnection[Any], traffic: Traffic, users: dict[str, Any],
                                    repeated: Counter[tuple[str, str]], report: CrashReport) -> None:
    # Proposals: each approved at most once, and its task created at most once (a double click runs it once).
    report.proposals_approved = await _scalar(conn, "SELECT count(*) FROM proposals WHERE status = 'approved'")
    twice = await _scalar(conn, """SELECT count(*) FROM (SELECT 1 FROM events WHERE type = %s
                                   AND payload->>'title' LIKE 'prop-%%' GROUP BY user_id, payload->>'title'
                                   HAVING count(*) > 1) d""", (TaskCreated.event_type(),))
    if twice:
        report.doubled.append(f"{twice} proposals executed more than once")
    # Water buttons under nudges, each pressed twice: at most one 250 ml water entry per pressed nudge.
    pressed: Counter[str] = Counter(key.split(":")[0] for key in traffic.pressed_nudges)
    for person, count in pressed.items():
        logged = await _scalar(conn, """SELECT count(*) FROM drink_entries WHERE user_id = %s
                                        AND drink_type = 'water' AND quantity_ml = 250""", (users.get(person),))
        if logged > count:
            report.doubled.append(f"{person}: {logged} water logs from {count} pressed nudges")
    # Memory: nothing pending, every /remember note that was captured became (or joined) a node.
    report.memory_pending = await _scalar(conn, "SELECT count(*) FROM memory_short_term WHERE status = 'pending'")
    report.memory_promoted = await _scalar(conn, "SELECT count(*) FROM memory_short_term WHERE node_id IS NOT NULL")
    notes = [s for s in traffic.sent if s.kind == "remember"]
    for sent in notes:
        user_id = users.get(str(sent.person))
        entries = await (await conn.execute(
            "SELECT status, node_id FROM memory_short_term WHERE user_id = %s AND text = %s",
            (user_id, sent.key))).fetchall()
        if any(node is None for _, node in entries):
            report.lost.append(f"note {sent.key!r}: short-term entry without a node ({[s for s, _ in entries]})")
    for person in {str(s.person) for s in notes}:
        keys = [s.key for s in notes if str(s.person) == person]
        kept = await _scalar(conn, """SELECT count(DISTINCT text) FROM memory_short_term WHERE user_id = %s
                                      AND text = ANY(%s) AND node_id IS NOT NULL""", (users.get(person), keys))
        acked = sum(1 for c in traffic.api.calls_of("sendMessage", person) if c.text == REMEMBERED)
        acked -= repeated[(person, REMEMBERED)]
        report.acknowledged["remember"] += acked
        if kept < acked:
            report.lost.append(f"{person}: {acked} notes acknowledged, {kept} in the memory")


def percentile(values: list[float], q: float) -> float:
    if not values:
        return math.nan
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


__all__ = ["BotProcess", "CrashConfig", "CrashReport", "bot_environment", "daytime_zone", "model_answer",
           "percentile", "run_crashes"]
