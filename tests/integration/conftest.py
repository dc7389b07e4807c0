"""Shared by the memory tests of this package: the bundled embedder (loaded once per module), the public Memory
API over the test's brain, and a new person to remember things for."""

from __future__ import annotations

import uuid

import pytest

from brain.core import Brain
from brain.memory.api import Memory
from brain.memory.embedder import WordLlamaEmbedder
from brain.people.service import resolve_identity


@pytest.fixture(scope="module")
def embedder() -> WordLlamaEmbedder:
    return WordLlamaEmbedder()


@pytest.fixture
def memory(brain: Brain, embedder: WordLlamaEmbedder) -> Memory:
    return Memory(brain, embedder)


async def new_user(brain: Brain) -> uuid.UUID:
    async with brain.transactions.begin() as uow:
        user = await resolve_identity(uow.session, "test", f"u-{uuid.uuid4()}", default_locale="en",
                                      default_timezone="Europe/Berlin")
    return user.id
