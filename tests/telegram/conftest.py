"""Telegram fixtures: the fake Bot API on 127.0.0.1, and the real adapter (python-telegram-bot 22, long
polling) over the test database, pointed at the fake through `base_url`."""

from __future__ import annotations

import contextlib
import itertools
import uuid
from collections.abc import AsyncIterator, Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import select

from adapters.telegram.adapter import TelegramAdapter
from adapters.telegram.config import TelegramConfig
from bot.access import AccessPolicy
from bot.dialog import Dialog
from brain.core import Brain
from brain.people.models import Identity
from tests.telegram.fake_bot_api import TOKEN, Call, FakeBotAPI, Person

_people = itertools.count(7001)


class WallClock:
    """The delivery's clock, moved by hand: retry waits and backoff without sleeping."""

    def __init__(self) -> None:
        self.now = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += timedelta(seconds=seconds)


@pytest.fixture
async def api() -> AsyncIterator[FakeBotAPI]:
    server = await FakeBotAPI().start()
    try:
        yield server
    finally:
        await server.stop()


@pytest.fixture
def dialog(brain: Brain) -> Dialog:
    return Dialog(brain, default_locale="en", default_timezone="Europe/Berlin", access=AccessPolicy.open())


def make_adapter(brain: Brain, dialog: Dialog, api: FakeBotAPI, **options: object) -> TelegramAdapter:
    settings: dict[str, object] = {"base_url": api.base_url, "max_rate": 0.0, "typing_after": 0.0,
                                   "sender_poll_interval": 0.2, "poll_timeout": 5.0}
    settings.update(options)
    return TelegramAdapter(brain, dialog, TelegramConfig(TOKEN, **settings))  # type: ignore[arg-type]


@contextlib.asynccontextmanager
async def running(adapter: TelegramAdapter) -> AsyncIterator[TelegramAdapter]:
    """The adapter started; stopped after."""
    await adapter.start()
    try:
        yield adapter
    finally:
        await adapter.stop()


@contextlib.asynccontextmanager
async def serving(brain: Brain, api: FakeBotAPI, **dialog_options: Any) -> AsyncIterator[TelegramAdapter]:
    """The Telegram adapter over an open dialog with these options (e.g. `voice=`, `photos=`), started; stopped and
    its dialog settled after."""
    dialog = Dialog(brain, default_locale="en", default_timezone="Europe/Berlin", access=AccessPolicy.open(),
                    **dialog_options)
    try:
        async with running(make_adapter(brain, dialog, api)) as adapter:
            yield adapter
    finally:
        await dialog.settle()


@pytest.fixture
async def telegram(brain: Brain, dialog: Dialog, api: FakeBotAPI) -> AsyncIterator[TelegramAdapter]:
    async with running(make_adapter(brain, dialog, api)) as adapter:
        yield adapter


@pytest.fixture
def person() -> Callable[..., Person]:
    def make(first_name: str = "Alice", language_code: str | None = "en") -> Person:
        return Person(next(_people), first_name, language_code)

    return make


async def send(api: FakeBotAPI, who: Person, text: str, *, replies: int = 1) -> list[Call]:
    """Writes `text` in the person's private chat and waits for that many new replies."""
    before = len(api.calls_of("sendMessage", who.id)) + len(api.calls_of("sendPhoto", who.id))
    api.push(api.text(who, text))
    return await replies_after(api, who.id, before, replies)


async def press(api: FakeBotAPI, who: Person, label: str, message: Call, *, replies: int = 1) -> list[Call]:
    """Presses the button `label` under `message` and waits for that many new replies in that chat."""
    chat = message.chat_id
    assert chat is not None
    before = len(api.calls_of("sendMessage", chat))
    api.push(api.press(who, message.buttons()[label], message))
    return await replies_after(api, chat, before, replies)


async def replies_after(api: FakeBotAPI, chat: str | int, before: int, count: int) -> list[Call]:
    if count:
        await api.wait_for("sendMessage", chat_id=chat, count=before + count)
    return api.calls_of("sendMessage", chat)[before:before + count]


async def user_id_of(brain: Brain, who: Person) -> uuid.UUID:
    async with brain.transactions.read() as session:
        found = await session.scalar(select(Identity.user_id).where(Identity.platform == "telegram",
                                                                    Identity.platform_id == str(who.id)))
    assert found is not None
    return found


async def toast(api: FakeBotAPI, who: Person, label: str, message: Call) -> str:
    """Presses the button `label` under `message` and returns the callback answer's text (the toast only the
    presser sees), once it has come."""
    update = api.press(who, message.buttons()[label], message)
    query_id = update["callback_query"]["id"]
    api.push(update)
    (answer,) = await api.wait_for("answerCallbackQuery",
                                   where=lambda call: call.params.get("callback_query_id") == query_id)
    return str(answer.params.get("text") or "")
