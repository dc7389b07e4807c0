"""Dependency faults while the bot runs: PostgreSQL restarted under load, the model server down, slow or
answering garbage during a free-text turn, Telegram refusing or failing sends (429, 5xx) for a row, and the
Matrix homeserver restarted. Each time the bot serves again without a restart of its own, no acknowledged write
is lost, nothing is answered or sent twice, and a message it could not handle gets a clear, translated answer.

Covered elsewhere and not repeated here: the model down during a turn (tests/companion/test_model_down_and_privacy.py),
the client's retry, garbage and timeout handling (tests/companion/test_llm_client.py), 5xx until `failed`, a
send of unknown outcome and a 429 holding one chat (tests/telegram/test_telegram_delivery.py)."""

from __future__ import annotations

import asyncio
import shutil
import tempfile
import time
import uuid
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path

import psycopg
import pytest
from sqlalchemy import func, select
from telegram import Bot

from adapters.telegram.outbound import telegram_sender
from bot.access import AccessPolicy
from bot.delivery.sender import backoff
from bot.dialog import Dialog
from brain.companion.agent import Companion, CompanionConfig
from brain.companion.llm import LLM, TierConfig
from brain.core import Brain
from brain.events.catalog import DrinkLogged
from brain.events.store import EventRecord
from brain.i18n import Renderer, tr
from brain.modules.drink.models import DrinkEntry
from brain.outbox.models import Outbound, OutboxMessage
from brain.outbox.service import enqueue
from brain.people.service import resolve_identity
from brain.store.database import Database
from brain.store.embedded import EmbeddedPostgres, to_sqlalchemy_url
from brain.store.migrate import upgrade
from rules.wiring import build_brain
from tests.fakes.ollama_server import FakeOllama, Script
from tests.matrix.conftest import BotRunner
from tests.matrix.people import MatrixPerson
from tests.matrix.synapse import Synapse, ensure_installed
from tests.telegram.conftest import WallClock, make_adapter, replies_after
from tests.telegram.fake_bot_api import TOKEN, Call, FakeBotAPI, Person

MODEL_DOWN = "I can't reach my language model right now"
DATABASE_DOWN = ("Sorry, I can't reach my database right now, so I may not have handled that. Please check again in "
                 "a minute and send it once more if needed.")


def logged(ml: int) -> Callable[[Call], bool]:
    return lambda c: f"{ml} ml" in c.text


async def written(api: FakeBotAPI, who: Person, text: str, expect: Callable[[Call], bool], within: float = 30.0,
                  ) -> Call:
    """Writes `text` and waits for the reply that `expect` recognises."""
    before = len(api.calls_of("sendMessage", who.id))
    api.push(api.text(who, text))
    await api.wait_for("sendMessage", chat_id=who.id, count=before + 1, where=None, within=within)
    deadline = time.monotonic() + within
    while True:
        found = [c for c in api.calls_of("sendMessage", who.id)[before:] if expect(c)]
        if found:
            return found[0]
        assert time.monotonic() < deadline, [c.text for c in api.calls_of("sendMessage", who.id)[before:]]
        await asyncio.sleep(0.05)


# ---- PostgreSQL restarted under load ----------------------------------------------------------------------------
@pytest.fixture
def own_postgres() -> Iterator[tuple[EmbeddedPostgres, str]]:
    """A server of this test's own (the session's shared one must not be stopped), with a migrated database."""
    root = Path(tempfile.mkdtemp(prefix="cfp", dir="/tmp"))
    embedded = EmbeddedPostgres(root, shared_buffers_mb=None)
    embedded.start()
    base, _, query = embedded.libpq_uri.partition("?")
    uri = f"{base.rsplit('/', 1)[0]}/faults?{query}"
    with psycopg.connect(embedded.libpq_uri, autocommit=True) as conn:
        conn.execute('CREATE DATABASE "faults"')
    with psycopg.connect(uri, autocommit=True) as conn:
        conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
    url = to_sqlalchemy_url(uri)
    upgrade(url)
    try:
        yield embedded, url
    finally:
        embedded.stop()
        shutil.rmtree(root, ignore_errors=True)


async def drinks_of(brain: Brain, ml: int) -> int:
    async with brain.transactions.read() as session:
        return int(await session.scalar(select(func.count()).select_from(DrinkEntry)
                                        .where(DrinkEntry.quantity_ml == ml)) or 0)


async def events_for(brain: Brain, event_type: str, record_ids: list[str]) -> int:
    async with brain.transactions.read() as session:
        return int(await session.scalar(select(func.count()).select_from(EventRecord).where(
            EventRecord.type == event_type, EventRecord.record_id.in_(record_ids))) or 0)


@pytest.mark.slow
async def test_postgres_restarted_under_load_loses_no_acknowledged_write(
        own_postgres: tuple[EmbeddedPostgres, str], api: FakeBotAPI) -> None:
    embedded, url = own_postgres
    brain = build_brain(Database(url, pool_size=5))
    dialog = Dialog(brain, default_locale="en", default_timezone="Europe/Berlin", access=AccessPolicy.open())
    adapter = make_adapter(brain, dialog, api)
    alice, bob = Person(771_001, "Alice"), Person(771_002, "Bob", "de")
    await adapter.start()
    acknowledged: list[tuple[Person, int]] = []
    try:
        for ml in (101, 102, 103):
            for who in (alice, bob):
                await written(api, who, f"/drink tea {ml}", logged(ml))
                acknowledged.append((who, ml))
        # The server goes away in the middle of the traffic; two messages arrive while it is down.
        await asyncio.to_thread(embedded.stop)
        before = {who.id: len(api.calls_of("sendMessage", who.id)) for who in (alice, bob)}
        api.push(api.text(alice, "/drink tea 201"))
        api.push(api.text(bob, "/drink tea 202"))
        await asyncio.sleep(2.0)
        await asyncio.to_thread(embedded.start)
        # The same adapter and pool serve again: no restart of the bot.
        for ml in (301, 302):
            for who in (alice, bob):
                await written(api, who, f"/drink tea {ml}", logged(ml))
                acknowledged.append((who, ml))
        # What arrived during the outage: either done and answered, or answered with "try again" — never silent.
        told = 0
        for who, ml in ((alice, 201), (bob, 202)):
            answers = [c.text for c in api.calls_of("sendMessage", who.id)[before[who.id]:]]
            done = any(f"{ml} ml" in text for text in answers)
            # Said in the person's language (as Telegram reports it; the stored one cannot be read).
            refused = [text for text in answers if text == Renderer(who.language_code or "en")(tr(DATABASE_DOWN))]
            assert done or refused, answers
            told += bool(refused)
            if done:
                acknowledged.append((who, ml))
        assert told, "the updates were taken while the database was down: at least one was refused"
        for who, ml in acknowledged:
            count = await drinks_of(brain, ml)
            assert count == 2 if ml < 200 or ml > 300 else count >= 1, (who, ml)
        async with brain.transactions.read() as session:
            entries = [str(i) for i in (await session.scalars(select(DrinkEntry.id))).all()]
        assert await events_for(brain, DrinkLogged.event_type(), entries) == len(entries)
    finally:
        await adapter.stop()
        await brain.close()


# ---- the model server slow or answering garbage, through Telegram -----------------------------------------------
@pytest.fixture
async def companion_on_telegram(brain: Brain, fake_ollama: FakeOllama,
                                api: FakeBotAPI) -> AsyncIterator[FakeBotAPI]:
    """The Telegram adapter over a brain whose companion talks to the fake model with a 1 s timeout."""
    llm = LLM(fake_ollama.url, {"primary": TierConfig("qwen3:4b"), "fast": TierConfig("qwen3:1.7b")},
              timeout_s=1.0, recheck_s=0.0, retry_delay_s=0.01)
    brain.companion = Companion(brain, llm, CompanionConfig())
    adapter = make_adapter(brain, Dialog(brain, default_locale="en",
                                         default_timezone="Europe/Berlin", access=AccessPolicy.open()), api)
    await adapter.start()
    try:
        yield api
    finally:
        await adapter.stop()


def model_down(language: str) -> str:
    return Renderer(language)(tr("I can't reach my language model right now; commands and buttons still work."))


def told_model_down(language: str, text: str) -> bool:
    """The outage is said: on its own, or with 'and I didn't understand that' when the parser could not help (then
    the general examples or, when the message was about something, how to write that follow)."""
    together = Renderer(language)(tr(
        "I can't reach my language model right now, and I didn't understand that on my own."))
    return model_down(language) in text or together in text


@pytest.mark.slow
async def test_a_slow_model_is_said_once_and_commands_of_others_are_answered_meanwhile(
        companion_on_telegram: FakeBotAPI, fake_ollama: FakeOllama) -> None:
    api = companion_on_telegram
    fake_ollama.default = Script(content="Too late.", delay_s=3.0)
    alice, bob = Person(772_001, "Alice"), Person(772_002, "Bob")
    before = len(api.calls_of("sendMessage", alice.id))
    api.push(api.text(alice, "how was my week?"))
    # While Alice's turn waits for the model, Bob's command is answered.
    bobs = await written(api, bob, "/water 250", lambda c: "Logged 250 ml water" in c.text, within=10)
    (first,) = await replies_after(api, alice.id, before, 1)
    assert bobs.at < first.at
    assert told_model_down("en", first.text)
    # The same outage: not said again, and Alice's own commands work.
    second = await written(api, alice, "and today?", lambda c: True)
    assert not told_model_down("en", second.text)
    today = await written(api, alice, "/today", lambda c: "Today" in c.text)
    assert not told_model_down("en", today.text)
    fake_ollama.default = Script(content="I'm back.")
    assert (await written(api, alice, "hello?", lambda c: True)).text == "I'm back."


@pytest.mark.slow
async def test_garbage_from_the_model_gets_the_translated_message_once_and_no_turn_is_stored(
        companion_on_telegram: FakeBotAPI, fake_ollama: FakeOllama, brain: Brain) -> None:
    api = companion_on_telegram
    fake_ollama.default = Script(garbage=True)
    bruno = Person(772_003, "Bruno", "de")
    first = await written(api, bruno, "wie war meine Woche?", lambda c: True)
    assert told_model_down("de", first.text)
    second = await written(api, bruno, "und heute?", lambda c: True)
    assert not told_model_down("de", second.text)
    logged = await written(api, bruno, "/water 300", lambda c: "300" in c.text)
    assert not told_model_down("de", logged.text)
    assert await drinks_of(brain, 300) == 1


# ---- Telegram refusing and failing a send ------------------------------------------------------------------------
async def test_a_429_then_server_errors_end_in_one_message_and_a_sent_row(brain: Brain, api: FakeBotAPI) -> None:
    async with brain.transactions.begin() as uow:
        user = await resolve_identity(uow.session, "telegram", "4343", default_locale="en",
                                      default_timezone="Europe/Berlin")
        row_id = await enqueue(uow.session, user.id, Outbound(text="only once, please"), kind="reply",
                               slot=uuid.uuid4().hex, platform="telegram", chat_id="4343")
    clock = WallClock()
    bot = Bot(TOKEN, base_url=f"{api.base_url}/bot")
    await bot.initialize()
    try:
        sender = telegram_sender(brain, bot, max_rate=0, wall_clock=clock)

        async def state() -> tuple[str, int]:
            async with brain.transactions.read() as session:
                row = await session.get(OutboxMessage, row_id)
                assert row is not None
                return row.status, row.attempts

        api.fail("sendMessage", status=429, description="Too Many Requests: retry after 7", retry_after=7)
        await sender.deliver("4343")
        assert await state() == ("pending", 0)  # flood control is no failed attempt
        clock.advance(6)
        await sender.deliver("4343")
        assert len(api.calls_of("sendMessage")) == 1  # retry_after honoured: not asked again before 7 s
        clock.advance(1)
        api.fail("sendMessage", status=502, description="Bad Gateway", times=2)
        await sender.deliver("4343")
        assert await state() == ("pending", 1)
        clock.advance(backoff(1).total_seconds())
        await sender.deliver("4343")
        clock.advance(backoff(2).total_seconds())
        await sender.deliver("4343")
        await sender.deliver("4343")  # nothing left: no second message
        assert await state() == ("sent", 3)
        calls = api.calls_of("sendMessage")
        assert len(calls) == 4 and api.refused == 3  # one 429, two 502, one that arrived
        assert [c.text for c in calls] == ["only once, please"] * 4
    finally:
        await bot.shutdown()


# ---- the Matrix homeserver restarted ----------------------------------------------------------------------------
@pytest.mark.slow
async def test_a_homeserver_restart_resumes_the_sync_without_replaying_old_messages(brain: Brain) -> None:
    # A Synapse of this test's own: the session's shared one is not disturbed.
    server = Synapse(ensure_installed(), Path(tempfile.mkdtemp(prefix="synr-")))
    data_dir = Path(tempfile.mkdtemp(prefix="mbr-"))
    alice: MatrixPerson | None = None
    runner: BotRunner | None = None
    try:
        await asyncio.to_thread(server.start)
        dialog = Dialog(brain, default_locale="en", default_timezone="Europe/Berlin", access=AccessPolicy.open())
        runner = BotRunner(server, brain, dialog, await asyncio.to_thread(server.register), data_dir)
        await runner.start()
        alice = MatrixPerson(server.url, await asyncio.to_thread(server.register))
        await alice.start()
        mark = alice.mark()
        room = await alice.open_direct_room(runner.user_id)
        await alice.message_from(runner.user_id, room, after=mark, contains="Hello")
        await alice.say(runner.user_id, room, "/water 250", contains="Logged 250 ml water")

        began = time.monotonic()
        await asyncio.to_thread(server.stop)
        await asyncio.to_thread(server.start)
        restart_s = time.monotonic() - began
        # Both syncs back off while the server is away; the answer may take until the bot's next try.
        mark = alice.mark()
        await alice.send(room, "/water 300")
        await alice.wait_for(lambda s: s.room_id == room and getattr(s.event, "sender", "") == runner.user_id
                             and "Logged 300 ml water" in getattr(s.event, "body", ""), after=mark, within=60)
        # Time for anything replayed to show up, then: nothing answered twice, nothing stored twice.
        await alice.say(runner.user_id, room, "/help", contains="!water")  # Matrix writes commands with "!"
        bodies = [m.body for m in alice.messages_from(runner.user_id, room)]
        assert sum("Logged 250 ml water" in b for b in bodies) == 1, bodies
        assert sum("Logged 300 ml water" in b for b in bodies) == 1, bodies
        assert await drinks_of(brain, 250) == 1
        assert await drinks_of(brain, 300) == 1
        assert restart_s < 60, f"Synapse took {restart_s:.1f} s to restart"
    finally:
        if runner is not None:
            await runner.stop()
        if alice is not None:
            await alice.close()
        await asyncio.to_thread(server.stop)
        shutil.rmtree(server.directory, ignore_errors=True)
        shutil.rmtree(data_dir, ignore_errors=True)
