"""What every chat adapter offers the program that serves it (Telegram, Matrix, the terminal).

An adapter is built one way on every platform, `Adapter(brain, dialog, config)`, with a small frozen config of
its own that its `from_settings` makes from the settings. It maps the platform's updates to `Inbound`s for the
dialog and sends the outbox through `bot.delivery`; everything else lives in `bot/`."""

from __future__ import annotations

from typing import Protocol


class ChatAdapter(Protocol):
    """A chat platform as `companion run` serves it."""

    async def start(self) -> None:
        """Connects to the platform and begins taking updates."""

    async def stop(self) -> None:
        """Stops taking updates, finishes the ones taken and sends what they answered."""

    def wake_sender(self) -> None:
        """New rows may be in the outbox (the scheduler queued pushes): send them soon."""
