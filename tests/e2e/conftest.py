"""Dialog fixtures: a Dialog over the test brain, and a `chat` helper that sends one line as a
person and returns the reply texts (and buttons) the dialog wrote to the outbox."""

from __future__ import annotations

import itertools
import uuid
from collections.abc import Awaitable, Callable

import pytest
from sqlalchemy import func, select

from bot.dialog import Dialog
from bot.inbound import Inbound
from brain.core import Brain
from brain.events.store import EventRecord
from brain.outbox.models import Outbound

_ids = itertools.count(1)


class Person:
    def __init__(self, dialog: Dialog, handle: str, language: str | None = "en") -> None:
        self.dialog = dialog
        self.handle = handle
        self.language = language
        self.last: list[Outbound] = []

    async def send(self, text: str) -> str:
        self.last = await self.dialog.handle(Inbound(
            platform="test", platform_user_id=self.handle, chat_id=self.handle, message_id=str(next(_ids)),
            text=text, language_code=self.language,
        ))
        return "\n".join(m.text for m in self.last)

    async def press(self, token: str) -> str:
        self.last = await self.dialog.handle(Inbound(
            platform="test", platform_user_id=self.handle, chat_id=self.handle, message_id=str(next(_ids)),
            action=token, language_code=self.language,
        ))
        return "\n".join(m.text for m in self.last)

    def buttons(self) -> dict[str, str]:
        return {b.label: b.token for m in self.last for b in m.flat_buttons()}


@pytest.fixture
def dialog(brain: Brain) -> Dialog:
    return Dialog(brain, default_locale="en", default_timezone="Europe/Berlin")


@pytest.fixture
def person(dialog: Dialog) -> Callable[..., Person]:
    def make(handle: str | None = None, language: str | None = "en") -> Person:
        return Person(dialog, handle or f"p-{uuid.uuid4().hex[:8]}", language)

    return make


@pytest.fixture
def db_state(brain: Brain) -> Callable[[], Awaitable[tuple[int, ...]]]:
    """Row counts of every personal table plus events: equal before/after means nothing changed."""

    async def snapshot() -> tuple[int, ...]:
        from app.tables import target_metadata

        # pulse_states only notes when a person last wrote (for the idle hold), like identities: bookkeeping.
        skip = {"users", "identities", "outbox", "action_tokens", "pulse_states"}
        counts = []
        async with brain.transactions.read() as session:
            for table in sorted(target_metadata.tables.values(), key=lambda t: t.name):
                if table.name in skip:
                    continue
                counts.append(int(await session.scalar(select(func.count()).select_from(table)) or 0))
            counts.append(int(await session.scalar(select(func.count()).select_from(EventRecord)) or 0))
        return tuple(counts)

    return snapshot
