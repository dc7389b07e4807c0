"""The `companion` command: run, chat, migrate, doctor, and the data commands backup, restore and import."""

from __future__ import annotations

import asyncio
import signal
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING

import typer
from rich.console import Console

from bot import event_loop
from bot.log_format import configure_logging
from bot.settings import Settings, SettingsError, load_settings
from brain.i18n import Renderer, Text, tr

if TYPE_CHECKING:
    from adapters.console.chat import ConsoleChat
    from bot.adapter import ChatAdapter
    from bot.dialog import Dialog
    from brain.core import Brain
    from brain.memory.embedder import Embedder
    from brain.memory.reembed import ReembedProgress

cli = typer.Typer(add_completion=False, no_args_is_help=False, help="Companion: your personal companion.")
err = Console(stderr=True)


def _settings(*, log_to_file: bool = False) -> Settings:
    try:
        settings = load_settings()
    except SettingsError as bad:
        err.print(f"[red]{bad}[/red]")
        raise typer.Exit(2) from None
    if log_to_file:
        # The terminal chat shares the screen with the log: keep the log in the data directory.
        settings.data_dir.mkdir(parents=True, exist_ok=True)
        configure_logging(settings.log_level, settings.log_format, filename=settings.data_dir / "companion.log")
    else:
        configure_logging(settings.log_level, settings.log_format)
    return settings


async def _chat(settings: Settings) -> int:
    from adapters.console.chat import ConsoleChat, ConsoleConfig
    from app.wiring import open_app

    async with open_app(settings) as app:
        chat = ConsoleChat(app.brain, app.dialog, ConsoleConfig.from_settings(settings))
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
            await chat.drain()
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
                await chat.drain()
        if once:
            stop.set()

    await run_ticker(jobs.engine, brain.clock, settings.pulse_tick_seconds, stop, on_tick=print_new)


def _serves_chat_apps() -> bool:
    try:
        settings = load_settings()
        return settings.telegram_enabled or settings.matrix_enabled
    except SettingsError:
        return False  # `_settings` reports it


async def _serve(settings: Settings) -> int:
    """The configured chat apps until SIGINT or SIGTERM, with the scheduler (pulse, pushes, upkeep) running."""
    from app.chat_adapters import chat_adapters
    from app.wiring import open_app

    async with open_app(settings) as app:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(signum, stop.set)
        started: list[ChatAdapter] = []
        adapters = chat_adapters(settings, app)
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
    _check_embedder(settings, console)
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


def _check_embedder(settings: Settings, console: Console) -> None:
    """Which embedder the memory uses, whether it is the one asked for, and how far re-embedding has come."""
    from app.wiring import embedder_from_settings
    from brain.memory.embedder import space_of

    try:
        choice = embedder_from_settings(settings)
    except ValueError as problem:
        console.print(f"[red]✗[/red] embedder: {problem}")
        return
    space = space_of(choice.embedder).key
    if choice.fallback is not None:
        console.print(f"[yellow]![/yellow] embedder: {choice.fallback}; the memory uses {space} (fast, weaker "
                      "recall)")
    else:
        console.print(f"[green]✓[/green] embedder {space}")
    try:
        progress = asyncio.run(_reembed_progress(settings, choice.embedder))
    except Exception:
        return  # the database check says what is wrong
    if progress.remaining:
        console.print(f"[yellow]![/yellow] re-embedding: {progress.done} of {progress.total} memories have vectors "
                      f"of {space}; the rest is found by its words until `companion reembed` or the running bot is "
                      "done")


async def _reembed_progress(settings: Settings, embedder: Embedder) -> ReembedProgress:
    from app.wiring import open_database
    from brain.core import Brain
    from brain.memory.reembed import reembed_progress
    from brain.store.database import Database

    async with open_database(settings) as url:
        brain = Brain(Database(url, pool_size=1))
        try:
            return await reembed_progress(brain.transactions, embedder)
        finally:
            await brain.close()


@cli.command()
def reembed() -> None:
    """Give every memory a vector of the configured embedder now (the running bot also does it in the background)."""
    from rich.progress import Progress

    from app.wiring import embedder_from_settings, open_database
    from brain.core import Brain
    from brain.memory.reembed import reembed_all
    from brain.store.database import Database

    settings = _settings()
    embedder = embedder_from_settings(settings).embedder

    async def _go() -> ReembedProgress:
        async with open_database(settings) as url:
            brain = Brain(Database(url, pool_size=2))
            try:
                with Progress(console=err) as bar:
                    task = bar.add_task("re-embedding memories", total=None)

                    def show(progress: ReembedProgress) -> None:
                        bar.update(task, completed=progress.done, total=progress.total)

                    return await reembed_all(brain.transactions, embedder, on_progress=show)
            finally:
                await brain.close()

    done = asyncio.run(_go())
    err.print(f"[green]{done.done} memories have vectors of the configured embedder.[/green]")


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


def _say(settings: Settings, text: Text, style: str = "green") -> None:
    """A message of the data commands, in the install's language (DEFAULT_LOCALE)."""
    err.print(f"[{style}]{Renderer(settings.default_locale)(text)}[/{style}]", highlight=False)


@contextmanager
def _database_server(settings: Settings) -> Iterator[str]:
    """The libpq URI of the configured database: DATABASE_URL, or the embedded server in the data directory
    (started here if no other process runs it, and stopped again afterwards). Nothing is migrated."""
    from brain.store.embedded import EmbeddedPostgres, to_libpq_url

    if settings.database_url is not None:
        yield to_libpq_url(settings.database_url)
        return
    embedded = EmbeddedPostgres(settings.data_dir)
    embedded.start()
    try:
        yield embedded.libpq_uri
    finally:
        embedded.stop()


@cli.command()
def backup(path: Path = typer.Argument(..., help="The backup file to write (pg_dump's custom format).")) -> None:
    """Write the whole database to one file (the embedded one, or DATABASE_URL's)."""
    from brain.store.backup import BackupError
    from brain.store.backup import backup as dump

    settings = _settings()
    try:
        with _database_server(settings) as uri, err.status(Renderer(settings.default_locale)(tr("Backing up…"))):
            size = dump(uri, path)
    except BackupError as problem:
        _say(settings, tr("Backup failed: {problem}", problem=problem.reason), "red")
        raise typer.Exit(1) from None
    _say(settings, tr("Backup written to {path} ({size} bytes).", path=str(path), size=size))


@cli.command()
def restore(path: Path = typer.Argument(..., help="A file written by `companion backup`.")) -> None:
    """Restore a backup into an empty database (a new data directory, or an empty DATABASE_URL), then migrate it."""
    from brain.store.backup import BackupError
    from brain.store.backup import restore as load
    from brain.store.embedded import to_sqlalchemy_url
    from brain.store.migrate import upgrade

    settings = _settings()
    try:
        with _database_server(settings) as uri, err.status(Renderer(settings.default_locale)(tr("Restoring…"))):
            load(uri, path)
            upgrade(to_sqlalchemy_url(uri))
    except BackupError as problem:
        _say(settings, tr("Restore failed: {problem}", problem=problem.reason), "red")
        raise typer.Exit(1) from None
    _say(settings, tr("Restored {path}; the database is up to date.", path=str(path)))


@cli.command("import")
def import_command(file: Path = typer.Argument(..., help="A file that /export sent.")) -> None:
    """Take a person's /export back in: into a fresh install, or as one more person of this one."""
    from rich.progress import Progress

    from app.wiring import embedder_from_settings, open_database
    from brain.core import Brain
    from brain.data_import import ImportRefused, ImportReport, import_person, read_document
    from brain.store.database import Database

    settings = _settings()
    render = Renderer(settings.default_locale)
    try:
        document = read_document(file.read_bytes())
    except OSError as problem:
        _say(settings, tr("Cannot read {path}: {problem}", path=str(file), problem=problem.strerror or ""), "red")
        raise typer.Exit(1) from None
    except ImportRefused as problem:
        _say(settings, tr("Not imported: {problem}", problem=problem.reason), "red")
        raise typer.Exit(1) from None

    async def _go(progress: Progress) -> ImportReport:
        task = progress.add_task(render(tr("Importing…")), total=len(document["tables"]))
        async with open_database(settings) as url:
            brain = Brain(Database(url, pool_size=1))
            try:
                return await import_person(brain, document, embedder_from_settings(settings).embedder,
                                           progress=lambda table, rows: progress.advance(task))
            finally:
                await brain.close()

    try:
        with Progress(console=err, transient=True) as progress:
            report = asyncio.run(_go(progress))
    except ImportRefused as problem:
        _say(settings, tr("Not imported: {problem}", problem=problem.reason), "red")
        raise typer.Exit(1) from None
    _say(settings, tr("Imported the person {id}: {rows} rows in {tables} tables.", id=str(report.user_id),
                      rows=sum(report.rows.values()), tables=len(report.rows)))


def main() -> None:
    cli()


if __name__ == "__main__":
    main()
