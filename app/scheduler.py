"""`python -m app.scheduler`: a process that only runs the scheduler (it leads when it holds the lock, otherwise
it waits as a stand-by), against DATABASE_URL or the embedded PostgreSQL, until SIGTERM or SIGINT."""

from __future__ import annotations

import asyncio
import signal
import sys

from bot import event_loop
from bot.log_format import configure_logging
from bot.settings import Settings, SettingsError, load_settings


async def serve(settings: Settings) -> None:
    from app.wiring import open_app
    from bot.scheduler import run_scheduler

    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop.set)
    async with open_app(settings) as app:
        await run_scheduler(app, settings, stop)


def main() -> int:
    try:
        settings = load_settings()
    except SettingsError as bad:
        print(bad, file=sys.stderr)
        return 2
    configure_logging(settings.log_level, settings.log_format,
                      text_format="%(asctime)s %(process)d %(levelname)s %(name)s: %(message)s")
    event_loop.run(serve(settings), settings.event_loop)
    return 0


if __name__ == "__main__":
    sys.exit(main())
