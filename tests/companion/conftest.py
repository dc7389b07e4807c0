"""Companion fixtures: the companion over the test brain and the real ollama client against the fake server,
a Dialog with it attached, people who chat through that dialog, and small readers of what was stored."""

from __future__ import annotations

import asyncio
import itertools
import time
import uuid
from collections.abc import Callable
from typing import Any

import pytest
from sqlalchemy import func, select

from bot.access import AccessPolicy
from bot.dialog import Dialog
from bot.inbound import Inbound
from brain.companion.agent import Companion, CompanionConfig
from brain.companion.llm import LLM
from brain.companion.models import ConversationMessage
from brain.core import Brain
from brain.outbox.models import Outbound
from brain.people.models import Identity, User
from tests.fakes.ollama_server import FakeOllama

_ids = itertools.count(1)
ADMIN = "test:the-admin"


@pytest.fixture
def companion(brain: Brain, llm: LLM) -> Companion:
    brain.companion = Companion(brain, llm, CompanionConfig(admins=frozenset({ADMIN})))
    return brain.companion


@pytest.fixture
def dialog(brain: Brain, companion: Companion) -> Dialog:
    return Dialog(brain, default_locale="en", default_timezone="Europe/Berlin", access=AccessPolicy.open())


class Person:
    def __init__(self, dialog: Dialog, handle: str) -> None:
        self.dialog = dialog
        self.handle = handle
        self.last: list[Outbound] = []

    def inbound(self, text: str | None = None, action: str | None = None) -> Inbound:
        return Inbound(platform="test", platform_user_id=self.handle, chat_id=self.handle,
                       message_id=str(next(_ids)), text=text, action=action, language_code="en")

    async def send(self, text: str, **kwargs: Any) -> str:
        self.last = await self.dialog.handle(self.inbound(text), **kwargs)
        return "\n".join(m.text for m in self.last)

    async def press(self, label: str) -> str:
        token = self.buttons()[label]
        self.last = await self.dialog.handle(self.inbound(action=token))
        return "\n".join(m.text for m in self.last)

    def buttons(self) -> dict[str, str]:
        return {b.label: b.token for m in self.last for b in m.flat_buttons()}

    async def user(self) -> User:
        async with self.dialog.brain.transactions.read() as session:
            user_id = (await session.scalars(select(Identity.user_id).where(Identity.platform_id == self.handle))).one()
            found = await session.get(User, user_id)
        assert found is not None
        return found


@pytest.fixture
def person(dialog: Dialog) -> Callable[..., Person]:
    def make(handle: str | None = None) -> Person:
        return Person(dialog, handle or f"p-{uuid.uuid4().hex[:8]}")

    return make


async def conversation(brain: Brain, user_id: uuid.UUID, *, archived: bool | None = None) -> list[ConversationMessage]:
    async with brain.transactions.read() as session:
        stmt = select(ConversationMessage).where(ConversationMessage.user_id == user_id)
        if archived is not None:
            stmt = stmt.where(ConversationMessage.archived.is_(archived))
        return list((await session.scalars(stmt.order_by(ConversationMessage.id))).all())


async def count_rows(brain: Brain, model: type) -> int:
    async with brain.transactions.read() as session:
        return int(await session.scalar(select(func.count()).select_from(model)) or 0)


async def wait_for(condition: Callable[[], bool], within_s: float = 5.0) -> None:
    """Polls a ready check (no fixed sleeps)."""
    deadline = time.monotonic() + within_s
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError("condition not reached in time")
        await asyncio.sleep(0.005)


def system_prompt(request: dict[str, Any]) -> str:
    return str(request["messages"][0]["content"])


def tool_messages(request: dict[str, Any]) -> list[dict[str, Any]]:
    return [m for m in request["messages"] if m["role"] == "tool"]


def reminders(request: dict[str, Any]) -> list[str]:
    return [str(m.get("content", "")) for m in request["messages"]
            if m["role"] == "system" and str(m.get("content", "")).startswith("<reminder>")]


def offered(request: dict[str, Any]) -> set[str]:
    return {t["function"]["name"] for t in request.get("tools") or []}


@pytest.fixture
def fake(fake_ollama: FakeOllama) -> FakeOllama:
    return fake_ollama
