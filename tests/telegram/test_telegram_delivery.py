"""The Telegram outbox consumer against the fake Bot API: per-chat order (also with two senders at once),
retries with backoff and `failed` after N attempts, a long reply that continues after the last part that
arrived, a send of unknown outcome that is not repeated, a refusal that fails at once, pushes only for
people with a Telegram identity, and a 429 that holds one chat while another still gets its message.

Backoff is measured on an injected wall clock, so nothing sleeps for it; only the 429 test through the
whole adapter waits the real second Telegram asked for."""

from __future__ import annotations

import asyncio
import socket
import uuid
from collections.abc import AsyncIterator
from datetime import timedelta

import pytest
from sqlalchemy import insert, select
from telegram import Bot, InlineKeyboardButton, InlineKeyboardMarkup

from adapters.telegram import outbound
from adapters.telegram.adapter import TelegramAdapter
from adapters.telegram.outbound import telegram_sender
from adapters.telegram.request import AiohttpRequest
from bot.delivery.sender import backoff
from bot.models import DeliveryState as TelegramDelivery
from brain.core import Brain
from brain.outbox.models import Outbound, OutboxMessage
from brain.outbox.service import enqueue
from brain.people.service import resolve_identity
from tests.telegram.conftest import WallClock, send
from tests.telegram.fake_bot_api import TOKEN, FakeBotAPI


@pytest.fixture(params=["httpx", "aiohttp"])
async def bot(api: FakeBotAPI, request: pytest.FixtureRequest) -> AsyncIterator[Bot]:
    """PTB's own HTTP layer (httpx) and ours (aiohttp, as the adapter has it): the sender must tell a send that
    may have arrived from one that cannot have, on either."""
    layer = AiohttpRequest(8) if request.param == "aiohttp" else None
    client = Bot(TOKEN, base_url=f"{api.base_url}/bot", request=layer)
    await client.initialize()
    try:
        yield client
    finally:
        await client.shutdown()


async def person(brain: Brain, platform: str = "telegram", platform_id: str = "4242") -> uuid.UUID:
    async with brain.transactions.begin() as uow:
        user = await resolve_identity(uow.session, platform, platform_id, default_locale="en",
                                      default_timezone="Europe/Berlin")
    return user.id


async def queue(brain: Brain, user_id: uuid.UUID, *texts: str, chat: str | None = "4242") -> list[int]:
    ids = []
    async with brain.transactions.begin() as uow:
        for text in texts:
            row_id = await enqueue(uow.session, user_id, Outbound(text=text), kind="reply", slot=uuid.uuid4().hex,
                                   platform="telegram" if chat else None, chat_id=chat)
            assert row_id is not None
            ids.append(row_id)
    return ids


async def rows(brain: Brain, ids: list[int]) -> list[tuple[str, int, str | None]]:
    async with brain.transactions.read() as session:
        found = (await session.scalars(select(OutboxMessage).where(OutboxMessage.id.in_(ids))
                                       .order_by(OutboxMessage.id))).all()
    return [(r.status, r.attempts, r.last_error) for r in found]


async def test_two_senders_at_once_send_each_row_once_and_in_order(brain: Brain, api: FakeBotAPI, bot: Bot) -> None:
    user_id = await person(brain)
    texts = [f"message {n}" for n in range(12)]
    ids = await queue(brain, user_id, *texts)
    first, second = telegram_sender(brain, bot, max_rate=0), telegram_sender(brain, bot, max_rate=0)
    await asyncio.gather(first.deliver("4242"), second.deliver("4242"), first.deliver("4242"))
    assert [c.text for c in api.calls_of("sendMessage", 4242)] == texts
    assert {status for status, _, _ in await rows(brain, ids)} == {"sent"}


async def test_server_errors_are_retried_with_backoff_then_the_row_fails(brain: Brain, api: FakeBotAPI,
                                                                         bot: Bot) -> None:
    user_id = await person(brain)
    broken, after = await queue(brain, user_id, "will not arrive", "comes after it")
    clock = WallClock()
    sender = telegram_sender(brain, bot, max_rate=0, max_attempts=3, wall_clock=clock)
    api.fail("sendMessage", status=500, description="Internal Server Error", times=3,
             when=lambda p: p["text"] == "will not arrive")
    await sender.deliver("4242")
    assert await rows(brain, [broken]) == [("pending", 1, "NetworkError: Internal Server Error")]
    await sender.deliver("4242")  # the backoff has not passed: nothing is sent, the next row waits too
    assert len(api.calls_of("sendMessage")) == 1
    clock.advance(backoff(1).total_seconds())
    await sender.deliver("4242")
    clock.advance(backoff(2).total_seconds())
    await sender.deliver("4242")
    assert [status for status, _, _ in await rows(brain, [broken, after])] == ["failed", "sent"]
    assert [c.text for c in api.calls_of("sendMessage")] == ["will not arrive"] * 3 + ["comes after it"]
    async with brain.transactions.read() as session:
        assert (await session.scalars(select(TelegramDelivery))).all() == []


async def test_a_long_reply_continues_after_the_last_part_that_arrived(brain: Brain, api: FakeBotAPI,
                                                                       bot: Bot) -> None:
    user_id = await person(brain)
    (row,) = await queue(brain, user_id, "A" * 4000 + "\n" + "B" * 4000 + "\n" + "C" * 100)
    clock = WallClock()
    sender = telegram_sender(brain, bot, max_rate=0, wall_clock=clock)
    api.fail("sendMessage", status=429, description="Too Many Requests: retry after 7", retry_after=7,
             when=lambda p: p["text"].startswith("B"))
    await sender.deliver("4242")
    assert [c.text[0] for c in api.calls_of("sendMessage")] == ["A", "B"]
    async with brain.transactions.read() as session:
        (state,) = (await session.scalars(select(TelegramDelivery))).all()
    assert state.parts_sent == 1 and state.not_before == clock.now + timedelta(seconds=7)
    assert await rows(brain, [row]) == [("pending", 0, None)]  # flood control is not a failed attempt
    clock.advance(7)
    await sender.deliver("4242")
    assert [c.text[0] for c in api.calls_of("sendMessage")] == ["A", "B", "B", "C"]
    assert [status for status, _, _ in await rows(brain, [row])] == ["sent"]


async def test_a_send_of_unknown_outcome_is_not_repeated(brain: Brain, api: FakeBotAPI, bot: Bot,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(outbound, "SEND_READ_TIMEOUT_S", 0.2)
    user_id = await person(brain)
    lost, after = await queue(brain, user_id, "answer lost", "next")
    api.slow("sendMessage", delay=1.0, when=lambda p: p["text"] == "answer lost")
    sender = telegram_sender(brain, bot, max_rate=0)
    await sender.deliver("4242")
    (status, _, error), (next_status, _, _) = await rows(brain, [lost, after])
    assert status == "failed" and error is not None and "outcome unknown" in error
    assert next_status == "sent"
    await sender.deliver("4242")
    assert [c.text for c in api.calls_of("sendMessage")] == ["answer lost", "next"]


@pytest.mark.parametrize("layer", [None, AiohttpRequest])
async def test_a_send_that_cannot_connect_is_retried_later(brain: Brain, layer: type[AiohttpRequest] | None) -> None:
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    client = Bot(TOKEN, base_url=f"http://127.0.0.1:{port}/bot", request=layer() if layer else None)
    await client.request.initialize()
    try:
        wall = WallClock()
        user_id = await person(brain)
        (row,) = await queue(brain, user_id, "hello")
        await telegram_sender(brain, client, max_rate=0, wall_clock=wall).deliver("4242")
        ((status, attempts, error),) = await rows(brain, [row])
        assert status == "pending" and attempts == 1 and error is not None and "outcome unknown" not in error
        async with brain.transactions.read() as session:
            state = await session.scalar(select(TelegramDelivery).where(TelegramDelivery.outbox_id == row))
        assert state is not None and not state.in_flight and state.not_before > wall.now
    finally:
        await client.request.shutdown()


async def test_a_person_who_blocked_the_bot_fails_at_once(brain: Brain, api: FakeBotAPI, bot: Bot) -> None:
    user_id = await person(brain)
    ids = await queue(brain, user_id, "one", "two")
    api.fail("sendMessage", status=403, description="Forbidden: bot was blocked by the user", times=2)
    await telegram_sender(brain, bot, max_rate=0).deliver("4242")
    assert [(s, a) for s, a, _ in await rows(brain, ids)] == [("failed", 1), ("failed", 1)]


async def test_pushes_go_to_people_with_a_telegram_identity_only(brain: Brain, api: FakeBotAPI, bot: Bot) -> None:
    on_telegram = await person(brain)
    on_console = await person(brain, "console", "someone")
    await queue(brain, on_telegram, "a nudge", chat=None)
    await queue(brain, on_console, "a console nudge", chat=None)
    sender = telegram_sender(brain, bot, max_rate=0)
    assert await sender.due_chats() == ["4242"]
    await sender.deliver("4242")
    assert [c.text for c in api.calls_of("sendMessage")] == ["a nudge"]


async def test_a_chat_gets_its_replies_and_its_person_s_pushes_in_order_and_nothing_of_another_chat(
        brain: Brain, api: FakeBotAPI, bot: Bot) -> None:
    """The claim looks for a chat's replies and its person's pushes separately (each through an index): they
    must still go out as one sequence in the order they were written, and only to this chat."""
    user_id = await person(brain)
    other = await person(brain, platform_id="777")
    first = await queue(brain, user_id, "reply one")
    push = await queue(brain, user_id, "a push", chat=None)
    second = await queue(brain, user_id, "reply two")
    elsewhere = await queue(brain, other, "for another chat", chat="777")
    await telegram_sender(brain, bot, max_rate=0).deliver("4242")
    assert [(c.chat_id, c.text) for c in api.calls_of("sendMessage")] == [
        ("4242", "reply one"), ("4242", "a push"), ("4242", "reply two")]
    assert [s for s, _, _ in await rows(brain, first + push + second)] == ["sent"] * 3
    assert [s for s, _, _ in await rows(brain, elsewhere)] == ["pending"]


@pytest.mark.slow
async def test_a_429_holds_that_chat_for_retry_after_while_another_chat_gets_its_message(
        telegram: TelegramAdapter, api: FakeBotAPI, person) -> None:  # type: ignore[no-untyped-def]
    alice, bob = person("Alice"), person("Bob")
    api.fail("sendMessage", status=429, description="Too Many Requests: retry after 1", retry_after=1,
             when=lambda p: p["chat_id"] == str(alice.id))
    api.push(api.text(alice, "/today"))
    (flood,) = await api.wait_for("sendMessage", chat_id=alice.id)
    (to_bob,) = await send(api, bob, "/today")
    (to_alice,) = (await api.wait_for("sendMessage", chat_id=alice.id, count=2, within=10))[1:]
    assert to_bob.at < flood.at + 1.0 <= to_alice.at  # Bob was not held; Alice waited the second asked for
    assert api.refused == 1 and "Today" in to_alice.text


async def test_with_another_platform_running_a_push_goes_where_the_person_last_talked(
        brain: Brain, api: FakeBotAPI, bot: Bot) -> None:
    user_id = await person(brain)
    sender = telegram_sender(brain, bot, max_rate=0, other_platforms=("matrix",))
    await queue(brain, user_id, "a push before any talk", chat=None)
    assert await sender.due_chats() == ["4242"]  # nobody talked anywhere yet: Telegram may take it
    await sender.deliver("4242")
    async with brain.transactions.begin() as uow:
        await enqueue(uow.session, user_id, Outbound(text="answer on Matrix"), kind="reply", slot="m-1",
                      platform="matrix", chat_id="!room:example.org")
    await queue(brain, user_id, "a push after talking on Matrix", chat=None)
    assert await sender.due_chats() == []
    await sender.deliver("4242")
    assert [c.text for c in api.calls_of("sendMessage")] == ["a push before any talk"]


async def test_a_claim_finds_a_person_s_pushes_through_their_own_index(brain: Brain, bot: Bot) -> None:
    """In a burst of morning summaries every person has a pending push. The claim's push half must go straight to
    this person's (`ix_outbox_pending_push`), not through everyone's pending pushes in id order."""
    user_id = await person(brain)
    others = [await person(brain, platform_id=str(9000 + n)) for n in range(30)]
    async with brain.db.engine.begin() as connection:
        await connection.execute(
            insert(OutboxMessage),
            [{"user_id": other, "kind": "nudge", "slot": f"s{n}-{k}", "platform": None, "chat_id": None,
              "text": "a summary", "buttons": []} for n, other in enumerate(others) for k in range(40)])
    mine = await queue(brain, user_id, "your summary", chat=None)
    async with brain.db.engine.connect() as connection:
        await connection.exec_driver_sql("ANALYZE outbox")
    sender = telegram_sender(brain, bot, max_rate=0)
    claim = sender._claim.compile(dialect=brain.db.engine.dialect)
    async with brain.db.engine.connect() as connection:
        plan = "\n".join(row[0] for row in await connection.exec_driver_sql(
            "EXPLAIN " + str(claim), {**claim.params, "chat": "4242"}))
    assert "ix_outbox_pending_push" in plan
    await sender.deliver("4242")
    assert [s for s, _, _ in await rows(brain, mine)] == ["sent"]


async def test_a_text_with_form_characters_and_a_keyboard_arrives_as_written(api: FakeBotAPI, bot: Bot) -> None:
    """Our layer encodes the form itself: what it sends must read as what PTB's own layer sends."""
    tricky = "a+b=c & 100% 😀 Grüße\nzweite Zeile ?x=1#y"
    keyboard = InlineKeyboardMarkup([[InlineKeyboardButton("Ja & Nein", callback_data="t:+=&")]])
    await bot.send_message(chat_id=4242, text=tricky, reply_markup=keyboard)
    (call,) = api.calls_of("sendMessage", 4242)
    assert call.text == tricky
    assert call.buttons() == {"Ja & Nein": "t:+=&"}
