"""Matrix adapter (matrix-nio): direct rooms with one person each, commands with `!` or `/`, numbered
choices and reactions instead of buttons, and the outbox consumer for Matrix. `run_matrix` is what
`companion run` starts when the Matrix settings are present."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from bot.dialog import Dialog
    from bot.settings import Settings
    from brain.core import Brain


async def run_matrix(brain: Brain, dialog: Dialog, settings: Settings, stop: asyncio.Event) -> None:
    """Run the Matrix bot until `stop` is set (imported lazily: the tables in models.py are loaded by
    every part of the program, the client only here)."""
    from adapters.matrix.bot import MatrixBot, MatrixConfig

    bot = MatrixBot(brain, dialog, MatrixConfig.from_settings(settings))
    await bot.run(stop)


class MatrixAdapter:
    """`run_matrix` as a chat adapter of `companion run` (start, stop, wake_sender). The Matrix sender polls
    the outbox every two seconds, so waking it is not needed."""

    def __init__(self, brain: Brain, dialog: Dialog, settings: Settings) -> None:
        self.brain = brain
        self.dialog = dialog
        self.settings = settings
        self._stop = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    async def start(self) -> None:
        self._task = asyncio.create_task(run_matrix(self.brain, self.dialog, self.settings, self._stop), name="matrix")

    async def stop(self) -> None:
        self._stop.set()
        if self._task is not None:
            await self._task

    def wake_sender(self) -> None:
        return None
