"""Webhook mode: the adapter registers its public URL and secret with setWebhook, takes updates posted to its
listening port, refuses posts without the secret, and a webhook retry of the same update has no second
effect."""

from __future__ import annotations

import socket
from typing import Any

import aiohttp
from sqlalchemy import func, select

from adapters.telegram.config import Webhook
from brain.core import Brain
from brain.modules.drink.models import DrinkEntry
from tests.telegram.conftest import make_adapter, replies_after
from tests.telegram.fake_bot_api import FakeBotAPI


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


async def post(url: str, update: dict[str, Any], secret: str) -> int:
    async with aiohttp.ClientSession() as session, session.post(
            url, json=update, headers={"X-Telegram-Bot-Api-Secret-Token": secret}) as response:
        return response.status


async def test_webhook_mode_takes_posted_updates_once(api: FakeBotAPI, brain: Brain, dialog, person) -> None:  # type: ignore[no-untyped-def]
    port = free_port()
    hook = Webhook(url="https://companion.example.test/telegram/hook", listen="127.0.0.1", port=port,
                   secret="a-long-shared-secret")
    adapter = make_adapter(brain, dialog, api, webhook=hook)
    await adapter.start()
    try:
        (registered,) = api.calls_of("setWebhook")
        assert registered.params["url"] == hook.url
        assert registered.params["secret_token"] == "a-long-shared-secret"
        assert registered.params["allowed_updates"] == ["message", "edited_message", "callback_query",
                                                        "channel_post", "my_chat_member"]
        assert api.calls_of("getUpdates") == []

        alice = person()
        update = {"update_id": 501, **api.text(alice, "250 ml water")}
        local = f"http://127.0.0.1:{port}/telegram/hook"
        assert await post(local, update, "wrong secret") == 403
        assert await post(local, update, hook.secret or "") == 200
        (reply,) = await replies_after(api, alice.id, 0, 1)
        assert "Logged 250 ml water" in reply.text
        assert await post(local, update, hook.secret or "") == 200  # Telegram retries a slow answer
        assert await post(local, {"update_id": 502, **api.text(alice, "/help")}, hook.secret or "") == 200
        await replies_after(api, alice.id, 1, 1)
    finally:
        await adapter.stop()
    async with brain.transactions.read() as session:
        assert await session.scalar(select(func.count()).select_from(DrinkEntry)) == 1
    assert len(api.calls_of("sendMessage", alice.id)) == 2
