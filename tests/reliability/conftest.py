"""Fixtures shared by the reliability suites: the dialog fixtures of tests/e2e, the fake Bot API of the Telegram
tests (started per test), and a long-term memory over the test brain with one embedder for the whole session
(loading its weights takes a second or two)."""

from __future__ import annotations

import functools
from collections.abc import AsyncIterator

import pytest

from brain.core import Brain
from brain.memory.api import Memory
from brain.memory.embedder import WordLlamaEmbedder
from brain.pipeline_log import PipelineLog
from tests.e2e.conftest import dialog, person  # noqa: F401  (the dialog fixtures, shared)
from tests.telegram.conftest import api  # noqa: F401  (the fake Bot API on 127.0.0.1)


@functools.cache
def shared_embedder() -> WordLlamaEmbedder:
    return WordLlamaEmbedder()


@pytest.fixture
def embedder() -> WordLlamaEmbedder:
    return shared_embedder()


@pytest.fixture
async def memory(brain: Brain, embedder: WordLlamaEmbedder) -> AsyncIterator[Memory]:
    brain.memory = Memory(brain, embedder, log=PipelineLog(brain.db.sessions, brain.clock))
    yield brain.memory
    assert brain.memory.log is not None
    await brain.memory.log.close()
