"""Matrix fixtures: one real Synapse per test session (installed into the test cache on first use), a bot
account and a person per test, and a running `MatrixAdapter` over the test brain that a test can stop and
start again (a restart keeps its data directory)."""

from __future__ import annotations

import asyncio
import shutil
import tempfile
from collections.abc import AsyncIterator, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from adapters.matrix.adapter import MatrixAdapter, MatrixConfig
from bot.dialog import Dialog
from brain.core import Brain
from tests.e2e.conftest import dialog, person  # noqa: F401  (the dialog fixtures, shared)
from tests.matrix.people import MatrixPerson
from tests.matrix.synapse import Account, Synapse, ensure_installed


@pytest.fixture(scope="session")
def synapse() -> Iterator[Synapse]:
    python = ensure_installed()
    directory = Path(tempfile.mkdtemp(prefix="synapse-"))
    server = Synapse(python, directory)
    server.start()
    try:
        yield server
    finally:
        server.stop()
        shutil.rmtree(directory, ignore_errors=True)


class BotRunner:
    """Starts and stops one bot account's `MatrixAdapter`; every start builds a fresh client over the same data
    directory, as a restarted process would."""

    def __init__(self, synapse: Synapse, brain: Brain, chat: Dialog, account: Account, data_dir: Path) -> None:
        self.account = account
        self.config = MatrixConfig(homeserver=synapse.url, user_id=account.user_id, data_dir=data_dir,
                                   password=account.password, default_timezone="Europe/Berlin",
                                   sync_timeout_ms=5000, poll_seconds=0.5)
        self.brain = brain
        self.dialog = chat
        self.bot: MatrixAdapter | None = None
        self._stop = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    @property
    def user_id(self) -> str:
        return self.account.user_id

    async def start(self, **changes: Any) -> MatrixAdapter:
        assert self._task is None, "already running"
        self.config = replace(self.config, **changes)
        self.bot = MatrixAdapter(self.brain, self.dialog, self.config)
        self._stop = asyncio.Event()
        self._task = asyncio.create_task(self.bot.run(self._stop))
        ready = asyncio.create_task(self.bot.ready.wait())
        done, _ = await asyncio.wait({ready, self._task}, timeout=30, return_when=asyncio.FIRST_COMPLETED)
        if ready not in done:
            ready.cancel()
            task, self._task = self._task, None
            if task in done:
                task.result()  # raises what stopped the bot
            task.cancel()
            raise AssertionError("the bot did not finish its first sync")
        return self.bot

    async def stop(self) -> None:
        if self._task is None:
            return
        self._stop.set()
        await asyncio.wait_for(self._task, 30)
        self._task = None


@pytest.fixture
async def bot_runner(synapse: Synapse, brain: Brain, dialog: Dialog) -> AsyncIterator[BotRunner]:  # noqa: F811
    account = await asyncio.to_thread(synapse.register)
    data_dir = Path(tempfile.mkdtemp(prefix="mbot-"))
    runner = BotRunner(synapse, brain, dialog, account, data_dir)
    try:
        yield runner
    finally:
        await runner.stop()
        shutil.rmtree(data_dir, ignore_errors=True)


@pytest.fixture
async def matrix_bot(bot_runner: BotRunner) -> BotRunner:
    await bot_runner.start()
    return bot_runner


@pytest.fixture
async def matrix_people(synapse: Synapse) -> AsyncIterator[Any]:
    """A factory of test people (registered and syncing); all closed at the end."""
    made: list[MatrixPerson] = []

    async def make() -> MatrixPerson:
        account = await asyncio.to_thread(synapse.register)
        someone = MatrixPerson(synapse.url, account)
        await someone.start()
        made.append(someone)
        return someone

    yield make
    for someone in made:
        await someone.close()
