"""The `companion` command: run, chat, migrate, doctor, and the data commands backup, restore and import."""

from __future__ import annotations

import asyncio
import contextlib
import signal
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

import typer
from rich.console import Console

from bot import event_loop
from bot.log_format import SecretMask, configure_logging
from bot.settings import ConfigurationError, Settings, SettingsError, load_settings, secrets_of
from brain.i18n import Renderer, Text, ntr, tr

if TYPE_CHECKING:
    from adapters.console.chat import ConsoleChat
    from app.doctor import Finding
    from bot.adapter import ChatAdapter
    from bot.dialog import Dialog
    from brain.core import Brain
    from brain.memory.embedder import Embedder
    from brain.memory.reembed import ReembedProgress

T = TypeVar("T")

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
        configure_logging(settings.log_level, settings.log_format, filename=settings.data_dir / "companion.log",
                          secrets=secrets_of(settings))
    else:
        configure_logging(settings.log_level, settings.log_format, secrets=secrets_of(settings))
    return settings


async def _chat(settings: Settings, *, monitored: bool = False) -> int:
    """The terminal chat; `monitored`: with /healthz and /metrics (as `companion run`, not beside a running bot)."""
    from adapters.console.chat import ConsoleChat, ConsoleConfig
    from app.monitoring import serve_monitoring
    from app.wiring import open_app

    async with open_app(settings) as app, serve_monitoring(settings if monitored else None, app.brain):
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
    from app.monitoring import serve_monitoring
    from app.wiring import open_app

    async with contextlib.AsyncExitStack() as stack:
        app = await stack.enter_async_context(open_app(settings))
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(signum, stop.set)
        started: list[ChatAdapter] = []
        adapters = chat_adapters(settings, app)
        # Up before the adapters start: alive at once, ready once each adapter is connected.
        await stack.enter_async_context(serve_monitoring(settings, app.brain, [a.liveness for a in adapters]))
        try:
            for adapter in adapters:
                await adapter.start()
                started.append(adapter)
        except Exception as problem:
            # One line, no traceback, no secret: a refused token or password names its setting.
            said = str(problem) if isinstance(problem, ConfigurationError) \
                else f"Could not start {type(adapter).__name__}: {problem}"
            err.print(f"[red]{SecretMask(secrets_of(settings)).hide(said)}[/red]", highlight=False, markup=False)
            for running in reversed(started):
                await running.stop()
            return 2 if isinstance(problem, ConfigurationError) else 1
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
            raise typer.Exit(event_loop.run(_chat(settings, monitored=True), settings.event_loop))
        except KeyboardInterrupt:
            raise typer.Exit(0) from None
    from adapters.matrix.session import MatrixLoginError

    try:
        raise typer.Exit(event_loop.run(_serve(settings), settings.event_loop))
    except MatrixLoginError as bad:
        err.print(f"Matrix: {SecretMask(secrets_of(settings)).hide(str(bad))}", style="red", highlight=False,
                  markup=False)
        raise typer.Exit(2) from None


@cli.command()
def chat() -> None:
    """The terminal chat (reads lines until end of input). It serves no /healthz: METRICS_LISTEN is the bot's."""
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
    """Check settings, database, model server and chat apps for real; say what is wrong, exit 1 if anything is."""
    from app.doctor import FAIL, OK, Finding, check_matrix, check_migrations, check_models, check_telegram

    settings = _settings()
    console = Console(highlight=False)
    mask = SecretMask(secrets_of(settings))
    marks = {OK: "[green]✓[/green]", "warn": "[yellow]![/yellow]", FAIL: "[red]✗[/red]"}
    failed = False

    render = Renderer(settings.default_locale)  # the installation's language, as the other commands speak

    def report(finding: Finding) -> None:
        nonlocal failed
        failed = failed or finding.status == FAIL
        console.print(f"{marks[finding.status]} ", mask.hide(render(finding.message)), sep="", markup=True)

    report(Finding(OK, tr("settings are valid")))
    database_ok = True
    try:
        with _database_server(settings) as uri:
            from alembic.script import ScriptDirectory

            from brain.store.migrate import alembic_config

            scripts = ScriptDirectory.from_config(alembic_config(uri))
            finding = check_migrations(uri, set(scripts.get_heads()),
                                       {revision.revision for revision in scripts.walk_revisions()})
    except Exception as problem:
        finding = Finding(FAIL, tr("database: {problem}", problem=str(problem)))
    if settings.database_url is None and finding.status != FAIL:
        finding = Finding(finding.status, tr("{finding} (embedded PostgreSQL)", finding=finding.message))
    database_ok = finding.status != FAIL
    report(finding)
    if database_ok:
        _check_embedder(settings, console)
    report(check_models(settings) if settings.companion_enabled
           else Finding(OK, tr("language model off (COMPANION_LLM=false)")))
    for line in asyncio.run(media_checks(settings)):  # voice notes and photos: warnings at most
        console.print(line)
    report(check_telegram(settings) if settings.telegram_enabled
           else Finding("warn", tr("Telegram not configured (TELEGRAM_TOKEN)")))
    report(check_matrix(settings) if settings.matrix_enabled
           else Finding("warn", tr("Matrix not configured (MATRIX_HOMESERVER, MATRIX_USER_ID)")))
    if database_ok and (settings.telegram_enabled or settings.matrix_enabled):
        report(_check_access(settings))
    raise typer.Exit(1 if failed else 0)


def _check_access(settings: Settings) -> Finding:
    """Who may talk to the bot, and whether anyone can yet."""
    from app.doctor import OK, WARN, Finding
    from bot.access import OPEN, AccessPolicy, listing

    policy = AccessPolicy.from_settings(settings)
    if policy.mode == OPEN:
        return Finding(WARN, tr("access: COMPANION_ACCESS=open, anyone who reaches the bot may talk to it"))
    with _brain(settings) as run_with:
        rows = run_with(lambda brain: listing(brain, policy))
    if not rows:
        return Finding(WARN, tr("access: nobody may talk to the bot yet; `companion invite` makes a code"))
    return Finding(OK, ntr("access: {count} account may talk to the bot (`companion access` lists it)",
                           "access: {count} accounts may talk to the bot (`companion access` lists them)", len(rows)))


@cli.command()
def health() -> None:
    """Ask the running `companion run` (at METRICS_LISTEN) whether it is ready: exit 0 if so, 1 if not."""
    import json
    import urllib.error
    import urllib.request

    settings = _settings()
    if settings.metrics_address is None:
        _say(settings, tr("METRICS_LISTEN is not set: the running bot serves no /healthz."), "red")
        raise typer.Exit(2)
    host, port = settings.metrics_address
    if host in ("0.0.0.0", "::", "*"):  # listening everywhere: ask this machine
        host = "127.0.0.1"
    url = f"http://{host}:{port}/healthz"
    try:
        with urllib.request.urlopen(url, timeout=10) as response:
            report = json.loads(response.read())
    except urllib.error.HTTPError as answer:  # 503: alive, not ready
        report = json.loads(answer.read() or b"{}")
    except OSError as problem:
        _say(settings, tr("No answer from {url}: {problem}", url=url, problem=str(problem)), "red")
        raise typer.Exit(1) from None
    for name, check in report.get("checks", {}).items():
        err.print(f"{'✓' if check['ok'] else '✗'} {name}: {check['detail']}", highlight=False)
    if not report.get("ready"):
        _say(settings, tr("Not ready."), "red")
        raise typer.Exit(1)
    _say(settings, tr("Ready."))


async def media_checks(settings: Settings) -> list[str]:
    """What `doctor` says about voice notes (the speech-to-text server) and photos (the vision model). Neither is
    needed: without them the bot says so to the person, so a missing one is a warning, not a failure."""
    from app.wiring import photos, voice_notes

    render = Renderer(settings.default_locale)
    lines = []
    voice = voice_notes(settings)
    try:
        if voice.speech is None:
            lines.append("[yellow]![/yellow] " + render(tr(
                "voice notes: no speech-to-text server (STT_URL); they are answered with \"type it instead\"")))
        else:
            problem = await voice.speech.check()
            if problem is not None:
                lines.append("[yellow]![/yellow] " + render(tr(
                    "speech-to-text server at {url} does not answer: {problem}; voice notes are answered with \"try "
                    "again later\"", url=settings.stt_url, problem=problem)))
            elif settings.stt_local:
                lines.append("[green]✓[/green] " + render(tr("speech-to-text server at {url}", url=settings.stt_url)))
            else:
                lines.append("[green]✓[/green] " + render(tr("speech-to-text server at {url}, remote: only with "
                                                             "consent", url=settings.stt_url)))
    finally:
        await voice.close()
    vision = photos(settings).vision
    if vision is None:
        lines.append("[yellow]![/yellow] " + render(tr(
            "photos: no vision model (OLLAMA_MODEL_VISION); they are answered with \"tell me what you ate\"")))
    else:
        problem = await vision.check()
        lines.append("[green]✓[/green] " + render(tr("vision model {model}", model=settings.ollama_model_vision))
                     if problem is None else "[yellow]![/yellow] " + render(tr(
                         "vision model {model}: {problem}", model=settings.ollama_model_vision, problem=problem)))
    return lines


def _check_embedder(settings: Settings, console: Console) -> None:
    """Which embedder the memory uses, whether it is the one asked for, and how far re-embedding has come."""
    from app.wiring import embedder_from_settings
    from brain.memory.embedder import space_of

    render = Renderer(settings.default_locale)
    try:
        choice = embedder_from_settings(settings)
    except ValueError as problem:
        console.print("[red]✗[/red] " + render(tr("embedder: {problem}", problem=str(problem))))
        return
    space = space_of(choice.embedder).key
    if choice.fallback is not None:
        console.print("[yellow]![/yellow] " + render(tr(
            "embedder: {reason}; the memory uses {space} (fast, weaker recall)", reason=choice.fallback, space=space)))
    else:
        console.print("[green]✓[/green] " + render(tr("embedder {space}", space=space)))
    try:
        progress = asyncio.run(_reembed_progress(settings, choice.embedder))
    except Exception:
        return  # the database check says what is wrong
    if progress.remaining:
        console.print("[yellow]![/yellow] " + render(tr(
            "re-embedding: {done} of {total} memories have vectors of {space}; the rest is found by its words until "
            "`companion reembed` or the running bot is done", done=progress.done, total=progress.total,
            space=space)))


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


@contextmanager
def _brain(settings: Settings) -> Iterator[Callable[[Callable[[Brain], Awaitable[T]]], T]]:
    """Runs one coroutine over a brain on the configured, migrated database (for the short admin commands)."""
    from app.wiring import open_database
    from brain.core import Brain
    from brain.store.database import Database

    def run_with(work: Callable[[Brain], Awaitable[T]]) -> T:
        async def _go() -> T:
            async with open_database(settings) as url:
                brain = Brain(Database(url, pool_size=1))
                try:
                    return await work(brain)
                finally:
                    await brain.close()

        return asyncio.run(_go())

    yield run_with


@cli.command()
def invite() -> None:
    """Print a one-time invite code (valid 24 hours): `/start CODE` in Telegram or `!start CODE` in Matrix admits
    that account; the first account admitted is the owner."""
    from bot.access import INVITE_TTL, create_invite

    settings = _settings()
    with _brain(settings) as run_with:
        code, _expires = run_with(create_invite)
    hours = int(INVITE_TTL.total_seconds() // 3600)
    print(code)
    _say(settings, tr("Invite code for one account, valid {hours} hours: send /start {code} to the bot in Telegram, "
                      "or !start {code} in Matrix.", hours=hours, code=code))
    if settings.telegram_allowed_users or settings.matrix_allowed_users:
        _say(settings, tr("Codes are not taken on a platform with an allowlist (TELEGRAM_ALLOWED_USERS, "
                          "MATRIX_ALLOWED_USERS); use `companion access admit` there."), "yellow")


access_cli = typer.Typer(help="Who may talk to the companion: list, admit, remove.", no_args_is_help=False)
cli.add_typer(access_cli, name="access")


@access_cli.callback(invoke_without_command=True)
def access_list(context: typer.Context) -> None:
    """List the accounts that may talk to the companion (without a subcommand)."""
    if context.invoked_subcommand is not None:
        return
    from bot.access import OPEN, AccessPolicy, listing

    settings = _settings()
    policy = AccessPolicy.from_settings(settings)
    with _brain(settings) as run_with:
        rows = run_with(lambda brain: listing(brain, policy))
    render = Renderer(settings.default_locale)
    if policy.mode == OPEN:
        _say(settings, tr("COMPANION_ACCESS=open: anyone who reaches the bot may talk to it."), "yellow")
    if not rows:
        _say(settings, tr("Nobody is admitted yet: `companion invite` makes a code."), "yellow")
    for row in rows:
        since = f"  {row.admitted_at:%Y-%m-%d}" if row.admitted_at is not None else ""
        label = f"  ({row.label})" if row.label else ""
        role = render(tr("from the setting")) if row.role == "allowlist" else row.role
        print(f"{row.platform}:{row.account}  {role}{since}{label}")


def _account(text: str) -> tuple[str, str]:
    from bot.access import parse_account

    try:
        return parse_account(text)
    except ValueError as bad:
        err.print(str(bad), style="red", highlight=False, markup=False)
        raise typer.Exit(2) from None


@access_cli.command("admit")
def access_admit(account: str = typer.Argument(..., help="telegram:12345, telegram:@alice or "
                                                         "matrix:@alice:example.org")) -> None:
    """Admit an account (the first account admitted is the owner)."""
    from bot.access import admit

    settings = _settings()
    platform, name = _account(account)
    with _brain(settings) as run_with:
        role = run_with(lambda brain: admit(brain, platform, name))
    _say(settings, tr("Admitted {account} ({role}).", account=f"{platform}:{name}", role=role))


@access_cli.command("remove")
def access_remove(account: str = typer.Argument(..., help="as `companion access` lists it")) -> None:
    """Remove an account: it may no longer talk to the companion (its data stays, should it be admitted again)."""
    from bot.access import AccessPolicy, Sender, listed, remove

    settings = _settings()
    platform, name = _account(account)
    with _brain(settings) as run_with:
        removed = run_with(lambda brain: remove(brain, platform, name))
    if removed:
        _say(settings, tr("Removed {account}: it may no longer talk to the companion.", account=f"{platform}:{name}"))
    else:
        _say(settings, tr("{account} was not admitted.", account=f"{platform}:{name}"), "yellow")
    username = name[1:] if platform == "telegram" and name.startswith("@") else None
    if listed(Sender(platform, name, username), AccessPolicy.from_settings(settings).allowlists.get(platform, ())):
        setting = "TELEGRAM_ALLOWED_USERS" if platform == "telegram" else "MATRIX_ALLOWED_USERS"
        _say(settings, tr("{account} is still admitted by {setting}.", account=f"{platform}:{name}", setting=setting),
             "yellow")
    if not removed:
        raise typer.Exit(1)


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
